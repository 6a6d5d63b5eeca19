/* A segment's term dictionary: blocks of varint entries (tdict.h). */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/sort.h"
#include "util/banned.h"

/* --- writing ----------------------------------------------------------- */

/* Where the postings of a term of df documents begin after post. */
static uint64_t term_off(uint64_t post, uint32_t df)
{
    return eng_tdict_off(post, df > ENG_BLOCK);
}

int eng_tdict_add(struct eng_tdict_w *w, const struct eng_term *t)
{
    uint8_t e[7 * 5 + 1];
    size_t n = 0;

    if (t->str != w->str || t->off != term_off(w->post, t->df) || t->len == 0)
        return ERR_INVALID;
    if (!(t->kind & ENG_TERM_TIERED) != (t->tier_bytes == 0))
        return ERR_INVALID;
    if (w->n > UINT32_MAX - sizeof e || t->off + t->bytes + t->tier_bytes >= ENG_TDICT_POST_MAX)
        return ERR_TOO_LARGE;
    if (w->nterms % ENG_TDICT_BLOCK == 0) {
        size_t b = w->nterms / ENG_TDICT_BLOCK;
        if (eng_grow((void **)&w->idx, &w->icap, b + 1, sizeof *w->idx) < 0)
            return ERR_NOMEM;
        w->idx[b] = (struct eng_tblock){w->post << 24 | t->len, w->str, (uint32_t)w->n};
    }
    n += eng_varint_put(e + n, t->len);
    e[n++] = (uint8_t)t->kind;
    n += eng_varint_put(e + n, t->df);
    n += eng_varint_put(e + n, t->docs_len);
    n += eng_varint_put(e + n, t->bytes);
    if (t->kind & ENG_TERM_TIERED)
        n += eng_varint_put(e + n, t->tier_bytes);
    if (eng_term_nblocks(t) == 1) {
        n += eng_varint_put(e + n, t->wf2_max);
        n += eng_varint_put(e + n, t->dl_min);
    }
    if (eng_grow((void **)&w->p, &w->cap, w->n + n, 1) < 0)
        return ERR_NOMEM;
    memcpy(w->p + w->n, e, n);
    w->n += n;
    w->nterms++;
    w->post = t->off + t->bytes + t->tier_bytes;
    w->str += t->len;
    return 0;
}

void eng_tdict_give(struct eng_tdict_w *w, struct eng_segment *s)
{
    s->tidx = w->idx; /* (NULL for no terms: nothing reads it) */
    s->tdict = w->p;
    s->tdict_len = w->n;
    s->nterms = w->nterms;
    *w = (struct eng_tdict_w){0};
}

void eng_tdict_w_free(struct eng_tdict_w *w)
{
    free(w->idx);
    free(w->p);
    *w = (struct eng_tdict_w){0};
}

void eng_tdict_view(const struct eng_tdict_w *w, const char *strs, size_t strs_len,
                    uint64_t post_len, struct eng_segment *view)
{
    memset(view, 0, sizeof *view);
    view->tidx = w->idx;
    view->tdict = w->p;
    view->tdict_len = w->n;
    view->nterms = w->nterms;
    view->strs = (char *)(uintptr_t)strs;
    view->strs_len = strs_len;
    view->post_len = post_len;
}

/* --- reading ----------------------------------------------------------- */

/* The entry at *p (inside [*p, end)) of the term whose string begins at
 * *str and postings at *post, as term i, into *t; past it. False when it
 * runs out or names bytes outside the segment. */
static bool entry_read(const struct eng_segment *s, const uint8_t **p, const uint8_t *end,
                       uint64_t *post, uint32_t *str, size_t i, struct eng_term *t)
{
    const uint8_t *q = *p;
    uint32_t len, df, docs_len, bytes, tier_bytes = 0, wf2_max = 0, dl_min = 0;
    unsigned kind;

    if ((q = eng_varint_in(q, end, &len)) == NULL || q >= end)
        return false;
    kind = *q++;
    if ((q = eng_varint_in(q, end, &df)) == NULL ||
        (q = eng_varint_in(q, end, &docs_len)) == NULL ||
        (q = eng_varint_in(q, end, &bytes)) == NULL)
        return false;
    if ((kind & ENG_TERM_TIERED) &&
        ((q = eng_varint_in(q, end, &tier_bytes)) == NULL || tier_bytes == 0))
        return false;
    if (df > 0 && df <= ENG_BLOCK &&
        ((q = eng_varint_in(q, end, &wf2_max)) == NULL ||
         (q = eng_varint_in(q, end, &dl_min)) == NULL))
        return false;
    uint64_t off = term_off(*post, df);
    if (len == 0 || len > ENG_TERM_LEN_MAX || (uint64_t)*str + len > s->strs_len ||
        off > s->post_len || bytes > s->post_len - off || tier_bytes > s->post_len - off - bytes)
        return false;
    *t = (struct eng_term){.off = off,
                           .str = *str,
                           .len = len,
                           .kind = kind,
                           .df = df,
                           .docs_len = docs_len,
                           .bytes = bytes,
                           .idx = (uint32_t)i,
                           .wf2_max = wf2_max,
                           .dl_min = dl_min,
                           .tier_bytes = tier_bytes};
    *post = off + bytes + tier_bytes;
    *str += len;
    *p = q;
    return true;
}

/* Block b's entries [*p, *end); false when its index entry is out of
 * bounds. */
static bool block_bytes(const struct eng_segment *s, size_t b, const uint8_t **p,
                        const uint8_t **end)
{
    size_t nb = eng_tdict_blocks(s->nterms);
    uint64_t at = s->tidx[b].at, to = b + 1 < nb ? s->tidx[b + 1].at : s->tdict_len;
    if (at > to || to > s->tdict_len)
        return false;
    *p = s->tdict + at;
    *end = s->tdict + to;
    return true;
}

bool eng_term_iter_at(struct eng_term_iter *it, const struct eng_segment *s, size_t i,
                      struct eng_term *t)
{
    size_t b = i / ENG_TDICT_BLOCK;
    it->s = s;
    it->t = t;
    it->i = s->nterms;
    if (i >= s->nterms)
        return false;
    if (!block_bytes(s, b, &it->p, &it->end)) {
        eng_segment_damage(s, "the term dictionary's block index is out of bounds");
        return false;
    }
    it->post = eng_tblock_post(&s->tidx[b]);
    it->str = s->tidx[b].str;
    for (size_t k = b * ENG_TDICT_BLOCK;; k++) {
        const uint8_t *at = it->p;
        if (!entry_read(s, &it->p, it->end, &it->post, &it->str, k, t)) {
            eng_segment_damage(s, "a term dictionary entry is out of bounds");
            return false;
        }
        if (k == i) {
            it->i = i;
            it->entry_bytes = (size_t)(it->p - at);
            return true;
        }
    }
}

bool eng_term_iter_next(struct eng_term_iter *it)
{
    const struct eng_segment *s = it->s;
    size_t i = it->i + 1;
    if (it->i >= s->nterms || i >= s->nterms) {
        it->i = s->nterms;
        return false;
    }
    if (i % ENG_TDICT_BLOCK == 0) /* the index says where: the check compares */
        return eng_term_iter_at(it, s, i, it->t);
    const uint8_t *at = it->p;
    if (!entry_read(s, &it->p, it->end, &it->post, &it->str, i, it->t)) {
        eng_segment_damage(s, "a term dictionary entry is out of bounds");
        it->i = s->nterms;
        return false;
    }
    it->i = i;
    it->entry_bytes = (size_t)(it->p - at);
    return true;
}

bool eng_tdict_at(const struct eng_segment *s, size_t i, struct eng_term *out)
{
    struct eng_term_iter it;
    return eng_term_iter_at(&it, s, i, out);
}

size_t eng_tdict_lower(const struct eng_segment *s, const char *t, size_t len, struct eng_term *out)
{
    size_t nb = eng_tdict_blocks(s->nterms);
    /* The last block whose first term is <= t. Not sort_lower_bound: each
     * probe is checked against the strings' bounds before its string is
     * read, a damaged file stops the search (check-helpers: probe checked). */
    size_t lo = 0, hi = nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct eng_tblock *k = &s->tidx[mid];
        uint32_t flen = (uint32_t)(k->post_len & ENG_TERM_LEN_MAX);
        if ((uint64_t)k->str + flen > s->strs_len) {
            eng_segment_damage(s, "the term dictionary's block index is out of bounds");
            return s->nterms;
        }
        if (sort_order_bytes(s->strs + k->str, flen, t, len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The walk from that block's first term (before the first term: the
     * first) to the next block's, which the index says is past t: a walk
     * past it would be an index at odds with its entries. */
    struct eng_term_iter it;
    size_t i = lo == 0 ? 0 : (lo - 1) * ENG_TDICT_BLOCK, next = lo * ENG_TDICT_BLOCK;
    for (bool more = eng_term_iter_at(&it, s, i, out); more; more = eng_term_iter_next(&it)) {
        if (sort_order_bytes(s->strs + out->str, out->len, t, len) >= 0)
            return i;
        if (i == next) {
            eng_segment_damage(s, "the term dictionary's block index disagrees with its entries");
            break;
        }
        if (++i >= s->nterms)
            break;
    }
    return s->nterms; /* past the last term, or damaged */
}

bool eng_tdict_is(const struct eng_segment *s, const struct eng_term *t, const char *str,
                  size_t len)
{
    return t->len == len && memcmp(s->strs + t->str, str, len) == 0;
}

size_t eng_tdict_find(const struct eng_segment *s, const char *t, size_t len, struct eng_term *out)
{
    size_t i = eng_tdict_lower(s, t, len, out);
    return i < s->nterms && eng_tdict_is(s, out, t, len) ? i : s->nterms;
}

const char *eng_tdict_check(const struct eng_segment *s)
{
    size_t nb = eng_tdict_blocks(s->nterms);
    uint64_t post = 0, at = 0;
    uint32_t str = 0;
    struct eng_term t, prev = {0};

    for (size_t b = 0; b < nb; b++) {
        const struct eng_tblock *k = &s->tidx[b];
        if (eng_tblock_post(k) != post || k->str != str || k->at != at)
            return "the term dictionary's block index disagrees with its entries";
        const uint8_t *p, *end;
        if (!block_bytes(s, b, &p, &end))
            return "the term dictionary's block index is out of bounds";
        for (size_t i = b * ENG_TDICT_BLOCK; i < s->nterms && i < (b + 1) * ENG_TDICT_BLOCK; i++) {
            if (!entry_read(s, &p, end, &post, &str, i, &t))
                return "a term dictionary entry is out of bounds";
            if (i == b * ENG_TDICT_BLOCK && (k->post_len & ENG_TERM_LEN_MAX) != t.len)
                return "the term dictionary's block index disagrees with its entries";
            if (i > 0 &&
                sort_order_bytes(s->strs + prev.str, prev.len, s->strs + t.str, t.len) >= 0)
                return "the dictionary is not sorted";
            prev = t;
        }
        if (p != end)
            return "a term dictionary block has trailing bytes";
        at = (uint64_t)(end - s->tdict);
    }
    if (at != s->tdict_len || str != s->strs_len)
        return "the term dictionary disagrees with its parts' lengths";
    return NULL;
}
