#ifndef TOKEN_CACHE_DISPLAY_WIDTH_H
#define TOKEN_CACHE_DISPLAY_WIDTH_H

#include <stdint.h>

/// The number of terminal columns the C library gives one Unicode scalar (`wcwidth` in the `C.UTF-8` locale,
/// whatever the process locale is): 0, 1 or 2, or -1 for a scalar it does not print.
/// Returns -2 when the C library has no UTF-8 locale to ask.
int tc_scalar_columns(uint32_t scalar);

#endif
