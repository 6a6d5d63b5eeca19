/* Usage counting, quotas and burst limits (auth.h: auth_check's counting,
 * auth_uncount, auth_flush). Each key seen by this process has one entry
 * holding today's and this month's totals (loaded from the store with
 * store_usage_sum the first time the key is seen, then kept in memory), its
 * token bucket and the counts not yet written. Counting happens under the
 * entry's shard mutex, so it is exact across threads; writing is done by
 * auth_usage_flush (background thread, auth_flush, auth_free) as one
 * store_usage_add per key and day, never on the request path.
 *
 * Days are UTC days, months UTC calendar months. A count is filed under the
 * entry's current day; a request whose clock reads a day that already rolled
 * over counts in the new day (counters only move forward).
 *
 * Several nodes on one store (PostgreSQL): totals loaded once per process
 * would let every node spend the whole quota, so a key whose plan has a quota
 * is counted in the store itself, one atomic check-and-count per request
 * (store_usage_take; one round trip), and the entry mirrors the store's
 * totals. Burst limits stay per node. An undone count (auth_uncount) goes
 * out with the next flush as -1. While the store cannot be reached each node
 * counts in memory as for the embedded store (searches go on; the quota may
 * be overrun by what the nodes serve meanwhile) and writes the counts later. */
#include "auth/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/log.h"
#include "util/timefmt.h"

#include "util/banned.h"

int64_t auth_day(int64_t t)
{
    return timefmt_day(t);
}

int64_t auth_month_first(int64_t day)
{
    int64_t y;
    unsigned m, d;
    timefmt_civil_from_days(day, &y, &m, &d);
    return timefmt_days_from_civil(y, m, 1);
}

int64_t auth_month_next(int64_t day)
{
    int64_t y;
    unsigned m, d;
    timefmt_civil_from_days(day, &y, &m, &d);
    if (m == 12)
        return timefmt_days_from_civil(y + 1, 1, 1);
    return timefmt_days_from_civil(y, m + 1, 1);
}

static struct auth_shard *usage_shard(struct auth *a, int64_t key_id)
{
    return &a->shards[(uint64_t)key_id % AUTH_SHARDS];
}

static size_t usage_bucket(int64_t key_id)
{
    return (size_t)(((uint64_t)key_id / AUTH_SHARDS) % AUTH_BUCKETS);
}

/* The entry of key_id (shard mutex held), or NULL. */
static struct auth_usage *usage_find(struct auth_shard *sh, int64_t key_id)
{
    for (struct auth_usage *u = sh->usage[usage_bucket(key_id)]; u; u = u->next) {
        if (u->key_id == key_id)
            return u;
    }
    return NULL;
}

/* Add n to the pending count of day (shard mutex held). */
static int usage_pending_add(struct auth_usage *u, int64_t day, int64_t n)
{
    for (size_t i = 0; i < u->n_pending; i++) {
        if (u->pending[i].day == day) {
            u->pending[i].n += n;
            return 0;
        }
    }
    if (array_reserve(&u->pending, &u->cap_pending, u->n_pending, 1, sizeof *u->pending) < 0)
        return ERR_NOMEM;
    u->pending[u->n_pending].day = day;
    u->pending[u->n_pending].n = n;
    u->n_pending++;
    return 0;
}

/* Move the counters of u forward to day (shard mutex held). */
static void usage_roll(struct auth_usage *u, int64_t day)
{
    if (day <= u->day)
        return;
    if (auth_month_first(day) != auth_month_first(u->day))
        u->month_count = 0;
    u->day_count = 0;
    u->day = day;
}

/* The entry of key_id, created with the store's totals for day when this
 * process has not seen the key yet. A store may give the id of a deleted key
 * to a new one; the entry remembers the key's hash so the new key starts from
 * its own totals, not the old key's. Returns with the shard mutex held. */
static int usage_get_locked(struct auth *a, int64_t key_id, const unsigned char hash[32],
                            int64_t day, struct auth_usage **out, struct err *err)
{
    struct auth_shard *sh = usage_shard(a, key_id);
    pthread_mutex_lock(&sh->mu);
    struct auth_usage *u = usage_find(sh, key_id);
    if (u && !memcmp(u->hash, hash, 32)) {
        *out = u;
        return 0;
    }
    pthread_mutex_unlock(&sh->mu);

    /* Not under the mutex: a store read may take a while. Nothing of this key
     * is pending here (no entry, or one of a deleted key whose counts are
     * dropped below), so the store's totals are complete. */
    int64_t today = 0, month = 0;
    int rc = store_usage_sum(a->store, key_id, day, day, &today, err);
    if (rc == 0)
        rc = store_usage_sum(a->store, key_id, auth_month_first(day), day, &month, err);
    if (rc < 0)
        return rc;

    pthread_mutex_lock(&sh->mu);
    u = usage_find(sh, key_id);
    if (u && !memcmp(u->hash, hash, 32)) {
        /* Another thread loaded it first; its totals are the ones counted on. */
        *out = u;
        return 0;
    }
    if (!u) {
        u = calloc(1, sizeof *u);
        if (!u) {
            pthread_mutex_unlock(&sh->mu);
            return err_set(err, ERR_NOMEM, "out of memory for usage counters");
        }
        u->key_id = key_id;
        size_t b = usage_bucket(key_id);
        u->next = sh->usage[b];
        sh->usage[b] = u;
    }
    /* New, or the id of a deleted key: its unwritten counts go with it. */
    memcpy(u->hash, hash, 32);
    u->day = day;
    u->day_count = today;
    u->month_count = month;
    u->last_used = 0;
    memset(&u->bucket, 0, sizeof u->bucket);
    u->n_pending = 0;
    *out = u;
    return 0;
}

/* X-RateLimit-* values: the quota with the fewest requests left (on a tie,
 * the one that resets later, since that is when the key is really free). */
static void usage_limits(const struct auth_usage *u, const struct auth_plan *p,
                         struct auth_result *out)
{
    out->limited = false;
    if (p->requests_per_day > 0) {
        out->limited = true;
        out->limit = p->requests_per_day;
        out->remaining = p->requests_per_day - u->day_count;
        out->reset = (u->day + 1) * 86400;
    }
    if (p->requests_per_month > 0) {
        int64_t left = p->requests_per_month - u->month_count;
        if (!out->limited || left <= out->remaining) {
            out->limited = true;
            out->limit = p->requests_per_month;
            out->remaining = left;
            out->reset = auth_month_next(u->day) * 86400;
        }
    }
    if (out->limited && out->remaining < 0)
        out->remaining = 0;
}

/* Whether a quota of p is used up (shard mutex held). */
static bool usage_spent(const struct auth_usage *u, const struct auth_plan *p)
{
    return (p->requests_per_day > 0 && u->day_count >= p->requests_per_day) ||
           (p->requests_per_month > 0 && u->month_count >= p->requests_per_month);
}

/* AUTH_EXHAUSTED with the limits and when the key is free again (when
 * every exhausted period has ended). Shard mutex held. */
static void usage_exhausted(const struct auth_usage *u, const struct auth_plan *p, int64_t now,
                            struct auth_result *out)
{
    bool month_out = p->requests_per_month > 0 && u->month_count >= p->requests_per_month;
    usage_limits(u, p, out);
    out->status = AUTH_EXHAUSTED;
    int64_t until = month_out ? auth_month_next(u->day) * 86400 : (u->day + 1) * 86400;
    out->retry_after = until > now ? until - now : 1;
}

/* A store shared by several nodes (PostgreSQL): the request is counted in
 * the store by one atomic check-and-count (store_usage_take), so a quota
 * holds across nodes; the entry's totals then mirror the store's. Called
 * and returns with the shard mutex held (released during the store call;
 * entries are never freed while the auth lives). ERR_UNSUPPORTED: the
 * store belongs to this process alone, counting in memory is exact. */
static int usage_take_shared(struct auth *a, struct auth_shard *sh, struct auth_usage *u,
                             int64_t key_id, const struct auth_plan *p, int64_t now, bool *taken,
                             struct err *err)
{
    int64_t day = u->day, day_n = 0, month_n = 0;
    pthread_mutex_unlock(&sh->mu);
    int rc = store_usage_take(a->store, key_id, day, auth_month_first(day), p->requests_per_day,
                              p->requests_per_month, now, taken, &day_n, &month_n, err);
    pthread_mutex_lock(&sh->mu);
    if (rc < 0)
        return rc;
    if (u->day == day) {
        u->day_count = day_n;
        u->month_count = month_n;
    }
    if (*taken && now > u->last_used)
        u->last_used = now;
    return 0;
}

int auth_usage_take(struct auth *a, int64_t key_id, const unsigned char hash[32],
                    const struct auth_plan *p, int64_t now, struct auth_result *out,
                    struct err *err)
{
    struct auth_usage *u = NULL;
    int64_t day = auth_day(now);
    int rc = usage_get_locked(a, key_id, hash, day, &u, err);
    if (rc < 0)
        return rc;
    struct auth_shard *sh = usage_shard(a, key_id);
    usage_roll(u, day);

    if (usage_spent(u, p)) {
        usage_exhausted(u, p, now, out);
        goto out;
    }
    if (p->burst_per_second > 0) {
        int64_t wait =
            auth_bucket_take(&u->bucket, p->burst_per_second, auth_bucket_capacity(p), now);
        if (wait > 0) {
            usage_limits(u, p, out);
            out->status = AUTH_RATE_LIMITED;
            out->retry_after = wait;
            goto out;
        }
    }
    if (p->requests_per_day > 0 || p->requests_per_month > 0) {
        bool taken = false;
        rc = usage_take_shared(a, sh, u, key_id, p, now, &taken, err);
        if (rc == 0) {
            if (taken) {
                usage_limits(u, p, out);
                out->status = AUTH_OK;
            } else {
                usage_exhausted(u, p, now, out);
            }
            goto out;
        }
        /* A store of one process: counted in memory below. A shared store
         * that cannot be reached now: counted here too and written when it
         * is back, so searches go on; the quota is then exact again. */
        if (rc != ERR_UNSUPPORTED && rc != ERR_BUSY)
            goto out;
        rc = 0;
        /* The shard mutex was let go for the store call: other threads may
         * have counted meanwhile, so the quota is checked again before this
         * request counts (without it two threads seeing 4,999 of 5,000 both
         * passed). */
        usage_roll(u, day);
        if (usage_spent(u, p)) {
            usage_exhausted(u, p, now, out);
            goto out;
        }
    }
    rc = usage_pending_add(u, u->day, 1);
    if (rc < 0) {
        /* The token stays spent: harmless, and simpler than giving it back. */
        err_set(err, rc, "out of memory for usage counters");
        goto out;
    }
    u->day_count++;
    u->month_count++;
    if (now > u->last_used)
        u->last_used = now;
    usage_limits(u, p, out);
    out->status = AUTH_OK;
out:
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

void auth_usage_untake(struct auth *a, int64_t key_id, int64_t now)
{
    struct auth_shard *sh = usage_shard(a, key_id);
    int64_t day = auth_day(now);
    pthread_mutex_lock(&sh->mu);
    struct auth_usage *u = usage_find(sh, key_id);
    if (!u)
        goto out; /* never counted here */
    /* Counted on u->day unless the day rolled over in between; then only the
     * pending count of the old day (and this month, if it is the same) moves. */
    int64_t counted_day = day >= u->day ? u->day : day;
    if (usage_pending_add(u, counted_day, -1) < 0) {
        log_error("auth: out of memory undoing a usage count of key %lld", (long long)key_id);
        goto out;
    }
    if (counted_day == u->day && u->day_count > 0)
        u->day_count--;
    if (auth_month_first(counted_day) == auth_month_first(u->day) && u->month_count > 0)
        u->month_count--;
out:
    pthread_mutex_unlock(&sh->mu);
}

/* One pending count taken out of the shards for writing. */
struct flush_item {
    int64_t key_id;
    int64_t day;
    int64_t n;
    int64_t last_used;
};

/* Put items back into their entries after a failed write (shard mutex held). */
static void flush_restore(struct auth_shard *sh, const struct flush_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct auth_usage *u = usage_find(sh, items[i].key_id);
        if (!u || usage_pending_add(u, items[i].day, items[i].n) < 0)
            log_error("auth: lost %lld usage counts of key %lld", (long long)items[i].n,
                      (long long)items[i].key_id);
    }
}

/* Take the pending counts of one shard: a malloc'd array in *out. */
static int flush_collect(struct auth_shard *sh, struct flush_item **out, size_t *n_out)
{
    size_t n = 0, k = 0;
    int rc = 0;
    *out = NULL;
    *n_out = 0;
    pthread_mutex_lock(&sh->mu);
    for (size_t b = 0; b < AUTH_BUCKETS; b++) {
        for (struct auth_usage *u = sh->usage[b]; u; u = u->next)
            n += u->n_pending;
    }
    if (n == 0)
        goto out;
    struct flush_item *items = calloc(n, sizeof *items);
    if (!items) {
        rc = ERR_NOMEM;
        goto out;
    }
    for (size_t b = 0; b < AUTH_BUCKETS; b++) {
        for (struct auth_usage *u = sh->usage[b]; u; u = u->next) {
            for (size_t i = 0; i < u->n_pending; i++) {
                if (u->pending[i].n == 0)
                    continue;
                items[k].key_id = u->key_id;
                items[k].day = u->pending[i].day;
                items[k].n = u->pending[i].n;
                items[k].last_used = u->last_used;
                k++;
            }
            u->n_pending = 0;
        }
    }
    *out = items;
    *n_out = k;
out:
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

int auth_usage_flush(struct auth *a, struct err *err)
{
    int rc = 0;
    pthread_mutex_lock(&a->flush_mu);
    for (size_t s = 0; s < AUTH_SHARDS && rc == 0; s++) {
        struct auth_shard *sh = &a->shards[s];
        struct flush_item *items = NULL;
        size_t n = 0;
        rc = flush_collect(sh, &items, &n);
        if (rc < 0) {
            err_set(err, rc, "out of memory flushing usage counts");
            break;
        }
        size_t i;
        for (i = 0; i < n; i++) {
            rc = store_usage_add(a->store, items[i].key_id, items[i].day, items[i].n,
                                 items[i].last_used, err);
            if (rc < 0)
                break;
        }
        if (rc < 0) {
            /* Keep what was not written for the next flush. */
            pthread_mutex_lock(&sh->mu);
            flush_restore(sh, items + i, n - i);
            pthread_mutex_unlock(&sh->mu);
        }
        free(items);
    }
    pthread_mutex_unlock(&a->flush_mu);
    return rc;
}

void auth_usage_release(struct auth *a)
{
    for (size_t s = 0; s < AUTH_SHARDS; s++) {
        struct auth_shard *sh = &a->shards[s];
        for (size_t b = 0; b < AUTH_BUCKETS; b++) {
            struct auth_usage *u = sh->usage[b];
            while (u) {
                struct auth_usage *next = u->next;
                free(u->pending);
                free(u);
                u = next;
            }
            sh->usage[b] = NULL;
        }
    }
}
