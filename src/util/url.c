/* URL splitting (util/url.h). */
#include "util/url.h"

#include <string.h>

#include "util/ascii.h"

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
