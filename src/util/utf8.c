/* UTF-8 lengths, limits and the encoder (util/utf8.h). */
#include "util/utf8.h"

#include "util/buf.h"

size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool utf8_valid(const char *s, size_t n)
{
    size_t i = 0;
    uint32_t cp;
    while (i < n) {
        size_t l = utf8_decode(s + i, n - i, &cp);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t i = 0, count = 0;
    uint32_t cp;
    while (i < n) {
        size_t l = utf8_decode(s + i, n - i, &cp);
        i += l ? l : 1;
        count++;
    }
    return count;
}

size_t utf8_prefix_bytes(const char *s, size_t n, size_t chars)
{
    size_t i = 0;
    uint32_t cp;
    while (i < n && chars > 0) {
        size_t l = utf8_decode(s + i, n - i, &cp);
        i += l ? l : 1;
        chars--;
    }
    return i;
}

size_t utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

void utf8_put_repaired(struct buf *out, const char *s, size_t n, enum utf8_nul nul)
{
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        uint32_t cp = 0;
        size_t l;
        while (run < n && (l = utf8_decode(s + run, n - run, &cp)) != 0 &&
               (cp != 0 || nul == UTF8_NUL_KEEP))
            run += l;
        buf_append(out, s + i, run - i);
        if (run < n) {
            if (s[run] != 0 || nul == UTF8_NUL_REPLACE)
                buf_append(out, "\xEF\xBF\xBD", 3);
            run++;
        }
        i = run;
    }
}

size_t utf8_char_index(const char *s, size_t off)
{
    return utf8_count(s, off) + 1;
}
