/* The pages room's HTML front end (ingest/pages/html_internal.h): the one
 * tag table both readers look names up in, and the UTF-8 repair it uses (util/utf8.h). The
 * readers themselves are tested in test_html_text.c and test_extract*.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingest/pages/html_internal.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_tag_of_the_table_is_found_under_its_name),
        cmocka_unit_test(other_names_are_other_and_have_no_flags),
        cmocka_unit_test(headings_are_consecutive),
        cmocka_unit_test(each_reader_keeps_its_own_column),
        cmocka_unit_test(bad_bytes_become_one_replacement_each_and_nuls_as_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
