/* Each article's story as a reader of the log reads it back (store/log.h
 * "stories"): the story_id column, an article stored before stories
 * resolved to the story it founds alone. Both search backends read
 * stories through here, so they agree on every id. */
#include "store/log.h"

#include <sqlite3.h>
#include <string.h>

#include "story/sketch.h"
#include "util/banned.h"

int64_t store_story_resolve(int64_t story_id, const char *canonical_url, int64_t id)
{
    if (story_id != 0)
        return story_id;
    /* (canonical_url is NOT NULL in the schema; the id keeps a damaged
     * row its own story all the same) */
    return canonical_url ? story_id_for_url(canonical_url) : id;
}

static int prepare(struct store_reader *r, const char *sql, sqlite3_stmt **st, struct err *err)
{
    int rc = sqlite3_prepare_v2(store_reader_sqlite(r), sql, -1, st, NULL);
    if (rc == SQLITE_OK)
        return 0;
    *st = NULL;
    return store_reader_fail(r, rc, err);
}

/* The canonical URL is read only where story_id is NULL: the rest need
 * not copy it. */
#define STORY_COLUMNS "id, coalesce(story_id, 0), CASE WHEN story_id IS NULL THEN canonical_url END"

int store_reader_stories(struct store_reader *r, int64_t lo, int64_t hi, store_story_fn fn,
                         void *ctx, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(r,
                     "SELECT " STORY_COLUMNS " FROM articles WHERE id BETWEEN ?1 AND ?2"
                     " ORDER BY id",
                     &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int64_t story = store_story_resolve(sqlite3_column_int64(st, 1),
                                            (const char *)sqlite3_column_text(st, 2), id);
        int stop = fn(ctx, id, story);
        if (stop) {
            sqlite3_finalize(st);
            return stop;
        }
    }
    rc = rc == SQLITE_DONE ? 0 : store_reader_fail(r, rc, err);
    sqlite3_finalize(st);
    return rc;
}

int store_reader_story_members(struct store_reader *r, struct arena *a, int64_t story, int64_t lo,
                               int64_t hi, int64_t **ids, size_t *n, struct err *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    *ids = NULL;
    *n = 0;
    int rc = prepare(r,
                     "SELECT " STORY_COLUMNS " FROM articles"
                     " WHERE (story_id = ?1 OR story_id IS NULL) AND id BETWEEN ?2 AND ?3"
                     " ORDER BY id DESC",
                     &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, story);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (store_story_resolve(sqlite3_column_int64(st, 1),
                                (const char *)sqlite3_column_text(st, 2), id) != story)
            continue;
        if (*n == cap) {
            size_t grown = cap ? cap * 2 : 16;
            int64_t *more = arena_alloc(a, grown * sizeof *more);
            if (more == NULL) {
                sqlite3_finalize(st);
                return err_set(err, ERR_NOMEM, "out of memory for a story's articles");
            }
            if (*n)
                memcpy(more, *ids, *n * sizeof *more);
            *ids = more;
            cap = grown;
        }
        (*ids)[(*n)++] = id;
    }
    rc = rc == SQLITE_DONE ? 0 : store_reader_fail(r, rc, err);
    sqlite3_finalize(st);
    return rc;
}

int store_reader_article_by_url(struct store_reader *r, const char *canonical_url, int64_t *id,
                                struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(r, "SELECT id FROM articles WHERE canonical_url = ?1", &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, canonical_url, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        rc = 0;
    } else if (rc == SQLITE_DONE) {
        rc = err_set(err, ERR_NOTFOUND, "no article has this address");
    } else {
        rc = store_reader_fail(r, rc, err);
    }
    sqlite3_finalize(st);
    return rc;
}
