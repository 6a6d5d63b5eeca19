/* Calendar buckets of /v2/everything/counts: the start of every hour,
 * day, week (Monday) or month of a time zone's wall clock between two UTC
 * seconds. Pure functions: fuzzed by fuzz/fuzz_counts.c. */
#ifndef NEWSD_API_INTERVAL_H
#define NEWSD_API_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/tzif.h"

enum api_interval {
    API_INTERVAL_HOUR,
    API_INTERVAL_DAY,
    API_INTERVAL_WEEK, /* ISO weeks: Monday 00:00 */
    API_INTERVAL_MONTH,
};

/* "hour", "day", "week", "month" (ASCII case ignored); false otherwise. */
bool api_interval_parse(const char *s, size_t len, enum api_interval *out);
const char *api_interval_name(enum api_interval iv);

/* The buckets covering [from, to] (UTC seconds, from <= to, both within
 * timefmt's years 1000..9999): bounds[0] <= from is the start of the
 * bucket holding from, bounds[i + 1] the start of the next one, the last
 * bound the first one after to; bucket i is [bounds[i], bounds[i + 1]).
 * Hours are 3600 s from the wall clock's hour (a repeated hour is two
 * buckets); days, weeks and months start at the wall clock's midnight
 * (tzif_to_utc). *n gets the buckets. false when more than max buckets
 * would be needed (bounds holds max + 1 entries). */
bool api_interval_bounds(enum api_interval iv, const struct tzif *z, int64_t from, int64_t to,
                         size_t max, int64_t *bounds, size_t *n);

#endif
