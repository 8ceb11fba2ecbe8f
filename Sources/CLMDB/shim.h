#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <lmdb.h>
/* statfs(2): LMDB must not run on network filesystems; the wrapper checks the filesystem type. */
#include <sys/vfs.h>
#endif
