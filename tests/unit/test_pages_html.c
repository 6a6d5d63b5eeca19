/* The pages room's HTML front end (ingest/pages/html_internal.h): the one
 * tag table both readers look names up in, and the UTF-8 repair it uses (util/utf8.h). The
 * readers themselves are tested in test_pages_text.c and test_pages_extract*.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/pages/extract_internal.h"
#include "ingest/pages/html_internal.h"
#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/utf8.h"

static const char *const names[] = {
#define NAME_(n, flags) #n,
    HTML_TAGS(NAME_)
#undef NAME_
};
#define N_NAMES (sizeof names / sizeof names[0])

/* html_tag_of searches the table by halves: a name out of byte order
 * would be silently unknown (XTAG_OTHER). */
static void every_tag_of_the_table_is_found_under_its_name(void **state)
{
    (void)state;
    assert_int_equal(N_NAMES, XTAG_COUNT - XTAG_OTHER - 1);
    for (size_t i = 0; i < N_NAMES; i++) {
        if (i > 0)
            assert_true(strcmp(names[i - 1], names[i]) < 0);
        assert_int_equal(html_tag_of(names[i]), XTAG_OTHER + 1 + i);
    }
    assert_int_equal(html_tag_of("p"), XTAG_p);
    assert_int_equal(html_tag_of("img"), XTAG_img);
}

static void other_names_are_other_and_have_no_flags(void **state)
{
    (void)state;
    const char *others[] = {"", "x", "P", "blink", "marquee", "custom-element", "zzz", "\xC3\xA9"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        assert_int_equal(html_tag_of(others[i]), XTAG_OTHER);
    assert_int_equal(html_tag_flags(XTAG_OTHER), 0);
    assert_int_equal(html_tag_flags(XTAG_TEXT), 0);
    assert_int_equal(html_tag_flags(XTAG_DOC), 0);
    assert_int_equal(html_tag_flags(XTAG_COUNT), 0);
}

/* The extractor's heading test is a range of the enum. */
static void headings_are_consecutive(void **state)
{
    (void)state;
    const char *h[] = {"h1", "h2", "h3", "h4", "h5", "h6"};
    for (int i = 0; i < 6; i++)
        assert_int_equal(html_tag_of(h[i]), XTAG_h1 + i);
}

/* A few rows that each reader's output depends on. */
static void each_reader_keeps_its_own_column(void **state)
{
    (void)state;
    /* <td>: a block to the extractor, a word separator to the renderer */
    assert_true(html_tag_flags(XTAG_td) & HT_BLOCK);
    assert_false(html_tag_flags(XTAG_td) & HT_TEXT_BREAK);
    assert_true(html_tag_flags(XTAG_td) & HT_TEXT_SPACE);
    /* <br> breaks the renderer's line; the extractor reads it elsewhere */
    assert_true(html_tag_flags(XTAG_br) & HT_TEXT_BREAK);
    assert_false(html_tag_flags(XTAG_br) & HT_BLOCK);
    /* <script>: hidden from both, its text not kept in the tree */
    unsigned script = html_tag_flags(XTAG_script);
    assert_true((script & HT_INVISIBLE) && (script & HT_TEXT_DROP) && (script & HT_NO_TEXT));
    /* <label> is no article text, but a feed's label text shows */
    assert_true(html_tag_flags(XTAG_label) & HT_INVISIBLE);
    assert_false(html_tag_flags(XTAG_label) & HT_TEXT_DROP);
    /* tags only the renderer names */
    assert_int_equal(html_tag_flags(XTAG_legend), HT_TEXT_BREAK);
    assert_int_equal(html_tag_flags(XTAG_xmp), HT_TEXT_BREAK);
    assert_int_equal(html_tag_flags(XTAG_span), 0);
}

static const char *repaired(struct buf *b, const char *in, size_t n, enum utf8_nul nul)
{
    buf_reset(b);
    utf8_put_repaired(b, in, n, nul);
    assert_int_equal(buf_error(b), 0);
    buf_putc(b, '\0');
    return b->data;
}

static void bad_bytes_become_one_replacement_each_and_nuls_as_asked(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    assert_string_equal(repaired(&b, "caf\xC3\xA9", 5, UTF8_NUL_DROP), "caf\xC3\xA9");
    /* a lone continuation byte, a cut sequence, an overlong NUL, a surrogate */
    assert_string_equal(repaired(&b, "a\x80z", 3, UTF8_NUL_DROP), "a\xEF\xBF\xBDz");
    assert_string_equal(repaired(&b, "a\xE2\x82z", 4, UTF8_NUL_DROP), "a\xEF\xBF\xBD\xEF\xBF\xBDz");
    assert_string_equal(repaired(&b, "\xC0\x80", 2, UTF8_NUL_DROP), "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(repaired(&b, "\xED\xA0\x80", 3, UTF8_NUL_DROP),
                        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    /* a sequence cut by the end of the input */
    assert_string_equal(repaired(&b, "x\xF0\x9F\x98", 4, UTF8_NUL_REPLACE),
                        "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    /* NUL: dropped for the renderer, U+FFFD for the extractor */
    assert_string_equal(repaired(&b, "a\0b", 3, UTF8_NUL_DROP), "ab");
    assert_string_equal(repaired(&b, "a\0b", 3, UTF8_NUL_REPLACE), "a\xEF\xBF\xBD"
                                                                   "b");
    buf_release(&b);
}

/* The code point rule: Unicode's White_Space are spaces (NEL, OGHAM SPACE
 * MARK and MEDIUM MATHEMATICAL SPACE among them), ZWNJ and ZWJ are shown,
 * controls, invisible formatting and the noncharacters dropped. */
static void white_space_is_space_zwj_is_shown_noncharacters_dropped(void **state)
{
    (void)state;
    static const uint32_t spaces[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,
                                      0x85,   0xA0,   0x1680, 0x2000, 0x200A, 0x2028,
                                      0x2029, 0x202F, 0x205F, 0x3000};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        assert_int_equal(html_cp_class(spaces[i]), HTML_CP_SPACE);
    static const uint32_t dropped[] = {0x00,   0x01,    0x1F,    0x7F,     0x80,    0x9F,
                                       0xAD,   0x200B,  0xFEFF,  0xFDD0,   0xFDEF,  0xFFFE,
                                       0xFFFF, 0x1FFFE, 0x1FFFF, 0x10FFFE, 0x10FFFF};
    for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++)
        assert_int_equal(html_cp_class(dropped[i]), HTML_CP_DROPPED);
    static const uint32_t shown[] = {'a',    0x200C, 0x200D,  0x200E,  0x2060,  0xFDCF,
                                     0xFDF0, 0xFFFD, 0x1F600, 0x10000, 0x10FFFD};
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
        assert_int_equal(html_cp_class(shown[i]), HTML_CP_SHOWN);
}

static const char *folded(struct buf *b, struct html_fold *f, const char *s)
{
    html_fold_text(f, s, strlen(s));
    assert_int_equal(buf_error(b), 0);
    buf_putc(b, '\0');
    b->len--;
    return b->data ? b->data : "";
}

static void the_renderer_folds_gaps_and_stops_at_its_bound(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    struct html_fold f = {.b = &b};
    /* no gap at the start; one gap for a run; a break outranks a space */
    assert_string_equal(folded(&b, &f, " \xC2\x85 a\xE1\x9A\x80\xE2\x81\x9F b "), "a b");
    f.gap = HTML_GAP_BREAK;
    assert_string_equal(folded(&b, &f, " c"), "a b\nc");
    f.gap = HTML_GAP_BREAK;
    f.one_line = true;
    assert_string_equal(folded(&b, &f, "d"), "a b\nc d");
    /* an invalid byte is U+FFFD; dropped code points go */
    buf_reset(&b);
    f = (struct html_fold){.b = &b};
    assert_string_equal(folded(&b, &f, "x\x80y\xEF\xBF\xBEz\x01"), "x\xEF\xBF\xBDyz");
    /* the bound: whole code points, the gap only with one after it */
    buf_reset(&b);
    f = (struct html_fold){.b = &b, .max = 5};
    assert_true(html_fold_text(&f, "ab", 2));
    assert_false(html_fold_text(&f, " c\xC3\xA9", 5));
    assert_true(f.full);
    assert_int_equal(b.len, 4);
    assert_memory_equal(b.data, "ab c", 4);
    assert_false(html_fold_text(&f, "d", 1));
    assert_int_equal(b.len, 4);
    buf_release(&b);
}

/* Both readers render text by the one rule: html_text_extract and the
 * extractor's text (xtext_clean) give the same string. */
static void both_readers_apply_the_same_rule(void **state)
{
    (void)state;
    static const char in[] = "\xC2\x85Persian\xE2\x80\x8C"
                             "word \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB"
                             "\xE1\x9A\x80x\xE2\x81\x9Fy\xEF\xBF\xBF\xEF\xBF\xBEz\xC2\xAD!";
    static const char want[] = "Persian\xE2\x80\x8C"
                               "word \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB x yz!";
    struct arena a;
    arena_init(&a, 0);
    struct html_text_out out;
    char html[sizeof in + 16];
    snprintf(html, sizeof html, "<b>%s</b>", in);
    assert_int_equal(html_text_extract(&a, html, strlen(html), 0, 0, &out), 0);
    assert_string_equal(out.text, want);
    assert_int_equal(html_text_extract(&a, in, sizeof in - 1, 0, HTML_TEXT_PLAIN, &out), 0);
    assert_string_equal(out.text, want);
    int rc = 0;
    const char *x = xtext_clean(&a, in, sizeof in - 1, 0, false, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(x);
    assert_string_equal(x, want);
    arena_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_tag_of_the_table_is_found_under_its_name),
        cmocka_unit_test(other_names_are_other_and_have_no_flags),
        cmocka_unit_test(headings_are_consecutive),
        cmocka_unit_test(each_reader_keeps_its_own_column),
        cmocka_unit_test(bad_bytes_become_one_replacement_each_and_nuls_as_asked),
        cmocka_unit_test(white_space_is_space_zwj_is_shown_noncharacters_dropped),
        cmocka_unit_test(the_renderer_folds_gaps_and_stops_at_its_bound),
        cmocka_unit_test(both_readers_apply_the_same_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
