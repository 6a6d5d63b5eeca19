/* eng_search_ids() of internal.h, the driver of a search (search.h): the
 * request's plan (index/plan.h), its page's arrays and relevancy's statistics
 * set up, every segment run (split.c, run.c), then the page cut from the
 * candidates kept. Every match is counted (exact totals, no scoring on the
 * count path); the page is kept on the side: newest first = a k-heap by id
 * that each segment feeds until its next match is too old to enter (docids
 * are newest first), oldest first = the last k of each segment, relevancy
 * and popularity = a k-heap. */
#include "index/engine/search.h"

#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/banned.h"

static int cmp_cand(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    return before(a, b) ? -1 : before(b, a);
}

static int cmp_id_desc(const void *x, const void *y)
{
    int64_t a = ((const struct cand *)x)->id, b = ((const struct cand *)y)->id;
    return a > b ? -1 : a < b;
}

static int cmp_id_asc(const void *x, const void *y)
{
    return -cmp_id_desc(x, y);
}

/* What a cursor page takes besides its ids (eng_search_walk). */
struct walk_out {
    double **keys;
    struct index_rank_stats *stats;
};

static int search_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                      enum eng_split split, const struct eng_visit *visit, uint64_t *total,
                      int64_t **ids, struct eng_doc_ref **refs, const struct walk_out *w, size_t *n,
                      struct err *err);

int eng_search_ids(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   enum eng_split split, uint64_t *total, int64_t **ids, struct eng_doc_ref **refs,
                   size_t *n, struct err *err)
{
    return search_run(s, a, req, split, NULL, total, ids, refs, NULL, n, err);
}

int eng_search_walk(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                    enum eng_split split, uint64_t *total, int64_t **ids, struct eng_doc_ref **refs,
                    double **keys, struct index_rank_stats *stats, size_t *n, struct err *err)
{
    struct walk_out w = {keys, stats};
    *keys = NULL;
    memset(stats, 0, sizeof *stats);
    return search_run(s, a, req, split, NULL, total, ids, refs, &w, n, err);
}

int eng_search_visit(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                     const struct eng_visit *visit, uint64_t *total, struct err *err)
{
    struct index_request count = *req;
    int64_t *ids;
    size_t n;
    count.offset = count.limit = 0;
    return search_run(s, a, &count, ENG_SPLIT_NEVER, visit, total, &ids, NULL, NULL, &n, err);
}

/* A cursor page's statistics: the ones ranked with (relevancy). */
static void walk_stats(const struct run *r, struct index_rank_stats *out)
{
    out->nrow = r->nrow;
    out->ntoken = r->ntoken;
    out->nleaves = r->plan.nleaves;
    for (size_t i = 0; i < r->plan.nleaves; i++)
        out->hits[i] = r->hits[i];
}

static int search_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                      enum eng_split split, const struct eng_visit *visit, uint64_t *total,
                      int64_t **ids, struct eng_doc_ref **refs, const struct walk_out *w, size_t *n,
                      struct err *err)
{
    struct run r = {.snap = s, .req = req, .deadline = req->deadline_ms, .visit = visit};
    int64_t id_lo = store_id_lo(req->from), id_hi = index_request_id_hi(req);
    int rc;

    *total = 0;
    *ids = NULL;
    if (refs)
        *refs = NULL;
    *n = 0;
    if ((rc = index_plan_build(&r.plan, a, req, err)) < 0)
        return rc;
    if (r.plan.has_prefix) /* index.c expands word* before a backend sees it */
        return err_set(err, ERR_INVALID, "a prefix reached the engine unexpanded");
    /* Phrase scratch (positions per field), one evaluation at a time. */
    r.pa = arena_alloc(a, ENG_FIELDS * sizeof *r.pa);
    r.st = arena_alloc(a, ENG_FIELDS * sizeof *r.st);
    if (r.pa == NULL || r.st == NULL)
        goto nomem;
    if (s->count_cache && r.plan.root)
        r.key = index_plan_key(a, r.plan.root, &r.keylen);
    r.plain = r.plan.root && eng_rank_plain(r.plan.root, false);
    for (size_t i = 0; i < r.plan.nleaves; i++) {
        r.term_leaves |= r.plan.leaves[i]->kind == PLAN_TERM;
        r.near_leaves |= r.plan.leaves[i]->kind == PLAN_NEAR;
    }
    if (w && req->sort == INDEX_SORT_RELEVANCY && r.plan.nleaves > INDEX_RANK_LEAVES_MAX)
        return err_set(err, ERR_TOO_LARGE,
                       "a relevancy cursor holds the statistics of at most %d words or phrases",
                       INDEX_RANK_LEAVES_MAX);
    if (req->from > req->to || id_lo > id_hi || s->nrow == 0)
        return 0;
    if (req->limit > 0) {
        r.k = req->offset + req->limit;
        if (r.k < req->offset)
            r.k = SIZE_MAX;
        if (r.k > s->nrow)
            r.k = (size_t)s->nrow;
    }
    if (r.k > 0) {
        if (req->sort != INDEX_SORT_PUBLISHED_ASC) {
            r.heap.k = r.k;
            r.heap.v = arena_calloc(a, r.k, sizeof *r.heap.v);
            if (r.heap.v == NULL)
                goto nomem;
        } else {
            r.list = arena_calloc(a, r.k * s->nseg, sizeof *r.list);
            r.ring = arena_calloc(a, r.k, sizeof *r.ring);
            if (r.list == NULL || r.ring == NULL)
                goto nomem;
        }
        if (req->sort == INDEX_SORT_RELEVANCY && (rc = eng_rank_begin(&r, a)) < 0)
            goto fail;
    }
    if (expired(&r)) { /* a budget already spent fails even a search with no matches */
        rc = ERR_TIMEOUT;
        goto fail;
    }
    if ((rc = eng_split_run(&r, a, split, id_lo, id_hi)) < 0)
        goto fail;
    if (w && r.hits) /* counted (or frozen) by now */
        walk_stats(&r, w->stats);
    *total = r.total;
    if (r.k == 0 || r.total <= req->offset)
        return 0;

    struct cand *v;
    size_t m;
    if (r.heap.v) {
        v = r.heap.v;
        m = r.heap.n;
        qsort(v, m, sizeof *v, cmp_cand);
    } else {
        v = r.list;
        m = r.nlist;
        qsort(v, m, sizeof *v, req->sort == INDEX_SORT_PUBLISHED_ASC ? cmp_id_asc : cmp_id_desc);
    }
    if (m <= req->offset)
        return 0;
    m -= req->offset;
    if (m > req->limit)
        m = req->limit;
    *ids = arena_calloc(a, m, sizeof **ids);
    if (*ids == NULL || (refs && (*refs = arena_calloc(a, m, sizeof **refs)) == NULL) ||
        (w && (*w->keys = arena_calloc(a, m, sizeof **w->keys)) == NULL))
        goto nomem;
    for (size_t i = 0; i < m; i++) {
        (*ids)[i] = v[req->offset + i].id;
        if (refs)
            (*refs)[i] = v[req->offset + i].at;
        if (w)
            (*w->keys)[i] = v[req->offset + i].key;
    }
    *n = m;
    return 0;
nomem:
    rc = ERR_NOMEM;
fail:
    *total = 0;
    if (rc == ERR_TIMEOUT)
        return err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    if (rc == ERR_NOMEM)
        return err_set(err, ERR_NOMEM, "out of memory for a search");
    if (rc == ERR_INVALID)
        return err_set(err, ERR_INVALID, "the cursor's statistics do not fit the query");
    return rc;
}
