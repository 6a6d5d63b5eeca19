/* GET /v2/everything/stream (docs/api.md "Live streams"): the filters of
 * /v2/everything, answered as Server-Sent Events — one `event: article`
 * per newly stored or updated matching article, `id:` its seq, `data:`
 * its NewsAPI JSON on one line — from the live hub (push/live.h) through
 * a streamed response (http/http.h). Also the per-key count of open
 * streams that the plan's `streams` limits (on this node).
 *
 * A stream answers to its key for as long as it is open, not only when it
 * opens: each time the hub asks whether it is alive, the key is looked up
 * again (auth_key_state, through the key cache: what `newsd keys` changes
 * is seen within the cache's time, as by every other request). A deleted
 * or disabled key, or a plan that allows fewer streams than the key has
 * open, ends the stream with one `event: error`. Each article is held to
 * the plan's history window and delay at the moment it is sent. */
#include "api/internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/match.h"
#include "push/seen.h"
#include "util/array.h"
#include "util/log.h"
#include "util/metrics.h"

#include "util/banned.h"

#define STREAM_CONTENT_TYPE "text/event-stream; charset=utf-8"

/* ---- open streams per key ---------------------------------------------------- */

struct api_stream_count {
    int64_t key_id;
    int64_t n;
};

/* Take one of the key's streams when fewer than limit are open (0: no
 * limit). false when it has them all (or on OOM: the table cannot grow). */
static bool streams_take(struct api *api, int64_t key_id, int64_t limit)
{
    bool ok = false;
    pthread_mutex_lock(&api->streams_lock);
    size_t i;
    for (i = 0; i < api->n_stream_counts; i++)
        if (api->stream_counts[i].key_id == key_id)
            break;
    if (i == api->n_stream_counts) {
        if (array_reserve(&api->stream_counts, &api->cap_stream_counts, api->n_stream_counts, 1,
                          sizeof *api->stream_counts) < 0)
            goto out;
        api->stream_counts[api->n_stream_counts++] = (struct api_stream_count){key_id, 0};
    }
    if (limit > 0 && api->stream_counts[i].n >= limit)
        goto out;
    api->stream_counts[i].n++;
    ok = true;
out:
    pthread_mutex_unlock(&api->streams_lock);
    return ok;
}

static void streams_give_back(struct api *api, int64_t key_id)
{
    pthread_mutex_lock(&api->streams_lock);
    for (size_t i = 0; i < api->n_stream_counts; i++) {
        if (api->stream_counts[i].key_id != key_id)
            continue;
        if (--api->stream_counts[i].n <= 0) /* keys with none open leave the table */
            api->stream_counts[i] = api->stream_counts[--api->n_stream_counts];
        break;
    }
    pthread_mutex_unlock(&api->streams_lock);
}

/* ---- the hub's sink: SSE into the streamed response ---------------------------- */

struct stream_sub {
    struct api *api;
    struct http_stream *st;
    int64_t key_id;
    unsigned char key_hash[32]; /* to look the key up again */
    struct auth_plan plan;      /* the key's plan at the last look (hub's thread) */
    bool counted;               /* holds one of the key's streams (streams_take) */
    struct push_seen *seen;     /* dedupe=true: the stories sent; NULL: every article */
};

static struct metric *slow_metric(void)
{
    /* Registered once; later calls return the same handle. */
    return metrics_counter("newsd_stream_slow_disconnects_total",
                           "Live streams cut off because their client did not read what was "
                           "sent (the per-stream buffer filled).");
}

void api_stream_metrics_init(void)
{
    slow_metric();
}

/* A write's outcome for the hub: a full buffer is a client too slow. */
static int sink_result(struct stream_sub *s, int rc)
{
    if (rc == ERR_FULL) {
        metrics_add(slow_metric(), 1);
        log_info("live stream of key %" PRId64 ": client too slow to read, disconnected",
                 s->key_id);
    }
    if (rc < 0)
        return -1;
    return http_stream_pending(s->st) > s->api->cfg.stream_buffer_bytes / 2 ? PUSH_LIVE_SLOW : 0;
}

/* dedupe=true: the tail of an article sent as its story's first
 * (",\"storyId\":…,\"storySize\":1}", after NewsAPI's keys as a search's
 * dedupe writes them), or a whole `event: copy` frame for a later copy.
 * *copy: which; false and an empty tail when the story cannot be read (the
 * article goes as NewsAPI's). */
static void story_part(struct stream_sub *s, int64_t seq, int64_t id, char *out, size_t cap,
                       bool *copy)
{
    int64_t story;
    struct err err;
    err_clear(&err);
    *copy = false;
    out[0] = '\0';
    if (index_story_of(s->api->index, id, &story, &err) < 0)
        return;
    uint64_t n = push_seen_add(s->seen, story);
    if (n > 1) {
        *copy = true;
        snprintf(out, cap,
                 "id: %" PRId64 "\nevent: copy\ndata: {\"storyId\":\"%" PRId64
                 "\",\"storySize\":%" PRIu64 "}\n\n",
                 seq, story, n);
        return;
    }
    snprintf(out, cap, ",\"storyId\":\"%" PRId64 "\",\"storySize\":1}", story);
}

static int sink_article(void *ctx, int64_t seq, int64_t id, int64_t published_at, const char *json,
                        size_t len)
{
    struct stream_sub *s = ctx;
    int64_t from = INT64_MIN, to = INT64_MAX;
    api_plan_window(&s->plan, api_now(s->api), &from, &to);
    if (published_at < from || published_at > to)
        return 0; /* outside what the plan shows now: as /v2/everything would hide it */
    char tail[160] = "";
    bool copy = false;
    if (s->seen && len > 0 && json[len - 1] == '}') {
        story_part(s, seq, id, tail, sizeof tail, &copy);
        if (copy) /* counted, not sent again */
            return sink_result(s, http_stream_write(s->st, tail, strlen(tail)));
        if (tail[0])
            len--; /* the closing brace comes with the tail */
    }
    char head[64];
    int n = snprintf(head, sizeof head, "id: %" PRId64 "\nevent: article\ndata: ", seq);
    size_t tlen = strlen(tail);
    /* One write: a frame is sent whole or not at all. */
    size_t total = (size_t)n + len + tlen + 2;
    char *frame = malloc(total);
    if (!frame)
        return -1;
    memcpy(frame, head, (size_t)n);
    memcpy(frame + n, json, len);
    memcpy(frame + n + len, tail, tlen);
    memcpy(frame + n + len + tlen, "\n\n", 2);
    int rc = http_stream_write(s->st, frame, total);
    free(frame);
    return sink_result(s, rc);
}

static int sink_idle(void *ctx)
{
    struct stream_sub *s = ctx;
    static const char ka[] = ": keep-alive\n\n";
    return sink_result(s, http_stream_write(s->st, ka, sizeof ka - 1));
}

/* `event: error` with NewsAPI's error envelope as its data, into b (a new
 * buffer; an append failure is its sticky error). */
static void error_event(struct buf *b, enum api_error e, const char *message,
                        const char *request_id)
{
    struct http_response tmp = {0};
    api_error_respond(&tmp, e, message, request_id);
    buf_init(b, 0);
    buf_puts(b, "event: error\ndata: ");
    buf_append(b, tmp.body ? tmp.body : "", tmp.body ? tmp.len : 0);
    buf_puts(b, "\n\n");
    free(tmp.body);
}

/* One `event: error` into an open stream (its last event: the caller
 * ends the stream). */
static void sink_error_event(struct stream_sub *s, enum api_error e, const char *message)
{
    struct buf b;
    error_event(&b, e, message, NULL);
    if (!buf_error(&b))
        http_stream_write(s->st, b.data, b.len);
    buf_release(&b);
}

/* Whether the key's streams now exceed its plan's: this one gives its
 * place back then (the hub asks the streams one after another, so the
 * count falls to the limit and the rest stay open). */
static bool streams_over_plan(struct stream_sub *s)
{
    bool over = false;
    if (s->plan.streams <= 0 || !s->counted)
        return false;
    pthread_mutex_lock(&s->api->streams_lock);
    for (size_t i = 0; i < s->api->n_stream_counts; i++)
        if (s->api->stream_counts[i].key_id == s->key_id)
            over = s->api->stream_counts[i].n > s->plan.streams;
    pthread_mutex_unlock(&s->api->streams_lock);
    if (over) {
        streams_give_back(s->api, s->key_id);
        s->counted = false;
    }
    return over;
}

/* The key as it is now; false (with an error event) when the stream must end. */
static bool sink_key_still_valid(struct stream_sub *s)
{
    struct auth_result res;
    struct err err;
    err_clear(&err);
    int rc = auth_key_state(s->api->auth, s->key_hash, &res, &err);
    if (rc < 0)
        return true; /* the store is away: the key's state is unknown, not changed */
    if (res.status == AUTH_INVALID) {
        sink_error_event(s, API_ERR_KEY_INVALID, NULL);
        log_info("live stream of key %" PRId64 ": the key was deleted; stream ended", s->key_id);
        return false;
    }
    if (res.status != AUTH_OK) {
        sink_error_event(s, API_ERR_KEY_DISABLED, NULL);
        log_info("live stream of key %" PRId64 ": the key is disabled; stream ended", s->key_id);
        return false;
    }
    s->plan = res.plan;
    if (streams_over_plan(s)) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "Your plan now allows %" PRId64 " streams open at once; this one was closed.",
                 s->plan.streams);
        sink_error_event(s, API_ERR_TOO_MANY_STREAMS, msg);
        log_info("live stream of key %" PRId64 ": over the plan's streams; stream ended",
                 s->key_id);
        return false;
    }
    return true;
}

static bool sink_alive(void *ctx)
{
    struct stream_sub *s = ctx;
    return http_stream_open(s->st) && sink_key_still_valid(s);
}

static void sink_release(void *ctx)
{
    struct stream_sub *s = ctx;
    http_stream_end(s->st);
    http_stream_release(s->st);
    if (s->counted)
        streams_give_back(s->api, s->key_id);
    push_seen_free(s->seen);
    free(s);
}

static const struct push_live_sink sse_sink = {
    .article = sink_article,
    .idle = sink_idle,
    .alive = sink_alive,
    .release = sink_release,
};

/* ---- the request ------------------------------------------------------------- */

/* /v2/everything's paging, ordering and date window mean nothing to a
 * stream of what comes: refused rather than silently ignored, so that a
 * client reusing its search's parameters learns they do not apply. */
static int refuse_search_params(struct api_call *c)
{
    const char *name = api_params_search_only(&c->params);
    if (name)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s param is not supported on the /everything/stream endpoint: a "
                        "stream sends articles as they are stored, newest last.",
                        name);
    return 0;
}

/* The position to resume after: the Last-Event-ID header (what an
 * EventSource sends when it reconnects), else the lastEventId parameter.
 * *pos -1 when neither is given. */
static int get_position(struct api_call *c, int64_t *pos)
{
    *pos = -1;
    const char *v = http_request_header(c->req, "Last-Event-ID");
    const char *name = "Last-Event-ID header";
    if (!v || !*v) {
        v = api_first_value(c, "lasteventid");
        name = "lastEventId parameter";
    }
    if (!v || !*v)
        return 0;
    uint64_t n;
    if (!api_parse_digits(v, strlen(v), &n))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s must be the id of an event this stream sent (a whole number).",
                        name);
    *pos = (int64_t)n;
    return 0;
}

/* A 200 stream holding one `event: error`, then closed. */
static void respond_error_event(struct api_call *c, enum api_error e, const char *message)
{
    struct buf b;
    error_event(&b, e, message, c->req->request_id);
    api_respond_rendered(c, &b);
    c->resp->content_type = STREAM_CONTENT_TYPE;
    /* The end of the body must end the stream for the client: close. */
    http_response_add_header(c->resp, "Connection", "close");
}

void api_everything_stream(struct api_call *c)
{
    struct api *api = c->api;
    /* The plan's window is applied to each article as it is sent (it moves
     * with the clock, and with the key's plan): the matcher has none. */
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX};
    int64_t from = INT64_MIN, to = INT64_MAX;
    struct index_matcher *m = NULL;
    struct http_stream *st = NULL;
    struct stream_sub *sub = NULL;
    struct err err;
    int64_t pos;
    bool dedupe;
    int rc;
    err_clear(&err);
    if (refuse_search_params(c) < 0 || api_everything_filters(c, &req) < 0 ||
        api_get_language(c, &req.language) < 0 || api_get_dedupe(c, &dedupe) < 0 ||
        get_position(c, &pos) < 0 || api_check_plan(c, 1, 1, &from, false, &to) < 0)
        return;
    if (!api->live) {
        api_fail(c, API_ERR_UNAVAILABLE, "Live streams are not available on this server.");
        return;
    }
    if (!strcmp(c->req->method, "HEAD")) { /* the headers a GET would get, no stream */
        c->resp->status = 200;
        c->resp->content_type = STREAM_CONTENT_TYPE;
        return;
    }
    if (!streams_take(api, c->auth.key_id, c->auth.plan.streams)) {
        api_fail(c, API_ERR_TOO_MANY_STREAMS,
                 "You have too many streams open at once: your plan allows %" PRId64
                 ". Close one and try again.",
                 c->auth.plan.streams);
        return;
    }
    c->searched = true; /* the stream counts as one request, however it ends */
    if (pos >= 0) {
        bool expired = false;
        if ((rc = push_live_position_check(api->live, pos, c->now, &expired, &err)) < 0)
            goto fail;
        if (expired) {
            streams_give_back(api, c->auth.key_id);
            respond_error_event(c, API_ERR_STREAM_POSITION_EXPIRED,
                                "This stream position is older than the server's replay "
                                "window; open a new stream (without Last-Event-ID) and use "
                                "/v2/everything for what was missed.");
            return;
        }
    } else if ((rc = push_live_head(api->live, &pos, &err)) < 0) {
        goto fail;
    }
    if ((rc = index_matcher_new(&m, &req, &err)) < 0 ||
        (rc = http_stream_new(&st, api->cfg.stream_buffer_bytes, &err)) < 0)
        goto fail;
    /* A first line at once, so that clients and proxies see the stream open. */
    static const char hello[] = ": newsd live stream\n\n";
    if ((rc = http_stream_write(st, hello, sizeof hello - 1)) < 0)
        goto fail;
    if (!(sub = malloc(sizeof *sub))) {
        rc = err_set(&err, ERR_NOMEM, "out of memory");
        goto fail;
    }
    *sub = (struct stream_sub){
        .api = api, .st = st, .key_id = c->auth.key_id, .plan = c->auth.plan, .counted = true};
    if (dedupe && (sub->seen = push_seen_new()) == NULL) {
        free(sub);
        sub = NULL;
        rc = err_set(&err, ERR_NOMEM, "out of memory");
        goto fail;
    }
    memcpy(sub->key_hash, c->auth.key_hash, sizeof sub->key_hash);
    /* One reference for the server, ours for the hub (sink_release). */
    c->resp->stream = http_stream_ref(st);
    c->resp->status = 200;
    c->resp->content_type = STREAM_CONTENT_TYPE;
    rc = push_live_subscribe(api->live, m, pos, &sse_sink, sub, &err);
    m = NULL; /* taken */
    if (rc < 0) {
        http_stream_end(st);
        http_stream_release(c->resp->stream);
        c->resp->stream = NULL;
        push_seen_free(sub->seen);
        free(sub);
        goto fail;
    }
    return;
fail:
    index_matcher_free(m);
    http_stream_release(st);
    streams_give_back(api, c->auth.key_id);
    log_error("request %s: cannot open a live stream: %s", c->req->request_id, err_msg(&err, rc));
    api_fail(c, rc == ERR_NOMEM ? API_ERR_UNEXPECTED : API_ERR_UNAVAILABLE, NULL);
}
