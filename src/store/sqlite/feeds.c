/* Feeds of the embedded store (store.h "feeds"): the feeds table with each
 * feed's fetch state, the due/claim steps of the crawler, and feed_items,
 * the per-feed memory of items already stored (schema version 2, sqlite.c).
 * Writes take write_lock and one transaction; reads use the read pool. */
#include "store/sqlite/internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/columns.h"
#include "util/urlview.h"

#include "util/banned.h"

/* rc, or ERR_NOTFOUND naming feed id when a write changed no row. */
static int feed_found(int rc, int changes, int64_t id, struct err *err)
{
    if (rc == 0 && changes == 0)
        return err_set(err, ERR_NOTFOUND, "no feed has the id %lld", (long long)id);
    return rc;
}

/* Every feed sql selects (STORE_FEED_COLUMNS) with args, from the read pool. */
static int feed_rows(struct store_sqlite *s, struct arena *a, const char *sql,
                     const struct store_arg *args, size_t n, struct feed_record **out,
                     size_t *n_out, struct err *err)
{
    return store_sqlite_read_all(&s->readers, sql, args, n, a, &store_feed_record, out, n_out, err);
}

int store_sqlite_feed_add(struct store_backend *b, const struct feed_record *f, int64_t *id_out,
                          struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int64_t created = f->created_at ? f->created_at : (int64_t)time(NULL);
    int64_t interval = f->interval_s > 0 ? f->interval_s : STORE_FEED_DEFAULT_INTERVAL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    rc = store_sqlite_write(
        s->writer,
        "INSERT INTO feeds(url, source_id, country, category, language,"
        " headline, interval_s, enabled, created_at, next_fetch_at, pages)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        STORE_ARGS(
            STORE_TEXT(f->url), STORE_TEXT(f->source_id && f->source_id[0] ? f->source_id : NULL),
            STORE_CODE(f->country), STORE_TEXT(f->category && f->category[0] ? f->category : NULL),
            STORE_CODE(f->language), STORE_INT(f->headline ? 1 : 0), STORE_INT(interval),
            STORE_INT(f->enabled ? 1 : 0), STORE_INT(created),
            STORE_INT(f->next_fetch_at ? f->next_fetch_at : created),
            STORE_TEXT(f->pages && f->pages[0] ? f->pages : NULL)),
        NULL, err);
    if (rc == ERR_EXISTS) {
        char shown[ERR_MSG_MAX];
        rc = err_set(err, ERR_EXISTS, "the feed %s is already registered",
                     urlview_redacted(f->url, URLVIEW_REDACT_ALL, shown, sizeof shown));
    } else if (rc == 0 && id_out)
        *id_out = sqlite3_last_insert_rowid(s->writer);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_feeds_list(struct store_backend *b, struct arena *a, struct feed_record **out,
                            size_t *n_out, struct err *err)
{
    return feed_rows((struct store_sqlite *)b, a,
                     "SELECT " STORE_FEED_COLUMNS " FROM feeds ORDER BY id", NULL, 0, out, n_out,
                     err);
}

int store_sqlite_feed_get(struct store_backend *b, struct arena *a, int64_t id,
                          struct feed_record *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    char missing[64];
    snprintf(missing, sizeof missing, "no feed has the id %lld", (long long)id);
    return store_sqlite_read_one(
        &s->readers, "SELECT " STORE_FEED_COLUMNS " FROM feeds WHERE id = ?1",
        STORE_ARGS(STORE_INT(id)), a, &store_feed_record, out, missing, err);
}

int store_sqlite_feed_remove(struct store_backend *b, int64_t id, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int changes = 0;
    /* foreign_keys is on, but say it outright: the memory goes with the feed. */
    int rc = store_sqlite_write_begin_with(s, "DELETE FROM feed_items WHERE feed_id = ?1",
                                           STORE_ARGS(STORE_INT(id)), NULL, err);
    if (rc < 0)
        return rc;
    rc = store_sqlite_write(s->writer, "DELETE FROM feeds WHERE id = ?1", STORE_ARGS(STORE_INT(id)),
                            &changes, err);
    rc = feed_found(rc, changes, id, err);
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

int store_sqlite_feed_change(struct store_backend *b, int64_t id, const struct feed_change *c,
                             struct err *err)
{
    int changes = 0;
    int rc;

    /* ?-numbers: 1 id, 2 interval, 3 country, 4 category, 5 language,
     * 6 headline, 7 enabled, 8 now, 9 pages. Every expression reads the row as it
     * was: "enabled = 0" is the feed's state before this change. */
    rc = store_sqlite_write_locked(
        (struct store_sqlite *)b,
        "UPDATE feeds SET"
        " next_fetch_at = CASE WHEN ?7 = 1 AND enabled = 0 THEN ?8"
        "  WHEN ?2 > 0 AND ?2 < interval_s THEN min(next_fetch_at, max(last_fetch_at + ?2, ?8))"
        "  ELSE next_fetch_at END,"
        " interval_s = CASE WHEN ?2 > 0 THEN ?2 ELSE interval_s END,"
        " country = coalesce(?3, country),"
        " category = CASE WHEN ?4 IS NULL THEN category WHEN ?4 = '' THEN NULL ELSE ?4 END,"
        " language = coalesce(?5, language),"
        " headline = CASE WHEN ?6 >= 0 THEN ?6 ELSE headline END,"
        " enabled = CASE WHEN ?7 >= 0 THEN ?7 ELSE enabled END,"
        " pages = CASE WHEN ?9 IS NULL THEN pages WHEN ?9 = '' THEN NULL ELSE ?9 END"
        " WHERE id = ?1",
        STORE_ARGS(STORE_INT(id), STORE_INT(c->interval_s), STORE_TEXT(c->country),
                   STORE_TEXT(c->category), STORE_TEXT(c->language), STORE_INT(c->headline),
                   STORE_INT(c->enabled), STORE_INT(c->now), STORE_TEXT(c->pages)),
        &changes, err);
    return feed_found(rc, changes, id, err);
}

int store_sqlite_feeds_due(struct store_backend *b, struct arena *a, int64_t now, size_t max,
                           struct feed_record **out, size_t *n_out, struct err *err)
{
    /* feeds_due(enabled, next_fetch_at) answers this in index order. */
    return feed_rows(
        (struct store_sqlite *)b, a,
        "SELECT " STORE_FEED_COLUMNS " FROM feeds"
        " WHERE enabled = 1 AND next_fetch_at <= ?1"
        " ORDER BY next_fetch_at, id LIMIT ?2",
        STORE_ARGS(STORE_INT(now), STORE_INT(max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max)),
        out, n_out, err);
}

int store_sqlite_feeds_claim(struct store_backend *b, const int64_t *ids, size_t n, int64_t now,
                             int64_t until, bool *claimed, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    for (size_t i = 0; i < n; i++)
        claimed[i] = false;
    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    /* Compare and set: only a feed still due is taken. */
    rc = store_sqlite_prepare(s->writer,
                              "UPDATE feeds SET next_fetch_at = ?3"
                              " WHERE id = ?1 AND enabled = 1 AND next_fetch_at <= ?2",
                              &st, err);
    if (rc < 0)
        goto end;
    for (size_t i = 0; i < n; i++) {
        store_sqlite_bind(st, STORE_ARGS(STORE_INT(ids[i]), STORE_INT(now), STORE_INT(until)));
        if ((rc = store_sqlite_step_done(s->writer, st, err)) < 0)
            goto end;
        claimed[i] = sqlite3_changes(s->writer) > 0;
    }
end:
    sqlite3_finalize(st);
    rc = store_sqlite_write_end(s, rc, err);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            claimed[i] = false;
    }
    return rc;
}

int store_sqlite_feed_schedule(struct store_backend *b, int64_t id, int64_t next_fetch_at,
                               struct err *err)
{
    int changes = 0;
    int rc = store_sqlite_write_locked(
        (struct store_sqlite *)b, "UPDATE feeds SET next_fetch_at = ?2 WHERE id = ?1",
        STORE_ARGS(STORE_INT(id), STORE_INT(next_fetch_at)), &changes, err);
    return feed_found(rc, changes, id, err);
}

/* Remember the marks of o and forget the stale ones; inside the caller's
 * transaction. */
static int marks_put(struct store_sqlite *s, int64_t id, const struct feed_fetch_outcome *o,
                     struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO feed_items(feed_id, key, hash, published_at,"
                              " last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5)"
                              " ON CONFLICT(feed_id, key) DO UPDATE SET hash = excluded.hash,"
                              " published_at = excluded.published_at,"
                              " last_seen_at = excluded.last_seen_at",
                              &st, err);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < o->n_marks; i++) {
        const struct feed_item_mark *m = &o->marks[i];
        if (m->key == NULL)
            continue;
        store_sqlite_bind(st, STORE_ARGS(STORE_INT(id), STORE_TEXT(m->key), STORE_INT(m->hash),
                                         STORE_INT(m->published_at), STORE_INT(o->fetched_at)));
        if ((rc = store_sqlite_step_done(s->writer, st, err)) < 0)
            goto out;
    }
    if (o->forget_before > 0)
        rc = store_sqlite_write(s->writer,
                                "DELETE FROM feed_items WHERE feed_id = ?1 AND last_seen_at < ?2",
                                STORE_ARGS(STORE_INT(id), STORE_INT(o->forget_before)), NULL, err);
out:
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_feed_fetch_record(struct store_backend *b, int64_t id,
                                   const struct feed_fetch_outcome *o, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int changes = 0;
    /* ?-numbers: 1 id, 2 fetched_at, 3 status, 4 error, 5 new validators,
     * 6 etag, 7 last_modified, 8 title, 9 site_url, 10 items, 11 new_items,
     * 12 interval, 13 errors, 14 next. */
    int rc = store_sqlite_write_begin_with(
        s,
        "UPDATE feeds SET last_fetch_at = ?2, last_status = ?3, last_error = ?4,"
        " last_success_at = CASE WHEN ?4 IS NULL THEN ?2 ELSE last_success_at END,"
        " etag = CASE WHEN ?5 THEN ?6 ELSE etag END,"
        " last_modified = CASE WHEN ?5 THEN ?7 ELSE last_modified END,"
        " title = coalesce(?8, title), site_url = coalesce(?9, site_url),"
        " items_last = CASE WHEN ?10 >= 0 THEN ?10 ELSE items_last END,"
        " items_total = items_total + ?11,"
        " last_new_item_at = CASE WHEN ?11 > 0 THEN ?2 ELSE last_new_item_at END,"
        " interval_s = ?12, consecutive_errors = ?13, next_fetch_at = ?14"
        " WHERE id = ?1",
        STORE_ARGS(STORE_INT(id), STORE_INT(o->fetched_at), STORE_INT(o->status),
                   STORE_TEXT(o->error), STORE_INT(o->new_validators ? 1 : 0), STORE_TEXT(o->etag),
                   STORE_TEXT(o->last_modified), STORE_TEXT(o->title), STORE_TEXT(o->site_url),
                   STORE_INT(o->items), STORE_INT(o->new_items > 0 ? o->new_items : 0),
                   STORE_INT(o->interval_s), STORE_INT(o->consecutive_errors),
                   STORE_INT(o->next_fetch_at)),
        &changes, err);
    if (rc < 0)
        return rc;
    rc = feed_found(rc, changes, id, err);
    if (rc == 0)
        rc = marks_put(s, id, o, err);
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

int store_sqlite_feed_items_get(struct store_backend *b, int64_t id, struct feed_item_mark *marks,
                                size_t n, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    for (size_t i = 0; i < n; i++)
        marks[i].known = false;
    rc = store_sqlite_pool_prepare(&s->readers,
                                   "SELECT hash, published_at FROM feed_items"
                                   " WHERE feed_id = ?1 AND key = ?2",
                                   NULL, 0, &db, &st, err);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (marks[i].key == NULL)
            continue;
        store_sqlite_bind(st, STORE_ARGS(STORE_INT(id), STORE_TEXT(marks[i].key)));
        rc = store_sqlite_step_row(db, st, err);
        if (rc == 1) {
            marks[i].known = true;
            marks[i].hash = sqlite3_column_int64(st, 0);
            marks[i].published_at = sqlite3_column_int64(st, 1);
            rc = 0;
        }
        sqlite3_reset(st);
        if (rc < 0)
            goto out;
    }
out:
    store_sqlite_pool_finish(&s->readers, db, st);
    return rc;
}
