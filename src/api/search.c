/* Running a validated search against the index and answering with its page
 * of articles (api/internal.h): the query time budget, and the index's
 * failures turned into NewsAPI errors (timeout and index-not-ready 503,
 * anything else 500 with the cause in the log only). */
#include "api/cursor.h"
#include "api/internal.h"
#include "util/ascii.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/timefmt.h"
#include "util/version.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/banned.h"

/* ---- the page as a feed (format=rss|atom|jsonfeed) ------------------------------ */

/* The address this request came to, as the client sees it: the Host it
 * sent (any byte but those a host may hold makes it "localhost": this is
 * only a link in its own answer) and the scheme a proxy in front says. */
static void feed_base(struct api_call *c, struct buf *b)
{
    const char *host = http_request_header(c->req, "Host");
    const char *proto = http_request_header(c->req, "X-Forwarded-Proto");
    bool ok = host && *host && strlen(host) <= 255;
    for (const char *p = host; ok && *p; p++)
        ok = ascii_is_alpha(*p) || ascii_is_digit(*p) || strchr(".-:[]", *p);
    buf_puts(b, proto && !strcmp(proto, "https") ? "https://" : "http://");
    buf_puts(b, ok ? host : "localhost");
}

/* The request's query string without its apiKey: the key stays in the
 * reader's subscription, never in the document it gets. A segment is
 * dropped when its name decodes (api/params.h, as the key check reads it)
 * to apikey: "API%4Bey=" is a key too. */
static void query_without_key(struct api_call *c, struct buf *b, const char *q)
{
    bool first = true;
    while (*q) {
        size_t n = strcspn(q, "&");
        struct api_params one;
        bool key = n && api_params_parse(&c->arena, q, n, &one) == 0 && one.n == 1 &&
                   !strcmp(one.items[0].name, "apikey");
        if (n && !key) {
            if (!first)
                buf_putc(b, '&');
            buf_append(b, q, n);
            first = false;
        }
        q += n;
        if (*q == '&')
            q++;
    }
}

/* "newsd: /v2/everything q=bitcoin language=en": the search it follows,
 * in words (decoded values; the key, paging and format left out). */
static void feed_title(struct api_call *c, struct buf *b)
{
    buf_puts(b, "newsd: ");
    buf_puts(b, c->req->path);
    for (size_t i = 0; i < c->params.n; i++) {
        const struct api_param *p = &c->params.items[i];
        if (!strcmp(p->name, "apikey") || !strcmp(p->name, "format") || !strcmp(p->name, "page") ||
            !strcmp(p->name, "pagesize"))
            continue;
        buf_printf(b, " %s=%.*s", p->name, (int)strnlen(p->value, p->len), p->value);
    }
}

/* If-None-Match holds etag (or *): the client has this very page. */
static bool etag_matches(const char *header, const char *etag)
{
    size_t n = strlen(etag);
    for (const char *p = header; p && *p;) {
        p += strspn(p, " \t,");
        if (*p == '*')
            return true;
        if (!strncmp(p, "W/", 2))
            p += 2; /* a weak comparison (RFC 9110 §13.1.2) */
        if (!strncmp(p, etag, n) && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
            return true;
        p = strchr(p, ',');
    }
    return false;
}

/* The client's copy is current: If-None-Match when sent, else
 * If-Modified-Since against the newest article (RFC 9110 §13.2.2). */
static bool not_modified(struct api_call *c, const char *etag, int64_t newest)
{
    const char *inm = http_request_header(c->req, "If-None-Match");
    if (inm)
        return etag_matches(inm, etag);
    const char *ims = http_request_header(c->req, "If-Modified-Since");
    int64_t since;
    return ims && newest > 0 && timefmt_parse_rfc822(ims, strlen(ims), &since) == 0 &&
           newest <= since;
}

static void respond_feed(struct api_call *c, const struct index_result *res)
{
    struct buf base = BUF_INIT, self = BUF_INIT, home = BUF_INIT, title = BUF_INIT, b;
    feed_base(c, &base);
    buf_putc(&base, '\0');
    buf_printf(&self, "%s%s", base.data ? base.data : "", c->req->path);
    if (*c->req->query)
        buf_putc(&self, '?');
    query_without_key(c, &self, c->req->query);
    buf_putc(&self, '\0');
    buf_printf(&home, "%s/", base.data ? base.data : "");
    buf_putc(&home, '\0');
    feed_title(c, &title);
    buf_putc(&title, '\0');
    struct api_feed_meta m = {.title = title.data,
                              .self_url = self.data,
                              .home_url = home.data,
                              .version = version_release()};
    int64_t newest = 0;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    int rc = buf_error(&base) || buf_error(&self) || buf_error(&home) || buf_error(&title)
                 ? ERR_NOMEM
                 : api_feed_render(&b, c->feed, &m, res->docs, res->n, &newest);
    buf_release(&base);
    buf_release(&self);
    buf_release(&home);
    buf_release(&title);
    if (rc < 0) {
        buf_release(&b);
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        log_msg(LOG_ERROR, "request %s: feed rendering failed (%d)", c->req->request_id, rc);
        return;
    }
    /* A strong validator of these very bytes; Last-Modified from the
     * newest article (a deletion changes the ETag, not the date). */
    char etag[24], date[TIMEFMT_HTTP_LEN];
    snprintf(etag, sizeof etag, "\"%016llx\"", (unsigned long long)hash_bytes64(b.data, b.len));
    http_response_add_header(c->resp, "ETag", etag);
    if (newest > 0) {
        timefmt_http(newest, date);
        http_response_add_header(c->resp, "Last-Modified", date);
    }
    c->resp->content_type = api_feed_content_type(c->feed);
    if (not_modified(c, etag, newest)) {
        buf_release(&b);
        c->resp->status = 304; /* no body; it does not count toward the quota (api.c) */
        return;
    }
    api_respond_rendered(c, &b);
}

int64_t api_deadline(const struct api_call *c)
{
    /* The budget counts from the request's arrival: time spent waiting
     * for a worker is part of what the client waits. */
    if (c->api->cfg.query_timeout_ms <= 0)
        return 0;
    return (c->req->received_ms > 0 ? c->req->received_ms : clock_mono_ms()) +
           c->api->cfg.query_timeout_ms;
}

int api_fail_index(struct api_call *c, int rc, struct err *err)
{
    if (rc == ERR_TIMEOUT) {
        /* A runaway query: the client may retry a narrower one. */
        api_fail(c, API_ERR_UNAVAILABLE,
                 "Your query took too long to run and was stopped. Try a narrower query "
                 "(fewer OR terms, a date range) or try again later.");
        c->resp->log_note = "query time budget exceeded";
        return -1;
    }
    if (rc == ERR_REFUSED) {
        /* A prefix (word*) of too many words (index/prefix.h): refused
         * before any search ran, as a malformed query is. */
        c->searched = false;
        return api_fail(c, API_ERR_PARAMETER_INVALID, "The query is too broad: %s.",
                        err_msg(err, rc));
    }
    if (rc == ERR_WARMING) {
        /* A column of a whole pass (the author facet, stories) not made by
         * the deadline: no search ran, and a thread goes on making it. */
        c->searched = false;
        http_response_add_header(c->resp, "Retry-After", "5");
        c->resp->log_note = "index column being made";
        return api_fail(c, API_ERR_UNAVAILABLE,
                        "The search index is preparing what this request needs (%s); try again "
                        "in a few seconds.",
                        err_msg(err, rc));
    }
    if (rc == ERR_BUSY) {
        c->searched = false; /* no search ran: the index is not ready yet */
        api_fail_building(c);
        return -1;
    }
    api_fail(c, API_ERR_UNEXPECTED, NULL);
    /* The cause goes to the log only (no internals in responses). */
    log_msg(LOG_ERROR, "request %s: search failed: %s", c->req->request_id, err_msg(err, rc));
    c->resp->log_note = "index failure";
    return -1;
}

/* req on the index within the request's time budget: 0 with *res, or -1
 * with the error answered. */
static int search_timed(struct api_call *c, const struct index_request *req,
                        struct index_result *res)
{
    struct err err;
    err_clear(&err);
    if (req->from > req->to) {
        /* An empty window (plan delay, history): nothing can match. */
        res->total = 0;
        res->n = 0;
        res->docs = NULL;
    } else {
        struct index_request timed = *req;
        timed.deadline_ms = api_deadline(c);
        int rc = index_search(c->api->index, &c->arena, &timed, res, &err);
        if (req->walk && req->sort == INDEX_SORT_RELEVANCY && rc == ERR_TOO_LARGE)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "A relevancy cursor holds the statistics of at most %d words, phrases "
                            "and filter terms: narrow the search, or walk it in another sortBy "
                            "order.",
                            INDEX_RANK_LEAVES_MAX);
        if (req->walk && req->stats && rc == ERR_INVALID)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "This cursor does not fit this search: pass cursor=* to start a walk, "
                            "then each response's nextCursor.");
        if (rc < 0)
            return api_fail_index(c, rc, &err);
    }
    return 0;
}

/* The cursor that goes on after the last article of a page. */
static void cursor_next(struct api_call *c, const struct index_request *req,
                        const struct index_result *page, char out[API_CURSOR_MAX + 1])
{
    struct api_cursor cur = {.search = api_cursor_search(&c->params),
                             .id = page->docs[page->n - 1].id};
    if (req->sort == INDEX_SORT_RELEVANCY || req->sort == INDEX_SORT_POPULARITY) {
        cur.kind = req->sort == INDEX_SORT_RELEVANCY ? API_CURSOR_RELEVANCY : API_CURSOR_POPULARITY;
        cur.key = page->keys[page->n - 1];
        /* the walk's statistics: the first page's, then the same again */
        cur.stats = req->stats ? *req->stats : page->stats;
    }
    api_cursor_encode(&cur, out);
}

/* A page of a cursor walk (api/cursor.h): the rest of the walk is
 * searched; totalResults stays the whole search's, and nextCursor comes
 * when more follow this page: the walk goes on after its last article.
 * Newest first, the rest below the cursor is counted (one more count for
 * the whole search when the walk is under way); a ranked order's count is
 * the whole search's already, and one match more than the page says
 * whether more follow. */
static void respond_walk(struct api_call *c, const struct index_request *req)
{
    struct index_request ask = *req;
    struct index_result rest;
    uint64_t total;
    bool more;
    if (req->walk)
        ask.limit = req->limit + 1;
    if (search_timed(c, &ask, &rest) < 0)
        return;
    total = rest.total;
    if (req->walk) {
        more = rest.n > req->limit;
        if (more)
            rest.n = req->limit;
    } else {
        more = rest.total > rest.n && rest.n > 0;
        if (req->below) {
            struct index_request whole = *req;
            struct index_result all;
            whole.below = false;
            whole.offset = 0;
            whole.limit = 0;
            if (search_timed(c, &whole, &all) < 0)
                return;
            total = all.total;
        }
    }
    char next[API_CURSOR_MAX + 1];
    if (more)
        cursor_next(c, req, &rest, next);
    struct buf b;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    api_render_page_walk(&b, total, rest.docs, rest.n, more ? next : NULL);
    /* facets, like totalResults, are the whole search's on every page */
    struct index_request whole = *req;
    whole.below = false;
    whole.after = false;
    whole.walk = false;
    if (api_facets_append(c, &whole, &b) < 0) {
        buf_release(&b);
        return;
    }
    api_respond_rendered(c, &b);
}

void api_respond_feed(struct api_call *c, const struct index_result *res)
{
    respond_feed(c, res);
}

void api_respond_result(struct api_call *c, const struct index_request *req,
                        const struct index_result *res)
{
    if (c->feed != API_FEED_NONE) {
        respond_feed(c, res);
        return;
    }
    struct buf b;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    api_render_page(&b, res->total, res->docs, res->n);
    if (api_facets_append(c, req, &b) < 0) {
        buf_release(&b);
        return;
    }
    api_respond_rendered(c, &b);
}

void api_respond_search(struct api_call *c, const struct index_request *req)
{
    struct index_result res;
    c->searched = true;
    if (c->walk) { /* it searches the rest of its walk itself */
        respond_walk(c, req);
        return;
    }
    if (search_timed(c, req, &res) < 0)
        return;
    api_respond_result(c, req, &res);
}

void api_respond_matches(struct api_call *c, struct index_request *req, size_t page, size_t size,
                         bool dedupe)
{
    req->offset = (page - 1) * size;
    req->limit = size;
    if (dedupe)
        api_respond_dedupe(c, req);
    else
        api_respond_search(c, req);
}
