/* Residuals (resid.h): which a segment being built keeps. */
#include "index/engine/resid.h"
#include "index/engine/bdict.h"

#include <stdlib.h>

#include "util/banned.h"

/* Word t's first resid_from postings, each without a stem beside it, put
 * before the postings of its residual r, field tfs only (the positions left
 * out). 0 or ERR_NOMEM. */
static int resid_prepend(struct eng_bterm *t, struct eng_bterm *r)
{
    /* (room past the arena's small arrays: the new arrays are the term's) */
    size_t n = (size_t)t->resid_from + r->n;
    size_t cap = n > ENG_BDICT_SMALL_POSTINGS ? n : ENG_BDICT_SMALL_POSTINGS + 1;
    size_t dcap = (size_t)t->resid_from * 15 + r->dlen + ENG_BDICT_SMALL_DATA + 1;
    struct eng_bpost *pst = malloc(cap * sizeof *pst);
    uint8_t *data = malloc(dcap);
    if (pst == NULL || data == NULL || cap > UINT32_MAX || dcap > UINT32_MAX) {
        free(pst);
        free(data);
        return ERR_NOMEM;
    }
    uint32_t dlen = 0;
    for (uint32_t i = 0; i < t->resid_from; i++) {
        const uint8_t *p = t->data + t->pst[i].off;
        unsigned mask;
        uint32_t tf, pos;
        pst[i] = (struct eng_bpost){t->pst[i].doc, dlen};
        p = eng_posting_head(p, &mask, &tf);
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            if (!(mask & (1u << f)))
                continue;
            if (f != (unsigned)__builtin_ctz(mask))
                p = eng_posting_tf_next(p, &tf);
            dlen += (uint32_t)eng_posting_tf_put(data + dlen, mask, f, tf);
            for (uint32_t k = 0; k < tf; k++) /* (its positions: flush_doc) */
                p = eng_varint_get1(p, &pos);
        }
    }
    for (uint32_t i = 0; i < r->n; i++)
        pst[t->resid_from + i] = (struct eng_bpost){r->pst[i].doc, dlen + r->pst[i].off};
    if (r->dlen) /* (none after its first stem: no data yet) */
        memcpy(data + dlen, r->data, r->dlen);
    dlen += r->dlen;
    struct eng_bterm keep = *r;
    eng_bdict_term_release(r); /* (which empties it) */
    *r = keep;
    r->pst = pst;
    r->n = (uint32_t)n;
    r->cap = (uint32_t)cap;
    r->data = data;
    r->dlen = dlen;
    r->dcap = (uint32_t)dcap;
    return 0;
}

int eng_resid_settle(struct eng_bdict *d, uint32_t min_df)
{
    for (size_t i = 0; i < d->n; i++) {
        struct eng_bterm *t = &d->terms[i];
        if (eng_kind(t->kind) != ENG_TERM_EXACT)
            continue;
        if (t->resid1 == 0) {
            t->kind |= ENG_TERM_BARE;
            continue;
        }
        struct eng_bterm *r = &d->terms[t->resid1 - 1];
        uint64_t rn = (uint64_t)t->resid_from + r->n;
        bool kept = eng_resid_kept(min_df, t->n, rn);
        if (kept)
            t->kind |= ENG_TERM_RESID;
        if (!kept || rn == 0)
            r->resid1 = ENG_RESID_NONE; /* left out, or empty */
        else if (t->resid_from > 0 && resid_prepend(t, r) < 0)
            return ERR_NOMEM;
    }
    return 0;
}
