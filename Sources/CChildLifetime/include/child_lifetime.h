#ifndef TC_CHILD_LIFETIME_H
#define TC_CHILD_LIFETIME_H

#include <sys/types.h>

/* A child process that does a command's work for its parent (cachetool's crash containment) must end with it: a
   parent killed by any signal, SIGKILL included, or stopped by Ctrl-C must not leave the child writing. Two halves,
   in C because Swift cannot call the variadic prctl(2) and signal handlers belong in C:

   In the parent: tc_forward_signals_install() makes SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the parent alone
   (kill PID, a supervisor) reach the child too, instead of ending the parent and leaving the child behind (those
   this process started with ignored stay ignored, here and in the child; the others are unblocked in the calling
   thread, which must be the one that spawns the child); returns 0, or -1 with errno set;
   tc_forward_signals_to(pid) names the child once it runs (a signal that came before is sent to it then), and
   tc_forward_signals_to(0) stops forwarding before the child is reaped, so that its pid, once free, is never
   signalled. tc_forward_signals_received() returns the last of those signals this process received (0 if none).

   In the child: tc_end_with_parent(parent) asks the kernel for SIGKILL when the parent dies (PR_SET_PDEATHSIG), then
   checks that the parent is still `parent`: one that died before the request was made would never signal. Returns 0,
   or -1 when the parent is already gone (or the request failed, errno set). The death signal follows the thread that
   spawned the child: the parent spawns it from the thread that waits for it. */
int tc_forward_signals_install(void);
void tc_forward_signals_to(pid_t child);
int tc_forward_signals_received(void);
int tc_end_with_parent(pid_t parent);

#endif
