/* Article or not (ingest/pages/pages.h readerable; docs/extraction.md "Article
 * or not"): what a page declares in its metadata and what its URL says
 * decide before Firefox's gate of long paragraphs, which misses briefs,
 * lists and text in <div>s, and passes home pages full of teasers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/buf.h"

/* Five one-sentence briefs: each under the gate's 140 characters. */
#define BRIEFS                                                                                     \
    "<p>The council approved the river plan on Tuesday after a short debate.</p>"                  \
    "<p>Work on the new bridge starts in May and should take two years.</p>"                       \
    "<p>The mayor said the cost would be shared with the region.</p>"                              \
    "<p>Residents can comment on the plans until the end of the month.</p>"                        \
    "<p>A public meeting is planned for next Thursday evening.</p>"

/* Text in list items, a "things to know" article. */
#define LIST_ITEMS                                                                                 \
    "<ul><li>The bridge will have two lanes for cars and one for bicycles, both ways.</li>"        \
    "<li>The old ferry keeps running until the bridge opens to traffic in two years.</li>"         \
    "<li>Parking near the river becomes free on weekends while the work goes on.</li>"             \
    "<li>The region pays a third of the cost, the city the rest, from its budget.</li></ul>"

/* Long paragraphs: the gate passes them. */
#define LONG_P                                                                                     \
    "<p>The committee met on Tuesday to discuss the proposal, which had been debated for "         \
    "months, and decided after a long session that the plan would go ahead, with changes to "      \
    "the budget and the timetable that the region had asked for in its letter.</p>"

static bool readerable(const char *head, const char *body, const char *url)
{
    struct buf b;
    buf_init(&b, 0);
    buf_printf(&b,
               "<html><head><title>River plan</title>%s</head><body><div class=\"story\">"
               "%s</div></body></html>",
               head, body);
    struct arena a;
    arena_init(&a, 0);
    struct extracted_page p;
    struct extract_options opt = {.url = url};
    assert_int_equal(extract_page(&a, b.data, b.len, &opt, &p), 0);
    bool r = p.readerable;
    if (r)
        assert_true(p.text_len > 0);
    arena_release(&a);
    buf_release(&b);
    return r;
}

#define ARTICLE_URL "https://news.example/politics/river-plan-approved-7"
#define OG_ARTICLE "<meta property=\"og:type\" content=\"article\">"
#define OG_WEBSITE "<meta property=\"og:type\" content=\"website\">"

static void briefs_that_declare_an_article_are_extracted(void **state)
{
    (void)state;
    assert_false(readerable("", BRIEFS, ARTICLE_URL)); /* the gate alone says no */
    assert_true(readerable(OG_ARTICLE, BRIEFS, ARTICLE_URL));
    assert_true(
        readerable("<meta property=\"og:type\" content=\"article:news\">", BRIEFS, ARTICLE_URL));
    assert_false(readerable(OG_WEBSITE, BRIEFS, ARTICLE_URL));
}

static void json_ld_article_types_count_as_a_declaration(void **state)
{
    (void)state;
    static const char *const heads[] = {
        "<script type=\"application/ld+json\">{\"@type\":\"NewsArticle\"}</script>",
        "<script type=\"application/ld+json\">{\"@type\":\"BlogPosting\"}</script>",
        "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@graph\":["
        "{\"@type\":\"WebSite\"},{\"@type\":\"ReportageNewsArticle\"}]}</script>",
        "<script type=\"application/ld+json\">[{\"@type\":[\"Article\"]}]</script>",
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        assert_true(readerable(heads[i], BRIEFS, ARTICLE_URL));
    assert_false(readerable("<script type=\"application/ld+json\">{\"@type\":\"WebSite\"}"
                            "</script>",
                            BRIEFS, ARTICLE_URL));
}

static void a_declared_list_article_is_extracted(void **state)
{
    (void)state;
    assert_false(readerable("", LIST_ITEMS, ARTICLE_URL));
    assert_true(readerable(OG_ARTICLE, LIST_ITEMS, ARTICLE_URL));
}

static void a_declaration_without_text_is_no_article(void **state)
{
    (void)state;
    assert_false(readerable(OG_ARTICLE, "<p>Subscribe.</p>", ARTICLE_URL));
}

static void a_site_root_is_never_an_article(void **state)
{
    (void)state;
    static const char *const roots[] = {
        "https://news.example/",
        "https://news.example",
        "https://news.example/index.html",
        "https://news.example/default.aspx",
        "https://web.archive.org/web/20160401095740/http://news.example/",
    };
    const char *body = LONG_P LONG_P LONG_P LONG_P;
    assert_true(readerable("", body, ARTICLE_URL));
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        assert_false(readerable("", body, roots[i]));
        assert_false(readerable(OG_ARTICLE, body, roots[i]));
    }
    /* WordPress's article links are queries on the root */
    assert_true(readerable("", body, "https://blog.example/?p=123"));
    assert_true(readerable("", body,
                           "https://web.archive.org/web/20160401095740/http://news.example/"
                           "2013/08/07/a-story/"));
}

static void a_section_index_is_no_article(void **state)
{
    (void)state;
    const char *body = LONG_P LONG_P LONG_P LONG_P;
    assert_false(readerable("", body, "https://news.example/politik/"));
    assert_true(readerable("", body, "https://news.example/politik/river-plan-approved/"));
    assert_true(readerable("", body, "https://news.example/river-plan-approved/"));
    /* what declares itself an article is one */
    assert_true(readerable(OG_ARTICLE, body, "https://news.example/politik/"));
}

/* A permalink filed by date ("/2012/05/31/slug") says what a declaration
 * says; a number that is no year and month does not, nor does a date over
 * a page of links. */
static void a_dated_permalink_counts_as_a_declaration(void **state)
{
    (void)state;
    assert_true(readerable("", BRIEFS, "https://blog.example/2012/05/31/river-plan/"));
    assert_true(readerable("", BRIEFS, "https://blog.example/2011/09/river-plan"));
    assert_true(readerable(OG_WEBSITE, BRIEFS, "https://blog.example/2011/09/river-plan"));
    assert_false(readerable("", BRIEFS, "https://blog.example/1234/56/river-plan"));
    assert_false(readerable("", BRIEFS, "https://blog.example/2011/13/river-plan"));
    assert_false(readerable("", BRIEFS, "https://blog.example/tag/2011/"));
    assert_false(readerable("", "<p>Subscribe.</p>", "https://blog.example/2012/05/31/x/"));
}

/* A page whose main text sits in its only <article> element says what it
 * is, even under og:type "website" and a slug that reads as a section
 * ("/supermarket/"); a page of several <article> teasers does not, nor
 * does a site root. */
static void the_only_article_element_counts_as_a_declaration(void **state)
{
    (void)state;
    const char *url = "https://blog.example/supermarket/";
    assert_true(readerable(OG_WEBSITE, "<article>" BRIEFS "</article>", url));
    assert_true(readerable("", "<article><h1>River plan</h1>" BRIEFS "</article>", url));
    assert_false(readerable(OG_WEBSITE, BRIEFS, url));
    assert_false(
        readerable(OG_WEBSITE, "<article>" BRIEFS "</article><article>" BRIEFS "</article>", url));
    assert_false(readerable("", "<article>" BRIEFS "</article>", "https://blog.example/"));
    assert_false(readerable("", "<article><p>Subscribe.</p></article>", url));
}

static void a_page_of_links_is_no_article(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    for (int i = 0; i < 40; i++)
        buf_printf(&b,
                   "<p><a href=\"/story/%d\">Story number %d about the council, the river and "
                   "the new bridge that the region pays for</a> and more.</p>",
                   i, i);
    assert_false(readerable("", b.data, ARTICLE_URL));
    buf_release(&b);
}

static void undeclared_text_without_long_paragraphs_needs_length(void **state)
{
    (void)state;
    /* A blog post in short paragraphs that says nothing of itself. */
    assert_true(readerable("", BRIEFS BRIEFS, ARTICLE_URL));
    assert_false(readerable("", "<p>The council approved the river plan today.</p>", ARTICLE_URL));
    /* og:type "website" says nothing: CMSs write it on articles too */
    assert_true(readerable(OG_WEBSITE, BRIEFS BRIEFS, ARTICLE_URL));
    assert_false(readerable(OG_WEBSITE, BRIEFS, ARTICLE_URL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(briefs_that_declare_an_article_are_extracted),
        cmocka_unit_test(json_ld_article_types_count_as_a_declaration),
        cmocka_unit_test(a_declared_list_article_is_extracted),
        cmocka_unit_test(a_declaration_without_text_is_no_article),
        cmocka_unit_test(a_site_root_is_never_an_article),
        cmocka_unit_test(a_section_index_is_no_article),
        cmocka_unit_test(a_dated_permalink_counts_as_a_declaration),
        cmocka_unit_test(the_only_article_element_counts_as_a_declaration),
        cmocka_unit_test(a_page_of_links_is_no_article),
        cmocka_unit_test(undeclared_text_without_long_paragraphs_needs_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
