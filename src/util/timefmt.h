/* Time parsing and formatting, all in UTC seconds since the epoch (int64).
 * Parsers take (pointer, length), never read past it, and reject impossible
 * dates (2021-02-30). No locale, no libc time zone state. */
#ifndef NEWSD_UTIL_TIMEFMT_H
#define NEWSD_UTIL_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Supported range: years 1000..9999. */
#define TIMEFMT_MIN ((int64_t)-30610224000LL) /* 1000-01-01T00:00:00Z */
#define TIMEFMT_MAX ((int64_t)253402300799LL) /* 9999-12-31T23:59:59Z */

/* Buffer size for timefmt_iso8601: "YYYY-MM-DDThh:mm:ssZ" + NUL. */
#define TIMEFMT_ISO_LEN 21

/* Parse the API's and imports' date forms:
 *   YYYY-MM-DD
 *   YYYY-MM-DDThh:mm[:ss[.fraction]]  (also ' ' instead of 'T')
 *   ... followed by nothing (UTC), 'Z'/'z', or an offset +hh:mm / +hhmm / +hh
 * Fractions are truncated. *date_only is set when only a date was given
 * (callers of a `to` bound then use the end of that day). date_only may be
 * NULL. Returns 0, or ERR_PARSE for anything else (including trailing bytes
 * and impossible dates). */
int timefmt_parse_iso8601(const char *s, size_t n, int64_t *out, bool *date_only);

/* Parse RFC 822 / RFC 1123 / RFC 2822 dates as feeds write them, tolerating
 * their common variants: optional weekday, 2- or 4-digit year, missing
 * seconds, full month names, named zones (GMT, UT, UTC, EST, EDT, CST, CDT,
 * MST, MDT, PST, PDT, Z, military letters), numeric offsets, extra spaces
 * and commas. Returns 0 or ERR_PARSE. */
int timefmt_parse_rfc822(const char *s, size_t n, int64_t *out);

/* Either of the two formats above (feeds mix them). */
int timefmt_parse_any(const char *s, size_t n, int64_t *out);

/* Write "YYYY-MM-DDThh:mm:ssZ" (clamped to the supported range). */
void timefmt_iso8601(int64_t t, char out[TIMEFMT_ISO_LEN]);

/* Write the IMF-fixdate of HTTP (RFC 9110 §5.6.7), also RSS's RFC 822
 * form: "Sun, 06 Nov 1994 08:49:37 GMT" (clamped like timefmt_iso8601). */
#define TIMEFMT_HTTP_LEN 30
void timefmt_http(int64_t t, char out[TIMEFMT_HTTP_LEN]);

/* Write "YYYY-MM-DD". out needs 11 bytes. */
void timefmt_date(int64_t t, char out[11]);

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
int64_t timefmt_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Civil date of a day number. */
void timefmt_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* True when y-m-d exists. */
bool timefmt_valid_date(int64_t y, unsigned m, unsigned d);

/* UTC day number of t (floor division). */
int64_t timefmt_day(int64_t t);

#endif
