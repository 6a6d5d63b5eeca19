/* The author read back from an article's JSON (article/json_author.h). */
#include "article/json_author.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/utf8.h"

#include <string.h>

#include "util/banned.h"

static const char key[] = "\"author\":";

/* Four hex digits at p (p + 4 <= end); -1 when they are not. */
static int32_t hex4(const char *p)
{
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = ascii_hex_value(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

int article_json_author(const char *json, size_t len, struct buf *out)
{
    const char *p = NULL, *end = json + len;
    for (size_t i = 0; i + sizeof key - 1 <= len; i++) {
        if (json[i] == '"' && !memcmp(json + i, key, sizeof key - 1)) {
            p = json + i + sizeof key - 1;
            break;
        }
    }
    if (p == NULL)
        return 0;
    if (end - p >= 4 && !memcmp(p, "null", 4))
        return 0;
    if (p >= end || *p != '"')
        return ERR_PARSE;
    size_t start = out->len;
    for (p++; p < end; p++) {
        char c = *p;
        if (c == '"')
            return out->len > start ? 1 : 0;
        if ((unsigned char)c < 0x20)
            return ERR_PARSE;
        if (c != '\\') {
            buf_putc(out, c);
            continue;
        }
        if (++p >= end)
            return ERR_PARSE;
        switch (*p) {
        case '"':
        case '\\':
        case '/':
            buf_putc(out, *p);
            break;
        case 'b':
            buf_putc(out, '\b');
            break;
        case 'f':
            buf_putc(out, '\f');
            break;
        case 'n':
            buf_putc(out, '\n');
            break;
        case 'r':
            buf_putc(out, '\r');
            break;
        case 't':
            buf_putc(out, '\t');
            break;
        case 'u': {
            if (end - p < 5)
                return ERR_PARSE;
            int32_t cp = hex4(p + 1);
            if (cp < 0)
                return ERR_PARSE;
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 7 && p[1] == '\\' && p[2] == 'u') {
                int32_t lo = hex4(p + 3);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD;
            char enc[4];
            buf_append(out, enc, utf8_encode((uint32_t)cp, enc));
            break;
        }
        default:
            return ERR_PARSE;
        }
    }
    return ERR_PARSE;
}
