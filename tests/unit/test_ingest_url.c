/* ingest_url_canonical: the duplicate key of articles, and their domain.
 * (util/url.h, the splitter it builds on: tests/unit/test_util_url.c.) */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/ingest.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/url.h"

struct url_case {
    const char *in;
    const char *canon; /* NULL: rejected with rc */
    const char *domain;
    int rc;
};

static const struct url_case cases[] = {
    /* already canonical */
    {"https://www.bbc.co.uk/news/world-65774434", "https://www.bbc.co.uk/news/world-65774434",
     "bbc.co.uk", 0},
    {"http://example.com/", "http://example.com/", "example.com", 0},
    /* scheme and host case; path case kept */
    {"HTTPS://WWW.Example.COM/Path/To/Page.HTML", "https://www.example.com/Path/To/Page.HTML",
     "example.com", 0},
    {"HtTp://News.Example.org", "http://news.example.org/", "news.example.org", 0},
    /* empty path becomes "/"; others kept as they are (trailing slash too) */
    {"https://example.com", "https://example.com/", "example.com", 0},
    {"https://example.com/a/", "https://example.com/a/", "example.com", 0},
    {"https://example.com?x=1", "https://example.com/?x=1", "example.com", 0},
    /* default ports dropped, others kept without leading zeros */
    {"http://example.com:80/a", "http://example.com/a", "example.com", 0},
    {"https://example.com:443/a", "https://example.com/a", "example.com", 0},
    {"http://example.com:443/a", "http://example.com:443/a", "example.com", 0},
    {"https://example.com:80/a", "https://example.com:80/a", "example.com", 0},
    {"http://example.com:8080/a", "http://example.com:8080/a", "example.com", 0},
    {"http://example.com:0080/a", "http://example.com/a", "example.com", 0},
    {"http://example.com:/a", "http://example.com/a", "example.com", 0},
    /* fragment dropped */
    {"https://example.com/a#section-2", "https://example.com/a", "example.com", 0},
    {"https://example.com/a?b=1#frag?c=2", "https://example.com/a?b=1", "example.com", 0},
    {"https://example.com#", "https://example.com/", "example.com", 0},
    /* tracking parameters dropped, others kept in order */
    {"https://example.com/a?utm_source=rss&utm_medium=feed", "https://example.com/a", "example.com",
     0},
    {"https://example.com/a?id=7&utm_source=rss&page=2", "https://example.com/a?id=7&page=2",
     "example.com", 0},
    {"https://example.com/a?z=1&UTM_Campaign=x&a=2&fbclid=abc&gclid=1&msclkid=2",
     "https://example.com/a?z=1&a=2", "example.com", 0},
    {"https://example.com/a?mc_cid=1&mc_eid=2&igshid=3&_ga=4&ref_src=5&dclid=6&cmpid=7",
     "https://example.com/a", "example.com", 0},
    {"https://example.com/a?utm_source", "https://example.com/a", "example.com", 0},
    {"https://example.com/a?utm=1&utmx=2&my_utm_source=3",
     "https://example.com/a?utm=1&utmx=2&my_utm_source=3", "example.com", 0},
    /* empty parameters and a lone '?' dropped */
    {"https://example.com/a?", "https://example.com/a", "example.com", 0},
    {"https://example.com/a?&&b=1&&", "https://example.com/a?b=1", "example.com", 0},
    {"https://example.com/a?b", "https://example.com/a?b", "example.com", 0},
    {"https://example.com/a?b=", "https://example.com/a?b=", "example.com", 0},
    /* userinfo dropped; the last '@' ends it */
    {"https://user:pass@Example.com/a", "https://example.com/a", "example.com", 0},
    {"https://a@b@www.example.com/a", "https://www.example.com/a", "example.com", 0},
    {"https://example.com/a@b", "https://example.com/a@b", "example.com", 0},
    /* IPv6 literals */
    {"http://[::1]/", "http://[::1]/", "[::1]", 0},
    {"http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x", "[2001:db8::1]", 0},
    {"https://[::ffff:192.0.2.1]:443", "https://[::ffff:192.0.2.1]/", "[::ffff:192.0.2.1]", 0},
    /* host trailing dot, www. only when it is a prefix */
    {"https://www.example.com./a", "https://www.example.com/a", "example.com", 0},
    {"https://example.com../a", "https://example.com/a", "example.com", 0},
    {"https://wwwexample.com/", "https://wwwexample.com/", "wwwexample.com", 0},
    {"https://www2.example.com/", "https://www2.example.com/", "www2.example.com", 0},
    {"https://WWW.EXAMPLE.COM/", "https://www.example.com/", "example.com", 0},
    /* non-ASCII hosts and paths kept as bytes */
    {"https://b\xc3\xbc\x63her.de/\xc3\xa4", "https://b\xc3\xbc\x63her.de/\xc3\xa4",
     "b\xc3\xbc\x63her.de", 0},
    /* spaces inside path and query are escaped; blanks around trimmed */
    {"  https://example.com/a b?c=d e  ", "https://example.com/a%20b?c=d%20e", "example.com", 0},
    {"https://example.com/a #x", "https://example.com/a%20", "example.com", 0},
    /* tabs and line breaks vanish (WHATWG); a real irishtimes.com url has tabs */
    {"https://exa\tmple.com/", "https://example.com/", "example.com", 0},
    {"https://example.com/a\nb\r", "https://example.com/ab", "example.com", 0},
    {"https://www.irishtimes.com/\t\t\t/news/a-1.3915503",
     "https://www.irishtimes.com//news/a-1.3915503", "irishtimes.com", 0},
    /* "&amp;" separators of HTML-escaped query strings */
    {"https://kompas.com/read/1?utm_source=MSN&amp;utm_medium=host&amp;id=3",
     "https://kompas.com/read/1?amp;id=3", "kompas.com", 0},
    /* real NewsAPI url shapes */
    {"https://news.google.com/__i/rss/rd/articles/CBMiK2h0dHBzOi8vd3d3?oc=5",
     "https://news.google.com/__i/rss/rd/articles/CBMiK2h0dHBzOi8vd3d3?oc=5", "news.google.com", 0},
    /* rejected */
    {"", NULL, NULL, ERR_INVALID},
    {"example.com/a", NULL, NULL, ERR_INVALID},
    {"//example.com/a", NULL, NULL, ERR_INVALID},
    {"/news/a", NULL, NULL, ERR_INVALID},
    {"ftp://example.com/a", NULL, NULL, ERR_INVALID},
    {"javascript:alert(1)", NULL, NULL, ERR_INVALID},
    {"mailto:a@example.com", NULL, NULL, ERR_INVALID},
    {"http:/example.com", NULL, NULL, ERR_INVALID},
    {"http:example.com", NULL, NULL, ERR_INVALID},
    {"https://", NULL, NULL, ERR_INVALID},
    {"https:///a", NULL, NULL, ERR_INVALID},
    {"https://?a=1", NULL, NULL, ERR_INVALID},
    {"https://user@/a", NULL, NULL, ERR_INVALID},
    {"https://.example.com/", NULL, NULL, ERR_INVALID},
    {"https://./", NULL, NULL, ERR_INVALID},
    {"https://.../", NULL, NULL, ERR_INVALID},
    {"https://exa mple.com/", NULL, NULL, ERR_INVALID},
    {"https://exa<mple.com/", NULL, NULL, ERR_INVALID},
    {"https://example.com:http/", NULL, NULL, ERR_INVALID},
    {"https://example.com:65536/", NULL, NULL, ERR_INVALID},
    {"https://example.com:99999999999999999999/", NULL, NULL, ERR_INVALID},
    {"https://example.com:-1/", NULL, NULL, ERR_INVALID},
    {"https://[::1/", NULL, NULL, ERR_INVALID},
    {"https://[::1]x/", NULL, NULL, ERR_INVALID},
    {"https://[]/", NULL, NULL, ERR_INVALID},
    {"https://[g::1]/", NULL, NULL, ERR_INVALID},
    {"https://example.com/a\x7f", NULL, NULL, ERR_INVALID},
    {"https://example.com/\x01", NULL, NULL, ERR_INVALID},
    {"https://exam\\ple.com/", NULL, NULL, ERR_INVALID},
};

static void canonical_urls_follow_the_table(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct url_case *c = &cases[i];
        char *canon = (char *)"unset", *domain = (char *)"unset";
        int rc = ingest_url_canonical(&a, c->in, &canon, &domain);
        if (rc != c->rc)
            fail_msg("%s: rc %d, want %d", c->in, rc, c->rc);
        if (!c->canon) {
            assert_string_equal(canon, "unset"); /* untouched on failure */
            continue;
        }
        if (strcmp(canon, c->canon) != 0)
            fail_msg("%s gave %s, want %s", c->in, canon, c->canon);
        if (strcmp(domain, c->domain) != 0)
            fail_msg("%s: domain %s, want %s", c->in, domain, c->domain);
        /* idempotent, same domain */
        char *again, *dom2;
        assert_int_equal(ingest_url_canonical(&a, canon, &again, &dom2), 0);
        assert_string_equal(again, canon);
        assert_string_equal(dom2, domain);
    }
    arena_release(&a);
}

static void outputs_are_optional_and_null_is_invalid(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    assert_int_equal(ingest_url_canonical(&a, "https://example.com", NULL, NULL), 0);
    char *d;
    assert_int_equal(ingest_url_canonical(&a, "https://www.x.org/", NULL, &d), 0);
    assert_string_equal(d, "x.org");
    assert_int_equal(ingest_url_canonical(&a, NULL, NULL, NULL), ERR_INVALID);
    arena_release(&a);
}

static void hostile_lengths_are_bounded(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    size_t n = 4 * LIMIT_URL_BYTES;
    char *u = malloc(n + 1);
    assert_non_null(u);
    memcpy(u, "https://example.com/", 20);
    memset(u + 20, 'a', n - 20);
    u[n] = '\0';
    char *canon = NULL;
    assert_int_equal(ingest_url_canonical(&a, u, &canon, NULL), ERR_TOO_LARGE);
    assert_null(canon);
    /* exactly at the limit is fine */
    u[LIMIT_URL_BYTES] = '\0';
    assert_int_equal(ingest_url_canonical(&a, u, &canon, NULL), 0);
    assert_int_equal(strlen(canon), LIMIT_URL_BYTES);
    /* spaces that would expand past the limit */
    memset(u + 20, ' ', LIMIT_URL_BYTES / 2);
    u[20 + LIMIT_URL_BYTES / 2] = 'x';
    u[21 + LIMIT_URL_BYTES / 2] = '\0';
    assert_int_equal(ingest_url_canonical(&a, u, &canon, NULL), ERR_TOO_LARGE);
    /* thousands of parameters, all tracking */
    size_t k = 20;
    memcpy(u, "https://example.com/?", 21);
    k = 21;
    while (k + 12 < LIMIT_URL_BYTES) {
        memcpy(u + k, "utm_a=1&", 8);
        k += 8;
    }
    u[k] = '\0';
    assert_int_equal(ingest_url_canonical(&a, u, &canon, NULL), 0);
    assert_string_equal(canon, "https://example.com/");
    /* a ceiling on the arena turns into ERR_NOMEM, not a crash */
    struct arena tiny;
    arena_init(&tiny, 8);
    assert_int_equal(ingest_url_canonical(&tiny, "https://example.com/abcdefghijkl", &canon, NULL),
                     ERR_NOMEM);
    arena_release(&tiny);
    free(u);
    arena_release(&a);
}

/* Every url of the real article sample: accepted, idempotent, and the domain
 * is a suffix of the canonical host. */
static void real_article_urls_are_accepted_and_stable(void **state)
{
    (void)state;
    FILE *f = fopen("../data/import/urls.txt", "r");
    assert_non_null(f);
    struct arena a;
    arena_init(&a, 0);
    char line[16384];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *canon, *domain, *again;
        if (ingest_url_canonical(&a, line, &canon, &domain) != 0)
            fail_msg("rejected real url %s", line);
        assert_int_equal(ingest_url_canonical(&a, canon, &again, NULL), 0);
        assert_string_equal(again, canon);
        assert_non_null(strstr(canon, domain));
        assert_null(strchr(canon, '#'));
        assert_null(strstr(canon, "utm_"));
        n++;
        if (n % 500 == 0) {
            arena_release(&a);
            arena_init(&a, 0);
        }
    }
    assert_true(n > 100);
    fclose(f);
    arena_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_urls_follow_the_table),
        cmocka_unit_test(outputs_are_optional_and_null_is_invalid),
        cmocka_unit_test(hostile_lengths_are_bounded),
        cmocka_unit_test(real_article_urls_are_accepted_and_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
