/* The one-server-per-store lock (cmd/lock.h). */
#include "cmd/lock.h"
#include "cmd/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "store/store.h"

#include "util/log.h"
#include "util/owner.h"

#include "util/banned.h"

/* The pid the holder wrote, for the message ("?" when unreadable). */
static void lock_holder(int fd, char *out, size_t n)
{
    ssize_t got = pread(fd, out, n - 1, 0);
    out[got > 0 ? got : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    for (const char *c = out; *c; c++) {
        if (*c < '0' || *c > '9') {
            out[0] = '\0';
            break;
        }
    }
    if (out[0] == '\0')
        snprintf(out, n, "?");
}

int cmd_lock_take(int *out_fd, const char *path, const char *what)
{
    char pid[32];
    *out_fd = -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        cmd_fail("cannot open the server lock %s: %s", path, strerror(errno));
        return -1;
    }
    if (owner_fix_path(path) != 0)
        log_warn("cannot give %s its directory's owner: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK) {
            lock_holder(fd, pid, sizeof pid);
            cmd_fail("another newsd (pid %s) is serving this store (it holds %s): stop it "
                     "first, then %s",
                     pid, path, what);
        } else
            cmd_fail("cannot lock %s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        log_warn("cannot write the pid to %s: %s", path, strerror(errno));
    *out_fd = fd;
    return 0;
}

int cmd_lock_store(const char *loc, const char *what)
{
    char db[4096], path[4200];
    int fd;
    if (store_location_is_pg(loc) || access(loc, F_OK) != 0 ||
        store_sqlite_path_at(loc, db, sizeof db, NULL) < 0)
        return -2;
    snprintf(path, sizeof path, "%s" CMD_LOCK_SUFFIX, db);
    return cmd_lock_take(&fd, path, what) < 0 ? -1 : fd;
}
