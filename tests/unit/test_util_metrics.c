/* util/metrics.h: the registry (names, kinds, reserved names, limits) and
 * exact counts under contention. The registry is process-wide, so the tests
 * use names of their own and never assume an empty registry beyond what
 * they registered. (The exposition /metrics writes is api/metrics.h's:
 * tests/unit/test_api_metrics.c.) */
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

#include "util/metrics.h"

static void a_counter_is_found_again_by_its_name(void **state)
{
    (void)state;
    struct metric *a = metrics_counter("test_again_total", "help");
    assert_non_null(a);
    assert_ptr_equal(metrics_counter("test_again_total", NULL), a);
    metrics_add(a, 3);
    metrics_add(metrics_counter("test_again_total", NULL), 4);
    assert_int_equal(metrics_value(a), 7);
}

static void names_outside_the_prometheus_alphabet_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "9lives", "with space", "dash-ed", "ütf", "a{b}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(metrics_counter(bad[i], "x"));
    assert_null(metrics_gauge(NULL, "x"));
    char longest[METRICS_NAME_MAX + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    assert_null(metrics_gauge(longest, "x"));
    longest[METRICS_NAME_MAX] = '\0';
    assert_non_null(metrics_gauge(longest, "x"));
    assert_non_null(metrics_gauge("ok:name_1", "x"));
}

static void a_name_keeps_its_kind(void **state)
{
    (void)state;
    struct metric *g = metrics_gauge("test_kind", "a gauge");
    assert_non_null(g);
    assert_null(metrics_counter("test_kind", "now a counter?"));
    metrics_set(g, -5);
    assert_int_equal(metrics_value(g), -5);
    metrics_add(g, 10); /* not a counter: ignored */
    assert_int_equal(metrics_value(g), -5);
    struct metric *c = metrics_counter("test_kind_total", "c");
    metrics_set(c, 99); /* not a gauge: ignored */
    assert_int_equal(metrics_value(c), 0);
    metrics_add(NULL, 1);
    metrics_set(NULL, 1);
    assert_int_equal(metrics_value(NULL), 0);
}

#define THREADS 8
#define ADDS 200000

static void *hammer(void *arg)
{
    struct metric *m = arg;
    for (int i = 0; i < ADDS; i++)
        metrics_add(m, 1);
    return NULL;
}

static void counters_are_exact_under_contention(void **state)
{
    (void)state;
    struct metric *m = metrics_counter("test_contended_total", "x");
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, m), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(metrics_value(m), (int64_t)THREADS * ADDS);
}

static void a_reserved_prefix_keeps_its_names_out_of_the_registry(void **state)
{
    (void)state;
    assert_non_null(metrics_counter("test_owned_before_total", "x"));
    metrics_reserve("test_owned_");
    metrics_reserve("test_owned_"); /* idempotent */
    assert_null(metrics_counter("test_owned_after_total", "x"));
    assert_null(metrics_gauge("test_owned_", "x"));
    assert_non_null(metrics_gauge("test_owne", "x")); /* not the prefix */
    /* a name registered before stays found */
    assert_non_null(metrics_counter("test_owned_before_total", NULL));
}

static void the_registry_has_a_ceiling(void **state)
{
    (void)state;
    char name[32];
    size_t made = 0;
    for (int i = 0; i < METRICS_MAX + 5; i++) {
        snprintf(name, sizeof name, "test_fill_%d", i);
        if (metrics_gauge(name, "fill"))
            made++;
    }
    assert_true(made < (size_t)METRICS_MAX + 5);
    assert_null(metrics_gauge("test_one_too_many", "x"));
    /* existing names are still found */
    assert_non_null(metrics_counter("test_again_total", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_counter_is_found_again_by_its_name),
        cmocka_unit_test(names_outside_the_prometheus_alphabet_are_refused),
        cmocka_unit_test(a_name_keeps_its_kind),
        cmocka_unit_test(counters_are_exact_under_contention),
        cmocka_unit_test(a_reserved_prefix_keeps_its_names_out_of_the_registry),
        cmocka_unit_test(the_registry_has_a_ceiling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
