/* Canonical article URLs, the duplicate key of the store (ingest/ingest.h:
 * ingest_url_canonical).
 *
 * The canonical form of an absolute http(s) URL is
 *   scheme "://" host [":" port] path ["?" query]
 * with: scheme and host in lower case (ASCII only; IDN bytes kept as
 * they are), userinfo dropped, a trailing dot of the host dropped, the port
 * written without leading zeros and dropped when it is the scheme's default
 * (80, 443) or empty, an empty path written "/", every other path kept
 * byte for byte, the fragment dropped, empty query parameters and tracking
 * parameters dropped (names compared case-insensitively: utm_* and the list
 * in tracking_params below), the remaining parameters kept in their order,
 * and no "?" when none remain; a space in path or query is written "%20". The function is
 * idempotent: canonical(canonical(x)) == canonical(x). Tabs and line breaks are removed wherever
 * they are (as browsers do) and spaces around the URL trimmed. A parameter name is matched after an
 * "amp;" prefix, for query strings written with "&amp;".
 * Rejected (ERR_INVALID): other schemes, relative URLs, other control bytes
 * anywhere, empty or malformed hosts, bad ports. Longer than
 * LIMIT_URL_BYTES: ERR_TOO_LARGE. */
#include "ingest/ingest.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "util/ascii.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/url.h"

#include "util/banned.h"

/* Parameters that only say where a reader came from. */
static const char *const tracking_params[] = {
    "fbclid", "gclid",  "gclsrc",    "dclid",       "msclkid",
    "yclid",  "twclid", "ttclid",    "igshid",      "mc_cid",
    "mc_eid", "_ga",    "_gl",       "ref_src",     "cmpid",
    "ocid",   "smid",   "at_medium", "at_campaign", "__twitter_impression",
};

static bool is_tracking_param(const char *name, size_t n)
{
    /* "&amp;utm_medium=": HTML-escaped separators, seen in real article urls */
    if (n > 4 && strncasecmp(name, "amp;", 4) == 0) {
        name += 4;
        n -= 4;
    }
    if (n >= 4 && strncasecmp(name, "utm_", 4) == 0)
        return true;
    for (size_t i = 0; i < sizeof tracking_params / sizeof tracking_params[0]; i++) {
        if (strlen(tracking_params[i]) == n && strncasecmp(name, tracking_params[i], n) == 0)
            return true;
    }
    return false;
}

/* RFC 3986 reg-name characters, plus bytes >= 0x80 (IDNs as UTF-8). */
static bool is_host_char(unsigned char c)
{
    if (c >= 0x80)
        return true;
    if (ascii_is_alpha((char)c) || ascii_is_digit((char)c))
        return true;
    return strchr("-._~%!$&'()*+,;=", c) != NULL && c != '\0';
}

/* Host (already split from userinfo and port) appended in lower case;
 * false when it is not a valid host. */
static bool put_host(struct buf *b, const char *h, size_t n)
{
    if (n > 0 && h[0] == '[') {
        /* IPv6 literal: hex digits, ':' and '.' (embedded IPv4) only. */
        if (n < 3 || h[n - 1] != ']')
            return false;
        for (size_t i = 1; i + 1 < n; i++) {
            if (ascii_hex_value(h[i]) < 0 && h[i] != ':' && h[i] != '.')
                return false;
        }
    } else {
        /* "example.com." names the same host as "example.com" */
        while (n > 0 && h[n - 1] == '.')
            n--;
        if (n == 0 || h[0] == '.')
            return false;
        for (size_t i = 0; i < n; i++) {
            if (!is_host_char((unsigned char)h[i]))
                return false;
        }
    }
    for (size_t i = 0; i < n; i++)
        buf_putc(b, ascii_lower(h[i]));
    return true;
}

/* Port digits (possibly empty) → port number or -1 (empty) or -2 (bad). */
static long parse_port(const char *p, size_t n)
{
    if (n == 0)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -2;
        v = v * 10 + (p[i] - '0');
        if (v > 65535)
            return -2;
    }
    return v;
}

/* Path and query bytes as they are, except a space: "%20", so that a
 * canonical URL never has blanks a later trim could remove. */
static void put_escaped(struct buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ')
            buf_puts(b, "%20");
        else
            buf_putc(b, s[i]);
    }
}

/* Query s[0..n) without its '?', filtered. */
static void put_query(struct buf *b, const char *s, size_t n)
{
    bool first = true;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && s[j] != '&')
            j++;
        size_t name_len = 0;
        while (i + name_len < j && s[i + name_len] != '=')
            name_len++;
        if (j > i && !is_tracking_param(s + i, name_len)) {
            buf_putc(b, first ? '?' : '&');
            put_escaped(b, s + i, j - i);
            first = false;
        }
        i = j + 1;
    }
}

int ingest_url_canonical(struct arena *a, const char *url, char **canon_out, char **domain_out)
{
    struct buf b, clean;
    int rc = ERR_INVALID;
    buf_init(&b, 3 * LIMIT_URL_BYTES + 64);
    buf_init(&clean, LIMIT_URL_BYTES);
    if (!url)
        goto out;
    /* Tabs and line breaks anywhere are dropped, as browsers do (WHATWG
     * URL); other control bytes make the URL invalid. */
    for (const char *q = url; *q; q++) {
        unsigned char c = (unsigned char)*q;
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c < 0x20 || c == 0x7f)
            goto out;
        buf_putc(&clean, (char)c);
    }
    if (buf_error(&clean)) {
        rc = buf_error(&clean);
        goto out;
    }
    url = clean.data ? clean.data : "";
    size_t n = clean.len;
    /* Spaces around a URL are never part of it (hand-edited JSON). */
    while (n > 0 && url[0] == ' ') {
        url++;
        n--;
    }
    while (n > 0 && url[n - 1] == ' ')
        n--;

    /* The fragment is dropped, and the userinfo (after the last '@'). */
    struct url_parts u;
    struct url_authority au;
    url_split(url, n, &u);
    if (!u.authority || !url_authority_split(u.authority, u.authority_len, &au))
        goto out;
    long default_port;
    if (u.scheme_len == 4 && strncasecmp(u.scheme, "http", 4) == 0) {
        buf_puts(&b, "http://");
        default_port = 80;
    } else if (u.scheme_len == 5 && strncasecmp(u.scheme, "https", 5) == 0) {
        buf_puts(&b, "https://");
        default_port = 443;
    } else {
        goto out;
    }
    size_t host_at = b.len;
    if (!put_host(&b, au.host, au.host_len))
        goto out;
    size_t host_len = b.len - host_at;
    if (au.port) {
        long pv = parse_port(au.port, au.port_len);
        if (pv == -2)
            goto out;
        if (pv >= 0 && pv != default_port)
            buf_printf(&b, ":%ld", pv);
    }
    if (u.path_len == 0)
        buf_putc(&b, '/');
    else
        put_escaped(&b, u.path, u.path_len);
    if (u.query)
        put_query(&b, u.query, u.query_len);

    rc = buf_error(&b);
    if (rc < 0)
        goto out;
    /* Escaped spaces can make it longer than its input. */
    rc = ERR_TOO_LARGE;
    if (b.len > LIMIT_URL_BYTES)
        goto out;
    rc = ERR_NOMEM;
    char *canon = arena_strndup(a, b.data, b.len);
    if (!canon)
        goto out;
    if (domain_out) {
        const char *h = canon + host_at;
        size_t hl = host_len;
        if (hl > 4 && strncmp(h, "www.", 4) == 0) {
            h += 4;
            hl -= 4;
        }
        char *dom = arena_strndup(a, h, hl);
        if (!dom)
            goto out;
        *domain_out = dom;
    }
    if (canon_out)
        *canon_out = canon;
    rc = 0;
out:
    buf_release(&b);
    buf_release(&clean);
    return rc;
}
