/* /metrics: the Prometheus text exposition (version 0.0.4) of the process.
 *
 * Written here: requests by endpoint and status and a latency histogram
 * per endpoint (api_handle records both; lock-free C11 atomics, exact under
 * any number of threads), newsd_articles_stored (read from the store at
 * scrape time), newsd_process_start_time_seconds and the search index's
 * figures (index_stats at scrape time). Then every metric of the process
 * registry (util/metrics.h), each counted by the module that owns its
 * event, e.g. the crawler's feed counts (ingest/feeds/feeds.h). */
#ifndef NEWSD_API_METRICS_H
#define NEWSD_API_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "util/buf.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Endpoints that requests are counted by (the `endpoint` label). */
enum metrics_endpoint {
    METRICS_EP_EVERYTHING,
    METRICS_EP_STREAM,
    METRICS_EP_TOP_HEADLINES,
    METRICS_EP_SOURCES,
    METRICS_EP_HEALTHZ,
    METRICS_EP_OPENAPI,
    METRICS_EP_METRICS,
    METRICS_EP_WEB,
    METRICS_EP_ALERTS,
    METRICS_EP_EXPORT,
    METRICS_EP_STORIES, /* /v2/stories and /v2/stories/{id} (issue 25) */
    METRICS_EP_NONE,    /* unknown path, or refused before routing (414, 431) */
    METRICS_EP_COUNT
};

/* Count one answered request and its latency. status outside the statuses
 * newsd sends is counted as status="other". Thread-safe, lock-free. */
void api_metrics_request_record(enum metrics_endpoint ep, int status, uint64_t micros);

/* Requests counted so far for (ep, status): tests and the renderer. */
uint64_t api_metrics_requests(enum metrics_endpoint ep, int status);

/* Append the whole exposition but the index's figures to b (sticky buf
 * errors, checked by the caller). articles_stored < 0 leaves
 * newsd_articles_stored out (the store could not be read). */
void api_metrics_render(struct buf *b, int64_t articles_stored);

/* Append the search index's figures (newsd_index_*). */
struct index_stats;
void api_metrics_render_index(struct buf *b, const struct index_stats *st);

/* A cluster node's replication gauges (newsd_cluster_*): reachability of
 * PostgreSQL and how far the local index is behind it; nothing for an
 * embedded store. */
struct store_journal_status;
void api_metrics_render_replica(struct buf *b, const struct store_journal_status *rs);

/* Note the start time and keep the names written here out of the registry
 * (idempotent). api_new calls it. */
void api_metrics_init(void);

/* The http_handler of a listener that serves only /metrics (serve
 * --metrics-listen); ctx is the struct api. Other paths: 404 routeNotFound,
 * other methods: 405. No key is asked for. */
void api_metrics_handle(const struct http_request *req, struct http_response *resp, void *ctx);

#endif
