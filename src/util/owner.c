/* Ownership of files created as root in another user's directory
 * (util/owner.h). */
#include "util/owner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/banned.h"

bool owner_of_dir(struct owner *out, const char *dir)
{
    struct stat sb;
    if (geteuid() != 0 || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return false;
    if (sb.st_uid == 0 && sb.st_gid == 0)
        return false;
    out->uid = sb.st_uid;
    out->gid = sb.st_gid;
    return true;
}

int owner_fix_fd(int fd, const char *dir)
{
    struct owner o;
    struct stat sb;
    if (!owner_of_dir(&o, dir) || fstat(fd, &sb) != 0)
        return 0;
    if (sb.st_uid == o.uid && sb.st_gid == o.gid)
        return 0;
    return fchown(fd, o.uid, o.gid);
}

/* The directory part of path: up to its last '/' ("." without one, "/"
 * for a file in the root); false when it does not fit. */
static bool dir_of(char *out, size_t n, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 1;
    if (len >= n)
        return false;
    snprintf(out, n, "%.*s", (int)len, slash == NULL ? "." : slash == path ? "/" : path);
    return true;
}

bool owner_of_path_dir(struct owner *out, const char *path)
{
    char dir[4096];
    return dir_of(dir, sizeof dir, path) && owner_of_dir(out, dir);
}

int owner_fix_path(const char *path)
{
    struct owner o;
    struct stat sb;
    if (!owner_of_path_dir(&o, path))
        return 0;
    if (lstat(path, &sb) != 0 || (sb.st_uid == o.uid && sb.st_gid == o.gid))
        return 0;
    return lchown(path, o.uid, o.gid);
}

int owner_apply_dir(const char *dir, const struct owner *o)
{
    struct stat sb;
    int rc = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) == 0 && (sb.st_uid != o->uid || sb.st_gid != o->gid) &&
        fchown(fd, o->uid, o->gid) != 0)
        rc = -1;
    DIR *d = rc == 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        /* A file gone meanwhile (a merge's input swept) is no failure. */
        if (fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if ((sb.st_uid != o->uid || sb.st_gid != o->gid) &&
            fchownat(fd, e->d_name, o->uid, o->gid, AT_SYMLINK_NOFOLLOW) != 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(d); /* closes fd */
    return rc;
}
