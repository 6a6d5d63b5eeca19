/* libFuzzer harness: ingest_url_canonical and util/url.h's splitter.
 * Invariants: an accepted URL's canonical form is accepted again and
 * unchanged (idempotence), with the same domain; it is http(s), has no
 * fragment and no blanks. Any bytes split into components that join back
 * to those bytes, and an authority's parts lie inside it, in order.
 * url_resolve against an absolute base: a reference without a scheme takes
 * the base's, one without an authority the base's too, and the result
 * resolved again against any base is itself (it is absolute, its dot
 * segments gone). The query walker's pieces, each with its separator,
 * join back to the query, each name ending at its piece's first '=';
 * decoding never lengthens, and a byte with no '%' or '+' stays as it is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/url.h"

/* Append [p, p+n) (p may be NULL when n is 0) at *at. */
static void put(char *out, size_t *at, const char *p, size_t n)
{
    if (n)
        memcpy(out + *at, p, n);
    *at += n;
}

static void check_split(const char *s, size_t n)
{
    struct url_parts u;
    url_split(s, n, &u);
    char *joined = malloc(n + 8);
    if (!joined)
        return;
    size_t at = 0;
    if (u.scheme) {
        put(joined, &at, u.scheme, u.scheme_len);
        put(joined, &at, ":", 1);
    }
    if (u.authority) {
        put(joined, &at, "//", 2);
        put(joined, &at, u.authority, u.authority_len);
    }
    put(joined, &at, u.path, u.path_len);
    if (u.query) {
        put(joined, &at, "?", 1);
        put(joined, &at, u.query, u.query_len);
    }
    if (u.fragment) {
        put(joined, &at, "#", 1);
        put(joined, &at, u.fragment, u.fragment_len);
    }
    if (at != n || (n && memcmp(joined, s, n) != 0))
        abort();
    free(joined);
    if (u.authority) {
        struct url_authority a;
        url_authority_split(u.authority, u.authority_len, &a);
        const char *end = u.authority + u.authority_len;
        if (a.host < u.authority || a.host + a.host_len > end)
            abort();
        if (a.userinfo && (a.userinfo != u.authority || a.userinfo + a.userinfo_len >= a.host))
            abort();
        if (a.port && (a.port != a.host + a.host_len + 1 || a.port + a.port_len != end))
            abort();
    }
}

static void check_resolve(const char *ref)
{
    static const char base[] = "https://h.example/a/b/c?q";
    struct buf out = BUF_INIT, again = BUF_INIT;
    struct url_parts r;
    url_split(ref, strlen(ref), &r);
    url_resolve(&out, ref, base);
    if (buf_error(&out))
        abort();
    if (!r.scheme && strncmp(out.data, "https://", 8) != 0)
        abort();
    if (!r.scheme && !r.authority && strncmp(out.data, "https://h.example", 17) != 0)
        abort();
    url_resolve(&again, out.data, "http://other.example/x/");
    if (buf_error(&again) || strcmp(again.data, out.data) != 0)
        abort();
    buf_release(&out);
    buf_release(&again);
}

static void check_query(const char *s, size_t n)
{
    char *joined = malloc(n + 1), *decoded = malloc(n + 1);
    if (!joined || !decoded)
        goto out;
    size_t at = 0;
    struct url_query q;
    struct url_param prm;
    url_query_start(&q, s, n, "&;");
    while (url_query_next(&q, &prm)) {
        if (prm.p != s + at || at + prm.n > n || prm.name_len > prm.n ||
            memchr(prm.p, '=', prm.name_len) ||
            (prm.value ? prm.value != prm.p + prm.name_len + 1 ||
                             prm.name_len + 1 + prm.value_len != prm.n
                       : prm.name_len != prm.n))
            abort();
        put(joined, &at, prm.p, prm.n);
        if (prm.sep)
            put(joined, &at, &prm.sep, 1);
        else if (at != n)
            abort(); /* the last piece ends the query */
    }
    if (at != n || (n && memcmp(joined, s, n) != 0))
        abort();
    size_t len = url_decode(decoded, s, n, true);
    if (len > n)
        abort();
    if (!memchr(s, '%', n) && !memchr(s, '+', n) && (len != n || (n && memcmp(decoded, s, n))))
        abort();
out:
    free(joined);
    free(decoded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_split((const char *)data, size);
    check_query((const char *)data, size);
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* a NUL inside simply ends the string */
    check_resolve(s);
    struct arena a;
    arena_init(&a, 1 << 20);
    char *canon, *domain;
    if (ingest_url_canonical(&a, s, &canon, &domain) == 0) {
        char *again, *dom2;
        if (ingest_url_canonical(&a, canon, &again, &dom2) != 0)
            abort();
        if (strcmp(again, canon) != 0 || strcmp(dom2, domain) != 0)
            abort();
        if (strncmp(canon, "http://", 7) != 0 && strncmp(canon, "https://", 8) != 0)
            abort();
        if (strpbrk(canon, "# \t\r\n") || domain[0] == '\0' || !strstr(canon, domain))
            abort();
    }
    arena_release(&a);
    free(s);
    return 0;
}
