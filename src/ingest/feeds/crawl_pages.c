/* The pages of crawled items (ingest/feeds/crawl_pages.h). */
#include "ingest/feeds/crawl_pages.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/pages.h"
#include "ingest/ingest.h"
#include "util/log.h"

#include "util/banned.h"

/* The extraction of one page, its strings kept until the pass's put. */
#define CRAWL_PAGE_ARENA_BYTES ((size_t)64 * 1024 * 1024)

void crawl_pages_init(struct crawl_page_queue *q)
{
    memset(q, 0, sizeof *q);
    arena_init(&q->a, 0);
}

void crawl_pages_release(struct crawl_page_queue *q)
{
    arena_release(&q->a);
    free(q->arts);
    free(q->wait);
    memset(q, 0, sizeof *q);
}

static bool empty(const char *s)
{
    return !s || !s[0];
}

/* An item lacks what its page may give: text of its own (a content that
 * repeats the description is none), description, image or author. */
static bool lacks_something(const struct article *art)
{
    bool summary_only = !empty(art->content) && !empty(art->description) &&
                        strcmp(art->content, art->description) == 0;
    return empty(art->content) || summary_only || empty(art->description) ||
           empty(art->url_to_image) || empty(art->author);
}

int crawl_pages_want(struct crawl_page_queue *q, enum crawl_pages_mode mode,
                     const struct article *art, bool dated)
{
    if (mode == CRAWL_PAGES_NEVER || (mode == CRAWL_PAGES_MISSING && !lacks_something(art)))
        return 0;
    if (q->n >= CRAWL_PAGES_QUEUE_MAX) {
        q->dropped++;
        return 0;
    }
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        struct article *na = realloc(q->arts, cap * sizeof *na);
        if (!na)
            return ERR_NOMEM;
        q->arts = na;
        struct crawl_page_wait *nw = realloc(q->wait, cap * sizeof *nw);
        if (!nw)
            return ERR_NOMEM;
        q->wait = nw;
        q->cap = cap;
    }
    int rc = ingest_article_copy(&q->a, &q->arts[q->n], art);
    if (rc < 0)
        return rc;
    q->wait[q->n++] = (struct crawl_page_wait){.dated = dated};
    return 0;
}

static bool is_html(const struct fetch_result *r)
{
    const char *ct = r->content_type;
    return !ct || !ct[0] || strncasecmp(ct, "text/html", 9) == 0 ||
           strncasecmp(ct, "application/xhtml+xml", 21) == 0;
}

/* Keep the queued pages keep[] says, in order, in a fresh arena (the old
 * one held the pages just fetched too). Out of memory: the rest are
 * dropped, and said so. */
static void queue_keep(struct crawl_page_queue *q, const bool *keep)
{
    struct arena old = q->a;
    size_t kept = 0;
    arena_init(&q->a, 0);
    for (size_t i = 0; i < q->n; i++) {
        if (!keep[i])
            continue;
        if (ingest_article_copy(&q->a, &q->arts[kept], &q->arts[i]) < 0) {
            log_warn("crawl: out of memory: queued item pages dropped");
            break;
        }
        q->wait[kept++] = q->wait[i];
    }
    q->n = kept;
    arena_release(&old);
}

int64_t crawl_pages_due_at(const struct crawl_page_queue *q)
{
    int64_t due = INT64_MAX;
    for (size_t i = 0; i < q->n; i++) {
        if (q->wait[i].due_at < due)
            due = q->wait[i].due_at;
    }
    return due;
}

/* A failure that may pass (the site busy, down or slow) rather than one
 * that will not (4xx, a refused address, too large, not HTML). */
static bool failure_may_pass(const struct fetch_result *r)
{
    if (r->rc == ERR_TIMEOUT || r->rc == ERR_IO)
        return true;
    return r->rc == 0 && (r->status >= 500 || r->status == 408 || r->status == 429);
}

/* Another try for a page that failed for a while, as feeds back off
 * (crawl.c schedule_failure): the wait doubles, a longer Retry-After
 * wins, both bounded. False when its tries are used up. */
static bool retry_later(struct crawl_page_wait *w, const struct fetch_result *r, int64_t now)
{
    if (!failure_may_pass(r) || w->retries >= CRAWL_PAGES_RETRIES)
        return false;
    int64_t delay = (int64_t)CRAWL_PAGES_RETRY_S << w->retries;
    if (r->retry_after_s > delay)
        delay = r->retry_after_s;
    if (delay > CRAWL_PAGES_RETRY_MAX_S)
        delay = CRAWL_PAGES_RETRY_MAX_S;
    w->retries++;
    w->due_at = now + delay;
    return true;
}

/* The first max queued pages due at now: their indexes in take[0..*n). */
static void pages_due(const struct crawl_page_queue *q, size_t max, int64_t now, size_t *take,
                      size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < q->n && *n < max; i++) {
        if (q->wait[i].due_at <= now)
            take[(*n)++] = i;
    }
}

int crawl_pages_run(struct crawl_page_queue *q, struct store *s, const struct fetch_options *fo,
                    size_t max, int64_t now, struct crawl_stats *stats, struct err *err)
{
    int rc = 0;
    size_t n = 0, n_put = 0;
    size_t *take = NULL;
    bool *keep = NULL;
    struct fetch_request *reqs = NULL;
    struct fetch_result *res = NULL;
    struct article *put = NULL;
    struct arena *arenas = NULL;
    if (q->dropped)
        log_warn("crawl: %zu item pages not fetched: %d are already waiting", q->dropped,
                 CRAWL_PAGES_QUEUE_MAX);
    q->dropped = 0;
    if (q->n == 0 || max == 0 || crawl_pages_due_at(q) > now)
        return 0;
    take = calloc(q->n, sizeof *take);
    keep = calloc(q->n, sizeof *keep);
    if (!take || !keep) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out; /* the queue as it was: the next pass tries again */
    }
    for (size_t i = 0; i < q->n; i++)
        keep[i] = true;
    pages_due(q, max, now, take, &n);
    for (size_t j = 0; j < n; j++)
        keep[take[j]] = false; /* fetched now: out, unless tried again */
    reqs = calloc(n, sizeof *reqs);
    res = calloc(n, sizeof *res);
    put = calloc(n, sizeof *put);
    arenas = calloc(n, sizeof *arenas);
    if (!reqs || !res || !put || !arenas) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < n; j++) {
        reqs[j].url = q->arts[take[j]].url;
        arena_init(&arenas[j], CRAWL_PAGE_ARENA_BYTES);
    }
    fetch_run(reqs, n, fo, res);
    for (size_t j = 0; j < n; j++) {
        size_t i = take[j];
        struct fetch_result *r = &res[j];
        if (r->rc < 0 || r->status < 200 || r->status >= 300 || !is_html(r)) {
            keep[i] = retry_later(&q->wait[i], r, now);
            if (keep[i])
                stats->pages_retried++;
            else
                stats->pages_failed++;
            continue;
        }
        char charset[64];
        struct extract_options eo = {
            .url = r->effective_url ? r->effective_url : q->arts[i].url,
            .charset = fetch_content_type_charset(r->content_type, charset, sizeof charset)
                           ? charset
                           : NULL,
        };
        struct extracted_page pg;
        if (extract_page(&arenas[j], r->body, r->len, &eo, &pg) < 0) {
            stats->pages_failed++; /* too large to extract within the bound */
            continue;
        }
        stats->pages_fetched++;
        if (!pg.readerable) {
            stats->pages_no_article++;
            continue;
        }
        struct article art = q->arts[i];
        if (page_fill(&art, &pg, q->wait[i].dated) != 0)
            put[n_put++] = art;
    }
    if (n_put > 0) {
        struct store_put_stats ps = {0, 0};
        rc = store_articles_put(s, put, n_put, &ps, err);
        if (rc == 0)
            stats->articles_filled += n_put;
    }
out:
    for (size_t j = 0; res && j < n; j++)
        fetch_result_release(&res[j]);
    for (size_t j = 0; arenas && j < n; j++)
        arena_release(&arenas[j]);
    if (keep)
        queue_keep(q, keep);
    free(arenas);
    free(put);
    free(res);
    free(reqs);
    free(keep);
    free(take);
    return rc;
}
