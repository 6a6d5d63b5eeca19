/* Postings' heads as relevancy reads them a term at a time (postings.c,
 * for rank.c and bounds.c): a head's weighted frequency in some fields, and
 * a head (its field mask and each field's tf) packed in 32 bits, for the
 * bounds of a proximity's windows (bounds.c), which need each field's tfs
 * of every word where a weighted sum (wf2) merges them. A tf above
 * ENG_HEAD_TF_MAX is kept as ENG_HEAD_TF_MAX: "too many to bound". */
#ifndef NEWSD_INDEX_ENGINE_HEADS_H
#define NEWSD_INDEX_ENGINE_HEADS_H

#include <stdint.h>

#include "index/engine/internal.h"

#define ENG_HEAD_TF_BITS 9
#define ENG_HEAD_TF_MAX ((1u << ENG_HEAD_TF_BITS) - 1)
_Static_assert(3 + ENG_HEAD_TF_BITS * ENG_FIELDS <= 32, "a packed head is 32 bits");

/* The head at p packed (bits 0-2 the mask, then each field's tf); past it. */
static inline const uint8_t *eng_head_pack(const uint8_t *p, uint32_t *packed)
{
    unsigned mask;
    uint32_t tf, out;
    p = eng_posting_head(p, &mask, &tf);
    out = mask;
    for (unsigned m = mask, first = 1; m; m &= m - 1, first = 0) {
        unsigned f = (unsigned)__builtin_ctz(m);
        if (!first)
            p = eng_posting_tf_next(p, &tf);
        out |= (tf < ENG_HEAD_TF_MAX ? tf : ENG_HEAD_TF_MAX) << (3 + ENG_HEAD_TF_BITS * f);
    }
    *packed = out;
    return p;
}

static inline unsigned eng_head_mask(uint32_t packed)
{
    return packed & 7u;
}

static inline uint32_t eng_head_tf(uint32_t packed, unsigned f)
{
    return packed >> (3 + ENG_HEAD_TF_BITS * f) & ENG_HEAD_TF_MAX;
}

/* eng_posting_head_read's wf2 of the fields in cols alone. */
static inline const uint8_t *eng_posting_head_read_in(const uint8_t *p, unsigned cols,
                                                      uint32_t *wf2)
{
    unsigned mask;
    uint32_t tf, w = 0;
    p = eng_posting_head(p, &mask, &tf);
    for (unsigned m = mask, first = 1; m; m &= m - 1, first = 0) {
        unsigned f = (unsigned)__builtin_ctz(m);
        if (!first)
            p = eng_posting_tf_next(p, &tf);
        w += cols >> f & 1 ? eng_wf2[f] * tf : 0;
    }
    *wf2 = w;
    return p;
}
/* Relevancy's frequencies a term at a time over a set of matches (rank.c): for every posting of
 * t with docid d in [lo, hi) set in v (bit d - base), its wf2 in the fields of cols
 * (eng_posting_head_read_in; ENG_WEIGH_PACKED: its head packed, heads.h) into wf2 at d's rank
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
 * into out (room for eng_term_nblocks(t)); how many. Block b's docids, each posting's wf2
 * (eng_posting_head_read) as well: how many. Meta terms: none. */
uint32_t eng_postings_blocks(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                             uint32_t hi, const uint64_t *v, uint32_t base,
                             struct eng_block_bound *out);
uint32_t eng_postings_block(const struct eng_segment *s, const struct eng_term *t, uint32_t b,
                            uint32_t ids[ENG_BLOCK], uint32_t wf2[ENG_BLOCK]);
#endif
