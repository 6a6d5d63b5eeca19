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
 * The log is read through followers (push/follow.h): the hub's own, and
 * one per subscriber being replayed. Between passes with nothing to do it
 * waits on its follower (a commit, a new subscriber or stop wake it, at
 * most poll_ms). */
#include "push/live.h"
#include "push/follow.h"
#include "push/percolator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "article/json.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/sort.h"

#include "util/banned.h"

#define LIVE_BATCH 512         /* log rows per pass for the live subscribers */
#define LIVE_REPLAY_BATCH 1000 /* log rows per pass per replaying subscriber */
#define LIVE_WARN_EVERY_MS 60000
/* A replay's row callback: the row is past the hub's position, the replay
 * is over (a value of its own, below every ERR_*). */
#define LIVE_CAUGHT_UP (-1000)

struct sub {
    uint64_t id;
    int64_t pos;                /* rows with seq <= pos are not for it */
    struct index_matcher *m;    /* while replaying; the percolator's once live */
    struct push_follow *replay; /* while replaying: the log from pos on */
    bool live, dead;
    const struct push_live_sink *sink;
    void *ctx;
    int64_t last_ms;  /* when it was last sent something */
    struct sub *next; /* the incoming list */
};

struct push_live {
    struct push_live_config cfg;
    char *path;                    /* the log file */
    struct store_readers *readers; /* for the calls of other threads */
    struct percolator *perc;
    pthread_t thread;
    bool running;
    pthread_mutex_t lock;
    bool stop;            /* under lock */
    atomic_bool wake;     /* a new subscriber or stop: the thread's wait ends */
    struct sub *incoming; /* under lock, newest first */
    uint64_t next_id;     /* under lock */
    atomic_size_t count;
    /* the hub's thread only: */
    struct push_follow *follow; /* the log after pos */
    struct sub **subs;          /* ascending id */
    size_t n, cap;
    int64_t pos;       /* the log read up to here */
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

/* subs[] is sorted by id (ids only grow, new ones go last). */
static int sub_cmp_id(const void *element, const void *key)
{
    return sort_order_u64((*(struct sub *const *)element)->id, *(const uint64_t *)key);
}

static struct sub *sub_find(struct push_live *h, uint64_t id)
{
    size_t at = sort_lower_bound(h->subs, h->n, sizeof *h->subs, &id, sub_cmp_id);
    return at < h->n && h->subs[at]->id == id ? h->subs[at] : NULL;
}

static void sub_release(struct push_live *h, struct sub *s)
{
    push_follow_free(s->replay);
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
    push_follow_free(s->replay);
    s->replay = NULL;
    s->live = true; /* the percolator owns m, also on failure */
    int rc = percolator_add(h->perc, s->id, m, &err);
    if (rc < 0) {
        log_warn("live stream: cannot file a subscription: %s", err_msg(&err, rc));
        s->dead = true; /* nothing was filed: sub_release's remove finds nothing */
    }
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
        if (array_reserve(&h->subs, &h->cap, h->n, 1, sizeof *h->subs) < 0) {
            log_warn("live stream: out of memory admitting a subscriber");
            sub_release(h, s);
            continue;
        }
        h->subs[h->n++] = s;
        s->last_ms = clock_mono_ms();
        if (s->pos >= h->pos) {
            sub_go_live(h, s);
            continue;
        }
        struct err err;
        err_clear(&err);
        int rc = push_follow_new(&s->replay, h->path, s->pos, &err);
        if (rc < 0) {
            log_warn("live stream: cannot replay the log: %s", err_msg(&err, rc));
            s->dead = true;
        }
    }
}

/* The row's JSON in json (rendered once per row, whoever asks first). */
static bool row_json(const struct store_row *row, struct buf *json)
{
    if (!json->len) {
        struct article a;
        store_row_article(row, &a);
        article_json(json, &a);
    }
    if (buf_error(json)) {
        log_warn("live stream: cannot render article %lld", (long long)row->id);
        return false;
    }
    return true;
}

/* Hand one article to s. */
static int deliver(struct sub *s, const struct store_row *row, struct buf *json)
{
    if (!row_json(row, json))
        return 0;
    /* PUSH_LIVE_SLOW means nothing to a live subscriber: a live subscriber that cannot
     * keep up is its sink's to cut off (a bounded buffer). */
    int rc = s->sink->article(s->ctx, row->seq, row->id, row->published_at, json->data, json->len);
    s->last_ms = clock_mono_ms();
    if (rc < 0) {
        s->dead = true;
        return rc;
    }
    metrics_add(m_events, 1);
    return rc;
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

struct live_pass {
    struct push_live *h;
    struct buf *json;
    struct err *err;
};

/* push_follow_fn of the hub's follower: one committed row to the live
 * subscribers the percolator names. */
static int live_row(const struct store_row *row, const struct index_match_doc *doc, void *ctx)
{
    struct live_pass *p = ctx;
    struct push_live *h = p->h;
    uint64_t *ids = NULL;
    size_t n = 0;
    int rc = percolator_match(h->perc, doc, &ids, &n, p->err);
    if (rc < 0)
        return rc;
    buf_reset(p->json);
    for (size_t i = 0; i < n; i++) {
        struct sub *s = sub_find(h, ids[i]);
        if (s && s->live && !s->dead && row->seq > s->pos) {
            deliver(s, row, p->json);
            s->pos = row->seq;
        }
    }
    free(ids);
    return 0;
}

/* One batch of the log after h->pos. */
static void read_live(struct push_live *h, struct buf *json)
{
    struct err err;
    err_clear(&err);
    struct live_pass p = {.h = h, .json = json, .err = &err};
    /* No subscriber: the rows are passed over, not read. Preparing each
     * for the percolator took a third of the server's CPU while 5,000
     * articles/s were imported and no stream was open, and slowed the
     * index's own reading of them (bench/fresh.py). A subscriber admitted
     * later behind the new position is replayed up to it (admit). */
    int rc = h->n == 0 ? push_follow_skip(h->follow, &err)
                       : push_follow_poll(h->follow, live_row, &p, LIVE_BATCH, &err);
    h->pos = push_follow_position(h->follow);
    h->more = rc == LIVE_BATCH; /* (a skip is never a full batch) */
    if (rc == ERR_NOTFOUND) {
        /* The log's table was replaced (a replica started over, a store
         * rebuilt): its seqs are another table's, so every position is
         * void. The subscribers are let go (their clients reconnect) and
         * the hub starts again at the new head. */
        log_warn("live stream: the article log was replaced; closing every stream");
        for (size_t i = 0; i < h->n; i++)
            h->subs[i]->dead = true;
        struct push_follow *f = NULL;
        int64_t head = 0;
        if (push_live_head(h, &head, &err) == 0 && push_follow_new(&f, h->path, head, &err) == 0) {
            push_follow_free(h->follow);
            h->follow = f;
            h->pos = head;
        }
        return;
    }
    if (rc < 0)
        warn_read(h, "rows", &err, rc); /* the rest again next pass */
}

/* ---- replays ----------------------------------------------------------------- */

struct replay_pass {
    struct push_live *h;
    struct sub *s;
    struct buf *json;
};

/* push_follow_fn of a replay: rows up to the hub's position, tested with
 * the subscriber's own matcher. */
static int replay_row(const struct store_row *row, const struct index_match_doc *doc, void *ctx)
{
    struct replay_pass *p = ctx;
    struct sub *s = p->s;
    if (row->seq > p->h->pos)
        return LIVE_CAUGHT_UP; /* not taken: the live batches have it */
    s->pos = row->seq;
    if (!index_matcher_test(s->m, doc))
        return 0;
    buf_reset(p->json);
    int rc = deliver(s, row, p->json);
    if (rc < 0)
        return 1; /* taken; the subscriber is gone */
    return rc == PUSH_LIVE_SLOW ? 1 : 0;
}

/* One batch of s's replay; true when it made progress and is not done (the
 * hub should not wait). */
static bool replay_one(struct push_live *h, struct sub *s, struct buf *json)
{
    struct err err;
    err_clear(&err);
    struct replay_pass p = {.h = h, .s = s, .json = json};
    int rc = push_follow_poll(s->replay, replay_row, &p, LIVE_REPLAY_BATCH, &err);
    if (rc == LIVE_CAUGHT_UP || rc == 0) {
        /* Every row up to the hub's position seen: live from here. */
        s->pos = h->pos;
        sub_go_live(h, s);
        return false;
    }
    if (rc < 0) {
        warn_read(h, "replay", &err, rc);
        if (rc == ERR_NOTFOUND)
            s->dead = true; /* the table was replaced: its position means nothing */
        return false;
    }
    return !s->dead && rc == LIVE_REPLAY_BATCH;
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
        struct err err;
        err_clear(&err);
        int rc = push_follow_wait(h->follow, &h->wake, h->cfg.poll_ms, &err);
        if (rc < 0)
            warn_read(h, "wait", &err, rc);
        atomic_store(&h->wake, false);
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
    pthread_mutex_unlock(&h->lock);
    atomic_store(&h->wake, true);
    return 0;
}

size_t push_live_count(struct push_live *h)
{
    return atomic_load(&h->count);
}

int push_live_new(struct push_live **out, struct store_journal *l,
                  const struct push_live_config *cfg, struct err *err)
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
    atomic_init(&h->count, 0);
    atomic_init(&h->wake, false);
    if (!(h->path = strdup(store_journal_path(l)))) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = percolator_new(&h->perc, err)) < 0 ||
        (rc = store_readers_new(&h->readers, h->path, err)) < 0 ||
        (rc = push_live_head(h, &h->pos, err)) < 0 ||
        (rc = push_follow_new(&h->follow, h->path, h->pos, err)) < 0)
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
        pthread_mutex_unlock(&h->lock);
        atomic_store(&h->wake, true);
        pthread_join(h->thread, NULL);
    }
    free(h->subs);
    push_follow_free(h->follow);
    store_readers_free(h->readers);
    percolator_free(h->perc);
    pthread_mutex_destroy(&h->lock);
    free(h->path);
    free(h);
}
