/* URL parts and redaction (util/urlview.h). The authority ends at the first
 * '/', '?' or '#' after "://"; its userinfo ends at the LAST '@' in it, so a
 * password with a raw '@' ("u:p@ss@host") is masked whole rather than
 * half-shown. */
#include "util/urlview.h"
#include "util/url.h"

#include <string.h>
#include <strings.h>

#include "util/banned.h"

static struct urlview_span span(const char *p, size_t n)
{
    return (struct urlview_span){p, n};
}

/* The split itself is util/url.h's (the one URL splitter); this is its
 * view for redaction and policy checks: an authority only after
 * "scheme://", the host without an IPv6 literal's brackets, and a URL
 * without "scheme://" all path up to its '?' or '#'. */
void urlview_parse(struct urlview *out, const char *url)
{
    memset(out, 0, sizeof *out);
    struct url_parts u;
    url_split(url, strlen(url), &u);
    const char *p = url;
    if (u.scheme && u.authority && u.scheme_len > 0) {
        out->scheme = span(u.scheme, u.scheme_len);
        struct url_authority a;
        bool closed = url_authority_split(u.authority, u.authority_len, &a);
        if (a.userinfo)
            out->userinfo = span(a.userinfo, a.userinfo_len);
        const char *h = a.host;
        size_t hn = a.host_len;
        if (closed && hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
            h++;
            hn -= 2;
        }
        out->host = span(h, hn);
        if (a.port)
            out->port = span(a.port, a.port_len);
        p = u.path;
    }
    size_t pn = strcspn(p, "?#");
    if (pn > 0 || p[pn] == '\0')
        out->path = span(p, pn);
    p += pn;
    if (*p == '?') {
        size_t qn = strcspn(p + 1, "#");
        out->query = span(p + 1, qn);
        p += 1 + qn;
    }
    if (*p == '#')
        out->fragment = span(p + 1, strlen(p + 1));
}

/* The output: bytes past the buffer are dropped, the result always ends
 * in a NUL. */
struct out {
    char *buf;
    size_t n, used;
};

static void put(struct out *o, const char *p, size_t len)
{
    if (o->used + 1 >= o->n)
        return;
    if (len > o->n - 1 - o->used)
        len = o->n - 1 - o->used;
    memcpy(o->buf + o->used, p, len);
    o->used += len;
    o->buf[o->used] = '\0';
}

static void put_str(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_span(struct out *o, struct urlview_span s)
{
    put(o, s.p, s.n);
}

/* Query parameter names that carry a credential, compared without case:
 * masked in the password mode too (feed services put their tokens there). */
static const char *const credential_names[] = {
    "password", "passwd", "pass",   "pwd",     "sslpassword", "token", "access_token",
    "auth",     "key",    "apikey", "api_key", "secret",      "sig",   "signature",
};

static bool credential_name(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof credential_names / sizeof credential_names[0]; i++) {
        if (strlen(credential_names[i]) == n && strncasecmp(name, credential_names[i], n) == 0)
            return true;
    }
    return false;
}

/* The query's parameters, each value (or valueless parameter) masked as
 * the mode says. */
static void put_query(struct out *o, struct urlview_span q, enum urlview_redact how)
{
    struct url_query walk;
    struct url_param prm;
    url_query_start(&walk, q.p, q.n, "&");
    while (url_query_next(&walk, &prm)) {
        bool secret = how == URLVIEW_REDACT_ALL ? prm.n > 0 && !(prm.value && prm.value_len == 0)
                                                : prm.value && credential_name(prm.p, prm.name_len);
        if (!secret)
            put(o, prm.p, prm.n);
        else if (prm.value)
            put(o, prm.p, prm.name_len + 1);
        if (secret)
            put_str(o, "***");
        if (prm.sep)
            put_str(o, "&");
    }
}

/* The host-only view (URLVIEW_REDACT_HOST) of v, parsed from url. */
static void put_host_only(struct out *o, const char *url, const struct urlview *v)
{
    if (!v->scheme.p) {
        if (url[0])
            put_str(o, "***");
        return;
    }
    put(o, url, (size_t)(v->scheme.p + v->scheme.n + 3 - url));
    /* An IPv6 literal gets back the brackets the view took off. */
    bool bracketed =
        v->host.p && v->host.p > url && v->host.p[-1] == '[' && v->host.p[v->host.n] == ']';
    if (bracketed)
        put_str(o, "[");
    put_span(o, v->host);
    if (bracketed)
        put_str(o, "]");
    if (v->port.p) {
        put_str(o, ":");
        put_span(o, v->port);
    }
    if (v->path.n > 0 || v->query.p || v->fragment.p)
        put_str(o, "/...");
}

char *urlview_redacted(const char *url, enum urlview_redact how, char *buf, size_t n)
{
    struct out o = {buf, n, 0};
    if (n == 0)
        return buf;
    buf[0] = '\0';
    if (!url)
        return buf;
    struct urlview v;
    urlview_parse(&v, url);
    if (how == URLVIEW_REDACT_HOST) {
        put_host_only(&o, url, &v);
        return buf;
    }
    const char *rest = url; /* what follows the masked userinfo */
    if (v.scheme.p) {
        rest = v.scheme.p + v.scheme.n + 3;
        put(&o, url, (size_t)(rest - url));
    }
    if (v.userinfo.p) {
        const char *colon = memchr(v.userinfo.p, ':', v.userinfo.n);
        if (how == URLVIEW_REDACT_PASSWORDS && !colon) {
            put_span(&o, v.userinfo);
        } else if (how == URLVIEW_REDACT_PASSWORDS) {
            put(&o, v.userinfo.p, (size_t)(colon + 1 - v.userinfo.p));
            put_str(&o, "***");
        } else {
            put_str(&o, "***");
        }
        put_str(&o, "@");
        rest = v.userinfo.p + v.userinfo.n + 1;
    }
    /* Host, port and path as they are. */
    const char *tail = v.query.p ? v.query.p - 1 : v.fragment.p ? v.fragment.p - 1 : NULL;
    put(&o, rest, tail ? (size_t)(tail - rest) : strlen(rest));
    if (v.query.p) {
        put_str(&o, "?");
        put_query(&o, v.query, how);
    }
    if (v.fragment.p) {
        put_str(&o, "#");
        if (how == URLVIEW_REDACT_ALL && v.fragment.n > 0)
            put_str(&o, "***");
        else
            put_span(&o, v.fragment);
    }
    return buf;
}
