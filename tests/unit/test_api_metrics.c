/* api/metrics.h: the request counters and latency histogram /metrics
 * writes, exact under contention, each latency in the bucket of its upper
 * bound, the names it writes kept out of util/metrics.h's registry, and
 * the text exposition with every family declared once. (Each registered
 * metric's own counting is tested with its owner: tests/unit/test_feeds_crawl.c,
 * tests/api/test_metrics.py.) */
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

#include "api/metrics.h"
#include "util/buf.h"
#include "util/metrics.h"

static char *render(void)
{
    struct buf b;
    buf_init(&b, 0);
    api_metrics_render(&b, 1234);
    assert_int_equal(buf_error(&b), 0);
    size_t len;
    return buf_detach(&b, &len);
}

static void the_names_metrics_writes_are_kept_out_of_the_registry(void **state)
{
    (void)state;
    static const char *const owned[] = {"newsd_http_requests_total", "newsd_articles_stored",
                                        "newsd_http_request_duration_seconds_bucket"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) {
        assert_null(metrics_counter(owned[i], "x"));
        assert_null(metrics_gauge(owned[i], "x"));
    }
}

#define THREADS 8
#define ADDS 200000

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ADDS; i++)
        api_metrics_request_record(METRICS_EP_OPENAPI, 304, (uint64_t)(i % 3000));
    return NULL;
}

static void counters_are_exact_under_contention(void **state)
{
    (void)state;
    uint64_t before = api_metrics_requests(METRICS_EP_OPENAPI, 304);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(api_metrics_requests(METRICS_EP_OPENAPI, 304) - before,
                     (uint64_t)THREADS * ADDS);
    char *text = render();
    char want[160];
    snprintf(want, sizeof want,
             "newsd_http_request_duration_seconds_count{endpoint=\"openapi\"} %llu\n",
             (unsigned long long)(before + (uint64_t)THREADS * ADDS));
    assert_non_null(strstr(text, want));
    free(text);
}

/* The count a rendered series line carries, or -1 when absent. */
static long long series(const char *text, const char *line_start)
{
    const char *p = strstr(text, line_start);
    if (!p)
        return -1;
    return strtoll(p + strlen(line_start), NULL, 10);
}

static void latencies_land_in_the_bucket_of_their_upper_bound(void **state)
{
    (void)state;
    /* web: nothing else records it in this program */
    api_metrics_request_record(METRICS_EP_WEB, 200, 500);      /* le 0.0005 (bounds inclusive) */
    api_metrics_request_record(METRICS_EP_WEB, 200, 501);      /* le 0.001 */
    api_metrics_request_record(METRICS_EP_WEB, 200, 10000000); /* le 10 */
    api_metrics_request_record(METRICS_EP_WEB, 999, 10000001); /* +Inf, status other */
    char *text = render();
    const char *b = "newsd_http_request_duration_seconds_bucket{endpoint=\"web\",le=";
    char k[200];
    static const struct {
        const char *le;
        long long n;
    } want[] = {{"0.0005", 1}, {"0.001", 2}, {"0.0025", 2}, {"5", 2}, {"10", 3}, {"+Inf", 4}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(k, sizeof k, "%s\"%s\"} ", b, want[i].le);
        assert_int_equal(series(text, k), want[i].n);
    }
    assert_non_null(strstr(text, "newsd_http_request_duration_seconds_sum{endpoint=\"web\"} "
                                 "20.001002\n"));
    assert_int_equal(series(text, "newsd_http_requests_total{endpoint=\"web\",status=\"200\"} "),
                     3);
    assert_int_equal(series(text, "newsd_http_requests_total{endpoint=\"web\",status=\"other\"} "),
                     1);
    /* endpoints without requests are left out */
    assert_null(strstr(text, "endpoint=\"top-headlines\""));
    free(text);
}

static void the_exposition_declares_every_family_once(void **state)
{
    (void)state;
    api_metrics_init();
    api_metrics_init(); /* idempotent */
    metrics_set(metrics_gauge("test_lag_seconds", "a gauge"), 42);
    metrics_add(metrics_counter("test_polled_total", "a counter"), 1);
    metrics_add(metrics_counter("test_help_total", "line one\nback\\slash"), 1);
    metrics_add(metrics_counter("test_again_total", "help"), 1);
    char *text = render();
    assert_non_null(
        strstr(text, "# TYPE newsd_articles_stored gauge\nnewsd_articles_stored 1234\n"));
    assert_non_null(strstr(text, "# TYPE test_lag_seconds gauge\ntest_lag_seconds 42\n"));
    assert_non_null(strstr(text, "# TYPE test_polled_total counter\ntest_polled_total 1\n"));
    assert_non_null(strstr(text, "# HELP test_help_total line one\\nback\\\\slash\n"));
    const char *families[] = {"newsd_http_requests_total", "newsd_http_request_duration_seconds",
                              "test_lag_seconds", "test_again_total"};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char k[120];
        snprintf(k, sizeof k, "# TYPE %s ", families[i]);
        const char *first = strstr(text, k);
        assert_non_null(first);
        assert_null(strstr(first + 1, k));
    }
    /* no articles_stored when the store could not be read */
    struct buf b;
    buf_init(&b, 0);
    api_metrics_render(&b, -1);
    assert_null(strstr(b.data, "newsd_articles_stored"));
    buf_release(&b);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_names_metrics_writes_are_kept_out_of_the_registry),
        cmocka_unit_test(counters_are_exact_under_contention),
        cmocka_unit_test(latencies_land_in_the_bucket_of_their_upper_bound),
        cmocka_unit_test(the_exposition_declares_every_family_once),
    };
    api_metrics_init(); /* reserves the names /metrics writes itself */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
