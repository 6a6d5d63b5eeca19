/* push/webhook.h, the webhook delivery worker, over a real SQLite store
 * and a real HTTP receiver on loopback, with a fake wall clock
 * (push_webhook_options.now_ms) that the test steps: a failed POST is
 * retried with the same id, bytes and signature after a delay that
 * doubles from retry_min_ms up to retry_max_ms; a 2xx ends the delivery;
 * a delivery still failing when the retry window has passed is dropped;
 * an article that matches no alert is never sent. Waits are polls of the
 * store and the receiver with a deadline, never a sleep that asserts. */
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <cmocka.h>

#include "test_ingest_file.h"
#include "test_tmpdir.h"

#include "index/match.h"
#include "push/webhook.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/metrics.h"
#include "util/netpolicy.h"

#define DATA "../data/api/"
#define T0 1700000000000LL /* the fake clock's start, unix ms */
#define SECRET "s3cret"
#define MAX_SEEN 16
#define WAIT_MS 20000 /* a poll's deadline: generous under ASan */

/* ---- the receiver: answers each POST with the next status of its script --- */

struct receiver {
    struct MHD_Daemon *d;
    char url[64];
    pthread_mutex_t mu;
    int script[MAX_SEEN]; /* statuses in turn; the last one repeats */
    size_t n_script;
    size_t n_seen;
    char *body[MAX_SEEN], *delivery[MAX_SEEN], *signature[MAX_SEEN];
};

static char *header_copy(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    return strdup(v ? v : "");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct receiver *r = cls;
    struct buf *body = *con_cls;
    (void)url;
    (void)method;
    (void)version;
    if (!body) {
        body = calloc(1, sizeof *body);
        if (!body)
            return MHD_NO;
        buf_init(body, 0);
        *con_cls = body;
        return MHD_YES;
    }
    if (*upload_size) {
        buf_append(body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&r->mu);
    size_t i = r->n_seen;
    int status = r->script[i < r->n_script ? i : r->n_script - 1];
    if (i < MAX_SEEN) {
        r->body[i] = strdup(body->data ? body->data : "");
        r->delivery[i] = header_copy(c, "X-Newsd-Delivery");
        r->signature[i] = header_copy(c, "X-Newsd-Signature");
        r->n_seen++;
    }
    pthread_mutex_unlock(&r->mu);
    static char ok[] = "ok";
    struct MHD_Response *resp = MHD_create_response_from_buffer(2, ok, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct buf *body = *con_cls;
    if (body) {
        buf_release(body);
        free(body);
    }
    *con_cls = NULL;
}

static void receiver_start(struct receiver *r, const int *script, size_t n)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    memcpy(r->script, script, n * sizeof *script);
    r->n_script = n;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    r->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, r,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    assert_non_null(r->d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(info);
    snprintf(r->url, sizeof r->url, "http://127.0.0.1:%u/hook", (unsigned)info->port);
}

static size_t receiver_seen(struct receiver *r)
{
    pthread_mutex_lock(&r->mu);
    size_t n = r->n_seen;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void receiver_stop(struct receiver *r)
{
    if (!r->d)
        return;
    MHD_stop_daemon(r->d);
    for (size_t i = 0; i < r->n_seen; i++) {
        free(r->body[i]);
        free(r->delivery[i]);
        free(r->signature[i]);
    }
    pthread_mutex_destroy(&r->mu);
}

/* ---- the fixture: a store, a key, one alert, the worker on a fake clock --- */

struct fixture {
    char dir[64];
    struct store *s;
    struct netpolicy loopback;
    struct receiver rx;
    struct push_webhook *w;
    int64_t alert;
    _Atomic int64_t now; /* the fake wall clock */
};

static int64_t fake_now(void *ctx)
{
    struct fixture *f = ctx;
    return atomic_load(&f->now);
}

/* The alert's search: every article of match.test (the query text is the
 * API's business, not the worker's). */
static int compile_match_test(void *ctx, const char *query_json, struct index_matcher **out,
                              struct err *err)
{
    static const char *const domains[] = {"match.test"};
    (void)ctx;
    (void)query_json;
    struct index_request req = {
        .domains = domains, .n_domains = 1, .from = INT64_MIN, .to = INT64_MAX};
    return index_matcher_new(out, &req, err);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    size_t n;
    assert_non_null(f);
    err_clear(&err);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-webhook-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(ingest_sources_import(f->s, DATA "sources.jsonl", &n, &err), 0);
    char why[128];
    netpolicy_init(&f->loopback);
    assert_int_equal(netpolicy_allow_parse(&f->loopback, "127.0.0.0/8", 11, why, sizeof why), 0);
    atomic_init(&f->now, T0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    push_webhook_stop(f->w);
    receiver_stop(&f->rx);
    store_close(f->s);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* A receiver with script, an alert to it from the log's head on, and the
 * worker started. */
static void start(struct fixture *f, const int *script, size_t n, int64_t expire_ms)
{
    struct err err;
    err_clear(&err);
    receiver_start(&f->rx, script, n);
    struct key_record k;
    int64_t key = 0;
    memset(&k, 0, sizeof k);
    k.plan = "unlimited";
    memset(k.hash, 7, sizeof k.hash);
    assert_int_equal(store_key_insert(f->s, &k, &key, &err), 0);
    struct alert_record r = {.key_id = key,
                             .query = "{\"domains\":\"match.test\"}",
                             .webhook = f->rx.url,
                             .secret = SECRET,
                             .cursor_seq = -1};
    assert_int_equal(store_alert_add(f->s, &r, 0, &f->alert, &err), 0);
    struct push_webhook_options o = {
        .journal_path = store_sqlite_path(f->s),
        .compile = compile_match_test,
        .poll_ms = 10,
        .retry_min_ms = 1000,
        .retry_max_ms = 4000,
        .expire_ms = expire_ms,
        .now_ms = fake_now,
        .now_ctx = f,
    };
    o.fetch.policy = &f->loopback;
    assert_int_equal(push_webhook_start(&f->w, f->s, &o, &err), 0);
}

/* Articles of match.test (n of them) and one of other.test, committed. */
static void commit_articles(struct fixture *f, int n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/articles.jsonl", f->dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    for (int i = 0; i <= n; i++)
        fprintf(out,
                "{\"source\": {\"id\": null, \"name\": \"Hook\"}, \"title\": \"Hook %d\", "
                "\"url\": \"https://%s.test/a%d\", \"publishedAt\": \"2023-01-0%dT10:00:00Z\", "
                "\"language\": \"en\"}\n",
                i, i < n ? "match" : "other", i, 1 + i % 9);
    fclose(out);
    test_ingest_file(f->s, path);
}

/* The alert's oldest waiting delivery (false: none), its strings copied
 * into the caller's arena. */
static bool head_delivery(struct fixture *f, struct arena *ar, struct alert_delivery *out)
{
    struct alert_delivery *d = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_alert_deliveries(f->s, ar, f->alert, 1, &d, &n, &err), 0);
    if (n == 1)
        *out = d[0];
    return n == 1;
}

/* Poll until the head delivery has been attempted `attempts` times (0:
 * until there is none left); fails the test at the deadline. */
static void wait_for_attempts(struct fixture *f, int64_t attempts, struct alert_delivery *d,
                              struct arena *ar)
{
    int64_t until = clock_mono_ms() + WAIT_MS;
    for (;;) {
        bool there = head_delivery(f, ar, d);
        if (attempts == 0 ? !there : there && d->attempts >= attempts)
            break;
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
}

static void wait_for_requests(struct fixture *f, size_t n)
{
    int64_t until = clock_mono_ms() + WAIT_MS;
    while (receiver_seen(&f->rx) < n) {
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
}

static int64_t counter(const char *name)
{
    return metrics_value(metrics_counter(name, NULL));
}

static void a_failed_post_is_retried_with_doubling_delays_until_accepted(void **state)
{
    struct fixture *f = *state;
    static const int script[] = {500, 503, 500, 500, 200};
    struct arena ar;
    struct alert_delivery d;
    arena_init(&ar, 0);
    push_webhook_metrics_init();
    int64_t sent = counter("newsd_alert_deliveries_sent_total");
    int64_t retries = counter("newsd_alert_delivery_retries_total");
    start(f, script, 5, 60000);
    commit_articles(f, 2);

    /* Attempt k fails at now; the next waits retry_min doubled k-1 times,
     * at most retry_max: 1 s, 2 s, 4 s, then 4 s again. */
    static const int64_t delay[] = {1000, 2000, 4000, 4000};
    int64_t now = T0;
    for (int64_t k = 1; k <= 4; k++) {
        wait_for_attempts(f, k, &d, &ar);
        assert_int_equal(d.attempts, k);
        assert_int_equal(d.first_failure_ms, T0);
        assert_int_equal(d.next_ms, now + delay[k - 1]);
        assert_int_equal(receiver_seen(&f->rx), (size_t)k); /* none before its time */
        now = d.next_ms;
        atomic_store(&f->now, now);
    }
    wait_for_attempts(f, 0, &d, &ar); /* the 200: done, out of the store */
    assert_int_equal(receiver_seen(&f->rx), 5);
    assert_int_equal(counter("newsd_alert_deliveries_sent_total") - sent, 1);
    assert_int_equal(counter("newsd_alert_delivery_retries_total") - retries, 4);

    /* Every attempt: the same id, the same bytes, their signature; the
     * two articles of match.test in it, the other article nowhere. */
    char sig[PUSH_WEBHOOK_SIGNATURE_LEN];
    push_webhook_signature(SECRET, f->rx.body[0], strlen(f->rx.body[0]), sig);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(f->rx.body[i], f->rx.body[0]);
        assert_string_equal(f->rx.delivery[i], f->rx.delivery[0]);
        assert_string_equal(f->rx.signature[i], sig);
    }
    assert_int_equal(strlen(f->rx.delivery[0]), 32);
    assert_non_null(strstr(f->rx.body[0], "https://match.test/a0"));
    assert_non_null(strstr(f->rx.body[0], "https://match.test/a1"));
    assert_null(strstr(f->rx.body[0], "other.test"));
    arena_release(&ar);
}

static void a_delivery_failing_past_the_retry_window_is_dropped(void **state)
{
    struct fixture *f = *state;
    static const int script[] = {500};
    struct arena ar;
    struct alert_delivery d;
    arena_init(&ar, 0);
    push_webhook_metrics_init();
    int64_t failed = counter("newsd_alert_deliveries_failed_total");
    start(f, script, 1, 5000);
    commit_articles(f, 1);

    wait_for_attempts(f, 1, &d, &ar); /* at T0 */
    atomic_store(&f->now, T0 + 1000);
    wait_for_attempts(f, 2, &d, &ar);
    assert_int_equal(d.next_ms, T0 + 3000);
    atomic_store(&f->now, T0 + 3000); /* 3 s after the first failure: inside the window */
    wait_for_attempts(f, 3, &d, &ar);
    assert_int_equal(d.next_ms, T0 + 7000);
    assert_int_equal(counter("newsd_alert_deliveries_failed_total") - failed, 0);
    atomic_store(&f->now, T0 + 7000); /* past the 5 s window: this failure is the last */
    wait_for_attempts(f, 0, &d, &ar);
    assert_int_equal(receiver_seen(&f->rx), 4);
    assert_int_equal(counter("newsd_alert_deliveries_failed_total") - failed, 1);
    arena_release(&ar);
}

/* The alert's stored cursor. */
static int64_t alert_cursor(struct fixture *f)
{
    struct arena ar;
    struct alert_record *list = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    arena_init(&ar, 0);
    assert_int_equal(store_alerts_list(f->s, &ar, 0, &list, &n, &err), 0);
    assert_int_equal(n, 1);
    int64_t cursor = list[0].cursor_seq;
    arena_release(&ar);
    return cursor;
}

static void an_accepted_delivery_is_sent_once(void **state)
{
    struct fixture *f = *state;
    static const int script[] = {204};
    struct arena ar;
    struct alert_delivery d;
    arena_init(&ar, 0);
    start(f, script, 1, 60000);
    commit_articles(f, 1);
    wait_for_requests(f, 1);
    wait_for_attempts(f, 0, &d, &ar);
    /* An hour on, an article that matches nothing: the worker reads it and,
     * its cursor write due, stores the cursor past it, which shows it has
     * run since; it has sent nothing again. */
    int64_t cursor = alert_cursor(f);
    atomic_store(&f->now, T0 + 3600 * 1000);
    commit_articles(f, 0);
    int64_t until = clock_mono_ms() + WAIT_MS;
    while (alert_cursor(f) == cursor) {
        assert_true(clock_mono_ms() < until);
        clock_sleep_ms(5);
    }
    assert_int_equal(receiver_seen(&f->rx), 1);
    assert_false(head_delivery(f, &ar, &d));
    arena_release(&ar);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_failed_post_is_retried_with_doubling_delays_until_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(a_delivery_failing_past_the_retry_window_is_dropped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(an_accepted_delivery_is_sent_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
