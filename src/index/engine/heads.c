/* A block's posting heads: field masks and tfs, a varint per field for a
 * short block, bit-packed for the others (the layout: heads.h). */
#include "index/engine/heads.h"

#include <string.h>

#include "index/engine/varint.h"
#include "util/bits.h"

#include "util/banned.h"

enum field_state { FIELD_NONE, FIELD_ALL, FIELD_SOME, FIELD_BAD };

_Static_assert(ENG_BLOCK == 128, "a block's bitmap is two words");

/* The widest tf - 1: the builder's tfs are at most 2^29 (eng_posting_tf_put). */
#define TF_WIDTH_MAX 29

static size_t bitmap_bytes(uint32_t n)
{
    return (n + 7) / 8;
}

/* A block's bitmap of n postings at p as words, bit i posting i. */
static void bitmap_words(const uint8_t *p, uint32_t n, uint64_t words[ENG_BLOCK / 64])
{
    uint8_t bytes[ENG_BLOCK / 8] = {0};
    memcpy(bytes, p, bitmap_bytes(n));
    for (uint32_t j = 0; j < ENG_BLOCK / 64; j++)
        words[j] = bits_le64(bytes + 8 * j);
}

size_t eng_heads_encode(uint8_t *out, const struct eng_heads *h, uint32_t n)
{
    size_t len = 0;
    if (n < ENG_HEADS_PACKED_MIN) {
        for (uint32_t i = 0; i < n; i++) {
            unsigned mask = eng_heads_mask(h, i);
            for (unsigned m = mask; m; m &= m - 1) {
                unsigned f = (unsigned)__builtin_ctz(m);
                len += eng_posting_tf_put(out + len, mask, f, h->tf[f][i]);
            }
        }
        return len;
    }
    /* one pass: each field's tfs gathered and its bitmap made */
    uint32_t v[ENG_FIELDS][ENG_BLOCK], k[ENG_FIELDS] = {0};
    uint64_t bitmap[ENG_FIELDS][ENG_BLOCK / 64] = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            unsigned has = h->tf[f][i] != 0;
            v[f][k[f]] = h->tf[f][i] - 1;
            k[f] += has;
            bitmap[f][i / 64] |= (uint64_t)has << (i % 64);
        }
    }
    out[len++] = 0;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        enum field_state state = k[f] == 0 ? FIELD_NONE : k[f] == n ? FIELD_ALL : FIELD_SOME;
        out[0] |= (uint8_t)(state << (2 * f));
        for (size_t j = 0; state == FIELD_SOME && j < bitmap_bytes(n); j++)
            out[len++] = (uint8_t)(bitmap[f][j / 8] >> (8 * (j % 8)));
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (k[f] > 0)
            len += eng_pack(out + len, v[f], k[f]);
    }
    return len;
}

/* One posting's varint heads (the short form) into h's slot i; NULL when they run out of
 * [p, end) (end NULL: a checked segment's, not bounded). */
static const uint8_t *short_head(const uint8_t *p, const uint8_t *end, struct eng_heads *h,
                                 uint32_t i, const char **why)
{
    uint32_t v;
    p = end ? eng_varint_in(p, end, &v) : eng_varint_get1(p, &v);
    if (p == NULL) {
        *why = "a term frequency runs out";
        return NULL;
    }
    unsigned mask = v & 7;
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        h->tf[f][i] = 0;
    if (end && mask == 0) {
        *why = "a field mask names no field";
        return NULL;
    }
    for (unsigned m = mask, first = 1; m; m &= m - 1, first = 0) {
        unsigned f = (unsigned)__builtin_ctz(m);
        if (!first)
            p = end ? eng_varint_in(p, end, &v) : eng_varint_get1(p, &v);
        else
            v >>= 3;
        if (p == NULL || v >= (1u << TF_WIDTH_MAX)) {
            *why = "a term frequency runs out";
            return NULL;
        }
        h->tf[f][i] = v + 1;
    }
    return p;
}

/* The heads at p, checked inside [p, end) when end is not NULL. */
static const uint8_t *heads_read(const uint8_t *p, const uint8_t *end, uint32_t n,
                                 struct eng_heads *h, const char **why)
{
    if (n < ENG_HEADS_PACKED_MIN) {
        for (uint32_t i = 0; i < n && p; i++)
            p = short_head(p, end, h, i, why);
        return p;
    }
    size_t bb = bitmap_bytes(n);
    const uint8_t *bitmap[ENG_FIELDS] = {NULL};
    enum field_state state[ENG_FIELDS];
    *why = "a block's heads run out";
    if (end && p >= end)
        return NULL;
    unsigned states = *p++;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        state[f] = (enum field_state)(states >> (2 * f) & 3);
        if (end && (state[f] == FIELD_BAD || states >> (2 * ENG_FIELDS))) {
            *why = "a block's field states are malformed";
            return NULL;
        }
        if (state[f] == FIELD_BAD) /* (unchecked: bytes changed after their check) */
            state[f] = FIELD_NONE;
        if (state[f] != FIELD_SOME)
            continue;
        if (end && bb > (size_t)(end - p))
            return NULL;
        bitmap[f] = p;
        p += bb;
        if (end && n % 8 && p[-1] >> (n % 8)) {
            *why = "a block's field bitmap has bits past its postings";
            return NULL;
        }
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t v[ENG_BLOCK], k = n;
        uint32_t *tf = h->tf[f];
        if (state[f] == FIELD_NONE) {
            memset(tf, 0, n * sizeof *tf);
            continue;
        }
        uint64_t words[ENG_BLOCK / 64];
        if (state[f] == FIELD_SOME) {
            bitmap_words(bitmap[f], n, words);
            k = 0;
            for (uint32_t j = 0; j < ENG_BLOCK / 64; j++)
                k += bits_pop(words[j]);
            if (end && (k == 0 || k == n)) {
                *why = "a block's field bitmap is empty or full";
                return NULL;
            }
        }
        if (end && (p >= end || *p > TF_WIDTH_MAX ||
                    eng_packed_bytes(k, *p) > (size_t)(end - p - 1))) {
            *why = "a block's term frequencies run out";
            return NULL;
        }
        unsigned w = *p <= 32 ? *p : 32; /* (unchecked, as above) */
        size_t len = eng_packed_bytes(k, w);
        if (state[f] == FIELD_ALL) {
            eng_unpack(p + 1, len, n, w, tf);
            for (uint32_t i = 0; i < n; i++)
                tf[i] += 1;
        } else {
            /* each set bit's tf in turn (a walk of every posting with a running rank was
             * 60 % of this function in a merge's profile: each step waited on the last) */
            uint32_t r = 0;
            eng_unpack(p + 1, len, k, w, v);
            memset(tf, 0, n * sizeof *tf);
            for (uint32_t j = 0; j < ENG_BLOCK / 64; j++) {
                for (uint64_t bits = words[j]; bits; bits &= bits - 1)
                    tf[64 * j + bits_low(bits)] = v[r++] + 1;
            }
        }
        p += 1 + len;
    }
    for (uint32_t i = 0; end && i < n; i++) {
        if (eng_heads_mask(h, i) == 0) {
            *why = "a field mask names no field";
            return NULL;
        }
    }
    return p;
}

void eng_heads_in_fields(const uint8_t *p, uint32_t n, unsigned cols, uint64_t in[ENG_BLOCK / 64])
{
    memset(in, 0, ENG_BLOCK / 8);
    if (n < ENG_HEADS_PACKED_MIN) {
        struct eng_heads h;
        eng_heads_decode(p, n, &h);
        for (uint32_t i = 0; i < n; i++)
            in[i / 64] |= (uint64_t)((eng_heads_mask(&h, i) & cols) != 0) << (i % 64);
        return;
    }
    /* word-wide: a field all postings have is its first n bits, a field some have its bitmap */
    unsigned states = *p++;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        enum field_state state = (enum field_state)(states >> (2 * f) & 3);
        uint64_t words[ENG_BLOCK / 64] = {n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1,
                                          n > 64 ? ~(uint64_t)0 >> (128 - n) : 0};
        if (state == FIELD_SOME) {
            bitmap_words(p, n, words);
            p += bitmap_bytes(n);
        }
        if ((state != FIELD_SOME && state != FIELD_ALL) || !(cols >> f & 1))
            continue;
        for (uint32_t j = 0; j < ENG_BLOCK / 64; j++)
            in[j] |= words[j];
    }
}

void eng_heads_pick(const uint8_t *p, uint32_t n, const uint8_t *js, uint32_t nj,
                    struct eng_heads *h)
{
    if (n < ENG_HEADS_PACKED_MIN) { /* (a short block's varints are read in turn) */
        eng_heads_decode(p, n, h);
        return;
    }
    uint64_t words[ENG_FIELDS][ENG_BLOCK / 64];
    enum field_state state[ENG_FIELDS];
    unsigned states = *p++;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        state[f] = (enum field_state)(states >> (2 * f) & 3);
        if (state[f] == FIELD_BAD) /* (unchecked, as heads_read) */
            state[f] = FIELD_NONE;
        if (state[f] == FIELD_SOME) {
            bitmap_words(p, n, words[f]);
            p += bitmap_bytes(n);
        }
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t *tf = h->tf[f];
        if (state[f] == FIELD_NONE) {
            for (uint32_t k = 0; k < nj; k++)
                tf[js[k]] = 0;
            continue;
        }
        uint32_t count = n;
        if (state[f] == FIELD_SOME)
            count = bits_pop(words[f][0]) + bits_pop(words[f][1]);
        unsigned w = *p <= 32 ? *p : 32;
        size_t len = eng_packed_bytes(count, w);
        for (uint32_t k = 0; k < nj; k++) {
            uint32_t j = js[k], at = j;
            if (state[f] == FIELD_SOME) {
                uint64_t word = words[f][j >> 6], below = word & (((uint64_t)1 << (j & 63)) - 1);
                if (!(word >> (j & 63) & 1)) {
                    tf[j] = 0;
                    continue;
                }
                at = (j >> 6 ? bits_pop(words[f][0]) : 0) + bits_pop(below);
            }
            tf[j] = eng_unpack_at(p + 1, len, at, w) + 1;
        }
        p += 1 + len;
    }
}

const uint8_t *eng_heads_decode(const uint8_t *p, uint32_t n, struct eng_heads *h)
{
    const char *why;
    return heads_read(p, NULL, n, h, &why);
}

const uint8_t *eng_heads_check(const uint8_t *p, const uint8_t *end, uint32_t n,
                               struct eng_heads *h, const char **why)
{
    return heads_read(p, end, n, h, why);
}
