/* Private to src/api/: one request's state and what the endpoint files
 * share, a section per file: answering (respond.c), validating parameters
 * (validate.c) and searching (search.c). Every validator either succeeds
 * (returns 0) or has already written the NewsAPI error into the response
 * (returns -1). */
#ifndef NEWSD_API_INTERNAL_H
#define NEWSD_API_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "api/error.h"
#include "api/feed.h"
#include "api/params.h"
#include "api/render.h"
#include "index/index.h"
#include "push/live.h"
#include "query/query.h"
#include "util/arena.h"
#include "util/buf.h"

struct api {
    struct store *store;
    struct index *index;
    struct auth *auth;
    struct api_config cfg;
    struct push_live *live;       /* NULL: live streams unavailable (503) */
    pthread_mutex_t streams_lock; /* open streams per key (stream.c) */
    struct api_stream_count *stream_counts;
    size_t n_stream_counts, cap_stream_counts;
    struct api_exports *exports; /* exports running, articles exported per key (export.c) */
    /* /healthz's last agreeing count check (api.c respond_health) */
    pthread_mutex_t health_lock;
    int64_t health_at_ms; /* 0: none yet */
    struct index_count_check health_cc;
    int64_t health_rows;
};

struct api_call {
    struct api *api;
    const struct http_request *req;
    struct http_response *resp;
    struct arena arena;
    struct api_params params;
    struct auth_result auth;
    int64_t now;
    bool searched;             /* the search ran: the request counts even if it ends in a 5xx */
    enum api_feed_format feed; /* format=rss|atom|jsonfeed: the page as a feed */
    bool walk;                 /* cursor=: the page carries nextCursor (api/cursor.h) */
    unsigned facets;           /* facets=: 1 << enum index_facet of each asked (counts.c) */
    size_t facet_size;         /* facetSize */
};

/* --- respond.c: the answer --------------------------------------------- */

/* Write an error (message printf-style; NULL fmt = default message); -1. */
int api_fail(struct api_call *c, enum api_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 503 while the search index is still being built (ERR_BUSY from the index). */
int api_fail_building(struct api_call *c);

/* Answer 200 with the rendered body in b (taken over), or unexpectedError
 * when rendering ran out of room or memory. */
void api_respond_rendered(struct api_call *c, struct buf *b);

/* A body of its own for a response: b made (LIMIT_RESPONSE_BYTES) and
 * begun through w as api_render_ok_begin does; api_respond_rendered sends
 * it. */
void api_respond_ok_begin(struct jw *w, struct buf *b);

/* --- validate.c: parameters -------------------------------------------- */

/* The value of the request's parameter name (lower case), the first of
 * repeated values; NULL when absent. */
const char *api_first_value(struct api_call *c, const char *name);

/* Plain decimal digits (1 to 18 of them) into *out; false for anything
 * else. validate.c. */
bool api_parse_digits(const char *s, size_t len, uint64_t *out);

/* q or qInTitle: every value ≤ 500 code points, parsed and ANDed. */
int api_get_query(struct api_call *c, const char *name, const char *display,
                  struct query_node **out);

/* Every value of the list parameter name (name=a,b&name=c) into
 * items[0..n): 1, 0 when it is absent (none), or -1 with the error
 * answered. */
int api_get_list(struct api_call *c, const char *name, const char ***items, size_t *n);

/* searchIn → enum index_field mask (default all). */
int api_get_search_in(struct api_call *c, unsigned *out);

/* sources list: ≤ 20 (sourcesTooMany), each known (sourceDoesNotExist). */
int api_get_sources(struct api_call *c, const char ***ids, size_t *n);

/* domains / excludeDomains: lower case, www. dropped. */
int api_get_domains(struct api_call *c, const char *name, const char *display, const char ***out,
                    size_t *n);

/* from / to (inclusive; date-only `to` = end of that day). from_given tells
 * whether `from` was sent. Checks from ≤ to. */
int api_get_dates(struct api_call *c, int64_t *from, int64_t *to, bool *from_given);

/* Two ASCII letters, lower-cased (country and language on top-headlines). */
int api_get_two_letters(struct api_call *c, const char *name, char out[3], bool *given);

/* category: one of the seven. */
int api_get_category(struct api_call *c, const char **out);

/* language on /everything: one of the fourteen (se = sv). */
int api_get_language(struct api_call *c, const char **out);

/* A parameter with two values (either case): absent or first, *is_second
 * false; second, true; else -1 with refusal answered. */
int api_get_either(struct api_call *c, const char *name, const char *first, const char *second,
                   const char *refusal, bool *is_second);

/* sortBy → index sort; dflt when absent. */
int api_get_sort(struct api_call *c, enum index_sort dflt, enum index_sort *out);

/* page and pageSize (plain digits; pageSize 1..100; page ≥ 1). */
int api_get_paging(struct api_call *c, size_t default_size, size_t *page, size_t *size);

/* format (an extension): json (NewsAPI's, the default), rss, atom or
 * jsonfeed into c->feed. */
int api_get_feed_format(struct api_call *c);

/* Plan limits: result window, then history depth (426 errors). Adjusts
 * *from (history hides older articles) and *to (article delay). */
int api_check_plan(struct api_call *c, size_t page, size_t size, int64_t *from, bool from_given,
                   int64_t *to);

/* The window of publication times plan shows at now (unix seconds): *from
 * raised to its history's first day, *to lowered to now - its delay. For
 * a request at once, and for a live stream at each article. */
void api_plan_window(const struct auth_plan *plan, int64_t now, int64_t *from, int64_t *to);

/* --- search.c: the search ----------------------------------------------- */

/* Run the validated search within the query time budget and answer with
 * the articles response (or the error the index's failure maps to). */
void api_respond_search(struct api_call *c, const struct index_request *req);

/* Page page of size matches of the validated search req: answered one
 * article per story when dedupe, else by api_respond_search. */
void api_respond_matches(struct api_call *c, struct index_request *req, size_t page, size_t size,
                         bool dedupe);

/* A search's result res answered: the feed c->feed asks for, else the
 * articles response with the facets c asked for (of req's matches). */
void api_respond_result(struct api_call *c, const struct index_request *req,
                        const struct index_result *res);

/* The request's time budget as an index deadline (0: none). */
int64_t api_deadline(const struct api_call *c);

/* Answer the error an index call's failure rc maps to (timeout and
 * index-not-ready 503, anything else 500 with the cause in the log); -1. */
int api_fail_index(struct api_call *c, int rc, struct err *err);

/* --- counts.c: coverage over time and facets (issue 26) ------------------ */

/* facets and facetSize into c->facets and c->facet_size. */
int api_get_facets(struct api_call *c);

/* When c asked for facets: drop the closing brace of the object rendered
 * into b and append ,"facets":{…}} for req's matches. 0, or -1 with the
 * error answered (b then belongs to the caller still). */
int api_facets_append(struct api_call *c, const struct index_request *req, struct buf *b);

/* GET /v2/everything/counts. */
void api_everything_counts(struct api_call *c);
/* res answered as the feed c->feed asks for. */
void api_respond_feed(struct api_call *c, const struct index_result *res);

/* --- stories.c: one story, many copies (issue 25) ---------------------- */

/* dedupe (an extension): true or false (the default) into *on. */
int api_get_dedupe(struct api_call *c, bool *on);
/* The validated search answered one article per story (dedupe=true). */
void api_respond_dedupe(struct api_call *c, const struct index_request *req);
/* GET /v2/stories and GET /v2/stories/{id} (id: the path's segment). */
void api_stories(struct api_call *c);
void api_story(struct api_call *c, const char *id, size_t len);

/* --- similar.c: similarTo on /v2/everything (issue 25) ---------------- */

/* /v2/everything with similarTo: the articles most like that one. */
void api_similar(struct api_call *c);

/* --- one file per endpoint --------------------------------------------- */

/* /v2/everything's filters into req (everything.c): the unsupported
 * country and category, the scope, then q, qInTitle, searchIn, sources,
 * domains, excludeDomains. The live stream shares them. */
int api_everything_filters(struct api_call *c, struct index_request *req);

void api_everything(struct api_call *c);
/* The cursor p (not "*") into req: its search goes on past the cursor's
 * place in req->sort's order (below its article newest first; after its
 * key and article in a ranked order, with a relevancy walk's statistics).
 * 0, or -1 with the error answered when p is not a cursor newsd wrote
 * ("...: how_to_start."), is a walk's in another order, or is another
 * search's ("... keep every parameter but cursor and keep."). */
int api_cursor_below(struct api_call *c, const struct api_param *p, struct index_request *req,
                     const char *how_to_start, const char *keep);
void api_everything_stream(struct api_call *c); /* stream.c */
void api_everything_export(struct api_call *c); /* export.c */
/* export.c: the node's exports (how many run, each key's articles of the
 * day); free waits for the running ones, whose streams the stopped server
 * has ended. */
struct api_exports;
int api_exports_new(struct api_exports **out);
void api_exports_free(struct api_exports *e);
void api_stream_metrics_init(void); /* stream.c: its series shown from the start */

/* alerts.c: /v2/alerts (GET: the key's alerts, POST: a new one) and
 * /v2/alerts/ID (GET, DELETE); id is the path's last segment. */
void api_alerts(struct api_call *c);
void api_alert(struct api_call *c, const char *id);
/* Validate an alert's query parameters as /v2/everything's filters, as if
 * c had been sent them: 0 with *req filled, or -1 with the error written
 * into c's response. */
int api_alert_query_validate(struct api_call *c, const struct api_params *params,
                             struct index_request *req);
/* Add an alert of key_id from c's body (POST /v2/alerts), validated and
 * stored: 0 with *r, or -1 with either the error written into c's response
 * or, when the store failed, *store_rc and err set (nothing written). */
int api_alert_add_call(struct api_call *c, int64_t key_id, int64_t max_per_key,
                       struct alert_record *r, int *store_rc, struct err *err);
void api_top_headlines(struct api_call *c);
void api_sources(struct api_call *c);

/* Keyless routes: the embedded OpenAPI document (openapi.c), the Prometheus
 * exposition (metrics.c), and the search page's files by name (web.c:
 * "index.html", "app.js", "style.css"). */
void api_openapi(struct api_call *c);
void api_metrics(struct api_call *c);
void api_web(struct api_call *c, const char *name);

#endif
