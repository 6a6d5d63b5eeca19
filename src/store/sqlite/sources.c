/* The source catalogue of the embedded store. */
#include "store/sqlite/internal.h"

#include <string.h>

#include "store/columns.h"

#include "util/banned.h"

int store_sqlite_bind_source(sqlite3_stmt *st, const struct source *x)
{
    return store_sqlite_bind(
        st, STORE_SQLITE_ARGS(STORE_SQLITE_TEXT(x->id), STORE_SQLITE_TEXT(x->name),
                              STORE_SQLITE_TEXT(x->description), STORE_SQLITE_TEXT(x->url),
                              STORE_SQLITE_TEXT(x->category), STORE_SQLITE_TEXT(x->language),
                              STORE_SQLITE_TEXT(x->country), STORE_SQLITE_INT(x->headlines ? 1 : 0),
                              STORE_SQLITE_DOUBLE(x->popularity)));
}

int store_sqlite_sources_put(struct store_backend *b, const struct source *src, size_t n,
                             struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO sources(" STORE_SOURCE_COLUMNS
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
        store_sqlite_bind_source(st, x);
        if ((rc = store_sqlite_step_done(s->writer, st, err)) < 0)
            goto end;
    }
end:
    sqlite3_finalize(st);
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

int store_sqlite_sources_ensure(struct store_backend *b, const char *const *ids,
                                const char *const *names, size_t n, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO sources(id, name, headlines) VALUES (?1, ?2, 0)"
                              " ON CONFLICT(id) DO NOTHING",
                              &st, err);
    if (rc < 0)
        goto end;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == NULL || ids[i][0] == '\0')
            continue;
        store_sqlite_bind(st, STORE_SQLITE_ARGS(STORE_SQLITE_TEXT(ids[i]),
                                                STORE_SQLITE_TEXT(names ? names[i] : NULL)));
        if ((rc = store_sqlite_step_done(s->writer, st, err)) < 0)
            goto end;
    }
end:
    sqlite3_finalize(st);
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

int store_sqlite_sources_list(struct store_backend *b, struct arena *a,
                              const struct source_filter *f, struct source **out, size_t *n_out,
                              struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    void *items = NULL;
    int rc = store_sqlite_read_all(
        &s->readers,
        "SELECT " STORE_SOURCE_COLUMNS " FROM sources"
        " WHERE (?1 IS NULL OR category = ?1 COLLATE NOCASE)"
        /* se is NewsAPI's other code for sv (API.md §2) */
        " AND (?2 IS NULL OR language = ?2 COLLATE NOCASE"
        "  OR (lower(?2) IN ('se','sv') AND lower(language) IN ('se','sv')))"
        " AND (?3 IS NULL OR country = ?3 COLLATE NOCASE)"
        " AND (?4 = 0 OR headlines = 1)"
        " ORDER BY id COLLATE BINARY",
        STORE_SQLITE_ARGS(STORE_SQLITE_TEXT(f->category), STORE_SQLITE_TEXT(f->language),
                          STORE_SQLITE_TEXT(f->country),
                          STORE_SQLITE_INT(f->headlines_only ? 1 : 0)),
        a, &store_source_record, &items, n_out, err);
    if (rc == 0)
        *out = items;
    return rc;
}

int store_sqlite_source_get(struct store_backend *b, struct arena *a, const char *id,
                            struct source *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_one(
        &s->readers, "SELECT " STORE_SOURCE_COLUMNS " FROM sources WHERE id = ?1",
        STORE_SQLITE_ARGS(STORE_SQLITE_TEXT(id)), a, &store_source_record, out, "no such source",
        err);
}
