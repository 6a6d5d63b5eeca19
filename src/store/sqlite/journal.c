/* Readers of a journal's file (store/sqlite/journal.h): read-only SQLite
 * connections to the embedded store's file or a replica's, which share one
 * schema (sqlite.c). Every query run against a journal is here, the
 * full-text side's MATCH queries included: no SQLite handle leaves
 * src/store/. */
#include "store/sqlite/journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/bm25.h"
#include "store/sqlite/db.h"
#include "util/array.h"
#include "util/clock.h"
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
    "SELECT max(coalesce((SELECT max(seq) FROM articles), 0),"                                     \
    " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'seq'), 0),"                   \
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

int store_sqlite_reader_open(struct store_reader **out, const char *path, struct err *err)
{
    return reader_open(out, path, true, err);
}

/* Asked of SQLite, which holds it to its compile-time SQLITE_MAX_MMAP_SIZE
 * (0x7fff0000 in Debian's build) and maps no more than the file. */
#define SCAN_MMAP_BYTES "1099511627776"

int store_sqlite_reader_open_scan(struct store_reader **out, const char *path, struct err *err)
{
    int rc = reader_open(out, path, true, err);
    if (rc == 0 &&
        (rc = store_sqlite_exec((*out)->db, "PRAGMA mmap_size=" SCAN_MMAP_BYTES, err)) < 0) {
        store_sqlite_reader_close(*out);
        *out = NULL;
    }
    return rc;
}

void store_sqlite_reader_close(struct store_reader *r)
{
    if (r == NULL)
        return;
    store_sqlite_conn_close(r->db);
    free(r);
}

int store_sqlite_reader_version(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_query_int(r->db, "PRAGMA data_version", out, err);
}

int store_sqlite_reader_begin(struct store_reader *r, struct err *err)
{
    return store_sqlite_exec(r->db, "BEGIN", err);
}

int store_sqlite_reader_end(struct store_reader *r, struct err *err)
{
    return store_sqlite_exec(r->db, "COMMIT", err);
}

int store_sqlite_reader_identity(struct store_reader *r, char out[STORE_IDENTITY_MAX],
                                 struct err *err)
{
    return store_sqlite_meta_text(r->db, "articles_epoch", out, STORE_IDENTITY_MAX, err);
}

int store_sqlite_reader_head(struct store_reader *r, int64_t *out, struct err *err)
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

int store_sqlite_reader_count(struct store_reader *r, int64_t *out, struct err *err)
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
        if (array_reserve(ids, &cap, *n, 1, sizeof **ids) < 0) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
            break;
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

int store_sqlite_reader_ids(struct store_reader *r, int64_t **ids, size_t *n, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *ids = NULL;
    *n = 0;
    if ((rc = store_sqlite_prepare(r->db, "SELECT id FROM articles ORDER BY id", &st, err)) < 0)
        return rc;
    return ids_collect(r, st, ids, n, NULL, err);
}

int store_sqlite_reader_deletions(struct store_reader *r, int64_t after, int64_t **ids, size_t *n,
                                  int64_t *last, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *ids = NULL;
    *n = 0;
    *last = after;
    if ((rc = store_sqlite_prepare_args(r->db,
                                        "SELECT id, seq FROM article_deletions WHERE seq > ?1"
                                        " ORDER BY seq",
                                        STORE_ARGS(STORE_INT(after)), &st, err)) < 0)
        return rc;
    return ids_collect(r, st, ids, n, last, err);
}

int store_sqlite_reader_sources(struct store_reader *r, store_source_fn fn, void *ctx,
                                struct err *err)
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

/* The first column of st's one row into *out (ERR_NOTFOUND, saying none,
 * when there is no row); st is finalized. */
static int step_one_i64(struct store_reader *r, sqlite3_stmt *st, int64_t *out, const char *none,
                        struct err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    } else if (rc == SQLITE_DONE) {
        rc = err_set(err, ERR_NOTFOUND, "%s", none);
    } else {
        rc = store_sqlite_fail(r->db, rc, err);
    }
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_reader_articles(struct store_reader *r, struct arena *a, const int64_t *ids,
                                 size_t n, struct article *arts, struct err *err)
{
    return store_sqlite_articles_by_id(r->db, a, ids, n, arts, err);
}

int store_sqlite_reader_articles_each(struct store_reader *r, const int64_t *ids, size_t n,
                                      store_article_fn fn, void *ctx, struct err *err)
{
    return store_sqlite_articles_each(r->db, ids, n, fn, ctx, err);
}

int store_sqlite_reader_newest_headline(struct store_reader *r, int64_t id_hi, int64_t *out,
                                        struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_args(
        r->db,
        "SELECT published_at FROM articles WHERE headline = 1 AND id <= ?1"
        " ORDER BY id DESC LIMIT 1",
        STORE_ARGS(STORE_INT(id_hi)), &st, err);
    if (rc < 0)
        return rc;
    return step_one_i64(r, st, out, "no headline articles", err);
}

/* --- the full-text side ------------------------------------------------------ */

/* SQLite virtual-machine steps between two looks at the clock: small enough
 * that a query overruns its budget by well under a millisecond, large
 * enough that clock_gettime costs nothing measurable. */
#define DEADLINE_CHECK_OPS 1000

/* A search's time budget, watched by SQLite's progress handler while one
 * statement runs. */
struct deadline {
    int64_t at_ms; /* clock_mono_ms(); 0: none */
    bool expired;
};

/* Non-zero interrupts the running statement (SQLITE_INTERRUPT). */
static int deadline_check(void *ctx)
{
    struct deadline *d = ctx;
    if (clock_mono_ms() >= d->at_ms)
        d->expired = true;
    return d->expired;
}

static void deadline_arm(struct store_reader *r, struct deadline *d)
{
    if (d->at_ms > 0)
        sqlite3_progress_handler(r->db, DEADLINE_CHECK_OPS, deadline_check, d);
}

/* The handler removed again (the connection goes back to a pool); rc, or
 * ERR_TIMEOUT when the budget is what stopped the statement. */
static int deadline_disarm(struct store_reader *r, struct deadline *d, int rc, struct err *err)
{
    if (d->at_ms > 0)
        sqlite3_progress_handler(r->db, 0, NULL, NULL);
    if (rc < 0 && d->expired)
        rc = err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    return rc;
}

#define MATCH_WHERE "articles_fts MATCH ?1 AND articles_fts.rowid BETWEEN ?2 AND ?3"

static const char *match_ids_sql(enum store_match_order order)
{
    switch (order) {
    case STORE_MATCH_OLDEST:
        return "SELECT rowid FROM articles_fts WHERE " MATCH_WHERE
               " ORDER BY rowid ASC LIMIT ?4 OFFSET ?5";
    case STORE_MATCH_RELEVANCE:
        /* bm25 is lower for better matches; title counts most, meta not at all. */
        return "SELECT rowid FROM articles_fts WHERE " MATCH_WHERE
               " ORDER BY bm25(articles_fts, 3.0, 1.5, 1.0, 0.0), rowid DESC"
               " LIMIT ?4 OFFSET ?5";
    case STORE_MATCH_POPULARITY:
        /* CROSS JOIN keeps FTS5 as the outer loop. Articles of sources
         * outside the catalogue rank below every catalogue source. */
        return "SELECT articles_fts.rowid FROM articles_fts"
               " CROSS JOIN articles ON articles.id = articles_fts.rowid"
               " LEFT JOIN sources ON sources.id = articles.source_id"
               " WHERE " MATCH_WHERE
               " ORDER BY coalesce(sources.popularity, -1) DESC, articles_fts.rowid DESC"
               " LIMIT ?4 OFFSET ?5";
    case STORE_MATCH_NEWEST:
    default:
        return "SELECT rowid FROM articles_fts WHERE " MATCH_WHERE
               " ORDER BY rowid DESC LIMIT ?4 OFFSET ?5";
    }
}

static int64_t clamp_i64(size_t v)
{
    return v > (size_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Reads the current row of a MATCH query: 0 goes on to the next row,
 * anything else stops the query and is what it returns. */
typedef int (*match_row_fn)(void *ctx, sqlite3_stmt *st);

/* Binds a MATCH query's own parameters, ?4 on. */
typedef void (*match_bind_fn)(void *ctx, sqlite3_stmt *st);

/* Run the MATCH query sql on r under m's deadline, m bound to ?1..?3 and
 * bind(bind_ctx, st) the rest, every row to row(ctx, st). 0 at the end, a
 * row's non-zero answer, or an ERR_* (ERR_TIMEOUT past the deadline). */
static int match_run(struct store_reader *r, const char *sql, const struct store_match *m,
                     match_bind_fn bind, void *bind_ctx, match_row_fn row, void *ctx,
                     struct err *err)
{
    struct deadline dl = {m->deadline_ms, false};
    sqlite3_stmt *st = NULL;
    int rc;

    deadline_arm(r, &dl);
    if ((rc = store_sqlite_prepare(r->db, sql, &st, err)) < 0)
        goto out;
    sqlite3_bind_text(st, 1, m->expr, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, m->id_lo);
    sqlite3_bind_int64(st, 3, m->id_hi);
    if (bind)
        bind(bind_ctx, st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = row(ctx, st)) != 0)
            goto out;
    }
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(r->db, rc, err);
out:
    sqlite3_finalize(st);
    return deadline_disarm(r, &dl, rc, err);
}

struct more_ints {
    const int64_t *v;
    int n;
};

static void bind_more(void *ctx, sqlite3_stmt *st)
{
    const struct more_ints *x = ctx;
    for (int i = 0; i < x->n; i++)
        sqlite3_bind_int64(st, 4 + i, x->v[i]);
}

/* match_run with more[0..n_more) bound to ?4... */
static int match_each(struct store_reader *r, const char *sql, const struct store_match *m,
                      const int64_t *more, int n_more, match_row_fn row, void *ctx, struct err *err)
{
    struct more_ints x = {more, n_more};
    return match_run(r, sql, m, bind_more, &x, row, ctx, err);
}

static int count_row(void *ctx, sqlite3_stmt *st)
{
    *(int64_t *)ctx = sqlite3_column_int64(st, 0);
    return 0;
}

int store_sqlite_reader_match_count(struct store_reader *r, const struct store_match *m,
                                    int64_t *out, struct err *err)
{
    *out = 0;
    return match_each(r, "SELECT count(*) FROM articles_fts WHERE " MATCH_WHERE, m, NULL, 0,
                      count_row, out, err);
}

struct ids_ctx {
    int64_t *ids;
    size_t n, max;
};

static int ids_row(void *ctx, sqlite3_stmt *st)
{
    struct ids_ctx *c = ctx;
    c->ids[c->n++] = sqlite3_column_int64(st, 0);
    return c->n == c->max; /* LIMIT ?4 ends it there too */
}

int store_sqlite_reader_match_ids(struct store_reader *r, const struct store_match *m,
                                  enum store_match_order order, size_t offset, size_t max,
                                  int64_t *ids, size_t *n, struct err *err)
{
    struct ids_ctx c = {ids, 0, max};
    const int64_t more[] = {clamp_i64(max), clamp_i64(offset)}; /* ?4 LIMIT, ?5 OFFSET */
    int rc = max == 0 ? 0 : match_each(r, match_ids_sql(order), m, more, 2, ids_row, &c, err);
    *n = c.n;
    return rc > 0 ? 0 : rc;
}

struct per_second_ctx {
    int (*each)(void *ctx, int64_t second, uint64_t n);
    void *ctx;
};

/* each's answers above 0 do not stop the count (only errors do). */
static int per_second_row(void *ctx, sqlite3_stmt *st)
{
    struct per_second_ctx *c = ctx;
    int rc = c->each(c->ctx, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1));
    return rc < 0 ? rc : 0;
}

/* A ranked page after a cursor's place: ?4 the bm25 context (relevance),
 * ?5 whether there is a place, ?6 its key, ?7 its id, ?8 the page size.
 * The key is bm25 negated (exact), so both orders run key-descending as
 * the engine's do. A subquery gives the key a name the place compares. */
static const char *match_ranked_sql(enum store_match_order order)
{
    if (order == STORE_MATCH_RELEVANCE)
        return "SELECT id, k FROM (SELECT articles_fts.rowid AS id,"
               " -" STORE_BM25_FUNCTION "(articles_fts, ?4) AS k"
               " FROM articles_fts WHERE " MATCH_WHERE ")"
               " WHERE ?5 = 0 OR k < ?6 OR (k = ?6 AND id < ?7)"
               " ORDER BY k DESC, id DESC LIMIT ?8";
    /* as match_ids_sql's popularity: FTS5 the outer loop */
    return "SELECT articles_fts.rowid, coalesce(sources.popularity, -1) AS k FROM articles_fts"
           " CROSS JOIN articles ON articles.id = articles_fts.rowid"
           " LEFT JOIN sources ON sources.id = articles.source_id"
           " WHERE " MATCH_WHERE " AND (?5 = 0 OR k < ?6 OR (k = ?6 AND articles_fts.rowid < ?7))"
           " ORDER BY k DESC, articles_fts.rowid DESC LIMIT ?8";
}

/* A ranked page's parameters and rows (store_sqlite_reader_match_ranked). */
struct ranked_ctx {
    const struct store_match_ranked *rk;
    struct store_bm25 *bm; /* NULL: popularity */
    int64_t *ids;
    double *keys;
    size_t n, max;
};

static void ranked_bind(void *ctx, sqlite3_stmt *st)
{
    const struct ranked_ctx *c = ctx;
    if (c->bm)
        sqlite3_bind_pointer(st, 4, c->bm, STORE_BM25_POINTER, NULL);
    sqlite3_bind_int(st, 5, c->rk->after);
    sqlite3_bind_double(st, 6, c->rk->key);
    sqlite3_bind_int64(st, 7, c->rk->id);
    sqlite3_bind_int64(st, 8, clamp_i64(c->max));
}

static int ranked_row(void *ctx, sqlite3_stmt *st)
{
    struct ranked_ctx *c = ctx;
    c->ids[c->n] = sqlite3_column_int64(st, 0);
    c->keys[c->n++] = sqlite3_column_double(st, 1);
    return c->n == c->max; /* LIMIT ?8 ends it there too */
}

int store_sqlite_reader_match_ranked(struct store_reader *r, const struct store_match *m,
                                     enum store_match_order order,
                                     const struct store_match_ranked *rk, size_t max, int64_t *ids,
                                     double *keys, size_t *n, struct store_match_stats *used,
                                     struct err *err)
{
    struct store_bm25 bm = {.frozen = rk->stats};
    struct ranked_ctx c = {rk, order == STORE_MATCH_RELEVANCE ? &bm : NULL, ids, keys, 0, max};
    int rc = 0;

    *n = 0;
    memset(used, 0, sizeof *used);
    if (order != STORE_MATCH_RELEVANCE && order != STORE_MATCH_POPULARITY)
        return err_set(err, ERR_INVALID, "a ranked page needs a ranked order");
    if (max > 0)
        rc = match_run(r, match_ranked_sql(order), m, ranked_bind, &c, ranked_row, &c, err);
    if (rc < 0 && bm.too_many)
        rc = err_set(err, ERR_TOO_LARGE, "a ranked page ranks at most %d phrases",
                     STORE_MATCH_PHRASES_MAX);
    else if (rc < 0 && bm.unfit)
        rc = err_set(err, ERR_INVALID, "the statistics given do not fit the expression");
    if (rc < 0)
        return rc;
    *n = c.n;
    *used = bm.used;
    return 0;
}

int store_sqlite_reader_match_per_second(struct store_reader *r, const struct store_match *m,
                                         int (*each)(void *ctx, int64_t second, uint64_t n),
                                         void *ctx, struct err *err)
{
    /* ids are publishedAt << STORE_ID_SHIFT | n: the second of a match is
     * its rowid shifted (SQLite's >> keeps the sign). */
    static const char sql[] = "SELECT rowid >> 20 AS t, count(*) FROM articles_fts"
                              " WHERE " MATCH_WHERE " GROUP BY t";
    _Static_assert(STORE_ID_SHIFT == 20, "the SQL above shifts by 20");
    struct per_second_ctx c = {each, ctx};
    return match_each(r, sql, m, NULL, 0, per_second_row, &c, err);
}

/* Each column's value, decoded from store/meta.h's spelling. */
static const char *const match_column_expr[STORE_MATCH_COLUMNS] = {
    [STORE_MATCH_SOURCE] = "a.source_id",
    [STORE_MATCH_DOMAIN] = "ltrim(lower(a.domain), '.')",
    [STORE_MATCH_LANGUAGE] =
        "CASE lower(a.language) WHEN 'se' THEN 'sv' ELSE lower(a.language) END",
    [STORE_MATCH_COUNTRY] = "lower(a.country)",
    [STORE_MATCH_CATEGORY] = "lower(a.category)",
    [STORE_MATCH_AUTHOR] = "a.author",
};

struct values_ctx {
    int (*each)(void *ctx, const char *value, size_t len, uint64_t n);
    void *ctx;
};

/* As per_second_row: only errors stop it. */
static int values_row(void *ctx, sqlite3_stmt *st)
{
    struct values_ctx *c = ctx;
    const char *v = (const char *)sqlite3_column_text(st, 0);
    int rc = v ? c->each(c->ctx, v, (size_t)sqlite3_column_bytes(st, 0),
                         (uint64_t)sqlite3_column_int64(st, 1))
               : 0;
    return rc < 0 ? rc : 0;
}

int store_sqlite_reader_match_values(
    struct store_reader *r, const struct store_match *m, enum store_match_column column,
    int (*each)(void *ctx, const char *value, size_t len, uint64_t n), void *ctx, struct err *err)
{
    char sql[512];

    if ((unsigned)column >= STORE_MATCH_COLUMNS)
        return err_set(err, ERR_INVALID, "no such column to count by");
    /* CROSS JOIN keeps FTS5 as the outer loop (the matches first). */
    snprintf(sql, sizeof sql,
             "SELECT v, count(*) FROM (SELECT %s AS v FROM articles_fts"
             " CROSS JOIN articles a ON a.id = articles_fts.rowid WHERE " MATCH_WHERE
             ") WHERE v <> '' GROUP BY v",
             match_column_expr[column]);
    struct values_ctx c = {each, ctx};
    return match_each(r, sql, m, NULL, 0, values_row, &c, err);
}

int store_sqlite_journal_fulltext_verify(const char *path, int64_t *rows, char *detail, size_t cap,
                                         struct err *err)
{
    struct store_reader *r = NULL;
    int rc;

    *rows = 0;
    if (cap > 0)
        detail[0] = '\0';
    /* The check is an INSERT command: a read-write connection. */
    if ((rc = reader_open(&r, path, false, err)) < 0)
        return rc;
    if ((rc = store_sqlite_reader_count(r, rows, err)) < 0)
        goto out;
    rc = sqlite3_exec(r->db, "INSERT INTO articles_fts(articles_fts) VALUES('integrity-check')",
                      NULL, NULL, NULL);
    if (rc == SQLITE_CORRUPT_VTAB || rc == SQLITE_CORRUPT) {
        if (cap > 0)
            snprintf(detail, cap, "FTS5 integrity-check: %s", sqlite3_errmsg(r->db));
        rc = 0;
    } else {
        rc = rc == SQLITE_OK ? 0 : store_sqlite_fail(r->db, rc, err);
    }
out:
    store_sqlite_reader_close(r);
    return rc;
}

int store_sqlite_journal_fulltext_ensure(const char *path, struct err *err)
{
    struct store_reader *r = NULL;
    bool on = false, story = false;
    int rc;

    if ((rc = reader_open(&r, path, true, err)) < 0)
        return rc;
    rc = store_sqlite_fulltext_get(r->db, &on, err);
    if (rc == 0 && on)
        rc = store_sqlite_story_index_get(r->db, &story, err);
    store_sqlite_reader_close(r);
    if (rc < 0 || (on && story))
        return rc;
    /* Building it is a write: only then a read-write connection. */
    if ((rc = reader_open(&r, path, false, err)) < 0)
        return rc;
    rc = store_sqlite_fulltext_set(r->db, true, err);
    store_sqlite_reader_close(r);
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

int store_sqlite_rows_after(struct store_rows **out, struct store_reader *r, int64_t after,
                            struct err *err)
{
    int rc =
        rows_new(out, r, "SELECT " ROW_COLUMNS " FROM articles WHERE seq > ?1 ORDER BY seq", err);
    if (rc == 0)
        sqlite3_bind_int64((*out)->st, 1, after);
    return rc;
}

int store_sqlite_rows_all(struct store_rows **out, struct store_reader *r, struct err *err)
{
    return rows_new(out, r, "SELECT " ROW_COLUMNS " FROM articles ORDER BY id", err);
}

int store_sqlite_rows_by_id(struct store_rows **out, struct store_reader *r, struct err *err)
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

int store_sqlite_rows_next(struct store_rows *c, struct store_row *row, struct err *err)
{
    return rows_step(c, row, err);
}

int store_sqlite_rows_get(struct store_rows *c, int64_t id, struct store_row *row, struct err *err)
{
    sqlite3_reset(c->st);
    sqlite3_bind_int64(c->st, 1, id);
    return rows_step(c, row, err);
}

void store_sqlite_rows_free(struct store_rows *c)
{
    if (c == NULL)
        return;
    sqlite3_finalize(c->st);
    free(c);
}

/* --- the pool ---------------------------------------------------------------- */

int store_sqlite_readers_new(struct store_readers **out, const char *path, struct err *err)
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

void store_sqlite_readers_free(struct store_readers *p)
{
    if (p == NULL)
        return;
    store_sqlite_pool_release(&p->pool);
    free(p);
}

int store_sqlite_readers_get(struct store_readers *p, struct store_reader **out, struct err *err)
{
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if ((rc = store_sqlite_pool_get(&p->pool, &db, err)) < 0)
        return rc;
    return reader_wrap(out, db, err);
}

void store_sqlite_readers_put(struct store_readers *p, struct store_reader *r)
{
    if (r == NULL)
        return;
    store_sqlite_pool_put(&p->pool, r->db); /* rolls back an open snapshot */
    free(r);
}

/* --- stories (issue 25) ---------------------------------------------------- */

/* The canonical URL is read only where story_id is NULL: the rest need
 * not copy it. */
#define STORY_COLUMNS "id, coalesce(story_id, 0), CASE WHEN story_id IS NULL THEN canonical_url END"

int store_sqlite_reader_stories(struct store_reader *r, int64_t lo, int64_t hi, store_story_fn fn,
                                void *ctx, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_args(r->db,
                                       "SELECT " STORY_COLUMNS " FROM articles"
                                       " WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
                                       STORE_ARGS(STORE_INT(lo), STORE_INT(hi)), &st, err);
    if (rc < 0)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int64_t story = store_story_resolve(sqlite3_column_int64(st, 1),
                                            (const char *)sqlite3_column_text(st, 2), id);
        int stop = fn(ctx, id, story);
        if (stop) {
            sqlite3_finalize(st);
            return stop;
        }
    }
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(r->db, rc, err);
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_reader_story_members(struct store_reader *r, struct arena *a, int64_t story,
                                      int64_t lo, int64_t hi, int64_t **ids, size_t *n,
                                      struct err *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    *ids = NULL;
    *n = 0;
    int rc = store_sqlite_prepare_args(
        r->db,
        "SELECT " STORY_COLUMNS " FROM articles"
        " WHERE (story_id = ?1 OR story_id IS NULL) AND id BETWEEN ?2 AND ?3"
        " ORDER BY id DESC",
        STORE_ARGS(STORE_INT(story), STORE_INT(lo), STORE_INT(hi)), &st, err);
    if (rc < 0)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (store_story_resolve(sqlite3_column_int64(st, 1),
                                (const char *)sqlite3_column_text(st, 2), id) != story)
            continue;
        if (*n == cap) {
            size_t grown = cap ? cap * 2 : 16;
            int64_t *more = arena_alloc(a, grown * sizeof *more);
            if (more == NULL) {
                sqlite3_finalize(st);
                return err_set(err, ERR_NOMEM, "out of memory for a story's articles");
            }
            if (*n)
                memcpy(more, *ids, *n * sizeof *more);
            *ids = more;
            cap = grown;
        }
        (*ids)[(*n)++] = id;
    }
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(r->db, rc, err);
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_reader_article_by_url(struct store_reader *r, const char *canonical_url,
                                       int64_t *id, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_args(r->db, "SELECT id FROM articles WHERE canonical_url = ?1",
                                       STORE_ARGS(STORE_TEXT(canonical_url)), &st, err);
    if (rc < 0)
        return rc;
    return step_one_i64(r, st, id, "no article has this address", err);
}

struct stories_ctx {
    store_story_fn fn;
    void *ctx;
};

/* fn's non-zero answer stops the walk and is returned. */
static int stories_row(void *ctx, sqlite3_stmt *st)
{
    struct stories_ctx *c = ctx;
    int64_t id = sqlite3_column_int64(st, 0);
    return c->fn(c->ctx, id,
                 store_story_resolve(sqlite3_column_int64(st, 1),
                                     (const char *)sqlite3_column_text(st, 2), id));
}

int store_sqlite_reader_match_stories(struct store_reader *r, const struct store_match *m,
                                      store_story_fn fn, void *ctx, struct err *err)
{
    static const char sql[] =
        "SELECT articles.id, coalesce(articles.story_id, 0),"
        " CASE WHEN articles.story_id IS NULL THEN articles.canonical_url END"
        " FROM articles_fts CROSS JOIN articles ON articles.id = articles_fts.rowid"
        " WHERE " MATCH_WHERE;
    struct stories_ctx c = {fn, ctx};
    return match_each(r, sql, m, NULL, 0, stories_row, &c, err);
}

/* FTS5's own statistics through an fts5vocab table of the connection's
 * temp schema (made once per connection; nothing is written to the file). */
static int vocab_ready(struct store_reader *r)
{
    return sqlite3_exec(r->db,
                        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.articles_fts_terms"
                        " USING fts5vocab(main, 'articles_fts', 'row')",
                        NULL, NULL, NULL);
}

int store_sqlite_reader_prefix_terms(struct store_reader *r, struct arena *a, const char *p,
                                     size_t len, size_t max, const char ***out, size_t *n,
                                     struct err *err)
{
    sqlite3_stmt *st = NULL;
    const char **v = arena_calloc(a, max ? max : 1, sizeof *v);
    int rc = vocab_ready(r);

    *out = v;
    *n = 0;
    if (v == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if (len > INT32_MAX)
        return 0;
    /* fts5vocab walks its terms in order from the lower bound: the prefix's
     * words are the run of them that start with it. */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(r->db,
                                "SELECT term FROM temp.articles_fts_terms WHERE term >= ?1"
                                " ORDER BY term",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, p, (int)len, SQLITE_STATIC);
    while (rc == SQLITE_OK && *n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        size_t tl = (size_t)sqlite3_column_bytes(st, 0);
        if (t == NULL || tl < len || memcmp(t, p, len) != 0) {
            rc = SQLITE_DONE;
            break;
        }
        if ((v[*n] = arena_strndup(a, t, tl)) == NULL) {
            sqlite3_finalize(st);
            return err_set(err, ERR_NOMEM, "out of memory");
        }
        (*n)++;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : store_sqlite_fail(r->db, rc, err);
}

int store_sqlite_reader_term_docs(struct store_reader *r, const char *const *terms,
                                  const size_t *lens, size_t n, uint64_t *df, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = vocab_ready(r);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(r->db, "SELECT doc FROM temp.articles_fts_terms WHERE term = ?1",
                                -1, &st, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        df[i] = 0;
        if (lens[i] > INT32_MAX)
            continue;
        sqlite3_bind_text(st, 1, terms[i], (int)lens[i], SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            df[i] = (uint64_t)sqlite3_column_int64(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? sqlite3_reset(st) : rc;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : store_sqlite_fail(r->db, rc, err);
}
