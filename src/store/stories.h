/* Private to src/store/: the story of every article stored through
 * store_articles_put (story/assign.h), with the assigner's window started
 * from the store's recent articles at the first put, not at open (a
 * server that only reads never pays for it). Thread-safe: one lock around
 * the window; puts are serialised by the backend anyway. */
#ifndef NEWSD_STORE_STORIES_H
#define NEWSD_STORE_STORIES_H

#include "store/backend.h"

struct store_stories;

int store_stories_new(struct store_stories **out, struct err *err);
void store_stories_free(struct store_stories *st);

/* The window in days (1..STORY_WINDOW_DAYS_MAX); applies from the next
 * start of the window (set it before the first put). */
void store_stories_window_days(struct store_stories *st, int64_t days);

/* The similarity that joins a story, in percent (10..100); applies from
 * the next start of the window (set it before the first put). */
void store_stories_similarity(struct store_stories *st, int64_t percent);

/* Give every article of arts whose story_id is 0 its story; preps (may
 * be NULL) holds what story_prepare made of each. */
struct story_prep;
int store_stories_assign(struct store_stories *st, struct store_backend *be, struct article *arts,
                         const struct story_prep *preps, size_t n, struct err *err);

/* store_stories_backfill (store.h) over backend be, with st's window and
 * similarity. */
int store_stories_backfill_run(struct store_stories *st, struct store_backend *be, size_t batch,
                               struct store_backfill_stats *stats, struct err *err);

#endif
