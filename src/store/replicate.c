/* Replication (store/replicate.h): one thread per node applying the
 * PostgreSQL store's article log to the node's replica. */
#include "store/replicate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pg/pg.h"
#include "store/sqlite/replica.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/banned.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000

struct store_replicate {
    char *uri;
    char origin[STORE_PG_ORIGIN_MAX];
    struct store_replica *replica;
    struct store_pg_log *log; /* NULL while disconnected */

    pthread_t thread;
    bool started;

    pthread_mutex_t mu; /* guards everything below, and stop */
    pthread_cond_t cv;  /* stop */
    bool stop;
    int64_t applied; /* replica's last seq */
    int64_t head;    /* the store's last seq, as last seen */
    int64_t articles;
    int64_t sources_rev;
    int64_t in_step_ms; /* monotonic time the replica last held every change */
    bool in_step;       /* it did at the last look */
    bool caught_up;     /* ever, since it opened */
    bool reachable;
};

/* Sleep up to ms unless told to stop; true when stopping. */
static bool pause_or_stop(struct store_replicate *f, int64_t ms)
{
    struct timespec ts = clock_mono_in(ms);
    pthread_mutex_lock(&f->mu);
    while (!f->stop) {
        if (pthread_cond_timedwait(&f->cv, &f->mu, &ts) == ETIMEDOUT)
            break;
    }
    bool stop = f->stop;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

static bool stopping(struct store_replicate *f)
{
    pthread_mutex_lock(&f->mu);
    bool stop = f->stop;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

/* Open the log connection and check that it is still the same database. */
static int log_connect(struct store_replicate *f, struct err *err)
{
    struct store_pg_log *l = NULL;
    char origin[STORE_PG_ORIGIN_MAX];
    int rc;

    if ((rc = store_pg_log_open(&l, f->uri, err)) < 0)
        return rc;
    if ((rc = store_pg_log_origin(l, origin, err)) < 0) {
        store_pg_log_close(l);
        return rc;
    }
    if (strcmp(origin, f->origin) != 0) {
        /* Truncated, or another database at the same address (or a new
         * replica opened while the store was out of reach). */
        if (f->origin[0])
            log_warn("index: the store's article log has a new origin; rebuilding this node's "
                     "index");
        if ((rc = store_replica_reset(f->replica, origin, err)) < 0) {
            store_pg_log_close(l);
            return rc;
        }
        memcpy(f->origin, origin, sizeof f->origin);
        pthread_mutex_lock(&f->mu);
        f->applied = 0;
        f->articles = 0;
        f->sources_rev = -1;
        f->caught_up = false;
        f->in_step = false;
        pthread_mutex_unlock(&f->mu);
    }
    f->log = l;
    return 0;
}

/* Copy the sources when their revision moved. */
static int sources_sync(struct store_replicate *f, struct err *err)
{
    struct arena a;
    struct source *src = NULL;
    size_t n = 0;
    int64_t rev = 0;
    int rc;

    if ((rc = store_pg_log_sources_rev(f->log, &rev, err)) < 0)
        return rc;
    if (rev == f->sources_rev)
        return 0;
    arena_init(&a, 0);
    /* Read after the revision: at worst a newer table under an older
     * number, copied again next time. */
    if ((rc = store_pg_log_sources(f->log, &a, &src, &n, err)) == 0 &&
        (rc = store_replica_sources_replace(f->replica, src, n, rev, err)) == 0) {
        pthread_mutex_lock(&f->mu);
        f->sources_rev = rev;
        pthread_mutex_unlock(&f->mu);
    }
    arena_release(&a);
    return rc;
}

/* Apply one batch; *more when it was full (more may follow at once). */
static int articles_sync(struct store_replicate *f, bool *more, struct err *err)
{
    struct arena a;
    struct article *arts = NULL;
    bool *deleted = NULL;
    size_t n = 0;
    int64_t delta = 0, head = 0;
    int64_t read_at = clock_mono_ms();
    int rc;

    *more = false;
    arena_init(&a, 0);
    rc = store_pg_log_read(f->log, &a, f->applied, STORE_REPLICATE_BATCH, &arts, &deleted, &n, err);
    if (rc < 0)
        goto out;
    if (n > 0) {
        int64_t upto = arts[n - 1].seq;
        if ((rc = store_replica_apply(f->replica, arts, deleted, n, upto, &delta, err)) < 0)
            goto out;
        pthread_mutex_lock(&f->mu);
        f->applied = upto;
        f->articles += delta;
        pthread_mutex_unlock(&f->mu);
    }
    *more = n == STORE_REPLICATE_BATCH;
    if (*more) {
        /* Catching up: say how far there is to go. */
        if ((rc = store_pg_log_head(f->log, &head, err)) < 0)
            goto out;
    }
    pthread_mutex_lock(&f->mu);
    if (*more) {
        f->head = head > f->applied ? head : f->applied;
        f->in_step = false;
    } else {
        /* The read saw every committed change: in step as of read_at. */
        f->head = f->applied;
        f->in_step = true;
        f->in_step_ms = read_at;
        f->caught_up = true;
    }
    pthread_mutex_unlock(&f->mu);
out:
    arena_release(&a);
    return rc;
}

/* A backup restored under the replica: the store is behind what was
 * applied. Everything is read again. */
static int head_check(struct store_replicate *f, struct err *err)
{
    int64_t head = 0;
    int rc = store_pg_log_head(f->log, &head, err);
    if (rc < 0 || head >= f->applied)
        return rc;
    log_warn("index: the store's log ends at %lld but this node applied %lld (restored from a "
             "backup?); rebuilding this node's index",
             (long long)head, (long long)f->applied);
    if ((rc = store_replica_reset(f->replica, f->origin, err)) < 0)
        return rc;
    pthread_mutex_lock(&f->mu);
    f->applied = 0;
    f->articles = 0;
    f->sources_rev = -1;
    f->in_step = false;
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void set_reachable(struct store_replicate *f, bool up)
{
    pthread_mutex_lock(&f->mu);
    f->reachable = up;
    if (!up)
        f->in_step = false;
    pthread_mutex_unlock(&f->mu);
}

static void *follow_main(void *arg)
{
    struct store_replicate *f = arg;
    int64_t backoff = 0, sources_at = 0;
    bool sources_due = true, warned = false;
    struct err err;

    while (!stopping(f)) {
        int rc = 0;
        bool more = false;
        err_clear(&err);
        if (f->log == NULL) {
            rc = log_connect(f, &err);
            if (rc == 0) {
                if (warned)
                    log_info("index: connected to the store again");
                warned = false;
                sources_due = true;
                set_reachable(f, true);
            }
        }
        if (rc == 0 && (sources_due || clock_mono_ms() >= sources_at)) {
            if ((rc = sources_sync(f, &err)) == 0 && (rc = head_check(f, &err)) == 0) {
                sources_due = false;
                sources_at = clock_mono_ms() + STORE_REPLICATE_SOURCES_CHECK_MS;
            }
        }
        if (rc == 0)
            rc = articles_sync(f, &more, &err);
        if (rc < 0) {
            if (!warned)
                log_warn("index: following the store failed (searches go on over this node's "
                         "index): %s",
                         err_msg(&err, rc));
            warned = true;
            if (rc == ERR_BUSY || f->log == NULL) {
                store_pg_log_close(f->log);
                f->log = NULL;
                set_reachable(f, false);
            }
            backoff = backoff ? backoff * 2 : BACKOFF_MIN_MS;
            if (backoff > BACKOFF_MAX_MS)
                backoff = BACKOFF_MAX_MS;
            if (pause_or_stop(f, backoff))
                break;
            continue;
        }
        backoff = 0;
        if (warned) {
            log_info("index: following the store again");
            warned = false;
        }
        if (more)
            continue;
        bool articles = false, sources = false;
        rc = store_pg_log_wait(f->log, STORE_REPLICATE_POLL_MS, &articles, &sources, &err);
        if (rc < 0) {
            store_pg_log_close(f->log);
            f->log = NULL;
            set_reachable(f, false);
            continue;
        }
        if (sources)
            sources_due = true;
    }
    return NULL;
}

/* The replica as it stands, the store out of reach: its recorded origin
 * is taken until the thread can compare it with the store's. */
static int replica_open_offline(struct store_replicate *f, const char *dir, struct err *err)
{
    struct store_replica_position pos;
    int rc;
    if ((rc = store_replica_open(&f->replica, dir, NULL, err)) < 0 ||
        (rc = store_replica_position(f->replica, &pos, err)) < 0)
        return rc;
    snprintf(f->origin, sizeof f->origin, "%s", pos.origin);
    f->applied = f->head = pos.seq;
    f->articles = pos.articles;
    f->sources_rev = pos.sources_rev;
    f->reachable = false;
    f->in_step_ms = clock_mono_ms();
    return 0;
}

int store_replicate_new(struct store_replicate **out, const char *uri, const char *dir,
                        bool offline_ok, struct err *err)
{
    struct store_replicate *f = NULL;
    struct store_replica_position pos;
    int rc;

    *out = NULL;
    f = calloc(1, sizeof *f);
    if (f == NULL || (f->uri = strdup(uri)) == NULL) {
        free(f);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&f->mu, NULL);
    clock_cond_init(&f->cv);

    if ((rc = store_pg_log_open(&f->log, uri, err)) == ERR_BUSY && offline_ok) {
        log_warn("index: the store is unreachable (%s); this node's index starts from what it "
                 "holds",
                 err_msg(err, rc));
        err_clear(err);
        f->log = NULL;
        if ((rc = replica_open_offline(f, dir, err)) < 0)
            goto out;
        *out = f;
        return 0;
    }
    if (rc < 0)
        goto out;
    if ((rc = store_pg_log_origin(f->log, f->origin, err)) < 0)
        goto out;
    if ((rc = store_replica_open(&f->replica, dir, f->origin, err)) < 0)
        goto out;
    if ((rc = store_replica_position(f->replica, &pos, err)) < 0)
        goto out;
    f->applied = pos.seq;
    f->articles = pos.articles;
    f->sources_rev = pos.sources_rev;
    f->reachable = true;
    f->in_step_ms = clock_mono_ms();
    if ((rc = store_pg_log_head(f->log, &f->head, err)) < 0)
        goto out;
    if (f->head < f->applied)
        f->head = f->applied; /* head_check decides in the thread */
    *out = f;
    f = NULL;
out:
    store_replicate_free(f);
    return rc;
}

const char *store_replicate_path(const struct store_replicate *f)
{
    return store_replica_path(f->replica);
}

int store_replicate_start(struct store_replicate *f, struct err *err)
{
    int e = pthread_create(&f->thread, NULL, follow_main, f);
    if (e != 0)
        return err_set(err, ERR_INTERNAL, "cannot start replication: %s", strerror(e));
    f->started = true;
    return 0;
}

void store_replicate_free(struct store_replicate *f)
{
    if (f == NULL)
        return;
    if (f->started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_signal(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    store_pg_log_close(f->log);
    store_replica_close(f->replica);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f->uri);
    free(f);
}

void store_replicate_status(struct store_replicate *f, struct store_journal_status *out)
{
    int64_t now = clock_mono_ms();
    memset(out, 0, sizeof *out);
    out->replica = true;
    pthread_mutex_lock(&f->mu);
    out->caught_up = f->caught_up;
    out->store_reachable = f->reachable;
    out->applied_seq = f->applied;
    out->head_seq = f->head > f->applied ? f->head : f->applied;
    out->lag_seq = out->head_seq - f->applied;
    /* In step at the last look (at most a poll ago): no lag to speak of. */
    out->lag_seconds = f->in_step && f->reachable ? 0 : (double)(now - f->in_step_ms) / 1000.0;
    out->articles = f->articles;
    pthread_mutex_unlock(&f->mu);
}
