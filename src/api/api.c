/* Routing and the request pipeline of the NewsAPI interface (api/api.h):
 * limits → route (404 before any key check) → method → key → endpoint.
 * One arena per request holds everything the request allocates. */
#include "api/internal.h"
#include "api/metrics.h"
#include "util/limits.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/clock.h"
#include "util/version.h"
#include "util/banned.h"

int api_new(struct api **out, struct store *s, struct index *idx, struct auth *auth,
            const struct api_config *cfg, struct err *err)
{
    struct api *api = calloc(1, sizeof *api);
    if (!api)
        return err_set(err, ERR_NOMEM, "out of memory");
    api->store = s;
    api->index = idx;
    api->auth = auth;
    api->cfg = *cfg;
    if (api_exports_new(&api->exports) < 0) {
        free(api);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&api->streams_lock, NULL);
    pthread_mutex_init(&api->health_lock, NULL);
    if (api->cfg.stream_buffer_bytes == 0)
        api->cfg.stream_buffer_bytes = LIMIT_STREAM_BUFFER_BYTES;
    struct push_live_config lc = {.keepalive_ms = api->cfg.stream_keepalive_ms,
                                  .replay_window_s = api->cfg.stream_replay_window_s};
    struct err lerr;
    err_clear(&lerr);
    /* An api without an index (`newsd alerts add`'s) has no streams. */
    int lrc = idx ? push_live_new(&api->live, index_journal(idx), &lc, &lerr) : 0;
    if (lrc < 0) /* searches need no streams: answer those 503 and go on */
        log_warn("live streams unavailable: %s", err_msg(&lerr, lrc));
    if (api->cfg.live_window_seconds <= 0)
        api->cfg.live_window_seconds = LIMIT_LIVE_WINDOW_SECONDS;
    if (api->cfg.result_window < 0)
        api->cfg.result_window = LIMIT_RESULT_WINDOW;
    api_metrics_init();
    api_stream_metrics_init();
    *out = api;
    return 0;
}

void api_free(struct api *api)
{
    if (!api)
        return;
    push_live_free(api->live);      /* releases every stream still open */
    api_exports_free(api->exports); /* waits for the running exports */
    free(api->stream_counts);
    pthread_mutex_destroy(&api->streams_lock);
    pthread_mutex_destroy(&api->health_lock);
    free(api);
}

int64_t api_now(const struct api *api)
{
    if (api->cfg.fixed_now)
        return api->cfg.fixed_now;
    return (int64_t)time(NULL);
}

enum route {
    ROUTE_NONE,
    ROUTE_EVERYTHING,
    ROUTE_COUNTS, /* issue 26: /v2/everything/counts */
    ROUTE_STREAM,
    ROUTE_EXPORT,
    ROUTE_TOP_HEADLINES,
    ROUTE_SOURCES,
    ROUTE_HEALTH,
    ROUTE_LIVE,
    /* keyless routes of issue 10: the page, the OpenAPI document, metrics */
    ROUTE_WEB_INDEX,
    ROUTE_WEB_JS,
    ROUTE_WEB_CSS,
    ROUTE_OPENAPI,
    ROUTE_METRICS,
    /* webhook alerts (issue 17): the list, and one alert by id */
    ROUTE_ALERTS,
    ROUTE_ALERT,
    /* stories (issue 25): the stories of a search, and one story by id */
    ROUTE_STORIES,
    ROUTE_STORY,
};

/* Every path newsd answers (404 routeNotFound for the rest). */
static const struct {
    const char *path;
    enum route route;
} routes[] = {
    {"/v2/everything", ROUTE_EVERYTHING},
    {"/v2/everything/stream", ROUTE_STREAM},
    {"/v2/everything/export", ROUTE_EXPORT},
    {"/v2/everything/counts", ROUTE_COUNTS},
    {"/v2/top-headlines", ROUTE_TOP_HEADLINES},
    {"/v2/top-headlines/sources", ROUTE_SOURCES},
    {"/v2/sources", ROUTE_SOURCES},
    {"/healthz", ROUTE_HEALTH},
    {"/livez", ROUTE_LIVE},
    {"/", ROUTE_WEB_INDEX},
    {"/app.js", ROUTE_WEB_JS},
    {"/style.css", ROUTE_WEB_CSS},
    {"/v2/openapi.json", ROUTE_OPENAPI},
    {"/metrics", ROUTE_METRICS},
    {"/v2/alerts", ROUTE_ALERTS},
    {"/v2/stories", ROUTE_STORIES},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])

#define ALERT_PREFIX "/v2/alerts/"

/* The path after the optional newsapi.org prefix (the npm client can only
 * be redirected that way). */
static const char *path_unprefixed(const char *path)
{
    static const char *const prefixes[] = {"/https://newsapi.org", "/http://newsapi.org"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(path, prefixes[i], n) && (path[n] == '/' || path[n] == '\0'))
            return path + n;
    }
    return path;
}

#define STORY_PREFIX "/v2/stories/"

/* prefix + ID (one optional trailing slash): ID's length, 0 when path is
 * not such a path. */
static size_t path_segment(const char *path, const char *prefix, const char **seg)
{
    path = path_unprefixed(path);
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n))
        return 0;
    *seg = path + n;
    size_t len = strlen(*seg);
    if (len > 0 && (*seg)[len - 1] == '/')
        len--;
    return len > 0 && !memchr(*seg, '/', len) ? len : 0;
}

/* /v2/alerts/ID: ID's length, 0 when path is not such a path. */
static size_t alert_segment(const char *path, const char **seg)
{
    return path_segment(path, ALERT_PREFIX, seg);
}

/* Match the path after the optional newsapi.org prefix and one optional
 * trailing slash. */
static enum route route_of(const char *path)
{
    const char *seg;
    if (alert_segment(path, &seg))
        return ROUTE_ALERT;
    if (path_segment(path, STORY_PREFIX, &seg))
        return ROUTE_STORY;
    path = path_unprefixed(path);
    size_t len = strlen(path);
    if (len > 1 && path[len - 1] == '/')
        len--;
    for (size_t i = 0; i < N_ROUTES; i++)
        if (strlen(routes[i].path) == len && !strncmp(path, routes[i].path, len))
            return routes[i].route;
    return ROUTE_NONE;
}

/* For the access log of a 404: how much of the path is made of segments
 * that begin some route ("/v2", "/v2/top-headlines"); what follows is not
 * logged, since it may be anything (a key, pasted in the wrong place). */
static size_t known_path_prefix(const char *path)
{
    size_t best = 1; /* "/" */
    for (const char *seg = strchr(path + (path[0] == '/'), '/');; seg = strchr(seg + 1, '/')) {
        size_t len = seg ? (size_t)(seg - path) : strlen(path);
        bool begins_a_route = false;
        for (size_t i = 0; i < N_ROUTES && !begins_a_route; i++) {
            const char *r = routes[i].path;
            begins_a_route =
                strlen(r) >= len && !strncmp(r, path, len) && (r[len] == '/' || r[len] == '\0');
        }
        if (!begins_a_route)
            break;
        best = len;
        if (!seg)
            break;
    }
    return best;
}

/* Whether the request waited in the queue for longer than a search may
 * take: it is answered 503 before it reaches the search (and the quota). */
static bool waited_past_budget(const struct api_call *c)
{
    int64_t budget = c->api->cfg.query_timeout_ms;
    return budget > 0 && c->req->received_ms > 0 && clock_mono_ms() - c->req->received_ms > budget;
}

/* ---- NUL bytes ------------------------------------------------------------
 * No parameter or header value may hold a NUL byte: C strings would read it
 * cut short (a key "KEY%00zz" authenticated as KEY, "sortBy=relevancy%00x"
 * was relevancy), so a NUL is refused rather than dropped with what follows.
 * A decoded %00 is seen in the parameter's value (its length is kept); a
 * raw NUL in the URL or a header the HTTP layer reports (http.h). */

static bool holds_nul(const struct api_param *p)
{
    return memchr(p->value, '\0', p->len) != NULL;
}

static bool is_key_header(const char *name)
{
    return !strcasecmp(name, "X-Api-Key") || !strcasecmp(name, "Authorization");
}

/* Whether a key was sent with a NUL byte, in any of the three places. */
static bool key_holds_nul(struct api_call *c)
{
    for (size_t i = 0; i < c->params.n; i++)
        if (!strcmp(c->params.items[i].name, "apikey") && holds_nul(&c->params.items[i]))
            return true;
    return c->req->nul_header && is_key_header(c->req->nul_header);
}

/* A parameter's name as the API documents it (names arrive lower-cased). */
static const char *param_display_name(const char *name)
{
    static const char *const names[] = {
        "q",        "qInTitle", "searchIn", "sources", "domains", "excludeDomains", "from",  "to",
        "language", "sortBy",   "pageSize", "page",    "country", "category",       "apiKey"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i]))
            return names[i];
    return name;
}

static int fail_nul_header(struct api_call *c)
{
    return api_fail(c, API_ERR_PARAMETER_INVALID,
                    "The %.64s header contains a NUL byte, which no header value may contain.",
                    c->req->nul_header);
}

/* After the key check: a NUL in any parameter value or other header is
 * parameterInvalid naming it. 0, or -1 with the error written. */
static int check_nul(struct api_call *c)
{
    for (size_t i = 0; i < c->params.n; i++)
        if (holds_nul(&c->params.items[i]))
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %.64s parameter contains a NUL byte (%%00), which no value may "
                            "contain.",
                            param_display_name(c->params.items[i].name));
    if (c->req->nul_header)
        return fail_nul_header(c);
    return 0;
}

/* The key as sent: apiKey parameter, X-Api-Key header, Authorization header
 * with or without "Bearer " — the first non-empty one wins. */
static const char *presented_key(struct api_call *c)
{
    const char *k = api_first_value(c, "apikey");
    if (k && *k)
        return k;
    k = http_request_header(c->req, "X-Api-Key");
    if (k && *k)
        return k;
    k = http_request_header(c->req, "Authorization");
    if (k) {
        if (!strncasecmp(k, "Bearer ", 7))
            k += 7;
        while (*k == ' ')
            k++;
        if (*k)
            return k;
    }
    return NULL;
}

/* 200 when the node can serve. 503 "starting" while the search index is
 * being built (the first start on a store). A node with a local index of a
 * PostgreSQL store answers from it (and says how far it trails the store):
 * 503 until it has caught up once since it started ("database
 * unreachable" while it cannot reach the store at all), then 200 even
 * while the store is unreachable, since searches do not need it. 503 "index
 * disagrees" when the index, caught up with the table, holds another
 * number of articles than the table (index_count_check): searches would
 * answer from a stale or foreign index. */
/* How long /healthz reuses the table's count: counting the rows is a
 * scan of an index, 54 ms at 10 M articles on the 2-core bench machine,
 * paid by every probe of a load balancer or of `newsd` watchers. Only a
 * count that agreed with the index is reused, so a disagreement is seen
 * at most this late and never held longer than it lasts. */
#define HEALTH_COUNT_REUSE_MS 5000

static bool health_counts_recent(struct api *api, bool ready, struct index_count_check *cc,
                                 int64_t *rows)
{
    if (!ready)
        return false;
    pthread_mutex_lock(&api->health_lock);
    bool recent =
        api->health_at_ms != 0 && clock_mono_ms() - api->health_at_ms < HEALTH_COUNT_REUSE_MS;
    if (recent) {
        *cc = api->health_cc;
        *rows = api->health_rows;
    }
    pthread_mutex_unlock(&api->health_lock);
    return recent;
}

static void health_counts_keep(struct api *api, bool ready, const struct index_count_check *cc,
                               int64_t rows)
{
    if (!ready || (cc->compared && cc->rows != cc->documents))
        return;
    pthread_mutex_lock(&api->health_lock);
    api->health_at_ms = clock_mono_ms();
    api->health_cc = *cc;
    api->health_rows = rows;
    pthread_mutex_unlock(&api->health_lock);
}

static void respond_health(struct api_call *c)
{
    struct store_journal_status rs;
    struct index_count_check cc = {0};
    int64_t n = 0;
    struct err err;
    err_clear(&err);
    index_replica_status(c->api->index, &rs);
    bool ready = index_ready(c->api->index);
    if (!health_counts_recent(c->api, ready, &cc, &n)) {
        if (ready && index_count_check(c->api->index, &cc, &err) < 0) {
            api_fail(c, API_ERR_UNAVAILABLE, NULL);
            return;
        }
        /* The table's count once: the check's when it read it (a
         * replica's comes from its status below, live) */
        if (cc.compared) {
            n = cc.rows;
        } else if (!rs.replica && store_articles_count(c->api->store, &n, &err) < 0) {
            api_fail(c, API_ERR_UNAVAILABLE, NULL);
            return;
        }
        health_counts_keep(c->api, ready, &cc, n);
    }
    if (rs.replica)
        n = rs.articles;
    bool disagree = cc.compared && cc.rows != cc.documents;
    /* A node started while its database was down has never caught up:
     * say why it waits rather than "catching up" with nothing. */
    bool unreachable = rs.replica && !rs.caught_up && !rs.store_reachable;
    bool ok = ready && (!rs.replica || rs.caught_up) && !disagree;
    char body[1024];
    int len = snprintf(body, sizeof body, "{\"status\":\"%s\",\"store\":\"%s\",\"articles\":%lld",
                       !ready        ? "starting"
                       : disagree    ? "index disagrees"
                       : ok          ? "ok"
                       : unreachable ? "database unreachable"
                                     : "catching up",
                       store_kind(c->api->store), (long long)n);
    if (disagree)
        len += snprintf(body + len, sizeof body - (size_t)len,
                        ",\"indexed\":%lld,\"message\":\"The search index holds %lld articles but "
                        "the articles table %lld (was the database replaced or edited behind "
                        "newsd?): searches answer from the index. newsd index verify says which; "
                        "to rebuild, stop newsd and remove the index directory.\"",
                        (long long)cc.documents, (long long)cc.documents, (long long)cc.rows);
    if (ready && !ok && unreachable)
        len += snprintf(body + len, sizeof body - (size_t)len,
                        ",\"message\":\"PostgreSQL cannot be reached: this node has not caught up "
                        "with it since it started, and becomes ready by itself when it is back.\"");
    if (rs.replica)
        len += snprintf(body + len, sizeof body - (size_t)len,
                        ",\"lag_seq\":%lld,\"lag_seconds\":%.3f,\"applied_seq\":%lld,"
                        "\"store_reachable\":%s",
                        (long long)rs.lag_seq, rs.lag_seconds, (long long)rs.applied_seq,
                        rs.store_reachable ? "true" : "false");
    len += snprintf(body + len, sizeof body - (size_t)len, ",\"version\":\"%s (commit %s)\"}",
                    version_release(), version_commit());
    c->resp->body = malloc((size_t)len + 1);
    if (!c->resp->body) {
        c->resp->status = 500;
        return;
    }
    memcpy(c->resp->body, body, (size_t)len + 1);
    c->resp->len = (size_t)len;
    c->resp->status = ok ? 200 : 503;
}

/* Access-Control-Allow-Origin for a plan that restricts origins. */
static void cors_for_plan(struct api_call *c)
{
    const char *allowed = c->auth.plan.allowed_origins;
    if (!allowed[0])
        return;
    const char *origin = http_request_header(c->req, "Origin");
    size_t olen = origin ? strlen(origin) : 0;
    const char *p = allowed;
    const char *first = NULL;
    size_t first_len = 0;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ' ' && *e != ',')
            e++;
        if (e > p) {
            if (!first) {
                first = p;
                first_len = (size_t)(e - p);
            }
            if (origin && olen == (size_t)(e - p) && !strncmp(origin, p, olen)) {
                http_response_add_header(c->resp, "Access-Control-Allow-Origin", origin);
                return;
            }
        }
        p = e;
    }
    if (first) {
        char value[256];
        snprintf(value, sizeof value, "%.*s", (int)first_len, first);
        http_response_add_header(c->resp, "Access-Control-Allow-Origin", value);
    }
}

static void rate_limit_headers(struct api_call *c)
{
    char v[32];
    if (!c->auth.limited)
        return;
    snprintf(v, sizeof v, "%lld", (long long)c->auth.limit);
    http_response_add_header(c->resp, "X-RateLimit-Limit", v);
    snprintf(v, sizeof v, "%lld", (long long)(c->auth.remaining > 0 ? c->auth.remaining : 0));
    http_response_add_header(c->resp, "X-RateLimit-Remaining", v);
    snprintf(v, sizeof v, "%lld", (long long)c->auth.reset);
    http_response_add_header(c->resp, "X-RateLimit-Reset", v);
}

/* Key checks; 0 when the request may go on, -1 when the error is written. */
static int check_key(struct api_call *c)
{
    struct err err;
    err_clear(&err);
    if (key_holds_nul(c))
        return api_fail(c, API_ERR_KEY_INVALID, NULL); /* no key has one */
    const char *key = presented_key(c);
    if (auth_check(c->api->auth, key, c->now, &c->auth, &err) < 0) {
        log_error("request %s: key check failed: %s", c->req->request_id, err_msg(&err, -1));
        return api_fail(c, API_ERR_UNAVAILABLE, NULL);
    }
    char v[32];
    switch (c->auth.status) {
    case AUTH_OK:
        cors_for_plan(c); /* the X-RateLimit-* headers come at the end (api_handle) */
        return 0;
    case AUTH_MISSING:
        return api_fail(c, API_ERR_KEY_MISSING, NULL);
    case AUTH_INVALID:
        return api_fail(c, API_ERR_KEY_INVALID, NULL);
    case AUTH_DISABLED:
        return api_fail(c, API_ERR_KEY_DISABLED, NULL);
    case AUTH_PLAN_UNKNOWN:
        /* NewsAPI's code (clients branch on it), but the truth in the
         * message: the key is fine, its plan is gone from the config. */
        return api_fail(c, API_ERR_KEY_DISABLED,
                        "Your API key's plan is not defined on this server, so the key cannot "
                        "be used. The server's operator can define the plan in its "
                        "configuration or move the key to another plan.");
    case AUTH_EXHAUSTED:
        rate_limit_headers(c);
        return api_fail(c, API_ERR_KEY_EXHAUSTED, NULL);
    case AUTH_RATE_LIMITED:
        snprintf(v, sizeof v, "%lld",
                 (long long)(c->auth.retry_after > 0 ? c->auth.retry_after : 1));
        http_response_add_header(c->resp, "Retry-After", v);
        rate_limit_headers(c);
        return api_fail(c, API_ERR_RATE_LIMITED, NULL);
    }
    return api_fail(c, API_ERR_UNEXPECTED, NULL);
}

/* The endpoint label a route is counted under in /metrics. */
static enum metrics_endpoint metrics_endpoint_of(enum route route)
{
    switch (route) {
    case ROUTE_EVERYTHING:
    case ROUTE_COUNTS: /* a search of /v2/everything's, counted */
        return METRICS_EP_EVERYTHING;
    case ROUTE_STORIES: /* their own label: a grouping costs more than a page */
    case ROUTE_STORY:
        return METRICS_EP_STORIES;
    case ROUTE_STREAM:
        return METRICS_EP_STREAM;
    case ROUTE_EXPORT:
        return METRICS_EP_EXPORT;
    case ROUTE_TOP_HEADLINES:
        return METRICS_EP_TOP_HEADLINES;
    case ROUTE_SOURCES:
        return METRICS_EP_SOURCES;
    case ROUTE_HEALTH:
    case ROUTE_LIVE:
        return METRICS_EP_HEALTHZ;
    case ROUTE_WEB_INDEX:
    case ROUTE_WEB_JS:
    case ROUTE_WEB_CSS:
        return METRICS_EP_WEB;
    case ROUTE_OPENAPI:
        return METRICS_EP_OPENAPI;
    case ROUTE_METRICS:
        return METRICS_EP_METRICS;
    case ROUTE_ALERTS:
    case ROUTE_ALERT:
        return METRICS_EP_ALERTS;
    case ROUTE_NONE:
        break;
    }
    return METRICS_EP_NONE;
}

/* The routes of the NewsAPI interface, which check a key. */
static bool route_takes_key(enum route route)
{
    return route == ROUTE_EVERYTHING || route == ROUTE_COUNTS || route == ROUTE_STREAM ||
           route == ROUTE_EXPORT || route == ROUTE_TOP_HEADLINES || route == ROUTE_SOURCES ||
           route == ROUTE_ALERTS || route == ROUTE_ALERT || route == ROUTE_STORIES ||
           route == ROUTE_STORY;
}

/* The methods a route answers (the Allow header of its 405). Only the
 * alerts change anything: every other route is GET and HEAD. */
static const char *route_methods(enum route route)
{
    switch (route) {
    case ROUTE_ALERTS:
        return "GET, HEAD, POST, OPTIONS";
    case ROUTE_ALERT:
        return "GET, HEAD, DELETE, OPTIONS";
    default:
        return "GET, HEAD, OPTIONS";
    }
}

static bool route_allows(enum route route, const char *method)
{
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
        return true;
    return (route == ROUTE_ALERTS && !strcmp(method, "POST")) ||
           (route == ROUTE_ALERT && !strcmp(method, "DELETE"));
}

static int fail_method(struct api_call *c, enum route route)
{
    const char *allow = route_methods(route);
    http_response_add_header(c->resp, "Allow", allow);
    if (route != ROUTE_ALERTS && route != ROUTE_ALERT)
        return api_fail(c, API_ERR_METHOD_NOT_ALLOWED, NULL);
    return api_fail(c, API_ERR_METHOD_NOT_ALLOWED, "This method is not allowed. Use %.40s.", allow);
}

size_t api_body_limit(const char *method, const char *path, void *ctx)
{
    (void)ctx;
    return !strcmp(method, "POST") && route_of(path) == ROUTE_ALERTS ? LIMIT_ALERT_BODY_BYTES : 0;
}

/* Answer a route of the NewsAPI interface, the key checked. */
static void respond_keyed(struct api_call *c, enum route route)
{
    if (c->api->cfg.test_search_delay_ms > 0) {
        /* Tests wait for this line to know a request has started, rather
         * than sleeping and hoping it has. */
        log_info("request %s: test delay of %lld ms begins", c->req->request_id,
                 (long long)c->api->cfg.test_search_delay_ms);
        clock_sleep_ms(c->api->cfg.test_search_delay_ms);
    }
    switch (route) {
    case ROUTE_EVERYTHING:
        api_everything(c);
        break;
    case ROUTE_STREAM:
        api_everything_stream(c);
        break;
    case ROUTE_EXPORT:
        api_everything_export(c);
        break;
    case ROUTE_COUNTS:
        api_everything_counts(c);
        break;
    case ROUTE_TOP_HEADLINES:
        api_top_headlines(c);
        break;
    case ROUTE_SOURCES:
        api_sources(c);
        break;
    case ROUTE_ALERTS:
        api_alerts(c);
        break;
    case ROUTE_ALERT: {
        const char *seg = NULL;
        size_t len = alert_segment(c->req->path, &seg);
        const char *id = arena_strndup(&c->arena, seg, len);
        if (id)
            api_alert(c, id);
        else
            api_fail(c, API_ERR_UNEXPECTED, NULL);
        break;
    }
    case ROUTE_STORIES:
        api_stories(c);
        break;
    case ROUTE_STORY: {
        const char *seg = NULL;
        size_t len = path_segment(c->req->path, STORY_PREFIX, &seg);
        api_story(c, seg, len);
        break;
    }
    default:
        api_fail(c, API_ERR_ROUTE_NOT_FOUND, NULL);
    }
}

/* Answer a keyless route. */
static void respond_keyless(struct api_call *c, enum route route)
{
    switch (route) {
    case ROUTE_HEALTH:
        respond_health(c);
        break;
    case ROUTE_LIVE:
        /* Liveness: the process answers. Unlike /healthz (readiness), it
         * asks nothing of the store or the index, so it stays 200 while a
         * first start builds the index and while the store is away. */
        c->resp->status = 200;
        c->resp->body = strdup("{\"status\":\"alive\"}");
        c->resp->len = c->resp->body ? strlen(c->resp->body) : 0;
        if (!c->resp->body)
            c->resp->status = 500;
        break;
    case ROUTE_WEB_INDEX:
        api_web(c, "index.html");
        break;
    case ROUTE_WEB_JS:
        api_web(c, "app.js");
        break;
    case ROUTE_WEB_CSS:
        api_web(c, "style.css");
        break;
    case ROUTE_OPENAPI:
        api_openapi(c);
        break;
    case ROUTE_METRICS:
        api_metrics(c);
        break;
    default:
        api_fail(c, API_ERR_ROUTE_NOT_FOUND, NULL);
    }
}

void api_handle(const struct http_request *req, struct http_response *resp, void *ctx)
{
    int64_t started_us = clock_mono_us();
    enum route route = ROUTE_NONE;
    struct api_call c = {0};
    c.api = ctx;
    c.req = req;
    c.resp = resp;
    c.now = api_now(c.api);
    arena_init(&c.arena, LIMIT_REQUEST_ARENA_BYTES);

    if (req->body_announced) {
        /* Called on the I/O thread (http.h): answer, never run. A POST to
         * /v2/alerts whose body was not read was too large (or chunked). */
        enum route r = route_of(req->path);
        if (r == ROUTE_ALERTS && !strcmp(req->method, "POST")) {
            api_fail(&c, API_ERR_BODY_TOO_LARGE, NULL);
        } else if (!route_allows(r, req->method)) {
            fail_method(&c, r);
        } else {
            api_fail(&c, API_ERR_BODY_NOT_ALLOWED, NULL);
        }
        goto out;
    }
    if (req->url_bytes > LIMIT_URL_BYTES) {
        api_fail(&c, API_ERR_URL_TOO_LARGE, NULL);
        goto out;
    }
    if (req->header_bytes > LIMIT_HEADER_BYTES) {
        api_fail(&c, API_ERR_HEADERS_TOO_LARGE, NULL);
        goto out;
    }
    if (req->target_nul) {
        api_fail(&c, API_ERR_PARAMETER_INVALID,
                 "The request URL contains a NUL byte, which no URL may contain.");
        goto out;
    }
    route = route_of(req->path);
    /* With --metrics-listen, /metrics lives on that listener only. */
    if (route == ROUTE_METRICS && c.api->cfg.metrics_elsewhere)
        route = ROUTE_NONE;
    if (route == ROUTE_NONE) {
        resp->log_path_len = known_path_prefix(req->path);
        api_fail(&c, API_ERR_ROUTE_NOT_FOUND, NULL);
        goto out;
    }
    if (!route_allows(route, req->method)) {
        fail_method(&c, route);
        goto out;
    }
    if (!route_takes_key(route)) {
        if (req->nul_header)
            fail_nul_header(&c);
        else
            respond_keyless(&c, route);
        goto out;
    }
    if (waited_past_budget(&c)) {
        http_response_add_header(resp, "Retry-After", "1");
        resp->log_note = "queue wait exceeded the time budget";
        api_fail(&c, API_ERR_UNAVAILABLE,
                 "The server is too busy to answer in time. Try again in a moment.");
        goto out;
    }
    if (api_params_parse(&c.arena, req->query, strlen(req->query), &c.params) < 0) {
        api_fail(&c, API_ERR_UNEXPECTED, NULL);
        goto out;
    }
    int key_rc = check_key(&c);
    if (c.auth.key_id > 0)
        resp->log_key_id = c.auth.key_id;
    if (key_rc < 0)
        goto out;
    if (check_nul(&c) == 0)
        respond_keyed(&c, route);
    if (c.auth.status == AUTH_OK) {
        /* A 5xx before the search (a store failure, the index still being
         * built) does not count toward the quota; once the search ran the
         * request counts, however it ended: a query made slow on purpose
         * until the time budget stops it must not be free (API.md §8). */
        /* A feed reader's poll answered 304 (nothing new) costs nothing
         * either: readers poll every few minutes (docs/api.md). */
        if ((resp->status >= 500 && !c.searched) || resp->status == 304) {
            auth_uncount(c.api->auth, c.auth.key_id, c.now);
            if (c.auth.limited)
                c.auth.remaining++;
        }
        rate_limit_headers(&c);
    }
out:
    arena_release(&c.arena);
    api_metrics_request_record(metrics_endpoint_of(route), resp->status,
                               (uint64_t)(clock_mono_us() - started_us));
}
