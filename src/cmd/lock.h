/* The one-server-per-store lock: an exclusive flock(2) on a file beside
 * the store (<db path>.pid; a PostgreSQL store's in its node-local index
 * directory), held for as long as a command must be alone with the store
 * (newsd serve, newsd restore). The holder writes its pid there so that
 * the next one is refused naming it; flock ends with the process, so a
 * crash leaves no stale lock. */
#ifndef NEWSD_CMD_LOCK_H
#define NEWSD_CMD_LOCK_H

#define CMD_LOCK_SUFFIX ".pid"    /* beside an embedded store's database file */
#define CMD_LOCK_NAME "newsd.pid" /* in a node-local index directory */

/* Take the lock at path for what (a verb phrase for the refusal: "serve
 * this store"): *out_fd its descriptor (close it to let go), or -1 after
 * one line on stderr naming the holder's pid. The file gets the owner of
 * its directory when root creates it there for another user
 * (util/owner.h), so that the service can take it later. */
int cmd_lock_take(int *out_fd, const char *path, const char *what);

/* The lock of the embedded store at loc, as serve takes it, for a command
 * that must not run beside a server (what: as for cmd_lock_take): the
 * lock's fd (close it to let go), -1 after one line on stderr, or -2
 * when there is nothing to lock (a PostgreSQL store's nodes each lock
 * their own directory; a missing store is refused by the open that
 * follows). */
int cmd_lock_store(const char *loc, const char *what);

#endif
