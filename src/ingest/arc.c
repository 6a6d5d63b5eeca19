/* ARC URL-record lines (ingest/arc.h). Every field is checked, so that a
 * line of a page's text is not taken for a record when the reader looks
 * for the next record after a bad one. */
#include "ingest/arc.h"

#include <string.h>

#include "util/err.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define ARC_FIELDS_V1 5
#define ARC_FIELDS_V2 10
#define ARC_DATE_DIGITS 14
#define ARC_LENGTH_DIGITS 15 /* below 2^53: no overflow in the sum */

struct view {
    const char *s;
    size_t n;
};

/* Split on single spaces into at most max views; returns the count, or
 * max + 1 when there are more fields. */
static size_t arc_fields_split(struct view *out, size_t max, const char *s, size_t n)
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ' ')
            continue;
        if (k == max)
            return max + 1;
        out[k].s = s + start;
        out[k].n = i - start;
        k++;
        start = i + 1;
    }
    return k;
}

static bool arc_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

static unsigned arc_num(const char *s, size_t n)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (unsigned)(s[i] - '0');
    return v;
}

/* "scheme:" then something: RFC 3986's scheme grammar. */
static bool arc_url_ok(struct view v)
{
    size_t i = 0;
    if (v.n < 3 || !((v.s[0] | 0x20) >= 'a' && (v.s[0] | 0x20) <= 'z'))
        return false;
    for (i = 1; i < v.n && v.s[i] != ':'; i++) {
        char c = v.s[i];
        bool ok = ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                  c == '-' || c == '.';
        if (!ok)
            return false;
    }
    if (i + 1 >= v.n)
        return false;
    for (size_t k = 0; k < v.n; k++)
        if ((unsigned char)v.s[k] < 0x21 || v.s[k] == 0x7f)
            return false;
    return true;
}

/* IPv4 or IPv6 digits, or "-" when none was recorded. */
static bool arc_ip_ok(struct view v)
{
    if (v.n == 0 || v.n > 45)
        return false;
    for (size_t i = 0; i < v.n; i++) {
        char c = v.s[i];
        bool ok = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') || c == '.' ||
                  c == ':' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

/* YYYYMMDDhhmmss, UTC. */
static bool arc_date_parse(struct view v, int64_t *out)
{
    if (v.n != ARC_DATE_DIGITS || !arc_digits(v.s, v.n))
        return false;
    unsigned y = arc_num(v.s, 4), mo = arc_num(v.s + 4, 2), d = arc_num(v.s + 6, 2);
    unsigned h = arc_num(v.s + 8, 2), mi = arc_num(v.s + 10, 2), s = arc_num(v.s + 12, 2);
    if (!timefmt_valid_date(y, mo, d) || h > 23 || mi > 59 || s > 60)
        return false;
    *out = timefmt_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    return true;
}

static bool arc_ctype_ok(struct view v)
{
    if (v.n == 0 || v.n > 256)
        return false;
    for (size_t i = 0; i < v.n; i++)
        if ((unsigned char)v.s[i] < 0x21 || v.s[i] == 0x7f)
            return false;
    return true;
}

int arc_line_parse(struct arc_line *out, const char *s, size_t n, const char **why)
{
    struct view f[ARC_FIELDS_V2];
    memset(out, 0, sizeof *out);
    size_t k = arc_fields_split(f, ARC_FIELDS_V2, s, n);
    if (k != ARC_FIELDS_V1 && k != ARC_FIELDS_V2) {
        *why = "an ARC record line has 5 space-separated fields (v1) or 10 (v2)";
        return ERR_PARSE;
    }
    struct view len = f[k - 1];
    if (!arc_url_ok(f[0])) {
        *why = "ARC record line: the URL has no scheme or holds control characters";
        return ERR_PARSE;
    }
    if (!arc_ip_ok(f[1])) {
        *why = "ARC record line: IP-address is not an address";
        return ERR_PARSE;
    }
    if (!arc_date_parse(f[2], &out->date_s)) {
        *why = "ARC record line: Archive-date is not a YYYYMMDDhhmmss date";
        return ERR_PARSE;
    }
    if (!arc_ctype_ok(f[3])) {
        *why = "ARC record line: Content-type is empty or holds control characters";
        return ERR_PARSE;
    }
    if (len.n > ARC_LENGTH_DIGITS || !arc_digits(len.s, len.n)) {
        *why = "ARC record line: Archive-length is not a number";
        return ERR_PARSE;
    }
    for (size_t i = 0; i < len.n; i++)
        out->length = out->length * 10 + (uint64_t)(len.s[i] - '0');
    out->url = f[0].s;
    out->url_len = f[0].n;
    out->ctype = f[3].s;
    out->ctype_len = f[3].n;
    out->version = k == ARC_FIELDS_V1 ? 1 : 2;
    return 0;
}

bool arc_line_looks(const char *s, size_t n)
{
    struct view f[ARC_FIELDS_V2];
    size_t k = arc_fields_split(f, ARC_FIELDS_V2, s, n);
    if (k < ARC_FIELDS_V1)
        return false;
    const char *colon = memchr(f[0].s, ':', f[0].n);
    return colon && colon != f[0].s && arc_url_ok(f[0]);
}
