/* Live streams' hub: one thread follows this node's article log
 * (store/journal.h) and hands every newly committed article to the open
 * subscriptions it matches (push/percolator.h), in commit order, as its
 * NewsAPI JSON. Knows nothing of HTTP: a subscriber is a sink of callbacks
 * (the API writes Server-Sent Events into a streamed response).
 *
 * Positions: a subscriber gets the articles with seq > its position, each
 * once. One that starts behind the hub (a reconnect with a Last-Event-ID)
 * is first replayed from the log on the hub's thread, in batches, then
 * joins the live ones at the hub's position, so the hand-over has neither
 * a gap nor a duplicate. An article updated after the position is sent
 * once, under its latest seq (the log holds each article once).
 *
 * Threads: push_live_subscribe, push_live_head, push_live_position_check
 * and push_live_count from any thread; sinks are called on the hub's
 * thread only. */
#ifndef NEWSD_PUSH_LIVE_H
#define NEWSD_PUSH_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/match.h"
#include "store/journal.h"
#include "util/err.h"

#define PUSH_LIVE_KEEPALIVE_MS_DEFAULT 15000
#define PUSH_LIVE_REPLAY_WINDOW_S_DEFAULT (24 * 3600)
#define PUSH_LIVE_POLL_MS_DEFAULT 100 /* how often the log is asked for commits */
#define PUSH_LIVE_ALIVE_MS 500        /* how often a sink's alive is asked */

struct push_live_config {
    int64_t keepalive_ms;    /* a sink's idle is called after this long without
                              * an article; 0: PUSH_LIVE_KEEPALIVE_MS_DEFAULT */
    int64_t replay_window_s; /* push_live_position_check; 0: the default (24 h) */
    int64_t poll_ms;         /* 0: PUSH_LIVE_POLL_MS_DEFAULT */
};

/* What a subscriber is. Return values of article and idle: 0 go on;
 * PUSH_LIVE_SLOW (article, during a replay) the article was taken but the
 * subscriber wants no more for now (its client has not read what it has);
 * negative: the subscriber is gone (it is dropped, then released). */
#define PUSH_LIVE_SLOW 1
struct push_live_sink {
    /* id: the article's; published_at: its publication time (unix
     * seconds), for a window the subscriber applies at the moment of
     * sending. */
    int (*article)(void *ctx, int64_t seq, int64_t id, int64_t published_at, const char *json,
                   size_t len);
    int (*idle)(void *ctx);
    /* Whether the subscriber is still there, and still entitled to its
     * stream (asked every PUSH_LIVE_ALIVE_MS). */
    bool (*alive)(void *ctx);
    /* The hub is done with ctx: the subscriber was dropped, or the hub stops. */
    void (*release)(void *ctx);
};

struct push_live;

/* Start the hub over the log l (borrowed; must outlive the hub). */
int push_live_new(struct push_live **out, struct store_journal *l,
                  const struct push_live_config *cfg, struct err *err);

/* Stop the thread; every subscriber still there is released. NULL: no-op. */
void push_live_free(struct push_live *h);

/* The log's head now: the position of a subscriber that wants only what
 * comes from now on. */
int push_live_head(struct push_live *h, int64_t *out, struct err *err);

/* Whether position pos is too old to be replayed: the first change after
 * it was written longer than the replay window before now (unix
 * seconds). A position at or past the head is never expired. */
int push_live_position_check(struct push_live *h, int64_t pos, int64_t now, bool *expired,
                             struct err *err);

/* Add a subscriber for the articles matching m (taken, also on failure)
 * with seq > pos. sink and ctx stay the hub's until sink->release. */
int push_live_subscribe(struct push_live *h, struct index_matcher *m, int64_t pos,
                        const struct push_live_sink *sink, void *ctx, struct err *err);

/* Subscribers now (replaying or live). */
size_t push_live_count(struct push_live *h);

#endif
