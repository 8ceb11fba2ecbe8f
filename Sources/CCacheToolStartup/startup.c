/* What cachetool does before anything else in the process runs: before the shared libraries' initialisers, the
   Swift runtime's among them, through the executable's pre-initialisation array (glibc runs DT_PREINIT_ARRAY of the
   executable first, then every library's initialisers, then main).

   Why: the Swift runtime's initialiser installs its backtracer's signal handlers, and the backtracer's report of a
   crash prints the registers and the 16 bytes each points at, which can be the environment block, where
   TOKEN_CACHE_KEY or TOKEN_CACHE_PASSPHRASE may live. main() installs cachetool's own one-line handler first thing,
   but the libraries' initialisers run for milliseconds before it. Installed here, before them, it is the handler
   from the start: the runtime leaves a handler it finds in place (a crash just before main prints the fixed line
   even with SWIFT_BACKTRACE=enable=yes; a test checks it), and main installs it again.

   What remains: a signal in the dynamic loader's own work before this runs (mapping and relocating the libraries)
   meets no handler at all and ends the process with the signal's default action, which prints nothing; core dumps
   are a separate channel, which main turns off (RLIMIT_CORE). The environment cannot be changed here to turn the
   backtracer off: glibc has not set up `environ` yet when pre-initialisers run.

   Only cachetool links this target: a library must not decide an app's crash reporting. */
#include "crash_guard.h"

static void cachetool_preinit(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    (void)tc_crash_guard_install("cachetool");
}

__attribute__((section(".preinit_array"), used)) static void (*const cachetool_preinit_entry)(int, char **, char **) = cachetool_preinit;
