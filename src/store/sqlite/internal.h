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

/* The articles table's row count (articles.c), counted again only when
 * another connection committed: /healthz and /metrics ask at every probe
 * and scrape, and count(*) scans an index of the whole table (55 ms at
 * 10 M articles with a warm page cache, seconds with a cold one; a
 * balancer probing a starting server every few ms kept both HTTP threads
 * counting through a 10 M first build). */
struct store_sqlite_rowcount {
    pthread_mutex_t lock; /* one count at a time; the others wait for it */
    sqlite3 *db;          /* its own connection (data_version is per connection) */
    bool counted;
    int64_t version; /* PRAGMA data_version read before the count */
    int64_t rows;
};

struct store_sqlite {
    struct store_backend base; /* first: the vtable */
    char *path;                /* <dir>/newsd.db */
    pthread_mutex_t write_lock;
    sqlite3 *writer;
    struct store_sqlite_pool readers;
    struct store_sqlite_idle idle;
    struct store_sqlite_rowcount rowcount;
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
/* store_sqlite_write_begin, then the transaction's first statement (sql
 * with args, *changes as store_sqlite_write's). 0: the transaction is
 * open, for more statements and store_sqlite_write_end; an ERR_*: none
 * is (a failed statement was rolled back). */
int store_sqlite_write_begin_with(struct store_sqlite *s, const char *sql,
                                  const struct store_arg *args, size_t n, int *changes,
                                  struct err *err);

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

/* The operations both backends have (store/backend.h): articles.c,
 * stories.c, delete.c, sources.c, keys.c, feeds.c, alerts.c. */
STORE_BACKEND_OPS(STORE_BACKEND_DECLARE, sqlite)

/* backend.h stories_scan, stories_fill (stories.c) */
int store_sqlite_stories_scan(struct store_backend *b, int64_t after, size_t max,
                              int (*fn)(void *ctx, const struct article *a), void *ctx,
                              int64_t *last, struct err *err);
int store_sqlite_stories_fill(struct store_backend *b, const int64_t *ids, const int64_t *stories,
                              size_t n, int64_t *set, struct err *err);

/* delete.c: store_space_release, store_compact. */
int store_sqlite_space_release(struct store_backend *b, int64_t max_pages, int64_t *left,
                               struct err *err);
int store_sqlite_space_incremental(struct store_backend *b, bool *on, struct err *err);
int store_sqlite_compact(struct store_backend *b, struct err *err);

/* How long a record of article_deletions is kept for the indexes that
 * follow the file. */
#define STORE_SQLITE_DELETIONS_KEEP_S (7 * 86400)
/* Prune up to n records older than that (the writer's transaction). */
int store_sqlite_deletions_prune(sqlite3 *db, int64_t n, int64_t now, struct err *err);

#endif
