/* The webhook alerts' delivery worker (docs/api.md "Webhook alerts"): one
 * thread started by `newsd serve` that, for the alerts this node leases
 * (store.h store_alerts_lease), follows the article log from each alert's
 * cursor, matches every new article against the alerts' saved searches
 * (push/percolator.h), and POSTs the matches to each alert's webhook on
 * sender threads of its own, in turns between keys and receivers
 * (push/sched.h), so that a slow webhook delays only its own alerts.
 *
 * Guarantees, and how:
 *   at least once  a delivery (at most LIMIT_ALERT_ARTICLES articles) is
 *                  written to the store with the alert's new cursor in one
 *                  transaction BEFORE it is sent, and forgotten only when
 *                  its webhook answered 2xx (or after the retry window): a
 *                  restart or a SIGKILL at any point resends, never loses;
 *   same bytes     a retry sends the stored body under the same
 *                  X-Newsd-Delivery id; X-Newsd-Signature is
 *                  sha256=<hex HMAC-SHA256 of the body, key = the secret>;
 *   in order       per alert, a delivery is sent only when every earlier one
 *                  succeeded or expired (retries back off exponentially,
 *                  capped, for up to the retry window, 24 h by default);
 *   one node       in a cluster, only the lease holder moves an alert's
 *                  cursor (a compare and set), so each article is queued
 *                  once per alert; a node taking over resends what the
 *                  previous one had queued, under the same ids;
 *   story once     an alert with dedupe queues a story's first article
 *                  only; a later copy adds to the alert's copies, stored
 *                  with the cursor; the stories queued are stored with
 *                  their delivery, so a restart or a node taking over
 *                  knows them (the newest STORE_ALERT_STORIES_MAX).
 * Webhooks are fetched with fetch/fetch.h, so [outbound] applies to every
 * connection. Counted in /metrics: newsd_alert_deliveries_sent_total,
 * newsd_alert_delivery_retries_total, newsd_alert_deliveries_failed_total,
 * newsd_alert_deliveries_pending. */
#ifndef NEWSD_PUSH_WEBHOOK_H
#define NEWSD_PUSH_WEBHOOK_H

#include <stdint.h>

#include "index/match.h"
#include "fetch/fetch.h"
#include "store/store.h"
#include "util/err.h"

#define PUSH_WEBHOOK_LEASE_MS_DEFAULT 30000                 /* a node's hold: 3 POST timeouts */
#define PUSH_WEBHOOK_POLL_MS_DEFAULT 200                    /* how often the log is looked at */
#define PUSH_WEBHOOK_RETRY_MIN_MS_DEFAULT 1000              /* first retry after a failure */
#define PUSH_WEBHOOK_RETRY_MAX_MS_DEFAULT (600 * 1000)      /* the backoff's cap */
#define PUSH_WEBHOOK_EXPIRE_MS_DEFAULT (24 * 3600 * 1000LL) /* then a delivery is dropped */
#define PUSH_WEBHOOK_TIMEOUT_MS_DEFAULT 10000               /* one POST, connect included */

/* A stored query (alert_record.query) compiled for matching; newsd's is
 * api_alert_matcher. */
typedef int (*push_webhook_compile_fn)(void *ctx, const char *query_json,
                                       struct index_matcher **out, struct err *err);

struct push_webhook_options {
    const char *journal_path; /* the article journal's file (store_journal_path of index_journal) */
    push_webhook_compile_fn compile;
    void *compile_ctx;
    struct fetch_options fetch; /* policy, proxy (timeouts: PUSH_WEBHOOK_TIMEOUT_MS_DEFAULT) */
    /* 0: the defaults above (tests shorten them) */
    int64_t lease_ms, poll_ms, retry_min_ms, retry_max_ms, expire_ms;
    /* The wall clock (unix ms) that deliveries are stamped, retried and
     * dropped by and leases run on; NULL: the system's. A seam for tests,
     * which step a fake one through backoffs and a retry window. Waits
     * (poll_ms) stay on the monotonic clock. */
    int64_t (*now_ms)(void *ctx);
    void *now_ctx;
};

struct push_webhook;

/* Register the metrics (at 0), so /metrics shows them without a worker. */
void push_webhook_metrics_init(void);

/* Start the worker on store s (borrowed: it must outlive the worker). */
int push_webhook_start(struct push_webhook **out, struct store *s,
                       const struct push_webhook_options *o, struct err *err);

/* Stop: a POST in flight is abandoned (its delivery is sent again later),
 * the leases are handed back. NULL: no-op. */
void push_webhook_stop(struct push_webhook *a);

/* The X-Newsd-Signature value of body[0..len) under secret:
 * "sha256=" + 64 lower-case hex digits, NUL-terminated. */
#define PUSH_WEBHOOK_SIGNATURE_LEN (7 + 64 + 1)
void push_webhook_signature(const char *secret, const char *body, size_t len,
                            char out[PUSH_WEBHOOK_SIGNATURE_LEN]);

#endif
