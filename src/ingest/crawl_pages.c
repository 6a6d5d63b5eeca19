/* The pages of crawled items (ingest/crawl_pages.h). */
#include "ingest/crawl_pages.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/extract.h"
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
    free(q->dated);
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
        bool *nd = realloc(q->dated, cap * sizeof *nd);
        if (!nd)
            return ERR_NOMEM;
        q->dated = nd;
        q->cap = cap;
    }
    int rc = ingest_article_copy(&q->a, &q->arts[q->n], art);
    if (rc < 0)
        return rc;
    q->dated[q->n++] = dated;
    return 0;
}

static bool is_html(const struct fetch_result *r)
{
    const char *ct = r->content_type;
    return !ct || !ct[0] || strncasecmp(ct, "text/html", 9) == 0 ||
           strncasecmp(ct, "application/xhtml+xml", 21) == 0;
}

/* Take the first n queued pages out, the rest kept in order in a fresh
 * arena (the old one held the pages just fetched too). Out of memory: the
 * rest are dropped, and said so. */
static void queue_shift(struct crawl_page_queue *q, size_t n)
{
    struct arena old = q->a;
    size_t left = q->n - n, kept = 0;
    arena_init(&q->a, 0);
    for (size_t i = 0; i < left; i++) {
        if (ingest_article_copy(&q->a, &q->arts[kept], &q->arts[n + i]) < 0) {
            log_warn("crawl: out of memory: %zu queued item pages dropped", left - kept);
            break;
        }
        q->dated[kept++] = q->dated[n + i];
    }
    q->n = kept;
    arena_release(&old);
}

int crawl_pages_run(struct crawl_page_queue *q, struct store *s, const struct fetch_options *fo,
                    size_t max, struct crawl_stats *stats, struct err *err)
{
    int rc = 0;
    size_t n = q->n < max ? q->n : max, n_put = 0;
    struct fetch_request *reqs = NULL;
    struct fetch_result *res = NULL;
    struct article *put = NULL;
    struct arena *arenas = NULL;
    if (q->dropped)
        log_warn("crawl: %zu item pages not fetched: %d are already waiting", q->dropped,
                 CRAWL_PAGES_QUEUE_MAX);
    q->dropped = 0;
    if (n == 0)
        goto out;
    reqs = calloc(n, sizeof *reqs);
    res = calloc(n, sizeof *res);
    put = calloc(n, sizeof *put);
    arenas = calloc(n, sizeof *arenas);
    if (!reqs || !res || !put || !arenas) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        reqs[i].url = q->arts[i].url;
        arena_init(&arenas[i], CRAWL_PAGE_ARENA_BYTES);
    }
    fetch_run(reqs, n, fo, res);
    for (size_t i = 0; i < n; i++) {
        struct fetch_result *r = &res[i];
        if (r->rc < 0 || r->status < 200 || r->status >= 300 || !is_html(r)) {
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
        if (extract_page(&arenas[i], r->body, r->len, &eo, &pg) < 0) {
            stats->pages_failed++; /* too large to extract within the bound */
            continue;
        }
        stats->pages_fetched++;
        if (!pg.readerable) {
            stats->pages_no_article++;
            continue;
        }
        struct article art = q->arts[i];
        if (ingest_page_fill(&art, &pg, q->dated[i]) != 0)
            put[n_put++] = art;
    }
    if (n_put > 0) {
        struct store_put_stats ps = {0, 0};
        rc = store_articles_put(s, put, n_put, &ps, err);
        if (rc == 0)
            stats->articles_filled += n_put;
    }
out:
    for (size_t i = 0; res && i < n; i++)
        fetch_result_release(&res[i]);
    for (size_t i = 0; arenas && i < n; i++)
        arena_release(&arenas[i]);
    free(arenas);
    free(put);
    free(res);
    free(reqs);
    queue_shift(q, n);
    return rc;
}
