/* Bits of a 64-bit word. */
#ifndef NEWSD_UTIL_BITS_H
#define NEWSD_UTIL_BITS_H

#include <stdint.h>

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

#endif
