/* The source catalogue of the embedded store. */
#include "store/sqlite/internal.h"

#include <string.h>

#include "util/banned.h"

#define SOURCE_COLUMNS                                                                             \
    "id, name, description, url, category, language, country, headlines, popularity"

int store_sqlite_sources_put(struct store_backend *b, const struct source *src, size_t n,
                             struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    if ((rc = store_sqlite_begin(s, err)) < 0)
        goto unlock;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO sources(" SOURCE_COLUMNS
                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                              " ON CONFLICT(id) DO UPDATE SET name = excluded.name,"
                              " description = excluded.description, url = excluded.url,"
                              " category = excluded.category, language = excluded.language,"
                              " country = excluded.country, headlines = excluded.headlines,"
                              " popularity = excluded.popularity",
                              &st, err);
    if (rc < 0)
        goto end;
    for (size_t i = 0; i < n; i++) {
        const struct source *x = &src[i];
        if (x->id == NULL || x->id[0] == '\0') {
            rc = err_set(err, ERR_INVALID, "source %zu has no id", i);
            goto end;
        }
        store_sqlite_bind_text(st, 1, x->id);
        store_sqlite_bind_text(st, 2, x->name);
        store_sqlite_bind_text(st, 3, x->description);
        store_sqlite_bind_text(st, 4, x->url);
        store_sqlite_bind_text(st, 5, x->category);
        store_sqlite_bind_text(st, 6, x->language);
        store_sqlite_bind_text(st, 7, x->country);
        sqlite3_bind_int(st, 8, x->headlines ? 1 : 0);
        sqlite3_bind_double(st, 9, x->popularity);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            rc = store_sqlite_fail(s->writer, rc, err);
            goto end;
        }
        rc = 0;
    }
end:
    sqlite3_finalize(st);
    rc = store_sqlite_end(s, rc, err);
unlock:
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_sources_ensure(struct store_backend *b, const char *const *ids,
                                const char *const *names, size_t n, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    if ((rc = store_sqlite_begin(s, err)) < 0)
        goto unlock;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO sources(id, name, headlines) VALUES (?1, ?2, 0)"
                              " ON CONFLICT(id) DO NOTHING",
                              &st, err);
    if (rc < 0)
        goto end;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == NULL || ids[i][0] == '\0')
            continue;
        store_sqlite_bind_text(st, 1, ids[i]);
        store_sqlite_bind_text(st, 2, names ? names[i] : NULL);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            rc = store_sqlite_fail(s->writer, rc, err);
            goto end;
        }
        rc = 0;
    }
end:
    sqlite3_finalize(st);
    rc = store_sqlite_end(s, rc, err);
unlock:
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

/* The current row (SOURCE_COLUMNS) into *out, strings in the arena. */
static int source_row(struct arena *a, sqlite3_stmt *st, struct source *out)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 0, &out->id);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 1, &out->name);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 2, &out->description);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 3, &out->url);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 4, &out->category);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 5, &out->language);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 6, &out->country);
    out->headlines = sqlite3_column_int(st, 7) != 0;
    out->popularity = sqlite3_column_double(st, 8);
    return rc;
}

static int source_row_any(struct arena *a, sqlite3_stmt *st, void *out)
{
    return source_row(a, st, out);
}

int store_sqlite_sources_list(struct store_backend *b, struct arena *a,
                              const struct source_filter *f, struct source **out, size_t *n_out,
                              struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    void *items = NULL;
    int rc;

    if ((rc = store_sqlite_pool_get(&s->readers, &db, err)) < 0)
        goto out;
    rc = store_sqlite_prepare(db,
                              "SELECT " SOURCE_COLUMNS " FROM sources"
                              " WHERE (?1 IS NULL OR category = ?1 COLLATE NOCASE)"
                              /* se is NewsAPI's other code for sv (API.md §2) */
                              " AND (?2 IS NULL OR language = ?2 COLLATE NOCASE"
                              "  OR (lower(?2) IN ('se','sv') AND lower(language) IN ('se','sv')))"
                              " AND (?3 IS NULL OR country = ?3 COLLATE NOCASE)"
                              " AND (?4 = 0 OR headlines = 1)"
                              " ORDER BY id COLLATE BINARY",
                              &st, err);
    if (rc < 0)
        goto out;
    store_sqlite_bind_text(st, 1, f->category);
    store_sqlite_bind_text(st, 2, f->language);
    store_sqlite_bind_text(st, 3, f->country);
    sqlite3_bind_int(st, 4, f->headlines_only ? 1 : 0);
    if ((rc = store_sqlite_collect(db, st, a, sizeof **out, source_row_any, &items, n_out,
                                   "sources", err)) == 0)
        *out = items;
out:
    sqlite3_finalize(st);
    store_sqlite_pool_put(&s->readers, db);
    return rc;
}

int store_sqlite_source_get(struct store_backend *b, struct arena *a, const char *id,
                            struct source *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_pool_get(&s->readers, &db, err)) < 0)
        goto out;
    rc = store_sqlite_prepare(db, "SELECT " SOURCE_COLUMNS " FROM sources WHERE id = ?1", &st, err);
    if (rc < 0)
        goto out;
    store_sqlite_bind_text(st, 1, id);
    rc = store_sqlite_one(db, st, a, source_row_any, out, "no such source", err);
out:
    sqlite3_finalize(st);
    store_sqlite_pool_put(&s->readers, db);
    return rc;
}
