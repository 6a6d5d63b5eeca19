/* Query-string parsing of the API (api/params.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "api/params.h"
#include "api/render.h"
#include "article/json.h"
#include "util/arena.h"
#include "util/buf.h"

static struct api_params parse(struct arena *a, const char *q)
{
    struct api_params p;
    assert_int_equal(api_params_parse(a, q, strlen(q), &p), 0);
    return p;
}

static void names_are_lower_cased_and_values_decoded(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "Q=hello+world&PageSize=10&qInTitle=%22a%20b%22&apiKey=k");
    assert_int_equal(p.n, 4);
    assert_string_equal(api_params_first(&p, "q")->value, "hello world");
    assert_string_equal(api_params_first(&p, "pagesize")->value, "10");
    assert_string_equal(api_params_first(&p, "qintitle")->value, "\"a b\"");
    assert_string_equal(api_params_first(&p, "apikey")->value, "k");
    assert_null(api_params_first(&p, "PageSize"));
    arena_release(&a);
}

static void an_encoded_plus_is_a_plus_and_a_raw_plus_a_space(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "q=%2Bbitcoin+-ethereum");
    assert_string_equal(api_params_first(&p, "q")->value, "+bitcoin -ethereum");
    arena_release(&a);
}

static void empty_values_are_absent(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "q=&sources=&country=us&&=x&language");
    assert_int_equal(p.n, 1);
    assert_null(api_params_first(&p, "q"));
    assert_null(api_params_first(&p, "sources"));
    assert_null(api_params_first(&p, "language"));
    assert_string_equal(api_params_first(&p, "country")->value, "us");
    arena_release(&a);
}

static void repeated_parameters_are_joined_in_order(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "excludeDomains=a.com&x=1&EXCLUDEDOMAINS=b.com");
    assert_int_equal(api_params_count(&p, "excludedomains"), 2);
    assert_string_equal(api_params_joined(&a, &p, "excludedomains", ","), "a.com,b.com");
    assert_null(api_params_joined(&a, &p, "domains", ","));
    arena_release(&a);
}

static void malformed_escapes_are_kept_literally(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "q=100%25&b=%zz&c=%4&d=%");
    assert_string_equal(api_params_first(&p, "q")->value, "100%");
    assert_string_equal(api_params_first(&p, "b")->value, "%zz");
    assert_string_equal(api_params_first(&p, "c")->value, "%4");
    assert_string_equal(api_params_first(&p, "d")->value, "%");
    arena_release(&a);
}

static void a_decoded_nul_is_kept_with_its_length(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "q=a%00b");
    const struct api_param *q = api_params_first(&p, "q");
    assert_int_equal(q->len, 3);
    assert_memory_equal(q->value, "a\0b", 3);
    arena_release(&a);
}

static void list_items_are_split_and_trimmed(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    const char **items;
    size_t n;
    assert_int_equal(api_list_split(&a, " bbc-news , ,cnn,\tabc-news ,", &items, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(items[0], "bbc-news");
    assert_string_equal(items[1], "cnn");
    assert_string_equal(items[2], "abc-news");
    arena_release(&a);
}

static void parsing_fails_cleanly_when_the_arena_is_full(void **state)
{
    (void)state;
    const char *q = "q=bitcoin&sources=a,b,c&page=2&pageSize=10";
    bool succeeded = false;
    for (size_t limit = 0; limit < 4096 && !succeeded; limit += 8) {
        struct arena a;
        arena_init(&a, limit);
        struct api_params p;
        int rc = api_params_parse(&a, q, strlen(q), &p);
        assert_true(rc == 0 || rc < 0);
        succeeded = rc == 0;
        arena_release(&a);
    }
    assert_true(succeeded);
}

/* Content as NewsAPI shows it: ≤ 200 characters whole; longer ones cut to
 * 199 + "…" + " [+N chars]" with N the characters not shown. */
/* Streams and alerts refuse these and quote the documented spelling,
 * whatever case the client sent; the first in the list's order is named. */
static void search_only_parameters_are_named_as_documented(void **state)
{
    (void)state;
    assert_string_equal(api_search_only_param("SORTBY"), "sortBy");
    assert_string_equal(api_search_only_param("pagesize"), "pageSize");
    assert_string_equal(api_search_only_param("from"), "from");
    assert_string_equal(api_search_only_param("To"), "to");
    assert_string_equal(api_search_only_param("page"), "page");
    assert_null(api_search_only_param("q"));
    assert_null(api_search_only_param("pages"));
    assert_null(api_search_only_param(""));

    struct arena a;
    arena_init(&a, 0);
    struct api_params p = parse(&a, "q=x&PageSize=10&SortBy=publishedAt");
    assert_string_equal(api_params_search_only(&p), "sortBy"); /* sortBy comes before pageSize */
    p = parse(&a, "q=x&pagesize=10");
    assert_string_equal(api_params_search_only(&p), "pageSize");
    p = parse(&a, "q=x&language=en&page=");
    assert_null(api_params_search_only(&p)); /* an empty value is absent */
    arena_release(&a);
}

static void render_content(struct buf *b, const char *content)
{
    buf_reset(b);
    article_json_content(b, content);
    assert_int_equal(buf_error(b), 0);
}

static void content_of_200_characters_is_returned_whole(void **state)
{
    (void)state;
    char text[601];
    /* 200 code points of 3 bytes each: the limit counts characters, not bytes. */
    for (int i = 0; i < 200; i++)
        memcpy(text + 3 * i, "\xE2\x82\xAC", 3);
    text[600] = '\0';
    struct buf b;
    buf_init(&b, 0);
    render_content(&b, text);
    assert_int_equal(b.len, 602);
    assert_memory_equal(b.data + 1, text, 600);
    buf_release(&b);
}

static void content_of_201_characters_is_cut_to_199_and_counted(void **state)
{
    (void)state;
    char text[202];
    memset(text, 'x', 201);
    text[201] = '\0';
    struct buf b;
    buf_init(&b, 0);
    render_content(&b, text);
    char expected[260];
    memset(expected, 'x', 199);
    expected[199] = '\0';
    char want[300];
    snprintf(want, sizeof want, "\"%s\xE2\x80\xA6 [+2 chars]\"", expected);
    assert_string_equal(b.data, want);
    render_content(&b, NULL);
    assert_string_equal(b.data, "null");
    buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_are_lower_cased_and_values_decoded),
        cmocka_unit_test(an_encoded_plus_is_a_plus_and_a_raw_plus_a_space),
        cmocka_unit_test(empty_values_are_absent),
        cmocka_unit_test(repeated_parameters_are_joined_in_order),
        cmocka_unit_test(malformed_escapes_are_kept_literally),
        cmocka_unit_test(a_decoded_nul_is_kept_with_its_length),
        cmocka_unit_test(list_items_are_split_and_trimmed),
        cmocka_unit_test(parsing_fails_cleanly_when_the_arena_is_full),
        cmocka_unit_test(search_only_parameters_are_named_as_documented),
        cmocka_unit_test(content_of_200_characters_is_returned_whole),
        cmocka_unit_test(content_of_201_characters_is_cut_to_199_and_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
