/* Facets (index_facets, index.h) over a snapshot: per segment, a column
 * per facet holding each docid's value as a small integer (a number of
 * the segment's own string table), so that a match costs one array read
 * and one increment per facet; the segments' counts are then merged by
 * value (index_facet_acc).
 *
 * The columns are not in the segment files: they are derived from what a
 * segment already holds, the first time a search asks for that facet of
 * that segment, and kept in memory with the segment (docs/engine.md
 * "Facets"). Source, domain, language, country and category come from the
 * meta terms (store/meta.h): each value's term is walked once and its
 * docids marked (a domain's suffix terms are walked too: a document keeps
 * its longest, which is its own domain). The author, which no term holds,
 * comes from each document's JSON in the document store. */
#include "index/engine/internal.h"
#include "index/engine/columns.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "article/json_author.h"
#include "store/meta.h"
#include "util/ascii.h"
#include "util/strtab.h"
#include "util/banned.h"

#define NO_VALUE ENG_FACET_NO_VALUE

/* Columns are built one at a time, whoever asks: a build reads a whole
 * segment, and two searches asking for the same one wait for one build. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static const char meta_kind[INDEX_FACET_N] = {STORE_META_SOURCE,  STORE_META_DOMAIN,
                                              STORE_META_LANGUAGE, STORE_META_COUNTRY,
                                              STORE_META_CATEGORY, 0};

/* A meta term's value back from store_meta_term's spelling: hex for
 * source and domain, "_"+hex for a language, country or category that is
 * not one plain word, else the word. false when it is neither. */
static bool meta_value(char kind, const char *t, size_t len, struct buf *out)
{
    bool hex = kind == STORE_META_SOURCE || kind == STORE_META_DOMAIN;
    if (!hex && len > 0 && t[0] == '_') {
        hex = true;
        t++;
        len--;
    }
    if (!hex) {
        buf_append(out, t, len);
        return true;
    }
    if (len % 2)
        return false;
    for (size_t i = 0; i < len; i += 2) {
        int hi = ascii_hex_value(t[i]), lo = ascii_hex_value(t[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        buf_putc(out, (char)(hi * 16 + lo));
    }
    return true;
}

/* A column from the meta terms of kind. */
static int build_meta(const struct eng_segment *s, char kind, struct eng_facet_col *c)
{
    const char prefix[2] = {ENG_META_MARK, kind};
    struct buf val;
    struct eng_cursor *cur = malloc(sizeof *cur);
    int rc = 0;
    if (cur == NULL)
        return ERR_NOMEM;
    buf_init(&val, 0);
    /* a damaged dictionary (the search says so and flags the segment)
     * fails the column rather than leaving it empty */
    size_t first = eng_segment_term_lower(s, prefix, 2);
    if (eng_segment_damaged(s))
        rc = ERR_PARSE;
    for (size_t i = first; rc == 0 && i < s->nterms; i++) {
        const struct eng_term *t = &s->terms[i];
        if ((uint64_t)t->str + t->len > s->strs_len) { /* as eng_segment_term checks */
            rc = ERR_PARSE;
            break;
        }
        const char *str = s->strs + t->str;
        if (t->len < 2 || memcmp(str, prefix, 2))
            break;
        size_t num;
        int added;
        val.len = 0;
        if (!meta_value(kind, str + 2, t->len - 2, &val) || val.len == 0)
            continue; /* not a value newsd writes: no facet value */
        if (buf_error(&val)) {
            rc = ERR_NOMEM;
            break;
        }
        if ((rc = eng_segment_term_ready(s, t)) < 0 ||
            (rc = strtab_add(&c->vals, val.data, val.len, &num, &added)) < 0)
            break;
        eng_cursor_init(cur, s, t);
        for (uint32_t d = eng_cursor_seek(cur, 0); d < s->n; d = eng_cursor_seek(cur, d + 1)) {
            /* a domain's suffixes are terms too: keep the longest */
            if (c->v[d] == NO_VALUE || strtab_len(&c->vals, c->v[d]) < val.len)
                c->v[d] = (uint32_t)num;
        }
    }
    buf_release(&val);
    free(cur);
    return rc;
}

/* The author column from the document store. */
static int build_author(const struct eng_segment *s, struct eng_docs_pool *pool,
                        struct eng_facet_col *c)
{
    void *dctx = eng_docs_pool_get(pool);
    struct buf val;
    char *json = NULL;
    size_t cap = 0;
    int rc = 0;
    if (dctx == NULL)
        return ERR_NOMEM;
    buf_init(&val, 0);
    for (uint32_t d = 0; d < s->n && rc == 0; d++) {
        size_t size, num;
        int added;
        if ((rc = eng_docs_size(s, d, &size)) < 0)
            break;
        if (size > cap) {
            char *grown = realloc(json, size);
            if (grown == NULL) {
                rc = ERR_NOMEM;
                break;
            }
            json = grown;
            cap = size;
        }
        if ((rc = eng_docs_read(s, dctx, d, json, size)) < 0)
            break;
        val.len = 0;
        /* A document that decoded (its zstd checksum held) is the JSON
         * article_json wrote; should its author not read back, the
         * document has none here rather than the segment being damaged. */
        int got = article_json_author(json, size, &val);
        if (buf_error(&val)) {
            rc = ERR_NOMEM;
            break;
        }
        if (got == 1) {
            if ((rc = strtab_add(&c->vals, val.data, val.len, &num, &added)) < 0)
                break;
            c->v[d] = (uint32_t)num;
        }
    }
    free(json);
    buf_release(&val);
    eng_docs_pool_put(pool, dctx);
    return rc;
}

/* Facet f's column of s, built when it is not yet. */
static int column(struct eng_segment *s, struct eng_docs_pool *pool, enum index_facet f,
                  const struct eng_facet_col **out)
{
    struct eng_facet_cols *cols = atomic_load(&s->facets);
    struct eng_facet_col *c = cols ? atomic_load(&cols->col[f]) : NULL;
    int rc = 0;
    if (c) {
        *out = c;
        return 0;
    }
    pthread_mutex_lock(&build_lock);
    if ((cols = atomic_load(&s->facets)) == NULL) {
        if ((cols = calloc(1, sizeof *cols)) == NULL) {
            rc = ERR_NOMEM;
            goto out;
        }
        atomic_store(&s->facets, cols);
    }
    if ((c = atomic_load(&cols->col[f])) != NULL)
        goto out;
    if ((c = calloc(1, sizeof *c)) == NULL || (c->v = malloc((s->n ? s->n : 1) * sizeof *c->v)) == NULL) {
        eng_facet_col_free(c);
        c = NULL;
        rc = ERR_NOMEM;
        goto out;
    }
    strtab_init(&c->vals);
    memset(c->v, 0xff, s->n * sizeof *c->v); /* NO_VALUE */
    rc = f == INDEX_FACET_AUTHOR ? build_author(s, pool, c) : build_meta(s, meta_kind[f], c);
    if (rc < 0) {
        eng_facet_col_free(c);
        c = NULL;
        goto out;
    }
    atomic_store(&cols->col[f], c);
out:
    pthread_mutex_unlock(&build_lock);
    *out = c;
    return rc;
}

/* A segment's matches are gathered first, then each facet's column is read
 * at them with the reads issued ahead (prefetch): the matches of a common
 * word are scattered over the segment, and reading five columns per match
 * as it comes was a cache miss per column per match (8.7 ms for five
 * facets over 33,000 matches at 1 M documents). */
#define PREFETCH_AHEAD 16

struct facets_run {
    const struct eng_facet_col **col; /* [segment * INDEX_FACET_N + f]; NULL: not asked */
    uint64_t **cnt;                   /* the same, counts per value number */
    uint32_t si;                      /* the segment docs are of */
    uint32_t *docs;                   /* its matches so far, ascending */
    size_t n, cap;
    bool nomem;
};

static void facets_flush(struct facets_run *r)
{
    for (int f = 0; r->n > 0 && f < INDEX_FACET_N; f++) {
        size_t k = (size_t)r->si * INDEX_FACET_N + (size_t)f;
        if (r->col[k] == NULL)
            continue;
        const uint32_t *v = r->col[k]->v;
        uint64_t *cnt = r->cnt[k];
        for (size_t i = 0; i < r->n; i++) {
            if (i + PREFETCH_AHEAD < r->n)
                __builtin_prefetch(&v[r->docs[i + PREFETCH_AHEAD]]);
            uint32_t x = v[r->docs[i]];
            if (x != NO_VALUE)
                cnt[x]++;
        }
    }
    r->n = 0;
}

static void facet_doc(void *ctx, uint32_t si, uint32_t doc)
{
    struct facets_run *r = ctx;
    if (si != r->si) {
        facets_flush(r);
        r->si = si;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4096;
        uint32_t *grown = realloc(r->docs, cap * sizeof *grown);
        if (grown == NULL) {
            r->nomem = true;
            return;
        }
        r->docs = grown;
        r->cap = cap;
    }
    r->docs[r->n++] = doc;
}

/* Facet f's top size over the segments' counts. Each segment numbers its
 * values on its own, so a value's counts are summed under its number in one
 * table of strings, hashed once a (segment, value): summing by sorting every
 * segment's pairs by their bytes was two fifths of five facets over a
 * common word at 10 M articles in 15 segments (memcmp and qsort in the
 * profile). The segments' strings are lent: the snapshot holds them until
 * the top is copied out. */
static int facet_top(const struct eng_snap *s, const struct facets_run *r, struct arena *a, int f,
                     size_t size, struct index_facet_top *out)
{
    struct strtab seen;
    struct index_facet_acc acc = {0}; /* acc.v[i]: the value numbered i in seen */
    int rc = 0;

    strtab_init(&seen);
    for (size_t si = 0; rc == 0 && si < s->nseg; si++) {
        size_t k = si * INDEX_FACET_N + (size_t)f;
        const struct strtab *vals = &r->col[k]->vals;
        for (size_t i = 0; rc == 0 && i < vals->n; i++) {
            size_t num;
            int added;
            if (r->cnt[k][i] == 0)
                continue;
            const char *v = strtab_str(vals, i);
            size_t len = strtab_len(vals, i);
            if ((rc = strtab_add(&seen, v, len, &num, &added)) < 0)
                break;
            if (added)
                rc = index_facet_acc_add(&acc, a, v, len, r->cnt[k][i]);
            else
                acc.v[num].count += r->cnt[k][i];
        }
    }
    strtab_release(&seen);
    return rc < 0 ? rc : index_facet_acc_top(&acc, a, size, out);
}

int eng_facets_run(const struct eng_snap *s, struct eng_docs_pool *dctxs, struct arena *a,
                   const struct index_request *req, unsigned mask, size_t size,
                   struct index_facet_top *out, struct err *err)
{
    struct facets_run r = {.si = 0};
    struct eng_visit v = {.doc = facet_doc, .term = NULL, .ctx = &r};
    size_t slots = s->nseg * INDEX_FACET_N;
    uint64_t total;
    int rc;

    r.col = arena_calloc(a, slots ? slots : 1, sizeof *r.col);
    r.cnt = arena_calloc(a, slots ? slots : 1, sizeof *r.cnt);
    if (r.col == NULL || r.cnt == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for facets");
    for (size_t si = 0; si < s->nseg; si++) {
        for (int f = 0; f < INDEX_FACET_N; f++) {
            size_t k = si * INDEX_FACET_N + (size_t)f;
            if (!(mask >> f & 1))
                continue;
            if ((rc = column(s->segs[si], dctxs, (enum index_facet)f, &r.col[k])) < 0) {
                if (rc == ERR_PARSE)
                    eng_segment_damage(s->segs[si], "a facet column could not be read");
                return err_set(err, rc == ERR_NOMEM ? ERR_NOMEM : ERR_STORE,
                               "facet column of a segment: %s", err_name(rc));
            }
            size_t nv = r.col[k]->vals.n;
            if ((r.cnt[k] = arena_calloc(a, nv ? nv : 1, sizeof **r.cnt)) == NULL)
                return err_set(err, ERR_NOMEM, "out of memory for facets");
        }
    }
    rc = eng_search_visit(s, a, req, &v, &total, err);
    if (rc == 0)
        facets_flush(&r);
    free(r.docs);
    if (rc < 0)
        return rc;
    if (r.nomem)
        return err_set(err, ERR_NOMEM, "out of memory for facets");
    for (int f = 0; f < INDEX_FACET_N; f++) {
        if ((mask >> f & 1) && facet_top(s, &r, a, f, size, &out[f]) < 0)
            return err_set(err, ERR_NOMEM, "out of memory for facets");
    }
    return 0;
}
