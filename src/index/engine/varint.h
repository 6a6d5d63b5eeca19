/* Varints (postings.c): the byte code of a segment's docid gaps, posting
 * heads and positions, 7 bits a byte, low first. Writing one is inline: the
 * builder writes one for every position of every document. */
#ifndef NEWSD_INDEX_ENGINE_VARINT_H
#define NEWSD_INDEX_ENGINE_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* v at p; returns the bytes written (at most 5). */
static inline size_t eng_varint_put(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The varint at p into *v; past it. */
const uint8_t *eng_varint_get(const uint8_t *p, uint32_t *v);

/* eng_varint_get with the one-byte case (nearly every tf) inline. */
static inline const uint8_t *eng_varint_get1(const uint8_t *p, uint32_t *v)
{
    if (*p < 0x80) {
        *v = *p;
        return p + 1;
    }
    return eng_varint_get(p, v);
}

/* Past n varints at p, n of which are known to follow. */
const uint8_t *eng_varints_skip(const uint8_t *p, uint32_t n);

#endif
