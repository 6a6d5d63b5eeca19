/* Differential tests of index_counts and index_facets (issue 26): the
 * engine, over many small segments and with deleted rows, against FTS5's
 * GROUP BY and against a brute-force count of the rows (test_oracle.h),
 * for random requests and random bucket bounds (many on an article's own
 * second, where an off-by-one would show). */
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
#include <pthread.h>
#include <cmocka.h>
#include "test_ingest_file.h"
#include "test_requests.h"
#include "test_tmpdir.h"
#include <sqlite3.h>
#include "index/backend.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "store/journal.h"
#include "store/sqlite/db.h"
#include "store/store.h"
#include "index/engine/warm.h"
#include "index/engine/columns.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"

#include "test_oracle.h"

#define DATA "../data/api/"
#define REQUESTS 300
#define MAX_BUCKETS 40

struct fixture {
    char dir[64];
    struct store *s;
    struct index_backend *fts, *eng;
    struct test_corpus c;
    struct oracle o;
};

static uint64_t total_of(struct index_backend *b)
{
    struct arena a;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX};
    struct index_result r;
    struct err err;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(b->search(b, &a, &req, &r, &err), 0);
    arena_release(&a);
    return r.total;
}

/* req with its prefixes expanded for backend b (test_requests.h), which
 * the random requests here never make too broad. */
static const struct index_request *expanded_ok(struct index_backend *b, struct arena *a,
                                               const struct index_request *req)
{
    struct err err;
    int rc;
    err_clear(&err);
    const struct index_request *x = expanded(b, a, req, &rc, &err);
    assert_int_equal(rc, 0);
    return x;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct index_engine_options opt = {.segment_docs = 37, .no_files = true};
    struct err err;
    size_t n;
    assert_non_null(f);
    err_clear(&err);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-counts-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(ingest_sources_import(f->s, DATA "sources.jsonl", &n, &err), 0);
    test_ingest_file(f->s, DATA "articles.jsonl");
    test_ingest_file(f->s, DATA "handmade.jsonl");
    assert_int_equal(index_fts5_new(&f->fts, store_sqlite_path(f->s), &err), 0);
    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->s), &opt, &err), 0);

    oracle_load(&f->o, store_sqlite_path(f->s));
    /* the random requests' words, sources, domains and times */
    struct arena a;
    struct index_request all = {.from = INT64_MIN, .to = INT64_MAX, .limit = 2000};
    struct index_result r;
    struct store_reader *rd = NULL;
    arena_init(&a, 0);
    assert_int_equal(f->fts->search(f->fts, &a, &all, &r, &err), 0);
    int64_t *ids = arena_calloc(&a, r.n + 1, sizeof *ids);
    struct article *arts = arena_calloc(&a, r.n + 1, sizeof *arts);
    for (size_t i = 0; i < r.n; i++)
        ids[i] = r.docs[i].id;
    assert_int_equal(store_reader_open(&rd, store_sqlite_path(f->s), &err), 0);
    assert_int_equal(store_reader_articles(rd, &a, ids, r.n, arts, &err), 0);
    store_reader_close(rd);
    test_corpus_learn(&f->c, arts, r.n);
    arena_release(&a);
    *state = f;
    return 0;
}

/* Deleted rows: the segments then carry deletion sets, which the counts
 * must leave out (one row of every 11), and the plain-term path (a segment
 * without deletions) gives way to the visit. */
static void delete_rows(struct fixture *f)
{
    struct err err;
    err_clear(&err);
    uint64_t before = total_of(f->eng);
    sqlite3 *db;
    assert_int_equal(store_sqlite_conn_open(&db, store_sqlite_path(f->s), false, &err), 0);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM articles WHERE id % 11 = 3", NULL, NULL, NULL),
                     SQLITE_OK);
    int gone = sqlite3_changes(db);
    store_sqlite_conn_close(db);
    assert_true(gone > 5);
    for (int i = 0; i < 100 && total_of(f->eng) != before - (uint64_t)gone; i++)
        usleep(50 * 1000);
    assert_int_equal(total_of(f->eng), before - (uint64_t)gone);

    oracle_release(&f->o);
    oracle_load(&f->o, store_sqlite_path(f->s));
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    f->eng->free(f->eng);
    f->fts->free(f->fts);
    store_close(f->s);
    remove_tree(f->dir);
    test_corpus_release(&f->c);
    oracle_release(&f->o);
    free(f);
    return 0;
}

/* Ascending bounds over the corpus' span: evenly spaced, or articles' own
 * seconds (and one either side). */
static size_t random_bounds(struct fixture *f, int64_t *b)
{
    size_t nb = 1 + rnd(MAX_BUCKETS);
    int64_t lo = f->c.t_min - 1, hi = f->c.t_max + 2;
    if (rnd(2)) {
        int64_t step = (hi - lo) / (int64_t)nb + 1;
        for (size_t i = 0; i <= nb; i++)
            b[i] = lo + (int64_t)i * step;
        return nb;
    }
    size_t k = 0;
    for (size_t i = 0; i <= nb; i++)
        b[k++] = f->c.times[rnd((unsigned)f->c.n_times)] + (int64_t)rnd(3) - 1;
    for (size_t i = 1; i < k; i++) /* insertion sort, then drop repeats */
        for (size_t j = i; j > 0 && b[j - 1] > b[j]; j--) {
            int64_t t = b[j];
            b[j] = b[j - 1];
            b[j - 1] = t;
        }
    size_t m = 1;
    for (size_t i = 1; i < k; i++)
        if (b[i] != b[m - 1])
            b[m++] = b[i];
    if (m < 2)
        b[m++] = b[0] + 1;
    return m - 1;
}

static void counts_agree(void **state)
{
    struct fixture *f = *state;
    size_t decided = 0, with_matches = 0;
    srand(26);
    for (int i = 0; i < REQUESTS; i++) {
        struct arena a;
        struct index_request req;
        struct oracle_q *tree;
        struct err err;
        char q[8192];
        int64_t b[MAX_BUCKETS + 2];
        uint64_t ce[MAX_BUCKETS + 1] = {0}, cf[MAX_BUCKETS + 1] = {0};
        uint64_t yes[MAX_BUCKETS + 1] = {0};
        bool maybe = false;

        arena_init(&a, 0);
        err_clear(&err);
        oracle_request_random(&f->o, &f->c, &a, &req, &tree, q, sizeof q);
        if (q[0])
            assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
        size_t nb = random_bounds(f, b);
        const struct index_request *xe = expanded_ok(f->eng, &a, &req);
        const struct index_request *xf = expanded_ok(f->fts, &a, &req);
        assert_int_equal(f->eng->counts(f->eng, &a, xe, b, nb, ce, &err), 0);
        assert_int_equal(f->fts->counts(f->fts, &a, xf, b, nb, cf, &err), 0);
        for (size_t k = 0; k < nb; k++) {
            if (ce[k] != cf[k])
                fail_msg("q=[%s] bucket %zu [%lld, %lld): engine %llu, fts5 %llu", q, k,
                         (long long)b[k], (long long)b[k + 1], (unsigned long long)ce[k],
                         (unsigned long long)cf[k]);
        }
        for (size_t d = 0; d < f->o.n; d++) {
            const struct oracle_doc *doc = &f->o.doc[d];
            if (!oracle_filters_pass(doc, &req) || doc->t < b[0] || doc->t >= b[nb])
                continue;
            enum oracle_value v = tree ? oracle_eval(doc, req.q_fields, tree) : ORACLE_YES;
            size_t k = 0;
            while (doc->t >= b[k + 1])
                k++;
            yes[k] += v == ORACLE_YES;
            maybe |= v == ORACLE_MAYBE;
        }
        if (!maybe) {
            decided++;
            for (size_t k = 0; k < nb; k++) {
                if (ce[k] != yes[k])
                    fail_msg("q=[%s] bucket %zu [%lld, %lld): engine %llu, brute force %llu", q, k,
                             (long long)b[k], (long long)b[k + 1], (unsigned long long)ce[k],
                             (unsigned long long)yes[k]);
                with_matches += yes[k] > 0;
            }
        }
        arena_release(&a);
    }
    print_message("counts: %d requests, %zu decided by the brute force, %zu buckets with matches\n",
                  REQUESTS, decided, with_matches);
    assert_true(decided > REQUESTS / 4);
    assert_true(with_matches > REQUESTS / 10);
}

static void facets_agree(void **state)
{
    struct fixture *f = *state;
    size_t nonempty = 0;
    srand(2026);
    for (int i = 0; i < REQUESTS; i++) {
        struct arena a;
        struct index_request req;
        struct oracle_q *tree;
        struct err err;
        char q[8192];
        struct index_facet_top te[INDEX_FACET_N] = {0}, tf[INDEX_FACET_N] = {0};
        size_t size = rnd(3) ? 100 : 1 + rnd(5);

        arena_init(&a, 0);
        err_clear(&err);
        oracle_request_random(&f->o, &f->c, &a, &req, &tree, q, sizeof q);
        if (q[0])
            assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
        unsigned mask = (1u << INDEX_FACET_N) - 1;
        const struct index_request *xe = expanded_ok(f->eng, &a, &req);
        const struct index_request *xf = expanded_ok(f->fts, &a, &req);
        assert_int_equal(f->eng->facets(f->eng, &a, xe, mask, size, te, &err), 0);
        assert_int_equal(f->fts->facets(f->fts, &a, xf, mask, size, tf, &err), 0);
        for (int k = 0; k < INDEX_FACET_N; k++) {
            if (te[k].n != tf[k].n)
                fail_msg("q=[%s] facet %s: engine %zu values, fts5 %zu", q,
                         index_facet_name((enum index_facet)k), te[k].n, tf[k].n);
            for (size_t j = 0; j < te[k].n; j++) {
                const struct index_facet_value *x = &te[k].v[j], *y = &tf[k].v[j];
                if (x->len != y->len || memcmp(x->value, y->value, x->len) || x->count != y->count)
                    fail_msg("q=[%s] facet %s #%zu: engine %s=%llu, fts5 %s=%llu", q,
                             index_facet_name((enum index_facet)k), j, x->value,
                             (unsigned long long)x->count, y->value, (unsigned long long)y->count);
                if (j > 0) /* the documented order */
                    assert_true(te[k].v[j - 1].count > x->count ||
                                (te[k].v[j - 1].count == x->count &&
                                 strcmp(te[k].v[j - 1].value, x->value) < 0));
            }
            nonempty += te[k].n > 0;
        }
        arena_release(&a);
    }
    print_message("facets: %d requests, %zu facet lists with values\n", REQUESTS, nonempty);
    assert_true(nonempty > REQUESTS);
}

/* The columns of a whole pass (index/engine/warm.h), asked for with a
 * deadline already past on an engine that has made none: the answer is
 * ERR_WARMING at once, saying which column, and the columns are made
 * meanwhile, so that a later request (with time to wait) gets the same
 * facets as one without a deadline, and FTS5's. Runs first: after it,
 * every column is made. */
static void columns_made_past_the_deadline(void **state)
{
    struct fixture *f = *state;
    struct arena a;
    struct err err;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .deadline_ms = 1};
    struct index_facet_top te[INDEX_FACET_N] = {0}, tw[INDEX_FACET_N] = {0},
                           tf[INDEX_FACET_N] = {0};
    struct index_story_matches sm;
    unsigned mask = (1u << INDEX_FACET_N) - 1;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(f->eng->facets(f->eng, &a, &req, 1u << INDEX_FACET_AUTHOR, 100, te, &err),
                     ERR_WARMING);
    assert_non_null(strstr(err.msg, "author column"));
    err_clear(&err);
    assert_int_equal(f->eng->story_matches(f->eng, &a, &req, 10, &sm, &err), ERR_WARMING);
    assert_non_null(strstr(err.msg, "story column"));

    /* with time to wait: every column made (by the threads, or by this
     * request's own wait), the same facets as without a deadline */
    req.deadline_ms = clock_mono_ms() + 60000;
    err_clear(&err);
    assert_int_equal(f->eng->facets(f->eng, &a, &req, mask, 100, tw, &err), 0);
    assert_int_equal(f->eng->story_matches(f->eng, &a, &req, 10, &sm, &err), 0);
    assert_true(sm.n + sm.alone > 0);
    req.deadline_ms = 0;
    assert_int_equal(f->eng->facets(f->eng, &a, &req, mask, 100, te, &err), 0);
    assert_int_equal(f->fts->facets(f->fts, &a, &req, mask, 100, tf, &err), 0);
    for (int k = 0; k < INDEX_FACET_N; k++) {
        assert_int_equal(tw[k].n, te[k].n);
        assert_int_equal(tw[k].n, tf[k].n);
        assert_true(te[k].n > 0);
        for (size_t j = 0; j < te[k].n; j++) {
            assert_string_equal(tw[k].v[j].value, te[k].v[j].value);
            assert_string_equal(tf[k].v[j].value, te[k].v[j].value);
            assert_int_equal(tw[k].v[j].count, te[k].v[j].count);
            assert_int_equal(tf[k].v[j].count, te[k].v[j].count);
        }
    }
    /* made now: a deadline already past finds no column to wait for (the
     * search itself may then stop at it: ERR_TIMEOUT) */
    req.deadline_ms = 1;
    assert_int_not_equal(f->eng->facets(f->eng, &a, &req, 1u << INDEX_FACET_AUTHOR, 100, te, &err),
                         ERR_WARMING);
    assert_int_not_equal(f->eng->story_matches(f->eng, &a, &req, 10, &sm, &err), ERR_WARMING);
    arena_release(&a);
}

/* A column searches asked for is marked in the index directory (an empty
 * WARM-<kind>, private to the owner) and made in the background by the
 * next start without any request asking: a request with a deadline
 * already past then finds nothing to wait for, where a column never asked
 * for still waits. */
static void asked_for_columns_are_made_at_the_next_start(void **state)
{
    struct fixture *f = *state;
    /* one segment: no merge makes a new one (without the columns) meanwhile */
    struct index_engine_options opt = {.warm_min_docs = 1};
    struct index_backend *eng;
    struct arena a;
    struct err err;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX};
    struct index_facet_top top[INDEX_FACET_N] = {0};
    struct index_story_matches sm;
    char mark[512];
    struct stat st;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(index_engine_new(&eng, store_sqlite_path(f->s), &opt, &err), 0);
    req.deadline_ms = clock_mono_ms() + 60000;
    assert_int_equal(eng->facets(eng, &a, &req, 1u << INDEX_FACET_AUTHOR, 100, top, &err), 0);
    assert_int_equal(eng->story_matches(eng, &a, &req, 10, &sm, &err), 0);
    eng->free(eng);
    static const char *const marks[] = {"WARM-author", "WARM-story"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(mark, sizeof mark, "%s.engine/%s", store_sqlite_path(f->s), marks[i]);
        assert_int_equal(stat(mark, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
    }
    snprintf(mark, sizeof mark, "%s.engine/WARM-domain", store_sqlite_path(f->s));
    assert_int_not_equal(stat(mark, &st), 0); /* never asked for */

    assert_int_equal(index_engine_new(&eng, store_sqlite_path(f->s), &opt, &err), 0);
    /* no request yet: the start's threads make them (20 s at most) */
    bool all = false;
    for (int tries = 0; tries < 1000 && !all; tries++) {
        struct eng_snap *sn = eng_slot_get(&((struct index_engine *)eng)->slot);
        all = sn->nseg > 0;
        for (size_t i = 0; i < sn->nseg; i++) {
            struct eng_facet_cols *c = atomic_load(&sn->segs[i]->facets);
            all = all && c && atomic_load(&c->col[INDEX_FACET_AUTHOR]) &&
                  atomic_load(&sn->segs[i]->story) && atomic_load(&sn->segs[i]->alone);
        }
        eng_snap_unref(sn);
        if (!all)
            usleep(20 * 1000);
    }
    assert_true(all);
    req.deadline_ms = 1;
    assert_int_not_equal(eng->facets(eng, &a, &req, 1u << INDEX_FACET_AUTHOR, 100, top, &err),
                         ERR_WARMING);
    assert_int_not_equal(eng->story_matches(eng, &a, &req, 10, &sm, &err), ERR_WARMING);
    /* the domain facet was not made: it waits as on a first use */
    assert_int_equal(eng->facets(eng, &a, &req, 1u << INDEX_FACET_DOMAIN, 100, top, &err),
                     ERR_WARMING);
    eng->free(eng);
    arena_release(&a);
}

/* A column being made is waited for by who asks for that column only: a
 * search that needs another column of the segment (a language filter's,
 * the length norms of relevancy) makes it at once. One lock over every
 * build made the first `language=en` search after a restart of a 10 M
 * store wait a second behind the warm threads' columns. Another thread
 * "making" the author column is stood for by its bit (no thread touches
 * these columns but this one); a wait for it would hang, which the alarm
 * turns into a failure. Then threads asking for one column at once all
 * get the one column made. */
struct col_ask {
    struct eng_segment *seg;
    const struct eng_facet_col *col;
    int rc;
};

static void *ask_author(void *arg)
{
    struct col_ask *q = arg;
    q->rc = eng_facet_column(q->seg, INDEX_FACET_AUTHOR, &q->col);
    return NULL;
}

static void a_column_being_made_keeps_no_other_waiting(void **state)
{
    struct fixture *f = *state;
    struct index_engine_options opt = {.segment_docs = 37, .no_files = true};
    struct index_backend *eng;
    struct err err;
    err_clear(&err);
    assert_int_equal(index_engine_new(&eng, store_sqlite_path(f->s), &opt, &err), 0);
    struct eng_snap *sn = eng_slot_get(&((struct index_engine *)eng)->slot);
    assert_true(sn->nseg >= 2);
    struct eng_segment *seg = sn->segs[0];
    const uint8_t *norms;
    assert_int_equal(eng_length_norms(seg, &norms), 0); /* the columns' struct exists */
    struct eng_facet_cols *cols = atomic_load(&seg->facets);
    assert_non_null(cols);

    cols->building |= 1u << INDEX_FACET_AUTHOR; /* "another thread makes it" */
    alarm(60);
    const struct eng_facet_col *lang;
    const struct eng_source_docs *by_source;
    assert_int_equal(eng_facet_column(seg, INDEX_FACET_LANGUAGE, &lang), 0);
    assert_non_null(lang);
    assert_true(lang->vals.n > 0);
    assert_int_equal(eng_source_docs(seg, &by_source), 0);
    assert_non_null(by_source);
    alarm(0);
    assert_null(atomic_load(&cols->col[INDEX_FACET_AUTHOR]));   /* nobody made it */
    assert_int_equal(cols->building, 1u << INDEX_FACET_AUTHOR); /* the others' bits cleared */
    cols->building = 0;

    /* many ask for the author column of another segment at once: one
     * column, the same for all (two made would differ, and leak) */
    struct col_ask q[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        q[i] = (struct col_ask){.seg = sn->segs[1]};
        assert_int_equal(pthread_create(&th[i], NULL, ask_author, &q[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(q[i].rc, 0);
        assert_non_null(q[i].col);
        assert_ptr_equal(q[i].col, q[0].col);
    }
    assert_ptr_equal(atomic_load(&atomic_load(&sn->segs[1]->facets)->col[INDEX_FACET_AUTHOR]),
                     q[0].col);
    eng_snap_unref(sn);
    eng->free(eng);
}

static void after_deletions_too(void **state)
{
    struct fixture *f = *state;
    delete_rows(f);
    counts_agree(state);
    facets_agree(state);
}

int main(void)
{
    (void)random_request; /* test_requests.h's: this file draws its own (test_oracle.h) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_made_past_the_deadline),
        cmocka_unit_test(asked_for_columns_are_made_at_the_next_start),
        cmocka_unit_test(a_column_being_made_keeps_no_other_waiting),
        cmocka_unit_test(counts_agree),
        cmocka_unit_test(facets_agree),
        cmocka_unit_test(after_deletions_too),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
