/* auth.h: the lifecycle of struct auth, auth_check's order of checks
 * (missing → invalid → disabled → exhausted → rate limited) and the
 * background thread that writes usage counts about once a second. */
#include "auth/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

static void *flusher_main(void *arg)
{
    struct auth *a = arg;
    pthread_mutex_lock(&a->stop_mu);
    while (!a->stop) {
        struct timespec until = clock_mono_in(AUTH_FLUSH_INTERVAL_MS);
        int w = 0;
        while (!a->stop && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&a->stop_cv, &a->stop_mu, &until);
        if (a->stop)
            break;
        pthread_mutex_unlock(&a->stop_mu);
        struct err err;
        err_clear(&err);
        int rc = auth_usage_flush(a, &err);
        if (rc < 0)
            log_warn("auth: writing usage counts failed (kept for the next try): %s",
                     err_msg(&err, rc));
        pthread_mutex_lock(&a->stop_mu);
    }
    pthread_mutex_unlock(&a->stop_mu);
    return NULL;
}

int auth_new(struct auth **out, struct store *s, struct err *err)
{
    return auth_new_with(out, s, NULL, err);
}

int auth_new_with(struct auth **out, struct store *s, const struct auth_options *opt,
                  struct err *err)
{
    *out = NULL;
    int rc;
    int64_t ttl = opt ? opt->key_cache_ttl_ms : AUTH_KEY_CACHE_TTL_MS_DEFAULT;
    if (ttl < 0 || ttl > AUTH_KEY_CACHE_TTL_MS_MAX)
        return err_set(err, ERR_INVALID, "key cache time %lld ms is not 0..%d", (long long)ttl,
                       AUTH_KEY_CACHE_TTL_MS_MAX);
    struct auth *a = calloc(1, sizeof *a);
    if (!a)
        return err_set(err, ERR_NOMEM, "out of memory for key checks");
    a->store = s;
    a->cache_ttl_ms = ttl;
    pthread_rwlock_init(&a->plans_lock, NULL);
    pthread_mutex_init(&a->flush_mu, NULL);
    pthread_mutex_init(&a->stop_mu, NULL);
    for (size_t i = 0; i < AUTH_SHARDS; i++)
        pthread_mutex_init(&a->shards[i].mu, NULL);
    /* The stop condition waits on the monotonic clock: a wall-clock step must
     * not stall or race the flusher. */
    if (clock_cond_init(&a->stop_cv) != 0) {
        rc = err_set(err, ERR_INTERNAL, "cannot create a condition variable");
        pthread_cond_init(&a->stop_cv, NULL); /* so auth_free can destroy it */
        goto out;
    }
    if ((rc = auth_plans_init(a, err)) < 0)
        goto out;
    int e = pthread_create(&a->flusher, NULL, flusher_main, a);
    if (e) {
        rc = err_set(err, ERR_INTERNAL, "cannot start the usage writer: %s", strerror(e));
        goto out;
    }
    a->flusher_started = true;
    *out = a;
    a = NULL;
    rc = 0;
out:
    auth_free(a);
    return rc;
}

void auth_free(struct auth *a)
{
    if (!a)
        return;
    if (a->flusher_started) {
        pthread_mutex_lock(&a->stop_mu);
        a->stop = true;
        pthread_cond_signal(&a->stop_cv);
        pthread_mutex_unlock(&a->stop_mu);
        pthread_join(a->flusher, NULL);
    }
    if (a->store) {
        struct err err;
        err_clear(&err);
        int rc = auth_usage_flush(a, &err);
        if (rc < 0)
            log_error("auth: usage counts not written at shutdown: %s", err_msg(&err, rc));
    }
    auth_usage_release(a);
    auth_key_cache_clear(a);
    auth_plans_release(a);
    for (size_t i = 0; i < AUTH_SHARDS; i++)
        pthread_mutex_destroy(&a->shards[i].mu);
    pthread_cond_destroy(&a->stop_cv);
    pthread_mutex_destroy(&a->stop_mu);
    pthread_mutex_destroy(&a->flush_mu);
    pthread_rwlock_destroy(&a->plans_lock);
    free(a);
}

int auth_check(struct auth *a, const char *key, int64_t now, struct auth_result *out,
               struct err *err)
{
    memset(out, 0, sizeof *out);
    out->status = AUTH_MISSING;
    if (!key || !*key)
        return 0;

    /* Any length is hashed: a malformed key is simply one no key matches. */
    unsigned char hash[32];
    auth_key_hash(key, strlen(key), hash);
    int rc = auth_key_state(a, hash, out, err);
    if (rc < 0 || out->status != AUTH_OK)
        return rc;
    return auth_usage_take(a, out->key_id, hash, &out->plan, now, out, err);
}

int auth_key_state(struct auth *a, const unsigned char hash[32], struct auth_result *out,
                   struct err *err)
{
    memset(out, 0, sizeof *out);
    memcpy(out->key_hash, hash, sizeof out->key_hash);
    out->status = AUTH_INVALID;
    struct auth_key_info info;
    memset(&info, 0, sizeof info);
    int rc = auth_key_lookup(a, hash, &info, err);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    out->key_id = info.id;
    out->status = AUTH_DISABLED;
    if (info.state != KEY_ACTIVE)
        return 0;
    if (auth_plan_get(a, info.plan, &out->plan) < 0) {
        /* A plan dropped from the config: refuse rather than grant more.
         * Logged once per store read, not once per request. */
        if (info.fresh)
            log_warn("auth: key %lld has plan '%s', which this server does not define",
                     (long long)info.id, info.plan);
        out->status = AUTH_PLAN_UNKNOWN;
        return 0;
    }
    out->status = AUTH_OK;
    return 0;
}

void auth_uncount(struct auth *a, int64_t key_id, int64_t now)
{
    auth_usage_untake(a, key_id, now);
}

int auth_flush(struct auth *a, struct err *err)
{
    return auth_usage_flush(a, err);
}
