/* bench_counts: coverage over time and facets (issue 26), the issue's
 * shapes, on a store loaded by `newsd import` (bench/run.sh):
 *   daily-word    daily counts over the whole two years, one-word queries
 *   daily-common  the same for very common words
 *   hourly-month  hourly counts over a month (common and rarer words)
 *   facets5       five facets (source, domain, language, country,
 *                 category) over common words' matches
 * (each shape several queries: shapes[]).
 * In process, through index.h as the endpoint calls it (index_counts
 * twice, for count and total; then index_facets), on the engine with its count cache
 * off and on FTS5 (GROUP BY over the same MATCH) in the same run; with
 * --url, the same requests over HTTP against a running server
 * (/v2/everything/counts), named by --http-name. Prints
 *   agg ENGINE SHAPE MICROSECONDS TOTAL PASS
 * lines (TOTAL: the response's totalResults; pass 0: the shape's first
 * run in this process) and stat lines
 * (the facet columns' first build). Figures only: nothing is asserted.
 *
 *   bench_counts --store DIR [--reps R] [--no-inprocess] [--no-fts5]
 *                [--url URL --key KEY [--http-name NAME]] */
#include "common.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/interval.h"
#include "index/index.h"
#include "store/store.h"
#include "text/text.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/tzif.h"

#include "util/banned.h"

struct shape {
    const char *name, *params; /* the /v2/everything/counts query string */
    enum api_interval iv;
    const char *from, *to; /* the window, as the params say */
    bool facets;
};

/* Several queries a shape, so that a shape's p95 is over words of
 * different frequencies, not the repeats of one word: a one-word query of
 * the mix's rarer words, very common words, and the common words over a
 * month by the hour. The facet shapes come last (the first facet run
 * builds the facet columns: main() times it). */
#define WHOLE "&from=2023-07-01&to=2025-06-30&interval=day"
#define WHOLE_FROM "2023-07-01T00:00:00Z"
#define WHOLE_TO "2025-06-30T23:59:59Z"
#define MONTH "&from=2025-03-01&to=2025-03-31&interval=hour"
#define MONTH_FROM "2025-03-01T00:00:00Z"
#define MONTH_TO "2025-03-31T23:59:59Z"
#define FACETS                                                                                     \
    "&from=2023-07-01&to=2025-06-30&interval=month"                                                \
    "&facets=source,domain,language,country,category"
static const struct shape shapes[] = {
    {"daily-word", "q=rainfall" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-word", "q=cricket" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-word", "q=vaccine" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-word", "q=football" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-common", "q=coronavirus" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-common", "q=people" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-common", "q=government" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-common", "q=market" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"daily-common", "q=police" WHOLE, API_INTERVAL_DAY, WHOLE_FROM, WHOLE_TO, false},
    {"hourly-month", "q=people" MONTH, API_INTERVAL_HOUR, MONTH_FROM, MONTH_TO, false},
    {"hourly-month", "q=market" MONTH, API_INTERVAL_HOUR, MONTH_FROM, MONTH_TO, false},
    {"hourly-month", "q=rainfall" MONTH, API_INTERVAL_HOUR, MONTH_FROM, MONTH_TO, false},
    {"facets5", "q=government" FACETS, API_INTERVAL_MONTH, WHOLE_FROM, WHOLE_TO, true},
    {"facets5", "q=people" FACETS, API_INTERVAL_MONTH, WHOLE_FROM, WHOLE_TO, true},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])
#define FACETS5 0x1f

static int64_t iso(const char *s)
{
    int64_t t = 0;
    timefmt_parse_iso8601(s, strlen(s), &t, NULL);
    return t;
}

/* One shape in process: the endpoint's index calls. */
static int run_inprocess(struct index *idx, const struct shape *sh, uint64_t *total)
{
    struct arena a;
    struct index_request req;
    struct err err;
    static int64_t bounds[LIMIT_COUNT_BUCKETS + 1];
    static uint64_t counts[LIMIT_COUNT_BUCKETS], totals[LIMIT_COUNT_BUCKETS];
    struct tzif *z = calloc(1, sizeof *z);
    size_t nb;
    int rc = -1;

    arena_init(&a, 0);
    err_clear(&err);
    /* only q of the params: the window is the shape's */
    const char *amp = strchr(sh->params, '&');
    char q[64];
    snprintf(q, sizeof q, "%.*s", (int)(amp - sh->params), sh->params);
    if (z == NULL || (rc = bench_request_build(&a, q, &req, &err)) < 0)
        goto out;
    req.from = iso(sh->from);
    req.to = iso(sh->to);
    req.limit = 0;
    if (!api_interval_bounds(sh->iv, z, req.from, req.to, LIMIT_COUNT_BUCKETS, bounds, &nb)) {
        rc = -1;
        goto out;
    }
    rc = index_counts(idx, &a, &req, bounds, nb, counts, &err);
    struct index_request scope = req;
    scope.q = NULL;
    if (rc == 0)
        rc = index_counts(idx, &a, &scope, bounds, nb, totals, &err);
    if (rc == 0 && sh->facets) {
        struct index_facet_top top[INDEX_FACET_N];
        rc = index_facets(idx, &a, &req, FACETS5, 10, top, &err);
    }
    *total = 0; /* totalResults */
    for (size_t i = 0; rc == 0 && i < nb; i++)
        *total += counts[i];
    if (rc < 0)
        fprintf(stderr, "bench_counts: %s: %s\n", sh->name, err.msg);
out:
    free(z);
    arena_release(&a);
    return rc;
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    buf_append(b, p, size * n);
    return size * n;
}

static int run_http(CURL *c, const char *url, const struct shape *sh, uint64_t *total)
{
    char full[1024];
    struct buf body;
    long status = 0;
    buf_init(&body, 0);
    snprintf(full, sizeof full, "%s/v2/everything/counts?%s", url, sh->params);
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    int rc = curl_easy_perform(c) == CURLE_OK ? 0 : -1;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    buf_putc(&body, '\0');
    const char *t = body.data ? strstr(body.data, "\"totalResults\":") : NULL;
    if (rc < 0 || status != 200 || t == NULL) {
        fprintf(stderr, "bench_counts: %s over HTTP: status %ld\n", sh->name, status);
        rc = -1;
    } else {
        *total = strtoull(t + 15, NULL, 10);
    }
    buf_release(&body);
    return rc;
}

static void pass_over(const char *engine, int reps, struct index *idx, CURL *c, const char *url)
{
    for (int pass = 0; pass < reps; pass++) {
        for (size_t i = 0; i < N_SHAPES; i++) {
            uint64_t total = 0;
            double t0 = bench_now();
            int rc =
                idx ? run_inprocess(idx, &shapes[i], &total) : run_http(c, url, &shapes[i], &total);
            double us = (bench_now() - t0) * 1e6;
            if (rc < 0)
                printf("err\t%s\t%s\tfailed\n", engine, shapes[i].name);
            else
                printf("agg\t%s\t%s\t%.1f\t%llu\t%d\n", engine, shapes[i].name, us,
                       (unsigned long long)total, pass);
            fflush(stdout);
        }
    }
}

static int open_kind(struct store *s, const char *kind, struct index **out)
{
    struct index_options o = {.kind = kind, .engine = {.no_count_cache = true}};
    struct err err;
    err_clear(&err);
    if (index_open_with(out, s, &o, &err) < 0) {
        fprintf(stderr, "bench_counts: %s: %s\n", kind, err.msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *store_dir = NULL, *url = NULL, *key = NULL, *http_name = "counts-http";
    int reps = 5;
    bool inprocess = true, fts5 = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--store") && i + 1 < argc)
            store_dir = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--url") && i + 1 < argc)
            url = argv[++i];
        else if (!strcmp(argv[i], "--key") && i + 1 < argc)
            key = argv[++i];
        else if (!strcmp(argv[i], "--http-name") && i + 1 < argc)
            http_name = argv[++i];
        else if (!strcmp(argv[i], "--no-inprocess"))
            inprocess = false;
        else if (!strcmp(argv[i], "--no-fts5"))
            fts5 = false;
        else {
            fprintf(stderr,
                    "usage: bench_counts --store DIR [--reps R] [--no-inprocess] [--no-fts5]\n"
                    "                    [--url URL --key KEY [--http-name NAME]]\n");
            return 2;
        }
    }
    if (reps < 2)
        reps = 2;
    int rc = 0;
    if (url) {
        CURL *c = curl_easy_init();
        char header[256];
        snprintf(header, sizeof header, "X-Api-Key: %s", key ? key : "");
        struct curl_slist *h = curl_slist_append(NULL, header);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
        pass_over(http_name, reps, NULL, c, url);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
    }
    if (inprocess && store_dir) {
        struct store *s = NULL;
        struct index *eng = NULL, *fts = NULL;
        struct err err;
        err_clear(&err);
        if (store_open(&s, store_dir, &err) < 0) {
            fprintf(stderr, "bench_counts: %s: %s\n", store_dir, err.msg);
            return 1;
        }
        if (open_kind(s, INDEX_KIND_ENGINE, &eng) == 0) {
            /* the passes measure the index its merges leave, as over HTTP
             * (bench_http --wait-settled): no merge running, the segment
             * count still for a second */
            struct index_stats st;
            uint64_t segs = UINT64_MAX;
            for (double still = bench_now(), end = still + 600; bench_now() < end;) {
                index_stats(eng, &st);
                if (st.merging > 0 || st.segments != segs) {
                    segs = st.segments;
                    still = bench_now();
                } else if (bench_now() - still >= 1.0) {
                    break;
                }
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            printf("stat\tcounts-engine\tsegments\t%llu\n", (unsigned long long)segs);
            printf("mem\tcounts-engine\tbefore-facet-columns\t%ld\n", bench_status_kb(0, "VmRSS"));
            printf("mem\tcounts-engine\tbefore-facet-columns-anon\t%ld\n",
                   bench_status_kb(0, "RssAnon"));
            double t0 = bench_now();
            uint64_t total;
            run_inprocess(eng, &shapes[N_SHAPES - 1], &total); /* the facet columns built */
            printf("stat\tcounts-engine\tfacet_columns_first_build_seconds\t%.3f\n",
                   bench_now() - t0);
            printf("mem\tcounts-engine\tafter-facet-columns\t%ld\n", bench_status_kb(0, "VmRSS"));
            printf("mem\tcounts-engine\tafter-facet-columns-anon\t%ld\n",
                   bench_status_kb(0, "RssAnon"));
            pass_over("counts-engine", reps, eng, NULL, NULL);
            index_close(eng);
        } else {
            rc = 1;
        }
        if (!fts5) {
            /* the engine alone (its memory at a size FTS5 takes long at) */
        } else if (open_kind(s, INDEX_KIND_FTS5, &fts) == 0) {
            pass_over("counts-fts5", reps, fts, NULL, NULL);
            index_close(fts);
        } else {
            rc = 1;
        }
        store_close(s);
        text_thread_release();
    }
    return rc;
}
