/* Bits of a 64-bit word. */
#ifndef NEWSD_UTIL_BITS_H
#define NEWSD_UTIL_BITS_H

#include <stdint.h>
#include <string.h>

/* The set bits of w, SWAR: the build has no -mpopcnt (Debian's amd64
 * baseline predates the instruction), and without it the compiler's
 * __builtin_popcountll calls libgcc's table routine (__popcountdi2: 9 % of
 * a common word's relevancy page at 10 M). A loop over many words that can
 * use the instruction picks it at run time (index/engine/sets.c). */
static inline unsigned bits_pop(uint64_t w)
{
    w = w - ((w >> 1) & 0x5555555555555555u);
    w = (w & 0x3333333333333333u) + ((w >> 2) & 0x3333333333333333u);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (unsigned)((w * 0x0101010101010101u) >> 56);
}

static inline unsigned bits_low(uint64_t w) /* index of the lowest set bit, w != 0 */
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(w);
#else
    unsigned i = 0;
    while (!(w & 1)) {
        w >>= 1;
        i++;
    }
    return i;
#endif
}

static inline unsigned bits_high(uint64_t w) /* index of the highest set bit, w != 0 */
{
#if defined(__GNUC__)
    return 63u - (unsigned)__builtin_clzll(w);
#else
    unsigned i = 63;
    while (!(w >> i & 1))
        i--;
    return i;
#endif
}

/* Bit i of the bitset v (bit i % 64 of word i / 64). */
static inline unsigned bits_get(const uint64_t *v, uint64_t i)
{
    return (unsigned)(v[i >> 6] >> (i & 63) & 1);
}

/* The eight bytes at p as a little-endian number (one unaligned load on
 * x86; the bit-packed blocks of the index are little-endian). */
static inline uint64_t bits_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The four bytes at p as a little-endian number, and v written so. */
static inline uint32_t bits_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void bits_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
