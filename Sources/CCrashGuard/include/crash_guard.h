#ifndef TC_CRASH_GUARD_H
#define TC_CRASH_GUARD_H

/* Replaces the handlers of the fatal signals a crash raises (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE,
   SIGSYS) with one that writes a single fixed line to standard error, "<prefix>: crashed with signal N; no crash
   report was written, because it could contain secrets", and then lets the signal take its default action.

   Why: the Swift runtime's backtracer, on by default on Linux, prints the registers of the crashed thread and the
   memory they point at to standard error, and that memory can hold decrypted tokens or key material. Core dumps
   are a separate channel (disable them with RLIMIT_CORE).

   The calling thread unblocks those signals too (threads it starts later inherit that). `prefix` is copied (at
   most 63 bytes). Call it early, before secrets are in memory, and after anything else that
   installs handlers for these signals. Returns 0, or -1 with errno set if a handler could not be installed. */
int tc_crash_guard_install(const char *prefix);

#endif
