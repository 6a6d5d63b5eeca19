/* index/engine/: the purpose-built index checked against the FTS5 backend
 * as the oracle (ENGINE.md). Both backends open the same store file, built
 * from the real-article fixtures of tests/data/api; every query of the bench
 * mix (bench/querymix.tsv, decoded as bench_index decodes it) and a few
 * hundred random queries and filters must give the same total and the same
 * ids in the same order (relevancy included: the engine computes FTS5's
 * bm25 over the same statistics; the whole matched set is compared too, so
 * a page boundary cannot hide a difference). Then: following the
 * table (new rows, upserts by URL, deletions, merges), a spent time budget,
 * an empty store. Everything runs twice: with the whole corpus in one
 * segment, and cut into segments of 37 documents. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "test_skip.h"

#include "test_ingest_file.h"
#include "test_requests.h"
#include "test_tmpdir.h"
#include <sqlite3.h>

#include "../../bench/common.h" /* the bench query mix */
#include "api/render.h"
#include "index/backend.h"
#include "index/engine/internal.h" /* loaded: opened from its files */
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "store/journal.h"
#include "store/store.h"
#include "store/sqlite/db.h"
#include "text/text.h"
#include "util/arena.h"
#include "util/err.h"

#include "test_oracle.h" /* after store/journal.h: it reads the rows itself */

#define DATA "../data/api/"
#define RANDOM_QUERIES 400
#define ORACLE_QUERIES 300

struct fixture {
    char dir[64];
    struct store *s;
    struct index_backend *fts, *eng;
    struct test_corpus c; /* what random queries are made of */
    /* relevancy pages whose order was FTS5's too */
    unsigned rel_same, rel_total;
};

/* NEWSD_ENGINE_DIFF_STORE=DIR: compare on an existing store (e.g. a bench
 * store) instead, read-only: only the query tests run. */
#define DIFF_STORE_ENV "NEWSD_ENGINE_DIFF_STORE"

/* The engine's options for every open here (main sets segment_docs for
 * its second run). */
static struct index_engine_options engine_opt;

static struct fixture *fixture_new(bool with_corpus)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    size_t n;
    assert_non_null(f);
    err_clear(&err);
    if (with_corpus && getenv(DIFF_STORE_ENV)) {
        assert_int_equal(store_open(&f->s, getenv(DIFF_STORE_ENV), &err), 0);
        assert_int_equal(index_fts5_new(&f->fts, store_sqlite_path(f->s), &err), 0);
        assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &engine_opt, &err), 0);
        return f; /* f->dir stays "": nothing to remove */
    }
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-engine-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    if (with_corpus) {
        assert_int_equal(ingest_sources_import(f->s, DATA "sources.jsonl", &n, &err), 0);
        test_ingest_file(f->s, DATA "articles.jsonl");
        test_ingest_file(f->s, DATA "handmade.jsonl");
    }
    assert_int_equal(index_fts5_new(&f->fts, store_sqlite_path(f->s), &err), 0);
    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &engine_opt, &err), 0);
    return f;
}

static void fixture_free(struct fixture *f)
{
    f->eng->free(f->eng);
    f->fts->free(f->fts);
    store_close(f->s);
    if (f->dir[0])
        remove_tree(f->dir);
    test_corpus_release(&f->c);
    free(f);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Whether q holds a proximity "a b"~N: FTS5 scores each word of its NEAR
 * group, the engine the windows as one phrase (docs/query-language.md), so
 * a relevancy page may order them differently; the matched set is the same. */
static bool has_near(const struct query_node *q)
{
    if (q == NULL || q->kind == QUERY_NEAR)
        return q != NULL;
    if (q->kind != QUERY_AND && q->kind != QUERY_OR && q->kind != QUERY_NOT)
        return false;
    for (size_t i = 0; i < q->n; i++)
        if (has_near(q->kids[i]))
            return true;
    return false;
}

/* Run req on both backends and require the same answer; returns the total. */
static uint64_t same_answer(struct fixture *f, const struct index_request *req, const char *what)
{
    struct arena a;
    struct index_result ra, rb;
    struct err ea, eb;
    int rca, rcb;

    arena_init(&a, 0);
    err_clear(&ea);
    err_clear(&eb);
    rca = search_expanded(f->fts, &a, req, &ra, &ea);
    rcb = search_expanded(f->eng, &a, req, &rb, &eb);
    if (rca != rcb || (rca == 0 && ra.total != rb.total))
        print_message("%s: fts5 rc %d total %llu (%s), engine rc %d total %llu (%s)\n", what, rca,
                      (unsigned long long)ra.total, ea.msg, rcb, (unsigned long long)rb.total,
                      eb.msg);
    assert_int_equal(rca, rcb);
    if (rca < 0) {
        arena_release(&a);
        return 0;
    }
    assert_int_equal(ra.total, rb.total);
    assert_int_equal(ra.n, rb.n);
    /* Page order, relevancy included (but a proximity's: its set below). */
    bool same = true, ordered = req->sort != INDEX_SORT_RELEVANCY ||
                                (!has_near(req->q) && !has_near(req->q_title));
    for (size_t i = 0; ordered && i < ra.n; i++) {
        if (ra.docs[i].id != rb.docs[i].id) {
            print_message("%s: row %zu differs\n", what, i);
            same = false;
            break;
        }
        /* The engine's stored JSON is the fts5 page's rendering of the row. */
        assert_int_equal(ra.docs[i].len, rb.docs[i].len);
        assert_memory_equal(ra.docs[i].json, rb.docs[i].json, ra.docs[i].len);
    }
    if (req->sort == INDEX_SORT_RELEVANCY && ra.total > 0 && ordered) {
        f->rel_total++;
        f->rel_same += same;
    }
    assert_true(same);
    if (req->sort == INDEX_SORT_RELEVANCY && ra.total > 0 && ra.total <= 5000) {
        /* The whole matched set too (bounded for bench stores). */
        struct index_request all = *req;
        all.offset = 0;
        all.limit = ra.total;
        uint64_t total = ra.total;
        assert_int_equal(search_expanded(f->fts, &a, &all, &ra, &ea), 0);
        assert_int_equal(search_expanded(f->eng, &a, &all, &rb, &eb), 0);
        assert_int_equal(ra.n, total);
        assert_int_equal(rb.n, total);
        int64_t *x = calloc(total, sizeof *x), *y = calloc(total, sizeof *y);
        for (size_t i = 0; i < total; i++) {
            x[i] = ra.docs[i].id;
            y[i] = rb.docs[i].id;
        }
        qsort(x, total, sizeof *x, cmp_i64);
        qsort(y, total, sizeof *y, cmp_i64);
        assert_memory_equal(x, y, total * sizeof *x);
        free(x);
        free(y);
    }
    uint64_t t = ra.total;
    arena_release(&a);
    return t;
}

/* --- the corpus' words, titles, sources, domains ----------------------------- */

/* The rows of a page's articles, read from the store (same order). */
static struct article *rows_of(struct fixture *f, struct arena *a, const struct index_result *r)
{
    struct store_reader *rd = NULL;
    struct err err;
    int64_t *ids = arena_calloc(a, r->n + 1, sizeof *ids);
    struct article *arts = arena_calloc(a, r->n + 1, sizeof *arts);
    assert_non_null(ids);
    assert_non_null(arts);
    for (size_t i = 0; i < r->n; i++)
        ids[i] = r->docs[i].id;
    err_clear(&err);
    assert_int_equal(store_reader_open(&rd, store_sqlite_path(f->s), &err), 0);
    assert_int_equal(store_reader_articles(rd, a, ids, r->n, arts, &err), 0);
    store_reader_close(rd);
    for (size_t i = 0; i < r->n; i++)
        assert_int_equal(arts[i].id, ids[i]);
    return arts;
}

static void learn_corpus(struct fixture *f)
{
    struct arena a;
    /* The newest 2,000 are vocabulary enough (and bounded on a bench store). */
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 2000};
    struct index_result r;
    struct err err;

    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(f->fts->search(f->fts, &a, &req, &r, &err), 0);
    assert_true(r.n > 100);
    struct article *arts = rows_of(f, &a, &r);
    test_corpus_learn(&f->c, arts, r.n);
    arena_release(&a);
}

/* --- tests -------------------------------------------------------------------- */

/* The bench mix's query i as a request, its parts in a. */
static void mix_request(struct arena *a, const struct mix *m, size_t i, struct index_request *req)
{
    struct err err;
    err_clear(&err);
    assert_int_equal(bench_request_build(a, m->q[i].params, req, &err), 0);
}

static void the_bench_query_mix_gives_fts5s_answers(void **state)
{
    struct fixture *f = *state;
    struct mix m = {0};
    struct arena a;
    size_t with_matches = 0;

    assert_int_equal(mix_load(&m, "../../bench/querymix.tsv"), 0);
    assert_true(m.n > 100);
    /* Twice: the second pass is answered from the engine's count cache. */
    struct eng_count_cache *cc = ((struct index_engine *)f->eng)->count_cache;
    uint64_t hits0 = 0, hits1 = 0, misses;
    size_t bytes;
    assert_non_null(cc);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            eng_count_cache_stats(cc, &hits0, &misses, &bytes);
        for (size_t i = 0; i < m.n; i++) {
            struct index_request req;
            arena_init(&a, 0);
            mix_request(&a, &m, i, &req);
            uint64_t t = same_answer(f, &req, m.q[i].id);
            with_matches += pass == 0 && t > 0;
            arena_release(&a);
        }
    }
    eng_count_cache_stats(cc, &hits1, &misses, &bytes);
    assert_true(hits1 - hits0 >= m.n / 2); /* most counts of pass 2 came from the cache */
    print_message("query mix: %zu queries, %zu with matches\n", m.n, with_matches);
    mix_free(&m);
}

static int oracle_doc_cmp(const void *x, const void *y)
{
    const struct oracle_doc *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

static const struct oracle_doc *oracle_find(const struct oracle *o, int64_t id)
{
    struct oracle_doc key = {.id = id};
    return bsearch(&key, o->doc, o->n, sizeof *o->doc, oracle_doc_cmp);
}

/* One backend's whole matched set against the oracle's answer: every YES
 * found, nothing found that is NO; with no MAYBE the same total. Returns
 * the number of YES documents, or -1 when some document was MAYBE. */
static long oracle_check(const struct oracle *o, struct index_backend *b, const char *name,
                         const struct index_request *req, const struct oracle_q *tree,
                         const char *q)
{
    struct index_request all = *req;
    struct index_result r;
    struct arena a;
    struct err err;
    long yes = 0, maybe = 0, found_yes = 0;

    arena_init(&a, 0);
    err_clear(&err);
    if (q[0])
        assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&all.q, &err), 0);
    all.offset = 0;
    all.limit = o->n + 1;
    all.sort = INDEX_SORT_PUBLISHED_DESC;
    assert_int_equal(search_expanded(b, &a, &all, &r, &err), 0);
    assert_int_equal(r.n, r.total);
    for (size_t i = 0; i < r.n; i++) {
        const struct oracle_doc *d = oracle_find(o, r.docs[i].id);
        assert_non_null(d);
        enum oracle_value v = oracle_filters_pass(d, req)
                                  ? (tree ? oracle_eval(d, req->q_fields, tree) : ORACLE_YES)
                                  : ORACLE_NO;
        if (v == ORACLE_NO)
            fail_msg("%s: q=[%s] fields=%u from=%lld to=%lld: found id %lld the oracle refuses",
                     name, q, req->q_fields, (long long)req->from, (long long)req->to,
                     (long long)d->id);
        found_yes += v == ORACLE_YES;
    }
    for (size_t i = 0; i < o->n; i++) {
        const struct oracle_doc *d = &o->doc[i];
        if (!oracle_filters_pass(d, req))
            continue;
        enum oracle_value v = tree ? oracle_eval(d, req->q_fields, tree) : ORACLE_YES;
        yes += v == ORACLE_YES;
        maybe += v == ORACLE_MAYBE;
    }
    if (found_yes != yes)
        fail_msg("%s: q=[%s] fields=%u from=%lld to=%lld: %ld of the oracle's %ld found", name, q,
                 req->q_fields, (long long)req->from, (long long)req->to, found_yes, yes);
    if (maybe == 0)
        assert_int_equal(r.total, (uint64_t)yes);
    arena_release(&a);
    return maybe ? -1 : yes;
}

/* The oracle's random requests on both backends. */
static void oracle_queries_agree(struct fixture *f)
{
    struct oracle o;
    size_t exact = 0, exact_matches = 0, near = 0, near_matches = 0;

    oracle_load(&o, store_sqlite_path(f->s));
    assert_true(o.n > 0 && o.n_vocab > 100);
    qsort(o.doc, o.n, sizeof *o.doc, oracle_doc_cmp);
    srand(20261128);
    for (int i = 0; i < ORACLE_QUERIES; i++) {
        struct arena a;
        struct index_request req;
        struct oracle_q *tree;
        char q[8192];
        arena_init(&a, 0);
        oracle_request_random(&o, &f->c, &a, &req, &tree, q, sizeof q);
        long y = oracle_check(&o, f->eng, "engine", &req, tree, q);
        assert_int_equal(oracle_check(&o, f->fts, "fts5", &req, tree, q), y);
        exact += y >= 0;
        exact_matches += y > 0;
        if (strstr(q, "\"~")) { /* a proximity "a b"~N */
            near++;
            near_matches += y > 0;
        }
        arena_release(&a);
    }
    print_message("oracle: %d queries over %zu rows, %zu decided on every row, %zu of them with "
                  "matches; %zu with a proximity, %zu of them decided with matches\n",
                  ORACLE_QUERIES, o.n, exact, exact_matches, near, near_matches);
    /* Proximities alone, with the random requests' filters (which leave
     * out the rows the oracle cannot read now and then): the oracle settles
     * more of them than inside larger trees. */
    for (int i = 0; i < ORACLE_QUERIES; i++) {
        struct arena a;
        struct index_request req;
        struct oracle_q *ignored, tree = {0};
        char q[8192];
        arena_init(&a, 0);
        oracle_request_random(&o, &f->c, &a, &req, &ignored, q, sizeof q);
        const struct oracle_doc *d = oracle_near_q(&o, &tree);
        if (d && rnd(2)) { /* the second of the document the words come from */
            req.from = d->t;
            req.to = d->t;
        }
        oracle_q_text(&tree, q, sizeof q);
        long y = oracle_check(&o, f->eng, "engine", &req, &tree, q);
        assert_int_equal(oracle_check(&o, f->fts, "fts5", &req, &tree, q), y);
        near++;
        near_matches += y > 0;
        arena_release(&a);
    }
    print_message("oracle: %zu proximities in all, %zu decided with matches\n", near, near_matches);
    assert_true(near_matches > ORACLE_QUERIES / 10);
    /* the generator asks questions the oracle can settle, with answers */
    assert_true(exact > ORACLE_QUERIES / 4);
    assert_true(exact_matches > ORACLE_QUERIES / 10);
    oracle_release(&o);
}

/* The random set (learnt again from the rows as they are now): every query
 * with the same page and total on both backends, then the oracle's. Run
 * after every step that changes the rows or the segments. */
static void random_set_agrees(struct fixture *f)
{
    size_t run = 0, with_matches = 0;

    test_corpus_release(&f->c);
    learn_corpus(f);
    srand(20261123);
    for (int i = 0; run < RANDOM_QUERIES && i < 20 * RANDOM_QUERIES; i++) {
        struct arena a;
        struct index_request req;
        char desc[1500];
        arena_init(&a, 0);
        if (random_request(&f->c, &a, &req, desc, sizeof desc)) {
            with_matches += same_answer(f, &req, desc) > 0;
            run++;
        }
        arena_release(&a);
    }
    print_message("random: %zu queries, %zu with matches; relevancy order as FTS5's in %u/%u\n",
                  run, with_matches, f->rel_same, f->rel_total);
    assert_int_equal(run, RANDOM_QUERIES);
    assert_true(with_matches > RANDOM_QUERIES / 4); /* the generator finds real matches */
    if (!getenv(DIFF_STORE_ENV))
        oracle_queries_agree(f);
}

static void random_queries_give_fts5s_answers(void **state)
{
    random_set_agrees(*state);
}

/* req's matches newest first as an export walks them: pages of k asked
 * for ids alone and no total (index_request.ids_only, no_total), each below
 * the last id of the one before, until a page is not full. Every id lands
 * in out (cap of them at most); the number walked. */
static size_t walk_pages(struct index_backend *b, const struct index_request *req, size_t k,
                         int64_t *out, size_t cap)
{
    size_t n = 0;
    struct index_request page = *req;
    page.sort = INDEX_SORT_PUBLISHED_DESC;
    page.offset = 0;
    page.limit = k;
    page.ids_only = page.no_total = true;
    for (;;) {
        struct arena a;
        struct index_result r;
        struct err err;
        arena_init(&a, 0);
        err_clear(&err);
        assert_int_equal(b->search(b, &a, &page, &r, &err), 0);
        assert_true(r.n <= k);
        assert_true(r.total >= r.n); /* what was looked at: the page at least */
        for (size_t i = 0; i < r.n; i++) {
            assert_null(r.docs[i].json);
            assert_true(n < cap);
            out[n++] = r.docs[i].id;
        }
        size_t got = r.n;
        if (got)
            page.below = true, page.id_below = r.docs[got - 1].id;
        arena_release(&a);
        if (got < k)
            return n;
    }
}

/* req's walk in pages of 1 (small answers), 7 and 250 on both backends
 * against one newest-first search of all its matches (FTS5's); their
 * number. */
static size_t walks_agree(struct fixture *f, struct index_request req, const char *what)
{
    struct arena a;
    struct index_result all;
    struct err err;
    arena_init(&a, 0);
    err_clear(&err);
    req.sort = INDEX_SORT_PUBLISHED_DESC;
    req.offset = 0;
    req.limit = 100000;
    assert_int_equal(f->fts->search(f->fts, &a, &req, &all, &err), 0);
    assert_int_equal(all.n, all.total);
    int64_t *ids = calloc(all.n + 1, sizeof *ids);
    assert_non_null(ids);
    const size_t sizes[] = {1, 7, 250};
    for (size_t s = 0; s < 3; s++) {
        if (sizes[s] == 1 && all.n > 300)
            continue; /* a page at a time: the small answers only */
        struct index_backend *both[] = {f->fts, f->eng};
        for (size_t b = 0; b < 2; b++) {
            size_t n = walk_pages(both[b], &req, sizes[s], ids, all.n + 1);
            if (n != all.n)
                fail_msg("%s, pages of %zu, %s: walked %zu of %zu", what, sizes[s],
                         b ? "engine" : "fts5", n, all.n);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(ids[k], all.docs[k].id);
        }
    }
    size_t n = all.n;
    free(ids);
    arena_release(&a);
    return n;
}

/* An export's walk (pages without their totals) gives every match newest
 * first, the ids of one newest-first search of them all, on both
 * backends: every article, and the bench mix's queries and filters. */
static void a_walk_of_pages_without_totals_gives_every_match(void **state)
{
    struct fixture *f = *state;
    struct mix m = {0};
    size_t many_pages = 0;
    struct index_request every = {.from = INT64_MIN, .to = INT64_MAX};
    assert_true(walks_agree(f, every, "every article") > 250);
    assert_int_equal(mix_load(&m, "../../bench/querymix.tsv"), 0);
    for (size_t i = 0; i < m.n; i++) {
        struct arena a;
        struct index_request req;
        arena_init(&a, 0);
        mix_request(&a, &m, i, &req);
        many_pages += walks_agree(f, req, m.q[i].id) > 14; /* three pages of 7 at least */
        arena_release(&a);
    }
    print_message("walks: %zu of %zu answers of three pages or more\n", many_pages, m.n);
    assert_true(many_pages > 10);
    mix_free(&m);
}

static uint64_t total_of(struct index_backend *b, const char *q)
{
    struct arena a;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 10};
    struct index_result r;
    struct err err;
    arena_init(&a, 0);
    err_clear(&err);
    if (q)
        assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
    assert_int_equal(b->search(b, &a, &req, &r, &err), 0);
    arena_release(&a);
    return r.total;
}

static void an_upsert_replaces_and_new_rows_are_found_at_once(void **state)
{
    struct fixture *f = *state;
    uint64_t all = total_of(f->eng, NULL);

    assert_int_equal(total_of(f->eng, "blorptitle"), 1);
    assert_int_equal(total_of(f->eng, "snarfle"), 0);
    /* update-1 replaces the blorptitle article, update-2 is new */
    test_ingest_file(f->s, DATA "updates.jsonl");
    assert_int_equal(total_of(f->eng, "snarfle"), 1);
    assert_int_equal(total_of(f->eng, "blorptitle"), 0);
    assert_int_equal(total_of(f->eng, "glimmerfen"), total_of(f->fts, "glimmerfen"));
    assert_int_equal(total_of(f->eng, NULL), total_of(f->fts, NULL));
    assert_true(total_of(f->eng, NULL) >= all);
    random_set_agrees(f); /* every page, not only these totals */
}

static void a_deleted_row_leaves_the_index(void **state)
{
    struct fixture *f = *state;
    sqlite3 *db;
    uint64_t before = total_of(f->eng, NULL);

    struct err err;
    /* The store's own way in: the FTS5 triggers need the tokenizer. */
    err_clear(&err);
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    int rc = sqlite3_exec(db,
                          "DELETE FROM articles WHERE id IN"
                          " (SELECT id FROM articles ORDER BY id LIMIT 3)",
                          NULL, NULL, NULL);
    store_sqlite_conn_close(db);
    assert_int_equal(rc, SQLITE_OK);
    /* No new seq: the follower's poll (every 200 ms) finds it by the row count. */
    int64_t until = now_ms() + 3000;
    while (total_of(f->eng, NULL) != before - 3 && now_ms() < until)
        usleep(50 * 1000);
    assert_int_equal(total_of(f->eng, NULL), before - 3);
    assert_int_equal(total_of(f->fts, NULL), before - 3);
    random_set_agrees(f);
}

/* A delete through the store (retention, `articles delete`) reaches the
 * index by the store's deletion log, not by the row count: here a row
 * slipped in by hand, below the index's seq, keeps the count equal, and
 * the deleted article must still leave. (A fixture of its own: the hidden
 * row is out of the index for good.) */
static void a_store_delete_leaves_the_index_by_the_log_not_the_count(void **state)
{
    (void)state;
    struct fixture *f = fixture_new(true);
    struct store_delete_filter oldest = {0};
    struct err err;
    sqlite3 *db;
    int64_t n = 0;
    uint64_t before = total_of(f->eng, NULL);

    err_clear(&err);
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    int rc = sqlite3_exec(db,
                          "INSERT INTO articles(id, seq, url, canonical_url, published_at, title)"
                          " SELECT max(id) + 1, 0, 'https://hidden.example/1',"
                          " 'https://hidden.example/1', max(published_at), 'hidden' FROM articles",
                          NULL, NULL, NULL);
    store_sqlite_conn_close(db);
    assert_int_equal(rc, SQLITE_OK);
    assert_int_equal(store_articles_delete(f->s, &oldest, 1, &n, &err), 0);
    assert_int_equal(n, 1);
    /* The delete took a seq: read-your-writes waits for the poll. */
    int64_t until = now_ms() + 3000;
    while (total_of(f->eng, NULL) != before - 1 && now_ms() < until)
        usleep(50 * 1000);
    assert_int_equal(total_of(f->eng, NULL), before - 1);
    assert_int_equal(total_of(f->eng, "hidden"), 0);
    fixture_free(f);
}

static void many_small_batches_are_merged_and_still_agree(void **state)
{
    struct fixture *f = *state;
    char url[64], title[64];
    struct err err;

    for (int i = 0; i < 40; i++) {
        struct article art = {0};
        struct store_put_stats st;
        snprintf(url, sizeof url, "https://batch.example/%d", i % 30); /* the last 10 replace */
        snprintf(title, sizeof title, "Zorblat batch %d story round%d", i % 30, i / 30);
        art.url = url;
        art.canonical_url = url;
        art.title = title;
        art.description = "Many small batches";
        art.content = "Each batch is one segment until merged";
        art.published_at = 1600000000 + (i % 7) * 3600;
        art.domain = "batch.example";
        snprintf(art.language, sizeof art.language, "en");
        err_clear(&err);
        assert_int_equal(store_articles_put(f->s, &art, 1, &st, &err), 0);
        assert_int_equal(total_of(f->eng, "zorblat"), total_of(f->fts, "zorblat"));
    }
    assert_int_equal(total_of(f->eng, "zorblat"), 30);
    assert_int_equal(total_of(f->eng, "round1"), 10);
    assert_int_equal(total_of(f->eng, "round0"), 20);
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 100};
    struct arena a;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(query_parse(&a, "batch", 5, (struct query_node **)&req.q, &err), 0);
    for (int s = 0; s < 4; s++) {
        req.sort = (enum index_sort)s;
        same_answer(f, &req, "batch");
    }
    arena_release(&a);
    random_set_agrees(f);
}

static void a_spent_time_budget_is_a_timeout(void **state)
{
    struct fixture *f = *state;
    struct arena a;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 10};
    struct index_result r;
    struct err err;

    arena_init(&a, 0);
    err_clear(&err);
    req.deadline_ms = now_ms() - 1;
    assert_int_equal(f->eng->search(f->eng, &a, &req, &r, &err), ERR_TIMEOUT);
    assert_int_equal(r.total, 0);
    req.deadline_ms = now_ms() + 60000;
    assert_int_equal(f->eng->search(f->eng, &a, &req, &r, &err), 0);
    assert_true(r.total > 0);
    arena_release(&a);
}

static void an_empty_store_has_no_matches_until_one_arrives(void **state)
{
    struct fixture *f = fixture_new(false);
    struct err err;
    int64_t t;
    (void)state;

    assert_int_equal(total_of(f->eng, NULL), 0);
    assert_int_equal(total_of(f->eng, "anything"), 0);
    err_clear(&err);
    assert_int_equal(f->eng->newest_headline(f->eng, INT64_MAX, &t, &err), ERR_NOTFOUND);
    test_ingest_file(f->s, DATA "updates.jsonl");
    assert_int_equal(total_of(f->eng, NULL), 2);
    assert_int_equal(total_of(f->eng, "snarfle"), 1);
    assert_int_equal(f->eng->newest_headline(f->eng, INT64_MAX, &t, &err), 0);
    int64_t t2;
    assert_int_equal(f->fts->newest_headline(f->fts, INT64_MAX, &t2, &err), 0);
    assert_int_equal(t, t2);
    fixture_free(f);
}

static void newest_headline_agrees(void **state)
{
    struct fixture *f = *state;
    struct err ea, eb;
    int64_t cut[] = {INT64_MAX, f->c.t_max, (f->c.t_min + f->c.t_max) / 2, f->c.t_min,
                     f->c.t_min - 1};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        int64_t x = 0, y = 0;
        err_clear(&ea);
        err_clear(&eb);
        int rx = f->fts->newest_headline(f->fts, cut[i], &x, &ea);
        int ry = f->eng->newest_headline(f->eng, cut[i], &y, &eb);
        assert_int_equal(rx, ry);
        assert_int_equal(x, y);
    }
}

/* FTS5 marks a whole AND subtree EOF when one child runs out
 * (fts5ExprSetEof): a word of that AND left on the current row then gives
 * no bm25 instances. Every handmade article says "Handmade fixture
 * article."; "article handmade" never occurs in that order. */
static void an_exhausted_and_under_or_scores_nothing(void **state)
{
    struct fixture *f = *state;
    static const char *const qs[] = {
        "handmade OR (fixture AND \"article handmade\")",
        "(fixture AND \"article handmade\") OR handmade",
        "handmade OR (fixture -\"fixture article\")",
        "body OR (handmade AND (fixture \"article handmade\"))",
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 100};
        struct arena a;
        struct err err;
        arena_init(&a, 0);
        err_clear(&err);
        assert_int_equal(query_parse(&a, qs[i], strlen(qs[i]), (struct query_node **)&req.q, &err),
                         0);
        req.sort = INDEX_SORT_RELEVANCY;
        assert_true(same_answer(f, &req, qs[i]) > 1);
        arena_release(&a);
    }
}

/* --- the index directory --------------------------------------------------- */

static bool engine_loaded(struct index_backend *b)
{
    return ((struct index_engine *)b)->loaded;
}

static void engine_reopen(struct fixture *f)
{
    struct err err;
    err_clear(&err);
    if (f->eng)
        f->eng->free(f->eng);
    f->eng = NULL;
    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &engine_opt, &err), 0);
}

/* --- the page: the document store against rows + renderer ------------------ */

/* Every article of the index, newest first, as one API page both ways:
 * rows read from the table and rendered now (api_render_articles: today's
 * renderer) against the engine's stored JSON copied (api_render_page). The
 * bytes must be the same. */
static void the_page_is_the_rows_rendered(struct fixture *f)
{
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 100000};
    struct index_result r;
    struct arena a;
    struct err err;
    struct buf rows, docs;

    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(f->eng->search(f->eng, &a, &req, &r, &err), 0);
    assert_int_equal(r.n, r.total);
    assert_true(r.n > 0);
    struct article *arts = rows_of(f, &a, &r);
    buf_init(&rows, 0);
    buf_init(&docs, 0);
    api_render_articles(&rows, r.total, arts, r.n);
    api_render_page(&docs, r.total, r.docs, r.n);
    assert_int_equal(rows.err, 0);
    if (rows.len != docs.len || memcmp(rows.data, docs.data, rows.len) != 0) {
        size_t i = 0;
        while (i < rows.len && i < docs.len && rows.data[i] == docs.data[i])
            i++;
        fail_msg("pages differ at byte %zu of %zu: rows ...%.60s / store ...%.60s", i, rows.len,
                 rows.data + (i > 20 ? i - 20 : 0), docs.data + (i > 20 ? i - 20 : 0));
    }
    buf_release(&rows);
    buf_release(&docs);
    arena_release(&a);
}

/* The real articles of tests/data, in RAM and from the segment files. */
static void the_stored_pages_are_the_rendered_rows(void **state)
{
    struct fixture *f = *state;
    the_page_is_the_rows_rendered(f);
    engine_reopen(f);
    assert_true(engine_loaded(f->eng));
    the_page_is_the_rows_rendered(f);
}

/* Strings the renderer must escape, replace or cut, stored and copied. */
static void hostile_strings_are_stored_as_the_api_renders_them(void **state)
{
    struct fixture *f = fixture_new(false);
    char long_content[6000], at_200[400], at_201[400];
    size_t k = 0;
    (void)state;

    /* 2,000 code points of 1-3 bytes: cut at 199 + "… [+1801 chars]" */
    for (int i = 0; k + 4 < sizeof long_content && i < 2000; i++) {
        const char *piece = i % 3 == 0 ? "\xC3\xA9" : i % 3 == 1 ? "\xE2\x82\xAC" : "\"";
        memcpy(long_content + k, piece, strlen(piece));
        k += strlen(piece);
    }
    long_content[k] = '\0';
    memset(at_200, 'x', 200);
    at_200[200] = '\0';
    memset(at_201, 'y', 201);
    at_201[201] = '\0';
    struct article arts[] = {
        {.title = "tab\there\nnew line\r\x01\x1F\x7F end",
         .description = "nul-free \x08\x0C",
         .content = "He said \"hi\" \\ back\\\\slash </script> \xE2\x80\xA8 \xE2\x80\xA9",
         .author = "\"Quote\" \\Author\\",
         .source_name = "Src \"name\"\x02"},
        {.title = "invalid \xFF\xFE utf-8 \xC3 cut",
         .description = "surrogate \xED\xA0\x80 x",
         .content = "overlong \xC0\xAF and lone continuation \x80\x80",
         .url_to_image = "\xF5\x80"},
        {.title = "long content", .content = long_content},
        {.title = "exactly 200", .content = at_200},
        {.title = "201 characters", .content = at_201},
        {.title = NULL}, /* every nullable field null */
        {.title = "", .description = "", .content = "", .author = "", .source_name = ""},
    };
    size_t n = sizeof arts / sizeof arts[0];
    char urls[sizeof arts / sizeof arts[0]][64];
    for (size_t i = 0; i < n; i++) {
        snprintf(urls[i], sizeof urls[i], "https://hostile.example/%zu\"\\", i);
        arts[i].url = urls[i];
        arts[i].canonical_url = urls[i];
        arts[i].published_at = 1700000000 + (int64_t)i * 60;
        arts[i].domain = "hostile.example";
    }
    struct store_put_stats st;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, arts, n, &st, &err), 0);
    assert_int_equal(total_of(f->eng, NULL), n);
    the_page_is_the_rows_rendered(f); /* a segment in RAM */
    engine_reopen(f);
    assert_true(engine_loaded(f->eng));
    the_page_is_the_rows_rendered(f); /* its file, mapped */
    fixture_free(f);
}

static void engine_agrees_with_the_table(struct fixture *f)
{
    struct index_verify_report r;
    struct err err;
    err_clear(&err);
    assert_int_equal(f->eng->verify(f->eng, &r, &err), 0);
    if (r.missing || r.extra)
        print_message("verify: %s\n", r.detail);
    assert_int_equal(r.missing, 0);
    assert_int_equal(r.extra, 0);
    assert_int_equal(r.indexed, r.rows);
    assert_true(r.rows > 0);
}

static void put_one_article(struct fixture *f, const char *url, const char *title, int64_t at)
{
    struct article art = {0};
    struct store_put_stats st;
    struct err err;
    art.url = url;
    art.canonical_url = url;
    art.title = title;
    art.description = "Written while the index was closed";
    art.content = "Reopening reads what it missed";
    art.published_at = at;
    art.domain = "closed.example";
    snprintf(art.language, sizeof art.language, "en");
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &art, 1, &st, &err), 0);
}

static void delete_oldest_rows(struct fixture *f, int n)
{
    sqlite3 *db;
    struct err err;
    char sql[160];
    err_clear(&err);
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    snprintf(sql, sizeof sql,
             "DELETE FROM articles WHERE id IN (SELECT id FROM articles ORDER BY id LIMIT %d)", n);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    store_sqlite_conn_close(db);
}

/* Closing writes the segments; opening maps them and reads only the rows
 * past them: new, replaced (a new publication time gives a new id: the
 * URL finds the old document) and deleted ones. */
static void a_reopened_index_maps_its_files_and_catches_up(void **state)
{
    struct fixture *f = *state;
    char dir[4200];
    struct stat st;

    snprintf(dir, sizeof dir, "%s.engine/MANIFEST", store_sqlite_path(f->s));
    engine_reopen(f);
    assert_true(engine_loaded(f->eng));
    assert_int_equal(stat(dir, &st), 0);
    engine_agrees_with_the_table(f);
    the_bench_query_mix_gives_fts5s_answers(state);

    f->eng->free(f->eng);
    f->eng = NULL;
    put_one_article(f, "https://closed.example/a", "Quuxwhile first version", 1650000000);
    put_one_article(f, "https://closed.example/b", "Quuxwhile second story", 1650000100);
    /* a new publication time: a new id, the same canonical URL */
    put_one_article(f, "https://closed.example/a", "Quuxwhile first zyxrevised", 1650000200);
    delete_oldest_rows(f, 2);
    struct err err;
    err_clear(&err);
    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &engine_opt, &err), 0);
    assert_true(engine_loaded(f->eng));
    assert_int_equal(total_of(f->eng, "quuxwhile"), 2);
    assert_int_equal(total_of(f->eng, "zyxrevised"), 1);
    assert_int_equal(total_of(f->eng, "\"first version\""), 0);
    /* Rows deleted while it was closed (no replacing row) leave at the
     * first poll, which makes the row count check an open leaves out. */
    int64_t until = now_ms() + 5000;
    while (total_of(f->eng, NULL) != total_of(f->fts, NULL) && now_ms() < until)
        usleep(20 * 1000);
    assert_int_equal(total_of(f->eng, NULL), total_of(f->fts, NULL));
    engine_agrees_with_the_table(f);
    random_queries_give_fts5s_answers(state);
    newest_headline_agrees(state);
}

/* The first build reads the table in id order, not the seq index's: a row
 * changed after newer ones were written (its seq past theirs) is built
 * in its new form once, and the follower goes on from the highest seq,
 * not from the last row read. */
static void a_first_build_reads_the_table_in_id_order(void **state)
{
    struct fixture *f = fixture_new(false);
    struct err err;
    (void)state;

    f->eng->free(f->eng);
    f->eng = NULL;
    put_one_article(f, "https://closed.example/a", "Quuxorder first version", 1650000000);
    put_one_article(f, "https://closed.example/b", "Quuxorder second story", 1650000100);
    put_one_article(f, "https://closed.example/c", "Quuxorder third story", 1650000200);
    /* the same URL and time: the same id, a new seq past c's */
    put_one_article(f, "https://closed.example/a", "Quuxorder first zyxorder", 1650000000);
    sqlite3 *db;
    err_clear(&err);
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), true, &err), 0);
    int64_t first_by_seq = 0, first_by_id = 0;
    assert_int_equal(store_sqlite_query_int(db, "SELECT id FROM articles ORDER BY seq DESC LIMIT 1",
                                            &first_by_seq, &err),
                     0);
    assert_int_equal(store_sqlite_query_int(db, "SELECT min(id) FROM articles", &first_by_id, &err),
                     0);
    store_sqlite_conn_close(db);
    assert_int_equal(first_by_seq, first_by_id); /* the orders differ */

    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &engine_opt, &err), 0);
    assert_int_equal(total_of(f->eng, "quuxorder"), 3);
    assert_int_equal(total_of(f->eng, "zyxorder"), 1);
    assert_int_equal(total_of(f->eng, "\"first version\""), 0);
    engine_agrees_with_the_table(f);
    put_one_article(f, "https://closed.example/d", "Quuxorder fourth story", 1650000300);
    assert_int_equal(total_of(f->eng, "quuxorder"), 4);
    engine_agrees_with_the_table(f);
    fixture_free(f);
}

static void flip_byte(const char *path, long at)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, at, SEEK_SET), 0);
    int c = fgetc(fp);
    assert_int_not_equal(c, EOF);
    assert_int_equal(fseek(fp, at, SEEK_SET), 0);
    fputc(c ^ 0x5a, fp);
    fclose(fp);
}

/* Until no merge has run for a while: a merge after the next open would
 * read a damaged file's documents before the check under test does. A
 * while is 250 ms (SETTLED_QUIET checks 10 ms apart), longer than two of
 * the follower's polls (engine.c POLL_MS, 100 ms), each of which may start
 * a merge. Quiet for 50 ms was shorter than one: under make check's load a
 * merge started after it, read the byte the verify test below flips, and
 * repaired the segment before verify could find it. */
#define SETTLED_QUIET 25

static void merges_settled(struct fixture *f)
{
    int quiet = 0;
    for (int i = 0; i < 6000 && quiet < SETTLED_QUIET; i++) { /* (a minute at most) */
        struct index_stats st;
        memset(&st, 0, sizeof st);
        f->eng->stats(f->eng, &st);
        quiet = st.merging == 0 ? quiet + 1 : 0;
        struct timespec d = {0, 10 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(quiet >= SETTLED_QUIET);
}

static const char *first_segment_file(struct fixture *f, char *out, size_t cap)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s.engine", store_sqlite_path(f->s));
    DIR *d = opendir(dir);
    struct dirent *de;
    assert_non_null(d);
    out[0] = '\0';
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "seg-", 4) == 0 && !out[0])
            snprintf(out, cap, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    assert_true(out[0] != '\0');
    return out;
}

/* A damaged manifest, a segment file cut short, a table with another
 * epoch: each is noticed at open and the index is built from the table
 * again (and written anew); a flipped byte inside a segment is what
 * verify's checksum finds. */
static void a_damaged_index_directory_is_rebuilt_from_the_table(void **state)
{
    struct fixture *f = *state;
    char path[4300];
    uint64_t all = total_of(f->fts, NULL);

    f->eng->free(f->eng);
    f->eng = NULL;
    snprintf(path, sizeof path, "%s.engine/MANIFEST", store_sqlite_path(f->s));
    flip_byte(path, 30);
    engine_reopen(f);
    assert_false(engine_loaded(f->eng));
    assert_int_equal(total_of(f->eng, NULL), all);
    engine_agrees_with_the_table(f);

    f->eng->free(f->eng);
    f->eng = NULL;
    first_segment_file(f, path, sizeof path);
    assert_int_equal(truncate(path, 100), 0);
    engine_reopen(f);
    assert_false(engine_loaded(f->eng));
    assert_int_equal(total_of(f->eng, NULL), all);

    f->eng->free(f->eng);
    f->eng = NULL;
    sqlite3 *db;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE meta SET value = 'another' WHERE key = 'articles_epoch'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    store_sqlite_conn_close(db);
    engine_reopen(f);
    assert_false(engine_loaded(f->eng));
    assert_int_equal(total_of(f->eng, NULL), all);
    engine_reopen(f);
    assert_true(engine_loaded(f->eng));

    /* A store restored from an older backup: its newest rows gone and its
     * seq counter back, so new rows reuse seqs the files cover. The files
     * are not used; the new row is found. */
    f->eng->free(f->eng);
    f->eng = NULL;
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    assert_int_equal(sqlite3_exec(db,
                                  "DELETE FROM articles WHERE seq > (SELECT max(seq) - 3 FROM "
                                  "articles);"
                                  "UPDATE meta SET value = (SELECT max(seq) FROM articles)"
                                  " WHERE key = 'seq'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    store_sqlite_conn_close(db);
    put_one_article(f, "https://closed.example/restored", "Restoredzq story", 1650000400);
    engine_reopen(f);
    assert_false(engine_loaded(f->eng));
    assert_int_equal(total_of(f->eng, "restoredzq"), 1);
    assert_int_equal(total_of(f->eng, NULL), total_of(f->fts, NULL));
    all = total_of(f->fts, NULL);

    /* verify reads every byte: a flipped one deep in a file is found
     * (by verify: not by a merge of the reopened files) */
    merges_settled(f);
    f->eng->free(f->eng);
    f->eng = NULL;
    first_segment_file(f, path, sizeof path);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    flip_byte(path, (long)st.st_size - 3);
    engine_reopen(f);
    assert_true(engine_loaded(f->eng));
    struct index_verify_report r;
    assert_int_equal(f->eng->verify(f->eng, &r, &err), 0);
    assert_true(r.missing > 0);
    assert_non_null(strstr(r.detail, "checksum"));
    /* put it right for the tests after this one */
    f->eng->free(f->eng);
    f->eng = NULL;
    assert_int_equal(unlink(path), 0);
    engine_reopen(f);
    assert_false(engine_loaded(f->eng));
    engine_agrees_with_the_table(f);
    random_set_agrees(f); /* the index built again answers as before */
}

/* Segments of 37 documents from the build: the background merges (a
 * thread, installed at a poll) leave fewer, larger segments that still
 * answer as FTS5 does, pass verify, and are what a reopen maps. */
static void background_merges_keep_every_answer(void **state)
{
    struct fixture *f = *state;
    struct index_stats st;
    struct err err;
    char dir[4200];

    if (engine_opt.segment_docs == 0)
        TEST_SKIP_BY_DESIGN("merges: the one-segment run has nothing to merge "
                            "(the runs in segments of 37 merge)");
    snprintf(dir, sizeof dir, "rm -rf '%s.engine'", store_sqlite_path(f->s));
    f->eng->free(f->eng);
    f->eng = NULL;
    assert_int_equal(system(dir), 0); /* a build from nothing, on every core */
    engine_reopen(f);
    /* fewer segments than that: merged (a build makes at least this many) */
    uint64_t built =
        (total_of(f->fts, NULL) + engine_opt.segment_docs - 1) / engine_opt.segment_docs;
    assert_true(built >= 8);
    int64_t until = now_ms() + 60000;
    do {
        usleep(20000);
        f->eng->stats(f->eng, &st);
    } while (st.segments >= built && now_ms() < until);
    assert_true(st.segments < built);
    engine_agrees_with_the_table(f);
    const char *qs[] = {"the", "market OR election", "\"prime minister\"", "climate -policy"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 100};
        struct arena a;
        arena_init(&a, 0);
        err_clear(&err);
        assert_int_equal(query_parse(&a, qs[i], strlen(qs[i]), (struct query_node **)&req.q, &err),
                         0);
        for (int s = 0; s < 4; s++) {
            req.sort = (enum index_sort)s;
            same_answer(f, &req, qs[i]);
        }
        arena_release(&a);
    }
    random_set_agrees(f); /* the merged segments, before any reopen */
    engine_reopen(f);     /* after a checkpoint at close: the merged files */
    assert_true(engine_loaded(f->eng));
    f->eng->stats(f->eng, &st);
    assert_true(st.segments < built);
    engine_agrees_with_the_table(f);
    random_set_agrees(f);
}

/* A second process on the same store reads the files but does not write
 * them (the directory's lock): both answer alike. */
static void a_second_opener_reads_the_files_without_writing(void **state)
{
    /* A fixture of its own whose writer does not checkpoint on its timer
     * during the test: a timed checkpoint of the writer replaces MANIFEST
     * too, and on a loaded machine the test outlasts the 5 s default. */
    int64_t checkpoint_ms = engine_opt.checkpoint_ms;
    engine_opt.checkpoint_ms = 24 * 3600 * 1000;
    struct fixture *f = fixture_new(true);
    engine_opt.checkpoint_ms = checkpoint_ms;
    struct index_backend *other = NULL;
    struct err err;
    char path[4300];
    struct stat before, after;

    snprintf(path, sizeof path, "%s.engine/MANIFEST", store_sqlite_path(f->s));
    assert_int_equal(stat(path, &before), 0);
    err_clear(&err);
    assert_int_equal(index_engine_new(&other, store_sqlite_path(f->s), &engine_opt, &err), 0);
    assert_true(engine_loaded(other));
    put_one_article(f, "https://closed.example/c", "Twoopeners story", 1650000300);
    assert_int_equal(total_of(other, "twoopeners"), 1);
    assert_int_equal(total_of(f->eng, "twoopeners"), 1);
    assert_int_equal(total_of(other, NULL), total_of(f->eng, NULL));
    other->free(other);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino); /* the reader replaced nothing */
    random_set_agrees(f);
    fixture_free(f);
    (void)state;
}

static struct fixture *shared;

static int group_setup(void **state)
{
    (void)state;
    shared = fixture_new(true);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    fixture_free(shared);
    text_thread_release();
    return 0;
}

static int with_shared(void **state)
{
    *state = shared;
    return 0;
}

/* The three groups: the same tests over one segment, over segments of 37
 * documents, and with every search split over two threads. With an
 * argument N (1-3) only group N runs: make unit runs them as three
 * processes (scripts/run-unit.sh, test_index_engine:N) so that they share
 * the cores instead of one process taking three times as long as any other
 * binary. Without one, all three run, in order. Segments of 37 documents
 * put top-k merging across segments, per-segment deletions and merges
 * against FTS5 too; the split group gives the same answers as FTS5, so the
 * same as one thread's. */
static const struct {
    const char *name;
    uint32_t segment_docs;
    enum index_split split;
} groups[] = {
    {"one segment", 0, INDEX_SPLIT_IDLE},
    {"segments of 37", 37, INDEX_SPLIT_IDLE},
    {"segments of 37, searches split over two threads", 37, INDEX_SPLIT_ALWAYS},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(the_bench_query_mix_gives_fts5s_answers, with_shared),
        cmocka_unit_test_setup(random_queries_give_fts5s_answers, with_shared),
        cmocka_unit_test_setup(newest_headline_agrees, with_shared),
        cmocka_unit_test_setup(a_walk_of_pages_without_totals_gives_every_match, with_shared),
        cmocka_unit_test_setup(an_exhausted_and_under_or_scores_nothing, with_shared),
        cmocka_unit_test_setup(a_spent_time_budget_is_a_timeout, with_shared),
        cmocka_unit_test_setup(an_upsert_replaces_and_new_rows_are_found_at_once, with_shared),
        cmocka_unit_test_setup(a_deleted_row_leaves_the_index, with_shared),
        cmocka_unit_test(a_store_delete_leaves_the_index_by_the_log_not_the_count),
        cmocka_unit_test_setup(many_small_batches_are_merged_and_still_agree, with_shared),
        cmocka_unit_test_setup(a_reopened_index_maps_its_files_and_catches_up, with_shared),
        cmocka_unit_test_setup(a_damaged_index_directory_is_rebuilt_from_the_table, with_shared),
        cmocka_unit_test(a_second_opener_reads_the_files_without_writing),
        cmocka_unit_test(a_first_build_reads_the_table_in_id_order),
        cmocka_unit_test_setup(background_merges_keep_every_answer, with_shared),
        cmocka_unit_test(an_empty_store_has_no_matches_until_one_arrives),
        cmocka_unit_test_setup(the_stored_pages_are_the_rendered_rows, with_shared),
        cmocka_unit_test(hostile_strings_are_stored_as_the_api_renders_them),
    };
    if (getenv(DIFF_STORE_ENV)) {
        const struct CMUnitTest queries[] = {
            cmocka_unit_test_setup(the_bench_query_mix_gives_fts5s_answers, with_shared),
            cmocka_unit_test_setup(random_queries_give_fts5s_answers, with_shared),
            cmocka_unit_test_setup(newest_headline_agrees, with_shared),
        };
        return cmocka_run_group_tests_name(getenv(DIFF_STORE_ENV), queries, group_setup,
                                           group_teardown);
    }
    char *end = NULL;
    long only = argc > 1 ? strtol(argv[1], &end, 10) : 0;
    if (argc > 2 || (end && (*end || end == argv[1])) || only < 0 || only > 3) {
        fprintf(stderr, "usage: test_index_engine [1|2|3]\n");
        return 2;
    }
    int failed = 0;
    for (int group = 1; group <= 3; group++) {
        if (only > 0 && group != only)
            continue;
        engine_opt.segment_docs = groups[group - 1].segment_docs;
        engine_opt.split = groups[group - 1].split;
        failed += cmocka_run_group_tests_name(groups[group - 1].name, tests, group_setup,
                                              group_teardown);
    }
    return failed;
}
