/* auth/: key material, the order of key checks, daily and monthly quotas,
 * the burst limit, usage counting across threads and restarts, and the
 * X-RateLimit-* values. Every test runs against a real SQLite store in a
 * temporary directory and drives time through auth_check's `now`. */
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

#include "auth/auth.h"
#include "store/store.h"
#include "util/err.h"

/* 2026-03-15T12:00:00Z and other instants, as unix seconds. */
#define T_MAR15_NOON 1773576000LL
#define T_MAR16_MIDNIGHT 1773619200LL
#define T_MAR31_2300 1774998000LL
#define T_APR01_MIDNIGHT 1775001600LL
#define T_DEC31_LAST 1798761599LL
#define T_JAN01_2027 1798761600LL
#define DAY(t) ((t) / 86400)
#define MAR01_DAY DAY(1772323200LL)

struct fixture {
    char dir[64];
    struct store *store;
    struct auth *auth;
};

static void remove_tree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

/* No key cache unless a test asks for one: store changes show at once. */
static const struct auth_options uncached = {.key_cache_ttl_ms = 0};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-test-auth-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    struct err err;
    err_clear(&err);
    int rc = store_open(&f->store, f->dir, &err);
    if (rc < 0)
        fail_msg("store_open: %s", err_msg(&err, rc));
    assert_int_equal(auth_new_with(&f->auth, f->store, &uncached, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    auth_free(f->auth);
    store_close(f->store);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* A new key of plan; returns its id and writes the key. */
static int64_t make_key(struct fixture *f, const char *name, const char *plan,
                        char key[AUTH_KEY_CHARS + 1])
{
    struct err err;
    err_clear(&err);
    int64_t id = -1;
    int rc = auth_key_create(f->store, name, plan, key, &id, &err);
    if (rc < 0)
        fail_msg("auth_key_create: %s", err_msg(&err, rc));
    assert_true(id > 0);
    return id;
}

static enum auth_status check(struct fixture *f, const char *key, int64_t now,
                              struct auth_result *out)
{
    struct auth_result local;
    struct err err;
    err_clear(&err);
    if (!out)
        out = &local;
    int rc = auth_check(f->auth, key, now, out, &err);
    if (rc < 0)
        fail_msg("auth_check: %s", err_msg(&err, rc));
    return out->status;
}

static void flush(struct fixture *f)
{
    struct err err;
    err_clear(&err);
    int rc = auth_flush(f->auth, &err);
    if (rc < 0)
        fail_msg("auth_flush: %s", err_msg(&err, rc));
}

static int64_t stored_usage(struct fixture *f, int64_t id, int64_t day_from, int64_t day_to)
{
    struct err err;
    err_clear(&err);
    int64_t n = -1;
    int rc = store_usage_sum(f->store, id, day_from, day_to, &n, &err);
    if (rc < 0)
        fail_msg("store_usage_sum: %s", err_msg(&err, rc));
    return n;
}

static void define_plan(struct fixture *f, const struct auth_plan *p)
{
    struct err err;
    err_clear(&err);
    int rc = auth_plan_set(f->auth, p, &err);
    if (rc < 0)
        fail_msg("auth_plan_set: %s", err_msg(&err, rc));
}

/* --- key material --------------------------------------------------------- */

static int cmp_keys(const void *a, const void *b)
{
    return memcmp(a, b, AUTH_KEY_CHARS);
}

static void generated_keys_are_32_lower_case_hex_characters_and_unique(void **state)
{
    (void)state;
    enum { N = 2000 };
    char(*keys)[AUTH_KEY_CHARS + 1] = calloc(N, sizeof *keys);
    assert_non_null(keys);
    struct err err;
    err_clear(&err);
    unsigned seen[16] = {0};
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(auth_key_generate(keys[i], &err), 0);
        assert_int_equal(strlen(keys[i]), AUTH_KEY_CHARS);
        for (size_t j = 0; j < AUTH_KEY_CHARS; j++) {
            char c = keys[i][j];
            assert_true((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
            seen[c <= '9' ? c - '0' : c - 'a' + 10]++;
        }
    }
    /* 64,000 random digits: each of the 16 appears about 4,000 times. */
    for (size_t d = 0; d < 16; d++)
        assert_true(seen[d] > 3000 && seen[d] < 5000);
    qsort(keys, N, sizeof *keys, cmp_keys);
    for (size_t i = 1; i < N; i++)
        assert_int_not_equal(memcmp(keys[i - 1], keys[i], AUTH_KEY_CHARS), 0);
    free(keys);
}

static void key_hashes_are_sha256_of_the_given_bytes(void **state)
{
    (void)state;
    /* FIPS 180-2 test vectors. */
    static const unsigned char abc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                          0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                          0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                          0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    static const unsigned char empty[32] = {0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14,
                                            0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
                                            0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
                                            0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};
    unsigned char h[32];
    auth_key_hash("abc", 3, h);
    assert_memory_equal(h, abc, 32);
    auth_key_hash("abcdef", 3, h);
    assert_memory_equal(h, abc, 32);
    auth_key_hash("", 0, h);
    assert_memory_equal(h, empty, 32);
}

static void a_created_key_is_stored_only_as_its_hash(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, "alice", "developer", key);
    unsigned char h[32];
    auth_key_hash(key, strlen(key), h);
    struct arena ar;
    arena_init(&ar, 0);
    struct key_record rec;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_key_find(f->store, &ar, h, &rec, &err), 0);
    assert_int_equal(rec.id, id);
    assert_string_equal(rec.name, "alice");
    assert_string_equal(rec.plan, "developer");
    assert_int_equal(rec.state, KEY_ACTIVE);
    assert_memory_equal(rec.hash, h, 32);
    /* Nothing the store returns contains the key itself. */
    struct key_record *all;
    size_t n;
    assert_int_equal(store_keys_list(f->store, &ar, &all, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_null(strstr(all[0].name, key));
    assert_null(strstr(all[0].plan, key));
    arena_release(&ar);
}

/* --- the order of checks ---------------------------------------------------- */

static void no_key_is_missing(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(check(f, NULL, T_MAR15_NOON, NULL), AUTH_MISSING);
    assert_int_equal(check(f, "", T_MAR15_NOON, NULL), AUTH_MISSING);
}

static void unknown_keys_of_any_length_are_invalid(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "unlimited", key);
    char other[AUTH_KEY_CHARS + 1];
    memcpy(other, key, sizeof other);
    other[7] = other[7] == 'a' ? 'b' : 'a';
    assert_int_equal(check(f, other, T_MAR15_NOON, NULL), AUTH_INVALID);
    char upper[AUTH_KEY_CHARS + 1];
    for (size_t i = 0; i <= AUTH_KEY_CHARS; i++)
        upper[i] = (char)(key[i] >= 'a' && key[i] <= 'f' ? key[i] - 32 : key[i]);
    if (strcmp(upper, key))
        assert_int_equal(check(f, upper, T_MAR15_NOON, NULL), AUTH_INVALID);
    char longer[AUTH_KEY_CHARS + 2];
    snprintf(longer, sizeof longer, "%s0", key);
    assert_int_equal(check(f, longer, T_MAR15_NOON, NULL), AUTH_INVALID);
    key[AUTH_KEY_CHARS - 1] = '\0';
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_INVALID);
    assert_int_equal(check(f, "x", T_MAR15_NOON, NULL), AUTH_INVALID);
    char *huge = malloc(100001);
    assert_non_null(huge);
    memset(huge, 'f', 100000);
    huge[100000] = '\0';
    assert_int_equal(check(f, huge, T_MAR15_NOON, NULL), AUTH_INVALID);
    free(huge);
}

static void a_disabled_key_is_refused_until_enabled(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, "bob", "unlimited", key);
    struct err err;
    err_clear(&err);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(r.key_id, id);
    assert_int_equal(store_key_update(f->store, id, NULL, KEY_DISABLED, &err), 0);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_DISABLED);
    assert_int_equal(store_key_update(f->store, id, NULL, KEY_ACTIVE, &err), 0);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    /* Refused requests were not counted. */
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 2);
}

static void a_deleted_key_becomes_invalid(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "unlimited", key);
    struct err err;
    err_clear(&err);
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_OK);
    assert_int_equal(store_key_delete(f->store, id, &err), 0);
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_INVALID);
}

static void the_key_cache_keeps_a_key_for_its_ttl(void **state)
{
    struct fixture *f = *state;
    struct err err;
    err_clear(&err);
    /* A second auth with an hour-long cache on the same store. */
    struct auth_options hour = {.key_cache_ttl_ms = AUTH_KEY_CACHE_TTL_MS_MAX};
    struct auth *cached = NULL;
    assert_int_equal(auth_new_with(&cached, f->store, &hour, &err), 0);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "unlimited", key);
    struct auth_result r;
    assert_int_equal(auth_check(cached, key, T_MAR15_NOON, &r, &err), 0);
    assert_int_equal(r.status, AUTH_OK);
    assert_int_equal(store_key_update(f->store, id, NULL, KEY_DISABLED, &err), 0);
    /* The cached answer stands; the uncached auth sees the change. */
    assert_int_equal(auth_check(cached, key, T_MAR15_NOON, &r, &err), 0);
    assert_int_equal(r.status, AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_DISABLED);
    auth_free(cached);
}

static void a_key_whose_plan_is_not_defined_is_refused(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "gold", key);
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_PLAN_UNKNOWN);
    struct auth_plan gold = {.name = "gold", .requests_per_day = 7};
    define_plan(f, &gold);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_string_equal(r.plan.name, "gold");
    assert_int_equal(r.plan.requests_per_day, 7);
}

static void the_unlimited_plan_never_refuses_and_sends_no_limit_headers(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "unlimited", key);
    struct auth_result r;
    for (int i = 0; i < 3000; i++) {
        assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
        assert_false(r.limited);
    }
    assert_string_equal(r.plan.name, "unlimited");
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 3000);
}

/* --- quotas -------------------------------------------------------------- */

static void the_101st_request_of_a_100_per_day_key_is_refused_until_the_next_utc_day(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "developer", key);
    struct auth_result r;
    for (int i = 0; i < 100; i++)
        assert_int_equal(check(f, key, T_MAR15_NOON + i, &r), AUTH_OK);
    assert_int_equal(r.remaining, 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(check(f, key, T_MAR16_MIDNIGHT - 1, &r), AUTH_EXHAUSTED);
        assert_true(r.limited);
        assert_int_equal(r.limit, 100);
        assert_int_equal(r.remaining, 0);
        assert_int_equal(r.reset, T_MAR16_MIDNIGHT);
        assert_int_equal(r.retry_after, 1);
    }
    assert_int_equal(check(f, key, T_MAR15_NOON + 200, &r), AUTH_EXHAUSTED);
    assert_int_equal(r.retry_after, T_MAR16_MIDNIGHT - (T_MAR15_NOON + 200));
    /* A new UTC day starts a new quota. */
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT, &r), AUTH_OK);
    assert_int_equal(r.remaining, 99);
    assert_int_equal(r.reset, T_MAR16_MIDNIGHT + 86400);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 100);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR16_MIDNIGHT), DAY(T_MAR16_MIDNIGHT)), 1);
}

static void a_monthly_quota_spans_days_and_resets_on_the_first_of_the_month(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "monthly5", .requests_per_month = 5};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "monthly5", key);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 3600, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR31_2300, &r), AUTH_OK);
    assert_int_equal(r.remaining, 0);
    assert_int_equal(r.reset, T_APR01_MIDNIGHT);
    assert_int_equal(check(f, key, T_MAR31_2300, &r), AUTH_EXHAUSTED);
    assert_int_equal(r.retry_after, 3600);
    assert_int_equal(r.limit, 5);
    assert_int_equal(check(f, key, T_APR01_MIDNIGHT, &r), AUTH_OK);
    assert_int_equal(r.remaining, 4);
    flush(f);
    assert_int_equal(stored_usage(f, id, MAR01_DAY, DAY(T_MAR31_2300)), 5);
    assert_int_equal(stored_usage(f, id, DAY(T_APR01_MIDNIGHT), DAY(T_APR01_MIDNIGHT)), 1);
}

static void a_monthly_quota_resets_at_the_turn_of_the_year(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "monthly2", .requests_per_month = 2};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "monthly2", key);
    struct auth_result r;
    assert_int_equal(check(f, key, T_DEC31_LAST, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_DEC31_LAST, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_DEC31_LAST, &r), AUTH_EXHAUSTED);
    assert_int_equal(r.reset, T_JAN01_2027);
    assert_int_equal(r.retry_after, 1);
    assert_int_equal(check(f, key, T_JAN01_2027, &r), AUTH_OK);
}

static void the_business_plan_counts_250000_requests_a_month(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "business", key);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_true(r.limited);
    assert_int_equal(r.limit, 250000);
    assert_int_equal(r.remaining, 249999);
    assert_int_equal(r.reset, T_APR01_MIDNIGHT);
    assert_int_equal(r.plan.result_window, 10000);
    assert_int_equal(r.plan.delay_seconds, 0);
    assert_true(r.plan.history_days >= 5 * 365);
}

static void the_developer_plan_matches_api_md(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p;
    assert_int_equal(auth_plan_get(f->auth, "developer", &p), 0);
    assert_int_equal(p.requests_per_day, 100);
    assert_int_equal(p.result_window, 100);
    assert_int_equal(p.delay_seconds, 86400);
    assert_int_equal(p.history_days, 30);
    assert_int_equal(auth_plan_get(f->auth, "unlimited", &p), 0);
    assert_int_equal(p.requests_per_day + p.requests_per_month + p.result_window, 0);
    assert_int_equal(auth_plan_get(f->auth, "nope", &p), ERR_NOTFOUND);
    assert_int_equal(auth_plan_get(f->auth, NULL, &p), ERR_NOTFOUND);
}

static void plans_with_bad_names_or_negative_limits_are_rejected(void **state)
{
    struct fixture *f = *state;
    struct err err;
    err_clear(&err);
    struct auth_plan p = {.name = ""};
    assert_int_equal(auth_plan_set(f->auth, &p, &err), ERR_INVALID);
    snprintf(p.name, sizeof p.name, "has space");
    assert_int_equal(auth_plan_set(f->auth, &p, &err), ERR_INVALID);
    snprintf(p.name, sizeof p.name, "ok");
    p.requests_per_day = -1;
    assert_int_equal(auth_plan_set(f->auth, &p, &err), ERR_INVALID);
    p.requests_per_day = 0;
    p.burst_per_second = -0.5;
    assert_int_equal(auth_plan_set(f->auth, &p, &err), ERR_INVALID);
    p.burst_per_second = 0;
    assert_int_equal(auth_plan_set(f->auth, &p, &err), 0);
    /* Replacing a built-in plan. */
    struct auth_plan dev = {.name = "developer", .requests_per_day = 3};
    define_plan(f, &dev);
    assert_int_equal(auth_plan_get(f->auth, "developer", &p), 0);
    assert_int_equal(p.requests_per_day, 3);
    assert_int_equal(p.delay_seconds, 0);
}

/* --- burst limit ------------------------------------------------------------ */

static void a_burst_beyond_the_bucket_is_rate_limited_with_retry_after(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "bursty", .burst_per_second = 2, .burst_size = 4};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "bursty", key);
    struct auth_result r;
    int64_t t = T_MAR15_NOON;
    for (int i = 0; i < 4; i++)
        assert_int_equal(check(f, key, t, &r), AUTH_OK);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(check(f, key, t, &r), AUTH_RATE_LIMITED);
        assert_int_equal(r.retry_after, 1);
    }
    /* One second refills two tokens. */
    assert_int_equal(check(f, key, t + 1, &r), AUTH_OK);
    assert_int_equal(check(f, key, t + 1, &r), AUTH_OK);
    assert_int_equal(check(f, key, t + 1, &r), AUTH_RATE_LIMITED);
    /* A long pause refills to the bucket's size only. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(check(f, key, t + 100, &r), AUTH_OK);
    assert_int_equal(check(f, key, t + 100, &r), AUTH_RATE_LIMITED);
    /* Refused requests do not count. */
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(t), DAY(t)), 10);
}

static void a_slow_bucket_asks_to_wait_several_seconds(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "slow", .burst_per_second = 0.25, .burst_size = 1};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "slow", key);
    struct auth_result r;
    int64_t t = T_MAR15_NOON;
    assert_int_equal(check(f, key, t, &r), AUTH_OK);
    assert_int_equal(check(f, key, t, &r), AUTH_RATE_LIMITED);
    assert_int_equal(r.retry_after, 4);
    assert_int_equal(check(f, key, t + 1, &r), AUTH_RATE_LIMITED);
    assert_int_equal(r.retry_after, 3);
    assert_int_equal(check(f, key, t + 3, &r), AUTH_RATE_LIMITED);
    assert_int_equal(r.retry_after, 1);
    assert_int_equal(check(f, key, t + 4, &r), AUTH_OK);
    /* A clock that steps back neither refills nor breaks the bucket. */
    assert_int_equal(check(f, key, t, &r), AUTH_RATE_LIMITED);
    assert_true(r.retry_after >= 1);
}

static void an_exhausted_key_reports_exhausted_before_rate_limited(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {
        .name = "tight", .requests_per_day = 2, .burst_per_second = 1, .burst_size = 1};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "tight", key);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_RATE_LIMITED);
    assert_true(r.limited);
    assert_int_equal(r.remaining, 1);
    assert_int_equal(check(f, key, T_MAR15_NOON + 1, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON + 1, &r), AUTH_EXHAUSTED);
    /* Disabled comes before exhausted. */
    struct err err;
    err_clear(&err);
    assert_int_equal(store_key_update(f->store, id, NULL, KEY_DISABLED, &err), 0);
    assert_int_equal(check(f, key, T_MAR15_NOON + 1, &r), AUTH_DISABLED);
}

/* --- uncount -------------------------------------------------------------- */

static void an_uncounted_request_gives_its_quota_back(void **state)
{
    struct fixture *f = *state;
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "developer", key);
    struct auth_result r;
    for (int i = 0; i < 100; i++)
        assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    auth_uncount(f->auth, id, T_MAR15_NOON);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(r.remaining, 0);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_EXHAUSTED);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 100);
    /* Uncounting after a flush writes a negative correction. */
    auth_uncount(f->auth, id, T_MAR15_NOON);
    auth_uncount(f->auth, id, T_MAR15_NOON);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 98);
    assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(r.remaining, 1);
    /* An id never counted here is ignored. */
    auth_uncount(f->auth, 999999, T_MAR15_NOON);
}

/* --- threads and restarts ------------------------------------------------------ */

struct hammer {
    struct auth *auth;
    const char *key;
    int64_t now;
    int n;
    int ok, refused, failed;
};

static void *hammer_main(void *arg)
{
    struct hammer *h = arg;
    for (int i = 0; i < h->n; i++) {
        struct auth_result r;
        struct err err;
        err_clear(&err);
        if (auth_check(h->auth, h->key, h->now, &r, &err) < 0)
            h->failed++;
        else if (r.status == AUTH_OK)
            h->ok++;
        else
            h->refused++;
    }
    return NULL;
}

static int run_hammers(struct auth *a, const char *key, int64_t now, int threads, int each,
                       int *refused)
{
    pthread_t tid[16];
    struct hammer h[16];
    int ok = 0;
    *refused = 0;
    assert_true(threads <= 16);
    for (int i = 0; i < threads; i++) {
        h[i] = (struct hammer){.auth = a, .key = key, .now = now, .n = each};
        assert_int_equal(pthread_create(&tid[i], NULL, hammer_main, &h[i]), 0);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(h[i].failed, 0);
        ok += h[i].ok;
        *refused += h[i].refused;
    }
    return ok;
}

static void counts_are_exact_under_eight_threads_and_survive_a_restart(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "big", .requests_per_day = 8005};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "big", key);
    int refused;
    assert_int_equal(run_hammers(f->auth, key, T_MAR15_NOON, 8, 1000, &refused), 8000);
    assert_int_equal(refused, 0);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 8000);

    /* Two more, written by auth_free alone. */
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_OK);
    auth_free(f->auth);
    f->auth = NULL;
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 8002);

    /* A new process loads today's total: 3 left of 8005. */
    struct err err;
    err_clear(&err);
    assert_int_equal(auth_new_with(&f->auth, f->store, &uncached, &err), 0);
    define_plan(f, &p);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR15_NOON + 10, &r), AUTH_OK);
    assert_int_equal(r.remaining, 2);
    assert_int_equal(check(f, key, T_MAR15_NOON + 10, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON + 10, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR15_NOON + 10, &r), AUTH_EXHAUSTED);
}

static void a_quota_is_never_overspent_by_racing_threads(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "half", .requests_per_day = 5000};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "half", key);
    int refused;
    assert_int_equal(run_hammers(f->auth, key, T_MAR15_NOON, 8, 1000, &refused), 5000);
    assert_int_equal(refused, 3000);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 5000);
}

static void the_monthly_total_is_loaded_from_earlier_days_on_restart(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "m10", .requests_per_month = 10};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "m10", key);
    for (int i = 0; i < 7; i++)
        assert_int_equal(check(f, key, T_MAR15_NOON, NULL), AUTH_OK);
    auth_free(f->auth);
    f->auth = NULL;
    struct err err;
    err_clear(&err);
    assert_int_equal(auth_new_with(&f->auth, f->store, &uncached, &err), 0);
    define_plan(f, &p);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 5, &r), AUTH_OK);
    assert_int_equal(r.remaining, 2);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 5, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 5, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 5, &r), AUTH_EXHAUSTED);
}

static void a_new_key_reusing_a_deleted_keys_id_starts_with_its_own_counts(void **state)
{
    struct fixture *f = *state;
    char old_key[AUTH_KEY_CHARS + 1], new_key[AUTH_KEY_CHARS + 1];
    int64_t old_id = make_key(f, NULL, "developer", old_key);
    for (int i = 0; i < 100; i++)
        assert_int_equal(check(f, old_key, T_MAR15_NOON, NULL), AUTH_OK);
    assert_int_equal(check(f, old_key, T_MAR15_NOON, NULL), AUTH_EXHAUSTED);
    struct err err;
    err_clear(&err);
    assert_int_equal(store_key_delete(f->store, old_id, &err), 0);
    /* The store may hand the same id out again. */
    make_key(f, NULL, "developer", new_key);
    struct auth_result r;
    assert_int_equal(check(f, new_key, T_MAR15_NOON, &r), AUTH_OK);
    assert_int_equal(r.remaining, 99);
    flush(f);
    assert_int_equal(stored_usage(f, r.key_id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 1);
}

/* --- X-RateLimit-* values --------------------------------------------------------- */

static void the_rate_limit_values_follow_the_tightest_quota(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "both", .requests_per_day = 100, .requests_per_month = 150};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    make_key(f, NULL, "both", key);
    struct auth_result r;
    for (int i = 0; i < 60; i++)
        assert_int_equal(check(f, key, T_MAR15_NOON, &r), AUTH_OK);
    /* Day: 40 left, month: 90 left. */
    assert_true(r.limited);
    assert_int_equal(r.limit, 100);
    assert_int_equal(r.remaining, 40);
    assert_int_equal(r.reset, T_MAR16_MIDNIGHT);
    for (int i = 0; i < 50; i++)
        assert_int_equal(check(f, key, T_MAR16_MIDNIGHT, &r), AUTH_OK);
    /* Day: 50 left, month: 40 left. */
    assert_int_equal(r.limit, 150);
    assert_int_equal(r.remaining, 40);
    assert_int_equal(r.reset, T_APR01_MIDNIGHT);
    for (int i = 0; i < 40; i++)
        assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 60, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT + 60, &r), AUTH_EXHAUSTED);
    /* Both have room left by day, but the month is spent: wait for April. */
    assert_int_equal(r.remaining, 0);
    assert_int_equal(r.reset, T_APR01_MIDNIGHT);
    assert_int_equal(r.retry_after, T_APR01_MIDNIGHT - (T_MAR16_MIDNIGHT + 60));
}

static void a_day_that_rolled_over_is_not_rolled_back_by_a_late_clock(void **state)
{
    struct fixture *f = *state;
    struct auth_plan p = {.name = "d3", .requests_per_day = 3};
    define_plan(f, &p);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "d3", key);
    struct auth_result r;
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT - 1, &r), AUTH_OK);
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT, &r), AUTH_OK);
    /* A thread that read the clock a second earlier counts in the new day. */
    assert_int_equal(check(f, key, T_MAR16_MIDNIGHT - 1, &r), AUTH_OK);
    assert_int_equal(r.remaining, 1);
    flush(f);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR15_NOON), DAY(T_MAR15_NOON)), 1);
    assert_int_equal(stored_usage(f, id, DAY(T_MAR16_MIDNIGHT), DAY(T_MAR16_MIDNIGHT)), 2);
}

static void a_key_cache_time_out_of_range_is_refused(void **state)
{
    struct fixture *f = *state;
    struct err err;
    err_clear(&err);
    struct auth *a = NULL;
    struct auth_options o = {.key_cache_ttl_ms = -1};
    assert_int_equal(auth_new_with(&a, f->store, &o, &err), ERR_INVALID);
    assert_null(a);
    o.key_cache_ttl_ms = AUTH_KEY_CACHE_TTL_MS_MAX + 1;
    assert_int_equal(auth_new_with(&a, f->store, &o, &err), ERR_INVALID);
    assert_null(a);
}

/* Settings come from the options alone (cmd/ reads the environment): with
 * NEWSD_KEY_CACHE_TTL_MS=0 set, auth_new still caches for the default 2 s,
 * so a key disabled a moment ago is still served from the cache. */
static void auth_new_keeps_the_default_cache_whatever_the_environment(void **state)
{
    struct fixture *f = *state;
    struct err err;
    err_clear(&err);
    setenv("NEWSD_KEY_CACHE_TTL_MS", "0", 1);
    struct auth *dflt = NULL;
    int rc = auth_new(&dflt, f->store, &err);
    unsetenv("NEWSD_KEY_CACHE_TTL_MS");
    assert_int_equal(rc, 0);
    char key[AUTH_KEY_CHARS + 1];
    int64_t id = make_key(f, NULL, "unlimited", key);
    struct auth_result r;
    assert_int_equal(auth_check(dflt, key, T_MAR15_NOON, &r, &err), 0);
    assert_int_equal(r.status, AUTH_OK);
    assert_int_equal(store_key_update(f->store, id, NULL, KEY_DISABLED, &err), 0);
    assert_int_equal(auth_check(dflt, key, T_MAR15_NOON, &r, &err), 0);
    assert_int_equal(r.status, AUTH_OK);
    auth_free(dflt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_keys_are_32_lower_case_hex_characters_and_unique),
        cmocka_unit_test(key_hashes_are_sha256_of_the_given_bytes),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(a_created_key_is_stored_only_as_its_hash),
        T(no_key_is_missing),
        T(unknown_keys_of_any_length_are_invalid),
        T(a_disabled_key_is_refused_until_enabled),
        T(a_deleted_key_becomes_invalid),
        T(the_key_cache_keeps_a_key_for_its_ttl),
        T(a_key_cache_time_out_of_range_is_refused),
        T(auth_new_keeps_the_default_cache_whatever_the_environment),
        T(a_key_whose_plan_is_not_defined_is_refused),
        T(the_unlimited_plan_never_refuses_and_sends_no_limit_headers),
        T(the_101st_request_of_a_100_per_day_key_is_refused_until_the_next_utc_day),
        T(a_monthly_quota_spans_days_and_resets_on_the_first_of_the_month),
        T(a_monthly_quota_resets_at_the_turn_of_the_year),
        T(the_business_plan_counts_250000_requests_a_month),
        T(the_developer_plan_matches_api_md),
        T(plans_with_bad_names_or_negative_limits_are_rejected),
        T(a_burst_beyond_the_bucket_is_rate_limited_with_retry_after),
        T(a_slow_bucket_asks_to_wait_several_seconds),
        T(an_exhausted_key_reports_exhausted_before_rate_limited),
        T(an_uncounted_request_gives_its_quota_back),
        T(counts_are_exact_under_eight_threads_and_survive_a_restart),
        T(a_quota_is_never_overspent_by_racing_threads),
        T(the_monthly_total_is_loaded_from_earlier_days_on_restart),
        T(a_new_key_reusing_a_deleted_keys_id_starts_with_its_own_counts),
        T(the_rate_limit_values_follow_the_tightest_quota),
        T(a_day_that_rolled_over_is_not_rolled_back_by_a_late_clock),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
