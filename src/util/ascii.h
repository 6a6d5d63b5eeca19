/* ASCII character classes and case, independent of the C locale: protocol
 * tokens (schemes, hosts, charset names, parameter names, language and
 * country codes) are ASCII case-insensitive whatever the process's locale,
 * and bytes >= 0x80 (UTF-8) are never changed or classed as letters.
 * Hexadecimal both ways lives here too: digits read in either case, written
 * in lower case (keys, digests, ids, escapes in logs and terms).
 * Inline: the tokenizer's ASCII fast path folds every byte it reads. */
#ifndef NEWSD_UTIL_ASCII_H
#define NEWSD_UTIL_ASCII_H

#include <stdbool.h>
#include <stddef.h>

static inline bool ascii_is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static inline bool ascii_is_alpha(char c)
{
    return ascii_is_upper(c) || (c >= 'a' && c <= 'z');
}

static inline bool ascii_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* c with A-Z lowered; every other byte as it is. */
static inline char ascii_lower(char c)
{
    return ascii_is_upper(c) ? (char)(c - 'A' + 'a') : c;
}

/* Value of a hexadecimal digit (either case), or -1 when c is none. */
static inline int ascii_hex_value(char c)
{
    if (ascii_is_digit(c))
        return c - '0';
    char l = ascii_lower(c);
    if (l >= 'a' && l <= 'f')
        return l - 'a' + 10;
    return -1;
}

/* Byte c as two lower-case hex digits into out[0..2); no terminator. For
 * callers that escape byte by byte (\xNN, \u00NN). */
static inline void ascii_hex_byte(char out[2], unsigned char c)
{
    out[0] = "0123456789abcdef"[c >> 4];
    out[1] = "0123456789abcdef"[c & 15];
}

/* in[0..n) as 2n lower-case hex digits and a NUL: out holds 2n + 1 bytes. */
static inline void ascii_hex_encode(char *out, const void *in, size_t n)
{
    const unsigned char *p = in;
    for (size_t i = 0; i < n; i++)
        ascii_hex_byte(out + 2 * i, p[i]);
    out[2 * n] = '\0';
}

/* dst[0..n) = src[0..n) lowered; dst may be src. No terminator written. */
static inline void ascii_lower_n(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ascii_lower(src[i]);
}

/* Lower the NUL-terminated s in place. */
static inline void ascii_lower_str(char *s)
{
    for (; *s; s++)
        *s = ascii_lower(*s);
}

#endif
