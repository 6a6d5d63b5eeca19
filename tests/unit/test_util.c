/* util/: arena ceilings, bounded buffers, the JSON writer, UTF-8 counting. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/jw.h"
#include "util/utf8.h"

static void an_arena_refuses_allocations_past_its_ceiling(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 1024);
    assert_non_null(arena_alloc(&a, 512));
    assert_non_null(arena_alloc(&a, 256));
    assert_null(arena_alloc(&a, 512));
    assert_null(arena_alloc(&a, SIZE_MAX));
    assert_null(arena_calloc(&a, SIZE_MAX / 2, 4));
    arena_release(&a);
}

static void arena_allocations_are_aligned_and_distinct(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    char *prev = NULL;
    for (int i = 1; i < 2000; i++) {
        char *p = arena_alloc(&a, (size_t)(i % 97) + 1);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % _Alignof(max_align_t), 0);
        memset(p, 0xAB, (size_t)(i % 97) + 1);
        assert_ptr_not_equal(p, prev);
        prev = p;
    }
    char *big = arena_alloc(&a, 3 * 1024 * 1024);
    assert_non_null(big);
    memset(big, 1, 3 * 1024 * 1024);
    assert_string_equal(arena_strndup(&a, "hello", 3), "hel");
    assert_string_equal(arena_printf(&a, "%d-%s", 42, "x"), "42-x");
    assert_null(arena_strdup(&a, NULL));
    arena_release(&a);
}

static void a_buffer_error_is_sticky_past_its_maximum(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 8);
    buf_puts(&b, "12345");
    assert_int_equal(buf_error(&b), 0);
    buf_puts(&b, "6789");
    assert_int_equal(buf_error(&b), ERR_TOO_LARGE);
    buf_puts(&b, "x");
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "12345");
    buf_reset(&b);
    buf_printf(&b, "%d", 1234567);
    assert_string_equal(b.data, "1234567");
    size_t len;
    char *p = buf_detach(&b, &len);
    assert_int_equal(len, 7);
    assert_string_equal(p, "1234567");
    free(p);
    buf_release(&b);
}

static void detaching_an_untouched_buffer_gives_an_empty_string(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    size_t len = 99;
    char *p = buf_detach(&b, &len);
    assert_non_null(p);
    assert_int_equal(len, 0);
    assert_string_equal(p, "");
    free(p);
}

static void the_json_writer_keeps_key_order_and_escapes_controls_only(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    struct jw w;
    jw_init(&w, &b);
    jw_obj_begin(&w);
    jw_key(&w, "status");
    jw_str(&w, "ok");
    jw_key(&w, "n");
    jw_int(&w, -3);
    jw_key(&w, "list");
    jw_arr_begin(&w);
    jw_str(&w, "Caf\xC3\xA9 \"q\"\\\n\t\x01");
    jw_null(&w);
    jw_bool(&w, true);
    jw_arr_end(&w);
    jw_key(&w, "empty");
    jw_obj_begin(&w);
    jw_obj_end(&w);
    jw_obj_end(&w);
    assert_int_equal(buf_error(&b), 0);
    assert_string_equal(b.data,
                        "{\"status\":\"ok\",\"n\":-3,\"list\":[\"Caf\xC3\xA9 \\\"q\\\"\\\\\\n\\t"
                        "\\u0001\",null,true],\"empty\":{}}");
    buf_release(&b);
}

static void invalid_utf8_becomes_replacement_characters(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    jw_escape(&b,
              "a\xFF"
              "b\xC3",
              4);
    assert_string_equal(b.data, "a\xEF\xBF\xBD"
                                "b\xEF\xBF\xBD");
    buf_reset(&b);
    jw_escape(&b, "\xED\xA0\x80", 3); /* a UTF-16 surrogate is not UTF-8 */
    assert_string_equal(b.data, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    buf_release(&b);
}

static void utf8_lengths_count_code_points(void **state)
{
    (void)state;
    const char *s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"; /* a é € 😀 */
    assert_true(utf8_valid(s, strlen(s)));
    assert_int_equal(utf8_count(s, strlen(s)), 4);
    assert_int_equal(utf8_prefix_bytes(s, strlen(s), 2), 3);
    assert_int_equal(utf8_prefix_bytes(s, strlen(s), 10), strlen(s));
    assert_int_equal(utf8_char_index(s, 6), 4);
    assert_false(utf8_valid("\xC0\x80", 2));         /* overlong NUL */
    assert_false(utf8_valid("\xF4\x90\x80\x80", 4)); /* beyond U+10FFFF */
    assert_false(utf8_valid("\xE2\x82", 2));
    assert_int_equal(utf8_count("\xFF\xFE", 2), 2);
}

static void error_names_and_messages_come_from_one_table(void **state)
{
    (void)state;
    assert_string_equal(err_name(ERR_NOMEM), "ERR_NOMEM");
    assert_string_equal(err_default_msg(ERR_NOTFOUND), "not found");
    struct err e;
    err_clear(&e);
    assert_string_equal(err_msg(&e, ERR_IO), "input/output error");
    assert_int_equal(err_set(&e, ERR_PARSE, "bad %s at %d", "thing", 7), ERR_PARSE);
    assert_string_equal(err_msg(&e, ERR_PARSE), "bad thing at 7");
    assert_int_equal(e.code, ERR_PARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_arena_refuses_allocations_past_its_ceiling),
        cmocka_unit_test(arena_allocations_are_aligned_and_distinct),
        cmocka_unit_test(a_buffer_error_is_sticky_past_its_maximum),
        cmocka_unit_test(detaching_an_untouched_buffer_gives_an_empty_string),
        cmocka_unit_test(the_json_writer_keeps_key_order_and_escapes_controls_only),
        cmocka_unit_test(invalid_utf8_becomes_replacement_characters),
        cmocka_unit_test(utf8_lengths_count_code_points),
        cmocka_unit_test(error_names_and_messages_come_from_one_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
