/* The feed crawler: polls the store's due feeds (store.h "feeds") and runs
 * each through fetch (conditional GET, fetch/fetch.h) → parse
 * (ingest/feed.h) → the one normalisation (ingest_normalize) → one
 * store_articles_put per feed, then records the fetch state and the next
 * poll time.
 *
 * Scheduling (docs/feeds.md): a feed is polled every interval_s seconds
 * (STORE_FEED_DEFAULT_INTERVAL at first). A poll that brings nothing new
 * (304, or a 200 whose items are all known and unchanged) stretches the
 * interval by half, up to the ceiling (crawl_options.max_interval_s,
 * CRAWL_MAX_INTERVAL_S by default; CRAWL_HEADLINES_MAX_INTERVAL_S for a
 * feed marked headlines, whose first story of the morning must not wait
 * for a night's stretched interval); every success brings an interval
 * above the ceiling (set by hand, or before the ceiling was lowered) down
 * to it. A poll that brings new items
 * moves it halfway toward the observed gap between the document's items
 * (the median gap between their dates),
 * never below CRAWL_MIN_INTERVAL_S (nor below an interval set lower by
 * hand). A failure (network, HTTP status other than 2xx/304, a document that
 * does not parse) waits interval × 2^errors, at most CRAWL_MAX_BACKOFF_S, and
 * never less than the response's Retry-After. A random 0–10 % is added to
 * every wait so that feeds added together drift apart.
 * Politeness: at most `per_host` feeds of one host per pass (fetch.h adds
 * one connection per host at a time) and CRAWL_HOST_GAP_S seconds between
 * two passes that touch a host; feeds held back stay due for a later pass.
 *
 * Pages: once a pass has stored its feeds' articles (searchable from then
 * on), it fetches the pages of the new items that lack content,
 * description, image or author (crawl_options.pages says which), extracts
 * them (extract.h) and stores the articles again with the gaps filled:
 * crawl_pages.h.
 *
 * Time: a pass takes `now` from its caller (tests drive the clock); the
 * background thread and crawl_once use the wall clock. One crawler per
 * store handle; its functions are not to be called from several threads at
 * once (the background thread owns it while it runs).
 *
 * Metrics (util/metrics.h, the process registry), counted by crawl_pass:
 *   newsd_feeds_polled_total  counter  fetches whose outcome was recorded
 *                                      (a 200, a 304 or a failure; not a
 *                                      fetch abandoned by crawl_stop)
 *   newsd_feeds_failed_total  counter  of those, the failures (network,
 *                                      HTTP status, parse, store)
 *   newsd_feeds_failing       gauge    enabled feeds whose last poll failed,
 *                                      counted in the store after a pass in
 *                                      which a feed started or stopped
 *                                      failing, else every
 *                                      CRAWL_FAILING_RECOUNT_S (changes made
 *                                      elsewhere: `newsd feeds`, other nodes)
 *   newsd_ingest_lag_seconds  gauge    pass time − the newest publishedAt
 *                                      among the items of the feeds read
 *                                      since the crawler started (0 until
 *                                      it has read one); set every pass, so
 *                                      it grows while nothing new comes */
#ifndef NEWSD_INGEST_CRAWL_H
#define NEWSD_INGEST_CRAWL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fetch/fetch.h"
#include "store/store.h"
#include "util/err.h"

#define CRAWL_MIN_INTERVAL_S 300         /* floor of the adaptive interval */
#define CRAWL_MAX_INTERVAL_S (6 * 3600)  /* ceiling of the adaptive interval */
#define CRAWL_MAX_BACKOFF_S (24 * 3600)  /* longest wait after failures */
#define CRAWL_HOST_GAP_S 2               /* between two passes touching one host */
#define CRAWL_BATCH_MAX 32               /* feeds fetched by one pass */
#define CRAWL_LEASE_S 900                /* a claimed feed is not due again for this long */
#define CRAWL_ITEM_MEMORY_S (30 * 86400) /* items a feed dropped are forgotten after this */
#define CRAWL_TICK_MS 1000               /* the background thread's pass period */
#define CRAWL_FAILING_RECOUNT_S 60       /* newsd_feeds_failing is counted at least this often */
#define CRAWL_PAGES_MAX 64               /* item pages fetched by one pass (the rest
                                          * wait for the next ones, crawl_pages.h) */
/* The ceiling of the adaptive interval of a feed marked headlines. */
#define CRAWL_HEADLINES_MAX_INTERVAL_S 3600
/* One feed's parse and articles. */
#define CRAWL_FEED_ARENA_BYTES ((size_t)512 * 1024 * 1024)

#define CRAWL_METRIC_FEEDS_POLLED "newsd_feeds_polled_total"
#define CRAWL_METRIC_FEEDS_FAILED "newsd_feeds_failed_total"
#define CRAWL_METRIC_FEEDS_FAILING "newsd_feeds_failing"
#define CRAWL_METRIC_INGEST_LAG "newsd_ingest_lag_seconds"
#define CRAWL_METRIC_PAGES_FETCHED "newsd_pages_fetched_total"
#define CRAWL_METRIC_PAGES_FAILED "newsd_pages_failed_total"
#define CRAWL_METRIC_PAGES_RETRIED "newsd_pages_retries_total"
#define CRAWL_METRIC_PAGES_NO_ARTICLE "newsd_pages_no_article_total"
#define CRAWL_METRIC_PAGES_WAITING "newsd_pages_waiting"

/* Which new items get their page fetched (issue 16, crawl_pages.h). */
enum crawl_pages_mode {
    CRAWL_PAGES_MISSING = 0, /* those lacking content, description, image or author */
    CRAWL_PAGES_ALWAYS,      /* every new item */
    CRAWL_PAGES_NEVER,
};

/* The mode named s ("missing", "always", "never": what `crawl --pages`,
 * `feeds add --pages` and a feed's stored setting say); false, *out
 * untouched, for any other text or NULL. */
bool crawl_pages_mode_parse(const char *s, enum crawl_pages_mode *out);

struct crawl_options {
    size_t batch_max;            /* feeds per pass; 0 = CRAWL_BATCH_MAX */
    unsigned per_host;           /* feeds of one host per pass; 0 = 1 */
    int64_t host_gap_s;          /* 0 = CRAWL_HOST_GAP_S, < 0 = no gap */
    bool no_jitter;              /* exact waits (tests) */
    uint64_t seed;               /* of the jitter; 0 = from the clock */
    struct fetch_options fetch;  /* timeouts, sizes, user agent; its cancel hook is ours */
    enum crawl_pages_mode pages; /* items whose page is fetched after their feed,
                                  * for feeds without a setting of their own */
    size_t pages_max;            /* pages per pass; 0 = CRAWL_PAGES_MAX */
    /* Ceilings of the adaptive interval ([crawl] in the config file):
     * 0 = CRAWL_MAX_INTERVAL_S and CRAWL_HEADLINES_MAX_INTERVAL_S. */
    int64_t max_interval_s;
    int64_t headlines_max_interval_s;
};

struct crawl_stats {
    size_t fetched;          /* 200s that parsed */
    size_t not_modified;     /* 304s */
    size_t failed;           /* network or HTTP errors, documents that did not parse */
    size_t deferred;         /* due feeds left for a later pass (politeness, batch size) */
    size_t articles_new;     /* articles inserted */
    size_t articles_updated; /* articles replaced (an item that changed, or a url known from
                                elsewhere) */
    size_t items_unchanged;  /* items already stored as they are */
    size_t items_skipped;    /* items without a title or usable link */
    size_t pages_fetched;    /* item pages fetched and read */
    size_t pages_failed;     /* given up: network or HTTP errors (after their retries),
                                not HTML, too large */
    size_t pages_retried;    /* failures that wait for another try (crawl_pages.h) */
    size_t pages_no_article; /* pages that hold no article */
    size_t pages_waiting;    /* queued for later passes when this one ended */
    size_t articles_filled;  /* articles completed from their page */
};

struct crawler;

/* A crawler over store s (borrowed: it must outlive the crawler). opt may
 * be NULL (defaults). ERR_NOMEM. */
int crawl_new(struct crawler **out, struct store *s, const struct crawl_options *opt,
              struct err *err);

/* Stop the background thread if it runs, then free. NULL is a no-op. */
void crawl_free(struct crawler *c);

/* One pass at time now: claim up to batch_max due feeds (politeness
 * permitting), fetch them concurrently, store their articles and record
 * each feed's outcome. stats (may be NULL) is filled, not added to. Feed
 * failures are recorded on the feeds, not returned; returns 0, or the
 * store's error (the pass goes on with the other feeds first). */
int crawl_pass(struct crawler *c, int64_t now, struct crawl_stats *stats, struct err *err);

/* Poll every feed due now once (`newsd crawl --once`): passes at the wall
 * clock until no due feed is held back by politeness and no page waits,
 * waiting out the host gap and the pages' retry times in between (bounded:
 * crawl_pages.h). stats (may be NULL) gets the sum. */
int crawl_once(struct crawler *c, struct crawl_stats *stats, struct err *err);

/* Run passes in a background thread every CRAWL_TICK_MS until crawl_stop.
 * ERR_INVALID when already running, ERR_INTERNAL when no thread starts. */
int crawl_start(struct crawler *c, struct err *err);

/* Ask the thread to stop (an ongoing fetch is abandoned within about a
 * second; its feeds are given back, due at once) and wait for it. A no-op
 * when not running. */
void crawl_stop(struct crawler *c);

/* Register the crawler's metrics (above) at 0, so that a scrape shows them
 * before the first pass, or with no crawler at all (serve --no-crawl).
 * Idempotent, thread-safe; crawl_new calls it too. */
void crawl_metrics_init(void);

/* sum += x, field by field. */
void crawl_stats_add(struct crawl_stats *sum, const struct crawl_stats *x);

#endif
