#ifndef TOKEN_CACHE_CALLGRIND_REQUESTS_H
#define TOKEN_CACHE_CALLGRIND_REQUESTS_H

/// 1 when <valgrind/callgrind.h> was found at build time (the requests below are then real), else 0 (no-ops).
int tc_callgrind_requests_available(void);
/// Nonzero when the process runs under valgrind.
int tc_running_on_valgrind(void);
/// Turns callgrind's instrumentation on (the driver runs under `--instr-atstart=no`: everything before is not simulated).
void tc_callgrind_start_instrumentation(void);
/// Resets every counter to zero.
void tc_callgrind_zero_stats(void);
/// Writes the counters since the last zeroing to a new dump file whose `desc: Trigger:` line names `reason`.
void tc_callgrind_dump_stats(const char *reason);

#endif
