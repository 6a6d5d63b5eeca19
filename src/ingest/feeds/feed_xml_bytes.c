/* An XML feed's bytes made readable before libxml2 reads them (ingest/feeds/
 * feed_internal.h, feed_xml_parse's first steps): blanks before the XML
 * declaration skipped, bare ampersands escaped, the encoding to force
 * chosen (HTTP charset > BOM / XML declaration > UTF-8 > ISO-8859-1).
 * Byte work: libxml2 is asked only whether it knows a charset. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/encoding.h>

#include "ingest/feeds/feed_internal.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/utf8.h"

#include "util/banned.h"

/* ---- encoding ------------------------------------------------------------------ */

static bool is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Does the document start with an XML declaration naming an encoding? */
bool feed_xml_decl_has_encoding(const char *s, size_t n)
{
    if (n < 5 || memcmp(s, "<?xml", 5) != 0)
        return false;
    size_t end = n < 256 ? n : 256;
    for (size_t i = 5; i + 1 < end; i++) {
        if (s[i] == '?' && s[i + 1] == '>')
            return false;
        if (i + 8 <= end && memcmp(s + i, "encoding", 8) == 0)
            return true;
    }
    return false;
}

static bool has_bom_or_wide(const unsigned char *s, size_t n)
{
    if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
        return true;
    if (n >= 2 && ((s[0] == 0xFE && s[1] == 0xFF) || (s[0] == 0xFF && s[1] == 0xFE)))
        return true;
    /* UTF-16/32 without a BOM starts with a NUL next to the '<'. */
    return n >= 2 && (s[0] == 0 || s[1] == 0);
}

/* The encoding to force, or NULL to let libxml2 read BOM and declaration. */
const char *feed_xml_choose_encoding(const char *body, size_t len, const char *charset)
{
    if (charset && *charset && strlen(charset) < 64) {
        xmlCharEncodingHandlerPtr h = xmlFindCharEncodingHandler(charset);
        if (h) {
            xmlCharEncCloseFunc(h);
            return charset;
        }
    }
    if (has_bom_or_wide((const unsigned char *)body, len) || feed_xml_decl_has_encoding(body, len))
        return NULL;
    return utf8_valid(body, len) ? NULL : "ISO-8859-1";
}

/* ---- bare ampersands --------------------------------------------------------------
 * "a=1&b=2" in a link is the most common way a feed stops being XML. The
 * '&'s that start no reference become "&amp;" before parsing; CDATA,
 * comments, processing instructions and the DOCTYPE are left alone. Only
 * for encodings where '&' and '<' are always those bytes. */

/* Does the '&' at s[i] start a character or entity reference? */
static bool amp_starts_ref(const char *s, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j < n && s[j] == '#') {
        j++;
        bool hex = j < n && s[j] == 'x';
        if (hex)
            j++;
        size_t start = j;
        while (j < n && j - start < 10 && (hex ? ascii_hex_value(s[j]) >= 0 : ascii_is_digit(s[j])))
            j++;
        return j > start && j < n && s[j] == ';';
    }
    if (j < n && (ascii_is_alpha(s[j]) || s[j] == '_' || s[j] == ':')) {
        size_t start = j;
        while (j < n && j - start < 64 &&
               (ascii_is_alpha(s[j]) || ascii_is_digit(s[j]) || s[j] == '.' || s[j] == '_' ||
                s[j] == ':' || s[j] == '-'))
            j++;
        return j < n && s[j] == ';';
    }
    return false;
}

/* Offset just past the end marker of a region starting at s[i], or n. */
static size_t skip_past(const char *s, size_t n, size_t i, const char *end)
{
    size_t el = strlen(end);
    while (i + el <= n) {
        const char *p = memchr(s + i, end[0], n - i);
        if (!p || (size_t)(p - s) + el > n)
            break;
        if (memcmp(p, end, el) == 0)
            return (size_t)(p - s) + el;
        i = (size_t)(p - s) + 1;
    }
    return n;
}

/* Where the markup construct at s[i] (a '<') that must not be touched ends,
 * or i when it is an ordinary tag. */
static size_t skip_verbatim(const char *s, size_t n, size_t i)
{
    size_t left = n - i;
    if (left >= 9 && memcmp(s + i, "<![CDATA[", 9) == 0)
        return skip_past(s, n, i + 9, "]]>");
    if (left >= 4 && memcmp(s + i, "<!--", 4) == 0)
        return skip_past(s, n, i + 4, "-->");
    if (left >= 2 && s[i + 1] == '?')
        return skip_past(s, n, i + 2, "?>");
    if (left >= 9 && memcmp(s + i, "<!DOCTYPE", 9) == 0) {
        size_t j = i + 9;
        while (j < n && s[j] != '[' && s[j] != '>')
            j++;
        if (j < n && s[j] == '[')
            j = skip_past(s, n, j, "]");
        return skip_past(s, n, j, ">");
    }
    return i;
}

/* A copy of s with bare '&'s escaped in *out (malloc'd), or *out = NULL
 * when there is none. 0 or ERR_NOMEM. */
int feed_xml_amp_escape(const char *s, size_t n, char **out, size_t *out_len)
{
    *out = NULL;
    struct buf b;
    buf_init(&b, 0);
    size_t i = 0, copied = 0;
    while (i < n) {
        const char *lt = memchr(s + i, '<', n - i);
        const char *amp = memchr(s + i, '&', n - i);
        if (!amp)
            break;
        if (lt && lt < amp) {
            size_t j = skip_verbatim(s, n, (size_t)(lt - s));
            i = j > (size_t)(lt - s) ? j : (size_t)(lt - s) + 1;
            continue;
        }
        size_t k = (size_t)(amp - s);
        if (!amp_starts_ref(s, n, k)) {
            buf_append(&b, s + copied, k + 1 - copied);
            buf_puts(&b, "amp;");
            copied = k + 1;
        }
        i = k + 1;
    }
    if (copied == 0) {
        buf_release(&b);
        return 0;
    }
    buf_append(&b, s + copied, n - copied);
    if (buf_error(&b)) {
        buf_release(&b);
        return ERR_NOMEM;
    }
    *out = buf_detach(&b, out_len);
    return 0;
}

/* '&' and '<' are plain bytes: not UTF-16/32, not ISO-2022 or UTF-7. */
bool feed_xml_ascii_compatible(const char *s, size_t n, const char *charset)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n >= 2 && ((u[0] == 0xFE && u[1] == 0xFF) || (u[0] == 0xFF && u[1] == 0xFE)))
        return false;
    for (size_t i = 0; i < 4 && i < n; i++)
        if (u[i] == 0)
            return false;
    char head[257];
    size_t hn = n < 256 ? n : 256;
    for (size_t i = 0; i < hn; i++)
        head[i] = s[i] ? ascii_lower(s[i]) : ' ';
    head[hn] = '\0';
    if (strstr(head, "2022") || strstr(head, "utf-7"))
        return false;
    return !charset || (!strstr(charset, "2022") && strncasecmp(charset, "utf-7", 5) != 0);
}

void feed_xml_skip_prolog_blanks(const char **body, size_t *len)
{
    if (has_bom_or_wide((const unsigned char *)*body, *len))
        return;
    size_t i = 0;
    while (i < *len && is_space((unsigned char)(*body)[i]))
        i++;
    if (*len - i >= 5 && memcmp(*body + i, "<?xml", 5) == 0) {
        *body += i;
        *len -= i;
    }
}
