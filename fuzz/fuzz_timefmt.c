/* libFuzzer harness: util/timefmt parsers. Invariants: whatever a parser
 * accepts lies in the supported range, and formatting it then parsing the
 * text gives the same instant and the same text again. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/timefmt.h"

static void check_round_trip(int64_t t)
{
    if (t < TIMEFMT_MIN || t > TIMEFMT_MAX)
        abort();
    char out[TIMEFMT_ISO_LEN];
    timefmt_iso8601(t, out);
    if (strlen(out) != TIMEFMT_ISO_LEN - 1)
        abort();
    int64_t back;
    bool date_only = true;
    if (timefmt_parse_iso8601(out, strlen(out), &back, &date_only) != 0 || back != t || date_only)
        abort();
    char again[TIMEFMT_ISO_LEN];
    timefmt_iso8601(back, again);
    if (memcmp(out, again, sizeof out) != 0)
        abort();
    char d[11];
    timefmt_date(t, d);
    if (timefmt_parse_iso8601(d, 10, &back, &date_only) != 0 || !date_only ||
        back != timefmt_day(t) * 86400)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exactly-sized copy so reads past size are caught. */
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    int64_t t;
    bool date_only;
    if (timefmt_parse_iso8601(s, size, &t, &date_only) == 0) {
        check_round_trip(t);
        if (date_only && t % 86400 != 0)
            abort();
        int64_t t2;
        if (timefmt_parse_any(s, size, &t2) != 0 || t2 != t)
            abort();
    }
    if (timefmt_parse_rfc822(s, size, &t) == 0)
        check_round_trip(t);
    if (timefmt_parse_any(s, size, &t) == 0)
        check_round_trip(t);
    free(s);
    return 0;
}
