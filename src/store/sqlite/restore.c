/* newsd restore for the embedded store (store.h store_restore_*): a backup
 * put in place of a store's database, in the store directory itself.
 *
 * The directory is never renamed or replaced: with systemd's DynamicUser=
 * /var/lib/newsd is a symlink to /var/lib/private/newsd, and moving the
 * link (the old documented `mv`) left systemd refusing to start. Only
 * files inside it change, reached through the path given (the symlink
 * followed):
 *   stage:  the backup copied to newsd.db.restore (O_EXCL, 0600), synced,
 *           given the directory's owner (a root-run restore leaves files
 *           the service's user can open), then checked: SQLite's
 *           quick_check and the newsd schema, on the copy itself (what is
 *           checked is what is installed).
 *   commit: the old database checkpointed and its -wal and -shm removed
 *           (an old WAL beside the new file would be replayed into it),
 *           the copy renamed over newsd.db, the directory synced.
 * A crash before the rename leaves the old database whole; after it, the
 * new one. The caller holds the store's lock (no server has it open) and
 * removes the old search index between the two steps. */
#include "store/sqlite/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsync.h"
#include "util/owner.h"

#include "util/banned.h"

#define RESTORE_SUFFIX ".restore" /* the staged copy, beside newsd.db */
#define RESTORE_COPY_BYTES (1 << 20)

static int path_in(char *out, size_t n, const char *dir, const char *name, const char *suffix,
                   struct err *err)
{
    if ((size_t)snprintf(out, n, "%s/%s%s", dir, name, suffix) >= n)
        return err_set(err, ERR_INVALID, "the store's path is too long");
    return 0;
}

/* A backup with a WAL of its own is open elsewhere or was copied without
 * it: the file alone is not the whole database. */
static int backup_whole(const char *backup, struct err *err)
{
    char wal[4096];
    struct stat sb;
    if ((size_t)snprintf(wal, sizeof wal, "%s-wal", backup) >= sizeof wal)
        return err_set(err, ERR_INVALID, "the backup's path is too long");
    if (stat(wal, &sb) == 0 && sb.st_size > 0)
        return err_set(err, ERR_INVALID,
                       "%s has a write-ahead log beside it (%s): it is in use or was copied "
                       "without it; take a backup with newsd backup",
                       backup, wal);
    return 0;
}

static int copy_fd(int in, int out, const char *backup, const char *tmp, struct err *err)
{
    char *buf = malloc(RESTORE_COPY_BYTES);
    int rc = 0;
    if (buf == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (;;) {
        ssize_t got = read(in, buf, RESTORE_COPY_BYTES);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = err_set(err, ERR_IO, "cannot read %s: %s", backup, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        for (ssize_t done = 0; done < got;) {
            ssize_t w = write(out, buf + done, (size_t)(got - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                rc = err_set(err, ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
                goto out;
            }
            done += w;
        }
    }
out:
    free(buf);
    return rc;
}

/* The backup's bytes into tmp (created here, 0600), synced and given the
 * directory's owner. */
static int stage_copy(const char *dir, const char *backup, const char *tmp, struct err *err)
{
    int rc = 0;
    int in = open(backup, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return err_set(err, ERR_IO, "cannot open %s: %s", backup, strerror(errno));
    /* A copy left by a restore that died: ours to replace (the lock is held). */
    if (unlink(tmp) != 0 && errno != ENOENT) {
        rc = err_set(err, ERR_IO, "cannot remove %s: %s", tmp, strerror(errno));
        close(in);
        return rc;
    }
    int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0) {
        rc = err_set(err, ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
        close(in);
        return rc;
    }
    rc = copy_fd(in, out, backup, tmp, err);
    if (rc == 0 && fsync(out) != 0)
        rc = err_set(err, ERR_IO, "cannot sync %s: %s", tmp, strerror(errno));
    if (rc == 0 && owner_fix_fd(out, dir) != 0)
        rc = err_set(err, ERR_IO, "cannot give %s the owner of %s: %s", tmp, dir, strerror(errno));
    close(out);
    close(in);
    return rc;
}

/* SQLite's quick_check and the newsd schema, on the staged file opened
 * read-only and immutable (nothing is created beside it). */
static int stage_check(const char *tmp, const char *backup, struct err *err)
{
    char uri[4200];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct err inner; /* SQLite's words, put after the backup's name */
    int rc;
    err_clear(&inner);
    if ((size_t)snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", tmp) >= sizeof uri)
        return err_set(err, ERR_INVALID, "the store's path is too long");
    if (strpbrk(tmp, "?#%") != NULL)
        return err_set(err, ERR_INVALID, "the store's path holds ?, # or %%: not supported");
    rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, &inner);
        rc = err_set(err, rc, "cannot open %s: %s", backup, err_msg(&inner, rc));
        goto out;
    }
    if ((rc = store_sqlite_prepare(db, "PRAGMA quick_check", &st, &inner)) < 0) {
        rc = err_set(err, ERR_INVALID, "%s is not a SQLite database: %s", backup,
                     err_msg(&inner, rc));
        goto out;
    }
    int step = sqlite3_step(st);
    const unsigned char *verdict = step == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    if (verdict == NULL || strcmp((const char *)verdict, "ok") != 0) {
        rc = err_set(err, ERR_INVALID, "%s is damaged (SQLite quick_check: %s)", backup,
                     verdict ? (const char *)verdict : sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = store_sqlite_schema_check(db, &inner)) < 0)
        rc = err_set(err, rc, "%s: %s", backup, err_msg(&inner, rc));
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int store_restore_stage(const char *dir, const char *backup, struct err *err)
{
    char tmp[4096];
    struct stat sb;
    int rc;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(err, ERR_INVALID, "%s is not a store directory: create it first", dir);
    if ((rc = path_in(tmp, sizeof tmp, dir, STORE_SQLITE_FILE, RESTORE_SUFFIX, err)) < 0 ||
        (rc = backup_whole(backup, err)) < 0 || (rc = stage_copy(dir, backup, tmp, err)) < 0 ||
        (rc = stage_check(tmp, backup, err)) < 0)
        unlink(tmp);
    return rc;
}

void store_restore_abort(const char *dir)
{
    char tmp[4096];
    struct err err;
    if (path_in(tmp, sizeof tmp, dir, STORE_SQLITE_FILE, RESTORE_SUFFIX, &err) == 0)
        unlink(tmp);
}

/* The old database's WAL copied into it and removed, so that no frame of
 * it can be replayed into the new file. A database that cannot be opened
 * (damaged: the reason for the restore) only loses its files. */
static int old_retire(const char *db_path, const char *dir, struct err *err)
{
    char side[4096];
    sqlite3 *db = NULL;
    if (access(db_path, F_OK) == 0 &&
        sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, STORE_SQLITE_BUSY_TIMEOUT_MS);
        sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    }
    sqlite3_close(db); /* the last connection: SQLite removes the WAL itself */
    static const char *const sides[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        int rc = path_in(side, sizeof side, dir, STORE_SQLITE_FILE, sides[i], err);
        if (rc < 0)
            return rc;
        if (unlink(side) != 0 && errno != ENOENT)
            return err_set(err, ERR_IO, "cannot remove %s: %s", side, strerror(errno));
    }
    return 0;
}

int store_restore_commit(const char *dir, struct err *err)
{
    char db_path[4096], tmp[4096];
    int rc;
    if ((rc = path_in(db_path, sizeof db_path, dir, STORE_SQLITE_FILE, "", err)) < 0 ||
        (rc = path_in(tmp, sizeof tmp, dir, STORE_SQLITE_FILE, RESTORE_SUFFIX, err)) < 0 ||
        (rc = old_retire(db_path, dir, err)) < 0)
        return rc;
    if (rename(tmp, db_path) != 0)
        return err_set(err, ERR_IO, "cannot rename %s to %s: %s", tmp, db_path, strerror(errno));
    return fsync_path(dir, true, err);
}
