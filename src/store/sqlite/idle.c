/* The WAL given back while the store is idle (internal.h
 * store_sqlite_idle_start). SQLite's automatic checkpoints copy the WAL
 * into the database but never shrink the file: a large import, retention
 * run or a reader holding an old snapshot leaves a WAL of tens of MB for
 * as long as newsd serves (issue 30, item 8: 64.7 MB beside a 42.7 MB
 * database). journal_size_limit (sqlite.c) caps it at the next restart of
 * the log, which needs a write; an idle store gets none. So a light thread
 * watches the -wal file and, once nothing has written to it for
 * STORE_SQLITE_IDLE_MS, checkpoints with TRUNCATE. Writes by other
 * processes (newsd import beside serve) count too: the file is what is
 * watched, not this process's writer. */
#include "store/sqlite/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

/* What the watcher saw of the -wal file at its last look. */
struct wal_seen {
    off_t size;
    struct timespec mtime;
    int64_t since_ms; /* when it last changed (clock_mono_ms) */
};

/* Whether the WAL has content that no write touched for the idle spell.
 * A file that changes restarts the spell; a missing or empty one has
 * nothing to give back. */
static bool wal_idle_and_large(struct wal_seen *seen, const char *wal_path, int64_t now)
{
    struct stat sb;
    if (stat(wal_path, &sb) != 0 || sb.st_size == 0) {
        seen->size = 0;
        return false;
    }
    if (sb.st_size != seen->size || sb.st_mtim.tv_sec != seen->mtime.tv_sec ||
        sb.st_mtim.tv_nsec != seen->mtime.tv_nsec) {
        seen->size = sb.st_size;
        seen->mtime = sb.st_mtim;
        seen->since_ms = now;
        return false;
    }
    return now - seen->since_ms >= STORE_SQLITE_IDLE_MS;
}

/* TRUNCATE on the thread's own connection, never under write_lock. It
 * waits for readers to leave the WAL, but only STORE_SQLITE_IDLE_BUSY_MS
 * (the index's follower reads every 100 ms; a long search may take
 * longer): then SQLITE_BUSY, and the next idle look tries again. A
 * writer arriving meanwhile waits at most that long. */
static void wal_truncate(sqlite3 *db, const char *wal_path)
{
    int log_frames = -1, done = -1; /* -1 after a no-op: see store_sqlite_idle_start */
    int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log_frames, &done);
    if (rc == SQLITE_OK)
        log_debug("store: idle, %s truncated (%d frames checkpointed)", wal_path, done);
    else if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
        log_warn("store: idle checkpoint of %s: %s", wal_path, sqlite3_errmsg(db));
}

static void *idle_main(void *arg)
{
    struct store_sqlite *s = arg;
    struct store_sqlite_idle *w = &s->idle;
    struct wal_seen seen = {0};
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        struct timespec at = clock_mono_in(STORE_SQLITE_IDLE_LOOK_MS);
        pthread_cond_timedwait(&w->cond, &w->lock, &at);
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->lock);
        int64_t now = clock_mono_ms();
        if (wal_idle_and_large(&seen, w->wal_path, now))
            wal_truncate(w->db, w->wal_path);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int store_sqlite_idle_start(struct store_sqlite *s, struct err *err)
{
    struct store_sqlite_idle *w = &s->idle;
    int rc;
    size_t len = strlen(s->path) + sizeof "-wal";
    if ((w->wal_path = malloc(len)) == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    snprintf(w->wal_path, len, "%s-wal", s->path);
    if ((rc = store_sqlite_conn_open(&w->db, s->path, false, err)) < 0)
        goto fail;
    sqlite3_busy_timeout(w->db, STORE_SQLITE_IDLE_BUSY_MS);
    /* A connection opens the WAL at its first read: before that a
     * checkpoint on it is a silent no-op. */
    int64_t version;
    if ((rc = store_sqlite_query_int(w->db, "PRAGMA schema_version", &version, err)) < 0)
        goto fail_db;
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot create a mutex");
        goto fail_db;
    }
    if (clock_cond_init(&w->cond) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot create a condition variable");
        goto fail_lock;
    }
    if (pthread_create(&w->thread, NULL, idle_main, s) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot start the store's idle checkpointer");
        goto fail_cond;
    }
    w->running = true;
    return 0;
fail_cond:
    pthread_cond_destroy(&w->cond);
fail_lock:
    pthread_mutex_destroy(&w->lock);
fail_db:
    store_sqlite_conn_close(w->db);
    w->db = NULL;
fail:
    free(w->wal_path);
    w->wal_path = NULL;
    return rc;
}

void store_sqlite_idle_stop(struct store_sqlite *s)
{
    struct store_sqlite_idle *w = &s->idle;
    if (!w->running)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    store_sqlite_conn_close(w->db);
    free(w->wal_path);
    w->running = false;
}
