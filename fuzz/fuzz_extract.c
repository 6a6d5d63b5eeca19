/* libFuzzer harness: the page extractor (ingest/pages/pages.h) on arbitrary
 * bytes, with and without a URL and a charset hint. Invariants: every
 * string is valid UTF-8 without control characters (but '\n' in the text),
 * without leading, trailing or doubled white space; text_len is the text's
 * length and within EXTRACT_MAX_TEXT; URLs are absolute http(s). The URLs
 * given are an article's, none, a site root's (inside a Wayback URL) and a
 * permalink filed by date. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/utf8.h"

static void check_text(const char *s, size_t max, bool lines)
{
    if (!s)
        return;
    size_t n = strlen(s);
    CHECK(n > 0 && n <= max);
    CHECK(utf8_valid(s, n));
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        CHECK(c >= 0x20 || (lines && c == '\n'));
        CHECK(c != 0x7F);
        bool ws = c == ' ' || c == '\n';
        CHECK(!(ws && (i == 0 || i + 1 == n)));
        CHECK(!(ws && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\n')));
    }
}

static void check_url(const char *u)
{
    if (!u)
        return;
    CHECK(strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0);
    check_text(u, 16 * 1024, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct extract_options opts[] = {
        {NULL, NULL},
        {"https://news.example/a/b/page.html?x=1", "windows-1251"},
        /* a site root inside a Wayback URL: the article-or-not rules */
        {"https://web.archive.org/web/20160401095740/http://news.example/", NULL},
        /* a dated permalink: counts as a declaration */
        {"https://blog.example/2012/05/31/river-plan/", NULL},
    };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        struct arena a;
        arena_init(&a, 256 << 20);
        struct extracted_page p;
        if (extract_page(&a, (const char *)data, size, &opts[k], &p) == 0) {
            CHECK(p.text && strlen(p.text) == p.text_len && p.text_len <= EXTRACT_MAX_TEXT);
            if (p.text_len)
                check_text(p.text, EXTRACT_MAX_TEXT, true);
            check_text(p.title, EXTRACT_MAX_FIELD, false);
            check_text(p.byline, EXTRACT_MAX_FIELD, false);
            check_text(p.excerpt, EXTRACT_MAX_FIELD, false);
            check_text(p.published, EXTRACT_MAX_FIELD, false);
            check_text(p.lang, EXTRACT_MAX_FIELD, false);
            check_text(p.site_name, EXTRACT_MAX_FIELD, false);
            check_url(p.image);
            check_url(p.canonical);
            CHECK(p.published || p.published_at == 0);
        }
        arena_release(&a);
    }
    return 0;
}
