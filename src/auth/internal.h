/* Private to src/auth/: the body of struct auth and the helpers its files
 * share (auth.c: lifecycle and auth_check; key.c: key material and the key
 * cache; plan.c: plan table; quota.c: usage counters and flushing;
 * ratelimit.c: the token bucket). Nothing outside src/auth/ includes it.
 * Locking: plans under plans_lock (rwlock); every key-cache entry and usage
 * entry lives in one shard and is touched only under that shard's mutex;
 * flush_mu serialises flushes. No lock is held across a store call. */
#ifndef NEWSD_AUTH_INTERNAL_H
#define NEWSD_AUTH_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "auth/auth.h"

#define AUTH_SHARDS 16
#define AUTH_BUCKETS 64               /* hash chains per shard and map */
#define AUTH_CACHE_MAX_PER_SHARD 4096 /* cached keys per shard */
#define AUTH_PLANS_MAX 256
#define AUTH_FLUSH_INTERVAL_MS 1000

/* A key as the store knows it, cached for cache_ttl_ms. */
struct auth_key_entry {
    struct auth_key_entry *next;
    unsigned char hash[32];
    int64_t id;
    int state;                     /* enum key_state */
    char plan[AUTH_PLAN_NAME_MAX]; /* "" when the stored name is too long */
    int64_t expires_ms;            /* monotonic clock */
};

/* What auth_check needs of a key. */
struct auth_key_info {
    int64_t id;
    int state;
    char plan[AUTH_PLAN_NAME_MAX];
    bool fresh; /* read from the store now, not from the cache */
};

/* Token bucket of one key (ratelimit.c). */
struct auth_bucket {
    double tokens;
    int64_t last; /* time of the last refill, seconds */
    bool started;
};

/* Requests counted for one UTC day and not yet written to the store. */
struct auth_pending {
    int64_t day;
    int64_t n; /* may be negative after auth_uncount of a flushed count */
};

/* Usage of one key in this process. Never removed while the auth lives, so
 * "no entry" means "nothing counted here yet" (the store is then exact). */
struct auth_usage {
    struct auth_usage *next;
    int64_t key_id;
    unsigned char hash[32]; /* of the key the counts belong to (ids may be reused) */
    int64_t day;            /* UTC day the counters below belong to */
    int64_t day_count;      /* requests on `day`, store total included */
    int64_t month_count;    /* requests in `day`'s month up to now */
    int64_t last_used;
    struct auth_bucket bucket;
    struct auth_pending *pending;
    size_t n_pending, cap_pending;
};

struct auth_shard {
    pthread_mutex_t mu;
    struct auth_key_entry *keys[AUTH_BUCKETS];
    size_t n_keys;
    struct auth_usage *usage[AUTH_BUCKETS];
};

struct auth {
    struct store *store;
    int64_t cache_ttl_ms; /* 0 = no key cache */

    pthread_rwlock_t plans_lock;
    struct auth_plan *plans;
    size_t n_plans;

    struct auth_shard shards[AUTH_SHARDS];

    pthread_mutex_t flush_mu;

    /* Background flusher. */
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    bool stop;
    bool flusher_started;
    pthread_t flusher;
};

/* --- key.c --- */

/* The key with this hash: from the cache or the store. ERR_NOTFOUND when no
 * key has it. */
int auth_key_lookup(struct auth *a, const unsigned char hash[32], struct auth_key_info *out,
                    struct err *err);

/* Free every cached key. */
void auth_key_cache_clear(struct auth *a);

/* --- plan.c --- */

/* Install the built-in plans; 0 or ERR_NOMEM. */
int auth_plans_init(struct auth *a, struct err *err);
void auth_plans_release(struct auth *a);

/* --- ratelimit.c --- */

/* Take one token at time now from a bucket refilled at rate per second up to
 * capacity (full at first use). Returns 0 when taken, else the whole seconds
 * (>= 1) until a token is available; nothing is taken then. */
int64_t auth_bucket_take(struct auth_bucket *b, double rate, double capacity, int64_t now);

/* Capacity of a plan's bucket: burst_size, or the refill of one second
 * (at least 1) when burst_size is 0. */
double auth_bucket_capacity(const struct auth_plan *p);

/* --- quota.c --- */

/* UTC day of t, and the first day of that day's calendar month and of the
 * next one. */
int64_t auth_day(int64_t t);
int64_t auth_month_first(int64_t day);
int64_t auth_month_next(int64_t day);

/* Apply quota and burst limits of plan p to key_id (whose key hashes to hash)
 * at time now and count the request when it passes. Fills status,
 * retry_after and the limit fields of out. Returns 0 or a negative ERR_*
 * (store failure loading the totals). */
int auth_usage_take(struct auth *a, int64_t key_id, const unsigned char hash[32],
                    const struct auth_plan *p, int64_t now, struct auth_result *out,
                    struct err *err);

/* Undo one count (auth_uncount). */
void auth_usage_untake(struct auth *a, int64_t key_id, int64_t now);

/* Write pending counts (auth_flush). */
int auth_usage_flush(struct auth *a, struct err *err);

/* Free every usage entry (after the last flush). */
void auth_usage_release(struct auth *a);

#endif
