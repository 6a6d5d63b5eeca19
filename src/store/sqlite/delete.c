/* Deleting articles from the embedded store, and giving the space back
 * (store.h store_articles_delete, store_space_release, store_compact).
 *
 * A batch is one write transaction: the ids of up to max matching
 * articles, oldest first, are read and each row is deleted (the FTS5
 * trigger takes its full-text entry with it) and recorded in
 * article_deletions under the next ingest sequence number (meta 'seq'), so
 * a search index following the file learns what left the table by
 * sequence (store/journal.h store_reader_deletions) instead of comparing every
 * id. The records are pruned after STORE_SQLITE_DELETIONS_KEEP_S: an index
 * that was stopped for longer finds the row count changed and compares
 * ids once. */
#include "store/sqlite/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/banned.h"

/* The ids to delete: by canonical URL through its unique index; else in
 * id (= publication) order from the oldest, up to a bound. Only
 * placeholders: no value is part of the SQL. */
static const char sql_ids_by_url[] = "SELECT id FROM articles WHERE canonical_url = ?3"
                                     " AND id <= ?1 AND (?2 IS NULL OR source_id = ?2) LIMIT ?4";
static const char sql_ids_oldest[] = "SELECT id FROM articles WHERE id <= ?1"
                                     " AND (?2 IS NULL OR source_id = ?2) ORDER BY id LIMIT ?4";

/* Up to max ids of f's articles, oldest first, into ids; *n. */
static int ids_select(sqlite3 *db, const struct store_delete_filter *f, size_t max, int64_t *ids,
                      size_t *n, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t hi;
    int rc;

    *n = 0;
    if (!store_delete_max_id(f, &hi))
        return 0;
    rc = store_sqlite_prepare(db, f->canonical_url ? sql_ids_by_url : sql_ids_oldest, &st, err);
    if (rc < 0)
        return rc;
    rc = store_sqlite_bind(st, STORE_ARGS(STORE_INT(hi), STORE_TEXT(f->source_id),
                                          STORE_TEXT(f->canonical_url), STORE_INT((int64_t)max)));
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        goto out;
    }
    while (*n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ids[(*n)++] = sqlite3_column_int64(st, 0);
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE || *n == max ? 0 : store_sqlite_fail(db, rc, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Delete ids[0..n) and record each under the next seq; prune old records. */
static int ids_delete(sqlite3 *db, const int64_t *ids, size_t n, int64_t now, struct err *err)
{
    sqlite3_stmt *del = NULL, *rec = NULL;
    int64_t seq = 0;
    int rc;

    if ((rc = store_sqlite_query_int(db, "SELECT value FROM meta WHERE key = 'seq'", &seq, err)) <
            0 ||
        (rc = store_sqlite_prepare(db, "DELETE FROM articles WHERE id = ?1", &del, err)) < 0 ||
        (rc = store_sqlite_prepare(db,
                                   "INSERT INTO article_deletions(seq, id, deleted_at)"
                                   " VALUES (?1, ?2, ?3)",
                                   &rec, err)) < 0)
        goto out;
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(del, 1, ids[i]);
        if ((rc = store_sqlite_step_done(db, del, err)) < 0)
            break;
        seq++;
        store_sqlite_bind(rec, STORE_ARGS(STORE_INT(seq), STORE_INT(ids[i]), STORE_INT(now)));
        rc = store_sqlite_step_done(db, rec, err);
    }
    if (rc == 0)
        rc = store_sqlite_write(db,
                                "INSERT INTO meta(key, value) VALUES ('seq', ?1)"
                                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                STORE_ARGS(STORE_INT(seq)), NULL, err);
    if (rc == 0)
        rc = store_sqlite_deletions_prune(db, (int64_t)n, now, err);
out:
    sqlite3_finalize(del);
    sqlite3_finalize(rec);
    return rc;
}

int store_sqlite_deletions_prune(sqlite3 *db, int64_t n, int64_t now, struct err *err)
{
    /* The oldest records past their time, as many as were just added:
     * pruning keeps pace without scanning the table. */
    return store_sqlite_write(
        db,
        "DELETE FROM article_deletions WHERE seq IN (SELECT seq FROM article_deletions"
        " ORDER BY seq LIMIT ?1) AND deleted_at < ?2",
        STORE_ARGS(STORE_INT(n), STORE_INT(now - STORE_SQLITE_DELETIONS_KEEP_S)), NULL, err);
}

int store_sqlite_articles_delete(struct store_backend *b, const struct store_delete_filter *f,
                                 size_t max, int64_t *deleted, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    size_t n = 0;
    int rc;

    *deleted = 0;
    int64_t *ids = malloc(max * sizeof *ids);
    if (ids == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        goto out;
    rc = ids_select(s->writer, f, max, ids, &n, err);
    if (rc == 0 && n > 0)
        rc = ids_delete(s->writer, ids, n, (int64_t)time(NULL), err);
    rc = store_sqlite_write_end(s, rc, err);
    if (rc == 0)
        *deleted = (int64_t)n;
out:
    free(ids);
    return rc;
}

int store_sqlite_space_release(struct store_backend *b, int64_t max_pages, int64_t *left,
                               struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    char sql[64];
    int rc;

    snprintf(sql, sizeof sql, "PRAGMA incremental_vacuum(%lld)", (long long)max_pages);
    pthread_mutex_lock(&s->write_lock);
    rc = store_sqlite_exec(s->writer, sql, err);
    /* The file shrinks when the WAL is copied back into it: now, as far
     * as readers allow (a passive checkpoint waits for nobody). */
    if (rc == 0)
        rc = store_sqlite_exec(s->writer, "PRAGMA wal_checkpoint(PASSIVE)", err);
    if (rc == 0 && left)
        rc = store_sqlite_query_int(s->writer, "PRAGMA freelist_count", left, err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_space_incremental(struct store_backend *b, bool *on, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int64_t mode = 0;
    pthread_mutex_lock(&s->write_lock);
    int rc = store_sqlite_query_int(s->writer, "PRAGMA auto_vacuum", &mode, err);
    pthread_mutex_unlock(&s->write_lock);
    *on = mode == 2; /* 0 none, 1 full, 2 incremental */
    return rc;
}

int store_sqlite_compact(struct store_backend *b, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    pthread_mutex_lock(&s->write_lock);
    /* The mode takes effect with the VACUUM, which rewrites the file in
     * one transaction: a crash leaves the old file as it was. */
    int rc = store_sqlite_exec(s->writer, "PRAGMA auto_vacuum=INCREMENTAL", err);
    if (rc == 0)
        rc = store_sqlite_exec(s->writer, "VACUUM", err);
    if (rc == 0)
        rc = store_sqlite_exec(s->writer, "PRAGMA wal_checkpoint(TRUNCATE)", err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}
