/* Following the article log (store/journal.h) from a position: what a live
 * stream and the webhook alerts both read. A follower owns one read-only
 * connection to the log file and a position (a seq); each poll gives the
 * caller the rows committed after it, in seq order, each with its
 * index_match_doc prepared (index/match.h), and moves the position past
 * every row the caller took. An article updated after it was read comes
 * again under its new seq. No thread of its own: the caller polls, and
 * waits between polls with push_follow_wait (which looks at the file's
 * version every PUSH_FOLLOW_INTERVAL_MS, so a commit is seen within that).
 *
 * Threads: a follower belongs to one thread at a time. */
#ifndef NEWSD_PUSH_FOLLOW_H
#define NEWSD_PUSH_FOLLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/match.h"
#include "store/journal.h"
#include "util/err.h"

#define PUSH_FOLLOW_INTERVAL_MS 50

struct push_follow;

/* A follower of the log file at path (store_journal_path) whose first rows
 * will be those with seq > after. ERR_STORE / ERR_NOMEM with err set. */
int push_follow_new(struct push_follow **out, const char *path, int64_t after, struct err *err);
void push_follow_free(struct push_follow *f); /* NULL: no-op */

/* The seq of the last row the caller took (after, before any). */
int64_t push_follow_position(const struct push_follow *f);

/* The log's head now (store_reader_head): where a follower that wants
 * only what comes next starts. */
int push_follow_head(struct push_follow *f, int64_t *out, struct err *err);

/* Move the position to the log's head without reading a row: for a
 * caller with nobody to hand rows to, which would otherwise prepare every
 * row's terms for nothing. Then as after a poll that read them all (the
 * next wait sees only later commits). 0, ERR_NOTFOUND when the log's table
 * was replaced (as push_follow_poll), or ERR_STORE with err set. */
int push_follow_skip(struct push_follow *f, struct err *err);

/* One row for the caller: row (views valid during the call; render it
 * with store_row_article and article_json) and doc, its terms prepared
 * for matching. Return 0: taken, go on; > 0: taken, stop this poll;
 * < 0: not taken (the next poll gives it again), stop, and the poll
 * returns that value. */
typedef int (*push_follow_fn)(const struct store_row *row, const struct index_match_doc *doc,
                              void *ctx);

/* Give fn the rows after the position, in seq order, at most max_rows of
 * them (0: no limit), from one read snapshot of the log. Returns the
 * number taken, fn's negative value, ERR_NOTFOUND when the log's table
 * was replaced since push_follow_new (its seqs are another table's: the
 * caller starts over), or ERR_STORE / ERR_NOMEM with err set. */
int push_follow_poll(struct push_follow *f, push_follow_fn fn, void *ctx, size_t max_rows,
                     struct err *err);

/* The story of article id (store_reader_story_of), read in the poll's
 * snapshot: for push_follow_fn, during a poll. */
int push_follow_story(struct push_follow *f, int64_t id, int64_t *story, struct err *err);

/* Wait until there may be rows to read (a commit to the log since the last
 * poll, or a poll cut short by max_rows or by fn), at most ms, or until
 * *stop (NULL: no flag) is set. 1: poll now; 0: timed out or stopped; or
 * ERR_STORE with err set. */
int push_follow_wait(struct push_follow *f, const atomic_bool *stop, int64_t ms, struct err *err);

#endif
