/* The /metrics exposition and the series api/ owns (api/metrics.h).
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/ —
 * histogram buckets are cumulative and end with le="+Inf" == _count. */
#include "api/metrics.h"
#include "index/index.h"
#include "api/internal.h"
#include "util/clock.h"
#include "util/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/version.h"

#include "util/banned.h"

/* ---- requests and latency ------------------------------------------------- */

static const char *const endpoint_names[METRICS_EP_COUNT] = {
    [METRICS_EP_EVERYTHING] = "everything",
    [METRICS_EP_STREAM] = "stream",
    [METRICS_EP_TOP_HEADLINES] = "top-headlines",
    [METRICS_EP_SOURCES] = "sources",
    [METRICS_EP_HEALTHZ] = "healthz",
    [METRICS_EP_OPENAPI] = "openapi",
    [METRICS_EP_METRICS] = "metrics",
    [METRICS_EP_WEB] = "web",
    [METRICS_EP_ALERTS] = "alerts",
    [METRICS_EP_EXPORT] = "export",
    [METRICS_EP_STORIES] = "stories",
    [METRICS_EP_NONE] = "none",
};

/* The statuses newsd answers with; the last slot counts any other. */
static const int statuses[] = {200, 201, 204, 304, 400, 401, 403, 404,
                               405, 413, 414, 426, 429, 431, 500, 503};
#define N_STATUS (sizeof statuses / sizeof statuses[0] + 1)

/* Upper bounds of the latency buckets in microseconds, and as printed. */
static const uint64_t bucket_us[] = {500,    1000,   2500,   5000,    10000,   25000,   50000,
                                     100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
static const char *const bucket_le[] = {"0.0005", "0.001", "0.0025", "0.005", "0.01",
                                        "0.025",  "0.05",  "0.1",    "0.25",  "0.5",
                                        "1",      "2.5",   "5",      "10"};
#define N_BUCKET (sizeof bucket_us / sizeof bucket_us[0] + 1) /* + the +Inf bucket */

_Static_assert(sizeof bucket_us / sizeof bucket_us[0] == sizeof bucket_le / sizeof bucket_le[0],
               "one printed bound per bucket");

static _Atomic uint64_t requests[METRICS_EP_COUNT][N_STATUS];
static _Atomic uint64_t latency[METRICS_EP_COUNT][N_BUCKET]; /* per bucket, not cumulative */
static _Atomic uint64_t latency_sum_us[METRICS_EP_COUNT];
static _Atomic int64_t start_time;

static size_t status_slot(int status)
{
    for (size_t i = 0; i < N_STATUS - 1; i++)
        if (statuses[i] == status)
            return i;
    return N_STATUS - 1;
}

void api_metrics_request_record(enum metrics_endpoint ep, int status, uint64_t micros)
{
    if ((unsigned)ep >= METRICS_EP_COUNT)
        ep = METRICS_EP_NONE;
    atomic_fetch_add_explicit(&requests[ep][status_slot(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < N_BUCKET - 1 && micros > bucket_us[b])
        b++;
    atomic_fetch_add_explicit(&latency[ep][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&latency_sum_us[ep], micros, memory_order_relaxed);
}

uint64_t api_metrics_requests(enum metrics_endpoint ep, int status)
{
    if ((unsigned)ep >= METRICS_EP_COUNT)
        return 0;
    return atomic_load_explicit(&requests[ep][status_slot(status)], memory_order_relaxed);
}

/* ---- exposition ------------------------------------------------------------ */

static void render_requests(struct buf *b)
{
    metrics_family(b, "newsd_http_requests_total",
                   "HTTP requests answered, by endpoint and status.", "counter");
    for (size_t e = 0; e < METRICS_EP_COUNT; e++) {
        for (size_t s = 0; s < N_STATUS; s++) {
            uint64_t n = atomic_load_explicit(&requests[e][s], memory_order_relaxed);
            if (!n)
                continue;
            if (s < N_STATUS - 1)
                buf_printf(b, "newsd_http_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n",
                           endpoint_names[e], statuses[s], (unsigned long long)n);
            else
                buf_printf(b, "newsd_http_requests_total{endpoint=\"%s\",status=\"other\"} %llu\n",
                           endpoint_names[e], (unsigned long long)n);
        }
    }
}

static void render_latency(struct buf *b)
{
    static const char name[] = "newsd_http_request_duration_seconds";
    metrics_family(b, name, "Time from the parsed request to the built response, by endpoint.",
                   "histogram");
    for (size_t e = 0; e < METRICS_EP_COUNT; e++) {
        /* Buckets are read once and summed here, so le="+Inf" and _count
         * agree even while requests are being recorded. */
        uint64_t seen[N_BUCKET], cumulative = 0;
        for (size_t i = 0; i < N_BUCKET; i++) {
            seen[i] = atomic_load_explicit(&latency[e][i], memory_order_relaxed);
            cumulative += seen[i];
        }
        if (!cumulative)
            continue;
        cumulative = 0;
        for (size_t i = 0; i < N_BUCKET; i++) {
            cumulative += seen[i];
            buf_printf(b, "%s_bucket{endpoint=\"%s\",le=\"%s\"} %llu\n", name, endpoint_names[e],
                       i < N_BUCKET - 1 ? bucket_le[i] : "+Inf", (unsigned long long)cumulative);
        }
        uint64_t sum = atomic_load_explicit(&latency_sum_us[e], memory_order_relaxed);
        buf_printf(b, "%s_sum{endpoint=\"%s\"} %llu.%06llu\n", name, endpoint_names[e],
                   (unsigned long long)(sum / 1000000), (unsigned long long)(sum % 1000000));
        buf_printf(b, "%s_count{endpoint=\"%s\"} %llu\n", name, endpoint_names[e],
                   (unsigned long long)cumulative);
    }
}

void api_metrics_render(struct buf *b, int64_t articles_stored)
{
    render_requests(b);
    render_latency(b);
    if (articles_stored >= 0) {
        metrics_family(b, "newsd_articles_stored", "Articles in the store.", "gauge");
        buf_printf(b, "newsd_articles_stored %lld\n", (long long)articles_stored);
    }
    /* The build, as a label (Prometheus' build_info convention): always 1. */
    metrics_family(b, "newsd_build_info", "The newsd build serving: release and git commit.",
                   "gauge");
    buf_printf(b, "newsd_build_info{version=\"%s\",commit=\"%s\"} 1\n", version_release(),
               version_commit());
    int64_t started = atomic_load_explicit(&start_time, memory_order_relaxed);
    if (started > 0) {
        metrics_family(b, "newsd_process_start_time_seconds",
                       "Start time of the process (unix seconds).", "gauge");
        buf_printf(b, "newsd_process_start_time_seconds %lld\n", (long long)started);
    }
    metrics_render(b);
}

void api_metrics_render_index(struct buf *b, const struct index_stats *st)
{
    metrics_family(b, "newsd_index_ready",
                   "1 when the search index is open, 0 while it is being built.", "gauge");
    buf_printf(b, "newsd_index_ready %d\n", st->ready ? 1 : 0);
    if (!st->engine)
        return;
    metrics_family(b, "newsd_index_documents", "Live documents in the search index.", "gauge");
    buf_printf(b, "newsd_index_documents %llu\n", (unsigned long long)st->documents);
    metrics_family(b, "newsd_index_segments", "Segments the search index searches.", "gauge");
    buf_printf(b, "newsd_index_segments %llu\n", (unsigned long long)st->segments);
    metrics_family(b, "newsd_index_merges_running", "Segment merges running now.", "gauge");
    buf_printf(b, "newsd_index_merges_running %llu\n", (unsigned long long)st->merging);
    metrics_family(b, "newsd_index_file_bytes", "Bytes of the segment files mapped.", "gauge");
    buf_printf(b, "newsd_index_file_bytes %llu\n", (unsigned long long)st->file_bytes);
    metrics_family(b, "newsd_index_count_cache_hits_total",
                   "Segment match counts answered from the count cache.", "counter");
    buf_printf(b, "newsd_index_count_cache_hits_total %llu\n", (unsigned long long)st->cache_hits);
    metrics_family(b, "newsd_index_count_cache_misses_total",
                   "Segment match counts the count cache did not have.", "counter");
    buf_printf(b, "newsd_index_count_cache_misses_total %llu\n",
               (unsigned long long)st->cache_misses);
    metrics_family(b, "newsd_index_split_searches_total",
                   "Searches run over two threads (docs/engine.md).", "counter");
    buf_printf(b, "newsd_index_split_searches_total %llu\n",
               (unsigned long long)st->split_searches);
}

void api_metrics_render_replica(struct buf *b, const struct store_journal_status *rs)
{
    if (!rs->replica)
        return; /* an embedded store: the index reads it directly, nothing lags */
    metrics_family(b, "newsd_cluster_store_reachable",
                   "1 while this node's connection to PostgreSQL is up.", "gauge");
    buf_printf(b, "newsd_cluster_store_reachable %d\n", rs->store_reachable ? 1 : 0);
    metrics_family(b, "newsd_cluster_lag_changes",
                   "Article changes committed in PostgreSQL and not yet in this node's index.",
                   "gauge");
    buf_printf(b, "newsd_cluster_lag_changes %lld\n", (long long)rs->lag_seq);
    metrics_family(b, "newsd_cluster_lag_seconds",
                   "0 when the node was in step with PostgreSQL at its last look, else the "
                   "seconds since it last was.",
                   "gauge");
    buf_printf(b, "newsd_cluster_lag_seconds %.3f\n", rs->lag_seconds);
    metrics_family(b, "newsd_cluster_caught_up",
                   "1 once the node's index has held every committed change since it started.",
                   "gauge");
    buf_printf(b, "newsd_cluster_caught_up %d\n", rs->caught_up ? 1 : 0);
}

/* Names this file writes itself: a registered metric may not shadow them. */
static const char *const own_prefixes[] = {
    "newsd_http_request",
    "newsd_articles_stored",
    "newsd_process_start_time_seconds",
    "newsd_cluster_",
};

static void init_once(void)
{
    atomic_store(&start_time, (int64_t)time(NULL));
    for (size_t i = 0; i < sizeof own_prefixes / sizeof own_prefixes[0]; i++)
        metrics_reserve(own_prefixes[i]);
}

void api_metrics_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
}

/* ---- serving ---------------------------------------------------------------- */

/* Fill resp with the exposition; the store is asked for its article count. */
/* [server] metrics_allow_networks: /metrics only for clients of those
 * networks (none listed: for anyone). */
static bool client_allowed(const struct api *api, const struct http_request *req)
{
    const struct netpolicy *allow = api->cfg.metrics_allow;
    if (!allow || !allow->n_allow)
        return true;
    struct netpolicy_addr a;
    return req->client && netpolicy_addr_from_host(&a, req->client, strlen(req->client)) &&
           netpolicy_holds(allow, &a);
}

static void metrics_respond(struct api *api, struct http_response *resp, const char *request_id)
{
    int64_t articles = -1;
    struct err err;
    err_clear(&err);
    if (store_articles_count(api->store, &articles, &err) < 0)
        articles = -1; /* still worth answering: the rest is in memory */
    struct index_stats st;
    index_stats(api->index, &st);
    struct store_journal_status rs;
    index_replica_status(api->index, &rs);
    struct buf b;
    buf_init(&b, 0);
    api_metrics_render(&b, articles);
    api_metrics_render_index(&b, &st);
    api_metrics_render_replica(&b, &rs);
    if (buf_error(&b)) {
        buf_release(&b);
        api_error_respond(resp, API_ERR_UNEXPECTED, NULL, request_id);
        return;
    }
    free(resp->body);
    resp->body = buf_detach(&b, &resp->len);
    resp->status = 200;
    resp->content_type = METRICS_CONTENT_TYPE;
    http_response_add_header(resp, "Cache-Control", "no-store");
}

void api_metrics(struct api_call *c)
{
    if (!client_allowed(c->api, c->req)) {
        api_error_respond(c->resp, API_ERR_FORBIDDEN, NULL, c->req->request_id);
        return;
    }
    metrics_respond(c->api, c->resp, c->req->request_id);
}

void api_metrics_handle(const struct http_request *req, struct http_response *resp, void *ctx)
{
    int64_t t0_us = clock_mono_us();
    enum metrics_endpoint ep = METRICS_EP_NONE;
    size_t len = strlen(req->path);
    if (len > 1 && req->path[len - 1] == '/')
        len--;
    if (len != strlen("/metrics") || strncmp(req->path, "/metrics", len)) {
        api_error_respond(resp, API_ERR_ROUTE_NOT_FOUND, NULL, req->request_id);
        goto out;
    }
    ep = METRICS_EP_METRICS;
    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        http_response_add_header(resp, "Allow", "GET, HEAD, OPTIONS");
        api_error_respond(resp, API_ERR_METHOD_NOT_ALLOWED, NULL, req->request_id);
        goto out;
    }
    if (!client_allowed(ctx, req)) {
        api_error_respond(resp, API_ERR_FORBIDDEN, NULL, req->request_id);
        goto out;
    }
    metrics_respond(ctx, resp, req->request_id);
out:
    api_metrics_request_record(ep, resp->status, (uint64_t)(clock_mono_us() - t0_us));
}
