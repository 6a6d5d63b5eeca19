/* Process-wide metrics, exposed at /metrics in the Prometheus text format
 * (version 0.0.4).
 *
 * Invariants: every value is a C11 atomic, so counters are exact under any
 * number of concurrent writers without a lock; only registration takes a
 * lock. A registered metric lives until the process exits, so a handle never
 * dangles and may be kept in a static. The registry depends on libc alone
 * (no api/ state): any module may feed it; only metrics_respond and
 * api_metrics_handle need the api.
 *
 * Built in: requests by endpoint and status, a latency histogram per
 * endpoint (api_handle records both), and newsd_articles_stored (read from
 * the store at scrape time). Registered at start with value 0 until their
 * module feeds them ("placeholders"):
 *   newsd_feeds_polled_total   counter  feed fetches attempted by the crawler
 *   newsd_feeds_failed_total   counter  of those, the ones that failed
 *   newsd_feeds_failing        gauge    feeds whose last poll failed
 *   newsd_ingest_lag_seconds   gauge    now − publishedAt of the newest article stored
 * e.g. `metrics_add(metrics_counter(METRICS_FEEDS_POLLED, NULL), 1)`. */
#ifndef NEWSD_API_METRICS_H
#define NEWSD_API_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "util/buf.h"

#define METRICS_MAX 64       /* registered counters and gauges */
#define METRICS_NAME_MAX 64  /* bytes of a name, NUL excluded */
#define METRICS_HELP_MAX 160 /* bytes of a help text, NUL excluded; longer is cut */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define METRICS_FEEDS_POLLED "newsd_feeds_polled_total"
#define METRICS_FEEDS_FAILED "newsd_feeds_failed_total"
#define METRICS_FEEDS_FAILING "newsd_feeds_failing"
#define METRICS_INGEST_LAG "newsd_ingest_lag_seconds"

struct metric; /* a registered counter or gauge */

/* The counter (monotonic, starts at 0) named name, registered with help on
 * first use; later calls return the same handle and ignore help (which may
 * then be NULL). NULL when the name is not a Prometheus name
 * ([a-zA-Z_:][a-zA-Z0-9_:]*, at most METRICS_NAME_MAX bytes), is taken by a
 * gauge or a built-in metric, or the registry is full. Thread-safe. */
struct metric *metrics_counter(const char *name, const char *help);

/* The gauge (a signed value set at will) named name; as metrics_counter. */
struct metric *metrics_gauge(const char *name, const char *help);

/* Counter += n. No-op on NULL or on a gauge. */
void metrics_add(struct metric *m, uint64_t n);

/* Gauge = v. No-op on NULL or on a counter. */
void metrics_set(struct metric *m, int64_t v);

/* The current value (a counter's as int64, saturating); 0 for NULL. */
int64_t metrics_value(const struct metric *m);

/* Endpoints that requests are counted by (the `endpoint` label). */
enum metrics_endpoint {
    METRICS_EP_EVERYTHING,
    METRICS_EP_TOP_HEADLINES,
    METRICS_EP_SOURCES,
    METRICS_EP_HEALTHZ,
    METRICS_EP_OPENAPI,
    METRICS_EP_METRICS,
    METRICS_EP_WEB,
    METRICS_EP_NONE, /* unknown path, or refused before routing (414, 431) */
    METRICS_EP_COUNT
};

/* Count one answered request and its latency. status outside the statuses
 * newsd sends is counted as status="other". Thread-safe, lock-free. */
void metrics_request_record(enum metrics_endpoint ep, int status, uint64_t micros);

/* Requests counted so far for (ep, status): tests and the renderer. */
uint64_t metrics_requests(enum metrics_endpoint ep, int status);

/* Append the whole exposition to b (sticky buf errors, checked by the
 * caller). articles_stored < 0 leaves newsd_articles_stored out (the store
 * could not be read). */
void metrics_render(struct buf *b, int64_t articles_stored);

/* Append the search index's figures (newsd_index_*). */
struct index_stats;
void metrics_render_index(struct buf *b, const struct index_stats *st);

/* Register the placeholders above (idempotent): a scrape shows them at 0
 * before their module first feeds them. */
void metrics_init(void);

/* The http_handler of a listener that serves only /metrics (serve
 * --metrics-listen); ctx is the struct api. Other paths: 404 routeNotFound,
 * other methods: 405. No key is asked for. */
void api_metrics_handle(const struct http_request *req, struct http_response *resp, void *ctx);

#endif
