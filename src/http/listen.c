/* The listening socket (http/internal.h). We bind it ourselves and hand it
 * to MHD, so any address family works the same way and the port chosen
 * for port 0 is known before the first request. */
#include "http/internal.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/banned.h"

/* Split spec into host (copied into host[hcap]) and port. Brackets are
 * required around an IPv6 literal: "::1:80" is ambiguous, so refused. */
static int listen_spec_parse(char *host, size_t hcap, unsigned *port, const char *spec,
                             struct err *err)
{
    const char *h = spec, *colon;
    size_t hlen;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':')
            return err_set(err, ERR_INVALID, "listen '%s': expected [ADDRESS]:PORT", spec);
        h = spec + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon)
            return err_set(err, ERR_INVALID, "listen '%s': expected HOST:PORT", spec);
        hlen = (size_t)(colon - spec);
        if (memchr(spec, ':', hlen))
            return err_set(err, ERR_INVALID, "listen '%s': put an IPv6 address in brackets", spec);
    }
    if (hlen >= hcap)
        return err_set(err, ERR_INVALID, "listen '%s': host name too long", spec);
    memcpy(host, h, hlen);
    host[hlen] = '\0';

    const char *p = colon + 1;
    unsigned v = 0;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
        v = v * 10 + (unsigned)(*p - '0');
    if (!digits || *p || v > 65535)
        return err_set(err, ERR_INVALID, "listen '%s': port must be 0..65535", spec);
    *port = v;
    return 0;
}

/* One socket bound to ai, or -1 with errno set. */
static int listen_try(const struct addrinfo *ai, bool dual_stack)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    /* Restarting must not wait for TIME_WAIT connections of the old process. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* ":PORT" on "::" should also take IPv4 clients, whatever the sysctl says. */
    if (dual_stack && ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int http_listen_open(int *out_fd, uint16_t *out_port, const char *spec, struct err *err)
{
    char host[NI_MAXHOST], service[8];
    unsigned port = 0;
    struct addrinfo *res = NULL;
    int rc, fd = -1, last_errno = 0;

    *out_fd = -1;
    *out_port = 0;
    if (!spec || !*spec)
        return err_set(err, ERR_INVALID, "listen address is empty");
    if ((rc = listen_spec_parse(host, sizeof host, &port, spec, err)) < 0)
        return rc;
    snprintf(service, sizeof service, "%u", port);

    struct addrinfo hints = {0};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    bool wildcard = host[0] == '\0';
    int grc = getaddrinfo(wildcard ? NULL : host, service, &hints, &res);
    if (grc != 0) {
        rc = err_set(err, ERR_IO, "listen '%s': %s", spec, gai_strerror(grc));
        goto out;
    }
    /* For the wildcard, a dual-stack "::" serves both families on one
     * socket; try it first and fall back to whatever else resolves. For a
     * name, the resolver's order stands (the first address that binds). */
    for (int pass = wildcard ? 0 : 1; pass < 2 && fd < 0; pass++) {
        for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
            if (pass == 0 && ai->ai_family != AF_INET6)
                continue;
            fd = listen_try(ai, wildcard);
            if (fd < 0)
                last_errno = errno;
        }
    }
    if (fd < 0) {
        rc = err_set(err, ERR_IO, "listen '%s': %s", spec,
                     strerror(last_errno ? last_errno : EADDRNOTAVAIL));
        goto out;
    }

    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        rc = err_set(err, ERR_IO, "listen '%s': %s", spec, strerror(errno));
        goto out;
    }
    if (ss.ss_family == AF_INET6)
        *out_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        *out_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    *out_fd = fd;
    fd = -1;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (res)
        freeaddrinfo(res);
    return rc;
}
