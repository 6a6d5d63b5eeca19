/* UTF-8 length helpers (util/utf8.h). */
#include "util/utf8.h"

#include <stdint.h>

/* Length of a well-formed sequence at s, or 0 when the bytes are invalid. */
static size_t seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t l = seq_len(p + i, n - i);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

size_t utf8_count(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, count = 0;
    while (i < n) {
        size_t l = seq_len(p + i, n - i);
        i += l ? l : 1;
        count++;
    }
    return count;
}

size_t utf8_prefix_bytes(const char *s, size_t n, size_t chars)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n && chars > 0) {
        size_t l = seq_len(p + i, n - i);
        i += l ? l : 1;
        chars--;
    }
    return i;
}

size_t utf8_char_index(const char *s, size_t off)
{
    return utf8_count(s, off) + 1;
}
