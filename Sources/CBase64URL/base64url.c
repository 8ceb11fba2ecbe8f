// Constant-time base64url. See include/base64url.h.
//
// Characters are computed, never looked up in a table in memory: a table indexed by token bits would leave the bits
// in the cache's state. The arithmetic maps a sextet v (0..63) to 'A'+v, 'a'+(v-26), '0'+(v-52), '-' or '_' by adding
// offsets selected with masks made from the sign of (threshold - v), and the decoder inverts it the same way,
// accumulating an error mask instead of branching.

#include "base64url.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Zeroes token bytes left on the stack, through a volatile pointer the compiler cannot drop as a dead store
// (explicit_bzero is not everywhere).
static void wipe(void *bytes, size_t count) {
    volatile uint8_t *cursor = (volatile uint8_t *)bytes;
    while (count--) *cursor++ = 0;
}

// 0xFF..F when a < b (both below 2^31), else 0, without a branch.
static inline uint32_t mask_below(uint32_t a, uint32_t b) { return (uint32_t)(0 - ((a - b) >> 31)); }

static inline char sextet_char(uint32_t v) {
    uint32_t c = v + 'A';
    c += mask_below(25, v) & 6;           // v >= 26: 'a' - 26 = 'A' + 6
    c -= mask_below(51, v) & 75;          // v >= 52: '0' - 52 = ('a' - 26) - 75
    c -= mask_below(61, v) & 13;          // v >= 62: '-' - 62 = ('0' - 52) - 13
    c += mask_below(62, v) & 49;          // v == 63: '_' - 63 = ('-' - 62) + 49
    return (char)c;
}

/// The sextet of character `c`, or a value with bit 8 set when `c` is not in the alphabet.
static inline uint32_t char_sextet(uint32_t c) {
    uint32_t upper = mask_below('A' - 1, c) & mask_below(c, 'Z' + 1);
    uint32_t lower = mask_below('a' - 1, c) & mask_below(c, 'z' + 1);
    uint32_t digit = mask_below('0' - 1, c) & mask_below(c, '9' + 1);
    uint32_t dash = mask_below(c, '-' + 1) & mask_below('-' - 1, c);
    uint32_t underscore = mask_below(c, '_' + 1) & mask_below('_' - 1, c);
    uint32_t value = (upper & (c - 'A')) | (lower & (c - 'a' + 26)) | (digit & (c - '0' + 52)) | (dash & 62) | (underscore & 63);
    uint32_t valid = upper | lower | digit | dash | underscore;
    return (value & 0x3F) | (~valid & 0x100);
}

static void encode_portable(char *output, const uint8_t *input, size_t count) {
    size_t i = 0;
    for (; i + 3 <= count; i += 3) {
        uint32_t group = (uint32_t)input[i] << 16 | (uint32_t)input[i + 1] << 8 | input[i + 2];
        *output++ = sextet_char(group >> 18);
        *output++ = sextet_char((group >> 12) & 0x3F);
        *output++ = sextet_char((group >> 6) & 0x3F);
        *output++ = sextet_char(group & 0x3F);
    }
    size_t rest = count - i;
    if (rest == 1) {
        uint32_t group = (uint32_t)input[i] << 16;
        *output++ = sextet_char(group >> 18);
        *output++ = sextet_char((group >> 12) & 0x3F);
    } else if (rest == 2) {
        uint32_t group = (uint32_t)input[i] << 16 | (uint32_t)input[i + 1] << 8;
        *output++ = sextet_char(group >> 18);
        *output++ = sextet_char((group >> 12) & 0x3F);
        *output++ = sextet_char((group >> 6) & 0x3F);
    }
}

#if defined(__x86_64__)
// Twelve bytes to sixteen characters per step (the method of Muła and Lemire, "Faster Base64 Encoding and Decoding
// using AVX2 Instructions", 2018, on 128-bit registers): a byte shuffle puts each 3-byte group into a 32-bit lane, two
// multiplies move its four sextets into four bytes, and a shuffle of a constant register (not memory) by the sextets'
// ranges gives the offset to add. Reads 16 bytes per step, so it stops 16 bytes before the end.
__attribute__((target("ssse3"))) static size_t encode_ssse3(char *output, const uint8_t *input, size_t count) {
    const __m128i spread = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
    const __m128i offsets = _mm_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '-' - 62, '_' - 63, 'A', 0, 0);
    size_t done = 0;
    while (count - done >= 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(input + done));
        in = _mm_shuffle_epi8(in, spread);
        __m128i high = _mm_mulhi_epu16(_mm_and_si128(in, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
        __m128i low = _mm_mullo_epi16(_mm_and_si128(in, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
        __m128i sextets = _mm_or_si128(high, low);
        // Range index: 0 for 26..51, 1..12 for 52..63, 13 for 0..25.
        __m128i range = _mm_subs_epu8(sextets, _mm_set1_epi8(51));
        __m128i below26 = _mm_cmpgt_epi8(_mm_set1_epi8(26), sextets);
        range = _mm_or_si128(range, _mm_and_si128(below26, _mm_set1_epi8(13)));
        __m128i characters = _mm_add_epi8(_mm_shuffle_epi8(offsets, range), sextets);
        _mm_storeu_si128((__m128i *)output, characters);
        output += 16;
        done += 12;
    }
    return done;
}

// Sixteen characters to twelve bytes per step: each character's range is tested with byte compares (signed: a
// character of 0x80 or more is negative and falls in no range), the matching offset is added, and two multiply-adds
// and a shuffle pack the sextets. Invalid characters accumulate in a mask, tested once at the end.
__attribute__((target("ssse3"))) static size_t decode_ssse3(uint8_t *output, const char *input, size_t count, __m128i *invalid) {
    const __m128i pack = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    __m128i bad = _mm_setzero_si128();
    size_t done = 0;
    while (count - done >= 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(input + done));
        __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('Z' + 1)));
        __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('z' + 1)));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('9' + 1)));
        __m128i dash = _mm_cmpeq_epi8(in, _mm_set1_epi8('-'));
        __m128i underscore = _mm_cmpeq_epi8(in, _mm_set1_epi8('_'));
        __m128i valid = _mm_or_si128(_mm_or_si128(_mm_or_si128(upper, lower), _mm_or_si128(digit, dash)), underscore);
        bad = _mm_or_si128(bad, _mm_andnot_si128(valid, _mm_set1_epi8(-1)));
        __m128i offset = _mm_or_si128(
            _mm_or_si128(_mm_and_si128(upper, _mm_set1_epi8(-'A')), _mm_and_si128(lower, _mm_set1_epi8(26 - 'a'))),
            _mm_or_si128(_mm_or_si128(_mm_and_si128(digit, _mm_set1_epi8(52 - '0')), _mm_and_si128(dash, _mm_set1_epi8(62 - '-'))),
                         _mm_and_si128(underscore, _mm_set1_epi8(63 - '_'))));
        __m128i sextets = _mm_add_epi8(in, offset);
        __m128i pairs = _mm_maddubs_epi16(sextets, _mm_set1_epi32(0x01400140));
        __m128i groups = _mm_madd_epi16(pairs, _mm_set1_epi32(0x00011000));
        __m128i bytes = _mm_shuffle_epi8(groups, pack);
        _mm_storel_epi64((__m128i *)(output + done / 4 * 3), bytes);
        uint32_t tail = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(bytes, 8));
        uint8_t *end = output + done / 4 * 3 + 8;
        end[0] = (uint8_t)tail;
        end[1] = (uint8_t)(tail >> 8);
        end[2] = (uint8_t)(tail >> 16);
        end[3] = (uint8_t)(tail >> 24);
        done += 16;
    }
    *invalid = bad;
    return done;
}

// The alphabet test of decode_ssse3 alone: 0xFF in each byte of the result that is not a base64url character.
__attribute__((target("ssse3"))) static inline __m128i invalid_characters(__m128i in) {
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('Z' + 1)));
    __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(in, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(in, _mm_set1_epi8('9' + 1)));
    __m128i other = _mm_or_si128(_mm_cmpeq_epi8(in, _mm_set1_epi8('-')), _mm_cmpeq_epi8(in, _mm_set1_epi8('_')));
    return _mm_andnot_si128(_mm_or_si128(_mm_or_si128(upper, lower), _mm_or_si128(digit, other)), _mm_set1_epi8(-1));
}

__attribute__((target("ssse3"))) static size_t scan_ssse3(const char *input, size_t count, uint32_t *invalid) {
    __m128i bad = _mm_setzero_si128();
    size_t done = 0;
    while (count - done >= 16) {
        bad = _mm_or_si128(bad, invalid_characters(_mm_loadu_si128((const __m128i *)(input + done))));
        done += 16;
    }
    *invalid = (uint32_t)_mm_movemask_epi8(bad);
    return done;
}

static atomic_int simd_choice = -1;  // -1 undecided, 0 portable, 1 SSSE3
static atomic_int forced_portable = 0;

static int use_simd(void) {
    if (atomic_load_explicit(&forced_portable, memory_order_relaxed)) return 0;
    int choice = atomic_load_explicit(&simd_choice, memory_order_relaxed);
    if (choice < 0) {
        __builtin_cpu_init();
        choice = __builtin_cpu_supports("ssse3") ? 1 : 0;
        atomic_store_explicit(&simd_choice, choice, memory_order_relaxed);
    }
    return choice;
}
#endif

void tc_base64url_encode(char *output, const uint8_t *input, size_t count) {
#if defined(__x86_64__)
    if (use_simd()) {
        size_t done = encode_ssse3(output, input, count);
        size_t rest = count - done;
        if (rest > 0) {
            // The last 1 to 15 bytes, zero-padded to two steps' reach: a padded group encodes to the same leading
            // characters, and its last character's unused bits are the zeros an encoder leaves.
            uint8_t padded[32] = {0};
            char characters[32];
            memcpy(padded, input + done, rest);
            encode_ssse3(characters, padded, sizeof padded);
            memcpy(output + done / 3 * 4, characters, tc_base64url_encoded_count(rest));
            wipe(padded, sizeof padded);
            wipe(characters, sizeof characters);
        }
        return;
    }
#endif
    encode_portable(output, input, count);
}

int tc_base64url_decode(uint8_t *output, const char *input, size_t count, size_t *decoded) {
    *decoded = 0;
    if (count % 4 == 1) return -1;
    uint32_t invalid = 0;
    size_t i = 0, written = 0;
#if defined(__x86_64__)
    if (use_simd()) {
        __m128i bad;
        i = decode_ssse3(output, input, count, &bad);
        written = i / 4 * 3;
        invalid |= mask_below(0, (uint32_t)_mm_movemask_epi8(bad)) & 0x100;
    }
#endif
    for (; i + 4 <= count; i += 4) {
        uint32_t a = char_sextet((uint8_t)input[i]), b = char_sextet((uint8_t)input[i + 1]);
        uint32_t c = char_sextet((uint8_t)input[i + 2]), d = char_sextet((uint8_t)input[i + 3]);
        invalid |= a | b | c | d;
        uint32_t group = (a & 0x3F) << 18 | (b & 0x3F) << 12 | (c & 0x3F) << 6 | (d & 0x3F);
        output[written++] = (uint8_t)(group >> 16);
        output[written++] = (uint8_t)(group >> 8);
        output[written++] = (uint8_t)group;
    }
    size_t rest = count - i;
    if (rest >= 2) {
        uint32_t a = char_sextet((uint8_t)input[i]), b = char_sextet((uint8_t)input[i + 1]);
        uint32_t c = rest == 3 ? char_sextet((uint8_t)input[i + 2]) : 0;
        invalid |= a | b | c;
        uint32_t group = (a & 0x3F) << 18 | (b & 0x3F) << 12 | (c & 0x3F) << 6;
        output[written++] = (uint8_t)(group >> 16);
        // The bits past the last whole byte must be zero, or another text would decode to the same bytes.
        if (rest == 2) {
            invalid |= mask_below(0, group & 0xFFFF) & 0x100;
        } else {
            output[written++] = (uint8_t)(group >> 8);
            invalid |= mask_below(0, group & 0xFF) & 0x100;
        }
    }
    *decoded = written;
    return (invalid & 0x100) ? -1 : 0;
}

int tc_base64url_is_canonical(const char *input, size_t count) {
    if (count % 4 == 1) return 0;
    uint32_t invalid = 0;
    size_t i = 0;
#if defined(__x86_64__)
    if (use_simd()) {
        uint32_t bad;
        i = scan_ssse3(input, count, &bad);
        invalid |= mask_below(0, bad) & 0x100;
    }
#endif
    for (; i < count; i++) invalid |= char_sextet((uint8_t)input[i]);
    // The unused low bits of the last character: 4 when 2 characters end the text, 2 when 3 do.
    if (count % 4 != 0) {
        uint32_t last = char_sextet((uint8_t)input[count - 1]) & (count % 4 == 2 ? 0x0F : 0x03);
        invalid |= mask_below(0, last) & 0x100;
    }
    return (invalid & 0x100) ? 0 : 1;
}

int tc_base64url_uses_simd(void) {
#if defined(__x86_64__)
    return use_simd();
#else
    return 0;
#endif
}

void tc_base64url_force_portable(int portable) {
#if defined(__x86_64__)
    atomic_store_explicit(&forced_portable, portable ? 1 : 0, memory_order_relaxed);
#else
    (void)portable;
#endif
}
