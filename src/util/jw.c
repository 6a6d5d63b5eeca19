/* JSON writer (util/jw.h). */
#include "util/jw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/utf8.h"

void jw_init(struct jw *w, struct buf *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

static void before_value(struct jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->need_comma[w->depth])
        buf_putc(w->out, ',');
    w->need_comma[w->depth] = true;
}

static void container_open(struct jw *w, char c)
{
    before_value(w);
    buf_putc(w->out, c);
    if (w->depth < JW_MAX_DEPTH)
        w->depth++;
    w->need_comma[w->depth] = false;
}

static void container_close(struct jw *w, char c)
{
    buf_putc(w->out, c);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj_begin(struct jw *w)
{
    container_open(w, '{');
}

void jw_obj_end(struct jw *w)
{
    container_close(w, '}');
}

void jw_arr_begin(struct jw *w)
{
    container_open(w, '[');
}

void jw_arr_end(struct jw *w)
{
    container_close(w, ']');
}

void jw_key(struct jw *w, const char *key)
{
    before_value(w);
    buf_putc(w->out, '"');
    jw_escape(w->out, key, strlen(key));
    buf_puts(w->out, "\":");
    w->after_key = true;
}

/* A zero byte of x: its high bit set, and maybe the high bits of later
 * bytes (a borrow), never of an earlier one: "haszero" of the Bit
 * Twiddling Hacks, exact as a yes or no and in its lowest byte flagged. */
#define JW_ONES 0x0101010101010101ULL
#define JW_HIGHS 0x8080808080808080ULL
static inline uint64_t jw_has_zero(uint64_t x)
{
    return (x - JW_ONES) & ~x & JW_HIGHS;
}

/* Non-zero when one of the 8 bytes of x (loaded in memory order) is not
 * copied verbatim: a control byte, '"', '\\' or a byte of a non-ASCII
 * character. The lowest byte flagged is the first such byte: each test
 * flags later bytes falsely only after a true one ("hasless" as
 * haszero). */
static inline uint64_t jw_word_special(uint64_t x)
{
    return (x & JW_HIGHS) | ((x - JW_ONES * 0x20) & ~x & JW_HIGHS) |
           jw_has_zero(x ^ (JW_ONES * '"')) | jw_has_zero(x ^ (JW_ONES * '\\'));
}

void jw_escape(struct buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    size_t i = 0;
    while (i < n) {
        /* Eight plain ASCII bytes at a time: the text of an article is
         * mostly that (jw_escape was 15 % of an export's thread byte by
         * byte). */
        uint64_t word, special;
        if (n - i >= 8) {
            memcpy(&word, p + i, 8);
            if (!(special = jw_word_special(word))) {
                i += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* Straight to the first byte that is not plain (memory order
             * is the word's low bytes first). */
            i += (size_t)__builtin_ctzll(special) >> 3;
#endif
        }
        unsigned char c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            uint32_t cp;
            size_t l = utf8_decode(s + i, n - i, &cp);
            if (l) {
                i += l;
                continue;
            }
        }
        buf_append(b, p + run, i - run);
        switch (c) {
        case '"':
            buf_puts(b, "\\\"");
            break;
        case '\\':
            buf_puts(b, "\\\\");
            break;
        case '\n':
            buf_puts(b, "\\n");
            break;
        case '\r':
            buf_puts(b, "\\r");
            break;
        case '\t':
            buf_puts(b, "\\t");
            break;
        case '\b':
            buf_puts(b, "\\b");
            break;
        case '\f':
            buf_puts(b, "\\f");
            break;
        default:
            if (c < 0x20)
                buf_printf(b, "\\u%04x", c);
            else
                buf_puts(b, "\xEF\xBF\xBD"); /* invalid UTF-8 byte → U+FFFD */
        }
        i++;
        run = i;
    }
    buf_append(b, p + run, n - run);
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
    before_value(w);
    if (!s) {
        buf_puts(w->out, "null");
        return;
    }
    buf_putc(w->out, '"');
    jw_escape(w->out, s, n);
    buf_putc(w->out, '"');
}

void jw_str(struct jw *w, const char *s)
{
    jw_strn(w, s, s ? strlen(s) : 0);
}

void jw_int(struct jw *w, int64_t v)
{
    before_value(w);
    buf_printf(w->out, "%lld", (long long)v);
}

void jw_uint(struct jw *w, uint64_t v)
{
    before_value(w);
    buf_printf(w->out, "%llu", (unsigned long long)v);
}

void jw_double(struct jw *w, double v)
{
    before_value(w);
    if (!isfinite(v))
        buf_puts(w->out, "null");
    else
        buf_printf(w->out, "%.17g", v);
}

void jw_bool(struct jw *w, bool v)
{
    before_value(w);
    buf_puts(w->out, v ? "true" : "false");
}

void jw_null(struct jw *w)
{
    before_value(w);
    buf_puts(w->out, "null");
}

void jw_raw(struct jw *w, const char *json, size_t n)
{
    before_value(w);
    buf_append(w->out, json, n);
}
