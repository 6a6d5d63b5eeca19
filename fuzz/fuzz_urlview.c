/* libFuzzer harness: util/urlview.h on arbitrary strings. Invariants: the
 * parts are views in order inside the string; a URL masked for logs is
 * masked already (masking it again changes nothing), keeps no userinfo
 * but "***", no query value but "***" and no fragment but "***"; a cut
 * output is a prefix of the whole one. The password mode (feeds list,
 * store locations) likewise: masked already, a password in the userinfo
 * and every password= value "***", a cut a prefix. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "util/urlview.h"

static void span_inside(struct urlview_span sp, const char *s, size_t n, const char **last)
{
    if (!sp.p)
        return;
    CHECK(sp.p >= s && sp.p + sp.n <= s + n);
    CHECK(sp.p >= *last);
    *last = sp.p + sp.n;
}

static void masked(const char *out)
{
    struct urlview v;
    urlview_parse(&v, out);
    CHECK(!v.userinfo.p || (v.userinfo.n == 3 && !memcmp(v.userinfo.p, "***", 3)));
    CHECK(!v.fragment.p || v.fragment.n == 0 ||
          (v.fragment.n == 3 && !memcmp(v.fragment.p, "***", 3)));
    for (size_t i = 0; v.query.p && i <= v.query.n;) {
        const char *param = v.query.p + i;
        size_t len = 0;
        while (i + len < v.query.n && param[len] != '&')
            len++;
        const char *eq = memchr(param, '=', len);
        const char *value = eq ? eq + 1 : param;
        size_t vn = (size_t)(param + len - value);
        CHECK(vn == 0 || (vn == 3 && !memcmp(value, "***", 3)));
        i += len + 1;
    }
}

static bool is_stars(const char *p, size_t n)
{
    return n == 3 && !memcmp(p, "***", 3);
}

static void passwords_masked(const char *out)
{
    struct urlview v;
    urlview_parse(&v, out);
    const char *colon = v.userinfo.p ? memchr(v.userinfo.p, ':', v.userinfo.n) : NULL;
    if (colon)
        CHECK(is_stars(colon + 1, (size_t)(v.userinfo.p + v.userinfo.n - colon - 1)));
    for (size_t i = 0; v.query.p && i <= v.query.n;) {
        const char *param = v.query.p + i;
        size_t len = 0;
        while (i + len < v.query.n && param[len] != '&')
            len++;
        if (len >= 9 && param[8] == '=' && strncasecmp(param, "password", 8) == 0)
            CHECK(is_stars(param + 9, len - 9));
        i += len + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    size_t n = strlen(s); /* a NUL inside ends the string */
    struct urlview v;
    urlview_parse(&v, s);
    const char *last = s;
    span_inside(v.scheme, s, n, &last);
    span_inside(v.userinfo, s, n, &last);
    span_inside(v.host, s, n, &last);
    span_inside(v.port, s, n, &last);
    span_inside(v.path, s, n, &last);
    span_inside(v.query, s, n, &last);
    span_inside(v.fragment, s, n, &last);

    size_t cap = 4 * n + 16; /* masking at most triples a part, plus "***@" */
    char *out = malloc(cap), *again = malloc(cap), *cut = malloc(n / 2 + 1);
    if (out && again && cut) {
        urlview_redacted(s, URLVIEW_REDACT_ALL, out, cap);
        CHECK(strlen(out) < cap - 1);
        masked(out);
        urlview_redacted(out, URLVIEW_REDACT_ALL, again, cap);
        CHECK(strcmp(out, again) == 0);
        urlview_redacted(s, URLVIEW_REDACT_ALL, cut, n / 2 + 1);
        CHECK(strncmp(cut, out, strlen(cut)) == 0);
        urlview_redacted(s, URLVIEW_REDACT_PASSWORDS, out, cap);
        CHECK(strlen(out) < cap - 1);
        passwords_masked(out);
        urlview_redacted(out, URLVIEW_REDACT_PASSWORDS, again, cap);
        CHECK(strcmp(out, again) == 0);
        urlview_redacted(s, URLVIEW_REDACT_PASSWORDS, cut, n / 2 + 1);
        CHECK(strncmp(cut, out, strlen(cut)) == 0);
        /* Host only (webhooks): no userinfo, query or fragment after "://". */
        urlview_redacted(s, URLVIEW_REDACT_HOST, out, cap);
        CHECK(strlen(out) < cap - 1);
        const char *auth = strstr(out, "://");
        CHECK(!auth || strpbrk(auth, "@?#") == NULL);
        urlview_redacted(out, URLVIEW_REDACT_HOST, again, cap);
        CHECK(strcmp(out, again) == 0);
        urlview_redacted(s, URLVIEW_REDACT_HOST, cut, n / 2 + 1);
        CHECK(strncmp(cut, out, strlen(cut)) == 0);
    }
    free(out);
    free(again);
    free(cut);
    free(s);
    return 0;
}
