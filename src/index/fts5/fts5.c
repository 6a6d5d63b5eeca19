/* The FTS5 index (index/backend.h): searches the full-text side of the
 * journal's SQLite file (store/journal.h: the embedded store's file or a
 * node's replica) through read-only connections. This file and match.c
 * say what to search; the journal runs the SQL (store_reader_match_*), so
 * no SQLite handle crosses into src/index/. One search is one read
 * transaction (count, page of ids, page rows) so the total and the page
 * agree even while an import commits. Newest-first and oldest-first read
 * FTS5 in rowid order, which is time order (ids are time-ordered), so they
 * sort nothing; a date window is a rowid range. */
#include "index/fts5/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "article/json.h"
#include "store/journal.h"
#include "util/array.h"
#include "util/sort.h"
#include "util/banned.h"

struct index_fts5 {
    struct index_backend base; /* first: the vtable */
    struct store_readers *readers;
    char *path; /* the journal's file */
};

static enum store_match_order match_order(enum index_sort sort)
{
    switch (sort) {
    case INDEX_SORT_PUBLISHED_ASC:
        return STORE_MATCH_OLDEST;
    case INDEX_SORT_RELEVANCY:
        return STORE_MATCH_RELEVANCE;
    case INDEX_SORT_POPULARITY:
        return STORE_MATCH_POPULARITY;
    case INDEX_SORT_PUBLISHED_DESC:
    default:
        return STORE_MATCH_NEWEST;
    }
}

/* The article's JSON (article/json.h) into the arena. */
static int render_doc(struct arena *a, const struct article *art, struct index_doc *out,
                      struct err *err)
{
    struct buf b;
    buf_init(&b, 0);
    article_json(&b, art);
    char *json = b.err ? NULL : arena_alloc(a, b.len ? b.len : 1);
    if (json)
        memcpy(json, b.data, b.len);
    out->id = art->id;
    out->json = json;
    out->len = b.len;
    buf_release(&b);
    return json ? 0 : err_set(err, ERR_NOMEM, "out of memory for a page of results");
}

/* A cursor page of a ranked order (index_request.walk): its ids after
 * the cursor's place, their keys, and relevancy's statistics. */
static int ranked_ids(struct store_reader *r, struct arena *a, const struct index_request *req,
                      const struct store_match *m, size_t want, int64_t *ids, size_t *n,
                      struct index_result *out, struct err *err)
{
    _Static_assert(STORE_MATCH_PHRASES_MAX == INDEX_RANK_LEAVES_MAX, "one bound for both");
    struct store_match_stats frozen, used;
    struct store_match_ranked rk = {
        .after = req->after, .key = req->after_key, .id = req->after_id};
    if (req->stats) {
        frozen.nrow = req->stats->nrow;
        frozen.ntoken = req->stats->ntoken;
        frozen.nphrases = req->stats->nleaves;
        memcpy(frozen.hits, req->stats->hits, sizeof frozen.hits);
        rk.stats = &frozen;
    }
    out->keys = arena_calloc(a, want ? want : 1, sizeof *out->keys);
    if (out->keys == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    int rc = store_reader_match_ranked(r, m, match_order(req->sort), &rk, want, ids, out->keys, n,
                                       &used, err);
    if (rc < 0)
        return rc;
    out->stats.nrow = used.nrow;
    out->stats.ntoken = used.ntoken;
    out->stats.nleaves = used.nphrases;
    memcpy(out->stats.hits, used.hits, sizeof out->stats.hits);
    return 0;
}

/* Count, page of ids and their rows, on r inside one read transaction. */
static int search_run(struct store_reader *r, struct arena *a, const struct index_request *req,
                      const struct store_match *m, struct index_result *out, struct err *err)
{
    int64_t *ids = NULL, total = 0;
    size_t want, n = 0;
    int rc;

    if (req->no_total) { /* the page alone: at most limit ids after offset */
        if (req->limit == 0)
            return 0;
        want = req->limit;
    } else {
        if ((rc = store_reader_match_count(r, m, &total, err)) < 0)
            return rc;
        out->total = (uint64_t)total;
        if (req->limit == 0 || out->total <= (uint64_t)req->offset)
            return 0;
        want =
            out->total - req->offset < req->limit ? (size_t)(out->total - req->offset) : req->limit;
    }
    ids = arena_calloc(a, want, sizeof *ids);
    if (ids == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if (req->walk) /* the offset is 0: the cursor says where the page starts */
        rc = ranked_ids(r, a, req, m, want, ids, &n, out, err);
    else
        rc = store_reader_match_ids(r, m, match_order(req->sort), req->offset, want, ids, &n, err);
    if (rc < 0)
        return rc;
    if (req->no_total)
        out->total = req->offset + n; /* what was looked at (index_request.no_total) */

    out->docs = arena_calloc(a, n ? n : 1, sizeof *out->docs);
    if (req->ids_only) {
        if (out->docs == NULL)
            return err_set(err, ERR_NOMEM, "out of memory for a page of results");
        for (size_t i = 0; i < n; i++)
            out->docs[i].id = ids[i];
        out->n = n;
        return 0;
    }
    struct article *arts = arena_calloc(a, n ? n : 1, sizeof *arts);
    if (arts == NULL || out->docs == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if ((rc = store_reader_articles(r, a, ids, n, arts, err)) < 0)
        return rc;
    /* Each row as the API writes it; slots whose row vanished are dropped
     * (cannot happen within one snapshot). */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (arts[i].id != ids[i])
            continue;
        if (out->keys)
            out->keys[kept] = out->keys[i];
        if ((rc = render_doc(a, &arts[i], &out->docs[kept++], err)) < 0)
            return rc;
    }
    out->n = kept;
    return 0;
}

/* The journal's match for req: its MATCH expression built into *match
 * (always initialised, for the caller to release), its id window and
 * deadline (the journal stops a search that overruns it) in *m, and a
 * pooled reader in *r for the caller to put back. 1 when there is
 * something to read, 0 for an empty window (no reader taken), or an error. */
static int match_open(struct index_fts5 *x, struct arena *a, const struct index_request *req,
                      struct buf *match, struct store_match *m, struct store_reader **r,
                      struct err *err)
{
    int rc;

    buf_init(match, INDEX_FTS5_MATCH_MAX);
    *m = (struct store_match){
        .id_lo = store_id_lo(req->from),
        .id_hi = index_request_id_hi(req),
        .deadline_ms = req->deadline_ms,
    };
    if ((rc = index_fts5_match_build(match, a, req, err)) < 0)
        return rc;
    if (req->from > req->to || m->id_lo > m->id_hi)
        return 0; /* an empty window: nothing matches */
    m->expr = match->data;
    if ((rc = store_readers_get(x->readers, r, err)) < 0)
        return rc;
    return 1;
}

static int fts5_search(struct index_backend *b, struct arena *a, const struct index_request *req,
                       struct index_result *out, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct buf match;
    struct store_reader *r = NULL;
    struct store_match m;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = match_open(x, a, req, &match, &m, &r, err)) <= 0)
        goto out;
    if ((rc = store_reader_begin(r, err)) < 0)
        goto out;
    rc = search_run(r, a, req, &m, out, err);
    if (rc == 0)
        rc = store_reader_end(r, err);
out:
    if (rc < 0) {
        out->n = 0;
        out->docs = NULL;
        out->total = 0;
    }
    store_readers_put(x->readers, r); /* rolls back an open transaction */
    buf_release(&match);
    return rc;
}

/* --- index_counts, index_facets: GROUP BY over the same matches ---------- */

/* What one aggregate reads: counts per bucket, or one facet's values. */
struct agg {
    const int64_t *bounds;
    size_t nbuckets;
    uint64_t *counts;
    unsigned mask;
    size_t size;
    struct index_facet_top *top;
};

/* index.h's facets are the journal's countable columns, in one order. */
static const enum store_match_column facet_column[INDEX_FACET_N] = {
    [INDEX_FACET_SOURCE] = STORE_MATCH_SOURCE,     [INDEX_FACET_DOMAIN] = STORE_MATCH_DOMAIN,
    [INDEX_FACET_LANGUAGE] = STORE_MATCH_LANGUAGE, [INDEX_FACET_COUNTRY] = STORE_MATCH_COUNTRY,
    [INDEX_FACET_CATEGORY] = STORE_MATCH_CATEGORY, [INDEX_FACET_AUTHOR] = STORE_MATCH_AUTHOR,
};

/* A bucket bound against a second: "before" while the bucket starts at or
 * before it, so the lower bound is the first bucket starting after it. */
static int bound_starts_by(const void *bound, const void *t)
{
    return *(const int64_t *)bound <= *(const int64_t *)t ? -1 : 1;
}

/* One second's matches into the bucket that holds it: the last bucket
 * starting at or before t (bounds[0] <= t, so there is one). */
static int agg_second(void *ctx, int64_t t, uint64_t n)
{
    const struct agg *g = ctx;
    if (t < g->bounds[0] || t >= g->bounds[g->nbuckets])
        return 0;
    size_t after = sort_lower_bound(g->bounds, g->nbuckets, sizeof *g->bounds, &t, bound_starts_by);
    g->counts[after - 1] += n;
    return 0;
}

/* One facet value's count, copied (the journal's text lasts one call). */
struct agg_value {
    struct index_facet_acc *acc;
    struct arena *a;
    struct err *err;
};

static int agg_value(void *ctx, const char *v, size_t len, uint64_t n)
{
    struct agg_value *x = ctx;
    const char *copy = arena_strndup(x->a, v, len);
    if (copy == NULL || index_facet_acc_add(x->acc, x->a, copy, len, n) < 0)
        return err_set(x->err, ERR_NOMEM, "out of memory for facets");
    return 0;
}

static int agg_facets(struct store_reader *r, struct arena *a, const struct store_match *m,
                      const struct agg *g, struct err *err)
{
    for (int f = 0; f < INDEX_FACET_N; f++) {
        struct index_facet_acc acc = {0};
        struct agg_value x = {&acc, a, err};
        int rc;
        if (!(g->mask >> f & 1))
            continue;
        if ((rc = store_reader_match_values(r, m, facet_column[f], agg_value, &x, err)) < 0)
            return rc;
        if (index_facet_acc_top(&acc, a, g->size, &g->top[f]) < 0)
            return err_set(err, ERR_NOMEM, "out of memory for facets");
    }
    return 0;
}

/* One aggregate in one read transaction, within the request's budget. */
static int fts5_aggregate(struct index_backend *b, struct arena *a, const struct index_request *req,
                          const struct agg *g, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct buf match;
    struct store_reader *r = NULL;
    struct store_match m;
    int rc;

    if ((rc = match_open(x, a, req, &match, &m, &r, err)) <= 0)
        goto out;
    if ((rc = store_reader_begin(r, err)) < 0)
        goto out;
    rc = g->counts ? store_reader_match_per_second(r, &m, agg_second, (void *)g, err)
                   : agg_facets(r, a, &m, g, err);
    if (rc == 0)
        rc = store_reader_end(r, err);
out:
    store_readers_put(x->readers, r);
    buf_release(&match);
    return rc;
}

static int fts5_counts(struct index_backend *b, struct arena *a, const struct index_request *req,
                       const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err)
{
    struct agg g = {.bounds = bounds, .nbuckets = nbuckets, .counts = counts};
    return nbuckets ? fts5_aggregate(b, a, req, &g, err) : 0;
}

static int fts5_facets(struct index_backend *b, struct arena *a, const struct index_request *req,
                       unsigned mask, size_t size, struct index_facet_top *out, struct err *err)
{
    struct agg g = {.mask = mask, .size = size, .top = out};
    return fts5_aggregate(b, a, req, &g, err);
}

/* --- index_story_matches, index_story_members, index_term_docs (issue 25) -- */

/* The matches' ids and stories, grown as they come. */
struct story_acc {
    struct index_story_match *m;
    size_t n, cap;
};

static int story_acc_add(void *ctx, int64_t id, int64_t story)
{
    struct story_acc *x = ctx;
    if (array_reserve(&x->m, &x->cap, x->n, 1, sizeof *x->m) < 0)
        return ERR_NOMEM;
    x->m[x->n++] = (struct index_story_match){id, story};
    return 0;
}

/* Every match in out->m (keep unused): SQL does not know which stories
 * are alone. */
static int fts5_story_matches(struct index_backend *b, struct arena *a,
                              const struct index_request *req, size_t keep,
                              struct index_story_matches *out, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct buf match;
    struct store_reader *r = NULL;
    struct store_match m;
    struct story_acc acc = {0};
    int rc;

    (void)keep;
    memset(out, 0, sizeof *out);
    if ((rc = match_open(x, a, req, &match, &m, &r, err)) <= 0)
        goto out;
    rc = store_reader_match_stories(r, &m, story_acc_add, &acc, err);
    if (rc == ERR_NOMEM)
        rc = err_set(err, ERR_NOMEM, "out of memory for stories");
    if (rc == 0 && acc.n > 0) {
        if ((out->m = arena_alloc(a, acc.n * sizeof *out->m)) == NULL)
            rc = err_set(err, ERR_NOMEM, "out of memory for stories");
        else {
            memcpy(out->m, acc.m, acc.n * sizeof *out->m);
            out->n = acc.n;
        }
    }
out:
    store_readers_put(x->readers, r);
    buf_release(&match);
    free(acc.m);
    return rc;
}

/* index_story_members: by the index on articles.story_id that the FTS5
 * mode keeps (store_journal_fulltext_ensure), not a scan: no budget is
 * needed for an index range. */
static int fts5_story_members(struct index_backend *b, struct arena *a, int64_t story, int64_t lo,
                              int64_t hi, int64_t deadline_ms, int64_t **out, size_t *n,
                              struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int rc;

    (void)deadline_ms;
    *out = NULL;
    *n = 0;
    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        return rc;
    rc = store_reader_story_members(r, a, story, lo, hi, out, n, err);
    store_readers_put(x->readers, r);
    return rc;
}

/* index_term_docs: FTS5's own statistics, and the documents: the
 * journal's head, the articles ever stored, an upper bound read from an
 * index (a count(*) reads the whole table). */
static int fts5_term_docs(struct index_backend *b, const char *const *terms, const size_t *lens,
                          size_t n, uint64_t *df, uint64_t *ndocs, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int64_t rows = 0;
    int rc;

    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        return rc;
    rc = store_reader_term_docs(r, terms, lens, n, df, err);
    if (rc == 0 && (rc = store_reader_head(r, &rows, err)) == 0)
        *ndocs = rows > 0 ? (uint64_t)rows : 0;
    store_readers_put(x->readers, r);
    return rc;
}

static int fts5_prefix_terms(struct index_backend *b, struct arena *a, const char *p, size_t len,
                             size_t max, const char ***out, size_t *n, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int rc;

    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        return rc;
    rc = store_reader_prefix_terms(r, a, p, len, max, out, n, err);
    store_readers_put(x->readers, r);
    return rc;
}

static int fts5_newest_headline(struct index_backend *b, int64_t before, int64_t *out,
                                struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int rc;

    if ((rc = store_readers_get(x->readers, &r, err)) == 0)
        rc = store_reader_newest_headline(r, store_id_hi(before), out, err);
    store_readers_put(x->readers, r);
    return rc;
}

/* FTS5's own integrity check (every entry of articles_fts agrees with the
 * rows it was made from), and the row count. */
static int fts5_verify(struct index_backend *b, struct index_verify_report *out, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    int64_t rows = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = store_journal_fulltext_verify(x->path, &rows, out->detail, sizeof out->detail, err)) <
        0)
        return rc;
    out->rows = (uint64_t)rows;
    out->indexed = (uint64_t)rows;
    if (out->detail[0] != '\0')
        out->extra = 1; /* FTS5 does not say which rows disagree */
    return 0;
}

static void fts5_free(struct index_backend *b)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    if (x == NULL)
        return;
    store_readers_free(x->readers);
    free(x->path);
    free(x);
}

int index_fts5_new(struct index_backend **out, const char *db_path, struct err *err)
{
    struct index_fts5 *x = NULL;
    int rc;

    *out = NULL;
    x = calloc(1, sizeof *x);
    if (x == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    x->base = (struct index_backend){
        .kind = "fts5",
        .free = fts5_free,
        .search = fts5_search,
        .newest_headline = fts5_newest_headline,
        .story_matches = fts5_story_matches,
        .story_members = fts5_story_members,
        .term_docs = fts5_term_docs,
        .prefix_terms = fts5_prefix_terms,
        .verify = fts5_verify,
        .counts = fts5_counts,
        .facets = fts5_facets,
    };
    if ((x->path = strdup(db_path)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_readers_new(&x->readers, db_path, err)) < 0)
        goto out;
    /* Fail now, not on the first search, when the file cannot be read; a
     * store kept for the engine index has no articles_fts: built once. */
    if ((rc = store_journal_fulltext_ensure(db_path, err)) < 0)
        goto out;
    *out = &x->base;
    x = NULL;
out:
    fts5_free(x ? &x->base : NULL);
    return rc;
}
