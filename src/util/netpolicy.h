/* Which network addresses newsd's outgoing requests may connect to
 * (docs/security.md, "Outgoing requests"). Every special-use address is
 * refused — loopback, private (RFC 1918, fc00::/7, fec0::/10), link-local
 * (169.254/16 with the cloud metadata address, fe80::/10), CGNAT
 * (100.64/10), unspecified (0/8, ::), multicast (224/4, ff00::/8),
 * broadcast and the reserved ranges — unless a network of the policy's
 * allow list (the config file's [outbound] allow_networks) holds it; every
 * other address is public and allowed.
 *
 * Invariant: an address is 16 bytes in network order, an IPv4 address as
 * its IPv4-mapped IPv6 form ::ffff:a.b.c.d, so ::ffff:127.0.0.1 reached
 * through an AF_INET6 socket is the same address as 127.0.0.1 and one
 * comparison serves both families. Addresses that embed an IPv4 address
 * for a translator (NAT64 64:ff9b::/96, 6to4 2002::/16) are classified by
 * the IPv4 address they lead to.
 *
 * The functions allocate nothing and keep no state: a policy is a plain
 * value, shared read-only by any number of threads. */
#ifndef NEWSD_UTIL_NETPOLICY_H
#define NEWSD_UTIL_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETPOLICY_ALLOW_MAX 64 /* networks of one allow list */
#define NETPOLICY_WHY_MAX 160  /* a refusal or parse message, NUL included */
#define NETPOLICY_ADDR_TEXT 64 /* netpolicy_addr_format's output, NUL included */

struct netpolicy_addr {
    uint8_t b[16];
};

struct netpolicy_net {
    struct netpolicy_addr addr; /* host bits zero */
    unsigned bits;              /* prefix length of the 128 (IPv4: 96 + its own) */
};

struct netpolicy {
    struct netpolicy_net allow[NETPOLICY_ALLOW_MAX]; /* in the order given */
    size_t n_allow;
};

/* The default policy: no special-use address allowed. */
void netpolicy_init(struct netpolicy *p);

/* Set p's allow list from text[0..len): networks separated by blanks or
 * commas, each "ADDRESS/BITS" or a bare ADDRESS (a single host), IPv4 in
 * dotted-quad form or IPv6 as inet_pton reads it; host bits must be zero
 * (127.0.0.1/8 is refused: 127.0.0.0/8 is meant). Returns 0, or ERR_PARSE
 * (ERR_TOO_LARGE past NETPOLICY_ALLOW_MAX networks) with a one-line message
 * in why naming the bad network; p is then unchanged. */
int netpolicy_allow_parse(struct netpolicy *p, const char *text, size_t len, char *why,
                          size_t why_size);

/* Whether a network of p's list holds a, whatever kind of address a is. A
 * policy's list doubles as a plain list of networks where newsd trusts or
 * admits peers ([server] trusted_proxies, metrics_allow_networks). */
bool netpolicy_holds(const struct netpolicy *p, const struct netpolicy_addr *a);

/* The address of an AF_INET or AF_INET6 socket address of len bytes; false
 * for any other family or a short len. */
bool netpolicy_addr_from_sockaddr(struct netpolicy_addr *out, const void *sa, size_t len);

/* The address a URL's host[0..len) names literally, as the resolver would
 * read it: IPv6 without brackets (a zone "%25eth0" or "%eth0" dropped) or
 * IPv4 in inet_aton's forms — 1 to 4 parts of decimal, 0-led octal or
 * 0x-led hex, the last filling the remaining bytes (127.1, 0x7f000001,
 * 2130706433, 017700000001) — after %XX escapes are decoded and one
 * trailing dot dropped. False for a host name. */
bool netpolicy_addr_from_host(struct netpolicy_addr *out, const char *host, size_t len);

/* The special-use range a holds ("loopback", "private", "link-local",
 * ...), NULL when it is a public address. A static string. */
const char *netpolicy_special_use(const struct netpolicy_addr *a);

/* May a connection go to a? True for a public address or one an allowed
 * network holds (p NULL: none is). When not, why (may be NULL) gets
 * "refused: ADDR is KIND; allow it with [outbound] allow_networks". */
bool netpolicy_permits(const struct netpolicy *p, const struct netpolicy_addr *a, char *why,
                       size_t why_size);

/* For `feeds add`: true unless url's host is a literal address that p does
 * not permit (why then says so). Host names pass: they are checked where
 * they are connected to, after DNS. */
bool netpolicy_permits_url(const struct netpolicy *p, const char *url, char *why, size_t why_size);

/* a as text: IPv4 (also IPv4-mapped) dotted, else IPv6 as inet_ntop writes
 * it; out has NETPOLICY_ADDR_TEXT bytes. */
void netpolicy_addr_format(const struct netpolicy_addr *a, char out[NETPOLICY_ADDR_TEXT]);

#endif
