/* util/sort.h: the one lower-bound search and the integer comparators. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/sort.h"

static int cmp_int(const void *element, const void *key)
{
    return sort_order_i64(*(const int *)element, *(const int *)key);
}

/* The answer by walking: the first index not below key. */
static size_t linear_lower_bound(const int *v, size_t n, int key)
{
    size_t i = 0;
    while (i < n && v[i] < key)
        i++;
    return i;
}

static void the_lower_bound_is_the_first_element_not_below_the_key(void **state)
{
    (void)state;
    static const int v[] = {1, 3, 3, 3, 7, 9, 9, 12};
    size_t n = sizeof v / sizeof v[0];
    for (int key = -1; key <= 14; key++)
        assert_int_equal(sort_lower_bound(v, n, sizeof v[0], &key, cmp_int),
                         linear_lower_bound(v, n, key));
    int three = 3;
    assert_int_equal(sort_lower_bound(v, n, sizeof v[0], &three, cmp_int), 1); /* the first 3 */
    assert_int_equal(sort_lower_bound(v, 0, sizeof v[0], &three, cmp_int), 0); /* empty */
    assert_int_equal(sort_lower_bound(NULL, 0, sizeof v[0], &three, cmp_int), 0);
}

/* Every length up to 40 and every key: the search agrees with a walk. */
static void every_length_and_key_agrees_with_a_walk(void **state)
{
    (void)state;
    int v[40];
    for (size_t n = 0; n <= 40; n++) {
        for (size_t i = 0; i < n; i++)
            v[i] = (int)(2 * i + (i % 3 == 0)); /* ascending with gaps */
        for (int key = -2; key < 2 * (int)n + 3; key++)
            assert_int_equal(sort_lower_bound(v, n, sizeof v[0], &key, cmp_int),
                             linear_lower_bound(v, n, key));
    }
}

struct rec {
    int64_t id;
    const char *name;
};

static int rec_cmp_id(const void *element, const void *key)
{
    return sort_order_i64((*(struct rec *const *)element)->id, *(const int64_t *)key);
}

/* What push/ does: an array of pointers to records sorted by id. */
static void arrays_of_pointers_are_searched_by_their_records_key(void **state)
{
    (void)state;
    struct rec a = {-5, "a"}, b = {0, "b"}, c = {INT64_MAX, "c"};
    struct rec *by_id[] = {&a, &b, &c};
    int64_t keys[] = {INT64_MIN, -5, -4, 0, 1, INT64_MAX};
    size_t want[] = {0, 0, 1, 1, 2, 2};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_int_equal(sort_lower_bound(by_id, 3, sizeof by_id[0], &keys[i], rec_cmp_id),
                         want[i]);
}

static void int64_comparison_sorts_ascending_across_the_whole_range(void **state)
{
    (void)state;
    int64_t v[] = {INT64_MAX, 0, -1, INT64_MIN, 1, INT64_MIN + 1, INT64_MAX - 1, 0};
    size_t n = sizeof v / sizeof v[0];
    qsort(v, n, sizeof v[0], sort_cmp_i64);
    for (size_t i = 1; i < n; i++)
        assert_true(v[i - 1] <= v[i]);
    assert_true(v[0] == INT64_MIN && v[n - 1] == INT64_MAX);
    assert_int_equal(sort_order_i64(INT64_MIN, INT64_MAX), -1);
    assert_int_equal(sort_order_i64(INT64_MAX, INT64_MIN), 1);
    assert_int_equal(sort_order_i64(7, 7), 0);
    assert_int_equal(sort_order_u64(UINT64_MAX, 0), 1);
    int64_t key = -1;
    assert_non_null(bsearch(&key, v, n, sizeof v[0], sort_cmp_i64));
}

/* fetch/ (hosts) and the engine (URL hashes) sort keys that repeat: equal
 * keys keep the order of where they came from, whatever qsort does. */
static void keyed_records_sort_by_key_then_by_origin(void **state)
{
    (void)state;
    struct sort_keyed v[64];
    size_t n = sizeof v / sizeof v[0];
    for (size_t i = 0; i < n; i++)
        v[i] = (struct sort_keyed){(i * 7) % 5 == 0 ? UINT64_MAX : (i * 7) % 5, n - 1 - i};
    qsort(v, n, sizeof v[0], sort_cmp_keyed);
    for (size_t i = 1; i < n; i++) {
        assert_true(v[i - 1].key <= v[i].key);
        if (v[i - 1].key == v[i].key)
            assert_true(v[i - 1].at < v[i].at);
    }
    assert_int_equal(v[n - 1].key, UINT64_MAX);
}

/* Strings with their lengths in byte order: a string before the longer
 * ones it begins, bytes compared unsigned (0xff after 'z'), the empty
 * string first (no bytes read from a NULL of length 0). */
static void byte_strings_order_as_memcmp_with_a_prefix_first(void **state)
{
    (void)state;
    assert_int_equal(sort_order_bytes("abc", 3, "abc", 3), 0);
    assert_true(sort_order_bytes("ab", 2, "abc", 3) < 0);
    assert_true(sort_order_bytes("abc", 3, "ab", 2) > 0);
    assert_true(sort_order_bytes("abd", 3, "abcz", 4) > 0);
    assert_true(sort_order_bytes("z", 1, "\xff", 1) < 0);
    assert_true(sort_order_bytes(NULL, 0, "a", 1) < 0);
    assert_true(sort_order_bytes("a", 1, NULL, 0) > 0);
    assert_int_equal(sort_order_bytes(NULL, 0, NULL, 0), 0);
    /* as a comparator: a sort of every string of {a, b} up to 3 bytes
     * walks them in the order of a trie's preorder */
    const char *v[] = {"b", "ab", "", "aab", "a", "ba", "bb", "aa", "abb", "bab"};
    const char *want[] = {"", "a", "aa", "aab", "ab", "abb", "b", "ba", "bab", "bb"};
    size_t n = sizeof v / sizeof v[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (sort_order_bytes(v[j], strlen(v[j]), v[i], strlen(v[i])) < 0) {
                const char *x = v[i];
                v[i] = v[j];
                v[j] = x;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        assert_string_equal(v[i], want[i]);
}

static int desc_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a > b ? -1 : a < b;
}

/* The selection against a sort: every k of arrays with many equal values,
 * sorted ones, reversed ones and random ones. */
static void the_kth_largest_is_the_sorted_arrays_kth(void **state)
{
    (void)state;
    double x[300], sorted[300], work[300];
    unsigned rng = 7;
    for (size_t n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
        for (int shape = 0; shape < 4; shape++) {
            for (size_t i = 0; i < n; i++) {
                rng = rng * 1103515245u + 12345u;
                x[i] = shape == 0   ? (double)((rng >> 8) % 1000)
                       : shape == 1 ? (double)((rng >> 8) % 4) /* many equal */
                       : shape == 2 ? (double)i
                                    : (double)(n - i);
            }
            memcpy(sorted, x, n * sizeof *x);
            qsort(sorted, n, sizeof *sorted, desc_double);
            for (size_t k = 1; k <= n; k++) {
                memcpy(work, x, n * sizeof *x);
                assert_true(sort_kth_largest(work, n, k) == sorted[k - 1]);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_lower_bound_is_the_first_element_not_below_the_key),
        cmocka_unit_test(the_kth_largest_is_the_sorted_arrays_kth),
        cmocka_unit_test(every_length_and_key_agrees_with_a_walk),
        cmocka_unit_test(arrays_of_pointers_are_searched_by_their_records_key),
        cmocka_unit_test(int64_comparison_sorts_ascending_across_the_whole_range),
        cmocka_unit_test(keyed_records_sort_by_key_then_by_origin),
        cmocka_unit_test(byte_strings_order_as_memcmp_with_a_prefix_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
