/* Private to src/store/sqlite/: the embedded store's handle and what its
 * files share (sqlite.c: lifecycle and schema; write.c: the writer's
 * transactions; articles.c; sources.c; keys.c: keys and usage; feeds.c:
 * feeds and their item memory). Writes go through the one writer
 * connection under write_lock, one transaction per call; reads take a
 * connection of the read pool, used by one thread until it is put back. */
#ifndef NEWSD_STORE_SQLITE_INTERNAL_H
#define NEWSD_STORE_SQLITE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/backend.h"
#include "store/sqlite/db.h"

/* The idle checkpointer (idle.c): its own connection and thread. */
struct store_sqlite_idle {
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop; cond wakes the thread to stop */
    pthread_cond_t cond;
    bool stop;
    bool running;   /* started: store_sqlite_idle_stop joins it */
    sqlite3 *db;    /* used by the thread alone */
    char *wal_path; /* <path>-wal, the file watched */
};

struct store_sqlite {
    struct store_backend base; /* first: the vtable */
    char *path;                /* <dir>/newsd.db */
    pthread_mutex_t write_lock;
    sqlite3 *writer;
    struct store_sqlite_pool readers;
    struct store_sqlite_idle idle;
};

/* A WAL nothing wrote to for this long is checkpointed and truncated to
 * zero (idle.c); looked at every STORE_SQLITE_IDLE_LOOK_MS. Long enough
 * that a feed round or an import's next batch comes first (a WAL in use
 * is not shrunk just to grow again), short enough that the disk is given
 * back within a minute of the last write. */
#define STORE_SQLITE_IDLE_MS 5000
#define STORE_SQLITE_IDLE_LOOK_MS 1000
#define STORE_SQLITE_IDLE_BUSY_MS 100 /* the checkpoint's wait for readers */

/* Start the idle checkpointer of s (s->path set, the database in WAL
 * mode); stop joins it and closes its connection (no-op when not
 * started). */
int store_sqlite_idle_start(struct store_sqlite *s, struct err *err);
void store_sqlite_idle_stop(struct store_sqlite *s);

/* write.c. Begin an IMMEDIATE transaction on the writer; the caller holds
 * write_lock. */
int store_sqlite_begin(struct store_sqlite *s, struct err *err);
/* Commit when rc is 0, else roll back; returns rc or the commit's error. */
int store_sqlite_end(struct store_sqlite *s, int rc, struct err *err);

/* A write transaction: take write_lock and begin (the lock is given back
 * when beginning fails) ... store_sqlite_end, then give the lock back. */
int store_sqlite_write_begin(struct store_sqlite *s, struct err *err);
int store_sqlite_write_end(struct store_sqlite *s, int rc, struct err *err);

/* store_sqlite_write on the writer under write_lock: one statement, its
 * own transaction. */
int store_sqlite_write_locked(struct store_sqlite *s, const char *sql, const struct store_arg *args,
                              size_t n, int *changes, struct err *err);

/* One write transaction running sql once per item i of n: bind(st, i,
 * ctx, err) binds item i and returns 0, 1 to skip it, or an ERR_* that
 * rolls everything back. */
int store_sqlite_write_each(struct store_sqlite *s, const char *sql, size_t n,
                            int (*bind)(sqlite3_stmt *st, size_t i, const void *ctx,
                                        struct err *err),
                            const void *ctx, struct err *err);

/* Bind a source to ?1..?9 in STORE_SOURCE_COLUMNS order (sources.c and the
 * replica's copy of the catalogue). Returns a SQLite code. */
int store_sqlite_bind_source(sqlite3_stmt *st, const struct source *x);

/* 0 when db holds a newsd store of a schema version this build reads
 * (its tables, meta's schema_version from 1 to the current); ERR_INVALID
 * or ERR_UNSUPPORTED saying why not (restore.c). */
int store_sqlite_schema_check(sqlite3 *db, struct err *err);

/* backup.c: store_backup. */
int store_sqlite_backup(struct store_backend *b, const char *dest, struct err *err);

int store_sqlite_articles_put(struct store_backend *b, struct article *arts, size_t n,
                              struct store_put_stats *stats, struct err *err);
int store_sqlite_articles_count(struct store_backend *b, int64_t *out, struct err *err);
/* backend.h stories_window, stories_scan, stories_fill (stories.c) */
int store_sqlite_stories_window(struct store_backend *b, int64_t window_s,
                                int (*fn)(void *ctx, const struct article *a), void *ctx,
                                struct err *err);
int store_sqlite_stories_scan(struct store_backend *b, int64_t after, size_t max,
                              int (*fn)(void *ctx, const struct article *a), void *ctx,
                              int64_t *last, struct err *err);
int store_sqlite_stories_fill(struct store_backend *b, const int64_t *ids, const int64_t *stories,
                              size_t n, int64_t *set, struct err *err);

/* delete.c: store_articles_delete, store_space_release, store_compact. */
int store_sqlite_articles_delete(struct store_backend *b, const struct store_delete_filter *f,
                                 size_t max, int64_t *deleted, struct err *err);
int store_sqlite_space_release(struct store_backend *b, int64_t max_pages, int64_t *left,
                               struct err *err);
int store_sqlite_space_incremental(struct store_backend *b, bool *on, struct err *err);
int store_sqlite_compact(struct store_backend *b, struct err *err);

/* How long a record of article_deletions is kept for the indexes that
 * follow the file. */
#define STORE_SQLITE_DELETIONS_KEEP_S (7 * 86400)
/* Prune up to n records older than that (the writer's transaction). */
int store_sqlite_deletions_prune(sqlite3 *db, int64_t n, int64_t now, struct err *err);

int store_sqlite_sources_put(struct store_backend *b, const struct source *src, size_t n,
                             struct err *err);
int store_sqlite_sources_ensure(struct store_backend *b, const char *const *ids,
                                const char *const *names, size_t n, struct err *err);
int store_sqlite_sources_list(struct store_backend *b, struct arena *a,
                              const struct source_filter *f, struct source **out, size_t *n_out,
                              struct err *err);
int store_sqlite_source_get(struct store_backend *b, struct arena *a, const char *id,
                            struct source *out, struct err *err);

int store_sqlite_key_insert(struct store_backend *b, const struct key_record *k, int64_t *id_out,
                            struct err *err);
int store_sqlite_key_find(struct store_backend *b, struct arena *a, const unsigned char hash[32],
                          struct key_record *out, struct err *err);
int store_sqlite_keys_list(struct store_backend *b, struct arena *a, struct key_record **out,
                           size_t *n_out, struct err *err);
int store_sqlite_key_update(struct store_backend *b, int64_t id, const char *plan, int state,
                            struct err *err);
int store_sqlite_key_delete(struct store_backend *b, int64_t id, struct err *err);
int store_sqlite_usage_add(struct store_backend *b, int64_t key_id, int64_t day, int64_t n,
                           int64_t last_used, struct err *err);
int store_sqlite_usage_sum(struct store_backend *b, int64_t key_id, int64_t day_from,
                           int64_t day_to, int64_t *out, struct err *err);

int store_sqlite_feed_add(struct store_backend *b, const struct feed_record *f, int64_t *id_out,
                          struct err *err);
int store_sqlite_feeds_list(struct store_backend *b, struct arena *a, struct feed_record **out,
                            size_t *n_out, struct err *err);
int store_sqlite_feed_get(struct store_backend *b, struct arena *a, int64_t id,
                          struct feed_record *out, struct err *err);
int store_sqlite_feed_remove(struct store_backend *b, int64_t id, struct err *err);
int store_sqlite_feed_change(struct store_backend *b, int64_t id, const struct feed_change *c,
                             struct err *err);
int store_sqlite_feeds_due(struct store_backend *b, struct arena *a, int64_t now, size_t max,
                           struct feed_record **out, size_t *n_out, struct err *err);
int store_sqlite_feeds_claim(struct store_backend *b, const int64_t *ids, size_t n, int64_t now,
                             int64_t until, bool *claimed, struct err *err);
int store_sqlite_feed_schedule(struct store_backend *b, int64_t id, int64_t next_fetch_at,
                               struct err *err);
int store_sqlite_feed_fetch_record(struct store_backend *b, int64_t id,
                                   const struct feed_fetch_outcome *o, struct err *err);
int store_sqlite_feed_items_get(struct store_backend *b, int64_t id, struct feed_item_mark *marks,
                                size_t n, struct err *err);

/* alerts.c: store.h "alerts". */
int store_sqlite_alert_add(struct store_backend *b, const struct alert_record *r,
                           int64_t max_per_key, int64_t *id_out, struct err *err);
int store_sqlite_alerts_list(struct store_backend *b, struct arena *a, int64_t key_id,
                             struct alert_record **out, size_t *n_out, struct err *err);
int store_sqlite_alert_remove(struct store_backend *b, int64_t id, int64_t key_id, struct err *err);
int store_sqlite_alerts_lease(struct store_backend *b, struct arena *a, const char *owner,
                              int64_t now_ms, int64_t until_ms, struct alert_record **out,
                              size_t *n_out, struct err *err);
int store_sqlite_alerts_release(struct store_backend *b, const char *owner, struct err *err);
int store_sqlite_alert_advance(struct store_backend *b, int64_t alert_id, const char *owner,
                               int64_t from_seq, int64_t to_seq, int64_t copies,
                               const struct alert_delivery *d, struct err *err);
int store_sqlite_alert_deliveries(struct store_backend *b, struct arena *a, int64_t alert_id,
                                  size_t max, struct alert_delivery **out, size_t *n_out,
                                  struct err *err);
int store_sqlite_alert_delivery_done(struct store_backend *b, int64_t alert_id, const char *id,
                                     struct err *err);
int store_sqlite_alert_delivery_failed(struct store_backend *b, int64_t alert_id, const char *id,
                                       int64_t attempts, int64_t next_ms, int64_t first_failure_ms,
                                       struct err *err);
int store_sqlite_alert_deliveries_count(struct store_backend *b, int64_t *out, struct err *err);
int store_sqlite_alert_stories(struct store_backend *b, struct arena *a, int64_t alert_id,
                               int64_t **out, size_t *n_out, struct err *err);

#endif
