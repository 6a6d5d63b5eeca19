/* Query expansion (index/expand.h), the one both search backends use. The
 * expected forms are worked out by hand from the rule in expand.h and the
 * Snowball stemmers' documented behaviour (English "running" → "run",
 * "cats" → "cat"), not by running either backend. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "index/expand.h"
#include "util/limits.h"

static void expect_forms(const char *const *langs, size_t n_langs, const char *tok,
                         const char *const *want, size_t n_want)
{
    struct arena a;
    struct err err;
    const char *forms[INDEX_EXPAND_FORMS_MAX];
    size_t n = 0;

    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(index_expand_word(&a, langs, n_langs, tok, forms, &n, &err), 0);
    if (n != n_want)
        fail_msg("%s: %zu forms, want %zu", tok, n, n_want);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(forms[i], want[i]) != 0)
            fail_msg("%s: form %zu is \"%s\", want \"%s\"", tok, i, forms[i], want[i]);
    }
    assert_ptr_equal(forms[0], tok); /* the word itself, not a copy */
    arena_release(&a);
}

static void a_word_matches_itself_its_stem_and_the_stem_mark(void **state)
{
    (void)state;
    static const char *const en[] = {"en"};
    expect_forms(en, 1, "running", (const char *const[]){"running", "run", "~run"}, 3);
    expect_forms(en, 1, "cats", (const char *const[]){"cats", "cat", "~cat"}, 3);
}

static void a_word_that_is_its_own_stem_is_not_repeated(void **state)
{
    (void)state;
    static const char *const en[] = {"en"};
    /* stem("run") = "run" is the word itself; "~run" is still a form: an
     * article's "running" is indexed as "running" and "~run". */
    expect_forms(en, 1, "run", (const char *const[]){"run", "~run"}, 2);
}

static void forms_found_in_several_languages_are_listed_once(void **state)
{
    (void)state;
    static const char *const twice[] = {"en", "en"};
    expect_forms(twice, 2, "running", (const char *const[]){"running", "run", "~run"}, 3);
    /* Digits stem to themselves in all eleven languages: one "~123". */
    const char *const *all;
    size_t n;
    const char *none = NULL;
    index_expand_langs(&none, &all, &n);
    assert_int_equal(n, 11);
    expect_forms(all, n, "123", (const char *const[]){"123", "~123"}, 2);
}

static void a_language_without_a_stemmer_adds_no_forms(void **state)
{
    (void)state;
    static const char *const zh[] = {"zh"};
    expect_forms(zh, 1, "running", (const char *const[]){"running"}, 1);
}

static void a_stem_too_long_to_be_indexed_is_skipped(void **state)
{
    (void)state;
    static const char *const en[] = {"en"};
    char tok[LIMIT_TOKEN_BYTES + 40];
    memset(tok, 'b', sizeof tok - 1);
    tok[sizeof tok - 1] = '\0';
    expect_forms(en, 1, tok, (const char *const[]){tok}, 1);
}

static void the_request_language_narrows_the_stemmers(void **state)
{
    (void)state;
    const char *const *langs;
    size_t n;
    const char *en = "en", *zh = "zh", *none = NULL;

    index_expand_langs(&en, &langs, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(langs, &en);
    /* No stemmer for Chinese: every stemmed language, as for no language. */
    index_expand_langs(&zh, &langs, &n);
    assert_int_equal(n, 11);
    index_expand_langs(&none, &langs, &n);
    assert_int_equal(n, 11);
    static const char *const want[] = {"ar", "de", "en", "es", "fr", "it",
                                       "nl", "no", "pt", "ru", "sv"};
    for (size_t i = 0; i < n; i++)
        assert_string_equal(langs[i], want[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_word_matches_itself_its_stem_and_the_stem_mark),
        cmocka_unit_test(a_word_that_is_its_own_stem_is_not_repeated),
        cmocka_unit_test(forms_found_in_several_languages_are_listed_once),
        cmocka_unit_test(a_language_without_a_stemmer_adds_no_forms),
        cmocka_unit_test(a_stem_too_long_to_be_indexed_is_skipped),
        cmocka_unit_test(the_request_language_narrows_the_stemmers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
