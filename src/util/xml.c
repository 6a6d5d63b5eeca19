/* XML text and attribute values (util/xml.h). */
#include "util/xml.h"

#include <stdbool.h>

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
        } else if (c == 0xef && i + 2 < n && p[i + 1] == 0xbf &&
                   (p[i + 2] == 0xbe || p[i + 2] == 0xbf)) {
            buf_putc(b, '?'); /* U+FFFE, U+FFFF: not XML characters */
            i += 2;
        } else {
            buf_putc(b, (char)c);
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
