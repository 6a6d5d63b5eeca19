/* Minimal UTF-8 helpers for lengths and limits counted in code points
 * (API.md §8). Full Unicode processing lives in text/ (utf8proc). */
#ifndef NEWSD_UTIL_UTF8_H
#define NEWSD_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t n);

/* Number of code points in s[0..n); an invalid byte counts as one. */
size_t utf8_count(const char *s, size_t n);

/* Byte length of the first `chars` code points of s[0..n) (all of s when it
 * has fewer). */
size_t utf8_prefix_bytes(const char *s, size_t n, size_t chars);

/* 1-based code point index of byte offset off within s (for error messages). */
size_t utf8_char_index(const char *s, size_t off);

#endif
