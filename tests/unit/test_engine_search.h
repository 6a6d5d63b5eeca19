/* A search over one engine segment, as the unit tests of the engine run
 * it: q parsed, the snapshot of that segment alone (its deletions, their
 * rows and tokens left out of bm25's totals), one thread. */
#ifndef NEWSD_TEST_ENGINE_SEARCH_H
#define NEWSD_TEST_ENGINE_SEARCH_H

#include "index/engine/internal.h"
#include "query/query.h"
#include "util/arena.h"

struct test_engine_search {
    const char *q;
    unsigned fields; /* INDEX_FIELD_*: searchIn */
    enum index_sort sort;
    size_t k;       /* the page's size */
    int64_t to;     /* the window's newest publication time */
    bool score_all; /* relevancy scores every match (no pruning) */
    bool positions; /* document at a time, phrases by positions (the reference) */
    struct eng_deletions *deletions;
};

/* The page's ids into out (room for s->k) and the total; the page's length. */
static inline size_t test_engine_search(struct eng_segment *seg, const struct test_engine_search *s,
                                        int64_t *out, uint64_t *total)
{
    struct eng_segment *segs[1] = {seg};
    struct eng_deletions *dels[1] = {s->deletions};
    struct eng_snap snap = {.nseg = 1,
                            .segs = segs,
                            .deletions = dels,
                            .nrow = seg->n - (s->deletions ? s->deletions->n : 0),
                            .ntoken = seg->ntoken - (s->deletions ? s->deletions->ntoken : 0),
                            .score_all = s->score_all,
                            .doc_at_a_time = s->positions};
    struct index_request req = {.from = INT64_MIN,
                                .to = s->to ? s->to : INT64_MAX,
                                .limit = s->k,
                                .sort = s->sort,
                                .q_fields = s->fields};
    struct arena a;
    struct err err;
    int64_t *ids = NULL;
    size_t n = 0;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(query_parse(&a, s->q, strlen(s->q), (struct query_node **)&req.q, &err), 0);
    assert_int_equal(eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, total, &ids, NULL, &n, &err),
                     0);
    if (n > 0)
        memcpy(out, ids, n * sizeof *ids);
    arena_release(&a);
    return n;
}

#endif
