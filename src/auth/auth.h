/* API keys, plans, quotas and rate limits (API.md §5, §6).
 * A key is 32 lower-case hex characters from getrandom(); only its SHA-256
 * is stored. auth_check maps a presented key to its account and plan and
 * applies the plan's state, quota and burst limits, counting the request.
 * Usage counts are kept in memory, exact across threads, and written to the
 * store in the background (never a disk write on the request path).
 * Thread-safe. Time always comes from the caller (tests control the clock). */
#ifndef NEWSD_AUTH_AUTH_H
#define NEWSD_AUTH_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

#define AUTH_KEY_CHARS 32
#define AUTH_PLAN_NAME_MAX 64

/* Limits of a plan; 0 means "no limit" for every number. */
struct auth_plan {
    char name[AUTH_PLAN_NAME_MAX];
    int64_t requests_per_day;
    int64_t requests_per_month;
    double burst_per_second;   /* token bucket refill rate */
    int64_t burst_size;        /* bucket capacity */
    int64_t result_window;     /* page*pageSize cap (maximumResultsReached) */
    int64_t history_days;      /* earliest `from` = today - history_days */
    int64_t delay_seconds;     /* articles newer than now - delay are hidden */
    char allowed_origins[512]; /* space-separated; "" = any (*) */
    int64_t streams;           /* live streams open at once per key (on one node) */
    /* webhook alerts (issue 17) */
    int64_t alerts; /* alerts a key may keep (AUTH_PLAN_ALERTS_DEFAULT unless set) */
    /* exports (issue 27): articles a key may export per UTC day, on one
     * node (/v2/everything/export); 0: no limit */
    int64_t export_per_day;
};

/* streams of the built-in plans and of a plan the config file adds. */
#define AUTH_PLAN_STREAMS_DEFAULT 5

#define AUTH_PLAN_ALERTS_DEFAULT 10 /* a plan's alerts when it does not say */

/* export_per_day of the built-in developer plan (its result window is
 * 100: an export of a few pages' worth a day); business and unlimited,
 * and a plan the config file adds, have no limit unless they set one. */
#define AUTH_PLAN_DEVELOPER_EXPORT_PER_DAY 1000

enum auth_status {
    AUTH_OK = 0,
    AUTH_MISSING,      /* apiKeyMissing 401 */
    AUTH_INVALID,      /* apiKeyInvalid 401 */
    AUTH_DISABLED,     /* apiKeyDisabled 401 */
    AUTH_PLAN_UNKNOWN, /* apiKeyDisabled 401: its plan is not in the config */
    AUTH_EXHAUSTED,    /* apiKeyExhausted 429 */
    AUTH_RATE_LIMITED, /* rateLimited 429 */
};

struct auth_result {
    enum auth_status status;
    int64_t key_id;
    struct auth_plan plan; /* copy of the key's plan */
    int64_t retry_after;   /* seconds, for AUTH_RATE_LIMITED / AUTH_EXHAUSTED */
    /* For X-RateLimit-* headers when the plan limits the key: */
    bool limited;
    int64_t limit, remaining, reset; /* reset = unix seconds of the next period */
    unsigned char key_hash[32];      /* SHA-256 of the presented key (auth_key_state) */
};

struct auth;

#define AUTH_KEY_CACHE_TTL_MS_DEFAULT 2000
#define AUTH_KEY_CACHE_TTL_MS_MAX (3600 * 1000)

/* Settings of struct auth, filled in by cmd/ (NEWSD_KEY_CACHE_TTL_MS). */
struct auth_options {
    /* Milliseconds a looked-up key is trusted without asking the store
     * again, so a key disabled by `newsd keys` works this long more;
     * 0 = no cache (tests), at most AUTH_KEY_CACHE_TTL_MS_MAX. */
    int64_t key_cache_ttl_ms;
};

/* Create with the built-in plans (unlimited, developer, business); config may
 * override or add plans later (auth_plan_set). opt NULL: the defaults
 * (AUTH_KEY_CACHE_TTL_MS_DEFAULT); ERR_INVALID for a TTL out of range. */
int auth_new_with(struct auth **out, struct store *s, const struct auth_options *opt,
                  struct err *err);
/* auth_new_with with the default options. */
int auth_new(struct auth **out, struct store *s, struct err *err);
/* Flush pending usage to the store, then free. */
void auth_free(struct auth *a);

/* Define or replace a plan. */
int auth_plan_set(struct auth *a, const struct auth_plan *p, struct err *err);
/* Look a plan up by name; ERR_NOTFOUND. */
int auth_plan_get(struct auth *a, const char *name, struct auth_plan *out);

/* Check the presented key (NULL or "" = missing) at time now and count the
 * request when it passes the key-state checks. Returns 0 with out->status
 * telling the verdict, or a negative ERR_* on a store failure. */
int auth_check(struct auth *a, const char *key, int64_t now, struct auth_result *out,
               struct err *err);

/* The state of the key whose SHA-256 is hash, now, without counting a
 * request: for a request that goes on after its key was checked (a live
 * stream). Through the same cache as auth_check, so a change made with
 * `newsd keys` is seen within key_cache_ttl_ms here too. out->status is
 * AUTH_OK (with out->plan), AUTH_INVALID (the key was deleted) or
 * AUTH_DISABLED, AUTH_PLAN_UNKNOWN (its plan is not defined); a negative ERR_*
 * on a store failure. */
int auth_key_state(struct auth *a, const unsigned char hash[32], struct auth_result *out,
                   struct err *err);

/* Undo the count of a request that ended in a 5xx before its search ran
 * (those do not count; API.md §8). */
void auth_uncount(struct auth *a, int64_t key_id, int64_t now);

/* Write pending usage counts to the store (also done in the background). */
int auth_flush(struct auth *a, struct err *err);

/* --- key material ------------------------------------------------------ */

/* New random key: AUTH_KEY_CHARS lower-case hex characters + NUL. */
int auth_key_generate(char out[AUTH_KEY_CHARS + 1], struct err *err);

/* SHA-256 of a presented key. */
void auth_key_hash(const char *key, size_t len, unsigned char out[32]);

/* Create a key with name and plan in the store; writes the key (shown once). */
int auth_key_create(struct store *s, const char *name, const char *plan,
                    char key_out[AUTH_KEY_CHARS + 1], int64_t *id_out, struct err *err);

#endif
