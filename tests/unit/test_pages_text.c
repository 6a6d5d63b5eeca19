/* HTML to plain text (ingest/pages/pages.h). */
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
#include "util/arena.h"
#include "util/utf8.h"

/* The output rules every result must obey, whatever the input. */
static void assert_invariants(const struct html_text_out *o, size_t max_out)
{
    assert_non_null(o->text);
    assert_int_equal(strlen(o->text), o->len);
    assert_true(utf8_valid(o->text, o->len));
    if (max_out)
        assert_true(o->len <= max_out);
    if (o->len) {
        assert_true(o->text[0] != ' ' && o->text[0] != '\n');
        assert_true(o->text[o->len - 1] != ' ' && o->text[o->len - 1] != '\n');
    }
    for (size_t i = 0; i < o->len; i++) {
        unsigned char ch = (unsigned char)o->text[i];
        assert_true(ch >= 0x20 || ch == '\n');
        assert_true(ch != 0x7F);
        if (i > 0 && (ch == ' ' || ch == '\n')) {
            unsigned char prev = (unsigned char)o->text[i - 1];
            assert_false(prev == ' ' || prev == '\n');
        }
    }
}

static const char *convert(struct arena *a, const char *in, size_t len, unsigned flags)
{
    struct html_text_out o;
    assert_int_equal(html_text_extract(a, in, len, 0, flags, &o), 0);
    assert_invariants(&o, 0);
    return o.text;
}

struct tcase {
    const char *in;
    unsigned flags;
    const char *want;
};

static void run_table(const struct tcase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct arena a;
        arena_init(&a, 0);
        const char *got = convert(&a, cases[i].in, strlen(cases[i].in), cases[i].flags);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu: input [%s]: got [%s], want [%s]", i, cases[i].in, got,
                     cases[i].want);
        arena_release(&a);
    }
}

static void entities_are_decoded(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"AT&amp;T", 0, "AT&T"},
        {"a&nbsp;b", 0, "a b"},
        {"it&#8217;s", 0, "it\xE2\x80\x99s"},
        {"it&#x2019;s", 0, "it\xE2\x80\x99s"},
        {"&lt;b&gt;not a tag&lt;/b&gt;", 0, "<b>not a tag</b>"},
        {"caf&eacute; &copy; 2024", 0, "caf\xC3\xA9 \xC2\xA9 2024"},
        {"&quot;quoted&quot; &apos;single&apos;", 0, "\"quoted\" 'single'"},
        {"unknown &bogus; stays", 0, "unknown &bogus; stays"},
        {"a lone & ampersand", 0, "a lone & ampersand"},
        {"&#65;&#x42;&#0;", 0, "AB"},
        {"&#x1F600;", 0, "\xF0\x9F\x98\x80"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void tags_are_dropped_and_inline_ones_join_words(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"<b>bold</b> and <i>italic</i>", 0, "bold and italic"},
        {"<b>bo</b>ld", 0, "bold"},
        {"<a href=\"http://x/\">link</a> text", 0, "link text"},
        {"<span class=\"x\">a</span><em>b</em>c", 0, "abc"},
        {"<img src=\"x.png\" alt=\"alt text\">caption", 0, "caption"},
        {"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", 0, "a b\nc"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void blocks_and_br_break_lines_or_spaces_in_one_line_mode(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"one<br>two<br/>three", 0, "one\ntwo\nthree"},
        {"<p>first</p><p>second</p>", 0, "first\nsecond"},
        {"<p>first</p><p>second</p>", HTML_TEXT_ONE_LINE, "first second"},
        {"<div>a</div>b<h2>c</h2>", 0, "a\nb\nc"},
        {"<ul><li>x<li>y</ul>z", 0, "x\ny\nz"},
        {"line<br><br><br>after", 0, "line\nafter"},
        {"one<br>two", HTML_TEXT_ONE_LINE, "one two"},
        {"<p></p><p> </p><p>only</p>", 0, "only"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void script_style_and_other_invisible_elements_vanish(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"a<script>var s = '<p>x</p>';</script>b", 0, "ab"},
        {"<style>p { color: red }</style>text", 0, "text"},
        {"before<script>never closed", 0, "before"},
        {"x<noscript>enable js</noscript>y", 0, "xy"},
        {"<iframe src=\"http://x/\">fallback</iframe>shown", 0, "shown"},
        {"<!-- a comment --> visible", 0, "visible"},
        {"<html><head><title>T</title></head><body>Body</body></html>", 0, "Body"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void malformed_html_is_recovered(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"<div><p>unclosed <b>tags", 0, "unclosed tags"},
        {"</p></div>stray end tags", 0, "stray end tags"},
        {"a < b and c > d", 0, "a < b and c > d"},
        {"<p>para<div>nested block</p></div>", 0, "para\nnested block"},
        {"<b><i>misnested</b></i> ok", 0, "misnested ok"},
        {"<a href=\"x", 0, ""},
        {"text <", 0, "text <"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void whitespace_is_folded_and_trimmed(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"  lots \t of \r\n  space  ", 0, "lots of space"},
        {"\n\n<p>\n  x  \n</p>\n\n", 0, "x"},
        {"a\xC2\xA0\xC2\xA0"
         "b",
         HTML_TEXT_PLAIN, "a b"},
        {"ideographic\xE3\x80\x80space", HTML_TEXT_PLAIN, "ideographic space"},
        {"zero\xE2\x80\x8Bwidth soft\xC2\xADhyphen", HTML_TEXT_PLAIN, "zerowidth softhyphen"},
        {"ctl\x01\x02\x1B chars\x7F", HTML_TEXT_PLAIN, "ctl chars"},
        {"a\nb", HTML_TEXT_PLAIN, "a b"},
        {"", 0, ""},
        {" \t\n ", 0, ""},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void plain_mode_leaves_markup_and_entities_alone(void **state)
{
    (void)state;
    static const struct tcase cases[] = {
        {"a &amp; <b>b</b>", HTML_TEXT_PLAIN, "a &amp; <b>b</b>"},
        {"x < y", HTML_TEXT_PLAIN, "x < y"},
    };
    run_table(cases, sizeof cases / sizeof cases[0]);
}

static void invalid_utf8_and_nul_bytes_are_repaired(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    assert_string_equal(convert(&a,
                                "a\xFF"
                                "b",
                                3, 0),
                        "a\xEF\xBF\xBD"
                        "b");
    assert_string_equal(convert(&a, "<b>a\xC3</b>b", 10, 0), "a\xEF\xBF\xBD"
                                                             "b");
    /* overlong '/' and a surrogate */
    assert_string_equal(convert(&a, "\xC0\xAF", 2, HTML_TEXT_PLAIN), "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(convert(&a, "x\xED\xA0\x80y", 5, 0),
                        "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDy");
    /* A NUL must not end the text early, in either mode. */
    assert_string_equal(convert(&a, "a\0b", 3, HTML_TEXT_PLAIN), "ab");
    assert_string_equal(convert(&a, "<i>a</i>\0<b>b</b>", 17, 0), "ab");
    arena_release(&a);
}

static void a_meta_charset_does_not_change_the_decoding(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    const char *in = "<meta charset=\"iso-8859-1\"><p>caf\xC3\xA9</p>";
    assert_string_equal(convert(&a, in, strlen(in), 0), "caf\xC3\xA9");
    in = "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">\xC3\xA9";
    assert_string_equal(convert(&a, in, strlen(in), 0), "\xC3\xA9");
    arena_release(&a);
}

static void the_first_image_source_is_reported(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct html_text_out o;
    const char *in = "<p>text <img alt=\"x\" src=\"/a.png\"> <img src=\"/b.png\"></p>";
    assert_int_equal(html_text_extract(&a, in, strlen(in), 0, 0, &o), 0);
    assert_string_equal(o.text, "text");
    assert_non_null(o.first_img);
    assert_string_equal(o.first_img, "/a.png");
    in = "<p>x<img src=\"/pixel.gif\" height=\"1\" width=\"1\"><img src=\"/real.jpg\"></p>";
    assert_int_equal(html_text_extract(&a, in, strlen(in), 0, 0, &o), 0);
    assert_string_equal(o.first_img, "/real.jpg");
    in = "<p>no image</p>";
    assert_int_equal(html_text_extract(&a, in, strlen(in), 0, 0, &o), 0);
    assert_null(o.first_img);
    arena_release(&a);
}

static void output_is_bounded_and_cut_on_a_code_point(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    /* 1 MiB of markup bounded to 1000 bytes. */
    size_t n = 1024 * 1024;
    char *big = malloc(n);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = "<p>word</p> "[i % 12];
    struct html_text_out o;
    assert_int_equal(html_text_extract(&a, big, n, 1000, 0, &o), 0);
    assert_invariants(&o, 1000);
    assert_true(o.truncated);
    assert_true(o.len > 900);
    assert_int_equal(strncmp(o.text, "word\nword\n", 10), 0);
    free(big);

    /* "é" is two bytes: a 5-byte bound keeps two of them, not half a third. */
    const char *e = "\xC3\xA9\xC3\xA9\xC3\xA9";
    assert_int_equal(html_text_extract(&a, e, strlen(e), 5, HTML_TEXT_PLAIN, &o), 0);
    assert_string_equal(o.text, "\xC3\xA9\xC3\xA9");
    assert_true(o.truncated);
    assert_int_equal(html_text_extract(&a, e, strlen(e), 6, HTML_TEXT_PLAIN, &o), 0);
    assert_false(o.truncated);
    assert_int_equal(o.len, 6);
    arena_release(&a);
}

static void deep_nesting_neither_crashes_nor_hangs(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    size_t depth = 100000;
    const char *open = "<div><span>";
    size_t n = depth * strlen(open) + 4;
    char *in = malloc(n + 1);
    assert_non_null(in);
    size_t off = 0;
    for (size_t i = 0; i < depth; i++) {
        memcpy(in + off, open, strlen(open));
        off += strlen(open);
    }
    memcpy(in + off, "deep", 4);
    off += 4;
    struct html_text_out o;
    assert_int_equal(html_text_extract(&a, in, off, 0, 0, &o), 0);
    assert_string_equal(o.text, "deep");
    free(in);
    arena_release(&a);
}

static void an_arena_ceiling_gives_nomem_not_a_crash(void **state)
{
    (void)state;
    const char *in = "<p>some <b>text</b> that needs an allocation or two</p>";
    bool succeeded = false;
    for (size_t limit = 1; limit < 4096 && !succeeded; limit += 7) {
        struct arena a;
        arena_init(&a, limit);
        struct html_text_out o;
        int rc = html_text_extract(&a, in, strlen(in), 0, 0, &o);
        if (rc == 0) {
            assert_string_equal(o.text, "some text that needs an allocation or two");
            succeeded = true;
        } else {
            assert_int_equal(rc, -1 /* ERR_NOMEM */);
        }
        arena_release(&a);
    }
    assert_true(succeeded);
}

/* Hostile byte soup: only the invariants can be checked. */
static void random_bytes_keep_the_invariants(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "<",    ">",    "&",  "&amp;",     "<p>", "</p>",      "<br>",      "\xC3",
        "\xA9", "\xFF", " ",  "\n",        "x",   "<script>",  "</script>", "&#",
        "<!--", "-->",  "\0", "<![CDATA[", "]]>", "<img src=", "\"",        "\xE2\x80"};
    unsigned seed = 12345;
    for (int round = 0; round < 500; round++) {
        char in[512];
        size_t n = 0;
        while (n < sizeof in - 16) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t l = (p[0] == '\0') ? 1 : strlen(p);
            memcpy(in + n, p, l);
            n += l;
            if (((seed >> 8) & 31) == 0)
                break;
        }
        struct arena a;
        arena_init(&a, 0);
        struct html_text_out o;
        size_t max = (round % 3 == 0) ? 17 : 0;
        assert_int_equal(html_text_extract(&a, in, n, max, (unsigned)round % 4, &o), 0);
        assert_invariants(&o, max);
        arena_release(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entities_are_decoded),
        cmocka_unit_test(tags_are_dropped_and_inline_ones_join_words),
        cmocka_unit_test(blocks_and_br_break_lines_or_spaces_in_one_line_mode),
        cmocka_unit_test(script_style_and_other_invisible_elements_vanish),
        cmocka_unit_test(malformed_html_is_recovered),
        cmocka_unit_test(whitespace_is_folded_and_trimmed),
        cmocka_unit_test(plain_mode_leaves_markup_and_entities_alone),
        cmocka_unit_test(invalid_utf8_and_nul_bytes_are_repaired),
        cmocka_unit_test(a_meta_charset_does_not_change_the_decoding),
        cmocka_unit_test(the_first_image_source_is_reported),
        cmocka_unit_test(output_is_bounded_and_cut_on_a_code_point),
        cmocka_unit_test(deep_nesting_neither_crashes_nor_hangs),
        cmocka_unit_test(an_arena_ceiling_gives_nomem_not_a_crash),
        cmocka_unit_test(random_bytes_keep_the_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
