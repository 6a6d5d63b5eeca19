/* push/follow.h over a real SQLite store: rows committed after the start
 * (by an import in another thread while the follower waits and polls) are
 * delivered exactly once each, in seq order, with their match docs; an
 * upsert comes again under its new seq; batches cut by max_rows and rows
 * refused by the callback change nothing of that; a wait without commits
 * times out, a stop flag ends it; a skip passes over what is there. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "test_ingest_file.h"
#include "test_tmpdir.h"

#include "article/json.h"
#include "index/match.h"
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "push/follow.h"
#include "store/journal.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"

#define DATA "../data/api/"

struct fixture {
    char dir[64];
    struct store *s;
    const char *path;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    size_t n;
    assert_non_null(f);
    err_clear(&err);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-follow-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(ingest_sources_import(f->s, DATA "sources.jsonl", &n, &err), 0);
    test_ingest_file(f->s, DATA "handmade.jsonl"); /* before the follower starts */
    f->path = store_sqlite_path(f->s);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* What the callback saw. */
struct seen {
    int64_t *seq, *id;
    size_t n, cap;
    int refuse_at; /* > 0: refuse (return -1) the refuse_at-th call once */
    int calls;
    bool docs_ok; /* every doc had terms, every row rendered */
};

static int take(const struct store_row *row, const struct index_match_doc *doc, void *ctx)
{
    struct seen *s = ctx;
    const char *const *terms;
    size_t n;
    if (++s->calls == s->refuse_at) {
        s->refuse_at = 0;
        return -1;
    }
    index_match_doc_terms(doc, &terms, &n);
    struct article a;
    struct buf json;
    buf_init(&json, 0);
    store_row_article(row, &a);
    article_json(&json, &a);
    if (n == 0 || buf_error(&json) || json.len < 10 || a.id != row->id)
        s->docs_ok = false;
    buf_release(&json);
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->seq = realloc(s->seq, s->cap * sizeof *s->seq);
        s->id = realloc(s->id, s->cap * sizeof *s->id);
        if (s->seq == NULL || s->id == NULL)
            abort();
    }
    s->seq[s->n] = row->seq;
    s->id[s->n++] = row->id;
    return 0;
}

static void seen_free(struct seen *s)
{
    free(s->seq);
    free(s->id);
}

/* The seqs of the log after `after`, read directly. */
static size_t log_after(const char *path, int64_t after, int64_t **seqs)
{
    struct store_reader *r = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    struct err err;
    size_t n = 0, cap = 1024;
    err_clear(&err);
    *seqs = calloc(cap, sizeof **seqs);
    assert_int_equal(store_reader_open(&r, path, &err), 0);
    assert_int_equal(store_rows_after(&rows, r, after, &err), 0);
    while (store_rows_next(rows, &row, &err) == 1) {
        assert_true(n < cap);
        (*seqs)[n++] = row.seq;
    }
    store_rows_free(rows);
    store_reader_close(r);
    return n;
}

struct importer {
    struct store *s;
    atomic_bool done;
};

static void *import_later(void *arg)
{
    struct importer *im = arg;
    clock_sleep_ms(150); /* the follower is waiting by then */
    test_ingest_file(im->s, DATA "articles.jsonl");
    test_ingest_file(im->s, DATA "updates.jsonl"); /* upserts of rows read before */
    atomic_store(&im->done, true);
    return NULL;
}

static void commits_after_the_start_arrive_once_each_in_seq_order(void **state)
{
    struct fixture *f = *state;
    struct push_follow *fl = NULL;
    struct seen s = {.docs_ok = true, .refuse_at = 5};
    struct importer im = {.s = f->s};
    struct err err;
    int64_t start, *want;
    pthread_t t;

    err_clear(&err);
    assert_int_equal(push_follow_new(&fl, f->path, 0, &err), 0);
    assert_int_equal(push_follow_head(fl, &start, &err), 0);
    assert_true(start > 0);
    push_follow_free(fl);
    assert_int_equal(push_follow_new(&fl, f->path, start, &err), 0);
    assert_int_equal(push_follow_position(fl), start);
    /* Nothing yet. */
    assert_int_equal(push_follow_poll(fl, take, &s, 0, &err), 0);
    assert_int_equal(push_follow_wait(fl, NULL, 100, &err), 0);

    assert_int_equal(pthread_create(&t, NULL, import_later, &im), 0);
    int64_t deadline = clock_mono_ms() + 60000;
    for (;;) {
        bool done = atomic_load(&im.done); /* before the poll: it then sees every commit */
        int rc = push_follow_poll(fl, take, &s, 7, &err); /* small batches */
        assert_true(rc >= 0 || rc == -1);                 /* -1: the refused row */
        if (done && rc == 0 && push_follow_wait(fl, NULL, 0, &err) == 0)
            break;
        assert_true(clock_mono_ms() < deadline);
        assert_true(push_follow_wait(fl, NULL, 1000, &err) >= 0);
    }
    pthread_join(t, NULL);

    size_t n = log_after(f->path, start, &want);
    assert_true(n > 300);
    assert_int_equal(s.n, n);
    assert_memory_equal(s.seq, want, n * sizeof *want);
    for (size_t i = 1; i < s.n; i++)
        assert_true(s.seq[i - 1] < s.seq[i]);
    assert_int_equal(push_follow_position(fl), want[n - 1]);
    assert_true(s.docs_ok);
    assert_int_equal(s.refuse_at, 0); /* the refused row came again */
    free(want);
    seen_free(&s);
    push_follow_free(fl);
}

/* A commit wakes a wait at once (well within a second), not at its end. */
struct committer {
    struct store *s;
    const char *file;
};

static void *commit_soon(void *arg)
{
    struct committer *c = arg;
    clock_sleep_ms(200);
    test_ingest_file(c->s, c->file);
    return NULL;
}

static void a_commit_ends_a_wait_and_a_stop_flag_too(void **state)
{
    struct fixture *f = *state;
    struct push_follow *fl = NULL;
    struct seen s = {.docs_ok = true};
    struct committer c = {.s = f->s, .file = DATA "updates.jsonl"};
    struct err err;
    int64_t head;
    pthread_t t;

    err_clear(&err);
    assert_int_equal(push_follow_new(&fl, f->path, 0, &err), 0);
    assert_true(push_follow_poll(fl, take, &s, 0, &err) > 50); /* everything there is */
    assert_int_equal(push_follow_head(fl, &head, &err), 0);
    assert_int_equal(push_follow_position(fl), head);
    size_t before = s.n;

    assert_int_equal(pthread_create(&t, NULL, commit_soon, &c), 0);
    int64_t t0 = clock_mono_ms();
    assert_int_equal(push_follow_wait(fl, NULL, 30000, &err), 1);
    assert_true(clock_mono_ms() - t0 < 10000);
    pthread_join(t, NULL);
    assert_int_equal(push_follow_poll(fl, take, &s, 0, &err), 2); /* the two upserts */
    assert_int_equal(s.n, before + 2);

    atomic_bool stop = true;
    t0 = clock_mono_ms();
    assert_int_equal(push_follow_wait(fl, &stop, 30000, &err), 0);
    assert_true(clock_mono_ms() - t0 < 10000);
    seen_free(&s);
    push_follow_free(fl);
}

/* fn > 0 stops a poll after taking the row; the next poll goes on. */
static int take_one(const struct store_row *row, const struct index_match_doc *doc, void *ctx)
{
    (void)doc;
    *(int64_t *)ctx = row->seq;
    return 1;
}

static void a_callback_can_take_one_row_at_a_time(void **state)
{
    struct fixture *f = *state;
    struct push_follow *fl = NULL;
    struct err err;
    int64_t *want, got = 0;
    err_clear(&err);
    size_t n = log_after(f->path, 0, &want);
    assert_int_equal(push_follow_new(&fl, f->path, 0, &err), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(push_follow_poll(fl, take_one, &got, 0, &err), 1);
        assert_int_equal(got, want[i]);
        assert_int_equal(push_follow_wait(fl, NULL, 0, &err), 1); /* more may be there */
    }
    assert_int_equal(push_follow_poll(fl, take_one, &got, 0, &err), 0);
    assert_int_equal(push_follow_wait(fl, NULL, 0, &err), 0);
    free(want);
    push_follow_free(fl);
}

/* A skip moves to the head without handing over a row; a wait after it
 * sees only later commits, and the next poll gives only those. */
static void a_skip_passes_over_what_is_there(void **state)
{
    struct fixture *f = *state;
    struct push_follow *fl = NULL;
    struct seen s = {.docs_ok = true};
    struct err err;
    int64_t head, *want;

    err_clear(&err);
    assert_int_equal(push_follow_new(&fl, f->path, 0, &err), 0);
    assert_int_equal(push_follow_wait(fl, NULL, 0, &err), 1); /* never polled */
    assert_int_equal(push_follow_skip(fl, &err), 0);
    assert_int_equal(push_follow_head(fl, &head, &err), 0);
    assert_true(head > 50);
    assert_int_equal(push_follow_position(fl), head);
    assert_int_equal(push_follow_wait(fl, NULL, 0, &err), 0); /* nothing since */
    assert_int_equal(push_follow_poll(fl, take, &s, 0, &err), 0);
    assert_int_equal(s.n, 0);

    test_ingest_file(f->s, DATA "updates.jsonl");
    assert_int_equal(push_follow_wait(fl, NULL, 0, &err), 1);
    size_t n = log_after(f->path, head, &want);
    assert_int_equal(n, 2); /* the two upserts */
    assert_int_equal(push_follow_poll(fl, take, &s, 0, &err), 2);
    assert_memory_equal(s.seq, want, n * sizeof *want);
    assert_true(s.docs_ok);
    /* A skip never moves back: at the head already, it stays there. */
    assert_int_equal(push_follow_skip(fl, &err), 0);
    assert_int_equal(push_follow_position(fl), want[1]);
    free(want);
    seen_free(&s);
    push_follow_free(fl);
}

static void a_missing_log_is_an_error(void **state)
{
    (void)state;
    struct push_follow *fl = (struct push_follow *)&state; /* must be reset */
    struct err err;
    err_clear(&err);
    assert_true(push_follow_new(&fl, "/nonexistent/newsd.db", 0, &err) < 0);
    assert_null(fl);
    assert_true(err.msg[0] != '\0');
    push_follow_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commits_after_the_start_arrive_once_each_in_seq_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_commit_ends_a_wait_and_a_stop_flag_too, setup, teardown),
        cmocka_unit_test_setup_teardown(a_callback_can_take_one_row_at_a_time, setup, teardown),
        cmocka_unit_test_setup_teardown(a_skip_passes_over_what_is_there, setup, teardown),
        cmocka_unit_test(a_missing_log_is_an_error),
    };
    return cmocka_run_group_tests_name("follow", tests, NULL, NULL);
}
