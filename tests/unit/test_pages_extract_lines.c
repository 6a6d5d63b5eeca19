/* What the main text keeps and drops (docs/extraction.md): lines that
 * are not the article (pointers to other articles, "Read more:",
 * "Related" and the list it leads, tag lists, "About the author",
 * newsletter and tip asks, photo credits, captions and copyright lines)
 * are dropped, and the article's own paragraphs, even one that says
 * "related", stay; the lead comes first; a menu is never the article. */
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

#define PARA(n)                                                                                    \
    "<p>Paragraph " #n " of the report: the committee met on Tuesday to discuss the proposal, "    \
    "which had been debated for months, and decided that the plan would go ahead.</p>"

/* A page extracted as the river story's, and the arena it lives in. */
struct river {
    struct arena a;
    struct extracted_page p;
};

/* html[0..n) extracted into r (released by the caller); its text. */
static const char *river(struct river *r, const char *html, size_t n)
{
    arena_init(&r->a, 0);
    struct extract_options opt = {.url = "https://news.example/2024/05/river-plan"};
    assert_int_equal(extract_page(&r->a, html, n, &opt, &r->p), 0);
    return r->p.text;
}

/* text holds paragraphs 1 to last of PARA. */
static void assert_paragraphs(const char *text, int last)
{
    for (int n = 1; n <= last; n++) {
        char want[32];
        snprintf(want, sizeof want, "Paragraph %d of", n);
        if (!strstr(text, want))
            fail_msg("lost [%s] in [%s]", want, text);
    }
}

static const char page[] = "<html><head><title>River plan</title></head><body><article>" PARA(
    1) "<figure><img src=\"/a.jpg\"><figcaption>Foto: Reuters/Jane "
       "Doe</figcaption></figure>" PARA(
           2) "<p><strong>Read more: The council's budget for "
              "next year</strong></p>" PARA(
                  3) "<p>Lea también: "
                     "Otro artículo "
                     "sobre el "
                     "río</p>" PARA(
                         4) "<p>Related to the plan, the mayor spoke of the bridge, the ferry, the "
                            "costs and the "
                            "timetable at length, in a long speech that went on well past the hour "
                            "set for it, and "
                            "to the end of the afternoon.</p>"
                            "<h3>Related</h3><ul><li><a href=\"/x\">Another story about the "
                            "river</a></li>"
                            "<li><a href=\"/y\">Weather this weekend in the valley</a></li></ul>"
                            "<p>Tags: river, council, bridge</p>"
                            "<h3>About the author</h3>"
                            "<p>Sign up for our newsletter to get the news every morning.</p>"
                            "<p>Have a tip? Write to us.</p>"
                            "<p>© 2024 The Daily Example</p>"
                            "</article></body></html>";

static void lines_that_are_not_the_article_are_dropped(void **state)
{
    (void)state;
    struct river r;
    river(&r, page, sizeof page - 1);
    struct extracted_page p = r.p;
    assert_paragraphs(p.text, 4);
    assert_non_null(strstr(p.text, "Related to the plan, the mayor"));
    static const char *const gone[] = {
        "Foto: Reuters", "Read more",        "Lea también", "Another story", "Weather this",
        "Tags:",         "About the author", "newsletter",  "Have a tip",    "©"};
    for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++)
        if (strstr(p.text, gone[k]))
            fail_msg("kept [%s] in [%s]", gone[k], p.text);
    arena_release(&r.a);
}

/* What the article relies on stays: an embedded tweet in its wrapper (a
 * link-heavy div), a block quote, a video's caption, the text after an
 * inline ad; a photo's caption goes. */
static const char quotes_page[] =
    "<html><head><title>River plan</title><meta property=\"og:type\" content=\"article\">"
    "</head><body><div class=\"article-body\">" PARA(
        1) "<div class=\"embed embed-twitter\"><blockquote class=\"twitter-tweet\"><p>The bridge "
           "is "
           "finally approved, great news for the whole valley <a "
           "href=\"https://t.co/a\">pic.twitter"
           ".com/a</a></p>&mdash; Mayor Jane (@mayorjane) <a "
           "href=\"https://twitter.com/x/status/1\">"
           "May 7, 2024</a></blockquote><script src=\"https://platform.twitter.com/widgets.js\">"
           "</script></div>" PARA(
               2) "<blockquote><p>We waited twenty years for this bridge, said a "
                  "resident.</p></blockquote>"
                  "<div class=\"ad-container\"><div class=\"ad\">Advertisement</div></div>" PARA(
                      3) "<figure class=\"video\"><video src=\"v.mp4\"></video><figcaption>The "
                         "mayor explains the "
                         "bridge plan in two minutes.</figcaption></figure>"
                         "<figure><img src=\"/b.jpg\"><figcaption>The river at dawn, seen from the "
                         "old ferry."
                         "</figcaption></figure>" PARA(4) "</div></body></html>";

static void quotes_tweets_and_video_captions_stay(void **state)
{
    (void)state;
    struct river r;
    river(&r, quotes_page, sizeof quotes_page - 1);
    struct extracted_page p = r.p;
    static const char *const kept[] = {"Paragraph 1 of", "finally approved", "Paragraph 2 of",
                                       "twenty years",   "Paragraph 3 of",   "explains the bridge",
                                       "Paragraph 4 of"};
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
        if (!strstr(p.text, kept[k]))
            fail_msg("lost [%s] in [%s]", kept[k], p.text);
    if (strstr(p.text, "river at dawn"))
        fail_msg("kept the photo's caption in [%s]", p.text);
    arena_release(&r.a);
}

/* The lead paragraph above the body, in a header of its own that scoring
 * leaves out, is put first when the page's description says it; a teaser
 * that the description does not announce stays out. */
static const char lead_page[] =
    "<html><head><title>River plan</title><meta name=\"description\" content=\"The council "
    "approved the river plan on Tuesday after months of debate.\"></head><body>"
    "<div class=\"teaser\"><p>Weather: sunny spells all week long in the whole valley.</p></div>"
    "<div class=\"story-header\"><h1>River plan</h1><p class=\"lead\">The council approved "
    "the river plan on Tuesday after months of debate. Work starts in May.</p></div>"
    "<div class=\"article-body\">" PARA(1) PARA(2) PARA(3) PARA(4) PARA(5) "</div></body></html>";

static void the_lead_the_description_announces_comes_first(void **state)
{
    (void)state;
    struct river r;
    river(&r, lead_page, sizeof lead_page - 1);
    struct extracted_page p = r.p;
    assert_true(p.readerable);
    if (strncmp(p.text,
                "The council approved the river plan on Tuesday after months of debate. "
                "Work starts in May.\nParagraph 1 of",
                91) != 0)
        fail_msg("no lead first in [%s]", p.text);
    assert_int_equal(strlen(p.text), p.text_len);
    if (strstr(p.text, "sunny spells"))
        fail_msg("kept the teaser in [%s]", p.text);
    /* once only when the body holds it already */
    const char *again = strstr(p.text + 10, "The council approved");
    if (again)
        fail_msg("lead twice in [%s]", p.text);
    arena_release(&r.a);
}

/* Without a description, a lead the page marks by its class ("intro",
 * "chapo", "teaser", ...) right above the body is put first; one further
 * up, with other text between it and the body, is another article's. */
static const char class_lead_page[] =
    "<html><head><title>River plan</title></head><body>"
    "<div class=\"teaser\"><p>Weather: sunny spells all week long in the whole valley.</p></div>"
    "<div class=\"promo\"><p>The market opens on Saturday, with stalls along the quay and music "
    "in the square until late; the ferry runs every hour and the bridge stays closed to cars "
    "for the whole day, so come on foot or by bike, and bring a bag for the fish, the bread and "
    "the cheese, as there will be none at the stalls.</p></div>"
    "<div class=\"story-header\"><h1>River plan</h1><div class=\"article-intro\"><p>The council "
    "approved the river plan on Tuesday after months of debate.</p></div><p>By Jane Doe</p></div>"
    "<main><div class=\"article-body\">" PARA(1) PARA(2) PARA(3) PARA(4)
        PARA(5) "</div></main></body></html>";

static void the_lead_its_class_marks_comes_first(void **state)
{
    (void)state;
    struct river r;
    river(&r, class_lead_page, sizeof class_lead_page - 1);
    struct extracted_page p = r.p;
    if (strncmp(p.text,
                "The council approved the river plan on Tuesday after months of debate."
                "\nParagraph 1 of",
                85) != 0)
        fail_msg("no lead first in [%s]", p.text);
    assert_int_equal(strlen(p.text), p.text_len);
    if (strstr(p.text, "sunny spells"))
        fail_msg("kept the teaser in [%s]", p.text);
    /* unmarked, the intro stays out, and the teaser far above does not
     * take its place */
    char plain[sizeof class_lead_page];
    memcpy(plain, class_lead_page, sizeof plain);
    char *intro = strstr(plain, "article-intro");
    assert_non_null(intro);
    memcpy(intro, "plain-block-x", 13);
    arena_release(&r.a);
    river(&r, plain, sizeof plain - 1);
    p = r.p;
    if (strncmp(p.text, "Paragraph 1 of", 14) != 0)
        fail_msg("text before the body in [%s]", p.text);
    arena_release(&r.a);
}

/* The block that holds most of what was picked and reads as prose stays,
 * whatever its class says (a "media" word on the article's own body). */
static const char prose_page[] =
    "<html><head><title>River plan</title></head><body><article class=\"post\">" PARA(1) PARA(2)
        PARA(3) PARA(4) "<div class=\"media-box\">" PARA(5) PARA(6) PARA(7) PARA(8) PARA(9)
            PARA(10) "</div></article></body></html>";

static void the_article_in_a_block_of_any_class_stays(void **state)
{
    (void)state;
    struct river r;
    river(&r, prose_page, sizeof prose_page - 1);
    struct extracted_page p = r.p;
    assert_paragraphs(p.text, 10);
    arena_release(&r.a);
}

/* A list of hardly any links (a recipe's steps) stays, though a list's
 * tag scores it below zero. */
static const char steps_page[] =
    "<html><head><title>River cake</title></head><body><article class=\"post\">" PARA(1) PARA(2)
        PARA(3) PARA(4) "<ol><li><p>Heat the oven to two hundred degrees</p></li>"
                        "<li><p>Mix the flour and the butter in a bowl</p></li>"
                        "<li><p>Bake the cake for forty minutes or so</p></li>"
                        "<li><p>Let it cool before you cut the first slice</p></li></ol>" PARA(
                            5) "</article></body></html>";

static void a_list_of_steps_stays(void **state)
{
    (void)state;
    struct river r;
    river(&r, steps_page, sizeof steps_page - 1);
    struct extracted_page p = r.p;
    static const char *const kept[] = {"Heat the oven", "Mix the flour", "Bake the cake",
                                       "Let it cool", "Paragraph 5 of"};
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
        if (!strstr(p.text, kept[k]))
            fail_msg("lost [%s] in [%s]", kept[k], p.text);
    arena_release(&r.a);
}

/* A photo's caption goes when its class says caption (WordPress's
 * "wp-caption-text") or it is a figcaption outside any figure, beside the
 * image it captions. */
static const char caption_page[] =
    "<html><head><title>River plan</title></head><body><article class=\"post\">" PARA(
        1) "<div class=\"wp-caption\"><img src=\"/a.jpg\"><p class=\"wp-caption-text\">The river "
           "at "
           "dawn, seen from the old bridge</p></div>" PARA(2) PARA(
               3) "<div class=\"visual\"><img src=\"/b.jpg\"><figcaption>The mayor at the council "
                  "meeting</figcaption></div>" PARA(4) "</article></body></html>";

static void captions_by_class_and_outside_figures_are_dropped(void **state)
{
    (void)state;
    struct river r;
    river(&r, caption_page, sizeof caption_page - 1);
    struct extracted_page p = r.p;
    assert_paragraphs(p.text, 4);
    if (strstr(p.text, "river at dawn") || strstr(p.text, "mayor at the"))
        fail_msg("kept a caption in [%s]", p.text);
    arena_release(&r.a);
}

/* A <nav> is navigation as role="navigation" is: a district guide in the
 * menu, with more commas than the article, never outscores it. */
#define GUIDE(n)                                                                                   \
    "<p>District " #n ": old town, market, harbour, park, museum, theatre, zoo, all within a "     \
    "short walk, with cafés, shops, bakeries, and a view of the river from the hill.</p>"

static const char nav_page[] =
    "<html><head><title>River plan</title></head><body><aside><nav><div>" GUIDE(1) GUIDE(2)
        GUIDE(3) "</div></nav></aside><main><div>" PARA(1) PARA(2) PARA(3)
            PARA(4) "</div></main></body></html>";

static void a_nav_is_never_the_article(void **state)
{
    (void)state;
    struct river r;
    river(&r, nav_page, sizeof nav_page - 1);
    struct extracted_page p = r.p;
    assert_paragraphs(p.text, 4);
    if (strstr(p.text, "District"))
        fail_msg("kept the menu in [%s]", p.text);
    arena_release(&r.a);
}

/* Of two blocks of text, the one by the headline (the h1 that repeats the
 * title) is the article, though the other, in another branch of the
 * page, scores a little more. */
#define NOTICE(n)                                                                                  \
    "<p>Notice " #n ": the market, the ferry, and the fair are open all week long this summer, "   \
    "with music every night on the quay.</p>"

static const char headline_page[] =
    "<html><head><title>River plan</title></head><body><main><div><h1>River plan</h1>" PARA(1)
        PARA(2) PARA(3) PARA(4) "</div></main><div class=\"notices\"><div><div><div>" NOTICE(1)
            NOTICE(2) NOTICE(3) NOTICE(4) "</div></div></div></div></body></html>";

static void the_block_at_the_headline_is_the_article(void **state)
{
    (void)state;
    struct river r;
    const char *text = river(&r, headline_page, sizeof headline_page - 1);
    assert_paragraphs(text, 4);
    if (strstr(text, "Notice"))
        fail_msg("took the notices in [%s]", text);
    arena_release(&r.a);
}

/* The box about the author at the end goes, by its class; so do more
 * pointers, asks and credits in other languages, while a sentence that
 * starts with such a word stays. */
static const char box_page[] =
    "<html><head><title>River plan</title></head><body><article class=\"post\">" PARA(1)
        PARA(2) "<p>Beitragsbild: Stadtarchiv</p>" PARA(3) "<p>Vea también: Otro artículo sobre el "
                                                           "río</p>" PARA(
                                                               4) "<p>Siehe auch die Brücke im "
                                                                  "Tal</p>"
                                                                  "<p>Subscribe now to our print "
                                                                  "edition for the full story.</p>"
                                                                  "<p>Never miss the latest news: "
                                                                  "sign up today!</p>"
                                                                  "<p>Sie sind aktuell nicht "
                                                                  "eingeloggt.</p>"
                                                                  "<div "
                                                                  "class=\"AuthorBox\"><p>Jane Doe "
                                                                  "writes about rivers and bridges "
                                                                  "for the paper, and "
                                                                  "has done so for ten "
                                                                  "years.</p></div>"
                                                                  "<div "
                                                                  "class=\"saboxplugin-wrap\"><div "
                                                                  "class=\"saboxplugin-desc\"><p>"
                                                                  "Ich mag jede Art von "
                                                                  "Fotografie.</p></div></div>"
                                                                  "</article></body></html>";

static void author_boxes_and_more_lines_are_dropped(void **state)
{
    (void)state;
    struct river r;
    river(&r, box_page, sizeof box_page - 1);
    struct extracted_page p = r.p;
    assert_paragraphs(p.text, 4);
    static const char *const gone[] = {"Beitragsbild",    "Vea también", "Siehe auch",
                                       "Subscribe now",   "Never miss",  "eingeloggt",
                                       "Jane Doe writes", "jede Art"};
    for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++)
        if (strstr(p.text, gone[k]))
            fail_msg("kept [%s] in [%s]", gone[k], p.text);
    arena_release(&r.a);
}

/* A paragraph that is all links (a related headline, "Bilder des
 * Treffens", a forum thread) goes wherever it sits; a paragraph with a
 * link in its sentence stays, and so does a link that shows a web or mail
 * address (the article gives it as information). */
static const char link_page[] = "<html><head><title>River plan</title></head><body><article>" PARA(
    1) "<p><a href=\"/x\">Ferry prices rise again as the summer season "
       "starts</a></p>" PARA(2) "<p>The mayor <a href=\"/m\">explained the plan</a> to "
                                "the council and "
                                "the press on Monday.</p><p><a "
                                "href=\"mailto:river@city.example\">"
                                "river@city.example</a></p>" PARA(
                                    3) "<p><strong><a href=\"/f\">The forum: your "
                                       "bridge stories</a></strong></p></article>"
                                       "</body></html>";

/* html extracted as the river story: paragraphs 1 to last, the kept
 * phrase there, the dropped one not. */
static void assert_keeps_and_drops(const char *html, size_t n, int last, const char *kept,
                                   const char *dropped)
{
    struct river r;
    const char *text = river(&r, html, n);
    assert_paragraphs(text, last);
    if (!strstr(text, kept))
        fail_msg("lost [%s] in [%s]", kept, text);
    if (strstr(text, dropped))
        fail_msg("kept [%s] in [%s]", dropped, text);
    arena_release(&r.a);
}

static void a_paragraph_of_links_is_dropped(void **state)
{
    (void)state;
    size_t n = sizeof link_page - 1;
    assert_keeps_and_drops(link_page, n, 3, "The mayor explained the plan", "Ferry prices");
    assert_keeps_and_drops(link_page, n, 3, "river@city.example", "The forum");
}

/* A heading that ends the text heads what cleaning dropped (a block of
 * links to other articles): it goes; a heading with the article's text after it
 * stays. */
static const char trailing_heading_page[] =
    "<html><head><title>River plan</title></head><body><article>" PARA(
        1) "<h3>What the mayor said</h3>" PARA(2) PARA(3)
        PARA(4) "<h3>Upcoming at the quay</h3><div><a href=\"/a\">Ferry prices</a> "
                "<a href=\"/b\">Bridge works</a> <a href=\"/c\">Quay fair</a></div>"
                "</article></body></html>";

static void a_heading_that_ends_the_text_is_dropped(void **state)
{
    (void)state;
    assert_keeps_and_drops(trailing_heading_page, sizeof trailing_heading_page - 1, 4,
                           "What the mayor said", "Upcoming at the quay");
}

/* A short block whose class says it is a photo's credit, a disclaimer, a
 * rating widget or a call to action goes; a paragraph of the article
 * beside it stays. */
static const char side_note_page[] =
    "<html><head><title>River plan</title></head><body><article>"
    "<div class=\"post-image-credits\">Jane Roe</div>" PARA(1)
        PARA(2) "<p class=\"editorial-disclaimer\">We may receive compensation for some "
                "links.</p>" PARA(
                    3) "<p class=\"lead-quote\">The ferry stays until the bridge opens.</p>"
                       "<div class=\"post-ratings\">(No ratings yet)</div>"
                       "<div class=\"vc_cta3\">Join our river seminar in June!</div>"
                       "</article></body></html>";

static void side_notes_by_class_are_dropped(void **state)
{
    (void)state;
    size_t n = sizeof side_note_page - 1;
    assert_keeps_and_drops(side_note_page, n, 3, "The ferry stays", "Jane Roe");
    assert_keeps_and_drops(side_note_page, n, 3, "The ferry stays", "compensation");
    assert_keeps_and_drops(side_note_page, n, 3, "The ferry stays", "No ratings");
    assert_keeps_and_drops(side_note_page, n, 3, "The ferry stays", "river seminar");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_that_are_not_the_article_are_dropped),
        cmocka_unit_test(quotes_tweets_and_video_captions_stay),
        cmocka_unit_test(the_lead_the_description_announces_comes_first),
        cmocka_unit_test(the_lead_its_class_marks_comes_first),
        cmocka_unit_test(the_article_in_a_block_of_any_class_stays),
        cmocka_unit_test(a_list_of_steps_stays),
        cmocka_unit_test(captions_by_class_and_outside_figures_are_dropped),
        cmocka_unit_test(a_nav_is_never_the_article),
        cmocka_unit_test(the_block_at_the_headline_is_the_article),
        cmocka_unit_test(author_boxes_and_more_lines_are_dropped),
        cmocka_unit_test(a_paragraph_of_links_is_dropped),
        cmocka_unit_test(a_heading_that_ends_the_text_is_dropped),
        cmocka_unit_test(side_notes_by_class_are_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
