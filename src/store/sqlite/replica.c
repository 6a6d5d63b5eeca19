/* A replica of a PostgreSQL store in an embedded store's file
 * (store/sqlite/replica.h). The file is an ordinary embedded store (opened
 * with store_sqlite_new: same schema, migrations and FTS5 triggers); rows
 * are written here with the ids and seqs they came with. The position is
 * kept in the meta table under replica_origin, replica_seq and
 * replica_sources_rev. */
#include "store/sqlite/replica.h"
#include "store/sqlite/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/banned.h"

struct store_replica {
    struct store_sqlite *db;
    char *dir;
    int lock_fd; /* <dir>/lock, flock()ed: one follower per directory */
};

/* Two nodes sharing a directory would both write the replica and disagree
 * on its position: the second one is refused. */
static int dir_lock(struct store_replica *r, struct err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lock", r->dir);
    r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (r->lock_fd < 0)
        return err_set(err, ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (flock(r->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        return err_set(err, e == EWOULDBLOCK ? ERR_BUSY : ERR_IO,
                       e == EWOULDBLOCK ? "%s is in use by another newsd (one --index-dir per "
                                          "node)"
                                        : "cannot lock %s: %s",
                       r->dir, strerror(e));
    }
    return 0;
}

static int meta_set(sqlite3 *db, const char *key, const char *text, int64_t num, struct err *err)
{
    return store_sqlite_write(db,
                              "INSERT INTO meta(key, value) VALUES (?1, ?2)"
                              " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                              STORE_ARGS(STORE_TEXT(key), text ? STORE_TEXT(text) : STORE_INT(num)),
                              NULL, err);
}

/* The store files of dir (database, WAL, shared memory). */
static int files_remove(const char *dir, struct err *err)
{
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    char path[4096];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, STORE_SQLITE_FILE, suffixes[i]);
        if (unlink(path) != 0 && errno != ENOENT)
            return err_set(err, ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    }
    return 0;
}

static int db_open(struct store_replica *r, struct err *err)
{
    struct store_backend *be = NULL;
    /* No FTS5 side unless the fts5 index asks for it (index_fts5_new). */
    /* The replica is this node's copy, made again from the origin at
     * will: its schema follows the binary. */
    static const struct store_options opt = {.fulltext_when_new = false, .migrate = true};
    int rc = store_sqlite_new(&be, r->dir, &opt, err);
    if (rc == 0)
        r->db = (struct store_sqlite *)be;
    return rc;
}

static void db_close(struct store_replica *r)
{
    if (r->db)
        r->db->base.free(&r->db->base);
    r->db = NULL;
}

int store_replica_open(struct store_replica **out, const char *dir, const char *origin,
                       struct err *err)
{
    struct store_replica *r = NULL;
    char have[64];
    int rc;

    *out = NULL;
    r = calloc(1, sizeof *r);
    if (r == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    r->lock_fd = -1;
    if ((r->dir = strdup(dir)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = db_open(r, err)) < 0 || (rc = dir_lock(r, err)) < 0)
        goto out;
    if ((rc = store_sqlite_meta_text(r->db->writer, "replica_origin", have, sizeof have, err)) < 0)
        goto out;
    if (have[0] && origin && strcmp(have, origin) != 0) {
        /* Built from another database: nothing in it can be trusted.
         * Removing the files is much faster than deleting every row. */
        db_close(r);
        if ((rc = files_remove(dir, err)) < 0 || (rc = db_open(r, err)) < 0)
            goto out;
        have[0] = '\0';
    }
    if (have[0] == '\0') {
        int64_t rows = 0;
        if ((rc = store_sqlite_query_int(r->db->writer, "SELECT count(*) FROM articles", &rows,
                                         err)) < 0)
            goto out;
        if (rows > 0) {
            rc = err_set(err, ERR_INVALID,
                         "%s holds an embedded store, not an index replica: use another "
                         "--index-dir",
                         dir);
            goto out;
        }
        if (origin && (rc = store_replica_reset(r, origin, err)) < 0)
            goto out;
    }
    *out = r;
    r = NULL;
out:
    store_replica_close(r);
    return rc;
}

void store_replica_close(struct store_replica *r)
{
    if (r == NULL)
        return;
    db_close(r);
    if (r->lock_fd >= 0)
        close(r->lock_fd); /* releases the lock */
    free(r->dir);
    free(r);
}

const char *store_replica_path(const struct store_replica *r)
{
    return r->db->path;
}

int store_replica_position(struct store_replica *r, struct store_replica_position *out,
                           struct err *err)
{
    sqlite3 *db = r->db->writer;
    char num[32];
    int rc;

    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->db->write_lock);
    if ((rc = store_sqlite_meta_text(db, "replica_origin", out->origin, sizeof out->origin, err)) <
        0)
        goto out;
    if ((rc = store_sqlite_meta_text(db, "replica_seq", num, sizeof num, err)) < 0)
        goto out;
    out->seq = strtoll(num, NULL, 10);
    if ((rc = store_sqlite_meta_text(db, "replica_sources_rev", num, sizeof num, err)) < 0)
        goto out;
    out->sources_rev = num[0] ? strtoll(num, NULL, 10) : -1;
    rc = store_sqlite_query_int(db, "SELECT count(*) FROM articles", &out->articles, err);
out:
    pthread_mutex_unlock(&r->db->write_lock);
    return rc;
}

int store_replica_reset(struct store_replica *r, const char *origin, struct err *err)
{
    struct store_sqlite *s = r->db;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    /* Row by row, so the triggers take every FTS5 entry with it. */
    if ((rc = store_sqlite_exec(s->writer, "DELETE FROM articles", err)) < 0 ||
        (rc = store_sqlite_exec(s->writer, "DELETE FROM sources", err)) < 0 ||
        (rc = meta_set(s->writer, "replica_origin", origin, 0, err)) < 0 ||
        (rc = meta_set(s->writer, "replica_seq", NULL, 0, err)) < 0 ||
        (rc = meta_set(s->writer, "replica_sources_rev", NULL, -1, err)) < 0)
        goto end;
    /* A new history: an index kept on disk for the old one is not reused. */
    rc = store_sqlite_exec(s->writer,
                           "UPDATE meta SET value = lower(hex(randomblob(16)))"
                           " WHERE key = 'articles_epoch'",
                           err);
end:
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

/* --- applying changes ------------------------------------------------------------ */

struct apply_stmts {
    sqlite3_stmt *del_url;
    sqlite3_stmt *del_id;
    sqlite3_stmt *tomb; /* delete by id, unless the row is newer */
    sqlite3_stmt *rec;  /* the delete, for the index (article_deletions) */
    sqlite3_stmt *ins;
};

static void apply_stmts_finalize(struct apply_stmts *a)
{
    sqlite3_finalize(a->del_url);
    sqlite3_finalize(a->del_id);
    sqlite3_finalize(a->tomb);
    sqlite3_finalize(a->rec);
    sqlite3_finalize(a->ins);
}

static int apply_stmts_prepare(sqlite3 *db, struct apply_stmts *a, struct err *err)
{
    int rc;
    memset(a, 0, sizeof *a);
    if ((rc = store_sqlite_prepare(db, "DELETE FROM articles WHERE canonical_url = ?1", &a->del_url,
                                   err)) < 0 ||
        (rc = store_sqlite_prepare(db, "DELETE FROM articles WHERE id = ?1", &a->del_id, err)) <
            0 ||
        (rc = store_sqlite_prepare(db, "DELETE FROM articles WHERE id = ?1 AND seq < ?2", &a->tomb,
                                   err)) < 0 ||
        (rc = store_sqlite_prepare(db,
                                   "INSERT OR REPLACE INTO article_deletions(seq, id, deleted_at)"
                                   " VALUES (?2, ?1, unixepoch())",
                                   &a->rec, err)) < 0)
        return rc;
    return store_sqlite_prepare(db, STORE_SQLITE_ARTICLE_INSERT, &a->ins, err);
}

/* Step a write statement to its end; *changes += rows it changed. */
static int step_write(sqlite3 *db, sqlite3_stmt *st, int64_t *changes, struct err *err)
{
    int rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(db, rc, err);
    if (rc == 0 && changes)
        *changes += sqlite3_changes(db);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st); /* the bound strings are the caller's */
    return rc;
}

static int apply_one(sqlite3 *db, struct apply_stmts *st, struct buf *meta, const struct article *a,
                     bool deleted, int64_t *removed, int64_t *added, struct err *err)
{
    int rc;
    if (deleted) {
        int64_t gone = 0;
        sqlite3_bind_int64(st->tomb, 1, a->id);
        sqlite3_bind_int64(st->tomb, 2, a->seq);
        if ((rc = step_write(db, st->tomb, &gone, err)) < 0 || gone == 0)
            return rc;
        *removed += gone;
        /* Under the store's seq, which the replica's head covers. */
        sqlite3_bind_int64(st->rec, 1, a->id);
        sqlite3_bind_int64(st->rec, 2, a->seq);
        return step_write(db, st->rec, NULL, err);
    }
    if (a->canonical_url == NULL)
        return err_set(err, ERR_INVALID, "replicated article %lld has no canonical url",
                       (long long)a->id);
    store_sqlite_bind_text(st->del_url, 1, a->canonical_url);
    if ((rc = step_write(db, st->del_url, removed, err)) < 0)
        return rc;
    sqlite3_bind_int64(st->del_id, 1, a->id);
    if ((rc = step_write(db, st->del_id, removed, err)) < 0)
        return rc;
    buf_reset(meta);
    store_meta_terms(meta, a);
    if ((rc = buf_error(meta)) < 0)
        return err_set(err, rc, "article %lld: cannot build its index terms", (long long)a->id);
    rc = store_sqlite_bind_article(st->ins, a, a->id, a->seq, a->ingested_at, meta->data);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        sqlite3_clear_bindings(st->ins);
        return rc;
    }
    return step_write(db, st->ins, added, err);
}

int store_replica_apply(struct store_replica *r, const struct article *arts, const bool *deleted,
                        size_t n, int64_t upto, int64_t *delta, struct err *err)
{
    struct store_sqlite *s = r->db;
    struct apply_stmts st;
    struct buf meta;
    int64_t removed = 0, added = 0;
    int rc;

    memset(&st, 0, sizeof st);
    buf_init(&meta, 0);
    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        goto done;
    if ((rc = apply_stmts_prepare(s->writer, &st, err)) < 0)
        goto end;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = apply_one(s->writer, &st, &meta, &arts[i], deleted[i], &removed, &added, err);
    if (rc == 0)
        rc = meta_set(s->writer, "replica_seq", NULL, upto, err);
    if (rc == 0 && removed > 0) /* the deletion records of a week ago go */
        rc = store_sqlite_deletions_prune(s->writer, removed, (int64_t)time(NULL), err);
end:
    apply_stmts_finalize(&st);
    rc = store_sqlite_write_end(s, rc, err);
done:
    buf_release(&meta);
    if (rc == 0 && delta)
        *delta = added - removed;
    return rc;
}

int store_replica_sources_replace(struct store_replica *r, const struct source *src, size_t n,
                                  int64_t rev, struct err *err)
{
    struct store_sqlite *s = r->db;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    if ((rc = store_sqlite_exec(s->writer, "DELETE FROM sources", err)) < 0)
        goto end;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO sources(id, name, description, url, category,"
                              " language, country, headlines, popularity)"
                              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                              &st, err);
    if (rc < 0)
        goto end;
    for (size_t i = 0; i < n && rc == 0; i++) {
        store_sqlite_bind_source(st, &src[i]);
        rc = step_write(s->writer, st, NULL, err);
    }
    if (rc == 0)
        rc = meta_set(s->writer, "replica_sources_rev", NULL, rev, err);
end:
    sqlite3_finalize(st);
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}
