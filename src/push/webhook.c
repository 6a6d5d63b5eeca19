/* The webhook alerts' delivery worker (push/webhook.h). One thread runs a
 * loop of four steps, every poll_ms or at once when there is more to do:
 *
 *   lease   every lease_ms/3: take or renew the leases (store), and make the
 *           local set of alerts that: new ones compiled into the
 *           percolator, lost or removed ones dropped, an alert whose cursor
 *           moved elsewhere restarted from the store's cursor;
 *   follow  read the log after the lowest cursor of the set, match each
 *           row against the percolator, and append a match to its alert's
 *           batch when the row is past that alert's own cursor; a batch of
 *           LIMIT_ALERT_ARTICLES, or one left at the end of what was read,
 *           becomes a delivery stored with the new cursor (store_alert_
 *           advance: one transaction, a compare and set on lease and cursor);
 *   cursor  an alert that matched nothing still moves its stored cursor,
 *           every CURSOR_WRITE_MS (nothing is lost by writing it late: the
 *           rows in between matched nothing, and are read again);
 *   send    record the outcome of each POST that finished (done, or the
 *           next attempt's time), then start the oldest waiting delivery of
 *           each alert whose time has come and that has none in flight (one
 *           per alert: order), as long as push/sched.h gives it a slot: the
 *           slots go round the keys, at most SEND_PER_HOST to one receiver
 *           and SEND_PER_KEY to one key.
 *
 * The POSTs run on up to SEND_SLOTS sender threads, one POST each at a
 * time (started when first needed): the worker never waits for a webhook,
 * a slow or dead receiver holds only its own slots, and a POST that ends
 * wakes the worker, which starts the next one at once. A sender touches
 * only its job (copies of the URL, body and headers); the alerts' state is
 * the worker's alone.
 *
 * An alert's state: stored_cursor is the store's cursor (what an advance
 * compares against), read_cursor how far the log has been read for it
 * (>= stored_cursor; the batch holds the matches in between, copies the
 * story copies met in between, written with the cursor).
 *
 * "dedupe": true (issue 25): a match whose story (push_follow_story) the
 * alert delivered already is counted, not batched. The stories delivered
 * are the live streams' memory (push/seen.h, PUSH_SEEN_MAX stories at
 * least), loaded from the store (store_alert_stories) when the alert is
 * taken up and whenever its reading starts over from the stored cursor;
 * a delivery writes the stories it sends first with it, so the memory a
 * restart or another node loads is exactly what was delivered up to the
 * stored cursor. */
#include "push/webhook.h"
#include "push/follow.h"
#include "push/percolator.h"
#include "push/sched.h"
#include "push/seen.h"

#include <nettle/hmac.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "article/json.h"
#include "store/journal.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/sort.h"
#include "util/urlview.h"

#include "util/banned.h"

#define FOLLOW_MAX_ROWS 5000           /* rows read per pass (then the next pass at once) */
#define SEND_SLOTS 64                  /* POSTs in flight at once (sender threads) */
#define SEND_PER_HOST 4                /* of them to one receiver (scheme, host, port) */
#define SEND_PER_KEY 16                /* of them for one key's alerts */
#define CURSOR_WRITE_MS 5000           /* a cursor that only moved is written this often */
#define WEBHOOK_MAX_ANSWER (64 * 1024) /* what is read of a webhook's answer */
#define DELIVERY_ID_BYTES 16
#define LEASE_ASK_MS 1000 /* how often the leases are asked for (new alerts come then) */

/* The oldest waiting delivery of an alert, as stored. */
struct pending {
    char *id;
    char *body;
    size_t len;
    int64_t seq, attempts, next_ms, first_failure_ms;
};

struct alert_live {
    int64_t id;
    char *webhook, *secret;
    bool matching; /* filed in the percolator (its query compiled) */
    int64_t stored_cursor, read_cursor;
    int64_t cursor_written_ms;
    struct buf batch; /* article objects, comma-separated */
    size_t n_batch;
    struct push_seen *seen; /* dedupe: the stories delivered; NULL: every match is */
    int64_t copies;         /* dedupe: copies met past stored_cursor, not yet written */
    int64_t batch_stories[LIMIT_ALERT_ARTICLES]; /* dedupe: the stories the batch sends first */
    size_t n_batch_stories;
    bool stalled;    /* a store write failed this pass: read again from stored_cursor */
    bool head_known; /* head is the oldest waiting delivery (or there is none) */
    struct pending *head;
    int64_t key_id;
    char host[PUSH_SCHED_HOST_MAX]; /* its receiver, for push/sched.h */
    bool sending;                   /* a POST of its head is in flight */
    int64_t served_ms;              /* when its last POST started */
};

/* One POST on a sender thread; under push_webhook.mu: state. */
enum job_state { JOB_FREE, JOB_QUEUED, JOB_DONE };
struct send_job {
    enum job_state state;
    int64_t alert_id, key_id;
    char host[PUSH_SCHED_HOST_MAX];
    char *url, *body, *delivery_id; /* copies: the alert may go while it runs */
    size_t len;
    char sig[PUSH_WEBHOOK_SIGNATURE_LEN + 32], did[2 * DELIVERY_ID_BYTES + 64];
    struct fetch_result res;
};

struct sender {
    struct push_webhook *a;
    size_t i; /* its job: jobs[i] */
    pthread_t thread;
    bool started;
};

struct push_webhook {
    struct store *store;
    struct push_webhook_options o;
    char owner[128];
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the worker's wait */
    pthread_cond_t send_cv; /* the senders' wait for a job */
    atomic_bool stopping;
    atomic_bool wake; /* a POST finished, or stop: the worker's wait ends */
    struct send_job jobs[SEND_SLOTS];
    struct sender senders[SEND_SLOTS];
    struct push_sched sched;
    int64_t last_key; /* the key whose delivery started last (turns go on after it) */
    struct percolator *perc;
    struct push_follow *follow; /* at the lowest read_cursor of the set */
    struct alert_live **states; /* ordered by id */
    size_t n;
    int64_t next_lease_ms;
};

static struct {
    struct metric *sent, *retries, *failed, *pending;
} metric;

void push_webhook_metrics_init(void)
{
    metric.sent = metrics_counter("newsd_alert_deliveries_sent_total",
                                  "Webhook alert deliveries their webhook accepted (2xx).");
    metric.retries = metrics_counter("newsd_alert_delivery_retries_total",
                                     "Webhook alert delivery attempts that failed and will be "
                                     "retried.");
    metric.failed = metrics_counter("newsd_alert_deliveries_failed_total",
                                    "Webhook alert deliveries dropped after the retry window.");
    metric.pending = metrics_gauge("newsd_alert_deliveries_pending",
                                   "Webhook alert deliveries waiting to be sent (whole store).");
}

static int64_t system_wall_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void push_webhook_signature(const char *secret, const char *body, size_t len,
                            char out[PUSH_WEBHOOK_SIGNATURE_LEN])
{
    struct hmac_sha256_ctx ctx;
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256_set_key(&ctx, strlen(secret), (const uint8_t *)secret);
    hmac_sha256_update(&ctx, len, (const uint8_t *)body);
    hmac_sha256_digest(&ctx, sizeof mac, mac);
    memcpy(out, "sha256=", 7);
    ascii_hex_encode(out + 7, mac, sizeof mac);
}

/* A delivery id: 128 random bits as hex (unique without coordination
 * between nodes). */
static int delivery_id(char out[2 * DELIVERY_ID_BYTES + 1])
{
    uint8_t raw[DELIVERY_ID_BYTES];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return ERR_IO;
    ascii_hex_encode(out, raw, sizeof raw);
    return 0;
}

/* The worker's wall clock (push_webhook_options.now_ms). */
static int64_t now_ms(const struct push_webhook *a)
{
    return a->o.now_ms(a->o.now_ctx);
}

static void pending_free(struct pending *p)
{
    if (!p)
        return;
    free(p->id);
    free(p->body);
    free(p);
}

static void job_clear(struct send_job *j)
{
    free(j->url);
    free(j->body);
    free(j->delivery_id);
    fetch_result_release(&j->res);
    memset(j, 0, sizeof *j); /* JOB_FREE */
}

/* Whether a POST of alert id is in flight (worker's thread). */
static bool job_in_flight(struct push_webhook *a, int64_t id)
{
    bool found = false;
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < SEND_SLOTS && !found; i++)
        found = a->jobs[i].state != JOB_FREE && a->jobs[i].alert_id == id;
    pthread_mutex_unlock(&a->mu);
    return found;
}

static void state_free(struct alert_live *st)
{
    if (!st)
        return;
    free(st->webhook);
    free(st->secret);
    buf_release(&st->batch);
    push_seen_free(st->seen);
    pending_free(st->head);
    free(st);
}

/* states[] is sorted by id: sort_lower_bound's order of one against an id. */
static int state_cmp_id(const void *element, const void *key)
{
    return sort_order_i64((*(struct alert_live *const *)element)->id, *(const int64_t *)key);
}

static struct alert_live *state_find(struct push_webhook *a, int64_t id)
{
    size_t at = sort_lower_bound(a->states, a->n, sizeof *a->states, &id, state_cmp_id);
    return at < a->n && a->states[at]->id == id ? a->states[at] : NULL;
}

_Static_assert(STORE_ALERT_STORIES_MAX == PUSH_SEEN_MAX,
               "the stories stored per alert are what its memory holds");

/* st's memory of stories: the store's, as of the stored cursor. Left empty
 * when the store cannot be read: a copy may then go out once more (at
 * least once), never a first be lost. */
static void seen_load(struct push_webhook *a, struct alert_live *st)
{
    struct arena ar;
    int64_t *stories = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    push_seen_clear(st->seen);
    arena_init(&ar, 0);
    int rc = store_alert_stories(a->store, &ar, st->id, &stories, &n, &err);
    if (rc < 0)
        log_warn("alert %lld: cannot read the stories it delivered: %s", (long long)st->id,
                 err_msg(&err, rc));
    for (size_t i = 0; i < n; i++)
        push_seen_add(st->seen, stories[i]);
    arena_release(&ar);
}

/* Forget what was read past the stored cursor: the next pass reads it
 * again. The memory of stories goes back to the stored cursor too: the
 * batch dropped here may hold a story's first article, which must go out
 * when read again. */
static void state_rewind(struct push_webhook *a, struct alert_live *st)
{
    st->read_cursor = st->stored_cursor;
    buf_reset(&st->batch);
    st->n_batch = 0;
    st->n_batch_stories = 0;
    st->copies = 0;
    if (st->seen)
        seen_load(a, st);
}

static struct alert_live *state_new(struct push_webhook *a, const struct alert_record *r)
{
    struct alert_live *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->id = r->id;
    st->key_id = r->key_id;
    /* Taken up again while a POST of its last life runs: not a second one. */
    st->sending = job_in_flight(a, r->id);
    st->webhook = strdup(r->webhook);
    st->secret = strdup(r->secret);
    st->seen = r->dedupe ? push_seen_new() : NULL;
    buf_init(&st->batch, 0);
    if (!st->webhook || !st->secret || (r->dedupe && !st->seen)) {
        state_free(st);
        return NULL;
    }
    push_sched_host(st->webhook, st->host);
    if (st->seen)
        seen_load(a, st);
    st->stored_cursor = st->read_cursor = r->cursor_seq;
    st->cursor_written_ms = now_ms(a);
    struct index_matcher *m = NULL;
    struct err err;
    err_clear(&err);
    int rc = a->o.compile(a->o.compile_ctx, r->query, &m, &err);
    if (rc == 0)
        rc = percolator_add(a->perc, (uint64_t)r->id, m, &err);
    if (rc < 0)
        /* Its waiting deliveries still go; it matches nothing new. */
        log_warn("alert %lld: %s; it matches nothing until it is replaced", (long long)r->id,
                 err_msg(&err, rc));
    st->matching = rc == 0;
    return st;
}

/* ---- lease ------------------------------------------------------------------ */

static void lease_step(struct push_webhook *a)
{
    struct arena ar;
    struct alert_record *list = NULL;
    size_t n = 0;
    struct err err;
    int64_t now = now_ms(a);
    err_clear(&err);
    arena_init(&ar, 0);
    int rc = store_alerts_lease(a->store, &ar, a->owner, now, now + a->o.lease_ms, &list, &n, &err);
    if (rc < 0) {
        /* The leases run out; whoever can reach the store takes over. */
        log_warn("alerts: cannot renew leases: %s", err_msg(&err, rc));
        a->next_lease_ms = now + a->o.poll_ms * 5;
        goto out;
    }
    /* Often, so that a new alert is taken up within LEASE_ASK_MS: the
     * store writes a lease only when it is past half its length. */
    a->next_lease_ms = now + (a->o.lease_ms / 3 < LEASE_ASK_MS ? a->o.lease_ms / 3 : LEASE_ASK_MS);
    struct alert_live **next = calloc(n ? n : 1, sizeof *next);
    if (!next) {
        log_warn("alerts: out of memory leasing %zu alerts", n);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct alert_live *st = state_find(a, list[i].id);
        if (st && list[i].cursor_seq != st->stored_cursor) {
            /* Another node moved it while this one did not hold it. */
            st->stored_cursor = list[i].cursor_seq;
            state_rewind(a, st);
            pending_free(st->head);
            st->head = NULL;
            st->head_known = false;
        }
        if (!st)
            st = state_new(a, &list[i]);
        if (st) {
            next[k++] = st;
            st->stalled = false;
        }
    }
    /* Alerts no longer held (removed, or leased elsewhere). */
    for (size_t i = 0; i < a->n; i++) {
        bool kept = false;
        for (size_t j = 0; j < k && !kept; j++)
            kept = next[j] == a->states[i];
        if (!kept) {
            percolator_remove(a->perc, (uint64_t)a->states[i]->id);
            state_free(a->states[i]);
        }
    }
    free(a->states);
    a->states = next;
    a->n = k;
    int64_t pending = 0;
    if (store_alert_deliveries_count(a->store, &pending, &err) == 0)
        metrics_set(metric.pending, pending);
out:
    arena_release(&ar);
}

/* ---- follow ------------------------------------------------------------------ */

/* Store st's batch as a delivery that takes its cursor to seq. */
static void flush(struct push_webhook *a, struct alert_live *st, int64_t seq)
{
    struct buf body;
    char id[2 * DELIVERY_ID_BYTES + 1];
    struct err err;
    int rc;
    err_clear(&err);
    buf_init(&body, 0);
    buf_printf(&body, "{\"alert\":%lld,\"articles\":[", (long long)st->id);
    buf_append(&body, st->batch.data ? st->batch.data : "", st->batch.len);
    buf_puts(&body, "]}");
    rc = buf_error(&body) ? buf_error(&body) : buf_error(&st->batch);
    if (rc == 0)
        rc = delivery_id(id);
    int64_t now = now_ms(a);
    struct alert_delivery d = {
        .alert_id = st->id,
        .seq = seq,
        .id = id,
        .body = body.data,
        .next_ms = now,
        .created_ms = now,
        .stories = st->batch_stories,
        .n_stories = st->n_batch_stories,
    };
    if (rc == 0)
        rc = store_alert_advance(a->store, st->id, a->owner, st->stored_cursor, seq, st->copies, &d,
                                 &err);
    if (rc == 0) {
        st->stored_cursor = st->read_cursor = seq;
        st->copies = 0;
        st->cursor_written_ms = now;
        buf_reset(&st->batch);
        st->n_batch = 0;
        st->n_batch_stories = 0;
        st->head_known = st->head_known && st->head != NULL; /* a new last one: the head stays */
    } else {
        log_warn("alert %lld: cannot queue a delivery: %s", (long long)st->id, err_msg(&err, rc));
        st->stalled = true;
        if (rc == ERR_BUSY || rc == ERR_NOTFOUND)
            a->next_lease_ms = 0; /* it went elsewhere (or away): ask at once */
    }
    buf_release(&body);
}

/* The row matched st: add it to the batch, storing a full one. story: the
 * row's story, written after NewsAPI's keys as a search's dedupe writes
 * it, for an alert with dedupe (0: none, or not known). */
static void batch_add(struct push_webhook *a, struct alert_live *st, const struct store_row *row,
                      int64_t story)
{
    if (st->n_batch)
        buf_putc(&st->batch, ',');
    struct article art;
    store_row_article(row, &art);
    article_json(&st->batch, &art);
    if (st->seen && story && !buf_error(&st->batch) && st->batch.len &&
        st->batch.data[st->batch.len - 1] == '}') {
        st->batch.len--; /* the closing brace comes after the story */
        buf_printf(&st->batch, ",\"storyId\":\"%lld\"}", (long long)story);
        st->batch_stories[st->n_batch_stories++] = story; /* one per article at most */
    }
    st->n_batch++;
    st->read_cursor = row->seq;
    if (st->n_batch >= LIMIT_ALERT_ARTICLES)
        flush(a, st, row->seq);
}

/* push_follow_fn: one row of the log against the alerts' searches. */
static int match_row(const struct store_row *row, const struct index_match_doc *doc, void *ctx)
{
    struct push_webhook *a = ctx;
    uint64_t *ids = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    int rc = percolator_match(a->perc, doc, &ids, &n, &err);
    if (rc < 0)
        return rc; /* not taken: read again at the next pass */
    int64_t story = 0;
    bool story_read = false;
    for (size_t i = 0; i < n; i++) {
        struct alert_live *st = state_find(a, (int64_t)ids[i]);
        if (!st || st->stalled || row->seq <= st->read_cursor)
            continue;
        if (st->seen && !story_read) {
            /* Not read (an error): the article goes, as a first. */
            story_read = true;
            if (push_follow_story(a->follow, row->id, &story, &err) < 0)
                story = 0;
        }
        if (st->seen && story && push_seen_add(st->seen, story) > 1) {
            st->copies++; /* delivered already: counted, not sent again */
            st->read_cursor = row->seq;
            continue;
        }
        batch_add(a, st, row, story);
    }
    free(ids);
    return 0;
}

/* One pass over the log; true when it stopped at FOLLOW_MAX_ROWS (more to read). */
static bool follow_step(struct push_webhook *a)
{
    struct err err;
    int rc;

    if (a->n == 0) {
        /* No follower without alerts: one left behind would see the log's
         * version move at every commit and, never polled again, end every
         * wait at once (the worker would spin). The next alert starts one. */
        push_follow_free(a->follow);
        a->follow = NULL;
        return false;
    }
    err_clear(&err);
    int64_t from = INT64_MAX;
    for (size_t i = 0; i < a->n; i++)
        if (a->states[i]->read_cursor < from)
            from = a->states[i]->read_cursor;
    /* A new alert (or one read again) behind the follower: start over there. */
    if (a->follow && push_follow_position(a->follow) != from) {
        push_follow_free(a->follow);
        a->follow = NULL;
    }
    if (!a->follow && (rc = push_follow_new(&a->follow, a->o.journal_path, from, &err)) < 0) {
        log_warn("alerts: cannot read the article log: %s", err_msg(&err, rc));
        return false;
    }
    rc = push_follow_poll(a->follow, match_row, a, FOLLOW_MAX_ROWS, &err);
    int64_t last = push_follow_position(a->follow);
    if (rc < 0) {
        log_warn("alerts: reading the article log: %s", err_msg(&err, rc));
        /* A replaced table (ERR_NOTFOUND): its seqs are another's; follow
         * it afresh from the cursors. */
        push_follow_free(a->follow);
        a->follow = NULL;
    }
    /* What was read is behind every alert now: a batch left goes out with
     * the cursor at the last row read. */
    for (size_t i = 0; i < a->n; i++) {
        struct alert_live *st = a->states[i];
        if (!st->stalled && (last > st->read_cursor || st->n_batch)) {
            if (st->n_batch)
                flush(a, st, last);
            else
                st->read_cursor = last;
        }
        if (st->stalled)
            state_rewind(a, st);
    }
    return rc >= FOLLOW_MAX_ROWS;
}

/* Write the cursors that only moved, now and then. */
static void cursor_step(struct push_webhook *a)
{
    int64_t now = now_ms(a);
    for (size_t i = 0; i < a->n; i++) {
        struct alert_live *st = a->states[i];
        if (st->n_batch || st->read_cursor <= st->stored_cursor ||
            now - st->cursor_written_ms < CURSOR_WRITE_MS)
            continue;
        struct err err;
        err_clear(&err);
        int rc = store_alert_advance(a->store, st->id, a->owner, st->stored_cursor, st->read_cursor,
                                     st->copies, NULL, &err);
        st->cursor_written_ms = now;
        if (rc == 0) {
            st->stored_cursor = st->read_cursor;
            st->copies = 0;
        } else if (rc == ERR_BUSY || rc == ERR_NOTFOUND)
            a->next_lease_ms = 0;
    }
}

/* ---- send ------------------------------------------------------------------- */

/* Load st's oldest waiting delivery when it is not known. */
static void head_load(struct push_webhook *a, struct alert_live *st)
{
    struct arena ar;
    struct alert_delivery *d = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    arena_init(&ar, 0);
    if (store_alert_deliveries(a->store, &ar, st->id, 1, &d, &n, &err) == 0) {
        pending_free(st->head);
        st->head = NULL;
        st->head_known = true;
        if (n == 1) {
            struct pending *p = calloc(1, sizeof *p);
            if (p) {
                p->id = strdup(d->id);
                p->len = strlen(d->body);
                p->body = strdup(d->body);
                p->seq = d->seq;
                p->attempts = d->attempts;
                p->next_ms = d->next_ms;
                p->first_failure_ms = d->first_failure_ms;
            }
            if (!p || !p->id || !p->body) {
                pending_free(p);
                st->head_known = false;
            } else {
                st->head = p;
            }
        }
    }
    arena_release(&ar);
}

/* st's head delivery is over (sent, or dropped): out of the store, then
 * out of memory, counted under m. Kept when the store refuses: retried. */
static void delivery_over(struct push_webhook *a, struct alert_live *st, struct metric *m)
{
    struct err err;
    err_clear(&err);
    if (store_alert_delivery_done(a->store, st->id, st->head->id, &err) == 0) {
        metrics_add(m, 1);
        pending_free(st->head);
        st->head = NULL;
        st->head_known = false;
    }
}

/* What a webhook's answer to st's head delivery means. */
static void outcome(struct push_webhook *a, struct alert_live *st, const struct fetch_result *r)
{
    struct pending *p = st->head;
    struct err err;
    int64_t now = now_ms(a);
    err_clear(&err);
    if (r->rc == 0 && r->status >= 200 && r->status < 300) {
        delivery_over(a, st, metric.sent);
        return;
    }
    int64_t attempts = p->attempts + 1;
    int64_t first = p->first_failure_ms ? p->first_failure_ms : now;
    char shown[256], why[FETCH_ERRBUF + 32];
    urlview_redacted(st->webhook, URLVIEW_REDACT_HOST, shown, sizeof shown);
    if (r->rc == 0)
        snprintf(why, sizeof why, "HTTP %ld", r->status);
    else
        snprintf(why, sizeof why, "%s", r->errbuf[0] ? r->errbuf : err_default_msg(r->rc));
    if (now - first >= a->o.expire_ms) {
        log_warn("alert %lld: delivery %s to %s dropped after %lld attempts over %lld s: %s",
                 (long long)st->id, p->id, shown, (long long)attempts,
                 (long long)((now - first) / 1000), why);
        delivery_over(a, st, metric.failed);
        return;
    }
    int64_t delay = a->o.retry_min_ms;
    for (int64_t i = 1; i < attempts && delay < a->o.retry_max_ms; i++)
        delay *= 2;
    if (delay > a->o.retry_max_ms)
        delay = a->o.retry_max_ms;
    log_info("alert %lld: delivery %s to %s failed (%s); attempt %lld in %lld ms",
             (long long)st->id, p->id, shown, why, (long long)(attempts + 1), (long long)delay);
    metrics_add(metric.retries, 1);
    p->attempts = attempts;
    p->first_failure_ms = first;
    p->next_ms = now + delay;
    /* Not recorded (the store is away): the memory's copy still says when. */
    store_alert_delivery_failed(a->store, st->id, p->id, attempts, p->next_ms, first, &err);
}

static bool send_cancelled(void *ctx)
{
    struct push_webhook *a = ctx;
    return atomic_load(&a->stopping);
}

/* A sender thread: runs jobs[i] each time the worker queues it. */
static void *sender_main(void *arg)
{
    struct sender *me = arg;
    struct push_webhook *a = me->a;
    struct send_job *j = &a->jobs[me->i];
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (!atomic_load(&a->stopping) && j->state != JOB_QUEUED)
            pthread_cond_wait(&a->send_cv, &a->mu);
        pthread_mutex_unlock(&a->mu);
        if (atomic_load(&a->stopping))
            break;
        const char *headers[3] = {"Content-Type: application/json", j->did, j->sig};
        struct fetch_request req = {
            .url = j->url,
            .post_body = j->body,
            .post_len = j->len,
            .headers = headers,
            .n_headers = 3,
        };
        struct fetch_options fo = a->o.fetch;
        fo.cancelled = send_cancelled;
        fo.cancel_ctx = a;
        fetch_run(&req, 1, &fo, &j->res);
        pthread_mutex_lock(&a->mu);
        j->state = JOB_DONE;
        atomic_store(&a->wake, true);
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
    return NULL;
}

/* Record the outcome of every POST that finished, and free its slot. */
static void send_collect(struct push_webhook *a)
{
    for (size_t i = 0; i < SEND_SLOTS; i++) {
        struct send_job *j = &a->jobs[i];
        pthread_mutex_lock(&a->mu);
        bool done = j->state == JOB_DONE;
        pthread_mutex_unlock(&a->mu);
        if (!done)
            continue;
        push_sched_give(&a->sched, j->key_id, j->host);
        struct alert_live *st = state_find(a, j->alert_id);
        if (st) {
            st->sending = false;
            /* Cancelled by a stop: neither a success nor an attempt. An
             * alert rewound (or gone) meanwhile has forgotten this head. */
            if (st->head && !strcmp(st->head->id, j->delivery_id) &&
                !(j->res.rc == ERR_BUSY && send_cancelled(a)))
                outcome(a, st, &j->res);
        }
        pthread_mutex_lock(&a->mu);
        job_clear(j);
        pthread_mutex_unlock(&a->mu);
    }
}

/* Hand st's head to a free sender (the slot is taken). false: it could not
 * start (out of memory, no thread): the slot is given back. */
static bool send_start(struct push_webhook *a, struct alert_live *st)
{
    size_t i = 0;
    pthread_mutex_lock(&a->mu);
    while (i < SEND_SLOTS && a->jobs[i].state != JOB_FREE)
        i++;
    pthread_mutex_unlock(&a->mu);
    if (i == SEND_SLOTS) /* cannot be: a free slot means a free job */
        return false;
    struct send_job *j = &a->jobs[i];
    struct pending *p = st->head;
    char s[PUSH_WEBHOOK_SIGNATURE_LEN];
    push_webhook_signature(st->secret, p->body, p->len, s);
    snprintf(j->sig, sizeof j->sig, "X-Newsd-Signature: %s", s);
    snprintf(j->did, sizeof j->did, "X-Newsd-Delivery: %s", p->id);
    j->alert_id = st->id;
    j->key_id = st->key_id;
    memcpy(j->host, st->host, sizeof j->host);
    j->url = strdup(st->webhook);
    j->body = malloc(p->len + 1);
    j->delivery_id = strdup(p->id);
    j->len = p->len;
    struct sender *t = &a->senders[i];
    bool ok = j->url && j->body && j->delivery_id;
    if (ok && !t->started) {
        *t = (struct sender){.a = a, .i = i};
        t->started = pthread_create(&t->thread, NULL, sender_main, t) == 0;
        ok = t->started;
    }
    if (!ok) {
        log_warn("alert %lld: cannot start a delivery now (out of memory or threads); "
                 "it is tried again",
                 (long long)st->id);
        pthread_mutex_lock(&a->mu); /* its sender reads the state under the lock */
        job_clear(j);
        pthread_mutex_unlock(&a->mu);
        return false;
    }
    memcpy(j->body, p->body, p->len + 1);
    pthread_mutex_lock(&a->mu);
    j->state = JOB_QUEUED;
    pthread_cond_broadcast(&a->send_cv);
    pthread_mutex_unlock(&a->mu);
    return true;
}

static void send_step(struct push_webhook *a)
{
    send_collect(a);
    if (push_sched_full(&a->sched))
        return;
    int64_t now = now_ms(a);
    struct push_sched_cand *cands = calloc(a->n ? a->n : 1, sizeof *cands);
    struct alert_live **who = calloc(a->n ? a->n : 1, sizeof *who);
    size_t *order = calloc(a->n ? a->n : 1, sizeof *order);
    size_t n = 0;
    if (!cands || !who || !order)
        goto out; /* the next pass tries again */
    for (size_t i = 0; i < a->n; i++) {
        struct alert_live *st = a->states[i];
        if (st->sending)
            continue;
        if (!st->head_known)
            head_load(a, st);
        struct pending *p = st->head;
        if (!p || p->next_ms > now)
            continue;
        cands[n] = (struct push_sched_cand){st->key_id, st->id, st->served_ms};
        who[n++] = st;
    }
    push_sched_order(cands, n, a->last_key, order);
    for (size_t k = 0; k < n && !push_sched_full(&a->sched); k++) {
        struct alert_live *st = who[order[k]];
        if (!push_sched_take(&a->sched, st->key_id, st->host))
            continue; /* its receiver or its key has its share: later */
        if (!send_start(a, st)) {
            push_sched_give(&a->sched, st->key_id, st->host);
            break;
        }
        st->sending = true;
        st->served_ms = now;
        a->last_key = st->key_id;
    }
out:
    free(cands);
    free(who);
    free(order);
}

/* ---- the thread ----------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    struct push_webhook *a = arg;
    while (!atomic_load(&a->stopping)) {
        atomic_store(&a->wake, false); /* what finishes from here on wakes the wait below */
        if (now_ms(a) >= a->next_lease_ms)
            lease_step(a);
        bool more = follow_step(a);
        cursor_step(a);
        send_step(a);
        if (more)
            continue;
        if (a->follow) {
            /* Until a commit, a POST's end, a retry's turn or a stop:
             * poll_ms at most. */
            struct err err;
            err_clear(&err);
            if (push_follow_wait(a->follow, &a->wake, a->o.poll_ms, &err) >= 0)
                continue;
            log_warn("alerts: waiting for the article log: %s", err_msg(&err, ERR_STORE));
        }
        pthread_mutex_lock(&a->mu);
        if (!atomic_load(&a->stopping) && !atomic_load(&a->wake)) {
            struct timespec until = clock_mono_in(a->o.poll_ms);
            pthread_cond_timedwait(&a->cv, &a->mu, &until);
        }
        pthread_mutex_unlock(&a->mu);
    }
    return NULL;
}

static void webhook_free(struct push_webhook *a)
{
    for (size_t i = 0; i < SEND_SLOTS; i++)
        job_clear(&a->jobs[i]);
    push_sched_release(&a->sched);
    for (size_t i = 0; i < a->n; i++)
        state_free(a->states[i]);
    free(a->states);
    percolator_free(a->perc);
    push_follow_free(a->follow);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    pthread_cond_destroy(&a->send_cv);
    free(a);
}

int push_webhook_start(struct push_webhook **out, struct store *s,
                       const struct push_webhook_options *o, struct err *err)
{
    struct push_webhook *a = NULL;
    int rc;

    *out = NULL;
    if (!o || !o->journal_path || !o->compile)
        return err_set(err, ERR_INVALID, "alerts: no article log or no query compiler");
    push_webhook_metrics_init();
    a = calloc(1, sizeof *a);
    if (!a)
        return err_set(err, ERR_NOMEM, "out of memory");
    a->store = s;
    a->o = *o;
    if (a->o.lease_ms <= 0)
        a->o.lease_ms = PUSH_WEBHOOK_LEASE_MS_DEFAULT;
    if (a->o.poll_ms <= 0)
        a->o.poll_ms = PUSH_WEBHOOK_POLL_MS_DEFAULT;
    if (a->o.retry_min_ms <= 0)
        a->o.retry_min_ms = PUSH_WEBHOOK_RETRY_MIN_MS_DEFAULT;
    if (a->o.retry_max_ms <= 0)
        a->o.retry_max_ms = PUSH_WEBHOOK_RETRY_MAX_MS_DEFAULT;
    if (a->o.retry_max_ms < a->o.retry_min_ms)
        a->o.retry_max_ms = a->o.retry_min_ms;
    if (a->o.expire_ms <= 0)
        a->o.expire_ms = PUSH_WEBHOOK_EXPIRE_MS_DEFAULT;
    if (!a->o.now_ms)
        a->o.now_ms = system_wall_ms;
    if (a->o.fetch.timeout_ms <= 0)
        a->o.fetch.timeout_ms = PUSH_WEBHOOK_TIMEOUT_MS_DEFAULT;
    if (a->o.fetch.max_body == 0)
        a->o.fetch.max_body = WEBHOOK_MAX_ANSWER;
    /* A webhook answers where it was asked; a redirect is not followed
     * (a POST would turn into a GET, and the body's target would move). */
    a->o.fetch.max_redirects = -1;
    pthread_mutex_init(&a->mu, NULL);
    clock_cond_init(&a->cv);
    pthread_cond_init(&a->send_cv, NULL);
    atomic_init(&a->wake, false);
    /* The lease holder's name: unique per process, readable in the store. */
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    char rnd[2 * DELIVERY_ID_BYTES + 1];
    if ((rc = delivery_id(rnd)) < 0) {
        rc = err_set(err, rc, "alerts: no random bytes");
        goto fail;
    }
    snprintf(a->owner, sizeof a->owner, "%.63s:%ld:%.8s", host, (long)getpid(), rnd);
    if ((rc = percolator_new(&a->perc, err)) < 0 ||
        (rc = push_sched_init(&a->sched, SEND_SLOTS, SEND_PER_HOST, SEND_PER_KEY, err)) < 0)
        goto fail;
    if (pthread_create(&a->thread, NULL, worker_main, a) != 0) {
        rc = err_set(err, ERR_NOMEM, "alerts: cannot start the delivery thread");
        goto fail;
    }
    a->started = true;
    *out = a;
    return 0;
fail:
    webhook_free(a);
    return rc;
}

void push_webhook_stop(struct push_webhook *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->stopping, true);
    atomic_store(&a->wake, true);
    pthread_cond_broadcast(&a->cv);
    pthread_cond_broadcast(&a->send_cv);
    pthread_mutex_unlock(&a->mu);
    if (a->started) {
        pthread_join(a->thread, NULL);
        /* A POST in flight is cancelled within a second (fetch_options.cancelled). */
        for (size_t i = 0; i < SEND_SLOTS; i++)
            if (a->senders[i].started)
                pthread_join(a->senders[i].thread, NULL);
        /* A POST that was answered before the stop is recorded, so that it
         * is not sent again after a restart. */
        send_collect(a);
        /* Hand the leases back, so that a restart, or another node, goes
         * on at once instead of waiting for them to run out. */
        store_alerts_release(a->store, a->owner, NULL);
    }
    webhook_free(a);
}
