/* The checks of what a search reads of a mapped segment file, made where
 * it first reads it (index/engine/internal.h, docs/engine.md "Damage"): the
 * columns at open, each term's postings whole when the term is first
 * opened, the same checks the full check of `newsd index verify`
 * (segfile.c) makes (a block's heads by heads.c's eng_heads_check). */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "index/engine/heads.h"
#include "index/engine/tiers.h"

#include "util/banned.h"

static int check_postings(const struct eng_segment *s, const struct eng_term *t,
                          struct eng_tier_check *tc, struct err *err);

/* One term's postings inside post[off, off + bytes), and its tier after
 * them (tiers.h) agreeing with them: a tier decides a relevancy page
 * alone, so a wrong one would lose matches. */
int eng_segment_check_term(const struct eng_segment *s, const struct eng_term *t, struct err *err)
{
    if (!(t->kind & ENG_TERM_TIERED))
        return check_postings(s, t, NULL, err);
    if (!eng_tier_kind(eng_kind(t->kind)))
        return err_set(err, ERR_PARSE, "a term of this kind has a tier");
    struct eng_tier_check *tc = calloc(1, sizeof *tc);
    if (tc == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    int rc = eng_tier_read(s, t, &tc->t) < 0 ? err_set(err, ERR_PARSE, "a tier does not decode")
                                             : check_postings(s, t, tc, err);
    if (rc == 0 && !eng_tier_check_end(tc))
        rc = err_set(err, ERR_PARSE, "a tier holds a document its list does not");
    free(tc);
    return rc;
}

/* t's kind and its list's parts inside the segment's postings. */
static bool term_in_bounds(const struct eng_segment *s, const struct eng_term *t)
{
    unsigned kind = eng_kind(t->kind);
    uint64_t skip_bytes = eng_term_skip_bytes(t);
    return !(
        kind > ENG_TERM_PAIR ||
        (t->kind & (ENG_TERM_PAIRED | ENG_TERM_RESID | ENG_TERM_BARE) && kind != ENG_TERM_EXACT) ||
        t->df == 0 || (skip_bytes > 0 && t->off % 4 != 0) || t->off > s->post_len ||
        t->bytes > s->post_len - t->off || skip_bytes + t->docs_len > t->bytes);
}

/* The nin docids of the block at *dp (inside [*dp, end)) into ids, each
 * after prev, *dp past the block: NULL, or why they cannot be read. */
static const char *block_docids(const struct eng_segment *s, const uint8_t **dp, const uint8_t *end,
                                uint32_t nin, uint32_t prev, uint32_t *ids)
{
    const uint8_t *p = *dp;
    if (p >= end || *p > 32 || eng_packed_bytes(nin, *p) > (size_t)(end - p - 1))
        return "a docid block runs out";
    eng_block_decode(p, nin, prev, ids);
    *dp = p + 1 + eng_packed_bytes(nin, *p);
    for (uint32_t k = 0; k < nin; k++) {
        /* the first gap counts from "before 0"; a wrap is past the segment */
        if ((k > 0 || prev != UINT32_MAX) && ids[k] <= (k > 0 ? ids[k - 1] : prev))
            return "a docid past the segment";
    }
    return ids[nin - 1] >= s->n ? "a docid past the segment" : NULL;
}

int eng_segment_term_docids(const struct eng_segment *s, const struct eng_term *t,
                            void (*fn)(void *ctx, const uint32_t *ids, uint32_t n), void *ctx)
{
    if (eng_segment_damaged(s))
        return ERR_PARSE;
    if (!term_in_bounds(s, t)) {
        eng_segment_damage(s, "a term's postings are out of bounds");
        return ERR_PARSE;
    }
    const char *why = NULL;
    const uint8_t *dp = s->post + t->off + eng_term_skip_bytes(t), *end = dp + t->docs_len;
    uint32_t prev = UINT32_MAX, left = t->df, ids[ENG_BLOCK];
    while (why == NULL && left > 0) {
        uint32_t nin = left > ENG_BLOCK ? ENG_BLOCK : left;
        left -= nin;
        if ((why = block_docids(s, &dp, end, nin, prev, ids)) == NULL) {
            fn(ctx, ids, nin);
            prev = ids[nin - 1];
        }
    }
    if (why) {
        eng_segment_damage(s, why);
        return ERR_PARSE;
    }
    return 0;
}

static int check_postings(const struct eng_segment *s, const struct eng_term *t,
                          struct eng_tier_check *tc, struct err *err)
{
    unsigned kind = eng_kind(t->kind);
    uint64_t skip_bytes = eng_term_skip_bytes(t), limit = t->off + t->bytes;
    if (!term_in_bounds(s, t))
        return err_set(err, ERR_PARSE, "a term's postings are out of bounds");
    /* A one-block list's skip entry is its dictionary entry's maxima. */
    bool one = eng_term_nblocks(t) == 1;
    bool exact = kind == ENG_TERM_EXACT;
    const struct eng_skip *skip =
        one ? NULL : (const struct eng_skip *)(uintptr_t)(s->post + t->off);
    const uint8_t *docs = s->post + t->off + skip_bytes, *docs_end = docs + t->docs_len;
    const uint8_t *data = docs_end, *data_end = s->post + limit;
    uint32_t prev = UINT32_MAX, left = t->df;
    const uint8_t *dp = docs, *ap = data;
    uint32_t ids[ENG_BLOCK];
    struct eng_heads h;
    const char *why = NULL;

    for (uint32_t b = 0; b < eng_term_nblocks(t); b++) {
        uint32_t nin = left > ENG_BLOCK ? ENG_BLOCK : left;
        uint32_t dl_min = UINT32_MAX;
        uint64_t wf2_max = 0, pos_due = 0;
        left -= nin;
        if (!one && (skip[b].doc_off != (uint32_t)(dp - docs) ||
                     (kind != ENG_TERM_META && skip[b].data_off != (uint32_t)(ap - data))))
            return err_set(err, ERR_PARSE, "a skip entry points elsewhere");
        if ((why = block_docids(s, &dp, docs_end, nin, prev, ids)) != NULL)
            return err_set(err, ERR_PARSE, "%s", why);
        if (kind != ENG_TERM_META && (ap = eng_heads_check(ap, data_end, nin, &h, &why)) == NULL)
            return err_set(err, ERR_PARSE, "%s", why);
        for (uint32_t k = 0; k < nin; k++) {
            uint32_t d = ids[k];
            eng_prefetch_ahead(s->dl, ids, k, nin);
            if (s->dl[d] < dl_min)
                dl_min = s->dl[d];
            if (kind == ENG_TERM_META)
                continue;
            uint64_t wf2 = 0; /* (eng_heads_wf2 in 64 bits: a damaged tf may overflow it) */
            for (unsigned f = 0; f < ENG_FIELDS; f++)
                wf2 += (uint64_t)eng_wf2[f] * h.tf[f][k];
            pos_due += eng_heads_tfs(&h, k);
            if (wf2 > UINT32_MAX)
                return err_set(err, ERR_PARSE, "a posting's term frequencies overflow");
            if (tc && !eng_tier_check_posting(tc, d, (uint32_t)wf2, s->dl[d]))
                return err_set(err, ERR_PARSE, "a tier disagrees with its list");
            if (wf2 > wf2_max)
                wf2_max = wf2;
        }
        prev = ids[nin - 1];
        if (exact) { /* the positions follow the heads */
            for (uint64_t i = 0; i < pos_due; i++) {
                uint32_t pos;
                if ((ap = eng_varint_in(ap, data_end, &pos)) == NULL)
                    return err_set(err, ERR_PARSE, "a position list runs out");
            }
        }
        if (!one && skip[b].last != prev)
            return err_set(err, ERR_PARSE, "a skip entry's last docid disagrees");
        /* Relevancy skips documents by these: a wrong one loses matches. */
        uint32_t want_wf2 = one ? t->wf2_max : skip[b].wf2_max;
        uint32_t want_dl = one ? t->dl_min : skip[b].dl_min;
        if (want_wf2 != wf2_max || want_dl != dl_min)
            return err_set(err, ERR_PARSE, "a skip entry's block maximum disagrees");
    }
    if (dp != docs_end)
        return err_set(err, ERR_PARSE, "a docid stream has trailing bytes");
    if (kind != ENG_TERM_META && ap != data_end)
        return err_set(err, ERR_PARSE, "a data stream has trailing bytes");
    return 0;
}

int eng_segment_check_columns(const struct eng_segment *s, uint32_t nsrc, struct err *err)
{
    uint64_t ntoken = 0;
    for (uint32_t d = 0; d < s->n; d++) {
        if (d > 0 && s->ids[d] >= s->ids[d - 1])
            return err_set(err, ERR_PARSE, "article ids are not descending");
        if (s->src[d] != ENG_NO_SOURCE && s->src[d] >= nsrc)
            return err_set(err, ERR_PARSE, "a source id outside the manifest's table");
        if (s->pk_doc[d] >= s->n || (d > 0 && s->pk_hash[d] < s->pk_hash[d - 1]))
            return err_set(err, ERR_PARSE, "the URL hash table is not sorted");
        if (s->doc_off[d] > s->doc_off[d + 1])
            return err_set(err, ERR_PARSE, "the document store's offsets are not ascending");
        ntoken += s->dl[d];
    }
    if (ntoken != s->ntoken)
        return err_set(err, ERR_PARSE, "row sizes disagree with the token total");
    if (s->doc_off[0] != 0 || s->doc_off[s->n] != s->dz_len)
        return err_set(err, ERR_PARSE, "the document store's offsets disagree with its length");
    return 0;
}

int eng_segment_term_ready(const struct eng_segment *s, const struct eng_term *t)
{
    struct err err;
    int rc;

    if (eng_segment_damaged(s))
        return ERR_PARSE;
    if (s->term_ok == NULL)
        return 0;
    size_t i = t->idx;
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (atomic_load_explicit(&s->term_ok[i / 64], memory_order_acquire) & bit)
        return 0;
    /* Once per term and segment: a whole decode of its postings (what a
     * search of it reads at most), so that the decoders that follow need
     * no check of their own in their loops. (The dictionary's read of the
     * entry checked its string and its postings' bounds.) */
    err_clear(&err);
    if ((rc = eng_segment_check_term(s, t, &err)) < 0) {
        eng_segment_damage(s, err_msg(&err, rc));
        return ERR_PARSE;
    }
    atomic_fetch_or_explicit(&s->term_ok[i / 64], bit, memory_order_release);
    return 0;
}

int eng_segment_term_open(const struct eng_segment *s, const char *str, size_t len,
                          struct eng_term *out)
{
    if (!eng_segment_term(s, str, len, out))
        return eng_segment_damaged(s) ? ERR_PARSE : 0;
    return eng_segment_term_ready(s, out) < 0 ? ERR_PARSE : 1;
}
