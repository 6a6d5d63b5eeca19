/* util/: arena ceilings, bounded buffers, the JSON writer, UTF-8 counting,
 * ASCII classes and hex, integer comparisons. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <cmocka.h>

#include "test_skip.h"

#include "util/arena.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/hugepage.h"
#include "util/jw.h"
#include "util/sort.h"
#include "util/utf8.h"
#include "util/xml.h"
#include "util/timefmt.h"

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

/* arena_grow: the room doubles from the first size, the items survive
 * each move, and a ceiling refusal leaves the array as it was. */
static void an_arena_array_grows_by_copying_and_keeps_it_on_refusal(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 4096);
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(arena_grow(&a, &v, &cap, n, 4, sizeof *v), 0);
        v[n++] = i;
    }
    assert_int_equal(cap, 32);
    for (int i = 0; i < 20; i++)
        assert_int_equal(v[i], i);
    assert_int_equal(arena_grow(&a, &v, &cap, n, 4, sizeof *v), 0); /* room left: no move */
    int *before = v;
    n = cap;
    assert_int_equal(arena_grow(&a, &v, &cap, n, 4, 1024), ERR_NOMEM);
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 32);
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

/* jw_escape as it was byte by byte, the oracle of its eight-at-a-time
 * skip: the same bytes out for any input. */
static void escape_oracle(struct buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t l;
        if (c >= 0x80 && (l = utf8_decode(s + i, n - i, &cp)) != 0) {
            buf_append(b, s + i, l);
            i += l;
            continue;
        }
        i++;
        if (c == '"' || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
            buf_printf(b, "\\%c",
                       c == '\n'   ? 'n'
                       : c == '\r' ? 'r'
                       : c == '\t' ? 't'
                       : c == '\b' ? 'b'
                                   : 'f');
        else if (c < 0x20)
            buf_printf(b, "\\u%04x", c);
        else if (c >= 0x80)
            buf_puts(b, "\xEF\xBF\xBD");
        else
            buf_putc(b, (char)c);
    }
}

/* jw_escape's bytes for s[0..len) are the oracle's. */
static void escape_agrees(struct buf *got, struct buf *want, const char *s, size_t len)
{
    buf_reset(got);
    buf_reset(want);
    jw_escape(got, s, len);
    escape_oracle(want, s, len);
    assert_int_equal(got->len, want->len);
    assert_memory_equal(got->data, want->data, want->len);
}

static void escaping_eight_bytes_at_a_time_changes_no_byte(void **state)
{
    (void)state;
    /* Every byte value at every offset of plain runs around a word. */
    static const unsigned char alphabet[] = {'a',  ' ',  '"',  '\\', 0x00, 0x01, 0x1f, 0x20, 0x21,
                                             0x5b, 0x5d, 0x7f, 0x80, 0xC3, 0xA9, 0xE2, 0x82, 0xAC,
                                             0xF0, 0x9F, 0x98, 0xFF, '\n', 0x22, 0x5c};
    char s[64];
    struct buf got, want;
    buf_init(&got, 0);
    buf_init(&want, 0);
    for (int c = 0; c < 256; c++) {
        for (size_t len = 1; len <= 20; len++) {
            for (size_t at = 0; at < len; at++) {
                memset(s, 'x', len);
                s[at] = (char)c;
                escape_agrees(&got, &want, s, len);
            }
        }
    }
    /* Random strings of the bytes that matter, mostly plain. */
    uint64_t seed = 42;
    for (int round = 0; round < 20000; round++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = (size_t)(seed >> 58); /* 0..63 */
        for (size_t i = 0; i < len; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned r = (unsigned)(seed >> 40);
            s[i] = r % 4 ? (char)('a' + r % 26) : (char)alphabet[(r >> 8) % sizeof alphabet];
        }
        escape_agrees(&got, &want, s, len);
    }
    buf_release(&got);
    buf_release(&want);
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

/* Decode s (n bytes): the length, with the code point in *cp. */
static size_t decode_of(const char *s, size_t n, uint32_t *cp)
{
    *cp = 0xDEADu;
    return utf8_decode(s, n, cp);
}

static void the_decoder_takes_well_formed_sequences_only(void **state)
{
    (void)state;
    uint32_t cp;
    /* The first and last code point of each length (RFC 3629 table 3.1). */
    static const struct {
        const char *s;
        uint32_t cp;
    } good[] = {
        {"\x7F", 0x7F},
        {"\xC2\x80", 0x80},
        {"\xDF\xBF", 0x7FF},
        {"\xE0\xA0\x80", 0x800},
        {"\xEF\xBF\xBF", 0xFFFF},
        {"\xE2\x82\xAC", 0x20AC},
        {"\xED\x9F\xBF", 0xD7FF},
        {"\xEE\x80\x80", 0xE000},
        {"\xF0\x90\x80\x80", 0x10000},
        {"\xF4\x8F\xBF\xBF", 0x10FFFF},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t n = strlen(good[i].s);
        assert_int_equal(decode_of(good[i].s, n, &cp), n);
        assert_int_equal(cp, good[i].cp);
        /* One byte short of the sequence is no sequence. */
        if (n > 1)
            assert_int_equal(decode_of(good[i].s, n - 1, &cp), 0);
    }
    assert_int_equal(decode_of("", 1, &cp), 1); /* the terminating NUL */
    assert_int_equal(cp, 0);
    static const char *const bad[] = {
        "\x80",             /* a continuation byte alone */
        "\xC0\x80",         /* overlong NUL */
        "\xC1\xBF",         /* overlong U+007F */
        "\xE0\x9F\xBF",     /* overlong U+07FF */
        "\xF0\x8F\xBF\xBF", /* overlong U+FFFF */
        "\xED\xA0\x80",     /* surrogate U+D800 */
        "\xED\xBF\xBF",     /* surrogate U+DFFF */
        "\xF4\x90\x80\x80", /* U+110000 */
        "\xF5\x80\x80\x80",
        "\xFF",
        "\xC3\x41",
        "\xE2\x28\xA1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(decode_of(bad[i], strlen(bad[i]), &cp), 0);
        assert_int_equal(cp, 0xDEADu); /* left alone */
    }
    assert_int_equal(decode_of("a", 0, &cp), 0);
}

static void every_code_point_encodes_and_decodes_back(void **state)
{
    (void)state;
    char enc[4];
    uint32_t cp;
    for (uint32_t c = 0; c <= 0x10FFFF; c++) {
        size_t n = utf8_encode(c, enc);
        assert_int_equal(n, c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4);
        if (c >= 0xD800 && c <= 0xDFFF) {
            assert_int_equal(utf8_decode(enc, n, &cp), 0); /* not UTF-8 */
            continue;
        }
        if (utf8_decode(enc, n, &cp) != n || cp != c)
            fail_msg("U+%04X did not come back", (unsigned)c);
    }
}

/* s[0..n) repaired, as a NUL-terminated string (NULs kept show as "\\0"). */
static const char *repaired(const char *s, size_t n, enum utf8_nul nul)
{
    static char shown[256];
    struct buf b = BUF_INIT;
    utf8_put_repaired(&b, s, n, nul);
    assert_int_equal(buf_error(&b), 0);
    assert_true(utf8_valid(b.data ? b.data : "", b.len));
    size_t o = 0;
    for (size_t i = 0; i < b.len && o + 3 < sizeof shown; i++) {
        if (b.data[i] == '\0') {
            shown[o++] = '\\';
            shown[o++] = '0';
        } else {
            shown[o++] = b.data[i];
        }
    }
    shown[o] = '\0';
    buf_release(&b);
    return shown;
}

static void invalid_utf8_is_repaired_byte_by_byte_and_nuls_as_asked(void **state)
{
    (void)state;
    static const char ok[] = "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80";
    assert_string_equal(repaired(ok, sizeof ok - 1, UTF8_NUL_REPLACE), ok); /* as it was */
    assert_string_equal(repaired("", 0, UTF8_NUL_REPLACE), "");
    /* a lone continuation, a cut sequence, an overlong form, a surrogate,
     * past U+10FFFF: one U+FFFD per byte */
    assert_string_equal(repaired("a\x80z", 3, UTF8_NUL_KEEP), "a\xef\xbf\xbdz");
    assert_string_equal(repaired("\xe6\xbc", 2, UTF8_NUL_KEEP), "\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(repaired("\xc0\xaf", 2, UTF8_NUL_KEEP), "\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(repaired("\xed\xa0\x80", 3, UTF8_NUL_KEEP),
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(repaired("\xf4\x90\x80\x80x", 5, UTF8_NUL_KEEP),
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
    /* NULs: kept, replaced or dropped */
    assert_string_equal(repaired("a\0z\xff", 4, UTF8_NUL_KEEP), "a\\0z\xef\xbf\xbd");
    assert_string_equal(repaired("a\0z\xff", 4, UTF8_NUL_REPLACE), "a\xef\xbf\xbdz\xef\xbf\xbd");
    assert_string_equal(repaired("a\0z\xff", 4, UTF8_NUL_DROP), "az\xef\xbf\xbd");
}

static void a_cut_never_splits_a_sequence(void **state)
{
    (void)state;
    const char *s = "a\xC3\xA9\xE2\x82\xAC"; /* a é € */
    assert_int_equal(utf8_cut(s, 6, 10), 6);
    assert_int_equal(utf8_cut(s, 6, 6), 6);
    assert_int_equal(utf8_cut(s, 6, 5), 3); /* inside € */
    assert_int_equal(utf8_cut(s, 6, 4), 3);
    assert_int_equal(utf8_cut(s, 6, 3), 3);
    assert_int_equal(utf8_cut(s, 6, 2), 1); /* inside é */
    assert_int_equal(utf8_cut(s, 6, 0), 0);
}

/* Only A-Z change case and only ASCII letters and digits are classed, for
 * every byte: a locale-dependent tolower() would lower 0xC0 (À in Latin-1)
 * and so corrupt a UTF-8 sequence. */
static void ascii_case_and_classes_touch_ascii_only(void **state)
{
    (void)state;
    for (int i = 0; i < 256; i++) {
        char c = (char)i;
        bool upper = i >= 'A' && i <= 'Z', lower = i >= 'a' && i <= 'z';
        assert_int_equal((unsigned char)ascii_lower(c), upper ? i + 32 : i);
        assert_int_equal(ascii_is_alpha(c), upper || lower);
        assert_int_equal(ascii_is_digit(c), i >= '0' && i <= '9');
        int want = i >= '0' && i <= '9'   ? i - '0'
                   : i >= 'a' && i <= 'f' ? i - 'a' + 10
                   : i >= 'A' && i <= 'F' ? i - 'A' + 10
                                          : -1;
        assert_int_equal(ascii_hex_value(c), want);
    }
    char s[] = "HeLLo, W\xC3\x80rld-2";
    ascii_lower_str(s);
    assert_string_equal(s, "hello, w\xC3\x80rld-2");
    char dst[5] = "xxxx";
    ascii_lower_n(dst, "ABcD!", 3); /* three bytes, no terminator */
    assert_string_equal(dst, "abcx");
}

/* Keys, digests and delivery ids are these digits: lower case, two per
 * byte, high nibble first, every byte value, and a NUL right after. */
static void hex_writes_two_lower_case_digits_a_byte_and_a_nul(void **state)
{
    (void)state;
    static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    char out[16];
    memset(out, 'x', sizeof out);
    ascii_hex_encode(out, bytes, sizeof bytes);
    assert_string_equal(out, "00017f80ff");
    assert_int_equal(out[2 * sizeof bytes], '\0');
    assert_int_equal(out[2 * sizeof bytes + 1], 'x'); /* nothing past the NUL */

    memset(out, 'x', sizeof out);
    ascii_hex_encode(out, "", 0); /* nothing: just the NUL */
    assert_int_equal(out[0], '\0');
    assert_int_equal(out[1], 'x');

    static const unsigned char sha_prefix[] = {0xde, 0xad, 0xbe, 0xef, 0x0a, 0xb0};
    ascii_hex_encode(out, sha_prefix, sizeof sha_prefix);
    assert_string_equal(out, "deadbeef0ab0");

    for (int i = 0; i < 256; i++) {
        char two[3] = {'x', 'x', 'x'};
        ascii_hex_byte(two, (unsigned char)i);
        assert_int_equal(two[2], 'x'); /* no terminator */
        assert_int_equal(ascii_hex_value(two[0]) * 16 + ascii_hex_value(two[1]), i);
        assert_false(two[0] >= 'A' && two[0] <= 'F');
        assert_false(two[1] >= 'A' && two[1] <= 'F');
    }
}

/* The comparison qsort gets for id lists: ascending over the whole
 * unsigned range, where a subtraction would wrap and misorder. */
static void u64_comparison_sorts_ascending_across_the_whole_range(void **state)
{
    (void)state;
    uint64_t a = 1, b = UINT64_MAX;
    assert_true(sort_cmp_u64(&a, &b) < 0);
    assert_true(sort_cmp_u64(&b, &a) > 0);
    assert_int_equal(sort_cmp_u64(&b, &b), 0);
    uint64_t v[] = {UINT64_MAX, 0, 1ULL << 63, 42, 0, (1ULL << 63) - 1, 7};
    const uint64_t want[] = {0, 0, 7, 42, (1ULL << 63) - 1, 1ULL << 63, UINT64_MAX};
    qsort(v, sizeof v / sizeof v[0], sizeof v[0], sort_cmp_u64);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_true(v[i] == want[i]);
    uint64_t key = 42;
    const uint64_t *hit = bsearch(&key, v, sizeof v / sizeof v[0], sizeof v[0], sort_cmp_u64);
    assert_non_null(hit);
    assert_true(*hit == 42);
}

static void error_names_and_messages_come_from_one_table(void **state)
{
    (void)state;
    assert_string_equal(err_name(ERR_NOMEM), "ERR_NOMEM");
    assert_string_equal(err_default_msg(ERR_NOTFOUND), "not found");
    assert_string_equal(err_name(0), "OK");
    assert_string_equal(err_default_msg(0), "ok");
    assert_string_equal(err_name(-12345), "ERR_UNKNOWN");
    assert_string_equal(err_default_msg(12345), "unknown error");
    struct err e;
    err_clear(&e);
    assert_string_equal(err_msg(&e, ERR_IO), "input/output error");
    assert_int_equal(err_set(&e, ERR_PARSE, "bad %s at %d", "thing", 7), ERR_PARSE);
    assert_string_equal(err_msg(&e, ERR_PARSE), "bad thing at 7");
    assert_int_equal(e.code, ERR_PARSE);
}

static void hashes_continue_across_pieces_and_mix_every_bit(void **state)
{
    (void)state;
    /* FNV-1a by its definition, one byte: (basis ^ 'a') * prime. */
    uint64_t one = (HASH_FNV1A64_INIT ^ (uint64_t)'a') * 1099511628211ULL;
    assert_true(hash_fnv1a64("a", 1) == one);
    assert_true(hash_fnv1a64("", 0) == HASH_FNV1A64_INIT);
    /* Hashing in pieces is hashing the whole. */
    uint64_t h = hash_fnv1a64_update(HASH_FNV1A64_INIT, "news", 4);
    assert_true(hash_fnv1a64_update(h, "paper", 5) == hash_fnv1a64("newspaper", 9));
    /* The finalizer: a one-bit change of the input flips about half the
     * output bits, in the low half too (which picks a table's slot). */
    for (int bit = 0; bit < 64; bit++) {
        uint64_t d =
            hash_mix64(0x0123456789abcdefULL) ^ hash_mix64(0x0123456789abcdefULL ^ (1ULL << bit));
        int flipped = __builtin_popcountll(d), low = __builtin_popcountll(d & 0xffffffffULL);
        assert_true(flipped >= 16 && flipped <= 48);
        assert_true(low >= 6);
    }
    assert_true(hash_bytes64("x", 1) == hash_mix64(hash_fnv1a64("x", 1)));
    /* Fibonacci hashing: 1 is the multiplier itself; consecutive keys land
     * far apart in a table's top bits (a table of 2^10 slots here). */
    assert_true(hash_fib(1, 0) == 0x9E3779B97F4A7C15ULL);
    assert_true(hash_fib(1, 54) == 0x9E3779B97F4A7C15ULL >> 54);
    uint64_t a = hash_fib(1000, 54), b = hash_fib(1001, 54);
    assert_true(a < 1024 && b < 1024);
    assert_true((a > b ? a - b : b - a) > 64);
}

static void the_monotonic_clock_agrees_in_its_units_and_sleeps(void **state)
{
    (void)state;
    int64_t ms0 = clock_mono_ms(), us0 = clock_mono_us();
    clock_sleep_ms(20);
    int64_t ms1 = clock_mono_ms(), us1 = clock_mono_us();
    assert_true(ms1 - ms0 >= 20);
    assert_true(us1 - us0 >= 20000);
    /* The same clock: microseconds / 1000 and milliseconds differ by the
     * time between the two reads only. */
    assert_true(us1 / 1000 - ms1 >= -1 && us1 / 1000 - ms1 <= 5);
    struct timespec at = clock_mono_in(1500), now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ahead = (int64_t)(at.tv_sec - now.tv_sec) * 1000 + (at.tv_nsec - now.tv_nsec) / 1000000;
    assert_true(ahead > 1400 && ahead <= 1500);
    assert_true(at.tv_nsec >= 0 && at.tv_nsec < 1000000000L);
}

static void a_timed_wait_on_a_clock_condition_lasts_its_monotonic_time(void **state)
{
    (void)state;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    assert_int_equal(clock_cond_init(&cv), 0);
    pthread_mutex_lock(&mu);
    int64_t t0 = clock_mono_ms();
    struct timespec at = clock_mono_in(60);
    int rc;
    /* (a spurious wake-up waits again until the deadline) */
    while ((rc = pthread_cond_timedwait(&cv, &mu, &at)) == 0)
        ;
    int64_t waited = clock_mono_ms() - t0;
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
    /* A condition on the wall clock would read the monotonic deadline as
     * a moment in 1970 and time out at once. */
    assert_int_equal(rc, ETIMEDOUT);
    assert_true(waited >= 59 && waited < 5000);
}

/* util/xml.c: what any stored or requested string becomes in XML (the
 * search feeds, OPML): markup escaped, attribute blanks as references,
 * control characters '?', and bytes that are not UTF-8 U+FFFD (a feed's
 * title holds the request's decoded parameters: fuzz_api found an
 * ill-formed feed before this). */
static void xml_text_and_attributes_are_always_well_formed(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        const char *text, *attr;
    } cases[] = {
        {"a<b>&\"c", 7, "a&lt;b&gt;&amp;\"c", "a&lt;b&gt;&amp;&quot;c"},
        {"t\tn\nr\r", 6, "t\tn\nr&#13;", "t&#9;n&#10;r&#13;"},
        {"\x01\x7f", 2, "??", "??"},
        {"pag\xff\xff"
         "e",
         6,
         "pag\xef\xbf\xbd\xef\xbf\xbd"
         "e",
         "pag\xef\xbf\xbd\xef\xbf\xbd"
         "e"},
        {"\xc3\xa9t\xc3", 4, "\xc3\xa9t\xef\xbf\xbd", "\xc3\xa9t\xef\xbf\xbd"},
        {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xef\xbf\xbe!", 4, "?!", "?!"},
        {"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf t, a;
        buf_init(&t, 0);
        buf_init(&a, 0);
        xml_text(&t, cases[i].in, cases[i].n);
        xml_attr(&a, cases[i].in, cases[i].n);
        buf_putc(&t, '\0');
        buf_putc(&a, '\0');
        assert_string_equal(t.data, cases[i].text);
        assert_string_equal(a.data, cases[i].attr);
        assert_true(utf8_valid(t.data, t.len - 1));
        buf_release(&t);
        buf_release(&a);
    }
}

/* timefmt_http: HTTP's IMF-fixdate (also RSS's RFC 822 form), weekday
 * included, read back by the RFC 822 parser. */
static void http_dates_are_imf_fixdates(void **state)
{
    (void)state;
    static const struct {
        int64_t t;
        const char *s;
    } cases[] = {{0, "Thu, 01 Jan 1970 00:00:00 GMT"},
                 {784111777, "Sun, 06 Nov 1994 08:49:37 GMT"},
                 {1714979289, "Mon, 06 May 2024 07:08:09 GMT"},
                 {-1, "Wed, 31 Dec 1969 23:59:59 GMT"},
                 {951782400, "Tue, 29 Feb 2000 00:00:00 GMT"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[TIMEFMT_HTTP_LEN];
        int64_t back = 0;
        timefmt_http(cases[i].t, out);
        assert_string_equal(out, cases[i].s);
        assert_int_equal(timefmt_parse_rfc822(out, strlen(out), &back), 0);
        assert_int_equal(back, cases[i].t);
    }
}

/* The VmFlags of the mapping holding p (/proc/self/smaps), or "" when
 * none is found. */
static void mapping_flags(const void *p, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool inside = false;
    out[0] = '\0';
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(out, cap, "%s", line + 8);
            break;
        }
    }
    fclose(f);
}

/* A large table gets the kernel's huge-page flag ("hg") on its whole pages;
 * a small one is left as it is. */
static void large_tables_are_marked_for_huge_pages_and_small_ones_not(void **state)
{
    (void)state;
    size_t big = 16u << 20, small = HUGEPAGE_MIN / 2;
    char *a = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *b = mmap(NULL, small, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char flags[256];
    assert_true(a != MAP_FAILED && b != MAP_FAILED);
    if (madvise(a, 4096, MADV_HUGEPAGE) != 0) {
        munmap(a, big);
        munmap(b, small);
        TEST_SKIP_BY_DESIGN("a kernel without transparent huge pages: nothing to ask for");
    }
    madvise(a, 4096, MADV_NOHUGEPAGE);
    hugepage_advise(a + 100, big - 200); /* not page-aligned either end */
    mapping_flags(a + big / 2, flags, sizeof flags);
    assert_non_null(strstr(flags, " hg"));
    mapping_flags(a + 100, flags, sizeof flags); /* the partial first page: as it was */
    assert_null(strstr(flags, " hg"));
    hugepage_advise(b, small);
    mapping_flags(b, flags, sizeof flags);
    assert_true(flags[0] != '\0');
    assert_null(strstr(flags, " hg"));
    munmap(a, big);
    munmap(b, small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_arena_refuses_allocations_past_its_ceiling),
        cmocka_unit_test(arena_allocations_are_aligned_and_distinct),
        cmocka_unit_test(an_arena_array_grows_by_copying_and_keeps_it_on_refusal),
        cmocka_unit_test(a_buffer_error_is_sticky_past_its_maximum),
        cmocka_unit_test(detaching_an_untouched_buffer_gives_an_empty_string),
        cmocka_unit_test(the_json_writer_keeps_key_order_and_escapes_controls_only),
        cmocka_unit_test(escaping_eight_bytes_at_a_time_changes_no_byte),
        cmocka_unit_test(invalid_utf8_becomes_replacement_characters),
        cmocka_unit_test(utf8_lengths_count_code_points),
        cmocka_unit_test(the_decoder_takes_well_formed_sequences_only),
        cmocka_unit_test(every_code_point_encodes_and_decodes_back),
        cmocka_unit_test(a_cut_never_splits_a_sequence),
        cmocka_unit_test(invalid_utf8_is_repaired_byte_by_byte_and_nuls_as_asked),
        cmocka_unit_test(ascii_case_and_classes_touch_ascii_only),
        cmocka_unit_test(hex_writes_two_lower_case_digits_a_byte_and_a_nul),
        cmocka_unit_test(u64_comparison_sorts_ascending_across_the_whole_range),
        cmocka_unit_test(error_names_and_messages_come_from_one_table),
        cmocka_unit_test(hashes_continue_across_pieces_and_mix_every_bit),
        cmocka_unit_test(the_monotonic_clock_agrees_in_its_units_and_sleeps),
        cmocka_unit_test(a_timed_wait_on_a_clock_condition_lasts_its_monotonic_time),
        cmocka_unit_test(xml_text_and_attributes_are_always_well_formed),
        cmocka_unit_test(http_dates_are_imf_fixdates),
        cmocka_unit_test(large_tables_are_marked_for_huge_pages_and_small_ones_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
