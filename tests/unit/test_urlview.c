/* util/urlview.h: a URL's parts, and URLs made fit for logs (userinfo and
 * query values masked), table-driven, with every output size tried so a
 * cut never shows a secret. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/urlview.h"

static void span_is(struct urlview_span s, const char *want)
{
    if (!want) {
        if (s.p)
            fail_msg("want absent, got '%.*s'", (int)s.n, s.p);
        return;
    }
    if (!s.p || s.n != strlen(want) || memcmp(s.p, want, s.n) != 0)
        fail_msg("want '%s', got '%.*s'", want, s.p ? (int)s.n : 6, s.p ? s.p : "absent");
}

static void a_url_splits_into_its_parts(void **state)
{
    (void)state;
    struct urlview v;
    urlview_parse(&v, "https://user:pw@Example.com:8443/a/b?x=1&y#frag");
    span_is(v.scheme, "https");
    span_is(v.userinfo, "user:pw");
    span_is(v.host, "Example.com");
    span_is(v.port, "8443");
    span_is(v.path, "/a/b");
    span_is(v.query, "x=1&y");
    span_is(v.fragment, "frag");

    urlview_parse(&v, "http://[::1]:80");
    span_is(v.userinfo, NULL);
    span_is(v.host, "::1");
    span_is(v.port, "80");
    span_is(v.path, "");
    span_is(v.query, NULL);

    /* The last '@' of the authority ends the userinfo; one in the path does not. */
    urlview_parse(&v, "http://u:p@ss@host/x@y");
    span_is(v.userinfo, "u:p@ss");
    span_is(v.host, "host");
    span_is(v.path, "/x@y");
    urlview_parse(&v, "http://host?a@b");
    span_is(v.userinfo, NULL);
    span_is(v.host, "host");
    span_is(v.query, "a@b");

    /* No scheme: a path. */
    urlview_parse(&v, "/var/lib/newsd?x#y");
    span_is(v.scheme, NULL);
    span_is(v.host, NULL);
    span_is(v.path, "/var/lib/newsd");
    span_is(v.query, "x");
    span_is(v.fragment, "y");
    urlview_parse(&v, "1http://x/");
    span_is(v.scheme, NULL);
    urlview_parse(&v, "http://[::1/");
    span_is(v.host, "[::1");
}

static const struct {
    const char *url;
    const char *all;       /* URLVIEW_REDACT_ALL */
    const char *passwords; /* URLVIEW_REDACT_PASSWORDS */
} redactions[] = {
    {"http://user:PASSWORD@feeds.example/rss?token=SECRET&lang=en",
     "http://***@feeds.example/rss?token=***&lang=***",
     "http://user:***@feeds.example/rss?token=SECRET&lang=en"},
    {"https://example.com/feed.xml", "https://example.com/feed.xml",
     "https://example.com/feed.xml"},
    {"https://TOKEN@example.com/", "https://***@example.com/", "https://TOKEN@example.com/"},
    {"http://u:p@ss@host/", "http://***@host/", "http://u:***@host/"},
    {"http://h/?a=&b&=c&&Password=x#t=1", "http://h/?a=&***&=***&&Password=***#***",
     "http://h/?a=&b&=c&&Password=***#t=1"},
    {"http://h/path?", "http://h/path?", "http://h/path?"},
    {"http://h/#", "http://h/#", "http://h/#"},
    {"postgresql://newsd:s3cret@db.example:5432/newsd", "postgresql://***@db.example:5432/newsd",
     "postgresql://newsd:***@db.example:5432/newsd"},
    {"postgres://db/newsd?user=a&password=p%40ss&x=1",
     "postgres://db/newsd?user=***&password=***&x=***",
     "postgres://db/newsd?user=a&password=***&x=1"},
    {"/var/lib/newsd", "/var/lib/newsd", "/var/lib/newsd"},
    {"", "", ""},
};

static void secrets_are_masked_and_the_rest_kept(void **state)
{
    (void)state;
    char buf[256];
    for (size_t i = 0; i < sizeof redactions / sizeof redactions[0]; i++) {
        const char *u = redactions[i].url;
        urlview_redacted(u, URLVIEW_REDACT_ALL, buf, sizeof buf);
        if (strcmp(buf, redactions[i].all) != 0)
            fail_msg("all '%s': got '%s', want '%s'", u, buf, redactions[i].all);
        urlview_redacted(u, URLVIEW_REDACT_PASSWORDS, buf, sizeof buf);
        if (strcmp(buf, redactions[i].passwords) != 0)
            fail_msg("passwords '%s': got '%s', want '%s'", u, buf, redactions[i].passwords);
        /* Masking what is masked changes nothing. */
        char again[256];
        urlview_redacted(redactions[i].all, URLVIEW_REDACT_ALL, again, sizeof again);
        assert_string_equal(again, redactions[i].all);
    }
    assert_string_equal(urlview_redacted(NULL, URLVIEW_REDACT_ALL, buf, sizeof buf), "");
    assert_ptr_equal(urlview_redacted("x", URLVIEW_REDACT_ALL, buf, 0), buf);
}

static void a_cut_output_is_a_prefix_and_shows_no_secret(void **state)
{
    (void)state;
    const char *u = "http://user:PASSWORD@feeds.example/rss?token=SECRET&lang=en#FRAG";
    char full[256];
    urlview_redacted(u, URLVIEW_REDACT_ALL, full, sizeof full);
    for (size_t n = 1; n <= strlen(full) + 1; n++) {
        char *b = malloc(n); /* exact size: ASan sees any write past it */
        assert_non_null(b);
        urlview_redacted(u, URLVIEW_REDACT_ALL, b, n);
        assert_int_equal(strlen(b), n - 1 < strlen(full) ? n - 1 : strlen(full));
        assert_memory_equal(b, full, strlen(b));
        assert_null(strstr(b, "PASS"));
        assert_null(strstr(b, "SEC"));
        assert_null(strstr(b, "FRAG"));
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_url_splits_into_its_parts),
        cmocka_unit_test(secrets_are_masked_and_the_rest_kept),
        cmocka_unit_test(a_cut_output_is_a_prefix_and_shows_no_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
