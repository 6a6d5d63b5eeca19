/* The live streams' hub (push/live.h).
 *
 * The hub's thread owns every subscriber: new ones wait in `incoming`
 * (under the lock) until the thread admits them, and only the thread
 * drops them, so the subscriber table (sorted by id, ids handed out in
 * ascending order) needs no lock. Each pass of the thread:
 *   1. admits new subscribers: one at or past the hub's position goes
 *      live at once (its matcher filed in the percolator), one behind it
 *      is replayed first;
 *   2. reads one batch of the log after the hub's position, when the
 *      log's data version moved (or the last batch was full), and hands
 *      each row to the live subscribers the percolator names;
 *   3. replays one batch for each subscriber behind (its own matcher,
 *      rows (pos, hub position]); one that reaches the hub's position
 *      goes live — on this thread, between two batches, which is why the
 *      hand-over neither skips nor repeats a row;
 *   4. calls idle on the subscribers quiet for the keep-alive interval,
 *      and drops the ones whose sink said they are gone.
 * It sleeps poll_ms between passes with nothing to do. */
#include "push/live.h"
#include "push/percolator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "article/json.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/metrics.h"

#include "util/banned.h"

#define LIVE_BATCH 512          /* log rows per pass for the live subscribers */
#define LIVE_REPLAY_BATCH 1000  /* log rows per pass per replaying subscriber */
#define LIVE_WARN_EVERY_MS 60000

struct sub {
    uint64_t id;
    int64_t pos;              /* rows with seq <= pos are not for it */
    struct index_matcher *m;  /* while replaying; the percolator's once live */
    bool live, dead;
    const struct push_live_sink *sink;
    void *ctx;
    int64_t last_ms; /* when it was last sent something */
    struct sub *next; /* the incoming list */
};

struct push_live {
    struct push_live_config cfg;
    struct store_readers *readers; /* for the calls of other threads */
    struct percolator *perc;
    pthread_t thread;
    bool running;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;            /* under lock */
    struct sub *incoming; /* under lock, newest first */
    uint64_t next_id;     /* under lock */
    atomic_size_t count;
    /* the hub's thread only: */
    struct store_reader *reader;
    struct sub **subs; /* ascending id */
    size_t n, cap;
    size_t n_live;
    int64_t pos;       /* the log read up to here */
    int64_t version;   /* the log's data version when last read */
    bool more;         /* the last batch was full */
    int64_t warned_ms; /* last log-read warning */
    int64_t alive_ms;  /* when the sinks were last asked whether they are alive */
};

static struct metric *m_open, *m_events;

static void metrics_init(void)
{
    m_open = metrics_gauge("newsd_streams_open", "Live streams open (GET /v2/everything/stream).");
    m_events = metrics_counter("newsd_stream_events_total",
                               "Articles sent to live streams (one per stream it matched).");
}

/* ---- subscribers ------------------------------------------------------------- */

static struct sub *sub_find(struct push_live *h, uint64_t id)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->subs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n && h->subs[lo]->id == id ? h->subs[lo] : NULL;
}

static void sub_release(struct push_live *h, struct sub *s)
{
    if (s->live)
        percolator_remove(h->perc, s->id);
    else
        index_matcher_free(s->m);
    s->sink->release(s->ctx);
    free(s);
    atomic_fetch_sub(&h->count, 1);
    metrics_set(m_open, (int64_t)atomic_load(&h->count));
}

/* File s's matcher in the percolator: from now on the live batches reach it. */
static void sub_go_live(struct push_live *h, struct sub *s)
{
    struct err err;
    err_clear(&err);
    struct index_matcher *m = s->m;
    s->m = NULL;
    s->live = true; /* the percolator owns m, also on failure */
    int rc = percolator_add(h->perc, s->id, m, &err);
    if (rc < 0) {
        log_warn("live stream: cannot file a subscription: %s", err_msg(&err, rc));
        percolator_remove(h->perc, s->id);
        s->dead = true;
        return;
    }
    h->n_live++;
}

/* Take the subscribers waiting in incoming (ids ascending: appended in order). */
static void admit(struct push_live *h, struct sub *list)
{
    /* incoming is newest first: reverse to admit in id order. */
    struct sub *rev = NULL;
    while (list) {
        struct sub *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    for (struct sub *s = rev, *next; s; s = next) {
        next = s->next;
        s->next = NULL;
        if (h->n == h->cap) {
            size_t cap = h->cap ? h->cap * 2 : 16;
            struct sub **p = realloc(h->subs, cap * sizeof *p);
            if (!p) {
                log_warn("live stream: out of memory admitting a subscriber");
                sub_release(h, s);
                continue;
            }
            h->subs = p;
            h->cap = cap;
        }
        h->subs[h->n++] = s;
        s->last_ms = clock_mono_ms();
        if (s->pos >= h->pos)
            sub_go_live(h, s);
    }
}

/* Hand one article to s. */
static void deliver(struct sub *s, const struct store_row *row, struct buf *json)
{
    if (!json->len) {
        article_json_row(json, row);
        if (buf_error(json)) {
            log_warn("live stream: cannot render article %lld", (long long)row->id);
            return;
        }
    }
    /* PUSH_LIVE_SLOW means nothing here: a live subscriber that cannot
     * keep up is its sink's to cut off (a bounded buffer). */
    int rc = s->sink->article(s->ctx, row->seq, json->data, json->len);
    s->last_ms = clock_mono_ms();
    if (rc < 0) {
        s->dead = true;
        return;
    }
    metrics_add(m_events, 1);
}

static void warn_read(struct push_live *h, const char *what, struct err *err, int rc)
{
    int64_t now = clock_mono_ms();
    if (now - h->warned_ms < LIVE_WARN_EVERY_MS && h->warned_ms)
        return;
    h->warned_ms = now;
    log_warn("live stream: cannot read the article log (%s): %s", what, err_msg(err, rc));
}

/* ---- the live batch ----------------------------------------------------------- */

static int dispatch_row(struct push_live *h, const struct store_row *row, struct buf *json,
                        struct err *err)
{
    struct index_match_doc *doc = NULL;
    uint64_t *ids = NULL;
    size_t n = 0;
    int rc;
    if ((rc = index_match_doc_new(&doc, row, err)) < 0 ||
        (rc = percolator_match(h->perc, doc, &ids, &n, err)) < 0)
        goto out;
    buf_reset(json);
    for (size_t i = 0; i < n; i++) {
        struct sub *s = sub_find(h, ids[i]);
        if (s && s->live && !s->dead && row->seq > s->pos) {
            deliver(s, row, json);
            s->pos = row->seq;
        }
    }
out:
    free(ids);
    index_match_doc_free(doc);
    return rc;
}

/* One batch of the log after h->pos, when there may be one. */
static void read_live(struct push_live *h, struct buf *json)
{
    struct err err;
    err_clear(&err);
    int64_t version = 0;
    int rc = store_reader_version(h->reader, &version, &err);
    if (rc < 0) {
        warn_read(h, "version", &err, rc);
        return;
    }
    if (version == h->version && !h->more)
        return;
    struct store_rows *rows = NULL;
    struct store_row row;
    size_t n = 0;
    if ((rc = store_reader_begin(h->reader, &err)) < 0) {
        warn_read(h, "begin", &err, rc);
        return;
    }
    if ((rc = store_rows_after(&rows, h->reader, h->pos, &err)) < 0)
        goto out;
    while (n < LIVE_BATCH && (rc = store_rows_next(rows, &row, &err)) == 1) {
        n++;
        if (h->n_live && (rc = dispatch_row(h, &row, json, &err)) < 0)
            break;
        h->pos = row.seq;
    }
out:
    store_rows_free(rows);
    store_reader_end(h->reader, NULL);
    if (rc < 0) {
        warn_read(h, "rows", &err, rc);
        return; /* the same batch again next pass */
    }
    h->version = version;
    h->more = n == LIVE_BATCH;
}

/* ---- replays ----------------------------------------------------------------- */

/* One batch of s's replay; true when it made progress and is not done (the
 * hub should not sleep). */
static bool replay_one(struct push_live *h, struct sub *s, struct buf *json)
{
    struct err err;
    err_clear(&err);
    struct store_rows *rows = NULL;
    struct store_row row;
    size_t n = 0;
    bool done = false, slow = false;
    int rc;
    if ((rc = store_reader_begin(h->reader, &err)) < 0) {
        warn_read(h, "begin", &err, rc);
        return false;
    }
    if ((rc = store_rows_after(&rows, h->reader, s->pos, &err)) < 0)
        goto out;
    while (!slow && !s->dead && n < LIVE_REPLAY_BATCH) {
        if ((rc = store_rows_next(rows, &row, &err)) <= 0) {
            done = rc == 0;
            break;
        }
        if (row.seq > h->pos) {
            done = true;
            break;
        }
        n++;
        struct index_match_doc *doc = NULL;
        if ((rc = index_match_doc_new(&doc, &row, &err)) < 0)
            break;
        if (index_matcher_test(s->m, doc)) {
            buf_reset(json);
            article_json_row(json, &row);
            int src = buf_error(json) ? 0 : s->sink->article(s->ctx, row.seq, json->data, json->len);
            s->last_ms = clock_mono_ms();
            if (src < 0)
                s->dead = true;
            else
                metrics_add(m_events, 1);
            slow = src == PUSH_LIVE_SLOW;
        }
        index_match_doc_free(doc);
        s->pos = row.seq;
    }
out:
    store_rows_free(rows);
    store_reader_end(h->reader, NULL);
    if (rc < 0) {
        warn_read(h, "replay", &err, rc);
        return false;
    }
    if (done && !s->dead) {
        s->pos = h->pos;
        sub_go_live(h, s);
        return false;
    }
    return !slow && !s->dead;
}

/* ---- the thread ---------------------------------------------------------------- */

static void keepalive_and_sweep(struct push_live *h)
{
    int64_t now = clock_mono_ms();
    bool ask = now - h->alive_ms >= PUSH_LIVE_ALIVE_MS;
    if (ask)
        h->alive_ms = now;
    size_t w = 0;
    for (size_t i = 0; i < h->n; i++) {
        struct sub *s = h->subs[i];
        if (!s->dead && ask && !s->sink->alive(s->ctx))
            s->dead = true;
        if (!s->dead && now - s->last_ms >= h->cfg.keepalive_ms) {
            s->last_ms = now;
            if (s->sink->idle(s->ctx) < 0)
                s->dead = true;
        }
        if (s->dead) {
            if (s->live)
                h->n_live--;
            sub_release(h, s);
            continue;
        }
        h->subs[w++] = s;
    }
    h->n = w;
}

static void *hub_main(void *arg)
{
    struct push_live *h = arg;
    struct buf json;
    buf_init(&json, LIMIT_RESPONSE_BYTES);
    for (;;) {
        pthread_mutex_lock(&h->lock);
        bool stop = h->stop;
        struct sub *in = h->incoming;
        h->incoming = NULL;
        pthread_mutex_unlock(&h->lock);
        if (stop) {
            admit(h, in);
            break;
        }
        admit(h, in);
        read_live(h, &json);
        bool busy = h->more;
        for (size_t i = 0; i < h->n; i++)
            if (!h->subs[i]->live && !h->subs[i]->dead && replay_one(h, h->subs[i], &json))
                busy = true;
        keepalive_and_sweep(h);
        if (busy)
            continue;
        pthread_mutex_lock(&h->lock);
        if (!h->stop && !h->incoming) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            int64_t ns = until.tv_nsec + h->cfg.poll_ms * 1000000;
            until.tv_sec += ns / 1000000000;
            until.tv_nsec = ns % 1000000000;
            pthread_cond_timedwait(&h->cond, &h->lock, &until);
        }
        pthread_mutex_unlock(&h->lock);
    }
    for (size_t i = 0; i < h->n; i++)
        sub_release(h, h->subs[i]);
    h->n = 0;
    buf_release(&json);
    return NULL;
}

/* ---- the interface ----------------------------------------------------------------- */

int push_live_head(struct push_live *h, int64_t *out, struct err *err)
{
    struct store_reader *r = NULL;
    int rc;
    *out = 0;
    if ((rc = store_readers_get(h->readers, &r, err)) < 0)
        return rc;
    rc = store_reader_head(r, out, err);
    store_readers_put(h->readers, r);
    return rc;
}

int push_live_position_check(struct push_live *h, int64_t pos, int64_t now, bool *expired,
                             struct err *err)
{
    struct store_reader *r = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    int64_t head = 0;
    int rc;
    *expired = false;
    if ((rc = store_readers_get(h->readers, &r, err)) < 0)
        return rc;
    if ((rc = store_reader_begin(r, err)) < 0 || (rc = store_reader_head(r, &head, err)) < 0)
        goto out;
    if (pos >= head)
        goto out;
    /* The oldest change after pos: when it is older than the window, so is
     * pos (rows are written in seq order). When every row after pos has
     * gone (deleted), there is nothing to replay and nothing missed. */
    if ((rc = store_rows_after(&rows, r, pos, err)) < 0)
        goto out;
    if ((rc = store_rows_next(rows, &row, err)) < 0)
        goto out;
    if (rc == 1)
        *expired = row.ingested_at < now - h->cfg.replay_window_s;
    rc = 0;
out:
    store_rows_free(rows);
    store_readers_put(h->readers, r);
    return rc;
}

int push_live_subscribe(struct push_live *h, struct index_matcher *m, int64_t pos,
                        const struct push_live_sink *sink, void *ctx, struct err *err)
{
    struct sub *s = calloc(1, sizeof *s);
    if (!s) {
        index_matcher_free(m);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    s->pos = pos;
    s->m = m;
    s->sink = sink;
    s->ctx = ctx;
    atomic_fetch_add(&h->count, 1);
    metrics_set(m_open, (int64_t)atomic_load(&h->count));
    pthread_mutex_lock(&h->lock);
    s->id = ++h->next_id;
    s->next = h->incoming;
    h->incoming = s;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    return 0;
}

size_t push_live_count(struct push_live *h)
{
    return atomic_load(&h->count);
}

int push_live_new(struct push_live **out, struct store_log *l, const struct push_live_config *cfg,
                  struct err *err)
{
    struct push_live *h = calloc(1, sizeof *h);
    int rc;
    *out = NULL;
    if (!h)
        return err_set(err, ERR_NOMEM, "out of memory");
    metrics_init();
    h->cfg = *cfg;
    if (h->cfg.keepalive_ms <= 0)
        h->cfg.keepalive_ms = PUSH_LIVE_KEEPALIVE_MS_DEFAULT;
    if (h->cfg.replay_window_s <= 0)
        h->cfg.replay_window_s = PUSH_LIVE_REPLAY_WINDOW_S_DEFAULT;
    if (h->cfg.poll_ms <= 0)
        h->cfg.poll_ms = PUSH_LIVE_POLL_MS_DEFAULT;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    atomic_init(&h->count, 0);
    h->version = -1;
    if ((rc = percolator_new(&h->perc, err)) < 0 ||
        (rc = store_readers_new(&h->readers, store_log_path(l), err)) < 0 ||
        (rc = store_reader_open(&h->reader, store_log_path(l), err)) < 0 ||
        (rc = store_reader_head(h->reader, &h->pos, err)) < 0)
        goto fail;
    if (pthread_create(&h->thread, NULL, hub_main, h) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot start the live streams' thread");
        goto fail;
    }
    h->running = true;
    *out = h;
    return 0;
fail:
    push_live_free(h);
    return rc;
}

void push_live_free(struct push_live *h)
{
    if (!h)
        return;
    if (h->running) {
        pthread_mutex_lock(&h->lock);
        h->stop = true;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
    }
    free(h->subs);
    store_reader_close(h->reader);
    store_readers_free(h->readers);
    percolator_free(h->perc);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
