/* The page extractor (ingest/pages/pages.h): main text without the boilerplate
 * around it, metadata from its several sources, charsets, pages that hold
 * no article, and hostile input (deep nesting, invalid bytes, NULs, a
 * memory ceiling at every size). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/pages/pages.h"
#include "ingest/ingest.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/utf8.h"

#define PARA                                                                                       \
    "The committee met on Tuesday to discuss the proposal, which had been debated for months, "    \
    "and decided after a long session that the plan would go ahead, with changes. "

/* A news page: navigation, cookie banner, share bar, the article, related
 * links, comments and a footer. */
static const char article_page[] =
    "<!doctype html><html lang=\"en-GB\"><head>"
    "<meta charset=\"utf-8\">"
    "<title>Council approves the river plan | The Daily Example</title>"
    "<meta property=\"og:site_name\" content=\"The Daily Example\">"
    "<meta name=\"description\" content=\"The plan goes ahead &amp;amp; with changes.\">"
    "<meta property=\"og:image\" content=\"/img/river.jpg\">"
    "<meta property=\"article:published_time\" content=\"2024-05-06T07:08:09+02:00\">"
    "<link rel=\"canonical\" href=\"/news/river-plan?utm_source=x\">"
    "<script>var menu = 'Home News Sport';</script><style>p{color:red}</style>"
    "</head><body>"
    "<div id=\"cookie-consent\">We use cookies to improve your experience. Accept all cookies "
    "or manage your cookie settings in the preferences panel.</div>"
    "<nav class=\"menu\"><ul><li><a href=\"/\">Home</a></li><li><a href=\"/news\">News</a></li>"
    "<li><a href=\"/sport\">Sport</a></li></ul></nav>"
    "<div class=\"share-bar\"><a href=\"#\">Share on Facebook</a><a href=\"#\">Tweet</a></div>"
    "<article class=\"story\"><h1>Council approves the river plan</h1>"
    "<p class=\"byline\">By <span itemprop=\"name\">Ada Lovelace</span></p>"
    "<p>" PARA "First paragraph ends here.</p>"
    "<p>" PARA "Second paragraph ends here.</p>"
    "<p>" PARA "Third paragraph ends here.</p>"
    "<p>" PARA "Fourth paragraph ends here.</p>"
    "</article>"
    "<div class=\"related\"><h3>Related stories</h3><ul>"
    "<li><a href=\"/a\">Another story about the river and the council budget</a></li>"
    "<li><a href=\"/b\">Yet another story about the weather this weekend</a></li></ul></div>"
    "<div id=\"comments\"><p>Comment: I think this is a terrible idea, honestly, and I will "
    "say so at the next meeting of the council, again and again.</p></div>"
    "<footer>Copyright The Daily Example, all rights reserved, terms and privacy.</footer>"
    "</body></html>";

static int extract(struct arena *a, const char *page, size_t len, const char *url,
                   const char *charset, struct extracted_page *out)
{
    struct extract_options o = {url, charset};
    return extract_page(a, page, len, &o, out);
}

static void assert_clean_string(const char *s, bool lines)
{
    if (!s)
        return;
    size_t n = strlen(s);
    assert_true(n > 0);
    assert_true(utf8_valid(s, n));
    assert_true(s[0] != ' ' && s[0] != '\n' && s[n - 1] != ' ' && s[n - 1] != '\n');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        assert_true(c >= 0x20 || (lines && c == '\n'));
        if (c == ' ' || c == '\n')
            assert_false(s[i - 1] == ' ' || s[i - 1] == '\n');
    }
}

static void assert_page_invariants(const struct extracted_page *p)
{
    assert_non_null(p->text);
    assert_int_equal(strlen(p->text), p->text_len);
    assert_true(p->text_len <= EXTRACT_MAX_TEXT);
    assert_clean_string(p->text_len ? p->text : NULL, true);
    assert_clean_string(p->title, false);
    assert_clean_string(p->byline, false);
    assert_clean_string(p->excerpt, false);
    assert_clean_string(p->site_name, false);
    assert_clean_string(p->lang, false);
    const char *urls[] = {p->image, p->canonical};
    for (size_t i = 0; i < 2; i++)
        if (urls[i])
            assert_true(strncmp(urls[i], "http://", 7) == 0 ||
                        strncmp(urls[i], "https://", 8) == 0);
}

static void the_article_text_is_kept_and_the_boilerplate_dropped(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, article_page, sizeof article_page - 1,
                             "https://daily.example/2024/05/river.html", NULL, &p),
                     0);
    assert_page_invariants(&p);
    assert_true(p.readerable);
    for (const char *want = "First"; want; want = NULL) {
        assert_non_null(strstr(p.text, "First paragraph ends here."));
        assert_non_null(strstr(p.text, "Fourth paragraph ends here."));
    }
    /* one line per paragraph */
    assert_non_null(strstr(p.text, "First paragraph ends here.\nThe committee"));
    static const char *const gone[] = {"cookies",  "Home",      "Share on Facebook",
                                       "Related",  "terrible",  "Copyright",
                                       "var menu", "color:red", "Ada Lovelace"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        if (strstr(p.text, gone[i]))
            fail_msg("boilerplate \"%s\" in the text: [%s]", gone[i], p.text);
    arena_release(&a);
}

static void metadata_comes_from_the_page(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, article_page, sizeof article_page - 1,
                             "https://daily.example/2024/05/river.html", NULL, &p),
                     0);
    assert_string_equal(p.title, "Council approves the river plan");
    assert_string_equal(p.byline, "Ada Lovelace");
    /* escaped twice in the attribute: decoded as reader views do */
    assert_string_equal(p.excerpt, "The plan goes ahead & with changes.");
    assert_string_equal(p.image, "https://daily.example/img/river.jpg");
    assert_string_equal(p.canonical, "https://daily.example/news/river-plan?utm_source=x");
    assert_string_equal(p.published, "2024-05-06T07:08:09+02:00");
    assert_int_equal(p.published_at, 1714972089); /* 2024-05-06T05:08:09Z */
    assert_string_equal(p.lang, "en-GB");
    assert_string_equal(p.site_name, "The Daily Example");
    arena_release(&a);
}

static void json_ld_wins_and_reads_lists_graphs_and_cdata(void **state)
{
    (void)state;
    static const char page[] =
        "<html><head><title>Other words entirely | Site</title>"
        "<meta property=\"og:title\" content=\"The og title\">"
        "<meta name=\"author\" content=\"Meta Author\">"
        "<script type=\"application/ld+json\"><![CDATA[{\"@context\":\"https://schema.org\","
        "\"@graph\":[{\"@type\":\"WebSite\",\"name\":\"Site\"},"
        "{\"@type\":[\"NewsArticle\"],\"headline\":\"The real headline\","
        "\"author\":[{\"@type\":\"Person\",\"name\":\"Ann One\"},\"Bob Two\"],"
        "\"datePublished\":\"2021-02-03\",\"description\":\"From JSON-LD\","
        "\"image\":[{\"url\":\"https://cdn.example/a.png\"}],"
        "\"publisher\":{\"name\":\"Pub Name\"}}]}]]></script>"
        "</head><body><p>" PARA "</p></body></html>";
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, page, sizeof page - 1, NULL, NULL, &p), 0);
    assert_page_invariants(&p);
    assert_string_equal(p.title, "The real headline");
    assert_string_equal(p.byline, "Ann One, Bob Two");
    assert_string_equal(p.excerpt, "From JSON-LD");
    assert_string_equal(p.image, "https://cdn.example/a.png");
    assert_string_equal(p.site_name, "Pub Name");
    assert_int_equal(p.published_at, 1612310400);
    arena_release(&a);
}

struct title_case {
    const char *title;
    const char *want;
};

static void the_site_name_is_cut_from_the_title(void **state)
{
    (void)state;
    static const struct title_case cases[] = {
        {"A long enough headline here | Site Name", "A long enough headline here"},
        {"Lorem ipsum dolor sit amet \xE2\x80\x93 My website", "Lorem ipsum dolor sit amet"},
        {"Mozilla - Wikipedia", "Mozilla - Wikipedia"}, /* too little is left */
        {"Outside the web: standalone WebAssembly binaries using Emscripten",
         "standalone WebAssembly binaries using Emscripten"},
        {"Outside the web: four words only left", "Outside the web: four words only left"},
        {"This is a long title with a colon: Hello there",
         "This is a long title with a colon: Hello there"},
        {"Plain title without separators", "Plain title without separators"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b;
        buf_init(&b, 0);
        buf_printf(&b, "<html><head><title>%s</title></head><body><p>%s</p></body></html>",
                   cases[i].title, PARA);
        struct arena a;
        arena_init(&a, 0);
        struct extracted_page p;
        assert_int_equal(extract(&a, b.data, b.len, NULL, NULL, &p), 0);
        if (!p.title || strcmp(p.title, cases[i].want) != 0)
            fail_msg("case %zu: got [%s], want [%s]", i, p.title ? p.title : "(null)",
                     cases[i].want);
        arena_release(&a);
        buf_release(&b);
    }
}

static void words_apart_by_white_space_alone_stay_apart(void **state)
{
    (void)state;
    static const char page[] =
        "<html><body><article><p>" PARA "</p>"
        "<pre><span>SELECT</span> <span>avg(n)</span>\n<span>FROM</span> "
        "<span>t</span></pre><p><b>alpha</b> <i>beta</i>, " PARA "</p></article></body></html>";
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, page, sizeof page - 1, NULL, NULL, &p), 0);
    assert_page_invariants(&p);
    if (!strstr(p.text, "SELECT avg(n) FROM t") || !strstr(p.text, "alpha beta,"))
        fail_msg("words glued: [%s]", p.text);
    arena_release(&a);
}

static void a_list_of_links_holds_no_article(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    buf_puts(&b, "<html><head><title>Index</title></head><body><ul>");
    for (int i = 0; i < 200; i++)
        buf_printf(&b, "<li><a href=\"/story/%d\">Story number %d about something</a></li>", i, i);
    buf_puts(&b, "</ul><form><input name=q><button>Search</button></form></body></html>");
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, b.data, b.len, NULL, NULL, &p), 0);
    assert_page_invariants(&p);
    assert_false(p.readerable);
    arena_release(&a);
    buf_release(&b);
}

static void charsets_become_utf8(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    /* windows-1252 by <meta>: é is 0xE9, the euro sign 0x80 */
    static const char latin[] = "<html><head><meta charset=\"iso-8859-1\"><title>Caf\xE9 "
                                "prices rise to 3\x80</title></head><body><p>x</p></body></html>";
    assert_int_equal(extract(&a, latin, sizeof latin - 1, NULL, NULL, &p), 0);
    assert_string_equal(p.title, "Caf\xC3\xA9 prices rise to 3\xE2\x82\xAC");
    /* the HTTP charset when the bytes are not UTF-8 */
    static const char cyr[] = "<title>\xCF\xF0\xE8\xE2\xE5\xF2 world</title>";
    assert_int_equal(extract(&a, cyr, sizeof cyr - 1, NULL, "windows-1251", &p), 0);
    assert_string_equal(p.title, "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 world");
    /* valid UTF-8 wins over a wrong declaration */
    static const char utf8[] = "<meta charset=\"iso-8859-1\"><title>Caf\xC3\xA9 ok</title>";
    assert_int_equal(extract(&a, utf8, sizeof utf8 - 1, NULL, "iso-8859-1", &p), 0);
    assert_string_equal(p.title, "Caf\xC3\xA9 ok");
    /* only a <meta> tag's charset counts: a script's (the Wayback Machine's
     * toolbar comes first) says nothing of the page */
    static const char wayback[] = "<script charset=\"utf-8\" src=\"/t.js\"></script>"
                                  "<meta http-equiv=\"Content-Type\" content=\"text/html; "
                                  "charset=gb2312\"><title>\xC4\xE3\xBA\xC3</title>";
    assert_int_equal(extract(&a, wayback, sizeof wayback - 1, NULL, NULL, &p), 0);
    assert_string_equal(p.title, "\xE4\xBD\xA0\xE5\xA5\xBD");
    /* UTF-16 with its byte order mark */
    static const char utf16[] = "\xFF\xFE<\0t\0i\0t\0l\0e\0>\0O\0k\0<\0/\0t\0i\0t\0l\0e\0>\0";
    assert_int_equal(extract(&a, utf16, sizeof utf16 - 1, NULL, NULL, &p), 0);
    assert_string_equal(p.title, "Ok");
    arena_release(&a);
}

static void invalid_bytes_and_nuls_give_valid_text(void **state)
{
    (void)state;
    static const char page[] = "<meta charset=utf-8><title>a\xED\xA0\x80"
                               "b\xF4\x90\x80\x80"
                               "c\0d\xC0\xAF</title><body><p>\xFF\xFE x, y, z \0 w</p>";
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, page, sizeof page - 1, NULL, "utf-8", &p), 0);
    assert_page_invariants(&p);
    assert_non_null(p.title);
    assert_non_null(strstr(p.title, "\xEF\xBF\xBD"));
    arena_release(&a);
}

static void long_fields_are_cut_between_characters(void **state)
{
    (void)state;
    /* a title of 3-byte characters longer than EXTRACT_MAX_FIELD, at every
     * alignment of the cut */
    for (int shift = 0; shift < 3; shift++) {
        struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "<title>");
        for (int i = 0; i < shift; i++)
            buf_putc(&b, 'x');
        for (int i = 0; i < 2000; i++)
            buf_puts(&b, "\xE2\x82\xAC\xC3\xA9");
        buf_puts(&b, "</title>");
        struct arena a;
        arena_init(&a, 0);
        struct extracted_page p;
        assert_int_equal(extract(&a, b.data, b.len, NULL, NULL, &p), 0);
        assert_non_null(p.title);
        assert_true(strlen(p.title) <= EXTRACT_MAX_FIELD);
        assert_true(strlen(p.title) > EXTRACT_MAX_FIELD - 4);
        assert_true(utf8_valid(p.title, strlen(p.title)));
        arena_release(&a);
        buf_release(&b);
    }
}

static void empty_and_tiny_inputs(void **state)
{
    (void)state;
    static const char *const inputs[] = {"",
                                         "<",
                                         "<html",
                                         "<!--",
                                         "<script>",
                                         "&",
                                         "\xEF\xBB\xBF",
                                         "<title></title>",
                                         "<base href=\"javascript:x\">"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        struct arena a;
        arena_init(&a, 0);
        struct extracted_page p;
        assert_int_equal(extract(&a, inputs[i], strlen(inputs[i]), "https://x.example/", NULL, &p),
                         0);
        assert_page_invariants(&p);
        assert_false(p.readerable);
        arena_release(&a);
    }
}

static void deep_nesting_neither_crashes_nor_hangs(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    for (int i = 0; i < 100000; i++)
        buf_puts(&b, i % 2 ? "<div class=\"content\">" : "<span>");
    buf_puts(&b, PARA PARA);
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, b.data, b.len, NULL, NULL, &p), 0);
    assert_page_invariants(&p);
    assert_non_null(strstr(p.text, "committee"));
    arena_release(&a);
    buf_release(&b);
}

static void many_small_nodes_stay_within_bounds(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    for (int i = 0; i < 700000; i++) /* more than EXTRACT_MAX_NODES */
        buf_puts(&b, "<p>a, b</p>");
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    assert_int_equal(extract(&a, b.data, b.len, NULL, NULL, &p), 0);
    assert_page_invariants(&p);
    arena_release(&a);
    buf_release(&b);
}

static void an_arena_ceiling_gives_nomem_at_every_size(void **state)
{
    (void)state;
    int ok = 0, nomem = 0;
    for (size_t ceiling = 16; ceiling < 64 * 1024; ceiling = ceiling * 5 / 4 + 16) {
        struct arena a;
        arena_init(&a, ceiling);
        struct extracted_page p;
        int rc = extract(&a, article_page, sizeof article_page - 1, "https://d.example/", NULL, &p);
        if (rc == 0) {
            assert_page_invariants(&p);
            ok++;
        } else {
            assert_int_equal(rc, -1); /* ERR_NOMEM */
            nomem++;
        }
        arena_release(&a);
    }
    assert_true(ok > 0 && nomem > 0);
}

static void the_page_fills_only_the_gaps(void **state)
{
    (void)state;
    char text[] = "Full text of the page.", excerpt[] = "Page excerpt",
         image[] = "https://p.example/i.jpg", byline[] = "Page Author", lang[] = "pt-BR";
    struct extracted_page pg = {
        .text = text,
        .text_len = sizeof text - 1,
        .excerpt = excerpt,
        .image = image,
        .byline = byline,
        .published_at = 1000,
        .lang = lang,
    };
    /* a feed item with only a title and a link: everything filled */
    struct article bare = {.title = "T", .url = "https://f.example/a", .published_at = 5};
    unsigned got = page_fill(&bare, &pg, false);
    assert_int_equal(got, PAGE_FILLED_CONTENT | PAGE_FILLED_DESCRIPTION | PAGE_FILLED_IMAGE |
                              PAGE_FILLED_AUTHOR | PAGE_FILLED_PUBLISHED | PAGE_FILLED_LANGUAGE);
    assert_string_equal(bare.content, pg.text);
    assert_string_equal(bare.description, "Page excerpt");
    assert_string_equal(bare.url_to_image, pg.image);
    assert_string_equal(bare.author, "Page Author");
    assert_int_equal(bare.published_at, 1000);
    assert_string_equal(bare.language, "pt");
    /* what the feed said wins; content that repeats the description is
     * replaced by the page's text; a dated item keeps its date */
    struct article full = {.title = "T",
                           .url = "https://f.example/b",
                           .author = "Feed Author",
                           .description = "Feed summary",
                           .content = "Feed summary",
                           .url_to_image = "https://f.example/f.jpg",
                           .published_at = 7,
                           .language = "en"};
    got = page_fill(&full, &pg, true);
    assert_int_equal(got, PAGE_FILLED_CONTENT);
    assert_string_equal(full.content, pg.text);
    assert_string_equal(full.description, "Feed summary");
    assert_string_equal(full.author, "Feed Author");
    assert_string_equal(full.url_to_image, "https://f.example/f.jpg");
    assert_int_equal(full.published_at, 7);
    assert_string_equal(full.language, "en");
    /* a feed's own full content stays */
    struct article own = {.content = "Feed full text", .description = "Feed summary"};
    assert_int_equal(page_fill(&own, &pg, true) & PAGE_FILLED_CONTENT, 0);
    assert_string_equal(own.content, "Feed full text");
    /* language tags */
    static const struct {
        const char *tag, *want;
    } tags[] = {{"en", "en"}, {"EN-us", "en"}, {"pt_BR", "pt"}, {"se", "sv"},
                {"eng", ""},  {"e", ""},       {"", ""},        {"x-klingon", ""}};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        char out[3];
        page_language(tags[i].tag, out);
        assert_string_equal(out, tags[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_article_text_is_kept_and_the_boilerplate_dropped),
        cmocka_unit_test(metadata_comes_from_the_page),
        cmocka_unit_test(json_ld_wins_and_reads_lists_graphs_and_cdata),
        cmocka_unit_test(the_site_name_is_cut_from_the_title),
        cmocka_unit_test(words_apart_by_white_space_alone_stay_apart),
        cmocka_unit_test(a_list_of_links_holds_no_article),
        cmocka_unit_test(charsets_become_utf8),
        cmocka_unit_test(invalid_bytes_and_nuls_give_valid_text),
        cmocka_unit_test(long_fields_are_cut_between_characters),
        cmocka_unit_test(empty_and_tiny_inputs),
        cmocka_unit_test(deep_nesting_neither_crashes_nor_hangs),
        cmocka_unit_test(many_small_nodes_stay_within_bounds),
        cmocka_unit_test(an_arena_ceiling_gives_nomem_at_every_size),
        cmocka_unit_test(the_page_fills_only_the_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
