#ifndef CLMDBBENCH_SHIM_H
#define CLMDBBENCH_SHIM_H
/* The raw baseline talks to LMDB directly, not through token-cache's wrapper. */
#include <lmdb.h>
#endif
