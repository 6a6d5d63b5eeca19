/* Private to the crawler (crawl.c, crawl_pages.c): the pages of the items a
 * pass stored (issue 16). The pass queues each new article that its mode
 * says wants its page (by default those that lack content, description,
 * image or author). Once every feed of the pass is stored, and so
 * searchable, the oldest queued pages, up to a pass's bound, are fetched
 * together (fetch/fetch.h: one connection per host, the crawler's limits and
 * cancel hook); the rest wait in order for the next passes, which run for
 * them even when no feed is due. Each page's article is extracted
 * (ingest/pages) and fills the item's gaps (page_fill: what the feed
 * said wins), and the filled articles are stored again, upserted by
 * canonical URL. A page that is no HTML, holds no article or fails for
 * good (4xx but 408 and 429, a refused address, too large) leaves its item
 * as it was. One that fails for a while (a timeout, a network error, 5xx,
 * 408, 429) waits in the queue for another try, CRAWL_PAGES_RETRY_S × 2^k
 * seconds later (a longer Retry-After wins, up to CRAWL_PAGES_RETRY_MAX_S),
 * at most CRAWL_PAGES_RETRIES times; only due pages are fetched. The
 * queue is in memory: what waits when the crawler stops is not fetched. */
#ifndef NEWSD_INGEST_CRAWL_PAGES_H
#define NEWSD_INGEST_CRAWL_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/feeds/feeds.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

/* Pages waiting at most: the queue keeps a copy of each one's article (a
 * few KiB) until it is fetched; beyond this, new ones are dropped and
 * counted, so a flood of new items cannot grow the crawler's memory. */
#define CRAWL_PAGES_QUEUE_MAX 4096
#define CRAWL_PAGES_RETRIES 3       /* tries after the first, for a page that fails for a while */
#define CRAWL_PAGES_RETRY_S 5       /* before the first of them; doubled each time */
#define CRAWL_PAGES_RETRY_MAX_S 120 /* the longest wait, Retry-After included */

/* A queued page's turn. */
struct crawl_page_wait {
    bool dated;       /* the feed gave its publication time */
    unsigned retries; /* tries that failed for a while so far */
    int64_t due_at;   /* not fetched before (seconds, the passes' clock); 0 = now */
};

struct crawl_page_queue {
    struct arena a;               /* the queued articles' copies */
    struct article *arts;         /* as stored from the feed, oldest first */
    struct crawl_page_wait *wait; /* arts[i]'s turn */
    size_t n, cap;
    size_t dropped; /* past CRAWL_PAGES_QUEUE_MAX since the last run */
};

void crawl_pages_init(struct crawl_page_queue *q);
void crawl_pages_release(struct crawl_page_queue *q);

/* Queue a copy of stored article art when mode wants its page (the rest
 * past CRAWL_PAGES_QUEUE_MAX counted in dropped). ERR_NOMEM. */
int crawl_pages_want(struct crawl_page_queue *q, enum crawl_pages_mode mode,
                     const struct article *art, bool dated);

/* Fetch, extract and store the oldest max queued pages due at now and take
 * them out of the queue, but for those to be tried again; the rest stay, in
 * order. stats gets pages_* and articles_filled. Returns 0 or the store's
 * error. */
int crawl_pages_run(struct crawl_page_queue *q, struct store *s, const struct fetch_options *fo,
                    size_t max, int64_t now, struct crawl_stats *stats, struct err *err);

/* When the next queued page is due (its due_at; 0 when one is due at any
 * time), or INT64_MAX when none waits. */
int64_t crawl_pages_due_at(const struct crawl_page_queue *q);

#endif
