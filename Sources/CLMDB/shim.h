#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <lmdb.h>
/* statfs(2): LMDB must not run on network filesystems; the wrapper checks the filesystem type. */
#include <sys/vfs.h>
#include <stddef.h>

/* Asks the CPU to start loading `count` bytes at `address` (a value view in the map) into its caches, one hint per
   64-byte line, without waiting: a reader that will decrypt a value after one more B-tree step overlaps the two
   memory waits. A hint only; it never faults, whatever the address. */
static inline void tc_prefetch_read(const void *address, size_t count) {
    const char *bytes = (const char *)address;
    for (size_t offset = 0; offset < count; offset += 64) __builtin_prefetch(bytes + offset, 0, 3);
}
#endif
