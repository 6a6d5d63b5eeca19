/* Making a file or a directory durable. Written once for every writer that
 * renames a finished file into place (the store's backup and restore, the
 * engine's manifest and checkpoints): a rename is durable only once the
 * directory holding it is synced. */
#ifndef NEWSD_UTIL_FSYNC_H
#define NEWSD_UTIL_FSYNC_H

#include <stdbool.h>

#include "util/err.h"

/* fsync path: a regular file (opened read-write), or a directory when dir
 * is true. 0, or ERR_IO naming the path ("cannot open …", "cannot sync …"). */
int fsync_path(const char *path, bool dir, struct err *err);

#endif
