/* push/sched.h: the turns of webhook deliveries. Slots are limited in
 * total, per receiver and per key, and given back; a receiver is its
 * scheme, host and port; the waiting deliveries are offered the slots one
 * per key per round, starting after the key served last, each key's
 * alerts served longest ago first. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "push/sched.h"
#include "util/err.h"

static void a_receiver_is_its_scheme_host_and_port(void **state)
{
    (void)state;
    char h[PUSH_SCHED_HOST_MAX];
    push_sched_host("http://127.0.0.1:8080/hook?x=1", h);
    assert_string_equal(h, "http://127.0.0.1:8080");
    push_sched_host("HTTPS://Hooks.Example.COM/services/T1/B2/secret", h);
    assert_string_equal(h, "https://hooks.example.com:443");
    push_sched_host("http://user:pw@example.com/a", h);
    assert_string_equal(h, "http://example.com:80");
    push_sched_host("http://[::1]:9/a", h);
    assert_string_equal(h, "http://::1:9");
    /* Two ports of one host are two receivers. */
    char h2[PUSH_SCHED_HOST_MAX];
    push_sched_host("http://127.0.0.1:8081/hook", h2);
    assert_string_not_equal(h, h2);
    /* A hostile length is cut, never overflows. */
    char url[2000] = "http://";
    memset(url + 7, 'a', 1500);
    url[1507] = '\0';
    push_sched_host(url, h);
    assert_true(strlen(h) < PUSH_SCHED_HOST_MAX);
}

static void limits_of_zero_are_refused(void **state)
{
    (void)state;
    struct push_sched s;
    struct err err;
    err_clear(&err);
    assert_int_equal(push_sched_init(&s, 0, 1, 1, &err), ERR_INVALID);
    assert_int_equal(push_sched_init(&s, 4, 0, 1, &err), ERR_INVALID);
    assert_int_equal(push_sched_init(&s, 4, 1, 0, &err), ERR_INVALID);
}

static void one_receiver_gets_at_most_its_share_of_the_slots(void **state)
{
    (void)state;
    struct push_sched s;
    struct err err;
    err_clear(&err);
    assert_int_equal(push_sched_init(&s, 8, 2, 8, &err), 0);
    assert_true(push_sched_take(&s, 1, "http://slow:80"));
    assert_true(push_sched_take(&s, 2, "http://slow:80"));
    /* A third POST to the slow receiver waits, whoever's it is ... */
    assert_false(push_sched_take(&s, 3, "http://slow:80"));
    /* ... and any other receiver still gets a slot at once. */
    assert_true(push_sched_take(&s, 1, "http://fast:80"));
    push_sched_give(&s, 2, "http://slow:80");
    assert_true(push_sched_take(&s, 3, "http://slow:80"));
    assert_int_equal(s.busy, 3);
    push_sched_release(&s);
}

static void one_key_gets_at_most_its_share_of_the_slots(void **state)
{
    (void)state;
    struct push_sched s;
    struct err err;
    char host[PUSH_SCHED_HOST_MAX];
    err_clear(&err);
    assert_int_equal(push_sched_init(&s, 8, 1, 3, &err), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(host, sizeof host, "http://r%d:80", i);
        assert_true(push_sched_take(&s, 7, host));
    }
    assert_false(push_sched_take(&s, 7, "http://r9:80"));
    assert_true(push_sched_take(&s, 8, "http://r9:80"));
    push_sched_release(&s);
}

static void the_total_is_never_passed_and_every_slot_comes_back(void **state)
{
    (void)state;
    struct push_sched s;
    struct err err;
    char host[PUSH_SCHED_HOST_MAX];
    err_clear(&err);
    assert_int_equal(push_sched_init(&s, 4, 4, 4, &err), 0);
    for (int i = 0; i < 4; i++) {
        snprintf(host, sizeof host, "http://r%d:80", i);
        assert_true(push_sched_take(&s, i, host));
    }
    assert_true(push_sched_full(&s));
    assert_false(push_sched_take(&s, 99, "http://other:80"));
    for (int i = 0; i < 4; i++) {
        snprintf(host, sizeof host, "http://r%d:80", i);
        push_sched_give(&s, i, host);
    }
    assert_int_equal(s.busy, 0);
    assert_int_equal(s.n_hosts, 0);
    assert_int_equal(s.n_keys, 0);
    /* Giving back what was never taken changes nothing. */
    push_sched_give(&s, 5, "http://never:80");
    assert_int_equal(s.busy, 0);
    /* Taken and given many times over: the tables never outgrow the slots. */
    for (int round = 0; round < 1000; round++) {
        snprintf(host, sizeof host, "http://h%d:80", round % 7);
        assert_true(push_sched_take(&s, round % 5, host));
        push_sched_give(&s, round % 5, host);
    }
    assert_int_equal(s.busy, 0);
    push_sched_release(&s);
}

static void turns_go_round_the_keys_one_delivery_each(void **state)
{
    (void)state;
    /* Key 1 has four waiting deliveries, keys 2 and 3 one each. */
    struct push_sched_cand c[] = {
        {1, 10, 0}, {1, 11, 0}, {1, 12, 0}, {1, 13, 0}, {2, 20, 0}, {3, 30, 0},
    };
    size_t n = sizeof c / sizeof c[0], out[6];
    assert_int_equal(push_sched_order(c, n, 0, out), 0);
    int64_t want[] = {10, 20, 30, 11, 12, 13};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(c[out[i]].alert_id, want[i]);
}

static void the_next_turn_starts_after_the_key_served_last(void **state)
{
    (void)state;
    struct push_sched_cand c[] = {{1, 10, 0}, {2, 20, 0}, {3, 30, 0}, {3, 31, 0}};
    size_t out[4];
    assert_int_equal(push_sched_order(c, 4, 2, out), 0);
    int64_t want[] = {30, 10, 20, 31};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(c[out[i]].alert_id, want[i]);
}

static void within_a_key_the_alert_served_longest_ago_goes_first(void **state)
{
    (void)state;
    struct push_sched_cand c[] = {{5, 1, 300}, {5, 2, 100}, {5, 3, 0}, {5, 4, 200}};
    size_t out[4];
    assert_int_equal(push_sched_order(c, 4, 0, out), 0);
    int64_t want[] = {3, 2, 4, 1};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(c[out[i]].alert_id, want[i]);
}

static void many_alerts_of_one_key_never_starve_another_key(void **state)
{
    (void)state;
    /* 1,000 deliveries of key 1, one of key 2 last: key 2's comes second. */
    size_t n = 1001;
    struct push_sched_cand *c = calloc(n, sizeof *c);
    size_t *out = calloc(n, sizeof *out);
    assert_non_null(c);
    assert_non_null(out);
    for (size_t i = 0; i < 1000; i++)
        c[i] = (struct push_sched_cand){1, (int64_t)i + 1, 0};
    c[1000] = (struct push_sched_cand){2, 5000, 0};
    assert_int_equal(push_sched_order(c, n, 0, out), 0);
    assert_int_equal(c[out[1]].alert_id, 5000);
    /* Every candidate appears once. */
    char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        assert_true(out[i] < n);
        assert_false(seen[out[i]]);
        seen[out[i]] = 1;
    }
    free(seen);
    free(c);
    free(out);
    assert_int_equal(push_sched_order(NULL, 0, 0, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_receiver_is_its_scheme_host_and_port),
        cmocka_unit_test(limits_of_zero_are_refused),
        cmocka_unit_test(one_receiver_gets_at_most_its_share_of_the_slots),
        cmocka_unit_test(one_key_gets_at_most_its_share_of_the_slots),
        cmocka_unit_test(the_total_is_never_passed_and_every_slot_comes_back),
        cmocka_unit_test(turns_go_round_the_keys_one_delivery_each),
        cmocka_unit_test(the_next_turn_starts_after_the_key_served_last),
        cmocka_unit_test(within_a_key_the_alert_served_longest_ago_goes_first),
        cmocka_unit_test(many_alerts_of_one_key_never_starve_another_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
