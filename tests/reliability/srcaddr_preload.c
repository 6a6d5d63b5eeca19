/* LD_PRELOAD shim for load generators (wrk): every IPv4 connection to
 * 127.0.0.1 leaves from its own loopback source address 127.0.0.2 ..
 * 127.0.0.250, round robin, so that 1,000 connections from one machine do
 * not all count against newsd's per-address connection limit, as 1,000
 * real clients would not. Nothing else changes. Built without -Wpedantic:
 * it replaces a libc function and finds the real one with dlsym. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

static atomic_uint next_source;

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    static int (*real_connect)(int, const struct sockaddr *, socklen_t);
    if (real_connect == NULL)
        real_connect =
            (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *to = (const struct sockaddr_in *)addr;
        if (to->sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
            struct sockaddr_in from;
            memset(&from, 0, sizeof from);
            from.sin_family = AF_INET;
            from.sin_addr.s_addr = htonl(0x7f000002u + atomic_fetch_add(&next_source, 1) % 249u);
            /* A failed bind leaves the kernel's choice: no worse than without us. */
            (void)bind(fd, (const struct sockaddr *)&from, sizeof from);
        }
    }
    return real_connect(fd, addr, len);
}
