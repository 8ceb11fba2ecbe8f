#ifndef TC_BENCH_PROBES_H
#define TC_BENCH_PROBES_H

#include <stdint.h>

/* Measurement probes for `cachetool bench`: what a call costs besides time.

   Allocations. The executable that links this module defines malloc, calloc, realloc, posix_memalign,
   aligned_alloc and memalign. A definition in the executable comes first in the dynamic linker's search order,
   so every allocation of the process (Swift runtime, Foundation, liblmdb, libsodium) passes through it: it
   counts the call in a thread-local counter and forwards to the C library's allocator (found with
   dlsym(RTLD_NEXT)). Nothing else changes: the same allocator serves every block, `free` is passed straight
   through. Why count in-process instead of preloading a counting library: a preload needs a second file beside
   the executable and an environment variable; this is part of the one binary users already have. The cost is one
   thread-local increment per allocation. */

/* Allocation calls made by the calling thread so far. */
uint64_t tc_thread_allocations(void);

/* 1 when allocations are counted; 0 in a sanitizer build, whose runtime owns malloc (nothing is interposed then). */
int tc_allocations_counted(void);

/* Instructions. Hardware instruction counters through perf_event_open(2), counting user-space instructions of
   the calling thread only. Many virtual machines expose no counters: then open fails and the figure is absent. */

/* Opens a counter of the calling thread's user-space instructions, started. Returns a file descriptor, or -1
   with errno set (ENOENT, EOPNOTSUPP, EACCES: no counter here). */
int tc_instruction_counter_open(void);

/* The counter's value, or -1 with errno set. */
int64_t tc_instruction_counter_read(int fd);

#endif
