/* The author (ingest/pages/pages.h byline; docs/extraction.md "Author"): from
 * JSON-LD author (string, object, array, @graph), <meta name=author>,
 * article:author, then the page's author line (rel=author, itemprop,
 * byline and author classes), with its labels and dates cut off and
 * non-names (URLs, e-mail addresses, "Staff", the site's name) refused. */
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

#define PARA                                                                                       \
    "<p>The committee met on Tuesday to discuss the proposal, which had been debated for "         \
    "months, and decided after a long session that the plan would go ahead, with changes.</p>"

struct page {
    struct arena a;
    struct extracted_page p;
};

static void page_extract(struct page *pg, const char *head, const char *body_class,
                         const char *body)
{
    struct buf b;
    buf_init(&b, 0);
    buf_printf(&b,
               "<html><head><title>River plan</title>%s</head><body class=\"%s\">%s"
               "<article>" PARA PARA PARA PARA "</article></body></html>",
               head, body_class, body);
    arena_init(&pg->a, 0);
    struct extract_options opt = {.url = "https://news.example/2024/05/river-plan"};
    assert_int_equal(extract_page(&pg->a, b.data, b.len, &opt, &pg->p), 0);
    buf_release(&b);
}

static void assert_author(const char *head, const char *body, const char *want)
{
    struct page pg;
    page_extract(&pg, head, "", body);
    if (want == NULL ? pg.p.byline != NULL : (!pg.p.byline || strcmp(pg.p.byline, want) != 0))
        fail_msg("byline [%s], want [%s]", pg.p.byline ? pg.p.byline : "(null)",
                 want ? want : "(null)");
    arena_release(&pg.a);
}

/* One page's metadata, body and the author it must give (NULL: none). */
struct author_case {
    const char *head, *body, *want;
};

static void assert_authors(const struct author_case *cases, size_t n)
{
    for (size_t k = 0; k < n; k++)
        assert_author(cases[k].head, cases[k].body, cases[k].want);
}

static void labels_and_dates_are_cut_off_the_author_line(void **state)
{
    (void)state;
    assert_author("", "<div class=\"byline\">By Emily Burack 8 January 2020, 3:51 pm</div>",
                  "Emily Burack");
    /* a screen reader's label glued to the link */
    assert_author("",
                  "<span class=\"byline\"><span class=\"screen-reader-text\">Veröffentlicht von"
                  "</span><a class=\"url fn n\" href=\"/author/cj/\">Chris Jung</a></span>",
                  "Chris Jung");
    assert_author("",
                  "<span class=\"byline\"> von <span class=\"author vcard\">Heiko</span></span>",
                  "Heiko");
    assert_author("", "<p class=\"author\">~ Cem Basman | 3 Kommentare</p>", "Cem Basman");
    assert_author("", "<p class=\"author\">Zeige alle Beiträge von Simon Dückert →</p>",
                  "Simon Dückert");
    assert_author("", "<span class=\"author\">Perry Bacon Jr.</span>", "Perry Bacon Jr.");
    /* a number that ends the line is part of the name */
    assert_author("<meta name=\"author\" content=\"Writer 2\">", "", "Writer 2");
}

static void metadata_authors_are_read_in_order(void **state)
{
    (void)state;
    assert_author("<script type=\"application/ld+json\">{\"@graph\":[{\"@type\":\"NewsArticle\","
                  "\"author\":{\"@type\":\"Person\",\"name\":\"Ada Lovelace\"}}]}</script>"
                  "<meta name=\"author\" content=\"Someone Else\">",
                  "", "Ada Lovelace");
    assert_author("<script type=\"application/ld+json\">{\"@type\":\"Article\",\"author\":["
                  "{\"name\":\"Ada Lovelace\"},{\"name\":\"Alan Turing\"}]}</script>",
                  "", "Ada Lovelace, Alan Turing");
    assert_author("<meta property=\"article:author\" content=\"Grace Hopper\">", "",
                  "Grace Hopper");
    assert_author("", "<a rel=\"author\" href=\"/author/gh\">Grace Hopper</a>", "Grace Hopper");
}

static void what_names_no_one_is_refused(void **state)
{
    (void)state;
    /* a URL in JSON-LD: the <meta> name is taken instead */
    assert_author("<script type=\"application/ld+json\">{\"@type\":\"Article\",\"author\":"
                  "\"https://news.example/author/ada\"}</script>"
                  "<meta name=\"author\" content=\"Ada Lovelace\">",
                  "", "Ada Lovelace");
    assert_author("<meta name=\"author\" content=\"Staff\">", "", NULL);
    assert_author("<meta name=\"author\" content=\"ada@news.example\">", "", NULL);
    /* the site's name in JSON-LD's author is a plugin's default, not a
     * name; in <meta name=author> it is a blogger's own */
    assert_author("<meta property=\"og:site_name\" content=\"Daily Example\">"
                  "<script type=\"application/ld+json\">{\"@type\":\"Article\",\"author\":"
                  "{\"@type\":\"Organization\",\"name\":\"Daily Example\"}}</script>",
                  "", NULL);
    assert_author("<meta property=\"og:site_name\" content=\"Haki Benita\">"
                  "<meta name=\"author\" content=\"Haki Benita\">",
                  "", "Haki Benita");
    assert_author("", "<span class=\"byline\">Sunday, Feb 1, 2015</span>", NULL);
    assert_author("", "<a class=\"author-link\">James Akinaka \u2022 8h</a>", "James Akinaka");
    assert_author("", "<span class=\"byline\">Posted on</span>", NULL);
    /* a sentence is no name */
    assert_author("",
                  "<p class=\"author\">This is a very long line that talks about the "
                  "author and many other things</p>",
                  NULL);
}

/* Yoast's @graph names the author by @id; the Person with that @id has
 * the name. A line "By Jane Doe" with no class is the author's line; a
 * heading or sentence that starts with "Von" is not. */
static void authors_by_id_and_by_label(void **state)
{
    (void)state;
    assert_author("<script type=\"application/ld+json\">{\"@graph\":[{\"@type\":\"Article\","
                  "\"author\":{\"@id\":\"https://n.example/#/schema/person/1\"}},"
                  "{\"@type\":\"Person\",\"@id\":\"https://n.example/#/schema/person/2\","
                  "\"name\":\"Someone Else\"},"
                  "{\"@type\":\"Person\",\"@id\":\"https://n.example/#/schema/person/1\","
                  "\"name\":\"Ada Lovelace\"}]}</script>",
                  "", "Ada Lovelace");
    /* an @id that names nothing in the graph gives no name */
    assert_author("<script type=\"application/ld+json\">{\"@graph\":[{\"@type\":\"Article\","
                  "\"author\":{\"@id\":\"#nobody\"}}]}</script>",
                  "", NULL);
    assert_author("", "<p><em>Written by: Julie Mollins</em></p>", "Julie Mollins");
    assert_author("", "<p>Von Roland Brockmann und Sebastian Drescher</p>",
                  "Roland Brockmann und Sebastian Drescher");
    assert_author("", "<h5>Von der Idee zum fertigen Produkt</h5>", NULL);
}

/* The label in an element of its own, the name in the next one ("<span>By
 * </span><a>Jane Doe</a>", "<h5>Autor:</h5> Jane Doe"); "von" in lower
 * case; a label inside a longer line that fails is looked for again in
 * the shorter lines it holds. */
static void authors_after_a_label_of_their_own(void **state)
{
    (void)state;
    assert_author("",
                  "<div><span>By</span><span><a href=\"/team/ab\">Alex Bozarjian</a></span></div>",
                  "Alex Bozarjian");
    assert_author("", "<div><h5>Autor: </h5>Peter Maahn</div>", "Peter Maahn");
    assert_author("", "<p><i>von Daniela Obers</i></p>", "Daniela Obers");
    /* the outer line is a date after the name; the inner one is the name */
    assert_author("",
                  "<div><div><span>By</span><span>Alex Bozarjian</span></div>"
                  "<div>Thursday, November 9, 2023 4:41AM</div></div>",
                  "Alex Bozarjian");
    /* a label alone followed by a sentence names no one */
    assert_author("", "<div><span>By</span><span>the way, the river is high</span></div>", NULL);
    assert_author("", "<p>von der Idee zum fertigen Produkt</p>", NULL);
    /* a term and its description */
    assert_author("",
                  "<dl><dt>Auteur</dt>\n<dd><a href=\"/staff/ug/\">Uriel Gadessaud</a></dd>"
                  "<dt>Date</dt><dd>2 mars 2020</dd></dl>",
                  "Uriel Gadessaud");
    /* in a block whose class says boilerplate ("header"), when nothing
     * outside it says who wrote the page */
    assert_author("",
                  "<div class=\"header\"><address>By <a href=\"/author/ta/\">Tim Anderson"
                  "</a></address></div>",
                  "Tim Anderson");
}

/* The site's name as JSON-LD's author is refused even when typed Person
 * (a plugin's default often is): the page's own author line wins. A
 * bullet glued to the name ends it; "Text:" is a label. */
static void the_sites_name_gives_way_to_the_author_line(void **state)
{
    (void)state;
    assert_author("<meta property=\"og:site_name\" content=\"The Opinion\">"
                  "<script type=\"application/ld+json\">{\"@type\":\"NewsArticle\",\"author\":"
                  "{\"@type\":\"Person\",\"name\":\"The Opinion\"}}</script>",
                  "<div class=\"byline\">Emma Ducros</div>", "Emma Ducros");
    assert_author("", "<span class=\"author\">Ada Lovelace\u2022 15 min read</span>",
                  "Ada Lovelace");
    assert_author("", "<p>Text: Klausmartin Friedrich</p>", "Klausmartin Friedrich");
    /* the pictures' credit after the writer's name is not the writer */
    assert_author("",
                  "<span class=\"byline\">Text von Christian Seiler Illustration von Markus "
                  "Roost</span>",
                  "Christian Seiler");
    assert_author("", "<span class=\"byline\">By Jane Doe Photos by John Roe</span>", "Jane Doe");
    /* "Text und Interview" is no label: the line is left whole */
    assert_author("", "<span class=\"byline\">Text und Interview</span>", "Text und Interview");
}

static void commenters_are_not_the_author(void **state)
{
    (void)state;
    struct page pg;
    page_extract(&pg, "", "single has-sidebar comments-open",
                 "<div class=\"comments\"><span class=\"comment-author-link\">Reader Joe</span>"
                 "</div><span class=\"byline\">von <a rel=\"author\">Heiko</a></span>");
    assert_non_null(pg.p.byline);
    assert_string_equal(pg.p.byline, "Heiko");
    arena_release(&pg.a);
}

/* Yoast's Twitter card names the author beside a label that says so; a
 * WebPage's author stands in for an article's that names none. */
static void authors_from_twitter_labels_and_web_pages(void **state)
{
    (void)state;
    assert_author("<meta name=\"twitter:label1\" content=\"Verfasst von\">"
                  "<meta name=\"twitter:data1\" content=\"Karoline Herr\">",
                  "", "Karoline Herr");
    /* a handle after the name is cut */
    assert_author("<meta name=\"twitter:label1\" content=\"Written by\">"
                  "<meta name=\"twitter:data1\" content=\"Williams Perdomo @wperdomod\">",
                  "", "Williams Perdomo");
    /* the label says what data1 is: a reading time is no author */
    assert_author("<meta name=\"twitter:label1\" content=\"Est. reading time\">"
                  "<meta name=\"twitter:data1\" content=\"3 Minuten\">",
                  "", NULL);
    assert_author("<script type=\"application/ld+json\">{\"@graph\":[{\"@type\":\"WebPage\","
                  "\"author\":{\"@id\":\"https://x.example/#/schema/person/1\"}},"
                  "{\"@type\":\"Person\",\"@id\":\"https://x.example/#/schema/person/1\","
                  "\"name\":\"Harald Bauer\"}]}</script>",
                  "", "Harald Bauer");
    /* a raw line break inside a string (hand-written templates) */
    assert_author("<script type=\"application/ld+json\">{\"@type\":\"BlogPosting\","
                  "\"description\":\"two\nlines\",\"author\":{\"@type\":\"Person\","
                  "\"name\":\"Jacopo Cascioli\"}}</script>",
                  "", "Jacopo Cascioli");
    /* an article's own author comes first */
    assert_author("<script type=\"application/ld+json\">{\"@graph\":[{\"@type\":\"WebPage\","
                  "\"author\":\"Page Owner\"},{\"@type\":\"Article\",\"author\":\"Ada Lovelace\"}"
                  "]}</script>",
                  "", "Ada Lovelace");
}

/* The entry itself (<article>, "hentry") ends the walk up for comments and
 * widgets: Blogger's posts sit in a "widget Blog", some themes' content in
 * an id="sidebar". More labels: "Eingestellt von", "Posted by", "Auteur :". */
static void the_entry_speaks_for_its_author_line(void **state)
{
    (void)state;
    assert_author(
        "",
        "<div class=\"widget Blog\"><div class=\"post hentry\"><span class=\"post-author"
        " vcard\">Eingestellt von <span class=\"fn\">der Michel</span></span></div></div>",
        "der Michel");
    assert_author("",
                  "<div id=\"sidebar\"><article><span class=\"author\">Heiko Sauer</span>"
                  "</article></div>",
                  "Heiko Sauer");
    /* a widget's own author line stays out */
    assert_author("", "<div class=\"widget\"><span class=\"author\">Other Writer</span></div>",
                  NULL);
    assert_author("", "<span class=\"category\">Posted by Konstantin</span>", "Konstantin");
    assert_author("", "<p>Auteur : Kossivi Tiassou </p>", "Kossivi Tiassou");
    /* a label whose name is elsewhere names no one; nor does a month cut
     * from its day, "No Author", or a dateline's place */
    assert_author("", "<span class=\"author\">Veröffentlicht</span>", NULL);
    assert_author("", "<span class=\"author\">No Author</span>", NULL);
    assert_author("", "<p class=\"dateline\">KOBE \u2013</p>", NULL);
    assert_author("",
                  "<div class=\"byline\">Dezember 10, 2019 2:35 pm</div>"
                  "<span class=\"author vcard\">freeman1984</span>",
                  "freeman1984");
}

/* An author field that names the publisher (a legal form, the site's
 * name, the host's name) gives way to a person the page names; kept when
 * the page names no one, or only a word. */
static void a_publisher_gives_way_to_the_writer(void **state)
{
    (void)state;
    assert_author("<meta name=\"author\" content=\"Bund der Energieverbraucher e.V.\">",
                  "<h5><em>Von Leonora Holling</em></h5>", "Leonora Holling");
    assert_author("<meta name=\"author\" content=\"news.example\">",
                  "<p class=\"byline\">By Jane Doe</p>", "Jane Doe");
    assert_author("<meta name=\"author\" content=\"Hanns-Seidel-Stiftung e.V.\">", "",
                  "Hanns-Seidel-Stiftung e.V.");
    assert_author("<meta name=\"author\" content=\"News Example GmbH\">",
                  "<span class=\"byline\">Jun</span>", "News Example GmbH");
    /* a person's name in the field is not replaced */
    assert_author("<meta name=\"author\" content=\"Ada Lovelace\">",
                  "<p class=\"byline\">By Jane Doe</p>", "Ada Lovelace");
}

/* A desk the page prints as its byline ("Redaktion") is the author, as
 * NewsAPI's "Reuters" is; a writer the page names replaces it. */
static void a_desk_byline_is_an_author(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<meta name=\"twitter:label1\" content=\"Verfasst von\">"
         "<meta name=\"twitter:data1\" content=\"Redaktion\">",
         "", "Redaktion"},
        {"", "<span class=\"byline author\">von Redaktion, </span>", "Redaktion"},
        {"<meta name=\"author\" content=\"Redaktion\">", "<p class=\"byline\">Von Jane Doe</p>",
         "Jane Doe"},
        /* the stand-ins still name no one */
        {"<meta name=\"author\" content=\"Editors\">", "", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A link to the author's page whose slug names its text (its itemprop=name
 * part when it has one) is the byline, whatever class holds it; a slug
 * that names someone else, a commenter's link or a related article's are
 * not. */
static void an_author_link_whose_slug_names_it(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div class=\"content sidebar\"><a href=\"/author/heiko-sauer/\">"
         "Heiko Sauer</a></div>",
         "Heiko Sauer"},
        {"",
         "<div class=\"teaser-meta\">VON <a href=\"/autoren/gathmann-moritz\">"
         "MORITZ GATHMANN</a></div>",
         "MORITZ GATHMANN"},
        {"",
         "<p><a href=\"https://news.example/author/martin\">Alles von Martin "
         "Junker</a></p>",
         "Martin Junker"},
        {"", "<p><a href=\"/author/modejournalistin/\">Kathrin Bierling</a></p>", NULL},
        {"", "<div class=\"comments\"><a href=\"/author/jane-doe/\">Jane Doe</a></div>", NULL},
        {"",
         "<div class=\"related-posts\"><a href=\"/author/jane-doe/\">Jane Doe</a>"
         "</div>",
         NULL},
        /* its itemprop=name part: the picture's credit in the link is none */
        {"",
         "<a href=\"https://news.example/autoren/kathrin-fuehres-684124\"><span "
         "class=\"profilbild\"><img src=\"/k.jpg\" alt=\"Kathrin Führes\"><span "
         "class=\"teaser-copyright\">© Kathrin Führes</span></span><span "
         "itemprop=\"name\">Kathrin Führes</span></a>",
         "Kathrin Führes"},
        {"",
         "<a href=\"https://news.example/autoren/kathrin-fuehres-684124\"><span "
         "itemprop=\"name\">Jagd und Hund</span></a>",
         NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* More labels ("Ein Artikel von", "Autoren", "Von:" before line breaks);
 * a date before the label or before a dash and two names or more; not a
 * calendar's lines, not one name after a dash, not a form's "Von:", not a
 * teaser's line. */
static void dated_and_labelled_lines(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div class=\"metaInfo\">Ein Artikel von <strong>Pamela Sladky</strong> | "
         "27.01.2022 - 12:45</div>",
         "Pamela Sladky"},
        {"", "<p>Autoren Jelko Djuren und Jutta Klaukien</p>", "Jelko Djuren und Jutta Klaukien"},
        {"", "<p><b>Von:</b> <br> <br> Götz Warnke</p>", "Götz Warnke"},
        {"", "<p class=\"text-muted\">11.12.2019 - Amelie Loevenich</p>", "Amelie Loevenich"},
        {"", "<small>04.02.2022 | 13:10 Uhr | Uta Helkenberg</small>", "Uta Helkenberg"},
        {"", "<h2>Stars <span>06.11.2023 13:30 von Olga</span></h2>", "Olga"},
        {"", "<p>03.11.2022 - Placebo</p>", NULL},
        {"", "<div><p>02.11.2022 - Grandbrothers</p><p>03.11.2022 - Mark Turner</p></div>", NULL},
        {"", "<p>03.11.2022 - Mark Turner - Arena</p>", NULL},
        {"", "<form><span>Von:</span> <button>Filter Suche</button></form>", NULL},
        /* a line styled as a teaser's is no teaser; a teaser's line is */
        {"", "<span class=\"teaser-cat\">von Andreas Kürten</span>", "Andreas Kürten"},
        {"", "<div class=\"teaser\"><h3>Another story</h3><span>von Jane Doe</span></div>", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* "Posted on <date> by", an account's lower-case name after blog
 * software's label, "Redaktion:" with a role after the name. */
static void posted_on_accounts_and_roles(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div class=\"page-meta--author\">Posted on September 21, 2020 by Adi "
         "Tzlil</div>",
         "Adi Tzlil"},
        {"",
         "<div class=\"submitted\">Gespeichert von <span>rasos</span> am 24. Juli "
         "2017</div>",
         "rasos"},
        {"", "<div>Gespeichert von rasos und ich</div>", NULL},
        {"", "<p>von heute an</p>", NULL},
        {"",
         "<div>05.02.2020 <span>- Redaktion: Eberhard Fuhr (Pressesprecher des "
         "EJW)</span></div>",
         "Eberhard Fuhr"},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A name signed under the text, in bold or italics, the last paragraph of
 * its block; not a bold line before more text, not one word. */
static void a_signature_under_the_text(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"", "<div>" PARA PARA PARA PARA "<p><b><i>Stefan Wasmer</i></b></p></div>",
         "Stefan Wasmer"},
        {"", "<div>" PARA PARA PARA PARA "<p><b>Stefan Wasmer</b></p>" PARA "</div>", NULL},
        {"", "<div>" PARA PARA PARA PARA "<p><strong>Fazit</strong></p></div>", NULL},
        {"", "<div>" PARA "<p><b>Stefan Wasmer</b></p></div>", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A login in the metadata ("arianschlichenmayer") gives way to the name
 * the page prints; labels alone ("Datum:", "Quelle:", "Follow") name no
 * one, and a date's label ends the names. */
static void logins_give_way_and_labels_name_no_one(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<meta name=\"author\" content=\"arianschlichenmayer\">",
         "<div class=\"post-author\"><span>von</span> <a href=\"/creator/a/\">Arian "
         "Schlichenmayer</a></div>",
         "Arian Schlichenmayer"},
        {"<meta name=\"author\" content=\"uriebe\">", "", "uriebe"},
        {"",
         "<div class=\"AuthorDateBlock\"><span class=\"AuthorLabel\">Datum:</span> "
         "19.11.2021<br><span class=\"AuthorLabel\">Autor:</span> Fritz Imhof<br>"
         "<span class=\"AuthorLabel\">Quelle:</span> Livenet</div>",
         "Fritz Imhof"},
        {"", "<span class=\"author\">Jane Doe, Datum: 3. Mai</span>", "Jane Doe"},
        {"", "<span class=\"author\">Follow</span>", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A site named after its host writes in its own name: that name on the
 * author line is the author when the page names no one else. A block that
 * holds the title is no sidebar. A weekday's abbreviation before the date
 * goes with it; a list of names may be long. */
static void own_sites_titles_weekdays_and_lists(void **state)
{
    (void)state;
    struct page pg;
    struct buf b;
    buf_init(&b, 0);
    buf_printf(&b, "<html><head><meta property=\"og:site_name\" content=\"Wolfgang Schmale\">"
                   "</head><body><div class=\"content sidebar-included\"><h1>River plan</h1>"
                   "<div class=\"blog-author\">Von: Wolfgang Schmale</div>"
                   "<article>" PARA PARA "</article></div></body></html>");
    arena_init(&pg.a, 0);
    struct extract_options opt = {.url = "https://wolfgangschmale.eu/river-plan/"};
    assert_int_equal(extract_page(&pg.a, b.data, b.len, &opt, &pg.p), 0);
    assert_non_null(pg.p.byline);
    assert_string_equal(pg.p.byline, "Wolfgang Schmale");
    arena_release(&pg.a);
    /* on another host the site's name is a plugin's default */
    arena_init(&pg.a, 0);
    opt.url = "https://blog.example/river-plan/";
    assert_int_equal(extract_page(&pg.a, b.data, b.len, &opt, &pg.p), 0);
    assert_null(pg.p.byline);
    arena_release(&pg.a);
    buf_release(&b);
    assert_author("", "<span class=\"author\">Heiko Sauer<br>Do 9 Apr 2020</span>", "Heiko Sauer");
    assert_author("",
                  "<span class=\"byline-author\">Posted by Nathan Parker, Varun Khaneja, Eric "
                  "Mill and Kiran C Nair - Chrome team</span>",
                  "Nathan Parker, Varun Khaneja, Eric Mill and Kiran C Nair");
    assert_author("",
                  "<span class=\"author\">This piece was written by a reporter who lives "
                  "here</span>",
                  NULL);
}

/* A line longer than 60 characters names its writer only after
 * "Autorin:" and with the role after a comma; the publisher gives way. */
static void a_role_after_the_name(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<meta name=\"author\" content=\"Hanns-Seidel-Stiftung e.V.\">",
         "<p><strong>Autorin: Uta Staschewski, Projektleiterin der HSS in "
         "Tunesien.</strong></p>",
         "Uta Staschewski"},
        {"",
         "<p>Von Jane Doe und John Roe, die seit vielen Jahren in der Stadt leben und "
         "schreiben.</p>",
         NULL},
        {"",
         "<p>Autorin: Uta Staschewski und viele andere aus der Stadt, die hier "
         "leben und schreiben</p>",
         NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A <br> ends the author's line: the dateline's place on the line after
 * the names is no name. */
static void a_line_break_ends_the_author_line(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<p>Von <strong><a href=\"https://a.example/\">Roland Brockmann</a></strong> und "
         "<strong><a href=\"https://b.example/\">Sebastian Drescher</a></strong><br>"
         "<span id=\"more-788\"></span><br>Kakuma /Kenia</p>",
         "Roland Brockmann und Sebastian Drescher"},
        /* the first line is still read as a whole: no name there, none given */
        {"", "<p>Von der Idee zum Produkt<br>Jane Doe</p>", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A byline's label may start a line of text that no element of its own
 * holds; a small "von" or "by" after an element goes on with a sentence. */
static void a_line_outside_an_element(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"", "<span class=\"tags\"><a href=\"/fix\">【纠错】</a> 责任编辑： 焦鹏 </span>", "焦鹏"},
        {"",
         "<div class=\"info\">Symbolgrafik: Butch<br><br>Autor: <a href=\"/ra/\">"
         "Rechtsanwalt</a> Sebastian Einbock</div>",
         "Rechtsanwalt Sebastian Einbock"},
        {"", "<div class=\"credit\">Theme: <a href=\"/graphy\">Graphy</a> by Themegraphy</div>",
         NULL},
        {"", "<h2>Vor- und Nachteile beim <strong>Leasing</strong> von Firmenwägen</h2>", NULL},
        {"", "<p>作者： 记者王敬照</p>", "王敬照"}, /* "reporter" glued to the name */
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A line over 60 characters after "Von" is a list of writers when it
 * holds their names and nothing more. */
static void a_list_of_writers(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<meta name=\"author\" content=\"tagesschau.de\">",
         "<p class=\"autorenzeile small\">Von Volkmar Kabisch, Jan Lukas Strozyk und Benedikt "
         "Strunz, NDR</p>",
         "Volkmar Kabisch, Jan Lukas Strozyk und Benedikt Strunz, NDR"},
        {"",
         "<p>Von Jane Doe und John Roe, die seit vielen Jahren in der Stadt leben und "
         "schreiben.</p>",
         NULL},
        /* the names before "am" and a date: a post's meta line (seventh pass) */
        {"",
         "<p>Von Jane Doe und John Roe am 07.08.2013 um 09:07 Uhr gespeichert unter "
         "Kommunizieren</p>",
         "Jane Doe und John Roe"},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* Two or three capitals in the author field, a publication's code or a
 * writer's initials, give way to the name the page prints; alone they stay. */
static void initials_give_way_to_the_printed_name(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<script type=\"application/ld+json\">{\"@type\":\"NewsArticle\",\"author\":"
         "{\"@type\":\"Organization\",\"name\":\"LN\"}}</script>",
         "<p><em>Von <span itemtype=\"http://schema.org/Person\">Cosima Künzel</span></em></p>",
         "Cosima Künzel"},
        {"<meta name=\"author\" content=\"LN\">", "", "LN"},
        /* a person's name in the field stays */
        {"<meta name=\"author\" content=\"Jane Doe\">", "<p>Von Cosima Künzel</p>", "Jane Doe"},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A page's <title> credits its writer after a comma or a verb that
 * credits; its own "by" or "von" is as often its subject's. */
static void a_writer_credited_in_the_title(void **state)
{
    (void)state;
    static const char *const titles[][2] = {
        {"Turpitude et architecture, par Didier Roy (Les blogs du Diplo, 21 juin 2018)",
         "Didier Roy"},
        {"gousto.co.uk reviewed by Mrs H Pyke", "Mrs H Pyke"},
        {"Auf den Spuren von Rafael Nadal", NULL},
        {"Inspired by Taylor Swift", NULL},
        {"Notes, by the river in 2019", NULL},
        {"Rapport, par Jean (3 pages)", NULL},
    };
    for (size_t k = 0; k < sizeof titles / sizeof titles[0]; k++) {
        struct page pg;
        struct buf b;
        buf_init(&b, 0);
        buf_printf(&b,
                   "<html><head><title>%s</title></head><body><article>" PARA PARA
                   "</article></body></html>",
                   titles[k][0]);
        arena_init(&pg.a, 0);
        struct extract_options opt = {.url = "https://news.example/2024/05/river-plan"};
        assert_int_equal(extract_page(&pg.a, b.data, b.len, &opt, &pg.p), 0);
        const char *want = titles[k][1];
        bool ok = want ? pg.p.byline && strcmp(pg.p.byline, want) == 0 : pg.p.byline == NULL;
        if (!ok)
            fail_msg("title [%s]: byline [%s], want [%s]", titles[k][0],
                     pg.p.byline ? pg.p.byline : "(null)", want ? want : "(null)");
        arena_release(&pg.a);
        buf_release(&b);
    }
}

/* A news agency credited after the dateline's place or at the end of a
 * paragraph signs a page that names no one; a party, an aside, a photo's
 * agency or a writer the page names are no such credit. */
static void a_news_agency_credited_in_the_text(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<p>Hamburg (dpa/lno) – Trotz eines Gespräches blieb es "
         "dabei.</p>",
         "dpa/lno"},
        {"", "<p>Frankfurt/Main (dpa) - Für einen Roman gab es den Preis.</p>", "dpa"},
        {"", "<p>Wiesbaden (KNA/iz). Der Bundespräsident sprach.</p>", "KNA/iz"},
        {"",
         "<p>Die Zyste könne sich jederzeit neu bilden, hieß es am Abend aus "
         "Kreisen der Regierung in der Hauptstadt. (FR mit dpa)</p>",
         "FR mit dpa"},
        /* a party, not an agency; an agency mid-sentence; a short caption */
        {"", "<p>Berlin (CDU) – Die Partei tagte.</p>", NULL},
        {"", "<p>Berlin (dpa) meldete am Abend, die Partei habe getagt.</p>", NULL},
        {"", "<p>Foto: Markus Scholz (dpa)</p>", NULL},
        {"", "<p>Hamburg (dpa Photo) – Die Stadt feierte.</p>", NULL},
        /* in a teaser of another article */
        {"", "<div class=\"teaser\"><p>Bremen (dpa) – Hertha spielte.</p></div>", NULL},
        /* a writer the page names goes first */
        {"<meta name=\"author\" content=\"Jane Doe\">", "<p>Hamburg (dpa) – Die Stadt feierte.</p>",
         "Jane Doe"},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A description that opens with "Posted by" names the writers where the
 * page prints its byline in a <noscript> only (Blogger); a sentence after
 * the label names no one, and the page's own line goes first. */
static void a_description_posted_by(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"<meta property=\"og:description\" content=\"Posted by Nathan Parker, Eric Mill and "
         "Kiran C Nair - Chrome team Over the past few years we have seen threats\">",
         "<noscript><span class=\"byline-author\">Posted by Nathan Parker</span></noscript>",
         "Nathan Parker, Eric Mill and Kiran C Nair"},
        {"<meta name=\"description\" content=\"By Aaron Humes: The Americas cannot ignore the "
         "risk of further surges, warns the agency\">",
         "", NULL},
        {"<meta name=\"description\" content=\"By 2030 the river will be clean\">", "", NULL},
        {"<meta name=\"description\" content=\"Posted by Nathan Parker - Chrome team\">",
         "<p class=\"byline\">Von Jane Doe</p>", "Jane Doe"},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A bar before a label alone ("| By ", a screen reader's text between the
 * date and the name) still leads to the name in the next element. */
static void a_bar_before_a_label_alone(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div class=\"meta\"><span class=\"trending\">yas!</span> <span "
         "class=\"screen-reader-text\">| By </span> <span>Cara Stiles</span> | <time>April 13, "
         "2020</time></div>",
         "Cara Stiles"},
        {"",
         "<div class=\"meta\"><span>yas!</span> <span>| Top </span> <span>Cara "
         "Stiles</span></div>",
         NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A post that broken markup leaves inside a widget (<img … < div> never
 * closes it) is still the entry: WordPress's id="post-N" ends the walk up
 * as <article> does; a meta line over 60 characters gives the names
 * "am" and a date follow. */
static void a_post_left_inside_a_widget(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<ul><li class=\"widget widget_text\"><div class=\"textwidget\"><img src=\"x.gif\" "
         "< div></li></ul><div id=\"content\"><div class=\"post\" id=\"post-2037\">" PARA
         "<p class=\"postmetadata\">Von R. R. am <a href=\"/2013/08/07/\">07.08.2013</a> um "
         "09:07 Uhr gespeichert unter <a href=\"/cat/\">Kommunizieren</a></p></div></div>",
         "R. R."},
        /* a widget's own line is still no byline; nor an id that is no post's */
        {"",
         "<ul><li class=\"widget\"><div id=\"post-list\"><p>Von Jane Doe am 07.08.2013 um "
         "09:07 Uhr gespeichert unter Kommunizieren</p></div></li></ul>",
         NULL},
        /* a long line whose names no date follows is a sentence */
        {"", "<p>Von Jane Doe gibt es seit dem Sommer eine neue Reihe von Beiträgen zum Fluss.</p>",
         NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* The poster a post's meta line names beside an avatar and before a date;
 * not in a comment, and not without the date. */
static void a_poster_beside_an_avatar(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div class=\"row\"><img src=\"a.jpg\" class=\"avatar avatar-19\" alt=\"Profilbild\"> "
         "<a href=\"/user-uebersicht/?u=79003\">MikeNils</a> 18.10.2019, 15:07 Uhr</div>",
         "MikeNils"},
        {"",
         "<div class=\"comment\"><img src=\"a.jpg\" class=\"avatar\"> <a "
         "href=\"/u/1\">MikeNils</a> 18.10.2019, 15:07 Uhr</div>",
         NULL},
        {"",
         "<div><img src=\"a.jpg\" class=\"avatar\"> <a href=\"/u/1\">MikeNils</a> hat "
         "geschrieben</div>",
         NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

/* A signature set to the right need not close its block; a name of one
 * word signs when a date is signed under it. */
static void a_signature_set_right_or_dated(void **state)
{
    (void)state;
    static const struct author_case cases[] = {
        {"",
         "<div>" PARA PARA PARA PARA "<p align=\"right\"><em>Denis Clerc</em></p><p>(1) Ces "
         "chiffres sont ceux de l'OCDE.</p></div>",
         "Denis Clerc"},
        {"",
         "<div>" PARA PARA PARA PARA "<p><em>Denis Clerc</em></p><p>(1) Ces chiffres sont "
         "ceux de l'OCDE.</p></div>",
         NULL},
        {"", "<div>" PARA PARA PARA PARA "<p>Benni<br>10. September 2017</p></div>", "Benni"},
        {"", "<div>" PARA PARA PARA PARA "<p>Benni<br>im September</p></div>", NULL},
        {"", "<div>" PARA PARA PARA PARA "<p>Benni<br>10. September 2017</p>" PARA "</div>", NULL},
    };
    assert_authors(cases, sizeof cases / sizeof cases[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(labels_and_dates_are_cut_off_the_author_line),
        cmocka_unit_test(metadata_authors_are_read_in_order),
        cmocka_unit_test(what_names_no_one_is_refused),
        cmocka_unit_test(authors_by_id_and_by_label),
        cmocka_unit_test(authors_after_a_label_of_their_own),
        cmocka_unit_test(the_sites_name_gives_way_to_the_author_line),
        cmocka_unit_test(commenters_are_not_the_author),
        cmocka_unit_test(authors_from_twitter_labels_and_web_pages),
        cmocka_unit_test(the_entry_speaks_for_its_author_line),
        cmocka_unit_test(a_publisher_gives_way_to_the_writer),
        cmocka_unit_test(a_desk_byline_is_an_author),
        cmocka_unit_test(an_author_link_whose_slug_names_it),
        cmocka_unit_test(dated_and_labelled_lines),
        cmocka_unit_test(posted_on_accounts_and_roles),
        cmocka_unit_test(a_signature_under_the_text),
        cmocka_unit_test(logins_give_way_and_labels_name_no_one),
        cmocka_unit_test(own_sites_titles_weekdays_and_lists),
        cmocka_unit_test(a_role_after_the_name),
        cmocka_unit_test(a_news_agency_credited_in_the_text),
        cmocka_unit_test(a_line_break_ends_the_author_line),
        cmocka_unit_test(a_line_outside_an_element),
        cmocka_unit_test(a_list_of_writers),
        cmocka_unit_test(initials_give_way_to_the_printed_name),
        cmocka_unit_test(a_writer_credited_in_the_title),
        cmocka_unit_test(a_description_posted_by),
        cmocka_unit_test(a_bar_before_a_label_alone),
        cmocka_unit_test(a_post_left_inside_a_widget),
        cmocka_unit_test(a_poster_beside_an_avatar),
        cmocka_unit_test(a_signature_set_right_or_dated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
