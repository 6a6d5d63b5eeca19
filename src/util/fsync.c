/* Making a file or a directory durable (util/fsync.h). */
#include "util/fsync.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/banned.h"

int fsync_path(const char *path, bool dir, struct err *err)
{
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int rc = fsync(fd) == 0 ? 0 : err_set(err, ERR_IO, "cannot sync %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}
