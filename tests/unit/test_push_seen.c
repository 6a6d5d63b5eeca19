/* push/seen.h: the stories a dedupe stream (or alert) was sent, against a plain
 * oracle (every story's count). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "push/seen.h"

static void test_first_then_counted(void **state)
{
    (void)state;
    struct push_seen *s = push_seen_new();
    assert_non_null(s);
    assert_int_equal(push_seen_add(s, 42), 1);
    assert_int_equal(push_seen_add(s, 7), 1);
    assert_int_equal(push_seen_add(s, 42), 2);
    assert_int_equal(push_seen_add(s, 42), 3);
    assert_int_equal(push_seen_add(s, 7), 2);
    assert_int_equal(push_seen_add(s, INT64_MAX), 1);
    assert_int_equal(push_seen_add(s, -5), 1); /* any id but 0 */
    push_seen_free(s);
    push_seen_free(NULL);
}

/* A copy of a story met less than PUSH_SEEN_MAX / 2 new stories ago is
 * counted on (an oracle keeps every story's count), across the tables'
 * growth and generations; a story not met for long is forgotten: the
 * memory is bounded. */
static void test_bounded_memory_keeps_the_recent_ones(void **state)
{
    (void)state;
    struct push_seen *s = push_seen_new();
    const int64_t n = 5 * PUSH_SEEN_MAX, mul = 1000003; /* ids spread over the hash */
    uint64_t *count = calloc((size_t)n + 1, sizeof *count);
    assert_non_null(s);
    assert_non_null(count);
    for (int64_t i = 1; i <= n; i++) {
        assert_int_equal(push_seen_add(s, i * mul), 1);
        count[i] = 1;
        int64_t j = i - PUSH_SEEN_MAX / 2;
        if (i % 3 == 0 && j >= 1) { /* a copy of a recent story */
            count[j]++;
            assert_int_equal(push_seen_add(s, j * mul), count[j]);
        }
    }
    /* the oldest are forgotten: met again, each is a first */
    assert_int_equal(push_seen_add(s, 1 * mul), 1);
    assert_int_equal(push_seen_add(s, 2 * mul), 1);
    /* the newest are not */
    assert_int_equal(push_seen_add(s, n * mul), count[n] + 1);
    free(count);
    push_seen_free(s);
}

/* Cleared (a webhook alert reading its log again), every story is a first
 * again, and the memory counts on from there. */
static void test_cleared_forgets_every_story(void **state)
{
    (void)state;
    struct push_seen *s = push_seen_new();
    assert_non_null(s);
    for (int64_t i = 1; i <= PUSH_SEEN_MAX + 10; i++) /* both generations in use */
        assert_int_equal(push_seen_add(s, i), 1);
    assert_int_equal(push_seen_add(s, 3), 2);
    assert_int_equal(push_seen_add(s, PUSH_SEEN_MAX + 5), 2);
    push_seen_clear(s);
    assert_int_equal(push_seen_add(s, 3), 1);
    assert_int_equal(push_seen_add(s, PUSH_SEEN_MAX + 5), 1);
    assert_int_equal(push_seen_add(s, 3), 2);
    push_seen_clear(s);
    push_seen_clear(s); /* twice: nothing to free */
    assert_int_equal(push_seen_add(s, 3), 1);
    push_seen_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_then_counted),
        cmocka_unit_test(test_bounded_memory_keeps_the_recent_ones),
        cmocka_unit_test(test_cleared_forgets_every_story),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
