/* Retention (store/retention.h): batched deletes with pauses, the space
 * given back, and the policy's thread. */
#include "store/retention.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/metrics.h"

#include "util/banned.h"

static bool stopped(const atomic_bool *stop)
{
    return stop && atomic_load(stop);
}

/* The pause between batches, cut short by stop (checked every 50 ms). */
static void pause_ms(int64_t ms, const atomic_bool *stop)
{
    while (ms > 0 && !stopped(stop)) {
        int64_t step = ms < 50 ? ms : 50;
        clock_sleep_ms(step);
        ms -= step;
    }
}

/* Give the freed pages back, RETENTION_VACUUM_PAGES at a time (each step
 * holds the writer), pausing between steps like the deletes. */
static int space_release(struct store *s, const struct retention_pace *pace,
                         const atomic_bool *stop, struct err *err)
{
    bool incremental = false;
    int rc = store_space_incremental(s, &incremental, err);
    if (rc < 0 || !incremental)
        return rc; /* an older file keeps its free pages for new rows */
    /* Until none are left, or a step frees none (a reader holding them). */
    int64_t left = 0, was = INT64_MAX;
    while ((rc = store_space_release(s, RETENTION_VACUUM_PAGES, &left, err)) == 0 && left > 0 &&
           left < was && !stopped(stop)) {
        was = left;
        pause_ms(pace->pause_ms, stop);
    }
    return rc;
}

/* Delete up to limit (< 0: no limit) articles of f in batches. */
static int delete_batches(struct store *s, const struct store_delete_filter *f, int64_t limit,
                          const struct retention_pace *pace_in, const atomic_bool *stop,
                          int64_t *deleted, struct err *err)
{
    struct retention_pace pace = {
        .batch = pace_in && pace_in->batch > 0 ? pace_in->batch : RETENTION_BATCH_DEFAULT,
        .pause_ms =
            pace_in && pace_in->pause_ms > 0 ? pace_in->pause_ms : RETENTION_PAUSE_MS_DEFAULT,
    };
    int rc = 0;

    *deleted = 0;
    while (!stopped(stop) && (limit < 0 || *deleted < limit)) {
        int64_t want = pace.batch, n = 0, t0 = clock_mono_ms();
        if (limit >= 0 && limit - *deleted < want)
            want = limit - *deleted;
        if ((rc = store_articles_delete(s, f, (size_t)want, &n, err)) < 0)
            break;
        *deleted += n;
        /* Counted per batch, not per run: a run may last long, and what
         * is deleted is deleted (newsd_retention_deleted_total). */
        if (pace_in)
            metrics_add(pace_in->counter, (uint64_t)n);
        if (n < want)
            break; /* none left */
        /* At least as long as the batch held the writer: deleting takes
         * at most half of the writer's time from imports. */
        int64_t took = clock_mono_ms() - t0;
        pause_ms(took > pace.pause_ms ? took : pace.pause_ms, stop);
    }
    if (rc == 0 && *deleted > 0)
        rc = space_release(s, &pace, stop, err);
    return rc;
}

int retention_delete(struct store *s, const struct store_delete_filter *f,
                     const struct retention_pace *pace, const atomic_bool *stop, int64_t *deleted,
                     struct err *err)
{
    return delete_batches(s, f, -1, pace, stop, deleted, err);
}

int retention_run(struct store *s, const struct retention_options *o, int64_t now,
                  const atomic_bool *stop, int64_t *deleted, struct err *err)
{
    int64_t n = 0;
    int rc = 0;

    *deleted = 0;
    if (o->max_age_days > 0) {
        struct store_delete_filter f = {.before_set = true,
                                        .before = now - o->max_age_days * 86400};
        rc = delete_batches(s, &f, -1, &o->pace, stop, &n, err);
        *deleted += n;
    }
    if (rc == 0 && o->max_articles > 0 && !stopped(stop)) {
        int64_t count = 0;
        if ((rc = store_articles_count(s, &count, err)) == 0 && count > o->max_articles) {
            /* Every article matches: the oldest go first. */
            struct store_delete_filter all = {0};
            rc = delete_batches(s, &all, count - o->max_articles, &o->pace, stop, &n, err);
            *deleted += n;
        }
    }
    return rc;
}

/* --- the policy's thread ----------------------------------------------------------- */

struct retention {
    struct store *store;
    struct retention_options opt;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_bool stop;
    struct metric *deleted_total;
};

static void *retention_main(void *arg)
{
    struct retention *r = arg;
    int64_t period_ms = (r->opt.period_s > 0 ? r->opt.period_s : RETENTION_PERIOD_S_DEFAULT) * 1000;

    while (!atomic_load(&r->stop)) {
        struct err err;
        int64_t deleted = 0, t0 = clock_mono_ms();
        err_clear(&err);
        int rc = retention_run(r->store, &r->opt, (int64_t)time(NULL), &r->stop, &deleted, &err);
        if (rc < 0)
            log_warn("retention: %s (%lld articles deleted; tried again in %lld s)",
                     err_msg(&err, rc), (long long)deleted, (long long)(period_ms / 1000));
        else if (deleted > 0)
            log_info("retention: %lld articles deleted in %.1f s", (long long)deleted,
                     (double)(clock_mono_ms() - t0) / 1000.0);
        struct timespec until = clock_mono_in(period_ms);
        pthread_mutex_lock(&r->mu);
        while (!atomic_load(&r->stop)) {
            if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT)
                break;
        }
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}

int retention_start(struct retention **out, struct store *s, const struct retention_options *o,
                    struct err *err)
{
    /* Shown at 0 when the policy is off: a dashboard's query never breaks. */
    struct metric *deleted_total =
        metrics_counter("newsd_retention_deleted_total",
                        "Articles deleted by the [retention] policy since the process started.");
    *out = NULL;
    if (o->max_age_days <= 0 && o->max_articles <= 0)
        return 0;
    struct retention *r = calloc(1, sizeof *r);
    if (r == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    r->store = s;
    r->opt = *o;
    r->deleted_total = deleted_total;
    r->opt.pace.counter = deleted_total;
    atomic_init(&r->stop, false);
    pthread_mutex_init(&r->mu, NULL);
    clock_cond_init(&r->cv);
    int e = pthread_create(&r->thread, NULL, retention_main, r);
    if (e != 0) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free(r);
        return err_set(err, ERR_INTERNAL, "cannot start retention: %s", strerror(e));
    }
    *out = r;
    return 0;
}

void retention_stop(struct retention *r)
{
    if (r == NULL)
        return;
    pthread_mutex_lock(&r->mu);
    atomic_store(&r->stop, true);
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
