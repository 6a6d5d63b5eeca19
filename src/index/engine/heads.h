/* A posting's head (its field mask and each field's tf) packed in 32 bits,
 * for the bounds of a proximity's windows (bounds.c), which need each
 * field's tfs of every word where a weighted sum (wf2) merges them. A tf
 * above ENG_HEAD_TF_MAX is kept as ENG_HEAD_TF_MAX: "too many to bound". */
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

#endif
