/* Feeds of the PostgreSQL store (store.h "feeds"), shared by every node's
 * crawler. A claim is a lease: UPDATE ... SET next_fetch_at = until WHERE
 * still due, RETURNING the ids it took. Two nodes claiming the same feed
 * queue on its row lock; the second re-reads the row after the first
 * commits, finds it no longer due and does not take it, so one node polls a
 * feed at a time, and a node that dies mid-fetch only delays the feed to
 * the end of its lease. */
#include "store/pg/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/args.h"
#include "store/columns.h"
#include "util/urlview.h"

#include "util/banned.h"

static const struct pg_sql sql_add = {
    PG_ST_FEED_ADD, "INSERT INTO feeds(url, source_id, country, category, language, headline,"
                    " interval_s, enabled, created_at, next_fetch_at, pages)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id"};
static const struct pg_sql sql_list = {PG_ST_FEEDS_LIST,
                                       "SELECT " STORE_FEED_COLUMNS " FROM feeds ORDER BY id"};
static const struct pg_sql sql_get = {PG_ST_FEED_GET,
                                      "SELECT " STORE_FEED_COLUMNS " FROM feeds WHERE id = $1"};
static const struct pg_sql sql_remove = {PG_ST_FEED_REMOVE, "DELETE FROM feeds WHERE id = $1"};
static const struct pg_sql sql_due = {PG_ST_FEEDS_DUE,
                                      "SELECT " STORE_FEED_COLUMNS
                                      " FROM feeds WHERE enabled AND next_fetch_at <= $1"
                                      " ORDER BY next_fetch_at, id LIMIT $2"};
static const struct pg_sql sql_claim = {
    PG_ST_FEEDS_CLAIM, "UPDATE feeds SET next_fetch_at = $3 WHERE id = ANY($1::bigint[])"
                       " AND enabled AND next_fetch_at <= $2 RETURNING id"};
static const struct pg_sql sql_schedule = {PG_ST_FEED_SCHEDULE,
                                           "UPDATE feeds SET next_fetch_at = $2 WHERE id = $1"};
/* $-numbers: 1 id, 2 interval, 3 country, 4 category, 5 language,
 * 6 headline (-1 keeps), 7 enabled (-1 keeps), 8 now, 9 pages; as in the embedded
 * store (sqlite/feeds.c), every expression reads the row as it was. */
static const struct pg_sql sql_change = {
    PG_ST_FEED_CHANGE,
    "UPDATE feeds SET"
    " next_fetch_at = CASE WHEN $7::int = 1 AND NOT enabled THEN $8::bigint"
    "  WHEN $2::bigint > 0 AND $2::bigint < interval_s"
    "  THEN LEAST(next_fetch_at, GREATEST(last_fetch_at + $2::bigint, $8::bigint))"
    "  ELSE next_fetch_at END,"
    " interval_s = CASE WHEN $2::bigint > 0 THEN $2::bigint ELSE interval_s END,"
    " country = coalesce($3::text, country),"
    " category = CASE WHEN $4::text IS NULL THEN category WHEN $4::text = '' THEN NULL"
    "  ELSE $4::text END,"
    " language = coalesce($5::text, language),"
    " headline = CASE WHEN $6::int >= 0 THEN $6::int = 1 ELSE headline END,"
    " enabled = CASE WHEN $7::int >= 0 THEN $7::int = 1 ELSE enabled END,"
    " pages = CASE WHEN $9::text IS NULL THEN pages WHEN $9::text = '' THEN NULL"
    "  ELSE $9::text END"
    " WHERE id = $1"};
/* $-numbers: 1 id, 2 fetched_at, 3 status, 4 error, 5 new validators,
 * 6 etag, 7 last_modified, 8 title, 9 site_url, 10 items, 11 new_items,
 * 12 interval, 13 errors, 14 next. */
static const struct pg_sql sql_record = {
    PG_ST_FEED_RECORD,
    "UPDATE feeds SET last_fetch_at = $2, last_status = $3, last_error = $4::text,"
    " last_success_at = CASE WHEN $4::text IS NULL THEN $2 ELSE last_success_at END,"
    " etag = CASE WHEN $5::boolean THEN $6::text ELSE etag END,"
    " last_modified = CASE WHEN $5::boolean THEN $7::text ELSE last_modified END,"
    " title = coalesce($8, title), site_url = coalesce($9, site_url),"
    " items_last = CASE WHEN $10::bigint >= 0 THEN $10::bigint ELSE items_last END,"
    " items_total = items_total + $11::bigint,"
    " last_new_item_at = CASE WHEN $11::bigint > 0 THEN $2 ELSE last_new_item_at END,"
    " interval_s = $12, consecutive_errors = $13, next_fetch_at = $14"
    " WHERE id = $1"};
static const struct pg_sql sql_mark_put = {
    PG_ST_FEED_MARK_PUT,
    "INSERT INTO feed_items(feed_id, key, hash, published_at, last_seen_at)"
    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (feed_id, key) DO UPDATE SET hash = EXCLUDED.hash,"
    " published_at = EXCLUDED.published_at, last_seen_at = EXCLUDED.last_seen_at"};
static const struct pg_sql sql_marks_forget = {
    PG_ST_FEED_MARKS_FORGET, "DELETE FROM feed_items WHERE feed_id = $1 AND last_seen_at < $2"};
static const struct pg_sql sql_items_get = {PG_ST_FEED_ITEMS_GET,
                                            "SELECT key, hash, published_at FROM feed_items"
                                            " WHERE feed_id = $1 AND key = ANY($2::text[])"};

/* Run a read and collect its rows as feeds. */
static int feed_rows(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                     struct arena *a, struct feed_record **out, size_t *n_out, struct err *err)
{
    return store_pg_read_all(s, q, p, a, &store_feed_record, out, n_out, err);
}

int store_pg_feed_add(struct store_backend *b, const struct feed_record *f, int64_t *id_out,
                      struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    int64_t created = f->created_at ? f->created_at : (int64_t)time(NULL);
    int64_t interval = f->interval_s > 0 ? f->interval_s : STORE_FEED_DEFAULT_INTERVAL;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(
        &p, STORE_ARGS(STORE_TEXT(f->url),
                       STORE_TEXT(f->source_id && f->source_id[0] ? f->source_id : NULL),
                       STORE_CODE(f->country),
                       STORE_TEXT(f->category && f->category[0] ? f->category : NULL),
                       STORE_CODE(f->language), STORE_BOOL(f->headline), STORE_INT(interval),
                       STORE_BOOL(f->enabled), STORE_INT(created),
                       STORE_INT(f->next_fetch_at ? f->next_fetch_at : created),
                       STORE_TEXT(f->pages && f->pages[0] ? f->pages : NULL)));
    rc = store_pg_write(s, &sql_add, &p, NULL, &r, err);
    if (rc == ERR_EXISTS) {
        char shown[ERR_MSG_MAX];
        return err_set(err, ERR_EXISTS, "the feed %s is already registered",
                       urlview_redacted(f->url, URLVIEW_REDACT_ALL, shown, sizeof shown));
    }
    if (rc == 0 && id_out)
        *id_out = PQntuples(r) == 1 ? store_pg_get_int(r, 0, 0) : 0;
    PQclear(r);
    return rc;
}

int store_pg_feeds_list(struct store_backend *b, struct arena *a, struct feed_record **out,
                        size_t *n_out, struct err *err)
{
    return feed_rows((struct store_pg *)b, &sql_list, NULL, a, out, n_out, err);
}

int store_pg_feed_get(struct store_backend *b, struct arena *a, int64_t id, struct feed_record *out,
                      struct err *err)
{
    struct feed_record *rows = NULL;
    size_t n = 0;
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(id)));
    int rc = feed_rows((struct store_pg *)b, &sql_get, &p, a, &rows, &n, err);
    if (rc < 0)
        return rc;
    if (n == 0)
        return err_set(err, ERR_NOTFOUND, "no feed has the id %lld", (long long)id);
    *out = rows[0];
    return 0;
}

int store_pg_feed_remove(struct store_backend *b, int64_t id, struct err *err)
{
    /* feed_items go with it (ON DELETE CASCADE). */
    return store_pg_write_row(b, &sql_remove, STORE_ARGS(STORE_INT(id)), "feed", id, err);
}

int store_pg_feed_change(struct store_backend *b, int64_t id, const struct feed_change *c,
                         struct err *err)
{
    return store_pg_write_row(
        b, &sql_change,
        STORE_ARGS(STORE_INT(id), STORE_INT(c->interval_s), STORE_TEXT(c->country),
                   STORE_TEXT(c->category), STORE_TEXT(c->language), STORE_INT(c->headline),
                   STORE_INT(c->enabled), STORE_INT(c->now), STORE_TEXT(c->pages)),
        "feed", id, err);
}

int store_pg_feeds_due(struct store_backend *b, struct arena *a, int64_t now, size_t max,
                       struct feed_record **out, size_t *n_out, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(
        &p,
        STORE_ARGS(STORE_INT(now), STORE_INT(max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max)));
    return feed_rows((struct store_pg *)b, &sql_due, &p, a, out, n_out, err);
}

int store_pg_feeds_claim(struct store_backend *b, const int64_t *ids, size_t n, int64_t now,
                         int64_t until, bool *claimed, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    struct buf arr;
    PGresult *r = NULL;
    int rc;

    for (size_t i = 0; i < n; i++)
        claimed[i] = false;
    store_pg_array_begin(&arr);
    for (size_t i = 0; i < n; i++)
        store_pg_array_int(&arr, ids[i]);
    store_pg_params_init(&p);
    if ((rc = store_pg_param_array(&p, &arr, err)) < 0)
        goto out;
    store_pg_param_int(&p, now);
    store_pg_param_int(&p, until);
    if ((rc = store_pg_write(s, &sql_claim, &p, NULL, &r, err)) < 0)
        goto out;
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t id = store_pg_get_int(r, i, 0);
        for (size_t k = 0; k < n; k++) {
            if (ids[k] == id)
                claimed[k] = true;
        }
    }
out:
    PQclear(r);
    buf_release(&arr);
    return rc;
}

int store_pg_feed_schedule(struct store_backend *b, int64_t id, int64_t next_fetch_at,
                           struct err *err)
{
    return store_pg_write_row(b, &sql_schedule, STORE_ARGS(STORE_INT(id), STORE_INT(next_fetch_at)),
                              "feed", id, err);
}

/* The marks of o, and forgetting the stale ones; inside the caller's
 * transaction. */
static int marks_put(struct pg_conn *c, int64_t id, const struct feed_fetch_outcome *o,
                     struct err *err)
{
    struct pg_params p;
    int rc = 0;

    for (size_t i = 0; i < o->n_marks && rc == 0; i++) {
        const struct feed_item_mark *m = &o->marks[i];
        if (m->key == NULL)
            continue;
        store_pg_params_set(&p, STORE_ARGS(STORE_INT(id), STORE_TEXT(m->key), STORE_INT(m->hash),
                                           STORE_INT(m->published_at), STORE_INT(o->fetched_at)));
        rc = store_pg_run(c, &sql_mark_put, &p, NULL, err);
    }
    if (rc == 0 && o->forget_before > 0) {
        store_pg_params_set(&p, STORE_ARGS(STORE_INT(id), STORE_INT(o->forget_before)));
        rc = store_pg_run(c, &sql_marks_forget, &p, NULL, err);
    }
    return rc;
}

int store_pg_feed_fetch_record(struct store_backend *b, int64_t id,
                               const struct feed_fetch_outcome *o, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_conn *c = NULL;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(
        &p, STORE_ARGS(STORE_INT(id), STORE_INT(o->fetched_at), STORE_INT(o->status),
                       STORE_TEXT(o->error), STORE_BOOL(o->new_validators), STORE_TEXT(o->etag),
                       STORE_TEXT(o->last_modified), STORE_TEXT(o->title), STORE_TEXT(o->site_url),
                       STORE_INT(o->items), STORE_INT(o->new_items > 0 ? o->new_items : 0),
                       STORE_INT(o->interval_s), STORE_INT(o->consecutive_errors),
                       STORE_INT(o->next_fetch_at)));
    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    if ((rc = store_pg_exec(c->c, "BEGIN", err)) < 0)
        goto out;
    rc = store_pg_run(c, &sql_record, &p, &r, err);
    if (rc == 0 && store_pg_changed(r) == 0)
        rc = err_set(err, ERR_NOTFOUND, "no feed has the id %lld", (long long)id);
    PQclear(r);
    if (rc == 0)
        rc = marks_put(c, id, o, err);
    rc = store_pg_end(c, rc, err);
out:
    store_pg_pool_put(&s->pool, c);
    return rc;
}

int store_pg_feed_items_get(struct store_backend *b, int64_t id, struct feed_item_mark *marks,
                            size_t n, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    struct buf arr;
    PGresult *r = NULL;
    int rc;

    for (size_t i = 0; i < n; i++)
        marks[i].known = false;
    store_pg_array_begin(&arr);
    for (size_t i = 0; i < n; i++) {
        if (marks[i].key)
            store_pg_array_text(&arr, marks[i].key);
    }
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(id)));
    if ((rc = store_pg_param_array(&p, &arr, err)) < 0)
        goto out;
    if ((rc = store_pg_query(s, &sql_items_get, &p, &r, err)) < 0)
        goto out;
    /* A feed lists few items: match the answers back by a plain scan. */
    for (int j = 0; j < PQntuples(r); j++) {
        const char *key = PQgetvalue(r, j, 0);
        for (size_t i = 0; i < n; i++) {
            if (marks[i].key && !strcmp(marks[i].key, key)) {
                marks[i].known = true;
                marks[i].hash = store_pg_get_int(r, j, 1);
                marks[i].published_at = store_pg_get_int(r, j, 2);
            }
        }
    }
out:
    PQclear(r);
    buf_release(&arr);
    return rc;
}
