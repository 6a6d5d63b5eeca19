/* push/live.h, the live streams' hub, over a real SQLite store's log: a
 * subscriber at the head gets each matching article committed after it
 * once, in commit order, and nothing else; one that starts behind is
 * replayed and then joins the live ones without a gap or a duplicate; a
 * subscriber that refuses an article or is no longer alive is dropped and
 * released; an idle one is kept alive; a position is expired only when
 * the first change after it is older than the replay window. Waits are
 * polls with a deadline. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include "test_ingest_file.h"
#include "test_tmpdir.h"

#include "index/match.h"
#include "push/live.h"
#include "store/journal.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/err.h"

#define DATA "../data/api/"
#define INGESTED_AT 1700000000 /* test_ingest_file's clock */
#define WINDOW_S 3600
#define MAX_GOT 32
#define WAIT_MS 20000 /* a poll's deadline: generous under ASan */

struct fixture {
    char dir[64];
    struct store *s;
    struct store_journal *log;
    struct push_live *hub;
    int batch; /* articles committed so far: each commit's URLs are new */
};

/* A subscriber: what its sink was given, under mu (the hub's thread
 * writes, the test reads). */
struct sub {
    pthread_mutex_t mu;
    int64_t seq[MAX_GOT];
    char url[MAX_GOT][64];
    size_t n;
    int refuse_after; /* > 0: refuse the article after this many */
    atomic_bool gone; /* alive answers false */
    atomic_int idles;
    atomic_bool released;
};

static int sink_article(void *ctx, int64_t seq, int64_t id, int64_t published_at, const char *json,
                        size_t len)
{
    struct sub *s = ctx;
    (void)id;
    (void)published_at;
    pthread_mutex_lock(&s->mu);
    bool refuse = s->refuse_after > 0 && s->n >= (size_t)s->refuse_after;
    if (!refuse && s->n < MAX_GOT) {
        s->seq[s->n] = seq;
        /* the article's URL, from its JSON */
        const char *u = NULL;
        for (size_t i = 0; !u && i + 7 <= len; i++)
            if (!memcmp(json + i, "\"url\":\"", 7))
                u = json + i;
        const char *end = u ? memchr(u + 7, '"', (size_t)(json + len - (u + 7))) : NULL;
        snprintf(s->url[s->n], sizeof s->url[s->n], "%.*s", end ? (int)(end - (u + 7)) : 0,
                 end ? u + 7 : "");
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
    return refuse ? -1 : 0;
}

static int sink_idle(void *ctx)
{
    struct sub *s = ctx;
    atomic_fetch_add(&s->idles, 1);
    return 0;
}

static bool sink_alive(void *ctx)
{
    struct sub *s = ctx;
    return !atomic_load(&s->gone);
}

static void sink_release(void *ctx)
{
    struct sub *s = ctx;
    atomic_store(&s->released, true);
}

static const struct push_live_sink sink = {sink_article, sink_idle, sink_alive, sink_release};

static struct sub *sub_new(void)
{
    struct sub *s = calloc(1, sizeof *s);
    assert_non_null(s);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

static size_t sub_count(struct sub *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void sub_free(struct sub *s)
{
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    size_t n;
    assert_non_null(f);
    err_clear(&err);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-live-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(ingest_sources_import(f->s, DATA "sources.jsonl", &n, &err), 0);
    test_ingest_file(f->s, DATA "handmade.jsonl"); /* history before the hub */
    assert_int_equal(store_journal_open(&f->log, f->s, NULL, &err), 0);
    assert_int_equal(store_journal_start(f->log, &err), 0);
    struct push_live_config cfg = {.keepalive_ms = 50, .replay_window_s = WINDOW_S, .poll_ms = 10};
    assert_int_equal(push_live_new(&f->hub, f->log, &cfg, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    push_live_free(f->hub);
    store_journal_close(f->log);
    store_close(f->s);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* Commit n articles of match.test and, after each, one of other.test. */
static void commit_articles(struct fixture *f, int n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/batch.jsonl", f->dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    for (int i = 0; i < n; i++) {
        int k = f->batch++;
        for (int other = 0; other < 2; other++)
            fprintf(out,
                    "{\"source\": {\"id\": null, \"name\": \"Live\"}, \"title\": \"Live %d\", "
                    "\"url\": \"https://%s.test/a%d\", \"publishedAt\": "
                    "\"2023-01-01T10:%02d:00Z\", \"language\": \"en\"}\n",
                    k, other ? "other" : "match", k, k % 60);
    }
    fclose(out);
    test_ingest_file(f->s, path);
}

static void subscribe(struct fixture *f, int64_t pos, struct sub *s)
{
    static const char *const domains[] = {"match.test"};
    struct index_request req = {
        .domains = domains, .n_domains = 1, .from = INT64_MIN, .to = INT64_MAX};
    struct index_matcher *m = NULL;
    struct err err;
    err_clear(&err);
    assert_int_equal(index_matcher_new(&m, &req, &err), 0);
    assert_int_equal(push_live_subscribe(f->hub, m, pos, &sink, s, &err), 0);
}

static int64_t head(struct fixture *f)
{
    int64_t pos = -1;
    struct err err;
    err_clear(&err);
    assert_int_equal(push_live_head(f->hub, &pos, &err), 0);
    return pos;
}

static void wait_for_articles(struct sub *s, size_t n)
{
    int64_t until = clock_mono_ms() + WAIT_MS;
    while (sub_count(s) < n) {
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
}

static void wait_for_release(struct sub *s)
{
    int64_t until = clock_mono_ms() + WAIT_MS;
    while (!atomic_load(&s->released)) {
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
}

/* s got match.test/a<first> .. a<first + n - 1>, in rising seq order. */
static void assert_got(struct sub *s, int first, size_t n)
{
    pthread_mutex_lock(&s->mu);
    assert_int_equal(s->n, n);
    for (size_t i = 0; i < n; i++) {
        char want[64];
        snprintf(want, sizeof want, "https://match.test/a%d", first + (int)i);
        assert_string_equal(s->url[i], want);
        if (i)
            assert_true(s->seq[i] > s->seq[i - 1]);
    }
    pthread_mutex_unlock(&s->mu);
}

static void a_subscriber_gets_each_matching_commit_once_in_order(void **state)
{
    struct fixture *f = *state;
    struct sub *s = sub_new();
    subscribe(f, head(f), s);
    assert_int_equal(push_live_count(f->hub), 1);
    commit_articles(f, 2);
    wait_for_articles(s, 2);
    commit_articles(f, 1);
    wait_for_articles(s, 3);
    assert_got(s, 0, 3); /* no other.test, no handmade history */
    push_live_free(f->hub);
    f->hub = NULL;
    assert_true(atomic_load(&s->released)); /* the hub's end releases it */
    sub_free(s);
}

static void a_subscriber_behind_is_replayed_then_joins_without_gap_or_duplicate(void **state)
{
    struct fixture *f = *state;
    int64_t before = head(f);
    commit_articles(f, 3);
    struct sub *s = sub_new();
    subscribe(f, before, s); /* a reconnect: three to replay */
    commit_articles(f, 2);   /* while it replays, or after: either way once */
    wait_for_articles(s, 5);
    commit_articles(f, 1);
    wait_for_articles(s, 6);
    assert_got(s, 0, 6);
    push_live_free(f->hub);
    f->hub = NULL;
    sub_free(s);
}

static void a_subscriber_that_refuses_or_goes_is_dropped_and_released(void **state)
{
    struct fixture *f = *state;
    struct sub *refusing = sub_new(), *going = sub_new(), *staying = sub_new();
    refusing->refuse_after = 1;
    int64_t pos = head(f);
    subscribe(f, pos, refusing);
    subscribe(f, pos, going);
    subscribe(f, pos, staying);
    assert_int_equal(push_live_count(f->hub), 3);
    commit_articles(f, 2);
    wait_for_release(refusing); /* took one, refused the second */
    assert_int_equal(sub_count(refusing), 1);
    atomic_store(&going->gone, true);
    wait_for_release(going); /* alive is asked every PUSH_LIVE_ALIVE_MS */
    assert_int_equal(push_live_count(f->hub), 1);
    wait_for_articles(staying, 2);
    assert_got(staying, 0, 2);
    assert_false(atomic_load(&staying->released));
    push_live_free(f->hub);
    f->hub = NULL;
    sub_free(refusing);
    sub_free(going);
    sub_free(staying);
}

static void an_idle_subscriber_is_kept_alive(void **state)
{
    struct fixture *f = *state;
    struct sub *s = sub_new();
    subscribe(f, head(f), s);
    int64_t until = clock_mono_ms() + WAIT_MS;
    while (atomic_load(&s->idles) < 2) { /* every keepalive_ms without an article */
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
    assert_int_equal(sub_count(s), 0);
    assert_false(atomic_load(&s->released));
    push_live_free(f->hub);
    f->hub = NULL;
    sub_free(s);
}

static void a_position_expires_when_its_next_change_is_older_than_the_window(void **state)
{
    struct fixture *f = *state;
    struct err err;
    bool expired = true;
    err_clear(&err);
    int64_t before = head(f);
    commit_articles(f, 1); /* ingested at INGESTED_AT */
    int64_t now_head = head(f);
    assert_true(now_head > before);
    assert_int_equal(
        push_live_position_check(f->hub, before, INGESTED_AT + WINDOW_S, &expired, &err), 0);
    assert_false(expired); /* exactly the window: still replayable */
    assert_int_equal(
        push_live_position_check(f->hub, before, INGESTED_AT + WINDOW_S + 1, &expired, &err), 0);
    assert_true(expired);
    /* at or past the head there is nothing to replay: never expired */
    assert_int_equal(
        push_live_position_check(f->hub, now_head, INGESTED_AT + 100 * WINDOW_S, &expired, &err),
        0);
    assert_false(expired);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_subscriber_gets_each_matching_commit_once_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_subscriber_behind_is_replayed_then_joins_without_gap_or_duplicate, setup, teardown),
        cmocka_unit_test_setup_teardown(a_subscriber_that_refuses_or_goes_is_dropped_and_released,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(an_idle_subscriber_is_kept_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_position_expires_when_its_next_change_is_older_than_the_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
