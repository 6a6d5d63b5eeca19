/* Numbers as bytes (varint.c): varints, 7 bits a byte, low first (the
 * positions, the builder's posting data, a short block's heads), and
 * bit-packed runs, a width byte then every value in that many bits, least
 * significant bit first (docid gaps, heads.c's tfs). Writing a varint is
 * inline: the builder writes one for every position of every document. */
#ifndef NEWSD_INDEX_ENGINE_VARINT_H
#define NEWSD_INDEX_ENGINE_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/bits.h"

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

/* Bytes of n values packed w bits each, after their width byte. */
static inline size_t eng_packed_bytes(uint32_t n, unsigned w)
{
    return ((size_t)n * w + 7) / 8;
}
/* n values into out (room for 1 + 4 n bytes): the width of the largest
 * (0..32), then each in that many bits. Returns the bytes written. */
size_t eng_pack(uint8_t *out, const uint32_t *v, uint32_t n);
/* Values i..n-1 of a run packed w bits each (w <= 32) in the len bytes at
 * p (eng_packed_bytes(n, w)) into out[i..n-1]: one unaligned load, a shift
 * and a mask a value while eight bytes remain, the rest from a copy of the
 * last eight padded with zeros (no load past p + len). Inline: the docid
 * blocks' decoders (postings.c) read a block's last gaps with it. */
static inline __attribute__((always_inline)) void
eng_unpack_from(const uint8_t *p, size_t len, uint32_t i, uint32_t n, unsigned w, uint32_t *out)
{
    uint64_t mask = ((uint64_t)1 << w) - 1;
    for (; i < n && ((size_t)i * w >> 3) + 8 <= len; i++) {
        size_t bit = (size_t)i * w;
        out[i] = (uint32_t)(bits_le64(p + (bit >> 3)) >> (bit & 7) & mask);
    }
    if (i < n) {
        /* (a copy of exactly eight bytes is one load: a copy of len - from
         * bytes was a `rep movsq`, whose start was a tenth of block_fill
         * in the 10 M mix's profile) */
        size_t from = len > 8 ? len - 8 : 0;
        uint8_t tail[16] = {0};
        if (len >= 8)
            memcpy(tail, p + from, 8);
        else
            for (size_t k = 0; k < len; k++)
                tail[k] = p[k];
        for (; i < n; i++) {
            size_t bit = (size_t)i * w;
            out[i] = (uint32_t)(bits_le64(tail + ((bit >> 3) - from)) >> (bit & 7) & mask);
        }
    }
}
/* Value i of such a run (i < n): the one load eng_unpack_from makes for it,
 * from the same padded copy near the run's end. A weighed block with a
 * few matches reads their tfs alone (eng_heads_pick). */
static inline uint32_t eng_unpack_at(const uint8_t *p, size_t len, uint32_t i, unsigned w)
{
    if (w == 0)
        return 0;
    size_t bit = (size_t)i * w, at = bit >> 3;
    uint64_t x;
    if (at + 8 <= len) {
        x = bits_le64(p + at);
    } else {
        uint8_t tail[8] = {0};
        for (size_t k = 0; at + k < len; k++)
            tail[k] = p[at + k];
        x = bits_le64(tail);
    }
    return (uint32_t)(x >> (bit & 7) & (((uint64_t)1 << w) - 1));
}
/* All n values of such a run into out. */
void eng_unpack(const uint8_t *p, size_t len, uint32_t n, unsigned w, uint32_t *out);

#endif
