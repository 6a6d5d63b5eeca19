/* Shared by the unit tests that serve fixture files on loopback (the feed
 * crawler's and the fetcher's): a fixture file read whole, and a send of
 * all its bytes. */
#ifndef NEWSD_TEST_LOOPBACK_H
#define NEWSD_TEST_LOOPBACK_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

/* dir/rel whole, NUL-terminated (*len without the NUL); NULL when it
 * cannot be read. */
static inline char *test_read_data(const char *dir, const char *rel, size_t *len)
{
    char path[4096];
    int w = snprintf(path, sizeof path, "%s%s", dir, rel);
    if (w < 0 || (size_t)w >= sizeof path)
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

/* Send all of p, false when the client went away. */
static inline bool test_send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

#endif
