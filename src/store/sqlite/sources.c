/* The source catalogue of the embedded store. */
#include "store/sqlite/internal.h"

#include <string.h>

#include "store/columns.h"

#include "util/banned.h"

int store_sqlite_bind_source(sqlite3_stmt *st, const struct source *x)
{
    return store_sqlite_bind(st, STORE_ARGS(STORE_TEXT(x->id), STORE_TEXT(x->name),
                                            STORE_TEXT(x->description), STORE_TEXT(x->url),
                                            STORE_TEXT(x->category), STORE_TEXT(x->language),
                                            STORE_TEXT(x->country), STORE_INT(x->headlines ? 1 : 0),
                                            STORE_DOUBLE(x->popularity)));
}

static int bind_put(sqlite3_stmt *st, size_t i, const void *ctx, struct err *err)
{
    const struct source *x = &((const struct source *)ctx)[i];
    if (x->id == NULL || x->id[0] == '\0')
        return err_set(err, ERR_INVALID, "source %zu has no id", i);
    store_sqlite_bind_source(st, x);
    return 0;
}

int store_sqlite_sources_put(struct store_backend *b, const struct source *src, size_t n,
                             struct err *err)
{
    return store_sqlite_write_each((struct store_sqlite *)b,
                                   "INSERT INTO sources(" STORE_SOURCE_COLUMNS
                                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                                   " ON CONFLICT(id) DO UPDATE SET name = excluded.name,"
                                   " description = excluded.description, url = excluded.url,"
                                   " category = excluded.category, language = excluded.language,"
                                   " country = excluded.country, headlines = excluded.headlines,"
                                   " popularity = excluded.popularity",
                                   n, bind_put, src, err);
}

struct ensure_ctx {
    const char *const *ids;
    const char *const *names;
};

static int bind_ensure(sqlite3_stmt *st, size_t i, const void *ctx, struct err *err)
{
    const struct ensure_ctx *e = ctx;
    (void)err;
    if (e->ids[i] == NULL || e->ids[i][0] == '\0')
        return 1;
    store_sqlite_bind(st,
                      STORE_ARGS(STORE_TEXT(e->ids[i]), STORE_TEXT(e->names ? e->names[i] : NULL)));
    return 0;
}

int store_sqlite_sources_ensure(struct store_backend *b, const char *const *ids,
                                const char *const *names, size_t n, struct err *err)
{
    struct ensure_ctx ctx = {ids, names};
    return store_sqlite_write_each((struct store_sqlite *)b,
                                   "INSERT INTO sources(id, name, headlines) VALUES (?1, ?2, 0)"
                                   " ON CONFLICT(id) DO NOTHING",
                                   n, bind_ensure, &ctx, err);
}

int store_sqlite_sources_list(struct store_backend *b, struct arena *a,
                              const struct source_filter *f, struct source **out, size_t *n_out,
                              struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_all(
        &s->readers,
        "SELECT " STORE_SOURCE_COLUMNS " FROM sources"
        " WHERE (?1 IS NULL OR category = ?1 COLLATE NOCASE)"
        /* se is NewsAPI's other code for sv (API.md §2) */
        " AND (?2 IS NULL OR language = ?2 COLLATE NOCASE"
        "  OR (lower(?2) IN ('se','sv') AND lower(language) IN ('se','sv')))"
        " AND (?3 IS NULL OR country = ?3 COLLATE NOCASE)"
        " AND (?4 = 0 OR headlines = 1)"
        " ORDER BY id COLLATE BINARY",
        STORE_ARGS(STORE_TEXT(f->category), STORE_TEXT(f->language), STORE_TEXT(f->country),
                   STORE_INT(f->headlines_only ? 1 : 0)),
        a, &store_source_record, out, n_out, err);
}

int store_sqlite_source_get(struct store_backend *b, struct arena *a, const char *id,
                            struct source *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    /* Kept: every request with sources= asks for each of them (validate.c),
     * and parsing the statement each time was 9 % of the server's time on
     * a mix where one request in five names three sources. */
    return store_sqlite_read_one(
        &s->readers, STORE_SQLITE_KEPT "SELECT " STORE_SOURCE_COLUMNS " FROM sources WHERE id = ?1",
        STORE_ARGS(STORE_TEXT(id)), a, &store_source_record, out, "no such source", err);
}
