/* util/timefmt: ISO 8601 and RFC 822 parsing (table-driven, hostile input),
 * civil-date arithmetic against a naive day counter, formatting. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/err.h"
#include "util/timefmt.h"

/* Expected epoch values come from Python's calendar.timegm, not from this code. */
static void formatting_writes_known_instants(void **state)
{
    (void)state;
    static const struct {
        int64_t t;
        const char *iso;
    } cases[] = {
        {0, "1970-01-01T00:00:00Z"},
        {-1, "1969-12-31T23:59:59Z"},
        {951782400, "2000-02-29T00:00:00Z"},
        {1709251199, "2024-02-29T23:59:59Z"},
        {1685700445, "2023-06-02T10:07:25Z"},
        {-599616000, "1951-01-01T00:00:00Z"},
        {TIMEFMT_MIN, "1000-01-01T00:00:00Z"},
        {TIMEFMT_MAX, "9999-12-31T23:59:59Z"},
        /* clamped */
        {TIMEFMT_MIN - 1, "1000-01-01T00:00:00Z"},
        {TIMEFMT_MAX + 1, "9999-12-31T23:59:59Z"},
        {INT64_MIN, "1000-01-01T00:00:00Z"},
        {INT64_MAX, "9999-12-31T23:59:59Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[TIMEFMT_ISO_LEN];
        memset(out, 'x', sizeof out);
        timefmt_iso8601(cases[i].t, out);
        assert_string_equal(out, cases[i].iso);
        char d[11];
        timefmt_date(cases[i].t, d);
        assert_int_equal(strlen(d), 10);
        assert_memory_equal(d, cases[i].iso, 10);
    }
}

/* Naive oracle: count days one by one from 1970-01-01. */
static void civil_arithmetic_agrees_with_a_day_counter(void **state)
{
    (void)state;
    static const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t day = 0;
    for (int64_t y = 1970; y < 2410; y++) {
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (unsigned m = 1; m <= 12; m++) {
            unsigned n = dim[m - 1] + (m == 2 && leap);
            for (unsigned d = 1; d <= n; d++) {
                assert_true(timefmt_valid_date(y, m, d));
                assert_int_equal(timefmt_days_from_civil(y, m, d), day);
                int64_t yy;
                unsigned mm, dd;
                timefmt_civil_from_days(day, &yy, &mm, &dd);
                assert_int_equal(yy, y);
                assert_int_equal(mm, m);
                assert_int_equal(dd, d);
                day++;
            }
            assert_false(timefmt_valid_date(y, m, n + 1));
        }
    }
    /* backwards from 1970 */
    day = -1;
    for (int64_t y = 1969; y >= 1000; y--) {
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (unsigned m = 12; m >= 1; m--) {
            unsigned n = dim[m - 1] + (m == 2 && leap);
            for (unsigned d = n; d >= 1; d--) {
                assert_int_equal(timefmt_days_from_civil(y, m, d), day);
                day--;
            }
        }
    }
    assert_false(timefmt_valid_date(2021, 0, 1));
    assert_false(timefmt_valid_date(2021, 13, 1));
    assert_false(timefmt_valid_date(2021, 1, 0));
    assert_int_equal(timefmt_day(-1), -1);
    assert_int_equal(timefmt_day(-86400), -1);
    assert_int_equal(timefmt_day(-86401), -2);
    assert_int_equal(timefmt_day(86399), 0);
}

struct iso_case {
    const char *in;
    const char *want; /* NULL: must be rejected */
    bool date_only;
};

static void iso8601_parses_the_api_and_import_forms(void **state)
{
    (void)state;
    static const struct iso_case cases[] = {
        {"2023-06-02", "2023-06-02T00:00:00Z", true},
        {"2023-06-02T10:07:25Z", "2023-06-02T10:07:25Z", false},
        {"2023-06-02t10:07:25z", "2023-06-02T10:07:25Z", false},
        {"2023-06-02 10:07:25", "2023-06-02T10:07:25Z", false},
        {"2023-06-02T10:07:25", "2023-06-02T10:07:25Z", false},
        {"2023-06-02T10:07", "2023-06-02T10:07:00Z", false},
        {"2023-06-02T10:07Z", "2023-06-02T10:07:00Z", false},
        /* 7-digit fractions (real NewsAPI fixtures), truncated not rounded */
        {"2023-06-02T10:07:25.6727634Z", "2023-06-02T10:07:25Z", false},
        {"2023-06-02T10:07:25.9999999Z", "2023-06-02T10:07:25Z", false},
        {"2023-06-02T10:07:25.5", "2023-06-02T10:07:25Z", false},
        {"2023-06-02T10:07:25,5Z", "2023-06-02T10:07:25Z", false},
        {"2019-06-05T12:12:56+00:00", "2019-06-05T12:12:56Z", false},
        {"2019-06-05T12:12:56-00:00", "2019-06-05T12:12:56Z", false},
        {"2003-06-10T04:00:00+02:00", "2003-06-10T02:00:00Z", false},
        {"2003-06-10T04:00:00+0200", "2003-06-10T02:00:00Z", false},
        {"2003-06-10T04:00:00+02", "2003-06-10T02:00:00Z", false},
        {"2003-06-10T04:00:00-05:30", "2003-06-10T09:30:00Z", false},
        /* offsets crossing midnight, month, year and a leap day */
        {"2000-01-01T01:00:00+02:00", "1999-12-31T23:00:00Z", false},
        {"1999-12-31T23:00:00-02:00", "2000-01-01T01:00:00Z", false},
        {"2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00Z", false},
        {"2023-03-01T00:30:00+01:00", "2023-02-28T23:30:00Z", false},
        {"2000-02-29", "2000-02-29T00:00:00Z", true},
        {"2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z", false},
        {"1000-01-01", "1000-01-01T00:00:00Z", true},
        {"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", false},
        {"1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z", false},
        /* impossible dates */
        {"2021-02-30", NULL, false},
        {"2021-02-29", NULL, false},
        {"1900-02-29", NULL, false},
        {"2100-02-29", NULL, false},
        {"2021-04-31", NULL, false},
        {"2021-00-10", NULL, false},
        {"2021-13-10", NULL, false},
        {"2021-01-00", NULL, false},
        {"2021-01-32", NULL, false},
        {"2021-01-01T24:00:00Z", NULL, false},
        {"2021-01-01T23:60:00Z", NULL, false},
        {"2021-01-01T23:59:60Z", NULL, false},
        {"2021-01-01T10:00:00+24:00", NULL, false},
        {"2021-01-01T10:00:00+01:60", NULL, false},
        /* out of range after the offset, or of the 4-digit years */
        {"9999-12-31T23:00:00-05:00", NULL, false},
        {"1000-01-01T00:00:00+01:00", NULL, false},
        {"0999-12-31", NULL, false},
        {"0000-01-01", NULL, false},
        /* malformed */
        {"", NULL, false},
        {"2021", NULL, false},
        {"2021-1-01", NULL, false},
        {"21-01-01", NULL, false},
        {"20210101", NULL, false},
        {"2021-01-01T", NULL, false},
        {"2021-01-01T10", NULL, false},
        {"2021-01-01T10:", NULL, false},
        {"2021-01-01T1:00", NULL, false},
        {"2021-01-01T10:00:", NULL, false},
        {"2021-01-01T10:00:00.", NULL, false},
        {"2021-01-01T10:00:00.Z", NULL, false},
        {"2021-01-01T10:00:00ZZ", NULL, false},
        {"2021-01-01T10:00:00+", NULL, false},
        {"2021-01-01T10:00:00+1", NULL, false},
        {"2021-01-01T10:00:00+01:", NULL, false},
        {"2021-01-01T10:00:00+01:0", NULL, false},
        {"2021-01-01T10:00:00+010", NULL, false},
        {"2021-01-01T10:00:00+01000", NULL, false},
        {"2021-01-01T10:00:00 Z", NULL, false},
        {" 2021-01-01", NULL, false},
        {"2021-01-01 ", NULL, false},
        {"2021-01-01x", NULL, false},
        {"2021-01-01Z", NULL, false},
        {"+2021-01-01", NULL, false},
        {"2021-01-01T10:00:00Zjunk", NULL, false},
        {"Tue, 10 Jun 2003 04:00:00 GMT", NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct iso_case *c = &cases[i];
        int64_t t = 12345;
        bool date_only = !c->date_only;
        int rc = timefmt_parse_iso8601(c->in, strlen(c->in), &t, &date_only);
        if (!c->want) {
            if (rc != ERR_PARSE)
                fail_msg("accepted %s", c->in);
            assert_int_equal(t, 12345); /* untouched on failure */
            continue;
        }
        if (rc != 0)
            fail_msg("rejected %s", c->in);
        char out[TIMEFMT_ISO_LEN];
        timefmt_iso8601(t, out);
        if (strcmp(out, c->want) != 0)
            fail_msg("%s gave %s, want %s", c->in, out, c->want);
        assert_int_equal(date_only, c->date_only);
        /* date_only may be NULL */
        int64_t t2;
        assert_int_equal(timefmt_parse_iso8601(c->in, strlen(c->in), &t2, NULL), 0);
        assert_int_equal(t2, t);
    }
}

static void iso8601_never_reads_past_its_length(void **state)
{
    (void)state;
    /* A valid prefix followed by bytes outside n must be judged on n alone. */
    const char *s = "2023-06-02T10:07:25Zgarbage";
    int64_t t;
    assert_int_equal(timefmt_parse_iso8601(s, 20, &t, NULL), 0);
    assert_int_equal(t, 1685700445);
    assert_int_equal(timefmt_parse_iso8601(s, 10, &t, NULL), 0);
    assert_int_equal(timefmt_parse_iso8601(s, 19, &t, NULL), 0);
    assert_int_equal(timefmt_parse_iso8601(s, 21, &t, NULL), ERR_PARSE);
    /* every prefix in its own exactly-sized heap block: ASan catches over-reads */
    for (size_t n = 0; n <= strlen(s); n++) {
        char *p = malloc(n ? n : 1);
        assert_non_null(p);
        memcpy(p, s, n);
        (void)timefmt_parse_iso8601(p, n, &t, NULL);
        (void)timefmt_parse_rfc822(p, n, &t);
        (void)timefmt_parse_any(p, n, &t);
        free(p);
    }
    /* embedded NUL */
    assert_int_equal(timefmt_parse_iso8601("2023-06-02\0T10:00", 16, &t, NULL), ERR_PARSE);
    assert_int_equal(timefmt_parse_iso8601(NULL, 0, &t, NULL), ERR_PARSE);
}

struct rfc_case {
    const char *in;
    const char *want; /* NULL: rejected */
};

static void rfc822_parses_the_variants_feeds_write(void **state)
{
    (void)state;
    static const struct rfc_case cases[] = {
        {"Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 +0000", "2003-06-10T04:00:00Z"},
        {"10 Jun 2003 04:00 +0200", "2003-06-10T02:00:00Z"},
        {"Tue, 10 June 2003 04:00:00 EST", "2003-06-10T09:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 EDT", "2003-06-10T08:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 PST", "2003-06-10T12:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 pdt", "2003-06-10T11:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 CET", "2003-06-10T03:00:00Z"},
        {"Tue, 10 Jun 03 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 49 04:00:00 GMT", "2049-06-10T04:00:00Z"},
        {"Thu, 10 Jun 50 04:00:00 GMT", "1950-06-10T04:00:00Z"},
        {"Tue, 10 Jun 99 04:00:00 GMT", "1999-06-10T04:00:00Z"},
        {"Tue, 10 Jun 103 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"TUE, 10 JUN 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"tue, 10 jun 2003 04:00:00 gmt", "2003-06-10T04:00:00Z"},
        {"Tuesday, 10 June 2003 04:00:00 UTC", "2003-06-10T04:00:00Z"},
        {"Tues, 10 Jun 2003 04:00:00 UT", "2003-06-10T04:00:00Z"},
        {"Tue,10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"  Tue,   10  Jun   2003   04:00:00   GMT  ", "2003-06-10T04:00:00Z"},
        {"Tue,\t10\tJun\t2003\r\n 04:00:00\tGMT", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003 4:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"Tue, 1 Jun 2003 04:00:00 GMT", "2003-06-01T04:00:00Z"},
        {"Tue, 01 Jun 2003 04:00 GMT", "2003-06-01T04:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00.123 GMT", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 +02:00", "2003-06-10T02:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 -0530", "2003-06-10T09:30:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 GMT+0200", "2003-06-10T02:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 -0700 (PDT)", "2003-06-10T11:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00+0200", "2003-06-10T02:00:00Z"},
        {"Tue, 10 Sept 2003 04:00:00 GMT", "2003-09-10T04:00:00Z"},
        {"Tue, 10-Jun-03 04:00:00 GMT", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003", "2003-06-10T00:00:00Z"},
        /* military letters and unknown names count as UTC (RFC 2822 §4.3) */
        {"Tue, 10 Jun 2003 04:00:00 A", "2003-06-10T04:00:00Z"},
        {"Tue, 10 Jun 2003 04:00:00 XYZ", "2003-06-10T04:00:00Z"},
        /* crossing midnight and a leap day */
        {"Thu, 01 Mar 2024 00:30:00 +0100", "2024-02-29T23:30:00Z"},
        {"Fri, 31 Dec 1999 23:00:00 -0200", "2000-01-01T01:00:00Z"},
        {"29 Feb 2000 12:00:00 GMT", "2000-02-29T12:00:00Z"},
        /* impossible or malformed */
        {"Tue, 30 Feb 2021 04:00:00 GMT", NULL},
        {"Tue, 29 Feb 1900 04:00:00 GMT", NULL},
        {"Tue, 29 Feb 2021 04:00:00 GMT", NULL},
        {"Tue, 31 Apr 2021 04:00:00 GMT", NULL},
        {"Tue, 00 Jun 2003 04:00:00 GMT", NULL},
        {"Tue, 10 Jun 2003 25:00:00 GMT", NULL},
        {"Tue, 10 Jun 2003 04:61:00 GMT", NULL},
        {"Tue, 10 Jun 2003 04:00:61 GMT", NULL},
        {"Tue, 10 Foo 2003 04:00:00 GMT", NULL},
        {"Tue, 10 Ju 2003 04:00:00 GMT", NULL},
        {"Tue, 10 Junx 2003 04:00:00 GMT", NULL},
        {"Blah, 10 Jun 2003 04:00:00 GMT", NULL},
        {"Tue, 10 Jun 3 04:00:00 GMT", NULL},
        {"Tue, 10 Jun 20033 04:00:00 GMT", NULL},
        {"Tue, 100 Jun 2003 04:00:00 GMT", NULL},
        {"Tue, 10 Jun 2003 04 GMT", NULL},
        {"Tue, 10 Jun 2003 04:0 GMT", NULL},
        {"Tue, 10 Jun 2003 04:00:00 +2", NULL},
        {"Tue, 10 Jun 2003 04:00:00 +2500", NULL},
        {"Tue, 10 Jun 2003 04:00:00 GMT junk", NULL},
        {"Tue, 10 Jun 2003 04:00:00 -0700 (PDT", NULL},
        {"Tue, 10 Jun 2003 04:00:00 GMT!", NULL},
        {"Tue, 10 Jun 0999 04:00:00 GMT", NULL},
        {"Tue, 10 Jun 2003 04:00:005 GMT", NULL},
        {"", NULL},
        {"Tue", NULL},
        {"Tue,", NULL},
        {"2003-06-10T04:00:00Z", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct rfc_case *c = &cases[i];
        int64_t t = 12345;
        int rc = timefmt_parse_rfc822(c->in, strlen(c->in), &t);
        if (!c->want) {
            if (rc != ERR_PARSE)
                fail_msg("accepted %s", c->in);
            continue;
        }
        if (rc != 0)
            fail_msg("rejected %s", c->in);
        char out[TIMEFMT_ISO_LEN];
        timefmt_iso8601(t, out);
        if (strcmp(out, c->want) != 0)
            fail_msg("%s gave %s, want %s", c->in, out, c->want);
    }
}

static void parse_any_accepts_both_forms_with_blanks_around(void **state)
{
    (void)state;
    int64_t t;
    const char *a = "  2003-06-10T04:00:00Z \n";
    assert_int_equal(timefmt_parse_any(a, strlen(a), &t), 0);
    assert_int_equal(t, 1055217600);
    const char *b = "Tue, 10 Jun 2003 04:00:00 GMT";
    assert_int_equal(timefmt_parse_any(b, strlen(b), &t), 0);
    assert_int_equal(t, 1055217600);
    const char *c = "\t10 Jun 2003 06:00 +0200 ";
    assert_int_equal(timefmt_parse_any(c, strlen(c), &t), 0);
    assert_int_equal(t, 1055217600);
    assert_int_equal(timefmt_parse_any("yesterday", 9, &t), ERR_PARSE);
    assert_int_equal(timefmt_parse_any("   ", 3, &t), ERR_PARSE);
    assert_int_equal(timefmt_parse_any(NULL, 0, &t), ERR_PARSE);
}

static void format_of_parse_round_trips(void **state)
{
    (void)state;
    /* Every minute-aligned and some odd instants over a span of centuries:
     * parse(format(t)) == t, and format(parse(x)) == x. */
    for (int64_t t = TIMEFMT_MIN; t <= TIMEFMT_MAX - 7777777; t += 7777777 * 13 + 17) {
        char out[TIMEFMT_ISO_LEN];
        timefmt_iso8601(t, out);
        int64_t back;
        bool date_only = true;
        assert_int_equal(timefmt_parse_iso8601(out, strlen(out), &back, &date_only), 0);
        assert_int_equal(back, t);
        assert_false(date_only);
        char again[TIMEFMT_ISO_LEN];
        timefmt_iso8601(back, again);
        assert_string_equal(again, out);
        char d[11];
        timefmt_date(t, d);
        assert_int_equal(timefmt_parse_iso8601(d, 10, &back, &date_only), 0);
        assert_true(date_only);
        assert_int_equal(back, timefmt_day(t) * 86400);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formatting_writes_known_instants),
        cmocka_unit_test(civil_arithmetic_agrees_with_a_day_counter),
        cmocka_unit_test(iso8601_parses_the_api_and_import_forms),
        cmocka_unit_test(iso8601_never_reads_past_its_length),
        cmocka_unit_test(rfc822_parses_the_variants_feeds_write),
        cmocka_unit_test(parse_any_accepts_both_forms_with_blanks_around),
        cmocka_unit_test(format_of_parse_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
