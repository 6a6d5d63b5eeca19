/* The source catalogue of the PostgreSQL store. Writes go to the server.
 * Reads (every /v2/top-headlines/sources call, every sources= check) are
 * answered from a snapshot of the whole table held by this process: the
 * table is small, and a node must not ask the server on each request. The
 * snapshot is checked against sources_rev at most once per
 * STORE_PG_SOURCES_TTL_MS and reread when it moved, at once after a write
 * of this process; when the server cannot be reached, the last snapshot is
 * served (a node keeps answering while PostgreSQL restarts). */
#include "store/pg/internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/columns.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vocab.h"

#include "util/banned.h"

static const struct pg_sql sql_put = {
    PG_ST_SOURCES_PUT,
    "INSERT INTO sources(" STORE_SOURCE_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,"
    " url = EXCLUDED.url, category = EXCLUDED.category, language = EXCLUDED.language,"
    " country = EXCLUDED.country, headlines = EXCLUDED.headlines,"
    " popularity = EXCLUDED.popularity"};
static const struct pg_sql sql_ensure = {
    PG_ST_SOURCES_ENSURE, "INSERT INTO sources(id, name, headlines) VALUES ($1, $2, false)"
                          " ON CONFLICT (id) DO NOTHING"};
static const struct pg_sql sql_rev = {
    PG_ST_SOURCES_REV, "SELECT value::bigint FROM newsd_meta WHERE key = 'sources_rev'"};
static const struct pg_sql sql_all = {PG_ST_SOURCES_ALL,
                                      "SELECT " STORE_SOURCE_COLUMNS " FROM sources ORDER BY id"};

/* Run one statement per item in one transaction. */
static int write_each(struct store_pg *s, const struct pg_sql *q, size_t n,
                      int (*bind)(struct pg_params *p, size_t i, const void *ctx, struct err *err),
                      const void *ctx, struct err *err)
{
    struct pg_conn *c = NULL;
    struct pg_params p;
    int rc;

    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    if ((rc = store_pg_exec(c->c, "BEGIN", err)) < 0)
        goto out;
    for (size_t i = 0; i < n && rc == 0; i++) {
        store_pg_params_init(&p);
        rc = bind(&p, i, ctx, err);
        if (rc > 0) { /* nothing to write for this item */
            rc = 0;
            continue;
        }
        if (rc == 0)
            rc = store_pg_run(c, q, &p, NULL, err);
    }
    rc = store_pg_end(c, rc, err);
out:
    store_pg_pool_put(&s->pool, c);
    /* Whatever happened, the next read looks again. */
    pthread_mutex_lock(&s->sources_mu);
    s->sources.stale = true;
    pthread_mutex_unlock(&s->sources_mu);
    return rc;
}

static int bind_source(struct pg_params *p, size_t i, const void *ctx, struct err *err)
{
    const struct source *x = &((const struct source *)ctx)[i];
    if (x->id == NULL || x->id[0] == '\0')
        return err_set(err, ERR_INVALID, "source %zu has no id", i);
    store_pg_param_text(p, x->id);
    store_pg_param_text(p, x->name);
    store_pg_param_text(p, x->description);
    store_pg_param_text(p, x->url);
    store_pg_param_text(p, x->category);
    store_pg_param_text(p, x->language);
    store_pg_param_text(p, x->country);
    store_pg_param_bool(p, x->headlines);
    store_pg_param_double(p, x->popularity);
    return 0;
}

int store_pg_sources_put(struct store_backend *b, const struct source *src, size_t n,
                         struct err *err)
{
    return write_each((struct store_pg *)b, &sql_put, n, bind_source, src, err);
}

struct ensure_ctx {
    const char *const *ids;
    const char *const *names;
};

static int bind_ensure(struct pg_params *p, size_t i, const void *ctx, struct err *err)
{
    const struct ensure_ctx *e = ctx;
    (void)err;
    if (e->ids[i] == NULL || e->ids[i][0] == '\0')
        return 1;
    store_pg_param_text(p, e->ids[i]);
    store_pg_param_text(p, e->names ? e->names[i] : NULL);
    return 0;
}

int store_pg_sources_ensure(struct store_backend *b, const char *const *ids,
                            const char *const *names, size_t n, struct err *err)
{
    struct ensure_ctx ctx = {ids, names};
    return write_each((struct store_pg *)b, &sql_ensure, n, bind_ensure, &ctx, err);
}

/* --- the snapshot ------------------------------------------------------------- */

/* Read sources_rev and, when it differs from have_rev (or force), the whole
 * table into a new arena. */
static int snapshot_read(struct store_pg *s, int64_t have_rev, bool force,
                         struct pg_sources_snapshot *out, bool *changed, struct err *err)
{
    PGresult *r = NULL;
    int rc;

    *changed = false;
    if ((rc = store_pg_query_int(s, &sql_rev, NULL, &out->rev, err)) < 0)
        return rc;
    if (!force && out->rev == have_rev)
        return 0;
    if ((rc = store_pg_query(s, &sql_all, NULL, &r, err)) < 0)
        return rc;
    arena_init(&out->arena, 0);
    void *items = NULL;
    if ((rc = store_pg_rows(&out->arena, r, &store_source_record, &items, &out->n)) < 0)
        err_set(err, rc, "out of memory reading sources");
    else
        out->items = items;
    PQclear(r);
    if (rc < 0) {
        arena_release(&out->arena);
        return rc;
    }
    *changed = true;
    return 0;
}

/* Make the snapshot current enough; returns with sources_mu held and 0, or
 * unlocked with an error (no snapshot at all). */
static int snapshot_lock(struct store_pg *s, struct err *err)
{
    struct pg_sources_snapshot *snap = &s->sources;
    int rc = 0;

    pthread_mutex_lock(&s->sources_mu);
    int64_t now = clock_mono_ms();
    bool due = !snap->loaded || snap->stale || now - snap->checked_ms >= STORE_PG_SOURCES_TTL_MS;
    /* With a snapshot in hand, one thread rereads while the others use it. */
    if (!due || (snap->refreshing && snap->loaded))
        return 0;
    snap->refreshing = true;
    bool force = !snap->loaded || snap->stale;
    int64_t have = snap->rev;
    snap->stale = false;
    pthread_mutex_unlock(&s->sources_mu);

    struct pg_sources_snapshot fresh;
    bool changed = false;
    memset(&fresh, 0, sizeof fresh);
    rc = snapshot_read(s, have, force, &fresh, &changed, err);

    pthread_mutex_lock(&s->sources_mu);
    snap->refreshing = false;
    if (rc < 0) {
        if (!snap->loaded) {
            pthread_mutex_unlock(&s->sources_mu);
            return rc;
        }
        /* Keep serving what we have; look again after the TTL. */
        snap->checked_ms = now;
        if (force)
            snap->stale = true;
        log_warn("store: sources served from this node's copy: %s", err_msg(err, rc));
        return 0;
    }
    snap->checked_ms = now;
    if (changed) {
        arena_release(&snap->arena);
        snap->arena = fresh.arena;
        snap->items = fresh.items;
        snap->n = fresh.n;
        snap->rev = fresh.rev;
        snap->loaded = true;
    }
    return 0;
}

void store_pg_sources_release(struct store_pg *s)
{
    arena_release(&s->sources.arena);
    memset(&s->sources, 0, sizeof s->sources);
}

/* Copy a source into the caller's arena. */
static int source_copy(struct arena *a, const struct source *src, struct source *out)
{
    *out = *src;
    const char **strs[] = {&out->id,       &out->name,     &out->description, &out->url,
                           &out->category, &out->language, &out->country};
    for (int j = 0; j < 7; j++) {
        if (*strs[j] != NULL && (*strs[j] = arena_strdup(a, *strs[j])) == NULL)
            return ERR_NOMEM;
    }
    return 0;
}

/* NULL filter value: any; else equal ignoring ASCII case (NULL never is). */
static bool field_matches(const char *want, const char *have)
{
    return want == NULL || (have != NULL && strcasecmp(want, have) == 0);
}

/* A language filter: equal ignoring ASCII case, or the same code under the
 * language rule (se is NewsAPI's other code for sv, API.md §2). */
static bool language_matches(const char *want, const char *have)
{
    if (field_matches(want, have))
        return true;
    char w[3], h[3];
    return want != NULL && have != NULL && vocab_language_code(want, w) &&
           vocab_language_code(have, h) && strcmp(w, h) == 0;
}

int store_pg_sources_list(struct store_backend *b, struct arena *a, const struct source_filter *f,
                          struct source **out, size_t *n_out, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct source *items = NULL;
    size_t n = 0;
    int rc;

    if ((rc = snapshot_lock(s, err)) < 0)
        return rc;
    const struct pg_sources_snapshot *snap = &s->sources;
    items = arena_calloc(a, snap->n ? snap->n : 1, sizeof *items);
    if (items == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory listing sources");
        goto out;
    }
    for (size_t i = 0; i < snap->n; i++) {
        const struct source *x = &snap->items[i];
        if (!field_matches(f->category, x->category) ||
            !language_matches(f->language, x->language) || !field_matches(f->country, x->country) ||
            (f->headlines_only && !x->headlines))
            continue;
        if (source_copy(a, x, &items[n]) < 0) {
            rc = err_set(err, ERR_NOMEM, "out of memory listing sources");
            goto out;
        }
        n++;
    }
    *out = items;
    *n_out = n;
out:
    pthread_mutex_unlock(&s->sources_mu);
    return rc;
}

static int source_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct source *)elem)->id);
}

int store_pg_source_get(struct store_backend *b, struct arena *a, const char *id,
                        struct source *out, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    int rc;

    if ((rc = snapshot_lock(s, err)) < 0)
        return rc;
    const struct pg_sources_snapshot *snap = &s->sources;
    const struct source *x =
        snap->n ? bsearch(id, snap->items, snap->n, sizeof *snap->items, source_cmp) : NULL;
    if (x == NULL)
        rc = err_set(err, ERR_NOTFOUND, "no such source");
    else if (out != NULL && source_copy(a, x, out) < 0)
        rc = err_set(err, ERR_NOMEM, "out of memory reading a source");
    pthread_mutex_unlock(&s->sources_mu);
    return rc;
}
