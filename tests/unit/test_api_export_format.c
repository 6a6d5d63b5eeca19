/* The lines of an export (api/export_format.h): CSV per RFC 4180 and
 * NDJSON, with content whole; and the writer's wait for room in a
 * streamed body (http_stream_wait_room), which lets an export go only as
 * fast as its client reads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "api/export_format.h"
#include "http/http.h"
#include "util/buf.h"
#include "util/err.h"

static char *field(const char *s)
{
    static char out[256];
    struct buf b;
    buf_init(&b, 0);
    api_export_csv_field(&b, s, s ? strlen(s) : 0);
    buf_putc(&b, '\0');
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    buf_release(&b);
    return out;
}

static void csv_fields_are_quoted_only_when_they_must_be(void **state)
{
    (void)state;
    assert_string_equal(field("plain text"), "plain text");
    assert_string_equal(field(NULL), "");
    assert_string_equal(field(""), "");
    assert_string_equal(field("a,b"), "\"a,b\"");
    assert_string_equal(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_string_equal(field("\""), "\"\"\"\"");
    assert_string_equal(field("one\ntwo"), "\"one\ntwo\"");
    assert_string_equal(field("cr\r"), "\"cr\r\"");
    /* No formula guard: a spreadsheet's = + - @ are kept (docs/api.md). */
    assert_string_equal(field("=SUM(A1)"), "=SUM(A1)");
    assert_string_equal(field("ünï ✓"), "ünï ✓");
    /* Bytes that are not UTF-8 become U+FFFD, quoted or not. */
    assert_string_equal(field("a\xff"
                              "b"),
                        "a\xEF\xBF\xBD"
                        "b");
    assert_string_equal(field("\"\xc3\""), "\"\"\"\xEF\xBF\xBD\"\"\"");
}

static struct article sample(void)
{
    static char content[600];
    memset(content, 'x', sizeof content - 1);
    content[sizeof content - 1] = '\0';
    struct article a = {.source_id = NULL,
                        .source_name = "Name, Inc",
                        .author = NULL,
                        .title = "T \"q\"",
                        .description = "d\nd",
                        .url = "https://e.example/1",
                        .url_to_image = NULL,
                        .published_at = 1700000000,
                        .content = content,
                        /* past 2^53: a JSON number would lose it, a string does not */
                        .story_id = INT64_C(9007199254740993)};
    return a;
}

static void a_csv_record_has_every_column_and_ends_in_crlf(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    struct article a = sample();
    api_export_head(&b, API_EXPORT_CSV);
    api_export_article(&b, API_EXPORT_CSV, &a, "c1cur");
    buf_putc(&b, '\0');
    const char *want_head =
        "sourceId,sourceName,author,title,description,url,urlToImage,publishedAt,content,"
        "storyId,cursor\r\n";
    assert_memory_equal(b.data, want_head, strlen(want_head));
    const char *rec = b.data + strlen(want_head);
    char want[1024];
    snprintf(want, sizeof want,
             ",\"Name, Inc\",,\"T \"\"q\"\"\",\"d\nd\",https://e.example/1,,2023-11-14T22:13:20Z,"
             "%s,9007199254740993,c1cur\r\n",
             a.content);
    assert_string_equal(rec, want);
    buf_release(&b);
}

static void an_ndjson_line_is_the_article_with_content_whole(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    struct article a = sample();
    api_export_head(&b, API_EXPORT_NDJSON);
    assert_int_equal(b.len, 0);
    api_export_article(&b, API_EXPORT_NDJSON, &a, "c1cur");
    buf_putc(&b, '\0');
    char want[1024];
    snprintf(want, sizeof want,
             "{\"source\":{\"id\":null,\"name\":\"Name, Inc\"},\"author\":null,\"title\":\"T "
             "\\\"q\\\"\",\"description\":\"d\\nd\",\"url\":\"https://e.example/1\","
             "\"urlToImage\":null,\"publishedAt\":\"2023-11-14T22:13:20Z\",\"content\":\"%s\","
             "\"storyId\":\"9007199254740993\",\"cursor\":\"c1cur\"}\n",
             a.content);
    assert_string_equal(b.data, want);
    buf_release(&b);
}

/* Every story id is its decimal, as "%" PRId64 writes it, both ends of
 * int64 included. */
static void story_ids_are_their_decimals(void **state)
{
    (void)state;
    const int64_t ids[] = {
        0,         1,         -1,           9, 10, 99, 100, -10, INT64_C(9007199254740993),
        INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        struct buf b;
        buf_init(&b, 0);
        struct article a = sample();
        a.story_id = ids[i];
        api_export_article(&b, API_EXPORT_CSV, &a, "c1cur");
        buf_putc(&b, '\0');
        char want[48];
        snprintf(want, sizeof want, ",%" PRId64 ",c1cur\r\n", ids[i]);
        assert_true(b.len > strlen(want));
        assert_string_equal(b.data + strlen(b.data) - strlen(want), want);
        buf_release(&b);
    }
}

static void a_writer_waits_for_room_and_learns_when_the_stream_ends(void **state)
{
    (void)state;
    struct http_stream *st;
    struct err err;
    err_clear(&err);
    assert_int_equal(http_stream_new(&st, 10, &err), 0);
    assert_int_equal(http_stream_wait_room(st, 10, 0), 0);
    assert_int_equal(http_stream_write(st, "12345678", 8), 0);
    assert_int_equal(http_stream_wait_room(st, 2, 0), 0);
    /* 8 unsent: 3 more do not fit until the client reads (none here). */
    assert_int_equal(http_stream_wait_room(st, 3, 20), ERR_TIMEOUT);
    assert_int_equal(http_stream_wait_room(st, 11, 0), ERR_IO); /* can never fit */
    http_stream_fail(st);
    assert_int_equal(http_stream_wait_room(st, 1, 1000), ERR_IO);
    assert_false(http_stream_open(st));
    http_stream_release(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_fields_are_quoted_only_when_they_must_be),
        cmocka_unit_test(a_csv_record_has_every_column_and_ends_in_crlf),
        cmocka_unit_test(an_ndjson_line_is_the_article_with_content_whole),
        cmocka_unit_test(story_ids_are_their_decimals),
        cmocka_unit_test(a_writer_waits_for_room_and_learns_when_the_stream_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
