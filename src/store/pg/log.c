/* The article log of the PostgreSQL store (pg.h), read by a node's index
 * follower on a connection of its own that LISTENs for newsd_articles and
 * newsd_sources. Changes after a sequence number are the rows of articles
 * and of article_tombstones above it, merged in seq order (one statement:
 * one snapshot, and an index range scan on each side). */
#include "store/pg/internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/args.h"
#include "store/columns.h"
#include "util/banned.h"

struct store_pg_log {
    struct pg_conn conn;
};

static const struct pg_sql sql_origin = {PG_ST_LOG_ORIGIN,
                                         "SELECT value FROM newsd_meta WHERE key = 'origin'"};
static const struct pg_sql sql_head = {PG_ST_LOG_HEAD,
                                       "SELECT greatest((SELECT max(seq) FROM articles),"
                                       " (SELECT max(seq) FROM article_tombstones), 0)"};
static const struct pg_sql sql_read = {
    PG_ST_LOG_READ,
    "(SELECT false AS deleted, " STORE_PG_ARTICLE_COLUMNS " FROM articles WHERE seq > $1"
    " ORDER BY seq LIMIT $2)"
    " UNION ALL"
    " (SELECT true, id, seq, NULL, canonical_url, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL,"
    " NULL, '', '', NULL, false, 0, NULL FROM article_tombstones WHERE seq > $1 ORDER BY seq LIMIT "
    "$2)"
    " ORDER BY seq LIMIT $2"};
static const struct pg_sql sql_rev = {
    PG_ST_SOURCES_REV, "SELECT value::bigint FROM newsd_meta WHERE key = 'sources_rev'"};
static const struct pg_sql sql_sources = {PG_ST_SOURCES_ALL, "SELECT " STORE_SOURCE_COLUMNS
                                                             " FROM sources ORDER BY id"};

int store_pg_log_open(struct store_pg_log **out, const char *uri, struct err *err)
{
    struct store_pg_log *l;
    int rc;

    *out = NULL;
    l = calloc(1, sizeof *l);
    if (l == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_pg_connect(&l->conn.c, uri, err)) < 0)
        goto out;
    if ((rc = store_pg_exec(l->conn.c, "LISTEN newsd_articles", err)) < 0 ||
        (rc = store_pg_exec(l->conn.c, "LISTEN newsd_sources", err)) < 0)
        goto out;
    *out = l;
    l = NULL;
out:
    store_pg_log_close(l);
    return rc;
}

void store_pg_log_close(struct store_pg_log *l)
{
    if (l == NULL)
        return;
    PQfinish(l->conn.c);
    free(l);
}

int store_pg_log_origin(struct store_pg_log *l, char out[STORE_PG_ORIGIN_MAX], struct err *err)
{
    PGresult *r = NULL;
    int rc;

    out[0] = '\0';
    if ((rc = store_pg_run(&l->conn, &sql_origin, NULL, &r, err)) < 0)
        return rc;
    if (PQntuples(r) == 1)
        snprintf(out, STORE_PG_ORIGIN_MAX, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    if (out[0] == '\0')
        return err_set(err, ERR_STORE, "postgresql: the database has no newsd origin");
    return 0;
}

int store_pg_log_head(struct store_pg_log *l, int64_t *out, struct err *err)
{
    return store_pg_run_int(&l->conn, &sql_head, NULL, out, err);
}

int store_pg_log_row(struct arena *a, const PGresult *r, int i, struct article *out, bool *deleted)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    *deleted = store_pg_get_bool(r, i, 0);
    out->id = store_pg_get_int(r, i, 1);
    out->seq = store_pg_get_int(r, i, 2);
    const struct {
        int col;
        const char **dst;
    } strs[] = {
        {3, &out->url},         {4, &out->canonical_url}, {5, &out->source_id},
        {6, &out->source_name}, {7, &out->author},        {8, &out->title},
        {9, &out->description}, {10, &out->url_to_image}, {12, &out->content},
        {13, &out->domain},     {16, &out->category},
    };
    for (size_t k = 0; k < sizeof strs / sizeof strs[0] && rc == 0; k++)
        rc = store_pg_get_str(a, r, i, strs[k].col, strs[k].dst);
    out->published_at = store_pg_get_int(r, i, 11);
    store_pg_get_code(r, i, 14, out->language);
    store_pg_get_code(r, i, 15, out->country);
    out->headline = store_pg_get_bool(r, i, 17);
    out->ingested_at = store_pg_get_int(r, i, 18);
    out->story_id = store_pg_get_int(r, i, 19); /* NULL (stored before stories): 0 */
    return rc;
}

int store_pg_log_read(struct store_pg_log *l, struct arena *a, int64_t after, size_t max,
                      struct article **arts_out, bool **deleted_out, size_t *n_out, struct err *err)
{
    struct pg_params p;
    PGresult *r = NULL;
    struct article *arts = NULL;
    bool *deleted = NULL;
    int rc;

    *arts_out = NULL;
    *deleted_out = NULL;
    *n_out = 0;
    store_pg_params_set(&p,
                        STORE_ARGS(STORE_INT(after),
                                   STORE_INT(max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max)));
    if ((rc = store_pg_run(&l->conn, &sql_read, &p, &r, err)) < 0)
        return rc;
    size_t n = (size_t)PQntuples(r);
    arts = arena_calloc(a, n ? n : 1, sizeof *arts);
    deleted = arena_calloc(a, n ? n : 1, sizeof *deleted);
    if (arts == NULL || deleted == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory reading the article log");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (store_pg_log_row(a, r, (int)i, &arts[i], &deleted[i]) < 0) {
            rc = err_set(err, ERR_NOMEM, "out of memory reading the article log");
            goto out;
        }
    }
    *arts_out = arts;
    *deleted_out = deleted;
    *n_out = n;
out:
    PQclear(r);
    return rc;
}

int store_pg_log_sources_rev(struct store_pg_log *l, int64_t *out, struct err *err)
{
    return store_pg_run_int(&l->conn, &sql_rev, NULL, out, err);
}

int store_pg_log_sources(struct store_pg_log *l, struct arena *a, struct source **out,
                         size_t *n_out, struct err *err)
{
    PGresult *r = NULL;
    void *items = NULL;
    int rc;

    *out = NULL;
    *n_out = 0;
    if ((rc = store_pg_run(&l->conn, &sql_sources, NULL, &r, err)) < 0)
        return rc;
    if ((rc = store_pg_rows(a, r, &store_source_record, &items, n_out)) < 0)
        err_set(err, rc, "out of memory reading sources");
    else
        *out = items;
    PQclear(r);
    return rc;
}

/* Take every queued notification; note which channels spoke. */
static void drain(PGconn *c, bool *articles, bool *sources)
{
    PGnotify *nf;
    while ((nf = PQnotifies(c)) != NULL) {
        if (!strcmp(nf->relname, "newsd_articles"))
            *articles = true;
        else if (!strcmp(nf->relname, "newsd_sources"))
            *sources = true;
        PQfreemem(nf);
    }
}

int store_pg_log_wait(struct store_pg_log *l, int timeout_ms, bool *articles, bool *sources,
                      struct err *err)
{
    PGconn *c = l->conn.c;
    *articles = false;
    *sources = false;

    /* Notifications may have arrived with the last query's result. */
    if (PQconsumeInput(c) == 0)
        return store_pg_fail(c, NULL, err);
    drain(c, articles, sources);
    if (*articles || *sources)
        return 0;
    int fd = PQsocket(c);
    if (fd < 0)
        return store_pg_fail(c, NULL, err);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = poll(&pfd, 1, timeout_ms);
    if (n < 0 && errno != EINTR)
        return err_set(err, ERR_IO, "poll: %s", strerror(errno));
    if (n > 0) {
        if (PQconsumeInput(c) == 0)
            return store_pg_fail(c, NULL, err);
        drain(c, articles, sources);
    }
    return 0;
}
