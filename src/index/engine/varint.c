/* Numbers as bytes: varints and bit-packed runs (varint.h). */
#include "index/engine/varint.h"

#include <string.h>

#include "util/bits.h"

#include "util/banned.h"

const uint8_t *eng_varint_get(const uint8_t *p, uint32_t *v)
{
    uint32_t x = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        x |= (uint32_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    x |= (uint32_t)*p++ << shift;
    *v = x;
    return p;
}

/* A varint ends at a byte below 0x80: while eight or more are due the
 * next eight bytes are theirs, and their ends are counted at once (a
 * varint cut at the eighth byte still ends at its own end byte, counted
 * later). */
const uint8_t *eng_varints_skip(const uint8_t *p, uint32_t n)
{
    while (n >= 8) {
        n -= bits_pop(~bits_le64(p) & 0x8080808080808080u);
        p += 8;
    }
    while (n > 0) {
        while (*p & 0x80)
            p++;
        p++;
        n--;
    }
    return p;
}

size_t eng_pack(uint8_t *out, const uint32_t *v, uint32_t n)
{
    uint32_t max = 0;
    for (uint32_t i = 0; i < n; i++)
        max |= v[i];
    unsigned w = max ? 32u - (unsigned)__builtin_clz(max) : 0;
    uint8_t *q = out + 1;
    uint64_t acc = 0; /* the bits not yet written, fewer than 8 before each value */
    unsigned have = 0;
    out[0] = (uint8_t)w;
    for (uint32_t i = 0; w > 0 && i < n; i++) {
        acc |= (uint64_t)v[i] << have;
        for (have += w; have >= 8; have -= 8) {
            *q++ = (uint8_t)acc;
            acc >>= 8;
        }
    }
    if (have > 0)
        *q++ = (uint8_t)acc;
    return (size_t)(q - out);
}

void eng_unpack(const uint8_t *p, size_t len, uint32_t n, unsigned w, uint32_t *out)
{
    if (w == 0) /* (a block of tfs of 1: the usual) */
        memset(out, 0, (size_t)n * sizeof *out);
    else
        eng_unpack_from(p, len, 0, n, w, out);
}
