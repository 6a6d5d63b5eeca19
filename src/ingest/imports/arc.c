/* ARC URL-record lines (ingest/imports/imports_internal.h). Every field is checked, so that a
 * line of a page's text is not taken for a record when the reader looks
 * for the next record after a bad one.
 *
 * Old files of the Internet Archive hold URLs with unescaped spaces, so a
 * line that is neither 5 fields nor a good 10 is read once more as v1 from
 * its right end: the last four fields must be good, and the URL is what is
 * before them, spaces included. */
#include "ingest/imports/imports_internal.h"

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

/* Whether v starts with "scheme:" (RFC 3986's scheme grammar). */
static bool arc_has_scheme(struct view v)
{
    if (v.n < 2 || !((v.s[0] | 0x20) >= 'a' && (v.s[0] | 0x20) <= 'z'))
        return false;
    for (size_t i = 1; i < v.n; i++) {
        char c = v.s[i];
        if (c == ':')
            return true;
        bool ok = ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                  c == '-' || c == '.';
        if (!ok)
            return false;
    }
    return false;
}

/* "scheme:" then something; spaces inside when `spaces` (never at the
 * end: a doubled separator). */
static bool arc_url_ok(struct view v, bool spaces)
{
    if (!arc_has_scheme(v) || v.s[v.n - 1] == ':')
        return false;
    if (v.s[v.n - 1] == ' ')
        return false;
    for (size_t k = 0; k < v.n; k++)
        if (((unsigned char)v.s[k] < 0x21 && !(spaces && v.s[k] == ' ')) || v.s[k] == 0x7f)
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

/* The five fields of a URL-record (v2's others are not read) into out. */
static int arc_fields_check(struct arc_line *out, const struct view *url, const struct view *ip,
                            const struct view *date, const struct view *ctype,
                            const struct view *len, bool url_spaces, const char **why)
{
    if (!arc_url_ok(*url, url_spaces)) {
        *why = "ARC record line: the URL has no scheme or holds control characters";
        return ERR_PARSE;
    }
    if (!arc_ip_ok(*ip)) {
        *why = "ARC record line: IP-address is not an address";
        return ERR_PARSE;
    }
    if (!arc_date_parse(*date, &out->date_s)) {
        *why = "ARC record line: Archive-date is not a YYYYMMDDhhmmss date";
        return ERR_PARSE;
    }
    if (!arc_ctype_ok(*ctype)) {
        *why = "ARC record line: Content-type is empty or holds control characters";
        return ERR_PARSE;
    }
    if (len->n > ARC_LENGTH_DIGITS || !arc_digits(len->s, len->n)) {
        *why = "ARC record line: Archive-length is not a number";
        return ERR_PARSE;
    }
    out->length = 0;
    for (size_t i = 0; i < len->n; i++)
        out->length = out->length * 10 + (uint64_t)(len->s[i] - '0');
    out->url = url->s;
    out->url_len = url->n;
    out->ctype = ctype->s;
    out->ctype_len = ctype->n;
    return 0;
}

/* The last four fields of s[0..n) into tail[0..4) (IP-address first) and
 * what is before them into *url; false when there are fewer. */
static bool arc_tail_split(struct view *url, struct view tail[4], const char *s, size_t n)
{
    size_t end = n;
    for (int k = 3; k >= 0; k--) {
        size_t i = end;
        while (i > 0 && s[i - 1] != ' ')
            i--;
        if (i == 0)
            return false;
        tail[k].s = s + i;
        tail[k].n = end - i;
        end = i - 1;
    }
    url->s = s;
    url->n = end;
    return end > 0;
}

int arc_line_parse(struct arc_line *out, const char *s, size_t n, const char **why)
{
    struct view f[ARC_FIELDS_V2];
    memset(out, 0, sizeof *out);
    size_t k = arc_fields_split(f, ARC_FIELDS_V2, s, n);
    if (k < ARC_FIELDS_V1) {
        *why = "an ARC record line has 5 space-separated fields (v1) or 10 (v2)";
        return ERR_PARSE;
    }
    if (k == ARC_FIELDS_V1) {
        out->version = 1;
        return arc_fields_check(out, &f[0], &f[1], &f[2], &f[3], &f[4], false, why);
    }
    const char *why_v2 = NULL;
    if (k == ARC_FIELDS_V2) {
        out->version = 2;
        if (arc_fields_check(out, &f[0], &f[1], &f[2], &f[3], &f[9], false, &why_v2) == 0)
            return 0;
    }
    /* v1 with spaces in its URL */
    struct view url, tail[4];
    const char *why_v1 = "an ARC record line has 5 space-separated fields (v1) or 10 (v2)";
    out->version = 1;
    if (arc_tail_split(&url, tail, s, n) &&
        arc_fields_check(out, &url, &tail[0], &tail[1], &tail[2], &tail[3], true, &why_v1) == 0)
        return 0;
    memset(out, 0, sizeof *out);
    *why = why_v2 ? why_v2 : why_v1;
    return ERR_PARSE;
}

bool arc_line_looks(const char *s, size_t n)
{
    struct view f[ARC_FIELDS_V2];
    size_t k = arc_fields_split(f, ARC_FIELDS_V2, s, n);
    return k >= ARC_FIELDS_V1 && arc_has_scheme(f[0]);
}
