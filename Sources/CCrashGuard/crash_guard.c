#include "crash_guard.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static char guard_prefix[64] = "process";
static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSYS};

/* Only async-signal-safe calls: write(2) and raise(3), and a hand-made decimal conversion. */
static void guard_handler(int signal_number) {
    static const char middle[] = ": crashed with signal ";
    static const char tail[] = "; no crash report was written, because it could contain secrets\n";
    char digits[12];
    int count = 0;
    unsigned value = (unsigned)signal_number;
    do {
        digits[sizeof digits - 1 - count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0 && count < (int)sizeof digits);
    (void)!write(STDERR_FILENO, guard_prefix, strlen(guard_prefix));
    (void)!write(STDERR_FILENO, middle, sizeof middle - 1);
    (void)!write(STDERR_FILENO, digits + sizeof digits - count, (size_t)count);
    (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
    /* SA_RESETHAND restored the default action on entry; SA_NODEFER lets this delivery through at once. */
    raise(signal_number);
}

int tc_crash_guard_install(const char *prefix) {
    if (prefix != NULL) {
        strncpy(guard_prefix, prefix, sizeof guard_prefix - 1);
        guard_prefix[sizeof guard_prefix - 1] = '\0';
    }
    /* A signal mask inherited through exec may block some of them; a crash must always reach the handler. */
    sigset_t guarded;
    sigemptyset(&guarded);
    for (size_t index = 0; index < sizeof guarded_signals / sizeof guarded_signals[0]; index++) {
        sigaddset(&guarded, guarded_signals[index]);
    }
    if (sigprocmask(SIG_UNBLOCK, &guarded, NULL) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = guard_handler;
    action.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < sizeof guarded_signals / sizeof guarded_signals[0]; index++) {
        if (sigaction(guarded_signals[index], &action, NULL) != 0) return -1;
    }
    return 0;
}
