/* libFuzzer harness: what /v2/everything/counts and facets read that is
 * not a query string (issue 26). The first byte picks:
 *   0  a TZif file (util/tzif.h): a zone that parses has ascending
 *      transitions, offsets under 36 h, and tzif_to_utc lands within a
 *      day and a half of the wall time;
 *   1  calendar buckets (api/interval.h) of an interval, a window and a
 *      zone (a TZif image, else an offset): ascending, the first at or
 *      before from, the last after to, every other one at or before to;
 *   2  an article's JSON read back for its author (article/json_author.h)
 *      (the engine's author facet column reads its document store).
 * Whatever the bytes: no crash, no read outside them, no leak. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/interval.h"
#include "article/json_author.h"
#include "check.h"
#include "util/buf.h"
#include "util/timefmt.h"
#include "util/tzif.h"

static int64_t i64_of(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static void check_zone(const struct tzif *z)
{
    for (size_t i = 1; i < z->n; i++)
        CHECK(z->at[i - 1] < z->at[i]);
    static const int64_t probes[] = {-4000000000LL, 0, 1636264800, 1648342800, 4000000000LL};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int32_t off = tzif_offset(z, probes[i]);
        CHECK(off > -36 * 3600 && off < 36 * 3600);
        int64_t u = tzif_to_utc(z, probes[i]);
        CHECK(u - probes[i] < 3 * 86400 && probes[i] - u < 3 * 86400);
    }
}

static void zone_of(const uint8_t *p, size_t n, struct tzif *z)
{
    if (tzif_parse(p, n, z) == 0)
        return;
    if (!tzif_parse_offset((const char *)p, n, &z->fixed))
        z->fixed = 0;
    z->n = 0;
    z->before = z->fixed;
}

static void buckets(const uint8_t *p, size_t n, struct tzif *z)
{
    if (n < 17)
        return;
    enum api_interval iv = (enum api_interval)(p[0] % 4);
    int64_t span = TIMEFMT_MAX - TIMEFMT_MIN;
    int64_t from = TIMEFMT_MIN + (int64_t)((uint64_t)i64_of(p + 1) % (uint64_t)span);
    int64_t to = from + (int64_t)((uint64_t)i64_of(p + 9) % (uint64_t)(400LL * 86400));
    if (to > TIMEFMT_MAX - 40 * 86400)
        return;
    zone_of(p + 17, n - 17, z);
    size_t max = 2500, nb;
    int64_t *b = malloc((max + 1) * sizeof *b);
    if (b == NULL)
        return;
    if (api_interval_bounds(iv, z, from, to, max, b, &nb)) {
        CHECK(nb >= 1 && nb <= max);
        CHECK(b[0] <= from && b[nb] > to);
        for (size_t i = 1; i <= nb; i++)
            CHECK(b[i - 1] < b[i]);
        CHECK(b[nb - 1] <= to);
    }
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* an exactly-sized copy so reads past the end are caught */
    uint8_t *p = malloc(size - 1 ? size - 1 : 1);
    struct tzif *z = malloc(sizeof *z);
    if (p == NULL || z == NULL) {
        free(p);
        free(z);
        return 0;
    }
    memcpy(p, data + 1, size - 1);
    switch (data[0] % 3) {
    case 0:
        if (tzif_parse(p, size - 1, z) == 0)
            check_zone(z);
        break;
    case 1:
        buckets(p, size - 1, z);
        break;
    default: {
        struct buf b;
        buf_init(&b, 0);
        int rc = article_json_author((const char *)p, size - 1, &b);
        CHECK(rc == 0 || rc == 1 || rc < 0);
        CHECK(rc != 1 || b.len > 0);
        buf_release(&b);
        break;
    }
    }
    free(p);
    free(z);
    return 0;
}
