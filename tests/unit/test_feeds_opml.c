/* ingest/feeds/feeds.h: OPML feed lists as readers write them (folders in
 * folders, attribute names in any case, entities), newsd's own attributes,
 * what is refused (a DOCTYPE with entities, not well-formed, not OPML,
 * nesting past the bound), and opml_write read back to the same feeds. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/feeds/feeds.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

static void str_is(const char *got, const char *want)
{
    if (!want) {
        if (got)
            fail_msg("want NULL, got '%s'", got);
        return;
    }
    if (!got || strcmp(got, want) != 0)
        fail_msg("want '%s', got '%s'", want, got ? got : "NULL");
}

/* A reader's export (the shape Feedly, Inoreader and Miniflux write): a
 * head, folders named after NewsAPI categories and others, a folder in a
 * folder, xmlurl in lower case, an entity in a title, a folder without
 * feeds, an outline with neither url nor children. */
static const char reader_opml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<opml version=\"1.0\">\n"
    "  <head><title>My feeds</title><dateCreated>Mon, 02 Mar 2026 10:00:00 "
    "GMT</dateCreated></head>\n"
    "  <body>\n"
    "    <outline text=\"Technology\" title=\"Technology\">\n"
    "      <outline type=\"rss\" text=\"Ars\" title=\"Ars Technica\"\n"
    "               xmlUrl=\"https://feeds.arstechnica.com/arstechnica/index\"\n"
    "               htmlUrl=\"https://arstechnica.com\"/>\n"
    "      <outline text=\"Deep\">\n"
    "        <outline type=\"atom\" text=\"Heise &amp; Co\" "
    "xmlurl=\"https://www.heise.de/rss/heise-atom.xml\"/>\n"
    "      </outline>\n"
    "    </outline>\n"
    "    <outline text=\"Reading\">\n"
    "      <outline type=\"rss\" text=\"Blog\" xmlUrl=\"https://blog.test/feed?a=1&amp;b=2\"/>\n"
    "    </outline>\n"
    "    <outline text=\"SPORTS\"><outline text=\"BBC Sport\" "
    "xmlUrl=\"https://feeds.bbci.co.uk/sport/rss.xml\"/></outline>\n"
    "    <outline text=\"Empty folder\"/>\n"
    "    <outline text=\"Top\" xmlUrl=\"https://top.test/rss\"/>\n"
    "  </body>\n"
    "</opml>\n";

static void a_readers_export_gives_every_feed_with_its_folder_category(void **state)
{
    (void)state;
    struct arena a;
    struct opml_feed *f = NULL;
    size_t n = 0;
    struct err e;
    arena_init(&a, 0);
    assert_true(opml_sniff(reader_opml, strlen(reader_opml)));
    assert_int_equal(opml_parse(&a, reader_opml, strlen(reader_opml), &f, &n, &e), 0);
    assert_int_equal(n, 5);
    str_is(f[0].url, "https://feeds.arstechnica.com/arstechnica/index");
    str_is(f[0].title, "Ars Technica"); /* title wins over text */
    str_is(f[0].html_url, "https://arstechnica.com");
    str_is(f[0].folder_category, "technology");
    assert_int_equal(f[0].line, 8); /* its start tag ends there */
    /* A folder in a category folder: the category reaches through it. */
    str_is(f[1].url, "https://www.heise.de/rss/heise-atom.xml");
    str_is(f[1].title, "Heise & Co");
    str_is(f[1].folder_category, "technology");
    /* "Reading" names no category. */
    str_is(f[2].url, "https://blog.test/feed?a=1&b=2");
    str_is(f[2].folder_category, NULL);
    str_is(f[3].folder_category, "sports"); /* "SPORTS": any case */
    str_is(f[4].url, "https://top.test/rss");
    str_is(f[4].folder_category, NULL);
    for (size_t i = 0; i < n; i++) {
        str_is(f[i].source, NULL);
        str_is(f[i].interval, NULL);
    }
    arena_release(&a);
}

static void newsd_attributes_are_read_by_namespace_not_prefix(void **state)
{
    (void)state;
    static const char doc[] =
        "<opml version=\"2.0\" xmlns:n=\"" OPML_NS "\" xmlns:o=\"urn:other\"><body>"
        "<outline text=\"Sports\"><outline xmlUrl=\"https://a.test/rss\" n:source=\"bbc-news\" "
        "n:country=\"gb\" n:category=\"general\" n:language=\"en\" n:headlines=\"true\" "
        "n:interval=\"600\" n:paused=\"true\" o:country=\"fr\"/></outline>"
        "<outline xmlUrl=\"https://b.test/rss\" o:source=\"not-ours\"/>"
        "</body></opml>";
    /* A hand-written file that forgot xmlns:newsd: still newsd's. */
    static const char undeclared[] =
        "<opml version=\"2.0\"><body><outline xmlUrl=\"https://c.test/rss\" "
        "newsd:country=\"de\" newsd:paused=\"true\"/></body></opml>";
    struct arena a;
    struct opml_feed *f = NULL;
    size_t n = 0;
    struct err e;
    arena_init(&a, 0);
    assert_int_equal(opml_parse(&a, doc, strlen(doc), &f, &n, &e), 0);
    assert_int_equal(n, 2);
    str_is(f[0].source, "bbc-news");
    str_is(f[0].country, "gb"); /* not the other vocabulary's fr */
    str_is(f[0].category, "general");
    str_is(f[0].folder_category, "sports"); /* both given: the caller picks */
    str_is(f[0].language, "en");
    str_is(f[0].headlines, "true");
    str_is(f[0].interval, "600");
    str_is(f[0].paused, "true");
    str_is(f[1].source, NULL);
    assert_int_equal(opml_parse(&a, undeclared, strlen(undeclared), &f, &n, &e), 0);
    assert_int_equal(n, 1);
    str_is(f[0].country, "de");
    str_is(f[0].paused, "true");
    arena_release(&a);
}

static void written_feeds_read_back_the_same(void **state)
{
    (void)state;
    struct feed_record in[2];
    memset(in, 0, sizeof in);
    in[0].url = "https://a.test/rss?x=1&y=\"2\"<3>";
    in[0].title = "A \"quoted\" & <tagged>\ttitle";
    in[0].site_url = "https://a.test/";
    in[0].source_id = "bbc-news";
    memcpy(in[0].country, "gb", 3);
    in[0].category = "general";
    memcpy(in[0].language, "en", 3);
    in[0].headline = true;
    in[0].interval_s = 900;
    in[0].enabled = true;
    in[1].url = "https://b.test/atom";
    in[1].enabled = false;
    struct buf b;
    buf_init(&b, 0);
    opml_write(&b, in, 2);
    assert_int_equal(buf_error(&b), 0);
    struct arena a;
    struct opml_feed *f = NULL;
    size_t n = 0;
    struct err e;
    arena_init(&a, 0);
    assert_true(opml_sniff(b.data, b.len));
    assert_int_equal(opml_parse(&a, b.data, b.len, &f, &n, &e), 0);
    assert_int_equal(n, 2);
    str_is(f[0].url, in[0].url);
    str_is(f[0].title, in[0].title);
    str_is(f[0].html_url, "https://a.test/");
    str_is(f[0].source, "bbc-news");
    str_is(f[0].country, "gb");
    str_is(f[0].category, "general");
    str_is(f[0].language, "en");
    str_is(f[0].headlines, "true");
    str_is(f[0].interval, "900");
    str_is(f[0].paused, NULL);
    str_is(f[1].url, "https://b.test/atom");
    str_is(f[1].title, "https://b.test/atom"); /* no title yet: the url */
    str_is(f[1].headlines, NULL);
    str_is(f[1].interval, "300"); /* the default, said outright */
    str_is(f[1].paused, "true");
    buf_release(&b);
    arena_release(&a);
}

static void refused(const char *doc, int want_rc, const char *want_msg)
{
    struct arena a;
    struct opml_feed *f = (struct opml_feed *)1;
    size_t n = 99;
    struct err e;
    err_clear(&e);
    arena_init(&a, 0);
    assert_int_equal(opml_parse(&a, doc, strlen(doc), &f, &n, &e), want_rc);
    assert_null(f);
    assert_int_equal(n, 0);
    if (!strstr(e.msg, want_msg))
        fail_msg("want a message with '%s', got '%s'", want_msg, e.msg);
    arena_release(&a);
}

static void hostile_and_broken_documents_are_refused_with_a_reason(void **state)
{
    (void)state;
    /* Billion laughs: refused at the DOCTYPE, nothing expanded. */
    refused("<?xml version=\"1.0\"?><!DOCTYPE opml [<!ENTITY a \"aaaaaaaaaa\">"
            "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;\">]>"
            "<opml><body><outline xmlUrl=\"http://a.test/&c;\"/></body></opml>",
            ERR_PARSE, "DOCTYPE");
    /* An external entity (file or network): refused the same way. */
    refused("<!DOCTYPE opml SYSTEM \"file:///etc/passwd\"><opml><body/></opml>", ERR_PARSE,
            "DOCTYPE");
    refused("<opml><body><outline xmlUrl=\"http://a.test/\"></body></opml>", ERR_PARSE, "line 1");
    refused("<opml><body><outline xmlUrl=\"http://a.test/&nbsp;\"/></body></opml>", ERR_PARSE,
            "not well-formed");
    refused("<rss version=\"2.0\"><channel/></rss>", ERR_PARSE, "not OPML");
    refused("", ERR_PARSE, "not well-formed");
    /* Folders 40 deep. */
    char deep[2048] = "<opml><body>";
    for (int i = 0; i < 40; i++)
        strcat(deep, "<outline text=\"f\">");
    strcat(deep, "<outline xmlUrl=\"http://a.test/\"/>");
    for (int i = 0; i < 40; i++)
        strcat(deep, "</outline>");
    strcat(deep, "</body></opml>");
    refused(deep, ERR_PARSE, "nested deeper");
}

static void jsonl_is_not_taken_for_opml(void **state)
{
    (void)state;
    const char *jsonl = "{\"url\": \"https://a.test/<opml\"}\n";
    assert_false(opml_sniff(jsonl, strlen(jsonl)));
    assert_false(opml_sniff("", 0));
    assert_true(opml_sniff("\xEF\xBB\xBF\n  <?xml version=\"1.0\"?><opml>", 33));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_readers_export_gives_every_feed_with_its_folder_category),
        cmocka_unit_test(newsd_attributes_are_read_by_namespace_not_prefix),
        cmocka_unit_test(written_feeds_read_back_the_same),
        cmocka_unit_test(hostile_and_broken_documents_are_refused_with_a_reason),
        cmocka_unit_test(jsonl_is_not_taken_for_opml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
