/* User-space instruction counter of the calling thread: see bench_probes.h. */
#define _GNU_SOURCE
#include "bench_probes.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int tc_instruction_counter_open(void) {
    struct perf_event_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.type = PERF_TYPE_HARDWARE;
    attributes.size = sizeof attributes;
    attributes.config = PERF_COUNT_HW_INSTRUCTIONS;
    attributes.exclude_kernel = 1;
    attributes.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attributes, 0 /* this thread */, -1 /* any CPU */, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return -1;
    return (int)fd;
}

int64_t tc_instruction_counter_read(int fd) {
    uint64_t value = 0;
    ssize_t count = read(fd, &value, sizeof value);
    if (count != (ssize_t)sizeof value) {
        if (count >= 0) errno = EIO;
        return -1;
    }
    return (int64_t)value;
}
