/* A search over one engine segment, as the unit tests of the engine run
 * it: q parsed, the snapshot of that segment alone (its deletions, their
 * rows and tokens left out of bm25's totals), one thread. */
#ifndef NEWSD_TEST_ENGINE_SEARCH_H
#define NEWSD_TEST_ENGINE_SEARCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/engine/internal.h"
#include "query/query.h"
#include "util/arena.h"
#include "util/hash.h"

struct test_engine_search {
    const char *q;
    unsigned fields; /* INDEX_FIELD_*: searchIn */
    enum index_sort sort;
    size_t k;       /* the page's size */
    int64_t to;     /* the window's newest publication time */
    bool score_all; /* relevancy scores every match (no pruning) */
    bool positions; /* document at a time, phrases by positions (the reference) */
    const char *language; /* the language filter; NULL none */
    struct eng_deletions *deletions;
};

/* The tests' generator of documents (a linear congruential one): the same
 * seed makes the same documents again. */
static inline unsigned test_engine_rand(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

/* One English article of source 0 into builder b, its URL and stored
 * JSON made from its id (so that a merge finds the same). */
static inline void test_engine_add(struct eng_builder *b, int64_t id, int64_t seq,
                                   const char *title, const char *description, const char *content)
{
    char url[64], json[96];
    snprintf(url, sizeof url, "https://test.example/%lld", (long long)id);
    int jn = snprintf(json, sizeof json, "{\"url\":\"%s\"}", url);
    struct eng_row r = {.id = id,
                        .seq = seq,
                        .title = title,
                        .description = description,
                        .content = content,
                        .language = "en",
                        .meta_terms = "lang:en",
                        .src = 0,
                        .url_hash = hash_bytes64(url, strlen(url)),
                        .json = json,
                        .json_len = (size_t)jn};
    assert_int_equal(eng_builder_add(b, &r), 0);
}

/* x and y write the same file, byte for byte. */
static inline void test_engine_same_segment(const struct eng_segment *x,
                                            const struct eng_segment *y)
{
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    assert_int_equal(eng_segment_image(x, &a, &na), 0);
    assert_int_equal(eng_segment_image(y, &b, &nb), 0);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
}

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
                                .language = s->language,
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
