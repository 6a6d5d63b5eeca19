/* The embedded store's side of stories (backend.h stories_window,
 * stories_scan, stories_fill): the recent articles a process's story
 * window starts from, and the stored articles a backfill replays, read
 * through the primary key (ids are time-ordered, so a time range is an id
 * range); the stories a backfill gives, written in place. */
#include "store/sqlite/internal.h"

#include "util/banned.h"

#define STORY_ROW_COLUMNS                                                                          \
    "id, canonical_url, title, description, content, published_at, coalesce(story_id, 0)"

/* Pass every row of st (STORY_ROW_COLUMNS) to fn; *last: the id of the
 * last one passed (left alone when none). */
static int story_rows(sqlite3 *db, sqlite3_stmt *st, int (*fn)(void *ctx, const struct article *a),
                      void *ctx, int64_t *last, struct err *err)
{
    int rc = 0;
    while (rc == 0) {
        int step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_sqlite_fail(db, step, err);
            break;
        }
        struct article a = {0};
        a.id = sqlite3_column_int64(st, 0);
        a.canonical_url = (const char *)sqlite3_column_text(st, 1);
        a.title = (const char *)sqlite3_column_text(st, 2);
        a.description = (const char *)sqlite3_column_text(st, 3);
        a.content = (const char *)sqlite3_column_text(st, 4);
        a.published_at = sqlite3_column_int64(st, 5);
        a.story_id = sqlite3_column_int64(st, 6);
        rc = fn(ctx, &a);
        if (last)
            *last = a.id;
    }
    return rc;
}

int store_sqlite_stories_window(struct store_backend *b, int64_t window_s,
                                int (*fn)(void *ctx, const struct article *a), void *ctx,
                                struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t newest_id = 0;
    int rc;

    if ((rc = store_sqlite_read_int(&s->readers, "SELECT coalesce(max(id), 0) FROM articles", NULL,
                                    0, &newest_id, err)) < 0)
        return rc;
    if (newest_id == 0)
        return 0;
    int64_t newest = store_id_time(newest_id);
    rc = store_sqlite_pool_prepare(
        &s->readers, "SELECT " STORY_ROW_COLUMNS " FROM articles WHERE id >= ?1 ORDER BY id",
        STORE_ARGS(STORE_INT(store_id_lo(newest - window_s))), &db, &st, err);
    if (rc == 0)
        rc = story_rows(db, st, fn, ctx, NULL, err);
    store_sqlite_pool_finish(&s->readers, db, st);
    return rc;
}

int store_sqlite_stories_scan(struct store_backend *b, int64_t after, size_t max,
                              int (*fn)(void *ctx, const struct article *a), void *ctx,
                              int64_t *last, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    *last = after;
    rc = store_sqlite_pool_prepare(
        &s->readers,
        "SELECT " STORY_ROW_COLUMNS " FROM articles WHERE id > ?1 ORDER BY id LIMIT ?2",
        STORE_ARGS(STORE_INT(after), STORE_INT((int64_t)max)), &db, &st, err);
    if (rc == 0)
        rc = story_rows(db, st, fn, ctx, last, err);
    store_sqlite_pool_finish(&s->readers, db, st);
    return rc;
}

int store_sqlite_stories_fill(struct store_backend *b, const int64_t *ids, const int64_t *stories,
                              size_t n, int64_t *set, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    *set = 0;
    if (n == 0)
        return 0;
    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    /* Only a row still without a story: a second run, or a row an import
     * gave one meanwhile, is left as it is. */
    rc = store_sqlite_prepare(
        s->writer, "UPDATE articles SET story_id = ?2 WHERE id = ?1 AND story_id IS NULL", &st,
        err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(st, 1, ids[i]);
        sqlite3_bind_int64(st, 2, stories[i]);
        if ((rc = store_sqlite_step_done(s->writer, st, err)) == 0)
            *set += sqlite3_changes(s->writer);
    }
    sqlite3_finalize(st);
    return store_sqlite_write_end(s, rc, err);
}
