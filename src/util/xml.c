/* XML text and attribute values (util/xml.h). */
#include "util/xml.h"

#include <stdbool.h>
#include <stdint.h>

#include "util/utf8.h"

#include "util/banned.h"

static void xml_put(struct buf *b, const char *s, size_t n, bool attr)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '&':
            buf_puts(b, "&amp;");
            continue;
        case '<':
            buf_puts(b, "&lt;");
            continue;
        case '>':
            buf_puts(b, "&gt;");
            continue;
        case '"':
            buf_puts(b, attr ? "&quot;" : "\"");
            continue;
        case '\t':
            buf_puts(b, attr ? "&#9;" : "\t");
            continue;
        case '\n':
            buf_puts(b, attr ? "&#10;" : "\n");
            continue;
        case '\r':
            buf_puts(b, "&#13;"); /* a parser would fold a raw one into \n */
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            buf_putc(b, '?');
            continue;
        }
        if (c < 0x80) {
            buf_putc(b, (char)c);
            continue;
        }
        /* Bytes that are not UTF-8 (a parameter's, a page's) would make
         * the document ill-formed: U+FFFD, as the JSON writer does. */
        uint32_t cp;
        size_t len = utf8_decode(s + i, n - i, &cp);
        if (len == 0) {
            buf_puts(b, "\xEF\xBF\xBD");
        } else if (cp == 0xFFFE || cp == 0xFFFF) {
            buf_putc(b, '?'); /* not XML characters */
            i += len - 1;
        } else {
            buf_append(b, s + i, len);
            i += len - 1;
        }
    }
}

void xml_text(struct buf *b, const char *s, size_t n)
{
    xml_put(b, s, n, false);
}

void xml_attr(struct buf *b, const char *s, size_t n)
{
    xml_put(b, s, n, true);
}
