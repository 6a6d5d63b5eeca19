/* The embedded store's side of stories (backend.h stories_window): the
 * recent articles a process's story window starts from, read through the
 * primary key (ids are time-ordered, so a time range is an id range). */
#include "store/sqlite/internal.h"

#include "util/banned.h"

int store_sqlite_stories_window(struct store_backend *b, int64_t window_s,
                                int (*fn)(void *ctx, const struct article *a), void *ctx,
                                struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t newest_id = 0;
    int rc;

    if ((rc = store_sqlite_read_int(&s->readers, "SELECT coalesce(max(id), 0) FROM articles",
                                    NULL, 0, &newest_id, err)) < 0)
        return rc;
    if (newest_id == 0)
        return 0;
    int64_t newest = newest_id >> STORE_ID_SHIFT; /* floor, also for times before 1970 */
    rc = store_sqlite_pool_prepare(
        &s->readers,
        "SELECT canonical_url, title, description, content, published_at,"
        " coalesce(story_id, 0) FROM articles WHERE id >= ?1 ORDER BY id",
        STORE_ARGS(STORE_INT(store_id_lo(newest - window_s))), &db, &st, err);
    while (rc == 0) {
        int step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_sqlite_fail(db, step, err);
            break;
        }
        struct article a = {0};
        a.canonical_url = (const char *)sqlite3_column_text(st, 0);
        a.title = (const char *)sqlite3_column_text(st, 1);
        a.description = (const char *)sqlite3_column_text(st, 2);
        a.content = (const char *)sqlite3_column_text(st, 3);
        a.published_at = sqlite3_column_int64(st, 4);
        a.story_id = sqlite3_column_int64(st, 5);
        rc = fn(ctx, &a);
    }
    store_sqlite_pool_finish(&s->readers, db, st);
    return rc;
}
