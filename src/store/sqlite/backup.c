/* newsd backup for the embedded store (store.h, store_backup): a
 * consistent copy of newsd.db taken while newsd runs.
 *
 * SQLite's online backup API copies the database page by page. Stepped in
 * small pieces, a backup restarts whenever another connection writes
 * between two steps, and on a store that is being imported into it may
 * never finish; one step of all pages (-1) reads inside a single read
 * transaction instead, which in WAL mode blocks no writer and sees one
 * committed state of every table: articles, sources, feeds, keys and
 * usage together. The copy is written beside the target in a file of an
 * unpredictable name made by mkstemp (O_EXCL: never through a symlink or
 * into a file someone else made, mode 0600: it holds the keys' hashes,
 * feed credentials and webhook secrets), synced and renamed into place, so
 * the target is either the old file or a whole new private backup.
 * A target in the store's directory, or below it, is refused: the backup
 * would be lost with the store, and renamed over newsd.db or its -wal it
 * would destroy the store. */
#include "store/sqlite/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsync.h"

#include "util/banned.h"

static int copy_pages(sqlite3 *src, const char *tmp, struct err *err)
{
    sqlite3 *dst = NULL;
    int rc = 0;
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = err_set(err, ERR_IO, "cannot open %s: %s", tmp, dst ? sqlite3_errmsg(dst) : "?");
        goto out;
    }
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        rc = err_set(err, ERR_STORE, "backup: %s", sqlite3_errmsg(dst));
        goto out;
    }
    int step = sqlite3_backup_step(b, -1);
    int fin = sqlite3_backup_finish(b);
    if (step != SQLITE_DONE || fin != SQLITE_OK) {
        rc = err_set(err, step == SQLITE_FULL || fin == SQLITE_FULL ? ERR_FULL : ERR_STORE,
                     "backup: %s", sqlite3_errstr(step != SQLITE_DONE ? step : fin));
        goto out;
    }
    /* The copy keeps the source's WAL mode in its header; checkpointed
     * here, it is one self-contained file. */
    sqlite3_wal_checkpoint_v2(dst, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
out:
    if (dst && sqlite3_close(dst) != SQLITE_OK && rc == 0)
        rc = err_set(err, ERR_IO, "cannot close %s", tmp);
    return rc;
}

/* The directory part of path ("." for a bare name), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + (slash == path) : 1;
    char *d = malloc(n + 1);
    if (d)
        snprintf(d, n + 1, "%.*s", (int)n, slash ? path : ".");
    return d;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* True when the directory open at fd is store_dir or lies below it: its
 * parents are walked up to / by "..", compared by device and inode, so no
 * spelling of the path (symlinks, "..", bind aliases) gets round it. */
static bool dir_is_within(int fd, const struct stat *store_dir)
{
    struct stat here, up;
    bool within = false;
    for (int depth = 0; depth < 4096 && fstat(fd, &here) == 0; depth++) {
        if (same_file(&here, store_dir)) {
            within = true;
            break;
        }
        int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
            break;
        close(fd);
        fd = parent;
        if (fstat(fd, &up) != 0 || same_file(&up, &here))
            break; /* the root is its own parent */
    }
    close(fd);
    return within;
}

/* dest must lie outside the store's directory and be none of its files
 * under another name (a symlink or hard link to newsd.db). */
static int target_check(const char *store_path, const char *dest, struct err *err)
{
    struct stat sdir, d, f;
    char *sd = dir_of(store_path), *dd = dir_of(dest);
    int rc = 0;
    if (!sd || !dd) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if (stat(sd, &sdir) != 0) {
        rc = err_set(err, ERR_IO, "cannot access %s: %s", sd, strerror(errno));
        goto out;
    }
    int fd = open(dd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        rc = err_set(err, ERR_IO, "cannot use the directory %s: %s", dd, strerror(errno));
        goto out;
    }
    if (dir_is_within(fd, &sdir)) {
        rc = err_set(err, ERR_INVALID,
                     "%s is inside the store directory %s; write the backup outside it (a copy "
                     "there is lost with the store and could overwrite its files)",
                     dest, sd);
        goto out;
    }
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    if (stat(dest, &d) != 0)
        goto out;
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", store_path, sides[i]);
        if (stat(path, &f) == 0 && same_file(&d, &f)) {
            rc = err_set(err, ERR_INVALID,
                         "%s is the store's own file %s; write the backup "
                         "to a new file outside the store directory",
                         dest, path);
            goto out;
        }
    }
out:
    free(sd);
    free(dd);
    return rc;
}

/* A new file beside dest named dest.XXXXXX: mkstemp makes it with O_EXCL
 * (a symlink or a file planted there makes it try another name) and mode
 * 0600; fchmod says 0600 once more for a umask that would leave less. */
static int tmp_create(const char *dest, char **out, struct err *err)
{
    size_t n = strlen(dest) + sizeof ".XXXXXX";
    char *tmp = malloc(n);
    *out = NULL;
    if (!tmp)
        return err_set(err, ERR_NOMEM, "out of memory");
    snprintf(tmp, n, "%s.XXXXXX", dest);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = err_set(err, ERR_IO, "cannot create a file beside %s: %s", dest, strerror(errno));
        free(tmp);
        return rc;
    }
    int rc = 0;
    if (fchmod(fd, 0600) != 0) {
        rc = err_set(err, ERR_IO, "cannot make %s private: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        tmp = NULL;
    }
    close(fd);
    *out = tmp;
    return rc;
}

int store_sqlite_backup(struct store_backend *b, const char *dest, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *src = NULL;
    char *tmp = NULL, *dir = NULL, *side = NULL;
    int rc;
    if ((rc = target_check(s->path, dest, err)) < 0)
        goto out;
    if (!(dir = dir_of(dest))) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_sqlite_conn_open(&src, s->path, true, err)) < 0 ||
        (rc = tmp_create(dest, &tmp, err)) < 0 || (rc = copy_pages(src, tmp, err)) < 0)
        goto out;
    /* The -wal and -shm files of the copy are gone after its close; make
     * sure of it before the copy takes the target's name. */
    size_t n = strlen(tmp) + sizeof "-wal";
    if (!(side = malloc(n))) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(side, n, "%s-wal", tmp);
    unlink(side);
    snprintf(side, n, "%s-shm", tmp);
    unlink(side);
    if ((rc = fsync_path(tmp, false, err)) < 0)
        goto out;
    if (rename(tmp, dest) != 0) {
        rc = err_set(err, ERR_IO, "cannot rename %s to %s: %s", tmp, dest, strerror(errno));
        goto out;
    }
    rc = fsync_path(dir, true, err);
out:
    if (src)
        store_sqlite_conn_close(src);
    if (rc < 0 && tmp)
        unlink(tmp);
    free(tmp);
    free(dir);
    free(side);
    return rc;
}
