// Out-of-line wrappers of valgrind's client-request macros. A client request is a magic instruction sequence that is
// a no-op on a real CPU and a message to valgrind under it; these functions are compiled separately from Swift, so
// a request cannot be moved across the measured calls by the Swift optimizer.
#include "callgrind_requests.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>

int tc_callgrind_requests_available(void) { return 1; }
int tc_running_on_valgrind(void) { return RUNNING_ON_VALGRIND ? 1 : 0; }
void tc_callgrind_start_instrumentation(void) { CALLGRIND_START_INSTRUMENTATION; }
void tc_callgrind_zero_stats(void) { CALLGRIND_ZERO_STATS; }
void tc_callgrind_dump_stats(const char *reason) { CALLGRIND_DUMP_STATS_AT(reason); }
#else
int tc_callgrind_requests_available(void) { return 0; }
int tc_running_on_valgrind(void) { return 0; }
void tc_callgrind_start_instrumentation(void) {}
void tc_callgrind_zero_stats(void) {}
void tc_callgrind_dump_stats(const char *reason) { (void)reason; }
#endif
