/* util/url.h: the one URL splitter the canonical form, the feed parser and
 * the crawler build on, the one reference resolver, the one query-string
 * walker and the one percent-decoder. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"
#include "util/url.h"

/* A component as "<text>", or "-" when it is undefined. */
static const char *view(char *buf, size_t cap, const char *p, size_t n)
{
    if (!p)
        return "-";
    snprintf(buf, cap, "<%.*s>", (int)n, p);
    return buf;
}

/* "scheme authority path query fragment", each as view() writes it. */
static const char *split_of(const char *s, size_t n)
{
    static char out[512];
    char b[5][100];
    struct url_parts u;
    url_split(s, n, &u);
    snprintf(out, sizeof out, "%s %s %s %s %s", view(b[0], 100, u.scheme, u.scheme_len),
             view(b[1], 100, u.authority, u.authority_len), view(b[2], 100, u.path, u.path_len),
             view(b[3], 100, u.query, u.query_len), view(b[4], 100, u.fragment, u.fragment_len));
    return out;
}

static void urls_split_into_their_five_components(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"http://a/b/c/d;p?q", "<http> <a> </b/c/d;p> <q> -"},
        {"HTTPS://u:p@h:8/x?y=1&z#f", "<HTTPS> <u:p@h:8> </x> <y=1&z> <f>"},
        {"g:h", "<g> - <h> - -"},
        {"//g", "- <g> <> - -"},
        {"//g?q#f/x", "- <g> <> <q> <f/x>"},
        {"?y", "- - <> <y> -"},
        {"#s", "- - <> - <s>"},
        {"../g;x", "- - <../g;x> - -"},
        {"", "- - <> - -"},
        {"http://h?", "<http> <h> <> <> -"}, /* empty query, not none */
        {"http://h#", "<http> <h> <> - <>"}, /* empty fragment */
        {"http://", "<http> <> <> - -"},     /* empty authority */
        {"http:/x", "<http> - </x> - -"},    /* one slash: a path */
        {"http://h#a?b#c", "<http> <h> <> - <a?b#c>"},
        {"a+b-c.d:x:y", "<a+b-c.d> - <x:y> - -"},
        {"1a:b", "- - <1a:b> - -"}, /* a scheme starts with a letter */
        {"./g:h", "- - <./g:h> - -"},
        {"a_b:c", "- - <a_b:c> - -"},
        {"news.example.com:8080/x", "<news.example.com> - <8080/x> - -"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = split_of(cases[i].in, strlen(cases[i].in));
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].in, got, cases[i].want);
    }
    /* Lengths, not terminators, bound it: NUL is a byte like any other. */
    assert_string_equal(split_of("a\0b?c#d", 7), "- - <a> <c> <d>");
    assert_string_equal(split_of("http://h/p?q", 10), "<http> <h> </p> - -");
}

/* Whatever the input, the defined components joined with their delimiters
 * are the input again. */
static void a_split_joins_back_to_its_input(void **state)
{
    (void)state;
    static const char alphabet[] = "h:/?#@[]a1.+%";
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        char s[24], joined[64];
        size_t n = (size_t)(round % 20);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        struct url_parts u;
        url_split(s, n, &u);
        int len =
            snprintf(joined, sizeof joined, "%.*s%s%s%.*s%.*s%s%.*s%s%.*s", (int)u.scheme_len,
                     u.scheme ? u.scheme : "", u.scheme ? ":" : "", u.authority ? "//" : "",
                     (int)u.authority_len, u.authority ? u.authority : "", (int)u.path_len, u.path,
                     u.query ? "?" : "", (int)u.query_len, u.query ? u.query : "",
                     u.fragment ? "#" : "", (int)u.fragment_len, u.fragment ? u.fragment : "");
        if ((size_t)len != n || memcmp(joined, s, n) != 0)
            fail_msg("%.*s joined back as %s", (int)n, s, joined);
    }
}

static void authorities_split_at_the_last_at_sign_and_the_port_colon(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        bool ok;
        const char *userinfo, *host, *port; /* NULL: undefined */
    } cases[] = {
        {"h", true, NULL, "h", NULL},
        {"", true, NULL, "", NULL},
        {"u:p@h:80", true, "u:p", "h", "80"},
        {"a@b@h", true, "a@b", "h", NULL}, /* the last '@' ends the userinfo */
        {"@h", true, "", "h", NULL},
        {"h:", true, NULL, "h", ""},
        {"h:1:2", true, NULL, "h", "1:2"},
        {"[::1]:8080", true, NULL, "[::1]", "8080"},
        {"u@[::1]", true, "u", "[::1]", NULL},
        {"[::1", false, NULL, "[::1", NULL},
        {"[::1]x", false, NULL, "[::1]", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct url_authority a;
        char b[3][100];
        bool ok = url_authority_split(cases[i].in, strlen(cases[i].in), &a);
        const char *want_u = cases[i].userinfo, *want_p = cases[i].port;
        char want[3][100];
        snprintf(want[0], 100, want_u ? "<%s>" : "-", want_u);
        snprintf(want[1], 100, "<%s>", cases[i].host);
        snprintf(want[2], 100, want_p ? "<%s>" : "-", want_p);
        if (ok != cases[i].ok ||
            strcmp(view(b[0], 100, a.userinfo, a.userinfo_len), want[0]) != 0 ||
            strcmp(view(b[1], 100, a.host, a.host_len), want[1]) != 0 ||
            strcmp(view(b[2], 100, a.port, a.port_len), want[2]) != 0)
            fail_msg("%s: %d %s %s %s", cases[i].in, ok, b[0], b[1], b[2]);
    }
}

/* url_resolve: the examples of RFC 3986 section 5.4 (normal and
 * abnormal), all against the RFC's base, and bytes copied as written. */
static void references_resolve_as_rfc_3986_says(void **state)
{
    (void)state;
    static const char *const base = "http://a/b/c/d;p?q";
    static const char *const t[][2] = {
        {"g:h", "g:h"},
        {"g", "http://a/b/c/g"},
        {"./g", "http://a/b/c/g"},
        {"g/", "http://a/b/c/g/"},
        {"/g", "http://a/g"},
        {"//g", "http://g"},
        {"?y", "http://a/b/c/d;p?y"},
        {"g?y", "http://a/b/c/g?y"},
        {"#s", "http://a/b/c/d;p?q#s"},
        {"g#s", "http://a/b/c/g#s"},
        {"g?y#s", "http://a/b/c/g?y#s"},
        {";x", "http://a/b/c/;x"},
        {"g;x", "http://a/b/c/g;x"},
        {"g;x?y#s", "http://a/b/c/g;x?y#s"},
        {"", "http://a/b/c/d;p?q"},
        {".", "http://a/b/c/"},
        {"./", "http://a/b/c/"},
        {"..", "http://a/b/"},
        {"../", "http://a/b/"},
        {"../g", "http://a/b/g"},
        {"../..", "http://a/"},
        {"../../", "http://a/"},
        {"../../g", "http://a/g"},
        {"../../../g", "http://a/g"},
        {"../../../../g", "http://a/g"},
        {"/./g", "http://a/g"},
        {"/../g", "http://a/g"},
        {"g.", "http://a/b/c/g."},
        {".g", "http://a/b/c/.g"},
        {"g..", "http://a/b/c/g.."},
        {"..g", "http://a/b/c/..g"},
        {"./../g", "http://a/b/g"},
        {"./g/.", "http://a/b/c/g/"},
        {"g/./h", "http://a/b/c/g/h"},
        {"g/../h", "http://a/b/c/h"},
        {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
        {"g;x=1/../y", "http://a/b/c/y"},
        {"g?y/./x", "http://a/b/c/g?y/./x"},
        {"g?y/../x", "http://a/b/c/g?y/../x"},
        {"g#s/./x", "http://a/b/c/g#s/./x"},
        {"g#s/../x", "http://a/b/c/g#s/../x"},
        {"http:g", "http:g"},
        /* as written: no decoding, no case change */
        {"/%7Eimg/A%26B.JPG", "http://a/%7Eimg/A%26B.JPG"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct buf out = BUF_INIT;
        url_resolve(&out, t[i][0], base);
        assert_int_equal(buf_error(&out), 0);
        if (strcmp(out.data, t[i][1]))
            fail_msg("%s: %s, not %s", t[i][0], out.data, t[i][1]);
        buf_release(&out);
    }
    /* a host without a path: the merge starts at "/" */
    struct buf out = BUF_INIT;
    url_resolve(&out, "images/x.jpg", "https://www.cowcotland.com");
    assert_string_equal(out.data, "https://www.cowcotland.com/images/x.jpg");
    buf_release(&out);
    /* a full buffer is its sticky error, never an overrun */
    struct buf small;
    buf_init(&small, 16);
    url_resolve(&small, "/a/very/long/path/to/an/image.jpg", "https://example.com/");
    assert_int_not_equal(buf_error(&small), 0);
    buf_release(&small);
}

/* Every piece of a query as "name|value" (value "-" when there is no '='),
 * each followed by its separator or "$" after the last. */
static const char *walk_of(const char *s, const char *seps)
{
    static char out[512];
    size_t o = 0;
    struct url_query q;
    struct url_param prm;
    url_query_start(&q, s, strlen(s), seps);
    while (url_query_next(&q, &prm)) {
        assert_ptr_equal(prm.p + prm.name_len, prm.value ? prm.value - 1 : prm.p + prm.n);
        o += (size_t)snprintf(out + o, sizeof out - o, "%.*s|", (int)prm.name_len, prm.p);
        if (prm.value)
            o += (size_t)snprintf(out + o, sizeof out - o, "%.*s", (int)prm.value_len, prm.value);
        else
            o += (size_t)snprintf(out + o, sizeof out - o, "-");
        o += (size_t)snprintf(out + o, sizeof out - o, "%c", prm.sep ? prm.sep : '$');
    }
    assert_false(url_query_next(&q, &prm)); /* done stays done */
    return out;
}

static void a_query_walks_piece_by_piece_empty_ones_too(void **state)
{
    (void)state;
    assert_string_equal(walk_of("a=1&b=2", NULL), "a|1&b|2$");
    assert_string_equal(walk_of("", NULL), "|-$");
    assert_string_equal(walk_of("&", NULL), "|-&|-$");
    assert_string_equal(walk_of("a&&b=", NULL), "a|-&|-&b|$");
    assert_string_equal(walk_of("k==v=w", NULL), "k|=v=w$");
    assert_string_equal(walk_of("=v", NULL), "|v$");
    assert_string_equal(walk_of("a=1;b=2&c", "&;"), "a|1;b|2&c|-$");
    assert_string_equal(walk_of("a=1;b=2", "&"), "a|1;b=2$");
    assert_string_equal(walk_of("/p?apiKey=x", "&;?"), "/p|-?apiKey|x$");
}

static void pieces_and_separators_give_the_query_back(void **state)
{
    (void)state;
    static const char *const qs[] = {"", "&&", "a=b&c", "x=%26&y=&&z", "=&=", "a;b&c?d"};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        char back[64];
        size_t o = 0;
        struct url_query q;
        struct url_param prm;
        url_query_start(&q, qs[i], strlen(qs[i]), "&;?");
        while (url_query_next(&q, &prm)) {
            memcpy(back + o, prm.p, prm.n);
            o += prm.n;
            if (prm.sep)
                back[o++] = prm.sep;
        }
        back[o] = '\0';
        assert_string_equal(back, qs[i]);
    }
}

/* s decoded, NUL bytes shown as "\0". */
static const char *decoded(const char *s, bool plus)
{
    static char out[128], shown[256];
    size_t n = url_decode(out, s, strlen(s), plus), o = 0;
    for (size_t i = 0; i < n; i++) {
        if (out[i] == '\0') {
            shown[o++] = '\\';
            shown[o++] = '0';
        } else {
            shown[o++] = out[i];
        }
    }
    shown[o] = '\0';
    return shown;
}

static void percent_escapes_decode_and_malformed_ones_stay(void **state)
{
    (void)state;
    assert_string_equal(decoded("a%20b%2fc%2F", false), "a b/c/");
    assert_string_equal(decoded("a+b", false), "a+b");
    assert_string_equal(decoded("a+b", true), "a b");
    assert_string_equal(decoded("%2B", true), "+"); /* an escaped plus is a plus */
    assert_string_equal(decoded("%", true), "%");
    assert_string_equal(decoded("%4", true), "%4");
    assert_string_equal(decoded("%41", true), "A"); /* an escape that ends the input */
    assert_string_equal(decoded("%G1%1G", true), "%G1%1G");
    assert_string_equal(decoded("%%41", true), "%A");
    assert_string_equal(decoded("x%00y", true), "x\\0y");
    assert_string_equal(decoded("%e2%82%AC", false), "\xe2\x82\xac");
    unsigned char b = 0;
    assert_int_equal(url_decode_byte("%7e", 3, false, &b), 3);
    assert_int_equal(b, '~');
    assert_int_equal(url_decode_byte("%7e", 2, false, &b), 1); /* the escape is cut */
    assert_int_equal(b, '%');
    assert_int_equal(url_decode_byte("\xff", 1, true, &b), 1);
    assert_int_equal(b, 0xff);
    char in_place[] = "a%41+";
    assert_int_equal(url_decode(in_place, in_place, 5, true), 3);
    assert_memory_equal(in_place, "aA ", 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urls_split_into_their_five_components),
        cmocka_unit_test(a_split_joins_back_to_its_input),
        cmocka_unit_test(authorities_split_at_the_last_at_sign_and_the_port_colon),
        cmocka_unit_test(references_resolve_as_rfc_3986_says),
        cmocka_unit_test(a_query_walks_piece_by_piece_empty_ones_too),
        cmocka_unit_test(pieces_and_separators_give_the_query_back),
        cmocka_unit_test(percent_escapes_decode_and_malformed_ones_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
