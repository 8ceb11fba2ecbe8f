#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <lmdb.h>
/* statfs(2): LMDB must not run on network filesystems; the wrapper checks the filesystem type. */
#include <sys/vfs.h>
#include <stddef.h>
#include <errno.h>
#include <sys/types.h>

#if defined(__linux__)
/* fallocate(2) is a GNU extension that <fcntl.h> declares only under _GNU_SOURCE, which a module header cannot set
   for the C library's own modules; glibc and musl export it with this signature. */
extern int fallocate(int fd, int mode, off_t offset, off_t len);
#endif

/* Allocates disk blocks for bytes [offset, offset + length) of a file without changing its size (Linux
   FALLOC_FL_KEEP_SIZE): later writes there cannot fail for want of space. Returns 0, or the errno value (ENOTSUP
   where the system or filesystem has no such call). */
static inline int tc_allocate_blocks(int fd, off_t offset, off_t length) {
#if defined(__linux__)
    return fallocate(fd, 0x01 /* FALLOC_FL_KEEP_SIZE */, offset, length) == 0 ? 0 : errno;
#else
    (void)fd; (void)offset; (void)length;
    return ENOTSUP;
#endif
}

/* Asks the CPU to start loading `count` bytes at `address` (a value view in the map) into its caches, one hint per
   64-byte line, without waiting: a reader that will decrypt a value after one more B-tree step overlaps the two
   memory waits. A hint only; it never faults, whatever the address. */
static inline void tc_prefetch_read(const void *address, size_t count) {
    const char *bytes = (const char *)address;
    for (size_t offset = 0; offset < count; offset += 64) __builtin_prefetch(bytes + offset, 0, 3);
}
#endif
