/* The one UTF-8 decoder and encoder, and lengths and limits counted in code
 * points (API.md §8). Well-formed means RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF. Full Unicode processing (case folding,
 * normalisation) lives in text/ (utf8proc). */
#ifndef NEWSD_UTIL_UTF8_H
#define NEWSD_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sequence at s[0..n): its length (1..4) with its code point in *cp, or
 * 0 when n is 0 or the bytes there are not well-formed UTF-8 (*cp is then
 * left alone; callers pick their own stand-in and step one byte). Inline:
 * the JSON writer calls it for every non-ASCII character of a response. */
static inline size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    if (n == 0)
        return 0;
    unsigned char c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

/* cp (at most U+10FFFF) as UTF-8 into out; returns its length, 1..4. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* True when s[0..n) is well-formed UTF-8. */
bool utf8_valid(const char *s, size_t n);

/* Number of code points in s[0..n); an invalid byte counts as one. */
size_t utf8_count(const char *s, size_t n);

/* Byte length of the first `chars` code points of s[0..n) (all of s when it
 * has fewer). */
size_t utf8_prefix_bytes(const char *s, size_t n, size_t chars);

/* s[0..n) cut to at most max bytes without splitting a sequence: n when
 * n <= max, else max less the continuation bytes (10xxxxxx) at the cut. */
size_t utf8_cut(const char *s, size_t n, size_t max);

/* What the repair below does with a NUL byte (well-formed, but a C string
 * or an HTML parser stops at it). */
enum utf8_nul { UTF8_NUL_KEEP, UTF8_NUL_REPLACE, UTF8_NUL_DROP };

struct buf;

/* The one invalid-UTF-8 repair: s[0..n) appended to out as well-formed
 * UTF-8, each byte that starts no well-formed sequence as U+FFFD (one per
 * byte, so every input moves on), a NUL kept, replaced by U+FFFD or
 * dropped as nul says; valid runs are copied whole. An append failure is
 * out's sticky error. */
void utf8_put_repaired(struct buf *out, const char *s, size_t n, enum utf8_nul nul);

/* 1-based code point index of byte offset off within s (for error messages). */
size_t utf8_char_index(const char *s, size_t off);

#endif
