/* Private to the crawler (crawl.c, crawl_pages.c): the pages of the items a
 * pass stored (issue 16). The pass queues each new article that its mode
 * says wants its page (by default those that lack content, description,
 * image or author); once every feed of the pass is stored, and so
 * searchable, the queued pages are fetched together (fetch.h: one
 * connection per host, the crawler's limits and cancel hook), each page's
 * article is extracted (extract.h) and fills the item's gaps
 * (ingest_page_fill: what the feed said wins), and the filled articles are
 * stored again, upserted by canonical URL. A page that fails, is no HTML or
 * holds no article leaves its item as it was. */
#ifndef NEWSD_INGEST_CRAWL_PAGES_H
#define NEWSD_INGEST_CRAWL_PAGES_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest/crawl.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

struct crawl_page_queue {
    struct arena a;       /* the queued articles' copies */
    struct article *arts; /* as stored from the feed */
    bool *dated;          /* the feed gave its publication time */
    size_t n, cap;
    size_t dropped; /* past the pass's bound */
};

void crawl_pages_init(struct crawl_page_queue *q);
void crawl_pages_release(struct crawl_page_queue *q);

/* Queue a copy of stored article art when mode wants its page; at most max
 * per pass (the rest counted in dropped). ERR_NOMEM. */
int crawl_pages_want(struct crawl_page_queue *q, enum crawl_pages_mode mode, size_t max,
                     const struct article *art, bool dated);

/* Fetch, extract and store the queued pages, then empty the queue. stats
 * gets pages_* and articles_filled. Returns 0 or the store's error. */
int crawl_pages_run(struct crawl_page_queue *q, struct store *s, const struct fetch_options *fo,
                    struct crawl_stats *stats, struct err *err);

#endif
