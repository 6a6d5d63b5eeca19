/* Readers of the log file (store/log.h): read-only SQLite connections to
 * the embedded store's file or a replica's, which share one schema
 * (schema.c). Every query an index runs against the store is here, except
 * the fts5 index's own MATCH queries. */
#include "store/log.h"

#include <stdlib.h>
#include <string.h>

#include "store/sqlite/db.h"
#include "util/banned.h"

struct store_reader {
    sqlite3 *db;
};

struct store_readers {
    struct store_sqlite_pool pool;
};

struct store_rows {
    struct store_reader *r;
    sqlite3_stmt *st;
};

/* The head: the highest seq of any row, the store's counter (meta seq,
 * which a delete of the newest row does not lower) and a replica's
 * position in its store's log (which deletes move). */
#define HEAD_SQL                                                                                   \
    STORE_SQLITE_KEPT                                                                              \
        "SELECT max(coalesce((SELECT max(seq) FROM articles), 0),"                                 \
        " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'seq'), 0),"               \
        " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'replica_seq'), 0))"

#define ROW_COLUMNS                                                                                \
    "id, seq, published_at, title, description, content, language, meta_terms, source_id,"         \
    " canonical_url, source_name, author, url, url_to_image, ingested_at"

static int reader_wrap(struct store_reader **out, sqlite3 *db, struct err *err)
{
    *out = malloc(sizeof **out);
    if (*out == NULL) {
        store_sqlite_conn_close(db);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    (*out)->db = db;
    return 0;
}

static int reader_open(struct store_reader **out, const char *path, bool readonly, struct err *err)
{
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if ((rc = store_sqlite_conn_open(&db, path, readonly, err)) < 0)
        return rc;
    return reader_wrap(out, db, err);
}

int store_reader_open(struct store_reader **out, const char *path, struct err *err)
{
    return reader_open(out, path, true, err);
}

int store_reader_open_writable(struct store_reader **out, const char *path, struct err *err)
{
    return reader_open(out, path, false, err);
}

void store_reader_close(struct store_reader *r)
{
    if (r == NULL)
        return;
    store_sqlite_conn_close(r->db);
    free(r);
}

struct sqlite3 *store_reader_sqlite(struct store_reader *r)
{
    return r->db;
}

int store_reader_fail(struct store_reader *r, int sqlite_rc, struct err *err)
{
    return store_sqlite_fail(r->db, sqlite_rc, err);
}

int store_reader_version(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_query_int(r->db, "PRAGMA data_version", out, err);
}

int store_reader_begin(struct store_reader *r, struct err *err)
{
    return store_sqlite_exec(r->db, "BEGIN", err);
}

int store_reader_end(struct store_reader *r, struct err *err)
{
    return store_sqlite_exec(r->db, "COMMIT", err);
}

int store_reader_identity(struct store_reader *r, char out[STORE_IDENTITY_MAX], struct err *err)
{
    return store_sqlite_meta_text(r->db, "articles_epoch", out, STORE_IDENTITY_MAX, err);
}

int store_reader_head(struct store_reader *r, int64_t *out, struct err *err)
{
    /* Every search asks (read-your-writes): the statement stays with the
     * pooled connection; parsing it each time was 1.4 % of a rare word's
     * search in process (sqlite3Parser alone). */
    sqlite3_stmt *st;
    *out = 0;
    int rc = store_sqlite_prepare_kept(r->db, HEAD_SQL, &st, err);
    if (rc < 0)
        return rc;
    rc = store_sqlite_step_row(r->db, st, err);
    if (rc == 1) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    }
    sqlite3_reset(st); /* ends its read: no transaction left open */
    return rc;
}

int store_reader_count(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_query_int(r->db, "SELECT count(*) FROM articles", out, err);
}

/* Every row of st (column 0: an id, column 1 when asked: a seq whose
 * highest value goes to *last) into *ids; finalizes st. */
static int ids_collect(struct store_reader *r, sqlite3_stmt *st, int64_t **ids, size_t *n,
                       int64_t *last, struct err *err)
{
    size_t cap = 0;
    int rc;

    *ids = NULL;
    *n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            size_t c = cap ? cap * 2 : 4096;
            int64_t *v = realloc(*ids, c * sizeof *v);
            if (v == NULL) {
                rc = err_set(err, ERR_NOMEM, "out of memory");
                break;
            }
            *ids = v;
            cap = c;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
        if (last)
            *last = sqlite3_column_int64(st, 1);
    }
    if (rc == SQLITE_DONE)
        rc = 0;
    else if (rc > 0)
        rc = store_sqlite_fail(r->db, rc, err);
    sqlite3_finalize(st);
    if (rc < 0) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

int store_reader_ids(struct store_reader *r, int64_t **ids, size_t *n, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *ids = NULL;
    *n = 0;
    if ((rc = store_sqlite_prepare(r->db, "SELECT id FROM articles ORDER BY id", &st, err)) < 0)
        return rc;
    return ids_collect(r, st, ids, n, NULL, err);
}

int store_reader_deletions(struct store_reader *r, int64_t after, int64_t **ids, size_t *n,
                           int64_t *last, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *ids = NULL;
    *n = 0;
    *last = after;
    if ((rc = store_sqlite_prepare(r->db,
                                   "SELECT id, seq FROM article_deletions WHERE seq > ?1"
                                   " ORDER BY seq",
                                   &st, err)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, after);
    return ids_collect(r, st, ids, n, last, err);
}

int store_reader_sources(struct store_reader *r, store_source_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_prepare(r->db, "SELECT id, popularity FROM sources", &st, err)) < 0)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        if (id == NULL)
            continue;
        double pop =
            sqlite3_column_type(st, 1) == SQLITE_NULL ? -1.0 : sqlite3_column_double(st, 1);
        if ((rc = fn(ctx, id, pop)) != 0)
            goto out;
    }
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(r->db, rc, err);
out:
    sqlite3_finalize(st);
    return rc;
}

int store_reader_articles(struct store_reader *r, struct arena *a, const int64_t *ids, size_t n,
                          struct article *arts, struct err *err)
{
    return store_sqlite_articles_by_id(r->db, a, ids, n, arts, err);
}

int store_reader_newest_headline(struct store_reader *r, int64_t id_hi, int64_t *out,
                                 struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc =
        store_sqlite_prepare(r->db,
                             "SELECT published_at FROM articles WHERE headline = 1 AND id <= ?1"
                             " ORDER BY id DESC LIMIT 1",
                             &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id_hi);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    } else if (rc == SQLITE_DONE) {
        rc = err_set(err, ERR_NOTFOUND, "no headline articles");
    } else {
        rc = store_sqlite_fail(r->db, rc, err);
    }
    sqlite3_finalize(st);
    return rc;
}

int store_log_fulltext_ensure(const char *path, struct err *err)
{
    struct store_reader *r = NULL;
    bool on = false, story = false;
    int rc;

    if ((rc = store_reader_open(&r, path, err)) < 0)
        return rc;
    rc = store_sqlite_fulltext_get(r->db, &on, err);
    if (rc == 0 && on)
        rc = store_sqlite_story_index_get(r->db, &story, err);
    store_reader_close(r);
    if (rc < 0 || (on && story))
        return rc;
    /* Building it is a write: only then a read-write connection. */
    if ((rc = store_reader_open_writable(&r, path, err)) < 0)
        return rc;
    rc = store_sqlite_fulltext_set(r->db, true, err);
    store_reader_close(r);
    return rc;
}

/* --- rows ------------------------------------------------------------------ */

static int rows_new(struct store_rows **out, struct store_reader *r, const char *sql,
                    struct err *err)
{
    struct store_rows *c = calloc(1, sizeof *c);
    int rc;

    *out = NULL;
    if (c == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    c->r = r;
    if ((rc = store_sqlite_prepare(r->db, sql, &c->st, err)) < 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int store_rows_after(struct store_rows **out, struct store_reader *r, int64_t after,
                     struct err *err)
{
    int rc =
        rows_new(out, r, "SELECT " ROW_COLUMNS " FROM articles WHERE seq > ?1 ORDER BY seq", err);
    if (rc == 0)
        sqlite3_bind_int64((*out)->st, 1, after);
    return rc;
}

int store_rows_by_id(struct store_rows **out, struct store_reader *r, struct err *err)
{
    return rows_new(out, r, "SELECT " ROW_COLUMNS " FROM articles WHERE id = ?1", err);
}

static void row_read(sqlite3_stmt *st, struct store_row *row)
{
    row->id = sqlite3_column_int64(st, 0);
    row->seq = sqlite3_column_int64(st, 1);
    row->published_at = sqlite3_column_int64(st, 2);
    row->title = (const char *)sqlite3_column_text(st, 3);
    row->description = (const char *)sqlite3_column_text(st, 4);
    row->content = (const char *)sqlite3_column_text(st, 5);
    row->language = (const char *)sqlite3_column_text(st, 6);
    row->meta_terms = (const char *)sqlite3_column_text(st, 7);
    row->source_id = (const char *)sqlite3_column_text(st, 8);
    row->canonical_url = (const char *)sqlite3_column_text(st, 9);
    row->source_name = (const char *)sqlite3_column_text(st, 10);
    row->author = (const char *)sqlite3_column_text(st, 11);
    row->url = (const char *)sqlite3_column_text(st, 12);
    row->url_to_image = (const char *)sqlite3_column_text(st, 13);
    row->ingested_at = sqlite3_column_int64(st, 14);
}

/* One step of the cursor's statement: 1 with the row, 0 at its end. */
static int rows_step(struct store_rows *c, struct store_row *row, struct err *err)
{
    int rc = sqlite3_step(c->st);
    if (rc == SQLITE_ROW) {
        row_read(c->st, row);
        return 1;
    }
    return rc == SQLITE_DONE ? 0 : store_sqlite_fail(c->r->db, rc, err);
}

int store_rows_next(struct store_rows *c, struct store_row *row, struct err *err)
{
    return rows_step(c, row, err);
}

int store_rows_get(struct store_rows *c, int64_t id, struct store_row *row, struct err *err)
{
    sqlite3_reset(c->st);
    sqlite3_bind_int64(c->st, 1, id);
    return rows_step(c, row, err);
}

void store_rows_free(struct store_rows *c)
{
    if (c == NULL)
        return;
    sqlite3_finalize(c->st);
    free(c);
}

/* --- the pool ---------------------------------------------------------------- */

int store_readers_new(struct store_readers **out, const char *path, struct err *err)
{
    struct store_readers *p = calloc(1, sizeof *p);
    int rc;

    *out = NULL;
    if (p == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_sqlite_pool_init(&p->pool, path, err)) < 0) {
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void store_readers_free(struct store_readers *p)
{
    if (p == NULL)
        return;
    store_sqlite_pool_release(&p->pool);
    free(p);
}

int store_readers_get(struct store_readers *p, struct store_reader **out, struct err *err)
{
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if ((rc = store_sqlite_pool_get(&p->pool, &db, err)) < 0)
        return rc;
    return reader_wrap(out, db, err);
}

void store_readers_put(struct store_readers *p, struct store_reader *r)
{
    if (r == NULL)
        return;
    store_sqlite_pool_put(&p->pool, r->db); /* rolls back an open snapshot */
    free(r);
}
