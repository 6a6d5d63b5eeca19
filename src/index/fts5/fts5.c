/* The FTS5 index (index/backend.h): searches articles_fts in the log's
 * SQLite file (store/log.h: the embedded store's file or a node's replica)
 * through read-only connections. One search is one read
 * transaction (count, page of ids, page rows) so the total and the page
 * agree even while an import commits. Newest-first and oldest-first read
 * FTS5 in rowid order, which is time order (ids are time-ordered), so they
 * sort nothing; a date window is a rowid range. */
#include "index/fts5/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "article/json.h"
#include "store/log.h"
#include "util/clock.h"
#include "util/banned.h"

/* SQLite virtual-machine steps between two looks at the clock: small enough
 * that a query overruns its budget by well under a millisecond, large
 * enough that clock_gettime costs nothing measurable. */
#define DEADLINE_CHECK_OPS 1000

struct index_fts5 {
    struct index_backend base; /* first: the vtable */
    struct store_readers *readers;
    char *path; /* the log's file */
};

#define FTS_WHERE "articles_fts MATCH ?1 AND articles_fts.rowid BETWEEN ?2 AND ?3"

static const char sql_count[] = "SELECT count(*) FROM articles_fts WHERE " FTS_WHERE;

static const char *page_sql(enum index_sort sort)
{
    switch (sort) {
    case INDEX_SORT_PUBLISHED_ASC:
        return "SELECT rowid FROM articles_fts WHERE " FTS_WHERE
               " ORDER BY rowid ASC LIMIT ?4 OFFSET ?5";
    case INDEX_SORT_RELEVANCY:
        /* bm25 is lower for better matches; title counts most, meta not at all. */
        return "SELECT rowid FROM articles_fts WHERE " FTS_WHERE
               " ORDER BY bm25(articles_fts, 3.0, 1.5, 1.0, 0.0), rowid DESC"
               " LIMIT ?4 OFFSET ?5";
    case INDEX_SORT_POPULARITY:
        /* CROSS JOIN keeps FTS5 as the outer loop. Articles of sources
         * outside the catalogue rank below every catalogue source. */
        return "SELECT articles_fts.rowid FROM articles_fts"
               " CROSS JOIN articles ON articles.id = articles_fts.rowid"
               " LEFT JOIN sources ON sources.id = articles.source_id"
               " WHERE " FTS_WHERE
               " ORDER BY coalesce(sources.popularity, -1) DESC, articles_fts.rowid DESC"
               " LIMIT ?4 OFFSET ?5";
    case INDEX_SORT_PUBLISHED_DESC:
    default:
        return "SELECT rowid FROM articles_fts WHERE " FTS_WHERE
               " ORDER BY rowid DESC LIMIT ?4 OFFSET ?5";
    }
}

static int prepare(struct store_reader *r, const char *sql, sqlite3_stmt **st, struct err *err)
{
    int rc = sqlite3_prepare_v2(store_reader_sqlite(r), sql, -1, st, NULL);
    if (rc == SQLITE_OK)
        return 0;
    *st = NULL;
    return store_reader_fail(r, rc, err);
}

static int64_t clamp_i64(size_t v)
{
    return v > (size_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Count, page of ids and their rows, on r inside one read transaction. */
/* The article's JSON (article/json.h) into the arena. */
static int render_doc(struct arena *a, const struct article *art, struct index_doc *out,
                      struct err *err)
{
    struct buf b;
    buf_init(&b, 0);
    article_json(&b, art);
    char *json = b.err ? NULL : arena_alloc(a, b.len ? b.len : 1);
    if (json)
        memcpy(json, b.data, b.len);
    out->id = art->id;
    out->json = json;
    out->len = b.len;
    buf_release(&b);
    return json ? 0 : err_set(err, ERR_NOMEM, "out of memory for a page of results");
}

static int search_run(struct store_reader *r, struct arena *a, const struct index_request *req,
                      const char *match, int64_t lo, int64_t hi, struct index_result *out,
                      struct err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t *ids = NULL;
    size_t want, n = 0;
    int rc;

    if ((rc = prepare(r, sql_count, &st, err)) < 0)
        goto out;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        rc = store_reader_fail(r, rc, err);
        goto out;
    }
    out->total = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;

    if (req->limit == 0 || out->total <= (uint64_t)req->offset) {
        rc = 0;
        goto out;
    }
    want = out->total - req->offset < req->limit ? (size_t)(out->total - req->offset) : req->limit;
    ids = arena_calloc(a, want, sizeof *ids);
    if (ids == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory for a page of results");
        goto out;
    }
    if ((rc = prepare(r, page_sql(req->sort), &st, err)) < 0)
        goto out;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    sqlite3_bind_int64(st, 4, clamp_i64(want));
    sqlite3_bind_int64(st, 5, clamp_i64(req->offset));
    while (n < want && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ids[n++] = sqlite3_column_int64(st, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rc = store_reader_fail(r, rc, err);
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;

    struct article *arts = arena_calloc(a, n ? n : 1, sizeof *arts);
    out->docs = arena_calloc(a, n ? n : 1, sizeof *out->docs);
    if (arts == NULL || out->docs == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory for a page of results");
        goto out;
    }
    if ((rc = store_reader_articles(r, a, ids, n, arts, err)) < 0)
        goto out;
    /* Each row as the API writes it; slots whose row vanished are dropped
     * (cannot happen within one snapshot). */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (arts[i].id != ids[i])
            continue;
        if ((rc = render_doc(a, &arts[i], &out->docs[kept++], err)) < 0)
            goto out;
    }
    out->n = kept;
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* A request's time budget, watched by SQLite's progress handler. */
struct deadline {
    int64_t at_ms; /* CLOCK_MONOTONIC */
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

static int fts5_search(struct index_backend *b, struct arena *a, const struct index_request *req,
                       struct index_result *out, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct buf match;
    struct store_reader *r = NULL;
    int64_t lo = store_id_lo(req->from), hi = index_request_id_hi(req);
    struct deadline dl = {req->deadline_ms, false};
    int rc;

    buf_init(&match, INDEX_FTS5_MATCH_MAX);
    memset(out, 0, sizeof *out);
    if ((rc = index_fts5_match_build(&match, a, req, err)) < 0)
        goto out;
    if (req->from > req->to || lo > hi)
        goto out; /* an empty window: nothing matches */
    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        goto out;
    /* The budget interrupts whichever statement is running when it ends;
     * the handler is removed again before the connection goes back. */
    if (dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), DEADLINE_CHECK_OPS, deadline_check, &dl);
    if ((rc = store_reader_begin(r, err)) < 0)
        goto out;
    rc = search_run(r, a, req, match.data, lo, hi, out, err);
    if (rc == 0)
        rc = store_reader_end(r, err);
out:
    if (r && dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), 0, NULL, NULL);
    if (rc < 0 && dl.expired)
        rc = err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    if (rc < 0) {
        out->n = 0;
        out->docs = NULL;
        out->total = 0;
    }
    store_readers_put(x->readers, r); /* rolls back an open transaction */
    buf_release(&match);
    return rc;
}

/* index_story_matches: every match's id and story in one statement,
 * resolved as store_story_resolve does for every reader. */
static const char sql_story_matches[] =
    "SELECT articles.id, coalesce(articles.story_id, 0),"
    " CASE WHEN articles.story_id IS NULL THEN articles.canonical_url END"
    " FROM articles_fts CROSS JOIN articles ON articles.id = articles_fts.rowid"
    " WHERE " FTS_WHERE;

static int story_matches_run(struct store_reader *r, const char *match, int64_t lo, int64_t hi,
                             struct index_story_match **m, size_t *n, size_t *cap,
                             struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(r, sql_story_matches, &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == *cap) {
            size_t grown = *cap ? *cap * 2 : 1024;
            struct index_story_match *more = realloc(*m, grown * sizeof *more);
            if (more == NULL) {
                sqlite3_finalize(st);
                return err_set(err, ERR_NOMEM, "out of memory for stories");
            }
            *m = more;
            *cap = grown;
        }
        int64_t id = sqlite3_column_int64(st, 0);
        (*m)[(*n)++] = (struct index_story_match){
            id, store_story_resolve(sqlite3_column_int64(st, 1),
                                    (const char *)sqlite3_column_text(st, 2), id)};
    }
    rc = rc == SQLITE_DONE ? 0 : store_reader_fail(r, rc, err);
    sqlite3_finalize(st);
    return rc;
}

static int fts5_story_matches(struct index_backend *b, struct arena *a,
                              const struct index_request *req, struct index_story_match **out,
                              size_t *n, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct buf match;
    struct store_reader *r = NULL;
    struct index_story_match *m = NULL;
    size_t cap = 0;
    int64_t lo = store_id_lo(req->from), hi = index_request_id_hi(req);
    struct deadline dl = {req->deadline_ms, false};
    int rc;

    *out = NULL;
    *n = 0;
    buf_init(&match, INDEX_FTS5_MATCH_MAX);
    if ((rc = index_fts5_match_build(&match, a, req, err)) < 0)
        goto out;
    if (req->from > req->to || lo > hi)
        goto out;
    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        goto out;
    if (dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), DEADLINE_CHECK_OPS, deadline_check, &dl);
    rc = story_matches_run(r, match.data, lo, hi, &m, n, &cap, err);
    if (rc == 0 && *n > 0) {
        if ((*out = arena_alloc(a, *n * sizeof **out)) == NULL)
            rc = err_set(err, ERR_NOMEM, "out of memory for stories");
        else
            memcpy(*out, m, *n * sizeof **out);
    }
out:
    if (r && dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), 0, NULL, NULL);
    if (rc < 0 && dl.expired)
        rc = err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    if (rc < 0) {
        *out = NULL;
        *n = 0;
    }
    store_readers_put(x->readers, r);
    buf_release(&match);
    free(m);
    return rc;
}

/* index_story_members: by the index on articles.story_id that the FTS5
 * mode keeps (store/log.h store_log_fulltext_ensure), not a scan. */
static int fts5_story_members(struct index_backend *b, struct arena *a, int64_t story, int64_t lo,
                              int64_t hi, int64_t deadline_ms, int64_t **out, size_t *n,
                              struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    struct deadline dl = {deadline_ms, false};
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        return rc;
    if (dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), DEADLINE_CHECK_OPS, deadline_check, &dl);
    rc = store_reader_story_members(r, a, story, lo, hi, out, n, err);
    if (dl.at_ms > 0)
        sqlite3_progress_handler(store_reader_sqlite(r), 0, NULL, NULL);
    if (rc < 0 && dl.expired)
        rc = err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    store_readers_put(x->readers, r);
    return rc;
}

/* index_term_docs: FTS5's own statistics through an fts5vocab table of
 * the connection's temp schema (made once per connection; nothing is
 * written to the file). */
static int fts5_term_docs(struct index_backend *b, const char *const *terms, const size_t *lens,
                          size_t n, uint64_t *df, uint64_t *ndocs, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    sqlite3_stmt *st = NULL;
    int64_t rows = 0;
    int rc;

    if ((rc = store_readers_get(x->readers, &r, err)) < 0)
        return rc;
    sqlite3 *db = store_reader_sqlite(r);
    rc = sqlite3_exec(db,
                      "CREATE VIRTUAL TABLE IF NOT EXISTS temp.articles_fts_terms"
                      " USING fts5vocab(main, 'articles_fts', 'row')",
                      NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT doc FROM temp.articles_fts_terms WHERE term = ?1", -1,
                                &st, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        df[i] = 0;
        sqlite3_bind_text(st, 1, terms[i], (int)lens[i], SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            df[i] = (uint64_t)sqlite3_column_int64(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? sqlite3_reset(st) : rc;
    }
    sqlite3_finalize(st);
    rc = rc == SQLITE_OK ? 0 : store_reader_fail(r, rc, err);
    /* The documents: the log's head, the articles ever stored, an upper
     * bound read from an index (a count(*) reads the whole table) */
    if (rc == 0 && (rc = store_reader_head(r, &rows, err)) == 0)
        *ndocs = rows > 0 ? (uint64_t)rows : 0;
    store_readers_put(x->readers, r);
    return rc;
}

static int fts5_newest_headline(struct index_backend *b, int64_t before, int64_t *out,
                                struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int rc;

    if ((rc = store_readers_get(x->readers, &r, err)) == 0)
        rc = store_reader_newest_headline(r, store_id_hi(before), out, err);
    store_readers_put(x->readers, r);
    return rc;
}

/* FTS5's own integrity check (every entry of articles_fts agrees with the
 * rows it was made from), and the row count. The check is an INSERT
 * command, so a read-write connection; it writes nothing. */
static int fts5_verify(struct index_backend *b, struct index_verify_report *out, struct err *err)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    struct store_reader *r = NULL;
    int64_t rows = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = store_reader_open_writable(&r, x->path, err)) < 0)
        return rc;
    if ((rc = store_reader_count(r, &rows, err)) < 0)
        goto out;
    out->rows = (uint64_t)rows;
    out->indexed = (uint64_t)rows;
    rc = sqlite3_exec(store_reader_sqlite(r),
                      "INSERT INTO articles_fts(articles_fts) VALUES('integrity-check')", NULL,
                      NULL, NULL);
    if (rc == SQLITE_CORRUPT_VTAB || rc == SQLITE_CORRUPT) {
        snprintf(out->detail, sizeof out->detail, "FTS5 integrity-check: %s",
                 sqlite3_errmsg(store_reader_sqlite(r)));
        out->extra = 1; /* FTS5 does not say which rows disagree */
        rc = 0;
    } else {
        rc = rc == SQLITE_OK ? 0 : store_reader_fail(r, rc, err);
    }
out:
    store_reader_close(r);
    return rc;
}

static void fts5_free(struct index_backend *b)
{
    struct index_fts5 *x = (struct index_fts5 *)b;
    if (x == NULL)
        return;
    store_readers_free(x->readers);
    free(x->path);
    free(x);
}

int index_fts5_new(struct index_backend **out, const char *db_path, struct err *err)
{
    struct index_fts5 *x = NULL;
    int rc;

    *out = NULL;
    x = calloc(1, sizeof *x);
    if (x == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    x->base = (struct index_backend){
        .kind = "fts5",
        .free = fts5_free,
        .search = fts5_search,
        .newest_headline = fts5_newest_headline,
        .story_matches = fts5_story_matches,
        .story_members = fts5_story_members,
        .term_docs = fts5_term_docs,
        .verify = fts5_verify,
    };
    if ((x->path = strdup(db_path)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_readers_new(&x->readers, db_path, err)) < 0)
        goto out;
    /* Fail now, not on the first search, when the file cannot be read; a
     * store kept for the engine index has no articles_fts: built once. */
    if ((rc = store_log_fulltext_ensure(db_path, err)) < 0)
        goto out;
    *out = &x->base;
    x = NULL;
out:
    fts5_free(x ? &x->base : NULL);
    return rc;
}
