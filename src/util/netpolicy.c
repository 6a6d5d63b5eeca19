/* The outgoing-address policy (util/netpolicy.h): the table of special-use
 * ranges, allow lists, and reading addresses the way the resolver does.
 *
 * The table follows IANA's special-purpose registries (RFC 6890 and its
 * updates), keeping every range a request could use to reach something
 * that is not a public server: the ones the issue names and also the
 * reserved, benchmarking and documentation ranges (no public server lives
 * there, and a network that routes them is an internal one). Teredo
 * (2001::/32) is classified by its client's IPv4 address, the one its
 * relay forwards to. */
#include "util/netpolicy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/err.h"
#include "util/ascii.h"
#include "util/urlview.h"
#include "util/url.h"

#include "util/banned.h"

#define TOKEN_MAX 64 /* bytes of one network of an allow list */
#define HOST_MAX 256 /* bytes of a decoded IPv6 host that can still be an address */

/* The IPv4-mapped form of a.b.c.d and a prefix of it. */
#define V4(a, b, c, d, bits)                                                                       \
    {                                                                                              \
        {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}}, 96 + (bits)                      \
    }

enum embeds {
    EMBEDS_NONE,
    EMBEDS_NAT64,  /* 64:ff9b::a.b.c.d */
    EMBEDS_6TO4,   /* 2002:AABB:CCDD::/48 */
    EMBEDS_TEREDO, /* 2001:0:SERVER:flags:port:~CLIENT */
};

struct range {
    struct netpolicy_net net;
    const char *kind; /* NULL: classified by the IPv4 address it embeds */
    enum embeds embeds;
};

/* Most specific first: the first range that holds an address names it. */
static const struct range v4_ranges[] = {
    {V4(0, 0, 0, 0, 8), "unspecified", EMBEDS_NONE},
    {V4(10, 0, 0, 0, 8), "private", EMBEDS_NONE},
    {V4(100, 64, 0, 0, 10), "shared address space (CGNAT)", EMBEDS_NONE},
    {V4(127, 0, 0, 0, 8), "loopback", EMBEDS_NONE},
    {V4(169, 254, 169, 254, 32), "link-local (cloud metadata)", EMBEDS_NONE},
    {V4(169, 254, 0, 0, 16), "link-local", EMBEDS_NONE},
    {V4(172, 16, 0, 0, 12), "private", EMBEDS_NONE},
    {V4(192, 0, 0, 0, 24), "reserved (IETF protocol assignments)", EMBEDS_NONE},
    {V4(192, 0, 2, 0, 24), "reserved (documentation)", EMBEDS_NONE},
    {V4(192, 88, 99, 0, 24), "reserved (6to4 relay)", EMBEDS_NONE},
    {V4(192, 168, 0, 0, 16), "private", EMBEDS_NONE},
    {V4(198, 18, 0, 0, 15), "reserved (benchmarking)", EMBEDS_NONE},
    {V4(198, 51, 100, 0, 24), "reserved (documentation)", EMBEDS_NONE},
    {V4(203, 0, 113, 0, 24), "reserved (documentation)", EMBEDS_NONE},
    {V4(224, 0, 0, 0, 4), "multicast", EMBEDS_NONE},
    {V4(255, 255, 255, 255, 32), "broadcast", EMBEDS_NONE},
    {V4(240, 0, 0, 0, 4), "reserved", EMBEDS_NONE},
};

static const struct range v6_ranges[] = {
    {{{{0}}, 128}, "unspecified", EMBEDS_NONE},
    {{{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, 128}, "loopback", EMBEDS_NONE},
    {{{{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}}, 96}, "reserved (IPv4-translated)", EMBEDS_NONE},
    {{{{0}}, 96}, "reserved (IPv4-compatible)", EMBEDS_NONE},
    {{{{0, 0x64, 0xff, 0x9b}}, 96}, NULL, EMBEDS_NAT64},
    {{{{0, 0x64, 0xff, 0x9b, 0, 1}}, 48}, "private (local-use NAT64)", EMBEDS_NONE},
    {{{{0x01, 0x00}}, 64}, "reserved (discard-only)", EMBEDS_NONE},
    {{{{0x20, 0x01, 0, 0}}, 32}, NULL, EMBEDS_TEREDO},
    {{{{0x20, 0x01, 0x0d, 0xb8}}, 32}, "reserved (documentation)", EMBEDS_NONE},
    {{{{0x20, 0x02}}, 16}, NULL, EMBEDS_6TO4},
    {{{{0xfc}}, 7}, "private", EMBEDS_NONE},
    {{{{0xfe, 0x80}}, 10}, "link-local", EMBEDS_NONE},
    {{{{0xfe, 0xc0}}, 10}, "private (site-local)", EMBEDS_NONE},
    {{{{0xff}}, 8}, "multicast", EMBEDS_NONE},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

void netpolicy_init(struct netpolicy *p)
{
    memset(p, 0, sizeof *p);
}

/* Does net hold a? */
static bool net_holds(const struct netpolicy_net *net, const struct netpolicy_addr *a)
{
    unsigned whole = net->bits / 8, rest = net->bits % 8;
    if (memcmp(net->addr.b, a->b, whole) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (net->addr.b[whole] & mask) == (a->b[whole] & mask);
}

static bool is_v4(const struct netpolicy_addr *a)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a->b, mapped, sizeof mapped) == 0;
}

static void set_v4(struct netpolicy_addr *a, const uint8_t v4[4])
{
    memset(a->b, 0, 10);
    a->b[10] = a->b[11] = 0xff;
    memcpy(a->b + 12, v4, 4);
}

/* The range holding a; *via gets the IPv4 address a leads to when a embeds
 * one (else a itself). NULL for a public address. */
static const struct range *classify(const struct netpolicy_addr *a, struct netpolicy_addr *via)
{
    *via = *a;
    if (!is_v4(a)) {
        const struct range *r = NULL;
        for (size_t i = 0; i < N_OF(v6_ranges) && !r; i++) {
            if (net_holds(&v6_ranges[i].net, a))
                r = &v6_ranges[i];
        }
        if (!r || r->embeds == EMBEDS_NONE)
            return r;
        uint8_t v4[4];
        if (r->embeds == EMBEDS_NAT64) {
            memcpy(v4, a->b + 12, 4);
        } else if (r->embeds == EMBEDS_6TO4) {
            memcpy(v4, a->b + 2, 4);
        } else {
            for (int i = 0; i < 4; i++)
                v4[i] = (uint8_t)~a->b[12 + i];
        }
        set_v4(via, v4);
    }
    for (size_t i = 0; i < N_OF(v4_ranges); i++) {
        if (net_holds(&v4_ranges[i].net, via))
            return &v4_ranges[i];
    }
    return NULL;
}

const char *netpolicy_special_use(const struct netpolicy_addr *a)
{
    struct netpolicy_addr via;
    const struct range *r = classify(a, &via);
    return r ? r->kind : NULL;
}

void netpolicy_addr_format(const struct netpolicy_addr *a, char out[NETPOLICY_ADDR_TEXT])
{
    if (!(is_v4(a) ? inet_ntop(AF_INET, a->b + 12, out, NETPOLICY_ADDR_TEXT)
                   : inet_ntop(AF_INET6, a->b, out, NETPOLICY_ADDR_TEXT)))
        snprintf(out, NETPOLICY_ADDR_TEXT, "?");
}

bool netpolicy_permits(const struct netpolicy *p, const struct netpolicy_addr *a, char *why,
                       size_t why_size)
{
    struct netpolicy_addr via;
    const struct range *r = classify(a, &via);
    if (!r)
        return true;
    /* The allow list is matched against the address connected to itself:
     * allowing 127.0.0.0/8 does not allow 64:ff9b::7f00:1. */
    if (netpolicy_holds(p, a))
        return true;
    if (why && why_size > 0) {
        char shown[NETPOLICY_ADDR_TEXT], embedded[NETPOLICY_ADDR_TEXT];
        netpolicy_addr_format(a, shown);
        netpolicy_addr_format(&via, embedded);
        bool embeds = memcmp(via.b, a->b, sizeof a->b) != 0;
        snprintf(why, why_size, "refused: %s is %s%s%s%s; allow it with [outbound] allow_networks",
                 shown, r->kind, embeds ? " (it leads to " : "", embeds ? embedded : "",
                 embeds ? ")" : "");
    }
    return false;
}

bool netpolicy_holds(const struct netpolicy *p, const struct netpolicy_addr *a)
{
    for (size_t i = 0; p && i < p->n_allow; i++) {
        if (net_holds(&p->allow[i], a))
            return true;
    }
    return false;
}

bool netpolicy_addr_from_sockaddr(struct netpolicy_addr *out, const void *sa, size_t len)
{
    sa_family_t family;
    if (len < sizeof family)
        return false;
    memcpy(&family, (const char *)sa + offsetof(struct sockaddr, sa_family), sizeof family);
    if (family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        set_v4(out, (const uint8_t *)&in.sin_addr.s_addr);
        return true;
    }
    if (family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        memcpy(out->b, in6.sin6_addr.s6_addr, 16);
        return true;
    }
    return false;
}

/* ---- host literals ------------------------------------------------------ */

/* A URL host read byte by byte with its %XX escapes decoded, as libcurl
 * decodes a host before it resolves it. Read in place: a host of any
 * length ("0000...1" is an address too) needs no buffer. */
struct host_reader {
    const char *s;
    size_t n, i;
};

/* The next decoded byte, -1 at the end; *width gets the bytes it takes. */
static int host_peek(const struct host_reader *r, size_t *width)
{
    unsigned char byte;
    if (r->i >= r->n)
        return -1;
    *width = url_decode_byte(r->s + r->i, r->n - r->i, false, &byte);
    return byte;
}

static int host_take(struct host_reader *r)
{
    size_t width = 0;
    int c = host_peek(r, &width);
    r->i += width;
    return c;
}

static int host_next(const struct host_reader *r)
{
    size_t width;
    return host_peek(r, &width);
}

/* inet_aton's reading of the host (glibc's: strtoul with base 0 for each
 * part, every part starting with a digit), without its tolerance of
 * trailing blanks, which a URL host cannot hold, and with one trailing dot
 * allowed (the same name in DNS). */
static bool parse_v4_numbers(struct host_reader *r, uint8_t out[4])
{
    static const uint64_t last_max[4] = {0xffffffffu, 0xffffff, 0xffff, 0xff};
    uint64_t parts[3] = {0, 0, 0};
    size_t n_parts = 0;
    uint64_t val;
    for (;;) {
        int c = host_next(r);
        if (c < '0' || c > '9')
            return false;
        unsigned base = 10;
        if (c == '0') {
            base = 8;
            /* "0x" counts as hex only with a digit after it: strtoul reads
             * "0x" alone as 0 followed by an 'x', which then fails. */
            struct host_reader ahead = *r;
            host_take(&ahead);
            int x = host_take(&ahead), d = host_next(&ahead);
            if ((x == 'x' || x == 'X') && d >= 0 && ascii_hex_value((char)d) >= 0) {
                base = 16;
                *r = ahead;
            }
        }
        val = 0;
        for (;;) {
            c = host_next(r);
            int d = c >= 0 ? ascii_hex_value((char)c) : -1;
            if (d < 0 || (unsigned)d >= base)
                break;
            val = val * base + (unsigned)d;
            if (val > 0xffffffffu)
                return false;
            host_take(r);
        }
        if (c != '.')
            break;
        host_take(r);
        if (host_next(r) < 0)
            break; /* the trailing dot */
        if (n_parts == 3 || val > 0xff)
            return false;
        parts[n_parts++] = val;
    }
    if (host_next(r) >= 0 || val > last_max[n_parts])
        return false;
    uint32_t v = (uint32_t)val;
    for (size_t k = 0; k < n_parts; k++)
        v |= (uint32_t)parts[k] << (24 - 8 * k);
    out[0] = (uint8_t)(v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
    return true;
}

bool netpolicy_addr_from_host(struct netpolicy_addr *out, const char *host, size_t len)
{
    struct host_reader r = {host, len, 0}, scan = r;
    bool colon = false;
    int c;
    while ((c = host_take(&scan)) >= 0)
        colon = colon || c == ':';
    if (!colon) {
        uint8_t v4[4];
        if (!parse_v4_numbers(&r, v4))
            return false;
        set_v4(out, v4);
        return true;
    }
    /* IPv6 text is short: a longer host is no address. */
    char h[HOST_MAX];
    size_t n = 0;
    while ((c = host_take(&r)) >= 0) {
        if (c == 0 || n == sizeof h - 1)
            return false;
        h[n++] = (char)c;
    }
    h[n] = '\0';
    char *zone = strchr(h, '%');
    if (zone)
        *zone = '\0';
    return inet_pton(AF_INET6, h, out->b) == 1;
}

bool netpolicy_permits_url(const struct netpolicy *p, const char *url, char *why, size_t why_size)
{
    struct urlview v;
    struct netpolicy_addr a;
    urlview_parse(&v, url);
    if (!v.host.p || !netpolicy_addr_from_host(&a, v.host.p, v.host.n))
        return true;
    return netpolicy_permits(p, &a, why, why_size);
}

/* ---- allow lists ---------------------------------------------------------- */

/* For messages: the token, control bytes as '?'. */
static const char *token_show(const char *t, size_t n, char out[TOKEN_MAX + 4])
{
    size_t k = n > TOKEN_MAX ? TOKEN_MAX : n;
    for (size_t i = 0; i < k; i++)
        out[i] = (unsigned char)t[i] < 0x20 || t[i] == 0x7f ? '?' : t[i];
    if (n > TOKEN_MAX) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

/* One "ADDRESS[/BITS]" into net; a message in why when it is not one. */
static int parse_net(const char *t, size_t n, struct netpolicy_net *net, char *why, size_t why_size)
{
    char shown[TOKEN_MAX + 4], addr[TOKEN_MAX + 1];
    token_show(t, n, shown);
    const char *slash = memchr(t, '/', n);
    size_t an = slash ? (size_t)(slash - t) : n;
    if (n > TOKEN_MAX || an == 0)
        goto bad;
    memcpy(addr, t, an);
    addr[an] = '\0';
    bool v6 = memchr(addr, ':', an) != NULL;
    uint8_t v4[4];
    if (v6 ? inet_pton(AF_INET6, addr, net->addr.b) != 1 : inet_pton(AF_INET, addr, v4) != 1)
        goto bad;
    if (!v6)
        set_v4(&net->addr, v4);
    unsigned max = v6 ? 128 : 32, bits = max;
    if (slash) {
        size_t dn = n - an - 1;
        if (dn == 0 || dn > 3)
            goto bad_bits;
        bits = 0;
        for (size_t i = 0; i < dn; i++) {
            char c = slash[1 + i];
            if (c < '0' || c > '9')
                goto bad_bits;
            bits = bits * 10 + (unsigned)(c - '0');
        }
        if (bits > max)
            goto bad_bits;
    }
    net->bits = (v6 ? 0 : 96) + bits;
    /* Host bits must be zero: 10.1.2.3/8 most likely means a mistake. */
    struct netpolicy_net masked = *net;
    for (unsigned i = net->bits; i < 128; i++)
        masked.addr.b[i / 8] &= (uint8_t) ~(0x80 >> (i % 8));
    if (memcmp(masked.addr.b, net->addr.b, 16) != 0) {
        char fixed[NETPOLICY_ADDR_TEXT];
        netpolicy_addr_format(&masked.addr, fixed);
        snprintf(why, why_size, "'%s' has bits set past its prefix length: write %s/%u", shown,
                 fixed, bits);
        return ERR_PARSE;
    }
    return 0;
bad:
    snprintf(why, why_size, "'%s' is not a network (ADDRESS/BITS, e.g. 127.0.0.0/8 or ::1/128)",
             shown);
    return ERR_PARSE;
bad_bits:
    snprintf(why, why_size, "'%s': the prefix length must be a number from 0 to %u", shown, max);
    return ERR_PARSE;
}

int netpolicy_allow_parse(struct netpolicy *p, const char *text, size_t len, char *why,
                          size_t why_size)
{
    struct netpolicy next;
    netpolicy_init(&next);
    char scratch[NETPOLICY_WHY_MAX];
    if (!why || why_size == 0) {
        why = scratch;
        why_size = sizeof scratch;
    }
    why[0] = '\0';
    size_t i = 0;
    while (i < len) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == ','))
            i++;
        size_t start = i;
        while (i < len && text[i] != ' ' && text[i] != '\t' && text[i] != ',')
            i++;
        if (i == start)
            continue;
        if (next.n_allow == NETPOLICY_ALLOW_MAX) {
            snprintf(why, why_size, "more than %d networks", NETPOLICY_ALLOW_MAX);
            return ERR_TOO_LARGE;
        }
        int rc = parse_net(text + start, i - start, &next.allow[next.n_allow], why, why_size);
        if (rc < 0)
            return rc;
        next.n_allow++;
    }
    *p = next;
    return 0;
}
