/* Private to the crawler (crawl.c, crawl_pages.c): the pages of the items a
 * pass stored (issue 16). The pass queues each new article that its mode
 * says wants its page (by default those that lack content, description,
 * image or author). Once every feed of the pass is stored, and so
 * searchable, the oldest queued pages, up to a pass's bound, are fetched
 * together (fetch.h: one connection per host, the crawler's limits and
 * cancel hook); the rest wait in order for the next passes, which run for
 * them even when no feed is due. Each page's article is extracted
 * (extract.h) and fills the item's gaps (ingest_page_fill: what the feed
 * said wins), and the filled articles are stored again, upserted by
 * canonical URL. A page that fails, is no HTML or holds no article leaves
 * its item as it was. */
#ifndef NEWSD_INGEST_CRAWL_PAGES_H
#define NEWSD_INGEST_CRAWL_PAGES_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/crawl.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

/* Pages waiting at most: the queue keeps a copy of each one's article (a
 * few KiB) until it is fetched; beyond this, new ones are dropped and
 * counted, so a flood of new items cannot grow the crawler's memory. */
#define CRAWL_PAGES_QUEUE_MAX 4096

struct crawl_page_queue {
    struct arena a;       /* the queued articles' copies */
    struct article *arts; /* as stored from the feed, oldest first */
    bool *dated;          /* the feed gave its publication time */
    size_t n, cap;
    size_t dropped; /* past CRAWL_PAGES_QUEUE_MAX since the last run */
};

void crawl_pages_init(struct crawl_page_queue *q);
void crawl_pages_release(struct crawl_page_queue *q);

/* Queue a copy of stored article art when mode wants its page (the rest
 * past CRAWL_PAGES_QUEUE_MAX counted in dropped). ERR_NOMEM. */
int crawl_pages_want(struct crawl_page_queue *q, enum crawl_pages_mode mode,
                     const struct article *art, bool dated);

/* Fetch, extract and store the oldest max queued pages and take them out
 * of the queue; the rest stay, in order. stats gets pages_* and
 * articles_filled. Returns 0 or the store's error. */
int crawl_pages_run(struct crawl_page_queue *q, struct store *s, const struct fetch_options *fo,
                    size_t max, struct crawl_stats *stats, struct err *err);

#endif
