#include "child_lifetime.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t forward_to = 0;
static volatile sig_atomic_t last_received = 0;

/* Only async-signal-safe calls: kill(2). errno is saved, since the interrupted code may be about to read it. */
static void forward_handler(int signal_number) {
    int saved = errno;
    last_received = signal_number;
    pid_t child = (pid_t)forward_to;
    if (child > 0) (void)kill(child, signal_number);
    errno = saved;
}

int tc_forward_signals_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = forward_handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < sizeof forwarded_signals / sizeof forwarded_signals[0]; index++) {
        struct sigaction current;
        if (sigaction(forwarded_signals[index], NULL, &current) != 0) return -1;
        /* Ignored when this process started (nohup, a background job of a script): the child inherits that. */
        if (current.sa_handler == SIG_IGN) continue;
        if (sigaction(forwarded_signals[index], &action, NULL) != 0) return -1;
        /* A mask inherited through exec (from a thread of a thread pool, say) may block it: then neither this
           process nor the child, which inherits this thread's mask, would ever see it. */
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, forwarded_signals[index]);
        if (sigprocmask(SIG_UNBLOCK, &one, NULL) != 0) return -1;
    }
    return 0;
}

void tc_forward_signals_to(pid_t child) {
    forward_to = (sig_atomic_t)child;
    int pending = last_received;
    if (child > 0 && pending != 0) (void)kill(child, pending);
}

int tc_forward_signals_received(void) { return last_received; }

int tc_end_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
    if (getppid() != parent) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}
