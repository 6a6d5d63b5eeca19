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

/* A varint inside [p, end) (bytes of a file: hostile); NULL when it runs
 * out or is longer than 5 bytes. */
static inline const uint8_t *eng_varint_in(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    if (p < end && *p < 0x80) { /* one byte: nearly every field */
        *v = *p;
        return p + 1;
    }
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 35 && p < end; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (x > UINT32_MAX)
                return NULL;
            *v = (uint32_t)x;
            return p;
        }
    }
    return NULL;
}

/* Past n varints at p, n of which are known to follow. */
const uint8_t *eng_varints_skip(const uint8_t *p, uint32_t n);

#endif
