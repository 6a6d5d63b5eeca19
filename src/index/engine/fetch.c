/* eng_fetch_articles() of internal.h: the page's rows from the articles
 * table by id (ENGINE.md: in embedded mode the table is the document
 * store), read the way index/fts5/fts5.c reads them so both backends give
 * byte-identical articles. */
#include "index/engine/internal.h"

#include <stdio.h>
#include <string.h>

#include "store/sqlite/db.h"
#include "util/banned.h"

#define FETCH_CHUNK 100 /* ids per "WHERE id IN (...)" */

#define ARTICLE_COLUMNS                                                                            \
    "id, seq, source_id, source_name, author, title, description, url, url_to_image,"              \
    " published_at, content, canonical_url, domain, language, country, category, headline,"        \
    " ingested_at"

/* The current row (ARTICLE_COLUMNS) into *out, strings in the arena. */
static int article_row(struct arena *a, sqlite3_stmt *st, struct article *out)
{
    const char *lang = NULL, *country = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    out->seq = sqlite3_column_int64(st, 1);
    const char **strs[] = {&out->source_id,   &out->source_name, &out->author,      &out->title,
                           &out->description, &out->url,         &out->url_to_image};
    for (int i = 0; i < 7 && rc == 0; i++)
        rc = store_sqlite_column_dup(a, st, 2 + i, strs[i]);
    out->published_at = sqlite3_column_int64(st, 9);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 10, &out->content);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 11, &out->canonical_url);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 12, &out->domain);
    lang = (const char *)sqlite3_column_text(st, 13);
    country = (const char *)sqlite3_column_text(st, 14);
    if (lang)
        snprintf(out->language, sizeof out->language, "%s", lang);
    if (country)
        snprintf(out->country, sizeof out->country, "%s", country);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 15, &out->category);
    out->headline = sqlite3_column_int(st, 16) != 0;
    out->ingested_at = sqlite3_column_int64(st, 17);
    return rc;
}

static int fetch_chunk(sqlite3 *db, struct arena *a, const int64_t *ids, size_t k,
                       struct article *arts, struct err *err)
{
    char sql[sizeof "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id IN ()" + FETCH_CHUNK * 2];
    sqlite3_stmt *st = NULL;
    size_t len =
        (size_t)snprintf(sql, sizeof sql, "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id IN (");
    int rc;

    /* Only placeholders are added: no value is ever part of the SQL. */
    for (size_t i = 0; i < k; i++) {
        if (i > 0)
            sql[len++] = ',';
        sql[len++] = '?';
    }
    sql[len++] = ')';
    sql[len] = '\0';
    if ((rc = store_sqlite_prepare(db, sql, &st, err)) < 0)
        return rc;
    for (size_t i = 0; i < k; i++)
        sqlite3_bind_int64(st, (int)i + 1, ids[i]);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        size_t j;
        for (j = 0; j < k && ids[j] != id; j++)
            ;
        if (j == k)
            continue;
        if ((rc = article_row(a, st, &arts[j])) < 0) {
            err_set(err, rc, "out of memory reading articles");
            break;
        }
    }
    if (rc == SQLITE_DONE)
        rc = 0;
    else if (rc > 0)
        rc = store_sqlite_fail(db, rc, err);
    sqlite3_finalize(st);
    return rc;
}

int eng_fetch_articles(struct index_engine *e, struct arena *a, const int64_t *ids, size_t n,
                       struct article *arts, size_t *kept, struct err *err)
{
    sqlite3 *db = NULL;
    int rc;

    *kept = 0;
    if (n == 0)
        return 0;
    if ((rc = store_sqlite_pool_get(e->readers, &db, err)) < 0)
        return rc;
    if ((rc = store_sqlite_exec(db, "BEGIN", err)) < 0)
        goto out;
    for (size_t base = 0; base < n && rc == 0; base += FETCH_CHUNK) {
        size_t k = n - base < FETCH_CHUNK ? n - base : FETCH_CHUNK;
        rc = fetch_chunk(db, a, ids + base, k, arts + base, err);
    }
    if (rc == 0)
        rc = store_sqlite_exec(db, "COMMIT", err);
    /* A row deleted since the snapshot (an upsert racing the search) is
     * dropped, as fts5.c drops a vanished row. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (arts[i].id == ids[i])
            arts[(*kept)++] = arts[i];
    }
out:
    store_sqlite_pool_put(e->readers, db);
    return rc;
}
