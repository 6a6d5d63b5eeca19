/* A block's posting heads (heads.c; segment format 10): each posting's
 * field mask and its tf in each field of the mask, for the ranking
 * (rank.c, bounds.c), the column-restricted terms and the cursors
 * (postings.c).
 *
 * A block of fewer than ENG_HEADS_PACKED_MIN postings keeps them as the
 * builder wrote them, a varint per field (eng_posting_tf_put: the first
 * field's shares its byte with the mask), one byte for the usual posting.
 * A larger block is bit-packed: a byte of each field's state (2 bits a
 * field, low first: none of the postings has it, all have it, or some, by
 * a bitmap of the block's postings that follows, one bit a posting); then,
 * per field that any has, its postings' tfs minus one in a packed run
 * (eng_pack: the width of the largest, then each in that many bits). The
 * usual block is one field's run of small numbers: a content-only block of
 * tfs from 1 to 4 takes 2 bits a posting, where a varint took 8 (1 M
 * articles: the heads 101.7 -> 46.6 MB, docs/performance.md).
 *
 * A head packed in 32 bits is for the bounds of a proximity's windows
 * (bounds.c), which need each field's tfs of every word where a weighted
 * sum (wf2) merges them. A tf above ENG_HEAD_TF_MAX is kept as
 * ENG_HEAD_TF_MAX: "too many to bound". */
#ifndef NEWSD_INDEX_ENGINE_HEADS_H
#define NEWSD_INDEX_ENGINE_HEADS_H

#include <stdint.h>

#include "index/engine/internal.h"

#define ENG_HEADS_PACKED_MIN 8
/* The bytes of the largest block's heads: the states, a bitmap and a run of 32-bit tfs a field
 * (the varint form of a short block is smaller: 3 fields of 5 bytes a posting). */
#define ENG_HEADS_MAX_BYTES (1 + ENG_FIELDS * (ENG_BLOCK / 8 + 1 + ENG_BLOCK * 4))
_Static_assert(ENG_HEADS_MAX_BYTES >= (ENG_HEADS_PACKED_MIN - 1) * ENG_FIELDS * 5,
               "a short block's varint heads fit too");

/* The heads of n postings (each with a tf in some field; tfs <= 2^29) into out
 * (room for ENG_HEADS_MAX_BYTES). Returns the bytes written. */
size_t eng_heads_encode(uint8_t *out, const struct eng_heads *h, uint32_t n);
/* The heads of a block of n postings at p (a checked segment's: eng_heads_check) into h; past
 * them (an exact term's positions follow). */
const uint8_t *eng_heads_decode(const uint8_t *p, uint32_t n, struct eng_heads *h);
/* Only postings js[0..nj-1] (ascending) of those n into h's slots of the same index, the other
 * slots left as they were: a packed run is read at a posting's rank in its field, not unpacked
 * whole. A block holding a few of the matches a filter leaves (a common word among three
 * sources' articles, relevancy at 10 M: 4 of 128 a block) decoded every head to use a few. */
#define ENG_HEADS_PICK_RATIO 8 /* picked while fewer than one posting in this many */
void eng_heads_pick(const uint8_t *p, uint32_t n, const uint8_t *js, uint32_t nj,
                    struct eng_heads *h);
/* Which of those postings are in a field of cols, bit i posting i: a bit-packed block's states
 * and bitmaps read a word at a time, its runs not read (a column-restricted term tests a
 * posting's fields, not its tfs). */
void eng_heads_in_fields(const uint8_t *p, uint32_t n, unsigned cols, uint64_t in[ENG_BLOCK / 64]);
/* eng_heads_decode of bytes that may be anything, inside [p, end): every posting names a field,
 * every tf at most 2^29, the bitmaps' spare bits 0; NULL (*why says what) when not. */
const uint8_t *eng_heads_check(const uint8_t *p, const uint8_t *end, uint32_t n,
                               struct eng_heads *h, const char **why);

/* Posting i's field mask: the fields where its tf is not 0. */
static inline unsigned eng_heads_mask(const struct eng_heads *h, uint32_t i)
{
    unsigned mask = 0;
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        mask |= (unsigned)(h->tf[f][i] != 0) << f;
    return mask;
}

/* Twice posting i's weighted frequency (eng_wf2 per field times tf) in the fields of cols. */
static inline uint32_t eng_heads_wf2(const struct eng_heads *h, uint32_t i, unsigned cols)
{
    uint32_t w = 0;
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        w += cols >> f & 1 ? eng_wf2[f] * h->tf[f][i] : 0;
    return w;
}

/* Posting i's tfs summed: an exact term's positions of it. */
static inline uint32_t eng_heads_tfs(const struct eng_heads *h, uint32_t i)
{
    uint32_t n = 0;
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        n += h->tf[f][i];
    return n;
}

#define ENG_HEAD_TF_BITS 9
#define ENG_HEAD_TF_MAX ((1u << ENG_HEAD_TF_BITS) - 1)
_Static_assert(3 + ENG_HEAD_TF_BITS * ENG_FIELDS <= 32, "a packed head is 32 bits");

/* Posting i's head packed (bits 0-2 the mask, then each field's tf). */
static inline uint32_t eng_heads_pack(const struct eng_heads *h, uint32_t i)
{
    uint32_t out = eng_heads_mask(h, i);
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t tf = h->tf[f][i];
        out |= (tf < ENG_HEAD_TF_MAX ? tf : ENG_HEAD_TF_MAX) << (3 + ENG_HEAD_TF_BITS * f);
    }
    return out;
}

static inline unsigned eng_head_mask(uint32_t packed)
{
    return packed & 7u;
}

static inline uint32_t eng_head_tf(uint32_t packed, unsigned f)
{
    return packed >> (3 + ENG_HEAD_TF_BITS * f) & ENG_HEAD_TF_MAX;
}

/* Relevancy's frequencies a term at a time over a set of matches (rank.c): for every posting of
 * t with docid d in [lo, hi) set in v (bit d - base), its wf2 in the fields of cols
 * (eng_heads_wf2; ENG_WEIGH_PACKED: its head packed, eng_heads_pack) into wf2 at d's rank
 * among v's bits (rank[w]: bits before word w), its block's dl_min raising dl_floor there; heads
 * alone read, a block without a match skipped. */
#define ENG_WEIGH_PACKED 0u
void eng_postings_weigh(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                        uint32_t hi, const uint64_t *v, uint32_t base, const uint32_t *rank,
                        uint32_t *wf2, uint32_t *dl_floor, unsigned cols);
/* Block b of a term's postings, its skip entry's maxima, the caller's key. */
struct eng_block_bound {
    uint32_t b, wf2_max, dl_min;
    double key;
};
/* t's blocks holding a docid of [lo, hi) set in v (as eng_postings_weigh reads), in order,
 * into out (room for eng_term_nblocks(t)); how many. Meta terms: none. Then block b's postings
 * in [lo, hi) set in v: their docids into ids, their wf2s (eng_heads_wf2) into wf2; how many. */
uint32_t eng_postings_blocks(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                             uint32_t hi, const uint64_t *v, uint32_t base,
                             struct eng_block_bound *out);
uint32_t eng_postings_block(const struct eng_segment *s, const struct eng_term *t, uint32_t b,
                            uint32_t lo, uint32_t hi, const uint64_t *v, uint32_t base,
                            uint32_t ids[ENG_BLOCK], uint32_t wf2[ENG_BLOCK]);
#endif
