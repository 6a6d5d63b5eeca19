/* SQLite plumbing of the embedded store and of a cluster node's replica
 * (the same schema, schema.c): opening connections (every one with the
 * "newsd" tokenizer registered), a pool of read connections, SQLite result
 * codes → ERR_*, the full-text side, reading and writing article rows.
 * Private to src/store/: the index reads these files through store/journal.h
 * (sqlite/journal.c). */
#ifndef NEWSD_STORE_SQLITE_DB_H
#define NEWSD_STORE_SQLITE_DB_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/args.h"
#include "store/meta.h"
#include "store/store.h"
#include "text/text_fts5.h"
#include "util/buf.h"
#include "util/err.h"

#define STORE_SQLITE_FILE "newsd.db"
#define STORE_SQLITE_POOL_MAX 16 /* idle read connections kept */
#define STORE_SQLITE_BUSY_TIMEOUT_MS 5000

/* Idle read connections to one database file. */
struct store_sqlite_pool {
    pthread_mutex_t lock;
    char *path;
    sqlite3 *idle[STORE_SQLITE_POOL_MAX];
    size_t n_idle;
};

/* Map a SQLite result code to ERR_FULL / ERR_BUSY / ERR_NOMEM / ERR_STORE and
 * record sqlite3_errmsg(db) (or the code's text when db is NULL) in err.
 * Returns the ERR_* code. */
int store_sqlite_fail(sqlite3 *db, int rc, struct err *err);

/* Open a connection to path (read-only, or read-write creating the file
 * 0600 whatever the umask; SQLite's -wal and -shm files take its mode),
 * with a busy timeout and the tokenizer registered. */
int store_sqlite_conn_open(sqlite3 **out, const char *path, bool readonly, struct err *err);

/* sqlite3_close_v2, NULL-safe. */
void store_sqlite_conn_close(sqlite3 *db);

/* Prepare one statement of static SQL. */
int store_sqlite_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **out, struct err *err);
/* The statement for sql kept on db from an earlier call, idle, else a new
 * one that stays with db: reset it after use, do not finalize it (the
 * connection's close does). For a statement run on every request: its
 * parse and plan are paid once per connection. sql begins with
 * STORE_SQLITE_KEPT, the mark by which the close knows it. */
#define STORE_SQLITE_KEPT "/* kept */ "
int store_sqlite_prepare_kept(sqlite3 *db, const char *sql, sqlite3_stmt **out, struct err *err);

/* The integer in the first column of the first row of static SQL (0 when
 * there is no row or it is NULL). */
int store_sqlite_query_int(sqlite3 *db, const char *sql, int64_t *out, struct err *err);

/* The text value of meta key into out ("" when there is none). */
int store_sqlite_meta_text(sqlite3 *db, const char *key, char *out, size_t cap, struct err *err);

/* Run static SQL (no result rows wanted). */
int store_sqlite_exec(sqlite3 *db, const char *sql, struct err *err);

/* Bind a string (NULL → SQL NULL); the string must outlive the statement's
 * next step. Returns a SQLite code. */
int store_sqlite_bind_text(sqlite3_stmt *st, int i, const char *s);

/* The store's full-text side, which only the fts5 index reads: the
 * contentless FTS5 table articles_fts and the triggers that keep it in step
 * with articles. A store served by the engine index goes without it (its
 * imports are several times faster and its file about half the size). */
/* The meta column: the stored meta terms, then after a second mark the
 * author's (store_meta_author_terms, by the SQL function
 * STORE_SQLITE_AUTHOR_TERMS), which the tokenizer gives FTS5 colocated
 * (text_fts5.h): they add nothing to a row's length, so bm25 scores what
 * it scored before author terms. Schema version 10 rebuilt the table
 * with them (sqlite.c). */
#define STORE_SQLITE_AUTHOR_TERMS "newsd_author_terms"
#define STORE_SQLITE_FTS_VALUES(r)                                                                 \
    "char(31)||" r "language||char(31)||coalesce(" r "title,''), "                                 \
    "char(31)||" r "language||char(31)||coalesce(" r "description,''), "                           \
    "char(31)||" r "language||char(31)||coalesce(" r "content,''), "                               \
    "char(30)||" r "meta_terms||char(30)||" STORE_SQLITE_AUTHOR_TERMS "(" r "author)"
/* clang-format off */
#define STORE_SQLITE_FULLTEXT_SQL                                                                  \
    "CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5("                                  \
    " title, description, content, meta, content='', tokenize='" TEXT_FTS5_TOKENIZER "');"         \
    "CREATE TRIGGER IF NOT EXISTS articles_fts_insert AFTER INSERT ON articles BEGIN"              \
    " INSERT INTO articles_fts(rowid, title, description, content, meta)"                         \
    " VALUES (new.id, " STORE_SQLITE_FTS_VALUES("new.") ");"                                       \
    " END;"                                                                                        \
    "CREATE TRIGGER IF NOT EXISTS articles_fts_delete AFTER DELETE ON articles BEGIN"              \
    " INSERT INTO articles_fts(articles_fts, rowid, title, description, content, meta)"           \
    " VALUES ('delete', old.id, " STORE_SQLITE_FTS_VALUES("old.") ");"                             \
    " END;"                                                                                        \
    /* The store never updates an article in place (it deletes and inserts), \
     * but an UPDATE by hand must not leave the index behind. */                                    \
    "CREATE TRIGGER IF NOT EXISTS articles_fts_update AFTER UPDATE ON articles BEGIN"              \
    " INSERT INTO articles_fts(articles_fts, rowid, title, description, content, meta)"           \
    " VALUES ('delete', old.id, " STORE_SQLITE_FTS_VALUES("old.") ");"                             \
    " INSERT INTO articles_fts(rowid, title, description, content, meta)"                         \
    " VALUES (new.id, " STORE_SQLITE_FTS_VALUES("new.") ");"                                       \
    " END;"
/* clang-format on */

/* The FTS5 mode's index of each story's articles (index/fts5:
 * index_story_members). Kept with the full-text side only: the engine
 * reads stories from its own columns, and in the engine mode this index
 * cost imports a third of their rate (docs/stories.md). */
#define STORE_SQLITE_STORY_INDEX "articles_story_id"
#define STORE_SQLITE_STORY_INDEX_SQL                                                               \
    "CREATE INDEX IF NOT EXISTS " STORE_SQLITE_STORY_INDEX " ON articles(story_id)"

/* Whether the full-text side is there (its insert trigger exists). */
int store_sqlite_fulltext_get(sqlite3 *db, bool *on, struct err *err);
/* Whether the full-text side's story index is there too. */
int store_sqlite_story_index_get(sqlite3 *db, bool *on, struct err *err);

/* Create it, filling articles_fts from every article (minutes for
 * millions), or drop it; nothing when it already is as asked. One
 * transaction on db, a read-write connection. */
int store_sqlite_fulltext_set(sqlite3 *db, bool on, struct err *err);

/* Fill arts[0..n) with the article rows of ids[0..n), in that order, on
 * db (the caller's transaction makes them one snapshot); an id without a
 * row leaves its slot's id 0. Both search backends read pages this way, so
 * they give byte-identical articles. Only placeholders enter the SQL. */
int store_sqlite_articles_by_id(sqlite3 *db, struct arena *a, const int64_t *ids, size_t n,
                                struct article *arts, struct err *err);
/* The same rows handed to fn one by one, in ids' order, without a copy:
 * a's strings are the row's, valid during the call only. An id without a
 * row is passed over; fn's first non-zero return stops the walk and is
 * returned. */
int store_sqlite_articles_each(sqlite3 *db, const int64_t *ids, size_t n,
                               int (*fn)(void *ctx, const struct article *a), void *ctx,
                               struct err *err);

/* --- single statements ------------------------------------------------------
 * The one prepare → bind → step → finalize: a statement's arguments are
 * store/args.h's values, bound to ?1, ?2, ... in order. */

/* Prepare sql on db and bind args: 0, or *st NULL and the error. */
int store_sqlite_prepare_args(sqlite3 *db, const char *sql, const struct store_arg *args, size_t n,
                              sqlite3_stmt **st, struct err *err);

/* Bind args[0..n) to ?1..?n of st (for statements run many times). Returns a
 * SQLite code. */
int store_sqlite_bind(sqlite3_stmt *st, const struct store_arg *args, size_t n);

/* Step st for its one row: 1 when there is one (read its columns, then
 * reset or finalize st), 0 when there is none, or store_sqlite_fail's
 * error. */
int store_sqlite_step_row(sqlite3 *db, sqlite3_stmt *st, struct err *err);

/* Step st, which returns no rows, then reset it for the next binding:
 * 0, or the step's error as store_sqlite_fail. */
int store_sqlite_step_done(sqlite3 *db, sqlite3_stmt *st, struct err *err);

/* Run sql, which returns no rows, with args on db; *changes (when not NULL)
 * = rows it changed. A UNIQUE constraint failure is ERR_EXISTS (the caller
 * says what exists); other failures as store_sqlite_fail. */
int store_sqlite_write(sqlite3 *db, const char *sql, const struct store_arg *args, size_t n,
                       int *changes, struct err *err);

/* store_sqlite_query_int with args bound (on the writer inside its
 * transaction, say, where the read pool would not see the change). */
int store_sqlite_query_int_args(sqlite3 *db, const char *sql, const struct store_arg *args,
                                size_t n, int64_t *out, struct err *err);

/* Reads the current row of st into *item, a record as rec describes it
 * (store/columns.h): zeroed, then column j into rec->cols[j], strings
 * copied into the arena. 0 or ERR_NOMEM. */
struct store_record;
int store_sqlite_row(struct arena *a, sqlite3_stmt *st, const struct store_record *rec, void *item);

/* A connection of the read pool p with sql prepared and args bound, for
 * a read that steps it itself; *st is NULL on error (and *db too when no
 * connection was had). Give both back with store_sqlite_pool_finish, also
 * after an error. An sql that begins with STORE_SQLITE_KEPT is prepared
 * once per connection (store_sqlite_prepare_kept) and finish resets it;
 * so in the read_* helpers below. */
int store_sqlite_pool_prepare(struct store_sqlite_pool *p, const char *sql,
                              const struct store_arg *args, size_t n, sqlite3 **db,
                              sqlite3_stmt **st, struct err *err);
void store_sqlite_pool_finish(struct store_sqlite_pool *p, sqlite3 *db, sqlite3_stmt *st);

/* On a connection of the read pool p: the one row of sql with args, read
 * as rec into item (NULL: only whether there is one); ERR_NOTFOUND with
 * `missing` as the message when there is none. */
int store_sqlite_read_one(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, struct arena *a,
                          const struct store_record *rec, void *item, const char *missing,
                          struct err *err);

/* On a connection of the read pool p: every row of sql with args, read as
 * rec into an arena array of records (*out, *n_out; out is the address of
 * the caller's array pointer of rec's type, set on success only:
 * store_records_give). */
int store_sqlite_read_all(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, struct arena *a,
                          const struct store_record *rec, void *out, size_t *n_out,
                          struct err *err);

/* On a connection of the read pool p: the integer in the first column of
 * the first row of sql with args (0 when there is no row or it is NULL). */
int store_sqlite_read_int(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, int64_t *out, struct err *err);

/* The one INSERT of an article row (the store's upserts and the cluster
 * replica's changes), and its binder: id and seq in ?1 ?2 and the rest of
 * the article in table order; meta_terms as store/meta.h spells them. */
#define STORE_SQLITE_ARTICLE_INSERT                                                                \
    "INSERT INTO articles(id, seq, url, canonical_url, source_id, source_name, author, title,"     \
    " description, url_to_image, published_at, content, domain, language, country, category,"      \
    " headline, ingested_at, meta_terms, story_id)"                                                \
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"    \
    " ?19, ?20)"
int store_sqlite_bind_article(sqlite3_stmt *st, const struct article *a, int64_t id, int64_t seq,
                              int64_t ingested_at, const char *meta_terms);

/* Copy column i (text or NULL) into the arena; sets *out. 0 or ERR_NOMEM. */
int store_sqlite_column_dup(struct arena *a, sqlite3_stmt *st, int i, const char **out);

/* Read pool over path (read-only connections, opened on demand). */
int store_sqlite_pool_init(struct store_sqlite_pool *p, const char *path, struct err *err);
void store_sqlite_pool_release(struct store_sqlite_pool *p);
/* A connection for the calling thread alone until it is put back. */
int store_sqlite_pool_get(struct store_sqlite_pool *p, sqlite3 **out, struct err *err);
/* Give a connection back; every statement on it must be finalized, or
 * reset if kept (store_sqlite_prepare_kept), and no transaction open.
 * NULL is a no-op. */
void store_sqlite_pool_put(struct store_sqlite_pool *p, sqlite3 *db);

#endif
