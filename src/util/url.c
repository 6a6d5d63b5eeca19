/* URL splitting and reference resolution (util/url.h). */
#include "util/url.h"

#include <string.h>

#include "util/ascii.h"
#include "util/buf.h"

#include "util/banned.h"

static bool is_scheme_char(char c)
{
    return ascii_is_alpha(c) || ascii_is_digit(c) || c == '+' || c == '-' || c == '.';
}

/* Index of the first byte of s[i..n) that is one of the (NUL-free) stops,
 * or n. */
static size_t span_until(const char *s, size_t i, size_t n, const char *stops)
{
    while (i < n && (s[i] == '\0' || !strchr(stops, s[i])))
        i++;
    return i;
}

void url_split(const char *s, size_t n, struct url_parts *out)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    if (n > 0 && ascii_is_alpha(s[0])) {
        size_t j = 1;
        while (j < n && is_scheme_char(s[j]))
            j++;
        if (j < n && s[j] == ':') {
            out->scheme = s;
            out->scheme_len = j;
            i = j + 1;
        }
    }
    if (n - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        size_t j = span_until(s, i + 2, n, "/?#");
        out->authority = s + i + 2;
        out->authority_len = j - i - 2;
        i = j;
    }
    size_t j = span_until(s, i, n, "?#");
    out->path = s + i;
    out->path_len = j - i;
    i = j;
    if (i < n && s[i] == '?') {
        j = span_until(s, i + 1, n, "#");
        out->query = s + i + 1;
        out->query_len = j - i - 1;
        i = j;
    }
    if (i < n && s[i] == '#') {
        out->fragment = s + i + 1;
        out->fragment_len = n - i - 1;
    }
}

bool url_authority_split(const char *a, size_t n, struct url_authority *out)
{
    memset(out, 0, sizeof *out);
    size_t h = n;
    while (h > 0 && a[h - 1] != '@')
        h--;
    if (h > 0) {
        out->userinfo = a;
        out->userinfo_len = h - 1;
    }
    const char *host = a + h;
    size_t rest = n - h;
    out->host = host;
    out->host_len = rest;
    if (rest > 0 && host[0] == '[') {
        const char *rb = memchr(host, ']', rest);
        if (!rb)
            return false;
        out->host_len = (size_t)(rb + 1 - host);
        if (out->host_len == rest)
            return true;
        if (host[out->host_len] != ':')
            return false;
    } else {
        const char *colon = memchr(host, ':', rest);
        if (!colon)
            return true;
        out->host_len = (size_t)(colon - host);
    }
    out->port = host + out->host_len + 1;
    out->port_len = rest - out->host_len - 1;
    return true;
}

/* ---- RFC 3986 section 5.2 reference resolution ------------------------------
 * Written here rather than taken from xmlBuildURI, which decodes and
 * re-encodes components ("%26" comes back as "&") and so changes the URLs
 * that must stay byte-identical duplicate keys. */

static bool has_prefix(const char *p, size_t n, const char *pre)
{
    size_t k = strlen(pre);
    return n >= k && memcmp(p, pre, k) == 0;
}

static bool equals(const char *p, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* Drop the last segment (and its '/') of the output path. */
static void path_pop(struct buf *out, size_t start)
{
    size_t n = out->len;
    while (n > start && out->data[n - 1] != '/')
        n--;
    if (n > start)
        n--;
    out->len = n;
    out->data[n] = '\0';
}

/* RFC 3986 5.2.4 remove_dot_segments, appending to out from out->len. */
static void path_append_clean(struct buf *out, const char *in, size_t n)
{
    size_t start = out->len;
    if (buf_grow(out, n + 1) < 0)
        return;
    while (n > 0) {
        if (has_prefix(in, n, "../")) {
            in += 3, n -= 3;
        } else if (has_prefix(in, n, "./")) {
            in += 2, n -= 2;
        } else if (has_prefix(in, n, "/./")) {
            in += 2, n -= 2;
        } else if (equals(in, n, "/.")) {
            buf_putc(out, '/');
            n = 0;
        } else if (has_prefix(in, n, "/../")) {
            in += 3, n -= 3;
            path_pop(out, start);
        } else if (equals(in, n, "/..")) {
            path_pop(out, start);
            buf_putc(out, '/');
            n = 0;
        } else if (equals(in, n, ".") || equals(in, n, "..")) {
            n = 0;
        } else {
            size_t k = (in[0] == '/') ? 1 : 0;
            while (k < n && in[k] != '/')
                k++;
            buf_append(out, in, k);
            in += k, n -= k;
        }
    }
}

void url_resolve(struct buf *out, const char *ref, const char *base)
{
    struct url_parts r, b;
    url_split(ref, strlen(ref), &r);
    url_split(base, strlen(base), &b);
    const struct url_parts *auth_from, *query_from;
    const char *scheme = r.scheme ? r.scheme : b.scheme;
    size_t scheme_len = r.scheme ? r.scheme_len : b.scheme_len;
    buf_append(out, scheme, scheme_len);
    buf_putc(out, ':');
    if (r.scheme || r.authority) {
        auth_from = &r;
        query_from = &r;
    } else {
        auth_from = &b;
        query_from = (r.path_len == 0 && !r.query) ? &b : &r;
    }
    if (auth_from->authority) {
        buf_puts(out, "//");
        buf_append(out, auth_from->authority, auth_from->authority_len);
    }
    if (r.scheme || r.authority || (r.path_len > 0 && r.path[0] == '/')) {
        path_append_clean(out, r.path, r.path_len);
    } else if (r.path_len == 0) {
        buf_append(out, b.path, b.path_len);
    } else {
        /* merge: the base path up to its last '/', then the reference */
        struct buf m;
        buf_init(&m, 0);
        if (b.authority && b.path_len == 0) {
            buf_putc(&m, '/');
        } else {
            size_t k = b.path_len;
            while (k > 0 && b.path[k - 1] != '/')
                k--;
            buf_append(&m, b.path, k);
        }
        buf_append(&m, r.path, r.path_len);
        if (buf_error(&m))
            out->err = buf_error(&m);
        else
            path_append_clean(out, m.data, m.len);
        buf_release(&m);
    }
    if (query_from->query) {
        buf_putc(out, '?');
        buf_append(out, query_from->query, query_from->query_len);
    }
    if (r.fragment) {
        buf_putc(out, '#');
        buf_append(out, r.fragment, r.fragment_len);
    }
}

void url_query_start(struct url_query *q, const char *s, size_t n, const char *seps)
{
    *q = (struct url_query){.s = s, .seps = seps ? seps : "&", .n = n, .at = 0, .done = 0};
}

bool url_query_next(struct url_query *q, struct url_param *out)
{
    if (q->done)
        return false;
    size_t i = q->at, j = i;
    while (j < q->n && !memchr(q->seps, q->s[j], strlen(q->seps)))
        j++;
    const char *eq = memchr(q->s + i, '=', j - i);
    *out = (struct url_param){
        .p = q->s + i,
        .n = j - i,
        .name_len = eq ? (size_t)(eq - (q->s + i)) : j - i,
        .value = eq ? eq + 1 : NULL,
        .value_len = eq ? (size_t)(q->s + j - (eq + 1)) : 0,
        .sep = j < q->n ? q->s[j] : '\0',
    };
    if (j < q->n)
        q->at = j + 1;
    else
        q->done = 1;
    return true;
}

size_t url_decode_byte(const char *s, size_t n, bool plus_is_space, unsigned char *byte)
{
    int hi, lo;
    if (s[0] == '%' && n > 2 && (hi = ascii_hex_value(s[1])) >= 0 &&
        (lo = ascii_hex_value(s[2])) >= 0) {
        *byte = (unsigned char)(hi * 16 + lo);
        return 3;
    }
    *byte = plus_is_space && s[0] == '+' ? ' ' : (unsigned char)s[0];
    return 1;
}

size_t url_decode(char *out, const char *s, size_t n, bool plus_is_space)
{
    size_t i = 0, j = 0;
    while (i < n) {
        unsigned char c;
        i += url_decode_byte(s + i, n - i, plus_is_space, &c);
        out[j++] = (char)c;
    }
    return j;
}
