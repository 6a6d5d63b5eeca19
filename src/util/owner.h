/* Files a command run as root creates in a directory another user owns
 * get that user as owner and group. The service runs as its own user
 * (systemd DynamicUser=, or serve --user); an operator who runs an admin
 * command as root on its store (newsd index verify, newsd restore) would
 * otherwise leave root-owned files mode 0600 there that the service cannot
 * open: it then rebuilt its index in memory at every start, or could not
 * take its lock. Not running as root, or in a directory root owns, every
 * call here does nothing: files keep the creator's ids, as always. */
#ifndef NEWSD_UTIL_OWNER_H
#define NEWSD_UTIL_OWNER_H

#include <stdbool.h>
#include <sys/types.h>

struct owner {
    uid_t uid;
    gid_t gid;
};

/* The ids files created in dir should get: true with *out set when this
 * process runs as root and dir (a symlink followed) belongs to someone
 * else; false when nothing is to be changed (or dir cannot be read). */
bool owner_of_dir(struct owner *out, const char *dir);

/* Give fd the ids of dir's owner when owner_of_dir says so. 0, or -1 with
 * errno when fchown fails. */
int owner_fix_fd(int fd, const char *dir);

/* owner_of_dir of the directory path is in: its part up to the last '/'
 * ("." without one). */
bool owner_of_path_dir(struct owner *out, const char *path);

/* owner_fix_fd for the file at path (a symlink itself, not followed). */
int owner_fix_path(const char *path);

/* dir itself and every entry directly in it get o's ids when they have
 * others (a directory of files such as the engine's index). 0, or -1 with
 * errno at the first entry that cannot be changed. */
int owner_apply_dir(const char *dir, const struct owner *o);

#endif
