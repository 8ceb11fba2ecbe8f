#ifndef CSODIUMBENCH_SHIM_H
#define CSODIUMBENCH_SHIM_H
/* The raw baseline calls libsodium directly (XChaCha20-Poly1305 IETF). */
#include <sodium.h>
#endif
