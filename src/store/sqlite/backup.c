/* newsd backup for the embedded store (store.h, store_backup): a
 * consistent copy of newsd.db taken while newsd runs.
 *
 * SQLite's online backup API copies the database page by page. Stepped in
 * small pieces, a backup restarts whenever another connection writes
 * between two steps, and on a store that is being imported into it may
 * never finish; one step of all pages (-1) reads inside a single read
 * transaction instead, which in WAL mode blocks no writer and sees one
 * committed state of every table: articles, sources, feeds, keys and
 * usage together. The copy is written beside the target, synced, made
 * 0600 (it holds the keys' hashes) and renamed into place, so the target
 * is either the old file or a whole new backup. */
#include "store/sqlite/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/banned.h"

/* fsync a file, or the directory that holds it (for the rename). */
static int sync_path(const char *path, bool dir, struct err *err)
{
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int rc = fsync(fd) == 0 ? 0 : err_set(err, ERR_IO, "cannot sync %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

static int copy_pages(sqlite3 *src, const char *tmp, struct err *err)
{
    sqlite3 *dst = NULL;
    int rc = 0;
    /* Created 0600 before SQLite opens it: the copy holds the keys'
     * hashes, whatever the umask. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return err_set(err, ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    close(fd);
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

int store_sqlite_backup(struct store_backend *b, const char *dest, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *src = NULL;
    int rc;
    size_t n = strlen(dest) + sizeof ".tmp";
    char *tmp = malloc(n), *dir = malloc(strlen(dest) + 2);
    if (!tmp || !dir) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(tmp, n, "%s.tmp", dest);
    if ((rc = store_sqlite_conn_open(&src, s->path, true, err)) < 0)
        goto out;
    if ((rc = copy_pages(src, tmp, err)) < 0)
        goto out;
    /* The -wal and -shm files of the copy are gone after its close; make
     * sure of it before the copy takes the target's name. */
    char *side = malloc(n + 4);
    if (!side) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(side, n + 4, "%s-wal", tmp);
    unlink(side);
    snprintf(side, n + 4, "%s-shm", tmp);
    unlink(side);
    free(side);
    if ((rc = sync_path(tmp, false, err)) < 0)
        goto out;
    if (rename(tmp, dest) != 0) {
        rc = err_set(err, ERR_IO, "cannot rename %s to %s: %s", tmp, dest, strerror(errno));
        goto out;
    }
    const char *slash = strrchr(dest, '/');
    if (slash)
        snprintf(dir, strlen(dest) + 2, "%.*s", (int)(slash - dest) + (slash == dest), dest);
    else
        snprintf(dir, strlen(dest) + 2, ".");
    rc = sync_path(dir, true, err);
out:
    if (src)
        store_sqlite_conn_close(src);
    if (rc < 0 && tmp)
        unlink(tmp);
    free(tmp);
    free(dir);
    return rc;
}
