/* The NewsAPI v2 interface: routes a parsed HTTP request to its endpoint,
 * checks the key, validates parameters in API.md §5's order, asks the index
 * and renders the answer or the error envelope. */
#ifndef NEWSD_API_API_H
#define NEWSD_API_API_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/auth.h"
#include "http/http.h"
#include "util/netpolicy.h"
#include "index/index.h"
#include "store/store.h"
#include "util/err.h"

struct api_config {
    int64_t live_window_seconds; /* top-headlines window (default 48 h) */
    int64_t result_window;       /* page*pageSize cap when the plan sets none; 0 = none */
    int64_t fixed_now;           /* tests: a fixed clock (unix seconds); 0 = real time */
    bool metrics_elsewhere;      /* /metrics has a listener of its own: 404 on this one */
    int64_t query_timeout_ms;    /* time budget of one search (503 past it); 0 = none */
    /* /metrics answers only clients in these networks (NULL or empty list:
     * anyone); borrowed. */
    const struct netpolicy *metrics_allow;
    /* Where outgoing requests may go ([outbound]): a webhook URL naming an
     * address it refuses is refused when the alert is saved; borrowed. */
    const struct netpolicy *outbound;
    int64_t test_search_delay_ms; /* tests: every search first sleeps this long (a
                                   * slow search on demand, for queueing tests) */
    /* Live streams (/v2/everything/stream, push/live.h); 0: the defaults. */
    int64_t stream_keepalive_ms;    /* a comment after this long without an article (15 s) */
    int64_t stream_replay_window_s; /* oldest Last-Event-ID replayed (24 h) */
    size_t stream_buffer_bytes;     /* unsent bytes per stream before its client is
                                     * cut off as too slow (LIMIT_STREAM_BUFFER_BYTES) */
};

struct api;

/* Borrowed: store, index and auth must outlive the api. */
int api_new(struct api **out, struct store *s, struct index *idx, struct auth *auth,
            const struct api_config *cfg, struct err *err);
void api_free(struct api *api);

/* Current time as the api sees it (fixed_now when set). */
int64_t api_now(const struct api *api);

/* http_config.body_limit of newsd: POST /v2/alerts reads a JSON body of
 * up to LIMIT_ALERT_BODY_BYTES; no other request has one. ctx: the api. */
size_t api_body_limit(const char *method, const char *path, void *ctx);

/* The matcher of a stored alert query (alert_record.query), validated as
 * when it was saved (ERR_INVALID when it no longer is: a source gone from
 * the catalogue). For the delivery worker (push/webhook.h). */
struct index_matcher;
int api_alert_matcher(struct api *api, const char *query_json, struct index_matcher **out,
                      struct err *err);

/* Add an alert for key_id from a POST /v2/alerts body (body[0..len)),
 * validated as the endpoint validates it (`newsd alerts add`); max_per_key
 * 0: no limit. 0 with *id_out (may be NULL); ERR_INVALID with the message
 * the endpoint would answer; ERR_NOTFOUND without such a key; or the
 * store's failure. The api may be one without index and auth. */
int api_alert_add(struct api *api, int64_t key_id, int64_t max_per_key, const char *body,
                  size_t len, int64_t *id_out, struct err *err);

/* The http_handler of newsd; ctx is the struct api. */
void api_handle(const struct http_request *req, struct http_response *resp, void *ctx);

#endif
