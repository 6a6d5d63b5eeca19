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
     "http://user:***@feeds.example/rss?token=***&lang=en"},
    /* credential-named parameters, any case; other names kept */
    {"https://h/rss?apiKey=K1&Access_Token=K2&sig=K3&key=K4&keyword=x&tokens=y&auth",
     "https://h/rss?apiKey=***&Access_Token=***&sig=***&key=***&keyword=***&tokens=***&***",
     "https://h/rss?apiKey=***&Access_Token=***&sig=***&key=***&keyword=x&tokens=y&auth"},
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
    /* What `feeds list` shows (the password mode) for the feed URLs an
     * operator adds: no userinfo, a user alone (no password to mask), a
     * password with '@' or ':' percent-encoded or raw, an empty one, an
     * encoded user name, IPv6 hosts. */
    {"https://example.org/rss", "https://example.org/rss", "https://example.org/rss"},
    {"https://user@example.org/rss", "https://***@example.org/rss", "https://user@example.org/rss"},
    {"https://user:secret@example.org/rss", "https://***@example.org/rss",
     "https://user:***@example.org/rss"},
    {"https://user:p%40ss%3Aw0rd@example.org/rss", "https://***@example.org/rss",
     "https://user:***@example.org/rss"},
    {"https://user:pa:ss@example.org/rss", "https://***@example.org/rss",
     "https://user:***@example.org/rss"},
    {"https://user:@example.org/rss", "https://***@example.org/rss",
     "https://user:***@example.org/rss"},
    {"https://us%40er%3A1:pw@example.org/", "https://***@example.org/",
     "https://us%40er%3A1:***@example.org/"},
    {"http://user:pw@[2001:db8::1]:8080/rss", "http://***@[2001:db8::1]:8080/rss",
     "http://user:***@[2001:db8::1]:8080/rss"},
    {"http://[::1]/feed", "http://[::1]/feed", "http://[::1]/feed"},
    {"http://user:pw@[fe80::1%25eth0]/rss?a=1", "http://***@[fe80::1%25eth0]/rss?a=***",
     "http://user:***@[fe80::1%25eth0]/rss?a=1"},
    /* Malformed: whatever the authority holds before its last '@' is masked. */
    {"http://user:SECRET@[::1", "http://***@[::1", "http://user:***@[::1"},
    {"http://user:SECRET@", "http://***@", "http://user:***@"},
    {"http://:SECRET@host", "http://***@host", "http://:***@host"},
    {"http://@", "http://***@", "http://@"},
    {"http://user:SECRET@@@host:1:2/", "http://***@host:1:2/", "http://user:***@host:1:2/"},
    {"http://user:SECRET@[::1]junk/x", "http://***@[::1]junk/x", "http://user:***@[::1]junk/x"},
    {"http://u:SECRET@h#f@x", "http://***@h#***", "http://u:***@h#f@x"},
    {"http://u:SECRET@h?@x", "http://***@h?***", "http://u:***@h?@x"},
    {"http:///u:p@h", "http:///u:p@h", "http:///u:p@h"}, /* empty authority: all path */
    {"HTTP+X-1.a://u:SECRET@h", "HTTP+X-1.a://***@h", "HTTP+X-1.a://u:***@h"},
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
    /* The password mode (feeds list, store locations) too. */
    u = "https://reader:PASS%40WORD@[2001:db8::7]:8443/rss?password=PASSQ&lang=en";
    urlview_redacted(u, URLVIEW_REDACT_PASSWORDS, full, sizeof full);
    assert_string_equal(full, "https://reader:***@[2001:db8::7]:8443/rss?password=***&lang=en");
    for (size_t n = 1; n <= strlen(full) + 1; n++) {
        char *b = malloc(n);
        assert_non_null(b);
        urlview_redacted(u, URLVIEW_REDACT_PASSWORDS, b, n);
        assert_int_equal(strlen(b), n - 1 < strlen(full) ? n - 1 : strlen(full));
        assert_memory_equal(b, full, strlen(b));
        assert_null(strstr(b, "PASS"));
        free(b);
    }
}

/* Webhook URLs carry their secret in the path, where no name rule finds
 * it: the host-only view shows where a delivery goes and nothing else. */
static const struct {
    const char *url, *host;
} host_views[] = {
    {"https://hooks.slack.com/services/T000/B000/SECRETXYZ", "https://hooks.slack.com/..."},
    {"https://discord.com/api/webhooks/123/SECRETXYZ?wait=true", "https://discord.com/..."},
    {"https://x.webhook.office.com/webhookb2/SECRETXYZ@t/IncomingWebhook/SECRETXYZ/g",
     "https://x.webhook.office.com/..."},
    {"http://user:SECRETXYZ@127.0.0.1:8080/services/T000/B000/SECRETXYZ",
     "http://127.0.0.1:8080/..."},
    {"http://[2001:db8::1]:8443/SECRETXYZ", "http://[2001:db8::1]:8443/..."},
    {"http://h?token=SECRETXYZ", "http://h/..."},
    {"http://h#SECRETXYZ", "http://h/..."},
    {"http://h", "http://h"},
    {"http://h:1/", "http://h:1/..."},
    {"http://h/...", "http://h/..."},
    {"SECRETXYZ/no/scheme", "***"},
    {"http://u:SECRETXYZ@", "http://"},
    {"", ""},
};

static void a_webhook_url_shows_its_host_only(void **state)
{
    (void)state;
    char buf[256], again[256];
    for (size_t i = 0; i < sizeof host_views / sizeof host_views[0]; i++) {
        const char *u = host_views[i].url;
        urlview_redacted(u, URLVIEW_REDACT_HOST, buf, sizeof buf);
        if (strcmp(buf, host_views[i].host) != 0)
            fail_msg("host '%s': got '%s', want '%s'", u, buf, host_views[i].host);
        assert_null(strstr(buf, "SECRETXYZ"));
        urlview_redacted(buf, URLVIEW_REDACT_HOST, again, sizeof again);
        assert_string_equal(again, buf);
    }
    /* Cut to every size: a prefix of the whole, ASan-checked. */
    const char *u = "https://u:SECRETXYZ@hooks.slack.com:443/services/T0/B0/SECRETXYZ";
    char full[256];
    urlview_redacted(u, URLVIEW_REDACT_HOST, full, sizeof full);
    assert_string_equal(full, "https://hooks.slack.com:443/...");
    for (size_t n = 1; n <= strlen(full) + 1; n++) {
        char *b = malloc(n);
        assert_non_null(b);
        urlview_redacted(u, URLVIEW_REDACT_HOST, b, n);
        assert_int_equal(strlen(b), n - 1 < strlen(full) ? n - 1 : strlen(full));
        assert_memory_equal(b, full, strlen(b));
        free(b);
    }
}

/* Hostile bytes: every one of them, alone and around '@', ':', '[', ']',
 * with and without a scheme, in every length up to a few, masks without a
 * crash or a read or write out of bounds (ASan), and masking twice changes
 * nothing. The fuzz harness (fuzz_urlview) goes further. */
static void hostile_input_masks_without_harm(void **state)
{
    (void)state;
    static const char *const prefixes[] = {"", "http://", "http://u:p@", "x://[", "h://@:"};
    static const char alphabet[] = "@:[]/?#%&=x\x01\xff";
    const size_t k = sizeof alphabet - 1;
    char in[64], out[256], again[256];
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
        size_t plen = strlen(prefixes[p]);
        memcpy(in, prefixes[p], plen);
        for (size_t len = 0; len <= 3; len++) {
            size_t count = 1;
            for (size_t i = 0; i < len; i++)
                count *= k;
            /* Every string of len bytes over the alphabet after the prefix. */
            for (size_t code = 0; code < count; code++) {
                size_t c = code;
                for (size_t i = 0; i < len; i++, c /= k)
                    in[plen + i] = alphabet[c % k];
                in[plen + len] = '\0';
                static const enum urlview_redact modes[] = {
                    URLVIEW_REDACT_ALL, URLVIEW_REDACT_PASSWORDS, URLVIEW_REDACT_HOST};
                for (size_t how = 0; how < sizeof modes / sizeof modes[0]; how++) {
                    enum urlview_redact mode = modes[how];
                    urlview_redacted(in, mode, out, sizeof out);
                    assert_true(strlen(out) < sizeof out - 1);
                    urlview_redacted(out, mode, again, sizeof again);
                    if (strcmp(out, again) != 0)
                        fail_msg("'%s' masks to '%s', and again to '%s'", in, out, again);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_url_splits_into_its_parts),
        cmocka_unit_test(secrets_are_masked_and_the_rest_kept),
        cmocka_unit_test(a_cut_output_is_a_prefix_and_shows_no_secret),
        cmocka_unit_test(a_webhook_url_shows_its_host_only),
        cmocka_unit_test(hostile_input_masks_without_harm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
