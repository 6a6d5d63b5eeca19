/* Articles of the embedded store: upsert by canonical url in one
 * transaction per batch, time-ordered ids, the ingest sequence.
 *
 * Ids: published_at << 20 | n. A new article takes n = one past the highest
 * n used in its second, so articles of one second are numbered in ingest
 * order and allocation is one index probe; the lowest free n is searched
 * only when the second's last n is taken (a hole left by an article that
 * moved to another second). An update keeps its id unless published_at
 * changed. seq (meta 'seq') grows by one per inserted or updated article. */
#include "store/sqlite/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"
#include "util/banned.h"

struct put_stmts {
    sqlite3_stmt *find; /* id, published_at by canonical url */
    sqlite3_stmt *del;  /* by id; the trigger removes the FTS5 row */
    sqlite3_stmt *last; /* highest id in a second */
    sqlite3_stmt *scan; /* ids of a second, ascending */
    sqlite3_stmt *ins;
    sqlite3_stmt *seq_get;
    sqlite3_stmt *seq_set;
};

static const struct {
    size_t off;
    const char *sql;
} put_sql[] = {
    {offsetof(struct put_stmts, find),
     "SELECT id, published_at FROM articles WHERE canonical_url = ?1"},
    {offsetof(struct put_stmts, del), "DELETE FROM articles WHERE id = ?1"},
    {offsetof(struct put_stmts, last), "SELECT max(id) FROM articles WHERE id BETWEEN ?1 AND ?2"},
    {offsetof(struct put_stmts, scan),
     "SELECT id FROM articles WHERE id BETWEEN ?1 AND ?2 ORDER BY id"},
    {offsetof(struct put_stmts, ins), STORE_SQLITE_ARTICLE_INSERT},
    {offsetof(struct put_stmts, seq_get), "SELECT value FROM meta WHERE key = 'seq'"},
    {offsetof(struct put_stmts, seq_set), "INSERT INTO meta(key, value) VALUES ('seq', ?1)"
                                          " ON CONFLICT(key) DO UPDATE SET value = excluded.value"},
};

#define PUT_SQL_COUNT (sizeof put_sql / sizeof put_sql[0])

static sqlite3_stmt **stmt_slot(struct put_stmts *ps, size_t i)
{
    return (sqlite3_stmt **)((char *)ps + put_sql[i].off);
}

static void put_stmts_finalize(struct put_stmts *ps)
{
    for (size_t i = 0; i < PUT_SQL_COUNT; i++) {
        sqlite3_finalize(*stmt_slot(ps, i));
        *stmt_slot(ps, i) = NULL;
    }
}

static int put_stmts_prepare(sqlite3 *db, struct put_stmts *ps, struct err *err)
{
    int rc = 0;
    memset(ps, 0, sizeof *ps);
    for (size_t i = 0; i < PUT_SQL_COUNT && rc == 0; i++)
        rc = store_sqlite_prepare(db, put_sql[i].sql, stmt_slot(ps, i), err);
    return rc;
}

/* Run a statement that returns at most one row of one integer column;
 * *found says whether a non-NULL value came back. Resets st. */
static int step_int(sqlite3 *db, sqlite3_stmt *st, int64_t *out, bool *found, struct err *err)
{
    int rc = store_sqlite_step_row(db, st, err);
    *found = false;
    if (rc == 1) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
            *out = sqlite3_column_int64(st, 0);
            *found = true;
        }
        rc = 0;
    }
    sqlite3_reset(st);
    return rc;
}

/* A free id in second t. */
static int id_alloc(sqlite3 *db, struct put_stmts *ps, int64_t t, int64_t *out, struct err *err)
{
    int64_t lo = STORE_ID_MIN_FOR_TIME(t), hi = STORE_ID_MAX_FOR_TIME(t), last = 0;
    bool found;
    int rc;

    sqlite3_bind_int64(ps->last, 1, lo);
    sqlite3_bind_int64(ps->last, 2, hi);
    if ((rc = step_int(db, ps->last, &last, &found, err)) < 0)
        return rc;
    if (!found) {
        *out = lo;
        return 0;
    }
    if (last < hi) {
        *out = last + 1;
        return 0;
    }
    /* The second's last n is taken: look for a hole. */
    int64_t want = lo;
    sqlite3_bind_int64(ps->scan, 1, lo);
    sqlite3_bind_int64(ps->scan, 2, hi);
    while ((rc = sqlite3_step(ps->scan)) == SQLITE_ROW) {
        if (sqlite3_column_int64(ps->scan, 0) != want)
            break;
        want++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rc = store_sqlite_fail(db, rc, err);
    } else if (rc == SQLITE_DONE) {
        rc = err_set(err, ERR_TOO_LARGE, "more than %lld articles published in one second",
                     (long long)1 << STORE_ID_SHIFT);
    } else {
        *out = want;
        rc = 0;
    }
    sqlite3_reset(ps->scan);
    return rc;
}

static int bind_article(struct put_stmts *ps, const struct article *a, int64_t id, int64_t seq,
                        const char *meta_terms)
{
    int64_t ingested = a->ingested_at ? a->ingested_at : (int64_t)time(NULL);
    return store_sqlite_bind_article(ps->ins, a, id, seq, ingested, meta_terms);
}

/* Upsert one article; *id_out, *updated. seq is the sequence to give it. */
static int put_one(sqlite3 *db, struct put_stmts *ps, struct buf *meta, const struct article *a,
                   size_t i, int64_t seq, int64_t *id_out, bool *updated, struct err *err)
{
    int64_t old_id = 0, old_published = 0, id = 0;
    bool found = false;
    int rc;

    store_sqlite_bind_text(ps->find, 1, a->canonical_url);
    rc = store_sqlite_step_row(db, ps->find, err);
    if (rc == 1) {
        found = true;
        old_id = sqlite3_column_int64(ps->find, 0);
        old_published = sqlite3_column_int64(ps->find, 1);
        rc = 0;
    }
    sqlite3_reset(ps->find);
    if (rc < 0)
        return rc;

    if (found) {
        sqlite3_bind_int64(ps->del, 1, old_id);
        if ((rc = store_sqlite_step_done(db, ps->del, err)) < 0)
            return rc;
    }
    if (found && old_published == a->published_at)
        id = old_id;
    else if ((rc = id_alloc(db, ps, a->published_at, &id, err)) < 0)
        return rc;

    buf_reset(meta);
    store_meta_terms(meta, a);
    if ((rc = buf_error(meta)) < 0)
        return err_set(err, rc, "article %zu: cannot build its index terms", i);
    rc = bind_article(ps, a, id, seq, meta->data);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        sqlite3_clear_bindings(ps->ins);
        return rc;
    }
    rc = store_sqlite_step_done(db, ps->ins, err);
    sqlite3_clear_bindings(ps->ins); /* the bound strings are the caller's */
    if (rc < 0)
        return rc;
    *id_out = id;
    *updated = found;
    return 0;
}

int store_sqlite_articles_put(struct store_backend *b, struct article *arts, size_t n,
                              struct store_put_stats *stats, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    struct put_stmts ps;
    struct buf meta;
    int64_t *ids = NULL, seq = 0;
    size_t inserted = 0, updated = 0;
    bool found;
    int rc;

    memset(&ps, 0, sizeof ps);
    buf_init(&meta, 0);
    /* Ids are handed back only once the batch is committed. */
    ids = calloc(n, sizeof *ids);
    if (ids == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        goto done;
    if ((rc = put_stmts_prepare(s->writer, &ps, err)) < 0)
        goto end;
    if ((rc = step_int(s->writer, ps.seq_get, &seq, &found, err)) < 0)
        goto end;
    if (!found)
        seq = 0;
    for (size_t i = 0; i < n; i++) {
        bool was_known = false;
        seq++;
        rc = put_one(s->writer, &ps, &meta, &arts[i], i, seq, &ids[i], &was_known, err);
        if (rc < 0)
            goto end;
        if (was_known)
            updated++;
        else
            inserted++;
    }
    sqlite3_bind_int64(ps.seq_set, 1, seq);
    rc = store_sqlite_step_done(s->writer, ps.seq_set, err);
end:
    put_stmts_finalize(&ps);
    rc = store_sqlite_write_end(s, rc, err);
done:
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            arts[i].id = ids[i];
            arts[i].seq = seq - (int64_t)(n - 1 - i);
        }
        if (stats) {
            stats->inserted = inserted;
            stats->updated = updated;
        }
    }
    free(ids);
    buf_release(&meta);
    return rc;
}

/* Exact: data_version moves with every commit of another connection (the
 * writer's, an import's, a hand-made DELETE), and it is read before the
 * count, so a commit in between only makes the next call count again. */
int store_sqlite_articles_count(struct store_backend *b, int64_t *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    struct store_sqlite_rowcount *c = &s->rowcount;
    int64_t version = 0;
    int rc = 0;

    pthread_mutex_lock(&c->lock);
    if (c->db == NULL)
        rc = store_sqlite_conn_open(&c->db, s->path, true, err);
    if (rc == 0)
        rc = store_sqlite_query_int(c->db, "PRAGMA data_version", &version, err);
    if (rc == 0 && !(c->counted && version == c->version)) {
        c->counted = false;
        rc = store_sqlite_query_int(c->db, "SELECT count(*) FROM articles", &c->rows, err);
        c->counted = rc == 0;
        c->version = version;
    }
    if (rc == 0)
        *out = c->rows;
    pthread_mutex_unlock(&c->lock);
    return rc;
}
