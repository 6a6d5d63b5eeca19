/* util/vocab.h: NewsAPI's categories and languages, one list each, and the
 * one language rule ("se" is "sv"). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/vocab.h"

static void categories_are_found_in_either_case_and_stored_lower(void **state)
{
    (void)state;
    assert_string_equal(vocab_category("Business"), "business");
    assert_string_equal(vocab_category("TECHNOLOGY"), "technology");
    assert_null(vocab_category("sport"));
    assert_null(vocab_category(""));
    assert_null(vocab_category(NULL));
    assert_true(vocab_is_category("health"));
    assert_false(vocab_is_category("Health")); /* stored values are lower case */
    assert_false(vocab_is_category(NULL));
    /* the message lists exactly the seven */
    size_t listed = 0;
    for (const char *p = VOCAB_CATEGORY_LIST; *p; p++)
        listed += *p == ',';
    assert_int_equal(listed + 1, 7);
}

static void se_is_swedish_wherever_a_language_is_read(void **state)
{
    (void)state;
    assert_string_equal(vocab_language_alias("se"), "sv");
    assert_string_equal(vocab_language_alias("sv"), "sv");
    assert_string_equal(vocab_language_alias("en"), "en");
    assert_string_equal(vocab_language_alias("SE"), "SE"); /* the rule reads lower case */
    assert_null(vocab_language_alias(NULL));
    char out[3] = "xx";
    assert_true(vocab_language_code("SE", out));
    assert_string_equal(out, "sv");
    assert_true(vocab_language_code("De", out));
    assert_string_equal(out, "de");
    assert_true(vocab_language_code("qq", out)); /* a code, if not NewsAPI's */
    assert_string_equal(out, "qq");
    char in_place[3] = "Se";
    assert_true(vocab_language_code(in_place, in_place));
    assert_string_equal(in_place, "sv");
    static const char *const bad[] = {"", "e", "eng", "e1", "\xc3\xa9n", "e "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(vocab_language_code(bad[i], out));
        assert_string_equal(out, "");
    }
    assert_false(vocab_language_code(NULL, out));
}

static void languages_are_newsapis_fourteen(void **state)
{
    (void)state;
    static const char *const all[] = {"ar", "de", "en", "es", "fr", "he", "it",
                                      "nl", "no", "pt", "ru", "sv", "ud", "zh"};
    char listed[80] = "";
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_string_equal(vocab_language(all[i]), all[i]);
        strcat(listed, i ? ", " : "");
        strcat(listed, all[i]);
    }
    assert_string_equal(listed, VOCAB_LANGUAGE_LIST);
    assert_string_equal(vocab_language("SE"), "sv");
    assert_string_equal(vocab_language("Zh"), "zh");
    assert_null(vocab_language("da"));
    assert_null(vocab_language("eng"));
    assert_null(vocab_language(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(categories_are_found_in_either_case_and_stored_lower),
        cmocka_unit_test(se_is_swedish_wherever_a_language_is_read),
        cmocka_unit_test(languages_are_newsapis_fourteen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
