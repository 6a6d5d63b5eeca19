/* GET /v2/everything/export (docs/api.md, "Export: every match in a
 * file"): every match of /v2/everything's filters, newest first, as NDJSON
 * or CSV (api/export_format.h), streamed in constant memory.
 *
 * How: the request is checked and counted like a search (its errors are
 * NewsAPI's, before any byte of the body); then a thread of its own walks
 * the matches as cursor paging does (api/cursor.h: a search for the ids
 * below the last one written, EXPORT_BATCH at a time), reads each batch's
 * whole articles from the store (export_rows.h: a page's content is cut
 * to 200 characters) and writes them into a streamed response
 * (http/http.h), waiting whenever EXPORT_BUFFER_BYTES are unsent: it goes
 * as fast as the client reads and holds one batch at a time, whatever the
 * number of matches. Not a worker of the HTTP server: those answer
 * searches, and an export of millions of articles takes minutes.
 *
 * The end: a complete export ends its body normally. One that fails after
 * the headers (the index or the store failing) writes, in NDJSON, a last
 * line {"status":"error",...,"nextCursor":…} and then, in both formats,
 * breaks the connection off without ending the chunked body, which every
 * HTTP client reports as an incomplete transfer. Each line carries the
 * cursor that resumes after it (cursor=), so a client that lost its
 * connection goes on from the last line it has.
 *
 * Limits: the plan's export_per_day articles per key and UTC day, on this
 * node (an export whose matches pass what is left today is refused whole
 * before it starts: 429 exportLimitReached); at most LIMIT_EXPORTS_RUNNING
 * exports at once on the node (503 beyond). An export counts as one
 * request toward the key's request quota. */
#include "api/cursor.h"
#include "api/export_format.h"
#include "api/export_rows.h"
#include "api/internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/array.h"
#include "util/clock.h"
#include "util/jw.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/timefmt.h"

#include "util/banned.h"

/* Matches searched and read per step of the walk. */
#define EXPORT_BATCH 250
/* Unsent bytes an export lets wait for its client before it waits too. */
#define EXPORT_BUFFER_BYTES (1024 * 1024)
/* Bytes handed to the stream at a time (an article may be larger). */
#define EXPORT_WRITE_BYTES (64 * 1024)
/* How often a writer waiting for a client that reads nothing looks again
 * whether it is still there. */
#define EXPORT_WAIT_MS 1000
/* Whole articles read from the store (in one snapshot) and formatted at a
 * time, before their lines go to the client. */
#define EXPORT_ROWS 100

/* ---- the node's exports: how many run, and each key's articles today ---------- */

struct export_usage {
    int64_t key_id;
    int64_t day; /* UTC day number of n */
    int64_t n;   /* articles exported (or reserved by an export running) that day */
};

struct api_exports {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* running fell to 0 */
    int running;
    struct export_usage *usage;
    size_t n_usage, cap_usage;
};

int api_exports_new(struct api_exports **out)
{
    struct api_exports *e = calloc(1, sizeof *e);
    *out = NULL;
    if (!e)
        return ERR_NOMEM;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->idle, NULL);
    *out = e;
    return 0;
}

void api_exports_free(struct api_exports *e)
{
    if (!e)
        return;
    /* The server has stopped: every export's stream is ended, so each
     * thread finishes the batch in hand and goes. */
    pthread_mutex_lock(&e->lock);
    while (e->running > 0)
        pthread_cond_wait(&e->idle, &e->lock);
    pthread_mutex_unlock(&e->lock);
    pthread_cond_destroy(&e->idle);
    pthread_mutex_destroy(&e->lock);
    free(e->usage);
    free(e);
}

/* Under e->lock: key's entry for day (a new one, or one of an older day
 * started over); NULL on OOM. */
/* key_id's entry, whatever its day; NULL when it has none. */
static struct export_usage *usage_find(struct api_exports *e, int64_t key_id)
{
    for (size_t i = 0; i < e->n_usage; i++)
        if (e->usage[i].key_id == key_id)
            return &e->usage[i];
    return NULL;
}

/* key_id's entry for day: one of an earlier day starts again at 0. */
static struct export_usage *usage_of(struct api_exports *e, int64_t key_id, int64_t day)
{
    struct export_usage *u = usage_find(e, key_id);
    if (u) {
        if (u->day != day)
            *u = (struct export_usage){key_id, day, 0};
        return u;
    }
    if (array_reserve(&e->usage, &e->cap_usage, e->n_usage, 1, sizeof *e->usage) < 0)
        return NULL;
    e->usage[e->n_usage] = (struct export_usage){key_id, day, 0};
    return &e->usage[e->n_usage++];
}

enum take_result { TAKE_OK, TAKE_LIMIT, TAKE_BUSY, TAKE_NOMEM };

/* Start an export of n articles for key_id on day: within the plan's
 * limit (0: none) they are reserved and one more export runs. *left: what
 * the key had left today (for the message of TAKE_LIMIT). */
static enum take_result exports_take(struct api_exports *e, int64_t key_id, int64_t day,
                                     int64_t limit, uint64_t n, int64_t *left)
{
    enum take_result r = TAKE_OK;
    pthread_mutex_lock(&e->lock);
    struct export_usage *u = usage_of(e, key_id, day);
    if (!u) {
        r = TAKE_NOMEM;
    } else if (e->running >= LIMIT_EXPORTS_RUNNING) {
        r = TAKE_BUSY;
    } else {
        *left = limit > u->n ? limit - u->n : 0;
        if (limit > 0 && n > (uint64_t)*left) {
            r = TAKE_LIMIT;
        } else {
            u->n += (int64_t)n;
            e->running++;
        }
    }
    pthread_mutex_unlock(&e->lock);
    return r;
}

/* An export is over: it sent `sent` of the `reserved` articles it took
 * (more when articles matching were stored during it; fewer when it
 * failed or its client left). */
static void exports_done(struct api_exports *e, int64_t key_id, int64_t day, uint64_t reserved,
                         uint64_t sent)
{
    pthread_mutex_lock(&e->lock);
    /* Found, not reset: an export that ran past midnight leaves the new
     * day's count to the exports of the new day. */
    struct export_usage *u = usage_find(e, key_id);
    if (u && u->day == day) {
        u->n += (int64_t)sent - (int64_t)reserved;
        if (u->n < 0)
            u->n = 0;
    }
    if (--e->running == 0)
        pthread_cond_broadcast(&e->idle);
    pthread_mutex_unlock(&e->lock);
}

/* ---- the walk ------------------------------------------------------------------- */

struct export_job {
    struct api *api;
    struct http_stream *st;
    struct api_export_rows *rows;
    enum api_export_format format;
    struct index_request req; /* the search; its parts live in arena */
    struct arena arena;       /* the request's, taken over */
    uint64_t search;          /* api_cursor_search of the request */
    int64_t key_id, day;
    unsigned char key_hash[32]; /* to look the key up again (auth_key_state) */
    uint64_t reserved, sent;
    int64_t written; /* id of the last article the client was sent, or where the
                      * export resumed (INT64_MIN: from the newest) */
    char request_id[17];
};

/* data[0..len) into the stream, as fast as the client reads it: 0, or
 * ERR_IO when the client has gone (or the server stops). */
static int job_write(struct export_job *j, const char *data, size_t len)
{
    while (len > 0) {
        size_t k = len < EXPORT_WRITE_BYTES ? len : EXPORT_WRITE_BYTES;
        int rc;
        while ((rc = http_stream_wait_room(j->st, k, EXPORT_WAIT_MS)) == ERR_TIMEOUT)
            if (!http_stream_open(j->st))
                return ERR_IO;
        if (rc < 0 || (rc = http_stream_write(j->st, data, k)) < 0)
            return ERR_IO;
        data += k;
        len -= k;
    }
    return 0;
}

/* The cursor that goes on after article id. */
static void cursor_after(const struct export_job *j, int64_t id, char out[API_CURSOR_LEN + 1])
{
    struct api_cursor cur = {.search = j->search, .id = id};
    api_cursor_encode(&cur, out);
}

/* The end of an export after its headers: NDJSON's last line says why
 * (code, message) and where to go on; then the body is broken off
 * (http_stream_fail) in both formats. */
static void job_end_early(struct export_job *j, enum api_error code, const char *message)
{
    if (j->format == API_EXPORT_NDJSON) {
        struct buf b;
        buf_init(&b, 0);
        struct jw w;
        api_error_begin(&w, &b, api_error_code(code), message);
        jw_key(&w, "nextCursor");
        char next[API_CURSOR_LEN + 1];
        if (j->written != INT64_MIN) {
            cursor_after(j, j->written, next);
            jw_str(&w, next);
        } else {
            jw_null(&w); /* nothing was sent: start again without a cursor */
        }
        jw_obj_end(&w);
        buf_putc(&b, '\n');
        if (!buf_error(&b))
            job_write(j, b.data, b.len);
        buf_release(&b);
    }
    http_stream_fail(j->st);
}

static void job_fail(struct export_job *j, const char *why)
{
    log_error("request %s: export failed after %" PRIu64 " articles: %s", j->request_id, j->sent,
              why);
    job_end_early(j, API_ERR_UNEXPECTED,
                  "The export failed before its end. Resume it with nextCursor (the same "
                  "parameters and cursor=nextCursor).");
}

/* The key as it is now, looked up again between batches (through the key
 * cache, as a live stream does): an export whose key was disabled or
 * deleted while it ran ends there with apiKeyDisabled or apiKeyInvalid.
 * true while the key may go on; a store that cannot be read leaves the
 * key's state unknown, not changed. */
static bool job_key_still_valid(struct export_job *j)
{
    struct auth_result res;
    struct err err;
    err_clear(&err);
    if (auth_key_state(j->api->auth, j->key_hash, &res, &err) < 0 || res.status == AUTH_OK)
        return true;
    enum api_error code = res.status == AUTH_INVALID ? API_ERR_KEY_INVALID : API_ERR_KEY_DISABLED;
    log_info(
        "request %s: export of key %" PRId64 " ended after %" PRIu64 " articles: the key was %s",
        j->request_id, j->key_id, j->sent, code == API_ERR_KEY_INVALID ? "deleted" : "disabled");
    job_end_early(j, code,
                  code == API_ERR_KEY_INVALID
                      ? "The API key of this export was deleted while it ran; the export ended."
                      : "The API key of this export was disabled while it ran; the export ended.");
    return false;
}

/* A run of rows formatted (api_export_rows_each's callback): the lines go
 * to out, the client gets them once the rows' snapshot is over. */
struct rows_out {
    struct export_job *j;
    struct buf *out;
    int64_t last; /* the last article in out */
    uint64_t n;   /* articles in out */
};

static int row_format(void *ctx, const struct article *a)
{
    struct rows_out *r = ctx;
    char cur[API_CURSOR_LEN + 1];
    cursor_after(r->j, a->id, cur);
    api_export_article(r->out, r->j->format, a, cur);
    r->last = a->id;
    r->n++;
    return buf_error(r->out) ? ERR_NOMEM : 0;
}

/* ids[0..n) of one search batch, written: their whole articles read and
 * formatted EXPORT_ROWS at a time, written as the client reads. 0, ERR_IO
 * when the client went, another ERR_* (with why). */
static int job_rows(struct export_job *j, const int64_t *ids, size_t n, char *why, size_t why_len)
{
    struct buf out;
    struct err err;
    int rc = 0;
    err_clear(&err);
    buf_init(&out, 0);
    for (size_t at = 0; at < n && rc == 0; at += EXPORT_ROWS) {
        size_t k = n - at < EXPORT_ROWS ? n - at : EXPORT_ROWS;
        struct rows_out r = {.j = j, .out = &out};
        buf_reset(&out);
        rc = api_export_rows_each(j->rows, ids + at, k, row_format, &r, &err);
        if (rc == ERR_NOMEM && buf_error(&out))
            snprintf(why, why_len, "out of memory");
        else if (rc < 0)
            snprintf(why, why_len, "rows: %s", err_msg(&err, rc));
        else if (r.n && (rc = job_write(j, out.data, out.len)) == 0) {
            j->written = r.last;
            j->sent += r.n;
        }
    }
    buf_release(&out);
    return rc;
}

/* One batch: the next EXPORT_BATCH matches below *last_id (from the
 * newest when INT64_MIN), written. 1 when more may follow, 0 at the end,
 * ERR_IO when the client went, another ERR_* (with why) on a failure. */
static int job_batch(struct export_job *j, int64_t *last_id, char *why, size_t why_len)
{
    struct arena a;
    struct index_result res = {0};
    struct err err;
    int rc = 0;
    err_clear(&err);
    arena_init(&a, LIMIT_REQUEST_ARENA_BYTES);
    struct index_request req = j->req;
    req.offset = 0;
    req.limit = EXPORT_BATCH;
    req.ids_only = true; /* the rows are read whole below */
    req.no_total = true; /* a batch that is not full is the last */
    if (*last_id != INT64_MIN) {
        req.below = true;
        req.id_below = *last_id;
    }
    if (j->api->cfg.query_timeout_ms > 0)
        req.deadline_ms = clock_mono_ms() + j->api->cfg.query_timeout_ms;
    if (req.from <= req.to && (rc = index_search(j->api->index, &a, &req, &res, &err)) < 0) {
        snprintf(why, why_len, "search: %s", err_msg(&err, rc));
        goto out;
    }
    /* The ids alone: the page's JSON (content cut) is not what is sent. */
    int64_t *ids = arena_calloc(&a, res.n ? res.n : 1, sizeof *ids);
    if (!ids) {
        rc = ERR_NOMEM;
        snprintf(why, why_len, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < res.n; i++)
        ids[i] = res.docs[i].id;
    if ((rc = job_rows(j, ids, res.n, why, why_len)) < 0)
        goto out;
    /* Past every id of the batch, rows found or not. */
    if (res.n)
        *last_id = ids[res.n - 1];
    rc = res.n == EXPORT_BATCH ? 1 : 0;
out:
    arena_release(&a);
    return rc;
}

static void *job_main(void *arg)
{
    struct export_job *j = arg;
    int64_t last_id = j->req.below ? j->req.id_below : INT64_MIN;
    char why[256] = "";
    int rc;
    j->req.below = false; /* job_batch sets it from last_id */
    bool key_ok = true;
    while ((rc = job_batch(j, &last_id, why, sizeof why)) == 1 && (key_ok = job_key_still_valid(j)))
        ;
    if (!key_ok)
        ; /* ended with the key's error line */
    else if (rc == 0)
        http_stream_end(j->st);
    else if (rc != ERR_IO)
        job_fail(j, why);
    /* ERR_IO: the client went (or the server stops): nothing to tell. */
    /* Everything released first: api_free may return (and the server tear
     * down) as soon as the last export is done. */
    struct api_exports *e = j->api->exports;
    int64_t key_id = j->key_id, day = j->day;
    uint64_t reserved = j->reserved, sent = j->sent;
    http_stream_release(j->st);
    api_export_rows_close(j->rows);
    arena_release(&j->arena);
    free(j);
    exports_done(e, key_id, day, reserved, sent);
    return NULL;
}

/* ---- the request ------------------------------------------------------------------ */

/* format: ndjson (the default) or csv. */
static int get_format(struct api_call *c, enum api_export_format *out)
{
    bool csv;
    if (api_get_either(c, "format", "ndjson", "csv",
                       "The format parameter of an export must be ndjson or csv.", &csv) < 0)
        return -1;
    *out = csv ? API_EXPORT_CSV : API_EXPORT_NDJSON;
    return 0;
}

/* An export is every match, newest first: the parameters of a page and of
 * another order are refused rather than ignored. */
static int refuse_page_params(struct api_call *c, const struct index_request *req)
{
    static const char *const page[][2] = {{"page", "page"}, {"pagesize", "pageSize"}};
    for (size_t i = 0; i < 2; i++)
        if (api_first_value(c, page[i][0]))
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %s param is not supported on the /everything/export endpoint: "
                            "an export sends every match.",
                            page[i][1]);
    if (req->sort != INDEX_SORT_PUBLISHED_DESC)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "An export is sorted by publishedAt (newest first), the one order in "
                        "which it can resume where it stopped: sortBy must be publishedAt.");
    return 0;
}

/* cursor: go on below the article a line of an earlier export (or a
 * cursor page) of the same search ended with. */
static int get_resume(struct api_call *c, struct index_request *req)
{
    const struct api_param *p = api_params_first(&c->params, "cursor");
    if (!p || (p->len == 1 && p->value[0] == '*'))
        return 0;
    return api_cursor_below(c, p, req,
                            "leave it out to export from the newest match, or pass the cursor of "
                            "the last line you have",
                            "format as it was when the export started");
}

/* The number of matches (the rest of them below a cursor): 0, or -1 with
 * the error answered. */
static int count_matches(struct api_call *c, const struct index_request *req, uint64_t *total)
{
    struct index_request count = *req;
    struct index_result res;
    struct err err;
    err_clear(&err);
    *total = 0;
    if (req->from > req->to)
        return 0; /* an empty window (the plan's delay or history) */
    count.offset = 0;
    count.limit = 0;
    count.deadline_ms = api_deadline(c);
    int rc = index_search(c->api->index, &c->arena, &count, &res, &err);
    if (rc < 0)
        return api_fail_index(c, rc, &err);
    *total = res.total;
    return 0;
}

static void set_headers(struct api_call *c, enum api_export_format f, uint64_t total)
{
    char v[64];
    c->resp->status = 200;
    c->resp->content_type = api_export_content_type(f);
    snprintf(v, sizeof v, "attachment; filename=\"newsd-export.%s\"",
             f == API_EXPORT_CSV ? "csv" : "ndjson");
    http_response_add_header(c->resp, "Content-Disposition", v);
    snprintf(v, sizeof v, "%" PRIu64, total);
    http_response_add_header(c->resp, "X-Total-Results", v);
}

void api_everything_export(struct api_call *c)
{
    struct api *api = c->api;
    struct index_request req = {0};
    enum api_export_format format;
    bool from_given;
    uint64_t total;
    int64_t left = 0;
    struct export_job *j = NULL;
    struct err err;
    int rc;
    err_clear(&err);
    if (api_everything_filters(c, &req) < 0 ||
        api_get_dates(c, &req.from, &req.to, &from_given) < 0 ||
        api_get_language(c, &req.language) < 0 ||
        api_get_sort(c, INDEX_SORT_PUBLISHED_DESC, &req.sort) < 0 ||
        refuse_page_params(c, &req) < 0 || get_format(c, &format) < 0 || get_resume(c, &req) < 0 ||
        api_check_plan(c, 1, 1, &req.from, from_given, &req.to) < 0)
        return;
    c->searched = true; /* counts as one request from here, however it ends */
    if (count_matches(c, &req, &total) < 0)
        return;
    if (!strcmp(c->req->method, "HEAD")) { /* the headers a GET would get, no body */
        set_headers(c, format, total);
        return;
    }
    int64_t day = timefmt_day(c->now);
    switch (exports_take(api->exports, c->auth.key_id, day, c->auth.plan.export_per_day, total,
                         &left)) {
    case TAKE_OK:
        break;
    case TAKE_LIMIT:
        api_fail(c, API_ERR_EXPORT_LIMIT,
                 "This export has %" PRIu64 " articles; your plan allows %" PRId64
                 " articles exported a day and you have %" PRId64
                 " left today. Narrow it (from, to, q) or resume it tomorrow.",
                 total, c->auth.plan.export_per_day, left);
        return;
    case TAKE_BUSY:
        http_response_add_header(c->resp, "Retry-After", "10");
        api_fail(c, API_ERR_UNAVAILABLE,
                 "The server is running as many exports as it can at once; try again in a "
                 "moment.");
        return;
    case TAKE_NOMEM:
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    if (!(j = calloc(1, sizeof *j))) {
        rc = err_set(&err, ERR_NOMEM, "out of memory");
        goto fail_taken;
    }
    *j = (struct export_job){.api = api,
                             .format = format,
                             .req = req,
                             .search = api_cursor_search(&c->params),
                             .key_id = c->auth.key_id,
                             .day = day,
                             .reserved = total,
                             .written = req.below ? req.id_below : INT64_MIN};
    snprintf(j->request_id, sizeof j->request_id, "%s", c->req->request_id);
    memcpy(j->key_hash, c->auth.key_hash, sizeof j->key_hash);
    if ((rc = api_export_rows_open(&j->rows, api->index, &err)) < 0 ||
        (rc = http_stream_new(&j->st, EXPORT_BUFFER_BYTES, &err)) < 0)
        goto fail_job;
    struct buf head;
    buf_init(&head, 0);
    api_export_head(&head, format);
    rc = buf_error(&head) ? ERR_NOMEM
         : head.len       ? http_stream_write(j->st, head.data, head.len)
                          : 0; /* NDJSON has no head */
    buf_release(&head);
    if (rc < 0)
        goto fail_job;
    /* The search's parts (query trees, lists) live in the request's arena:
     * the job takes it over, and the request goes on with an empty one. */
    j->arena = c->arena;
    arena_init(&c->arena, LIMIT_REQUEST_ARENA_BYTES);
    pthread_attr_t attr;
    pthread_t tid;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    c->resp->stream = http_stream_ref(j->st); /* the server's reference; the job keeps its own */
    rc = pthread_create(&tid, &attr, job_main, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        http_stream_end(c->resp->stream);
        http_stream_release(c->resp->stream);
        c->resp->stream = NULL;
        arena_release(&c->arena);
        c->arena = j->arena; /* released by the request as usual */
        rc = err_set(&err, ERR_NOMEM, "cannot start the export's thread");
        goto fail_job;
    }
    set_headers(c, format, total);
    c->resp->log_note = "export";
    return;
fail_job:
    http_stream_release(j->st);
    api_export_rows_close(j->rows);
    free(j);
fail_taken:
    exports_done(api->exports, c->auth.key_id, day, total, 0);
    log_error("request %s: cannot start an export: %s", c->req->request_id, err_msg(&err, rc));
    api_fail(c, API_ERR_UNEXPECTED, NULL);
}
