#ifndef TOKEN_CACHE_BASE64URL_H
#define TOKEN_CACHE_BASE64URL_H

#include <stddef.h>
#include <stdint.h>

/// Constant-time base64url (RFC 4648 §5) without padding, for token material: no branch and no memory access depends
/// on a byte of the data, only on its length. The records of the store keep JWT segments decoded; a lookup re-encodes
/// a token on every hit, so the encoder has an SSSE3 path (16 characters per step, in registers), chosen once at run
/// time, and a portable arithmetic one.

/// The characters of `count` bytes: ceil(4 * count / 3).
static inline size_t tc_base64url_encoded_count(size_t count) { return (count / 3) * 4 + (count % 3 == 0 ? 0 : count % 3 + 1); }

/// Writes the encoding of `input[0..<count]` to `output`, which holds `tc_base64url_encoded_count(count)` bytes.
void tc_base64url_encode(char *output, const uint8_t *input, size_t count);

/// Decodes `input[0..<count]` into `output` (room for count * 3 / 4 bytes) and stores the byte count in `*decoded`.
/// Returns 0, or -1 when the text is not the canonical encoding of any bytes: a character outside the alphabet, a
/// length of 1 modulo 4, or set bits in the unused low bits of the last character (so that decoding and encoding
/// again gives back exactly the text). The output is unspecified after -1.
int tc_base64url_decode(uint8_t *output, const char *input, size_t count, size_t *decoded);

/// Whether `input[0..<count]` is the canonical encoding of some bytes (what `tc_base64url_decode` accepts), without
/// decoding it: 1 or 0.
int tc_base64url_is_canonical(const char *input, size_t count);

/// Whether the SSSE3 encoder is in use (tests run both paths).
int tc_base64url_uses_simd(void);
/// Forces the portable encoder (1) or lets the processor decide (0): for tests that compare the two.
void tc_base64url_force_portable(int portable);

#endif
