/* Private to src/store/pg/: the PostgreSQL store's handle and what its files
 * share (conn.c: connections, the pool, statements, parameters, errors;
 * pg.c: lifecycle and schema; articles.c; sources.c; keys.c: keys and
 * usage; feeds.c; log.c: the article log of pg.h).
 *
 * Connections: a small pool per process. A call takes one connection for
 * its whole work (one statement or one transaction) and gives it back. A
 * connection found broken is closed with every idle one (a restarted server
 * broke them all), so the next call connects afresh; connecting is retried
 * no sooner than an exponential backoff (100 ms .. 2 s) allows, calls in
 * between fail at once with ERR_BUSY and the reason. Reads that fail on a
 * dead connection are retried once on a new one; writes are not (a lost
 * COMMIT acknowledgement leaves their outcome unknown to us).
 *
 * Statements: every value is a bound parameter; each statement is prepared
 * once per connection (lazily, by its number) and then executed by name.
 * Every PGresult is cleared on every path. */
#ifndef NEWSD_STORE_PG_INTERNAL_H
#define NEWSD_STORE_PG_INTERNAL_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/backend.h"
#include "store/pg/pg.h"
#include "util/buf.h"

#define STORE_PG_POOL_MAX 8          /* connections per process */
#define STORE_PG_POOL_WAIT_MS 10000  /* longest wait for a free connection */
#define STORE_PG_CONNECT_TIMEOUT "5" /* seconds, unless the URI says otherwise */
#define STORE_PG_BACKOFF_MIN_MS 100
#define STORE_PG_BACKOFF_MAX_MS 2000
#define STORE_PG_SOURCES_TTL_MS 1000 /* the sources snapshot is rechecked after this */
#define STORE_PG_KEY_CACHE_MAX 4096  /* keys remembered for an unreachable server */

/* Advisory lock keys, as the (int, int) arguments of pg_advisory_lock:
 * 0x6e657773 is "news". Pasted into SQL text: constants, never input. */
#define STORE_PG_LOCK_MIGRATE "1852143475, 1"
#define STORE_PG_LOCK_ARTICLES "1852143475, 2"

/* Statement numbers: one bit each in pg_conn.prepared. */
enum pg_stmt_id {
    PG_ST_ARTICLES_LOCK,
    PG_ST_ARTICLES_KNOWN,
    PG_ST_ARTICLES_MAXID,
    PG_ST_ARTICLES_SCAN,
    PG_ST_ARTICLES_UPSERT,
    PG_ST_ARTICLES_COUNT,
    PG_ST_ARTICLES_DELETE_OLDEST,
    PG_ST_ARTICLES_DELETE_URL,
    PG_ST_SOURCES_PUT,
    PG_ST_SOURCES_ENSURE,
    PG_ST_SOURCES_REV,
    PG_ST_SOURCES_ALL,
    PG_ST_KEY_INSERT,
    PG_ST_KEY_FIND,
    PG_ST_KEYS_LIST,
    PG_ST_KEY_UPDATE,
    PG_ST_KEY_DELETE,
    PG_ST_USAGE_ADD,
    PG_ST_USAGE_SUM,
    PG_ST_USAGE_TAKE,
    PG_ST_FEED_ADD,
    PG_ST_FEEDS_LIST,
    PG_ST_FEED_GET,
    PG_ST_FEED_REMOVE,
    PG_ST_FEED_CHANGE,
    PG_ST_FEEDS_DUE,
    PG_ST_FEEDS_CLAIM,
    PG_ST_FEED_SCHEDULE,
    PG_ST_FEED_RECORD,
    PG_ST_FEED_MARK_PUT,
    PG_ST_FEED_MARKS_FORGET,
    PG_ST_FEED_ITEMS_GET,
    PG_ST_LOG_ORIGIN,
    PG_ST_LOG_HEAD,
    PG_ST_LOG_READ,
    PG_ST_ALERT_ADD,
    PG_ST_ALERTS_LIST,
    PG_ST_ALERT_REMOVE,
    PG_ST_ALERTS_LEASE,
    PG_ST_ALERTS_LEASED,
    PG_ST_ALERTS_RELEASE,
    PG_ST_ALERT_ADVANCE,
    PG_ST_ALERT_EXISTS,
    PG_ST_ALERT_DELIVERY_PUT,
    PG_ST_ALERT_DELIVERIES,
    PG_ST_ALERT_DELIVERY_DONE,
    PG_ST_ALERT_DELIVERY_FAILED,
    PG_ST_ALERT_DELIVERIES_COUNT,
    PG_ST_ALERT_STORIES_PUT,
    PG_ST_ALERT_STORIES_TRIM,
    PG_ST_ALERT_STORIES,
    PG_ST_STORIES_WINDOW,
    PG_ST_COUNT
};
_Static_assert(PG_ST_COUNT <= 64, "pg_conn.prepared has 64 bits");

/* A statement: its number and text ($1.. placeholders). */
struct pg_sql {
    enum pg_stmt_id id;
    const char *text;
};

struct pg_conn {
    PGconn *c;
    uint64_t prepared; /* bit i: statement i is prepared on c */
};

struct pg_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *uri;
    struct pg_conn *idle[STORE_PG_POOL_MAX];
    size_t n_idle;
    size_t n_out;         /* connections handed out or being opened */
    int64_t retry_at_ms;  /* no connection attempt before (monotonic) */
    int64_t backoff_ms;   /* 0 after a success */
    char last_error[160]; /* why the last attempt failed */
    /* Opened while PostgreSQL was unreachable (store_options
     * start_unreachable): the schema migration runs before the first
     * connection is handed out; mu held for it, so it runs once. */
    bool migrate_pending;
    int (*migrate)(const char *uri, struct err *err);
};

/* Parameters of one statement, as text (or binary where formats[i] = 1). */
#define PG_PARAMS_MAX 24
struct pg_params {
    int n;
    const char *values[PG_PARAMS_MAX];
    int lengths[PG_PARAMS_MAX];
    int formats[PG_PARAMS_MAX];
    char num[PG_PARAMS_MAX][32]; /* storage for numbers and codes */
};

/* The sources catalogue as last read (sources.c). */
struct pg_sources_snapshot {
    struct arena arena;   /* owns items and their strings */
    struct source *items; /* ordered by id (bytes) */
    size_t n;
    int64_t rev;        /* sources_rev it was read at */
    int64_t checked_ms; /* monotonic time of the last check against the server */
    bool loaded;
    bool stale;      /* a write of this process: reread before the next use */
    bool refreshing; /* one thread is rereading it */
};

/* A key as last read, kept for when the server cannot be reached (keys.c). */
struct pg_key_cached {
    struct pg_key_cached *next;
    struct key_record rec; /* name and plan point into this allocation */
};

struct store_pg {
    struct store_backend base; /* first: the vtable */
    struct pg_pool pool;
    bool start_unreachable; /* store_options: the replica may start offline too */

    pthread_mutex_t sources_mu;
    struct pg_sources_snapshot sources;

    pthread_mutex_t keys_mu;
    struct pg_key_cached *keys; /* most recent first */
    size_t n_keys;
};

/* --- conn.c ---------------------------------------------------------------- */

int store_pg_pool_init(struct pg_pool *p, const char *uri, struct err *err);
void store_pg_pool_release(struct pg_pool *p);
/* A connection for the calling thread alone until it is put back; ERR_BUSY
 * (with the reason) when the server cannot be reached now. */
int store_pg_pool_get(struct pg_pool *p, struct pg_conn **out, struct err *err);
/* Give a connection back (NULL: no-op). One that is broken or inside a
 * transaction is closed; a broken one takes the idle ones with it. */
void store_pg_pool_put(struct pg_pool *p, struct pg_conn *c);

/* Open one connection to uri (used by the pool and by log.c). */
int store_pg_connect(PGconn **out, const char *uri, struct err *err);

/* Record the failure of r (may be NULL) on c in err and return its ERR_*:
 * ERR_BUSY for a lost connection, a server shutting down, a deadlock or a
 * serialization failure; ERR_EXISTS for a unique violation; ERR_FULL,
 * ERR_NOMEM; else ERR_STORE. Clears r. */
int store_pg_fail(PGconn *c, PGresult *r, struct err *err);

/* Is c's connection gone? */
bool store_pg_conn_broken(const struct pg_conn *c);

/* Run statement q with p (NULL: no parameters) on c. On success *out (when
 * out is not NULL) holds the result, which the caller clears; a command's
 * result is cleared here when out is NULL. */
int store_pg_run(struct pg_conn *c, const struct pg_sql *q, const struct pg_params *p,
                 PGresult **out, struct err *err);

/* Run static SQL without parameters (DDL, BEGIN, COMMIT...). */
int store_pg_exec(PGconn *c, const char *sql, struct err *err);

/* Commit when rc is 0, else roll back; returns rc or the commit's error. */
int store_pg_end(struct pg_conn *c, int rc, struct err *err);

/* A read on a pooled connection, retried once on a fresh connection when
 * the pooled one turns out dead. */
int store_pg_query(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                   PGresult **out, struct err *err);

/* The integer in the first column of the first row of q with p (0 when
 * there is no row or it is NULL): on c (store_pg_run), or on a pooled
 * connection, retried as store_pg_query. */
int store_pg_run_int(struct pg_conn *c, const struct pg_sql *q, const struct pg_params *p,
                     int64_t *out, struct err *err);
int store_pg_query_int(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                       int64_t *out, struct err *err);

/* A one-statement write on a pooled connection: *changed (may be NULL)
 * gets the rows it changed, *out (may be NULL) its result, which the
 * caller clears. Not retried (store_pg_query's note on writes). */
int store_pg_write(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                   long *changed, PGresult **out, struct err *err);

/* store_pg_write of q with args, a write of the one row (a feed, an
 * alert: what) with id id; ERR_NOTFOUND "no <what> has the id <id>" when
 * it changed no row. */
struct store_arg;
int store_pg_write_row(struct store_backend *b, const struct pg_sql *q,
                       const struct store_arg *args, size_t n, const char *what, int64_t id,
                       struct err *err);

/* Rows a command's result r changed (PQcmdTuples). */
long store_pg_changed(PGresult *r);

/* Reads row i of r into *item, a record as rec describes it
 * (store/columns.h): zeroed, then column j into rec->cols[j], strings
 * copied into the arena. 0 or ERR_NOMEM. */
struct store_record;
int store_pg_row(struct arena *a, const PGresult *r, int i, const struct store_record *rec,
                 void *item);

/* Every row of r read as rec into an arena array of records (*out,
 * *n_out, set on success only). 0 or ERR_NOMEM; the caller says what ran
 * out. */
int store_pg_rows(struct arena *a, const PGresult *r, const struct store_record *rec, void **out,
                  size_t *n_out);

/* Every row of the read q with p, read as rec into an arena array of
 * records (*out, *n_out; out as store_sqlite_read_all's). */
int store_pg_read_all(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                      struct arena *a, const struct store_record *rec, void *out, size_t *n_out,
                      struct err *err);

void store_pg_params_init(struct pg_params *p);
void store_pg_param_text(struct pg_params *p, const char *s); /* NULL → SQL NULL */
void store_pg_param_int(struct pg_params *p, int64_t v);
void store_pg_param_double(struct pg_params *p, double v);
void store_pg_param_bool(struct pg_params *p, bool v);
void store_pg_param_code(struct pg_params *p, const char code[3]); /* "" → '' */
void store_pg_param_bytes(struct pg_params *p, const void *data, int len);
/* p = args[0..n) (store/args.h: STORE_ARGS(...)), as the calls above
 * would make them; more may be added after. */
struct store_arg;
void store_pg_params_set(struct pg_params *p, const struct store_arg *args, size_t n);

/* Values of row i, column j of r. */
int64_t store_pg_get_int(const PGresult *r, int i, int j);
double store_pg_get_double(const PGresult *r, int i, int j);
bool store_pg_get_bool(const PGresult *r, int i, int j);
void store_pg_get_code(const PGresult *r, int i, int j, char out[3]);
/* A copy in the arena (NULL for SQL NULL); 0 or ERR_NOMEM. */
int store_pg_get_str(struct arena *a, const PGresult *r, int i, int j, const char **out);

/* Array literals for text[] / bigint[] / boolean[] parameters: open with
 * store_pg_array_begin (which initialises the buffer; buf_release it
 * after the statement), add elements, close with store_pg_param_array. */
void store_pg_array_begin(struct buf *b);
void store_pg_array_text(struct buf *b, const char *s); /* NULL → NULL */
void store_pg_array_int(struct buf *b, int64_t v);
void store_pg_array_bool(struct buf *b, bool v);
/* Close the array arr and add it to p as the next parameter; ERR_NOMEM
 * ("out of memory") when building it ran out. */
int store_pg_param_array(struct pg_params *p, struct buf *arr, struct err *err);

/* --- vtable entries ------------------------------------------------------- */

/* The operations both backends have (store/backend.h): articles.c,
 * sources.c, keys.c, feeds.c, alerts.c. */
STORE_BACKEND_OPS(STORE_BACKEND_DECLARE, pg)

/* The vtable's PostgreSQL-only entry, and what pg_free releases. */
void store_pg_sources_release(struct store_pg *s);
int store_pg_usage_take(struct store_backend *b, int64_t key_id, int64_t day, int64_t month_from,
                        int64_t limit_day, int64_t limit_month, int64_t last_used, bool *taken,
                        int64_t *day_n, int64_t *month_n, struct err *err);
void store_pg_keys_release(struct store_pg *s);

/* The article columns shared by articles.c and log.c. */
#define STORE_PG_ARTICLE_COLUMNS                                                                   \
    "id, seq, url, canonical_url, source_id, source_name, author, title, description,"             \
    " url_to_image, published_at, content, domain, language, country, category, headline,"         \
    " ingested_at, story_id"

/* Row i of an article log read (deleted, then STORE_PG_ARTICLE_COLUMNS, as
 * text) into out: strings copied into the arena (cut at a NUL byte), NULL
 * for SQL NULL, numbers as strtoll reads them, codes "" unless two bytes.
 * 0, or ERR_NOMEM. Exposed for fuzz/fuzz_pg_row.c: the bytes come from the
 * database server. */
int store_pg_log_row(struct arena *a, const PGresult *r, int i, struct article *out, bool *deleted);

#endif
