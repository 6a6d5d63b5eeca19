/* Date parsing and formatting in UTC (util/timefmt.h): ISO 8601 / RFC 3339
 * as the API and imports write it, RFC 822 and its feed variants, and the
 * civil-date arithmetic (proleptic Gregorian, after Howard Hinnant's
 * days_from_civil). No locale and no libc time zone state, so the result
 * never depends on TZ or LC_TIME.
 *
 * RFC 822 zones: GMT UT UTC Z, the US zones, a few common European/Asian
 * abbreviations (CET CEST EET EEST WET WEST BST MSK JST), numeric offsets
 * (+hhmm, +hh:mm, +hh, also after GMT/UTC). Military letters other than Z
 * and unknown alphabetic zones count as UTC, as RFC 2822 §4.3 recommends
 * (their signs were wrong in RFC 822 and cannot be trusted). */
#include "util/timefmt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/ascii.h"
#include "util/err.h"

#include "util/banned.h"

#define SECS_PER_DAY 86400

/* --- civil dates ------------------------------------------------------- */

static bool is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12)
        return 0;
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

bool timefmt_valid_date(int64_t y, unsigned m, unsigned d)
{
    return d >= 1 && d <= days_in_month(y, m);
}

/* Floor division: C's '/' truncates toward zero, dates before 1970 need floor. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int64_t timefmt_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    /* Years start in March so the leap day is the last day of the year. */
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int64_t mp = (int64_t)((m + 9) % 12);                /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;   /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void timefmt_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t z = days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;                                      /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    unsigned dd = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    unsigned mm = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (mm <= 2);
    *m = mm;
    *d = dd;
}

int64_t timefmt_day(int64_t t)
{
    return floor_div(t, SECS_PER_DAY);
}

/* --- formatting -------------------------------------------------------- */

static char *put_num(char *p, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

static int64_t clamp_time(int64_t t)
{
    if (t < TIMEFMT_MIN)
        return TIMEFMT_MIN;
    if (t > TIMEFMT_MAX)
        return TIMEFMT_MAX;
    return t;
}

/* Writes "YYYY-MM-DD" (10 bytes, no NUL) and returns the seconds of the day. */
static int64_t put_date(char *p, int64_t t)
{
    int64_t day = timefmt_day(t);
    int64_t y;
    unsigned m, d;
    timefmt_civil_from_days(day, &y, &m, &d);
    p = put_num(p, y, 4);
    *p++ = '-';
    p = put_num(p, m, 2);
    *p++ = '-';
    put_num(p, d, 2);
    return t - day * SECS_PER_DAY;
}

void timefmt_iso8601(int64_t t, char out[TIMEFMT_ISO_LEN])
{
    t = clamp_time(t);
    int64_t sod = put_date(out, t);
    char *p = out + 10;
    *p++ = 'T';
    p = put_num(p, sod / 3600, 2);
    *p++ = ':';
    p = put_num(p, sod / 60 % 60, 2);
    *p++ = ':';
    p = put_num(p, sod % 60, 2);
    *p++ = 'Z';
    *p = '\0';
}

void timefmt_http(int64_t t, char out[TIMEFMT_HTTP_LEN])
{
    static const char days[7][4] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char iso[TIMEFMT_ISO_LEN];
    timefmt_iso8601(t, iso); /* clamps, and gives the civil date's digits */
    int64_t day = timefmt_day(clamp_time(t));
    int64_t wd = ((day % 7) + 7) % 7; /* 1970-01-01 was a Thursday */
    int month = (iso[5] - '0') * 10 + (iso[6] - '0');
    snprintf(out, TIMEFMT_HTTP_LEN, "%s, %.2s %s %.4s %.8s GMT", days[wd], iso + 8,
             months[month - 1], iso, iso + 11);
}

void timefmt_date(int64_t t, char out[11])
{
    put_date(out, clamp_time(t));
    out[10] = '\0';
}

/* --- scanning ---------------------------------------------------------- */

/* A cursor over s[0..n); helpers advance i only when they succeed. */
struct scan {
    const char *s;
    size_t n;
    size_t i;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static bool scan_end(const struct scan *sc)
{
    return sc->i >= sc->n;
}

static char scan_peek(const struct scan *sc)
{
    return sc->i < sc->n ? sc->s[sc->i] : '\0';
}

static bool scan_char(struct scan *sc, char c)
{
    if (sc->i < sc->n && sc->s[sc->i] == c) {
        sc->i++;
        return true;
    }
    return false;
}

/* Exactly `width` digits. */
static bool scan_fixed(struct scan *sc, int width, int *out)
{
    if (sc->n - sc->i < (size_t)width)
        return false;
    int v = 0;
    for (int k = 0; k < width; k++) {
        char c = sc->s[sc->i + (size_t)k];
        if (!ascii_is_digit(c))
            return false;
        v = v * 10 + (c - '0');
    }
    sc->i += (size_t)width;
    *out = v;
    return true;
}

/* Between min and max digits; *ndigits gets how many were read. */
static bool scan_digits(struct scan *sc, int min, int max, int *out, int *ndigits)
{
    size_t j = sc->i;
    int v = 0, k = 0;
    while (j < sc->n && k < max && ascii_is_digit(sc->s[j])) {
        v = v * 10 + (sc->s[j] - '0');
        j++;
        k++;
    }
    if (k < min || (j < sc->n && ascii_is_digit(sc->s[j])))
        return false;
    sc->i = j;
    *out = v;
    if (ndigits)
        *ndigits = k;
    return true;
}

static void scan_skip_digits(struct scan *sc)
{
    while (sc->i < sc->n && ascii_is_digit(sc->s[sc->i]))
        sc->i++;
}

/* Numeric offset after its sign: hh, hhmm or hh:mm; seconds east of UTC. */
static bool scan_offset_body(struct scan *sc, int sign, int64_t *off)
{
    int hh, mm = 0;
    size_t save = sc->i;
    if (!scan_fixed(sc, 2, &hh))
        goto fail;
    if (scan_char(sc, ':')) {
        if (!scan_fixed(sc, 2, &mm))
            goto fail;
    } else if (ascii_is_digit(scan_peek(sc))) {
        if (!scan_fixed(sc, 2, &mm))
            goto fail;
    }
    if (ascii_is_digit(scan_peek(sc)) || hh > 23 || mm > 59)
        goto fail;
    *off = sign * ((int64_t)hh * 3600 + (int64_t)mm * 60);
    return true;
fail:
    sc->i = save;
    return false;
}

/* Combine a validated civil date and time with an offset (seconds east). */
static int make_time(int64_t y, unsigned mo, unsigned d, int h, int mi, int se, int64_t off,
                     int64_t *out)
{
    if (!timefmt_valid_date(y, mo, d) || h > 23 || mi > 59 || se > 59)
        return ERR_PARSE;
    int64_t t = timefmt_days_from_civil(y, mo, d) * SECS_PER_DAY + (int64_t)h * 3600 +
                (int64_t)mi * 60 + se - off;
    if (t < TIMEFMT_MIN || t > TIMEFMT_MAX)
        return ERR_PARSE;
    *out = t;
    return 0;
}

/* --- ISO 8601 / RFC 3339 ----------------------------------------------- */

int timefmt_parse_iso8601(const char *s, size_t n, int64_t *out, bool *date_only)
{
    struct scan sc = {s, s ? n : 0, 0};
    int y, mo, d, h = 0, mi = 0, se = 0;
    int64_t off = 0;
    bool only_date = true;

    if (!scan_fixed(&sc, 4, &y) || !scan_char(&sc, '-') || !scan_fixed(&sc, 2, &mo) ||
        !scan_char(&sc, '-') || !scan_fixed(&sc, 2, &d))
        return ERR_PARSE;
    if (!scan_end(&sc)) {
        char c = scan_peek(&sc);
        if (c != 'T' && c != 't' && c != ' ')
            return ERR_PARSE;
        sc.i++;
        only_date = false;
        if (!scan_fixed(&sc, 2, &h) || !scan_char(&sc, ':') || !scan_fixed(&sc, 2, &mi))
            return ERR_PARSE;
        if (scan_char(&sc, ':')) {
            if (!scan_fixed(&sc, 2, &se))
                return ERR_PARSE;
            /* Fractions are truncated: any number of digits, none kept. */
            if (scan_char(&sc, '.') || scan_char(&sc, ',')) {
                if (!ascii_is_digit(scan_peek(&sc)))
                    return ERR_PARSE;
                scan_skip_digits(&sc);
            }
        }
        if (scan_char(&sc, 'Z') || scan_char(&sc, 'z')) {
            /* UTC */
        } else if (scan_char(&sc, '+')) {
            if (!scan_offset_body(&sc, 1, &off))
                return ERR_PARSE;
        } else if (scan_char(&sc, '-')) {
            if (!scan_offset_body(&sc, -1, &off))
                return ERR_PARSE;
        }
        if (!scan_end(&sc))
            return ERR_PARSE;
    }
    int64_t t;
    if (make_time(y, (unsigned)mo, (unsigned)d, h, mi, se, off, &t) < 0)
        return ERR_PARSE;
    *out = t;
    if (date_only)
        *date_only = only_date;
    return 0;
}

/* --- RFC 822 and what feeds make of it --------------------------------- */

static const char *const month_names[12] = {"january",   "february", "march",    "april",
                                            "may",       "june",     "july",     "august",
                                            "september", "october",  "november", "december"};
static const char *const day_names[7] = {"monday", "tuesday",  "wednesday", "thursday",
                                         "friday", "saturday", "sunday"};

struct zone_name {
    const char *name;
    int minutes; /* east of UTC */
};

static const struct zone_name zone_names[] = {
    {"gmt", 0},       {"ut", 0},        {"utc", 0},       {"z", 0},         {"est", -5 * 60},
    {"edt", -4 * 60}, {"cst", -6 * 60}, {"cdt", -5 * 60}, {"mst", -7 * 60}, {"mdt", -6 * 60},
    {"pst", -8 * 60}, {"pdt", -7 * 60}, {"wet", 0},       {"west", 60},     {"bst", 60},
    {"cet", 60},      {"cest", 2 * 60}, {"eet", 2 * 60},  {"eest", 3 * 60}, {"msk", 3 * 60},
    {"jst", 9 * 60},
};

/* Letters at the cursor as a lower-case word of at most cap-1 bytes. */
static size_t scan_word(struct scan *sc, char *w, size_t cap)
{
    size_t j = sc->i, k = 0;
    while (j < sc->n && ascii_is_alpha(sc->s[j])) {
        if (k + 1 >= cap)
            return 0;
        w[k++] = ascii_lower(sc->s[j]);
        j++;
    }
    w[k] = '\0';
    sc->i = j;
    return k;
}

/* A month as "Jun", "June" or "Sept"; 1..12 or 0. */
static unsigned month_from_word(const char *w, size_t k)
{
    if (k < 3)
        return 0;
    for (unsigned m = 0; m < 12; m++) {
        size_t full = strlen(month_names[m]);
        if (k <= full && memcmp(w, month_names[m], k) == 0 &&
            (k == 3 || k == full || (m == 8 && k == 4)))
            return m + 1;
    }
    return 0;
}

static bool is_day_word(const char *w, size_t k)
{
    if (k < 3)
        return false;
    for (size_t i = 0; i < 7; i++) {
        size_t full = strlen(day_names[i]);
        /* "Tue", "Tues", "Thur", "Thurs", "Tuesday" */
        if (k <= full && memcmp(w, day_names[i], k) == 0)
            return true;
    }
    return false;
}

/* Spaces, tabs, line breaks and commas between the parts of a date. */
static void skip_sep(struct scan *sc)
{
    while (sc->i < sc->n && (is_blank(sc->s[sc->i]) || sc->s[sc->i] == ','))
        sc->i++;
}

/* The zone and anything allowed after it; *off in seconds east. */
static bool scan_rfc822_zone(struct scan *sc, int64_t *off)
{
    *off = 0;
    skip_sep(sc);
    if (scan_end(sc))
        return true;
    char c = scan_peek(sc);
    if (c == '+' || c == '-') {
        sc->i++;
        if (!scan_offset_body(sc, c == '+' ? 1 : -1, off))
            return false;
    } else if (ascii_is_alpha(c)) {
        char w[8];
        size_t k = scan_word(sc, w, sizeof w);
        if (k == 0)
            return false;
        bool known = false;
        for (size_t i = 0; i < sizeof zone_names / sizeof zone_names[0]; i++) {
            if (strcmp(w, zone_names[i].name) == 0) {
                *off = (int64_t)zone_names[i].minutes * 60;
                known = true;
                break;
            }
        }
        /* "GMT+0200", "UTC-05:00" */
        if (known && *off == 0 && (scan_peek(sc) == '+' || scan_peek(sc) == '-')) {
            int sign = scan_peek(sc) == '+' ? 1 : -1;
            sc->i++;
            if (!scan_offset_body(sc, sign, off))
                return false;
        }
        /* unknown names and military letters: UTC (RFC 2822 §4.3) */
    } else if (c != '(') {
        return false;
    }
    skip_sep(sc);
    /* A trailing comment, as in "-0700 (PDT)". */
    if (scan_char(sc, '(')) {
        while (!scan_end(sc) && scan_peek(sc) != ')' && scan_peek(sc) != '(')
            sc->i++;
        if (!scan_char(sc, ')'))
            return false;
        skip_sep(sc);
    }
    return scan_end(sc);
}

int timefmt_parse_rfc822(const char *s, size_t n, int64_t *out)
{
    struct scan sc = {s, s ? n : 0, 0};
    char w[16];
    int d, y, ydigits, h, mi, se = 0;
    unsigned mo;
    int64_t off;

    skip_sep(&sc);
    if (ascii_is_alpha(scan_peek(&sc))) {
        size_t k = scan_word(&sc, w, sizeof w);
        if (!is_day_word(w, k))
            return ERR_PARSE;
        scan_char(&sc, '.');
        skip_sep(&sc);
    }
    if (!scan_digits(&sc, 1, 2, &d, NULL))
        return ERR_PARSE;
    /* "10 Jun 2003" and RFC 850's "10-Jun-03" */
    bool dashed = scan_char(&sc, '-');
    if (!dashed)
        skip_sep(&sc);
    size_t k = scan_word(&sc, w, sizeof w);
    mo = month_from_word(w, k);
    if (mo == 0)
        return ERR_PARSE;
    scan_char(&sc, '.');
    if (dashed) {
        if (!scan_char(&sc, '-'))
            return ERR_PARSE;
    } else {
        skip_sep(&sc);
    }
    if (!scan_digits(&sc, 2, 4, &y, &ydigits))
        return ERR_PARSE;
    /* RFC 2822 §4.3: two digits below 50 are 20xx, others 19xx; three
     * digits add 1900. */
    if (ydigits == 2)
        y += y < 50 ? 2000 : 1900;
    else if (ydigits == 3)
        y += 1900;
    if (!scan_end(&sc) && !is_blank(scan_peek(&sc)) && scan_peek(&sc) != ',')
        return ERR_PARSE;
    skip_sep(&sc);
    /* Some feeds give the date alone: midnight UTC. */
    if (scan_end(&sc))
        return make_time(y, mo, (unsigned)d, 0, 0, 0, 0, out);
    if (!scan_digits(&sc, 1, 2, &h, NULL) || !scan_char(&sc, ':') || !scan_fixed(&sc, 2, &mi))
        return ERR_PARSE;
    if (scan_char(&sc, ':')) {
        if (!scan_fixed(&sc, 2, &se))
            return ERR_PARSE;
        if (scan_char(&sc, '.')) {
            if (!ascii_is_digit(scan_peek(&sc)))
                return ERR_PARSE;
            scan_skip_digits(&sc);
        }
    }
    if (!scan_rfc822_zone(&sc, &off))
        return ERR_PARSE;
    return make_time(y, mo, (unsigned)d, h, mi, se, off, out);
}

int timefmt_parse_any(const char *s, size_t n, int64_t *out)
{
    if (!s)
        return ERR_PARSE;
    while (n > 0 && is_blank(s[0])) {
        s++;
        n--;
    }
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    if (timefmt_parse_iso8601(s, n, out, NULL) == 0)
        return 0;
    return timefmt_parse_rfc822(s, n, out);
}
