/* Calendar buckets (api/interval.h). */
#include "api/interval.h"
#include "util/ascii.h"
#include "util/timefmt.h"

#include <string.h>
#include <strings.h>

#include "util/banned.h"

static const char *const names[] = {"hour", "day", "week", "month"};

bool api_interval_parse(const char *s, size_t len, enum api_interval *out)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == len && !strncasecmp(s, names[i], len)) {
            *out = (enum api_interval)i;
            return true;
        }
    }
    return false;
}

const char *api_interval_name(enum api_interval iv)
{
    return names[iv];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Local day number of the first day of the bucket holding local day d, and
 * of the next bucket's. */
static int64_t bucket_day(enum api_interval iv, int64_t d)
{
    if (iv == API_INTERVAL_WEEK)
        return d - (d + 3 - floor_div(d + 3, 7) * 7); /* 1970-01-01 was a Thursday */
    if (iv == API_INTERVAL_MONTH) {
        int64_t y;
        unsigned m, dd;
        timefmt_civil_from_days(d, &y, &m, &dd);
        return timefmt_days_from_civil(y, m, 1);
    }
    return d;
}

static int64_t next_day(enum api_interval iv, int64_t d)
{
    if (iv == API_INTERVAL_WEEK)
        return d + 7;
    if (iv == API_INTERVAL_MONTH) {
        int64_t y;
        unsigned m, dd;
        timefmt_civil_from_days(d, &y, &m, &dd);
        return m == 12 ? timefmt_days_from_civil(y + 1, 1, 1)
                       : timefmt_days_from_civil(y, m + 1, 1);
    }
    return d + 1;
}

bool api_interval_bounds(enum api_interval iv, const struct tzif *z, int64_t from, int64_t to,
                         size_t max, int64_t *bounds, size_t *n)
{
    int64_t local = from + tzif_offset(z, from);
    size_t k = 0;
    *n = 0;
    if (iv == API_INTERVAL_HOUR) {
        /* the wall clock's hour holding from began this far before it */
        int64_t u = from - (local - floor_div(local, 3600) * 3600);
        for (;;) {
            if (k > max)
                return false;
            bounds[k++] = u;
            if (u > to)
                break;
            u += 3600;
        }
    } else {
        int64_t d = bucket_day(iv, floor_div(local, 86400));
        for (;;) {
            int64_t u = tzif_to_utc(z, d * 86400);
            if (k > 0 && u <= bounds[k - 1]) { /* cannot go back: skip a vanished start */
                d = next_day(iv, d);
                continue;
            }
            if (k == 0 && u > from)
                u = from; /* the first bucket holds from, whatever the zone did */
            if (k > max)
                return false;
            bounds[k++] = u;
            if (u > to)
                break;
            d = next_day(iv, d);
        }
    }
    *n = k - 1;
    return true;
}
