/* A merge's terms (merge.h): every term of the inputs in byte order, each
 * merged once through postings cursors, a word's pairs kept where every
 * input kept them, its residual (resid.h) right after it. */
#include "index/engine/merge.h"
#include "index/engine/resid.h"

#include <stdlib.h>
#include <string.h>

#include "util/limits.h"
#include "util/sort.h"

#include "util/banned.h"

static int term_cmp(const struct eng_segment *a, const struct eng_term *x,
                    const struct eng_segment *b, const struct eng_term *y)
{
    return sort_order_bytes(a->strs + x->str, x->len, b->strs + y->str, y->len);
}

/* The next live posting of cursor i at or after its current one: its new
 * docid, ENG_END when spent. */
static uint32_t next_live(struct eng_merge *m, size_t i, struct eng_cursor *c)
{
    if (m->shift[i] != MAP_LOADED)
        return c->doc == ENG_END ? ENG_END : c->doc + m->shift[i];
    while (c->doc != ENG_END) {
        const uint32_t *map = m->map[i];
        eng_prefetch_ahead(map, c->ids, c->i, c->nin);
        uint32_t nd = map[c->doc];
        if (nd != ENG_END)
            return nd;
        eng_cursor_seek(c, c->doc + 1);
    }
    return ENG_END;
}

/* Each input's dictionary walked in order: its current term, while it has one. */
struct merge_in {
    struct eng_term_iter it;
    struct eng_term t;
    bool more;
};

/* One term present in the inputs flagged in has[]: its postings merged,
 * the term left open (eng_segw_term_end); live[i] (NULL: not counted) the
 * live postings of input i. */
static int merge_postings(struct eng_merge *m, struct eng_segw *w, const bool *has,
                          const struct merge_in *ti, const char *str, size_t len, unsigned kind,
                          struct eng_cursor *cur, uint32_t *head, uint32_t (*pos)[ENG_POS_MAX],
                          uint32_t *live)
{
    bool exact = eng_kind(kind) == ENG_TERM_EXACT;
    int rc;

    for (size_t i = 0; i < m->k; i++) {
        head[i] = ENG_END;
        if (!has[i])
            continue;
        eng_cursor_init(&cur[i], m->in[i], &ti[i].t);
        head[i] = next_live(m, i, &cur[i]);
    }
    if ((rc = eng_segw_term(w, str, len, (uint8_t)kind)) < 0)
        return rc;
    for (;;) {
        size_t best = m->k;
        for (size_t i = 0; i < m->k; i++) {
            if (head[i] != ENG_END && (best == m->k || head[i] < head[best]))
                best = i;
        }
        if (best == m->k)
            break;
        struct eng_cursor *c = &cur[best];
        unsigned mask = 0;
        uint32_t tf[ENG_FIELDS] = {0};
        eng_cursor_data(c, &mask, tf, exact ? pos : NULL);
        for (unsigned f = 0; exact && f < ENG_FIELDS; f++) {
            if (tf[f] < ENG_POS_MAX)
                continue;
            /* A field with ENG_POS_MAX occurrences or more: positions past
             * the cap cannot be read back through a cursor. */
            uint32_t full[ENG_FIELDS];
            eng_cursor_data(c, &mask, full, NULL);
            if (full[f] > ENG_POS_MAX)
                return ERR_UNSUPPORTED;
        }
        if ((rc = eng_segw_posting(w, head[best], mask, tf, (const uint32_t(*)[ENG_POS_MAX])pos)) <
            0)
            return rc;
        if (live)
            live[best]++;
        eng_cursor_seek(c, c->doc + 1);
        head[best] = next_live(m, best, c);
    }
    return 0;
}

static int merge_term(struct eng_merge *m, struct eng_segw *w, const bool *has,
                      const struct merge_in *ti, const char *str, size_t len, unsigned kind,
                      struct eng_cursor *cur, uint32_t *head, uint32_t (*pos)[ENG_POS_MAX])
{
    int rc = merge_postings(m, w, has, ti, str, len, kind, cur, head, pos, NULL);
    return rc < 0 ? rc : eng_segw_term_end(w);
}

/* The residual's inputs of word str (resid.h), which the inputs flagged in
 * has[] hold, into rhas[] and rti[]: where the word is bare, the word
 * itself; where its residual is kept, the term after it there (absent:
 * empty). ERR_PARSE when an input's next term is damaged. */
static int resid_inputs(const struct eng_merge *m, const bool *has, const struct merge_in *ti,
                        const char *str, size_t len, bool *rhas, struct merge_in *rti)
{
    for (size_t i = 0; i < m->k; i++) {
        const struct eng_segment *s = m->in[i];
        rhas[i] = has[i] && (ti[i].t.kind & ENG_TERM_BARE);
        rti[i].t = ti[i].t;
        if (!has[i] || !(ti[i].t.kind & ENG_TERM_RESID))
            continue;
        struct eng_term_iter it = ti[i].it; /* the term after the word, looked at */
        it.t = &rti[i].t;
        if (!eng_term_iter_next(&it)) {
            if (eng_segment_damaged(s))
                return ERR_PARSE;
            continue;
        }
        if (eng_kind(rti[i].t.kind) != ENG_TERM_STEM ||
            !eng_resid_of(s->strs + rti[i].t.str, rti[i].t.len, str, len))
            continue;
        int rc = eng_segment_term_ready(s, &rti[i].t);
        if (rc < 0)
            return rc;
        rhas[i] = true;
    }
    return 0;
}

/* The merged word's residual flags (resid.h) from its live postings in
 * each input (live[]) and its residual's inputs (rhas[], rti[]): as a
 * build of the live documents decides them, but that an input which left
 * the residual out leaves it out (it cannot be made again). */
static unsigned resid_flags(struct eng_merge *m, const bool *has, const struct merge_in *ti,
                            const uint32_t *live, const bool *rhas, const struct merge_in *rti,
                            struct eng_cursor *cur)
{
    uint64_t df = 0, rdf = 0;
    for (size_t i = 0; i < m->k; i++) {
        if (!has[i] || live[i] == 0)
            continue;
        if (!(ti[i].t.kind & (ENG_TERM_RESID | ENG_TERM_BARE)))
            return 0;
        df += live[i];
        if (ti[i].t.kind & ENG_TERM_BARE) {
            rdf += live[i];
            continue;
        }
        if (!rhas[i])
            continue;
        if (m->shift[i] != MAP_LOADED) { /* no deletion there: every posting is live */
            rdf += rti[i].t.df;
            continue;
        }
        eng_cursor_init(&cur[i], m->in[i], &rti[i].t);
        for (uint32_t d = next_live(m, i, &cur[i]); d != ENG_END; d = next_live(m, i, &cur[i])) {
            rdf++;
            eng_cursor_seek(&cur[i], cur[i].doc + 1);
        }
    }
    if (df == 0)
        return 0;
    if (rdf == df) /* (a document's occurrences all have a stem or none do) */
        return ENG_TERM_BARE;
    return eng_resid_kept(m->resid_min_df, df, rdf) ? ENG_TERM_RESID : 0;
}

/* Exact word str, which the inputs flagged in has[] hold, merged, its
 * residual flags decided once its live postings are counted, and its
 * residual right after it. */
static int merge_word(struct eng_merge *m, struct eng_segw *w, const bool *has,
                      const struct merge_in *ti, const char *str, size_t len, unsigned kind,
                      struct eng_cursor *cur, uint32_t *head, uint32_t (*pos)[ENG_POS_MAX],
                      bool *rhas, struct merge_in *rti, uint32_t *live)
{
    char resid[LIMIT_TOKEN_BYTES + 1];
    bool may = len <= LIMIT_TOKEN_BYTES; /* (a word is a token: never longer) */
    int rc = may ? resid_inputs(m, has, ti, str, len, rhas, rti) : 0;
    memset(live, 0, m->k * sizeof *live);
    if (rc == 0)
        rc = merge_postings(m, w, has, ti, str, len, kind, cur, head, pos, live);
    unsigned flags = rc == 0 && may ? resid_flags(m, has, ti, live, rhas, rti, cur) : 0;
    eng_segw_term_flags(w, flags);
    if (rc == 0)
        rc = eng_segw_term_end(w);
    if (rc < 0 || !(flags & ENG_TERM_RESID))
        return rc;
    memcpy(resid, str, len);
    resid[len] = '\0';
    return merge_term(m, w, rhas, rti, resid, len + 1, ENG_TERM_STEM, cur, head, pos);
}

/* Input i's next term (the first when first), checked before its postings
 * are read (eng_segment_term_ready); nothing when its terms are spent.
 * ERR_PARSE when its dictionary or the term is damaged. */
static int merge_term_next(const struct eng_merge *m, struct merge_in *ti, size_t i, bool first)
{
    const struct eng_segment *s = m->in[i];
    ti[i].more =
        first ? eng_term_iter_at(&ti[i].it, s, 0, &ti[i].t) : eng_term_iter_next(&ti[i].it);
    if (!ti[i].more)
        return eng_segment_damaged(s) ? ERR_PARSE : 0;
    return eng_segment_term_ready(s, &ti[i].t);
}

/* The merged kind of term t0 (str[0, len)), which the inputs flagged in
 * has[] hold: an exact term stays paired when every input holding it
 * pairs it (each then holds its pairs; eng_segw_term_end unpairs it when it
 * became rare). A pair term is kept (1) when both its words are paired in
 * the output, which has them by now (pairs sort after every paired word):
 * an input holding both words paired both, so the merged list is whole.
 * 0: left out. */
static int merged_kind(const struct eng_merge *m, const struct eng_segw *w, const bool *has,
                       const struct merge_in *ti, const struct eng_term *t0, const char *str,
                       size_t len, unsigned *kind)
{
    bool paired = true;
    for (size_t i = 0; i < m->k; i++)
        paired = paired && (!has[i] || (ti[i].t.kind & ENG_TERM_PAIRED));
    *kind = eng_kind(t0->kind);
    if (*kind == ENG_TERM_EXACT && paired)
        *kind |= ENG_TERM_PAIRED;
    if (*kind == ENG_TERM_STEM && len > 1 && str[len - 1] == '\0')
        return 0; /* a residual: merged with its word (merge_word) */
    if (*kind != ENG_TERM_PAIR)
        return 1;
    const char *a, *b;
    size_t alen, blen;
    return eng_pair_words(str, len, &a, &alen, &b, &blen) && eng_segw_paired(w, a, alen) &&
           eng_segw_paired(w, b, blen);
}

/* Every term of the inputs in byte order, each merged once. */
int eng_merge_terms(struct eng_merge *m, struct eng_segw *w)
{
    struct merge_in *ti = calloc(m->k, sizeof *ti), *rti = calloc(m->k, sizeof *rti);
    bool *has = calloc(m->k, sizeof *has), *rhas = calloc(m->k, sizeof *rhas);
    uint32_t *head = calloc(m->k, sizeof *head), *live = calloc(m->k, sizeof *live);
    struct eng_cursor *cur = calloc(m->k, sizeof *cur);
    uint32_t(*pos)[ENG_POS_MAX] = malloc(ENG_FIELDS * sizeof *pos);
    int rc = ERR_NOMEM;
    uint64_t nterm = 0;

    if (!ti || !rti || !has || !rhas || !head || !live || !cur || !pos)
        goto out;
    rc = 0;
    for (size_t i = 0; i < m->k && rc == 0; i++)
        rc = merge_term_next(m, ti, i, true);
    while (rc == 0) {
        size_t lo = m->k;
        for (size_t i = 0; i < m->k; i++) {
            if (ti[i].more &&
                (lo == m->k || term_cmp(m->in[i], &ti[i].t, m->in[lo], &ti[lo].t) < 0))
                lo = i;
        }
        if (lo == m->k)
            break;
        for (size_t i = 0; i < m->k; i++)
            has[i] = ti[i].more && term_cmp(m->in[i], &ti[i].t, m->in[lo], &ti[lo].t) == 0;
        const struct eng_term *t0 = &ti[lo].t; /* as every holder has it */
        const char *str = m->in[lo]->strs + t0->str;
        unsigned kind;
        if (merged_kind(m, w, has, ti, t0, str, t0->len, &kind))
            rc =
                eng_kind(kind) == ENG_TERM_EXACT
                    ? merge_word(m, w, has, ti, str, t0->len, kind, cur, head, pos, rhas, rti, live)
                    : merge_term(m, w, has, ti, str, t0->len, kind, cur, head, pos);
        for (size_t i = 0; i < m->k; i++) {
            if (rc == 0 && has[i])
                rc = merge_term_next(m, ti, i, false);
        }
        if ((++nterm & 1023) == 0 && eng_merge_stopped(m))
            rc = ERR_BUSY;
    }
out:
    free(ti);
    free(rti);
    free(has);
    free(rhas);
    free(head);
    free(live);
    free(cur);
    free(pos);
    return rc;
}
