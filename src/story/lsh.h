/* The window of recent articles a new one is compared with (story/assign.h):
 * per article its time, story, URL key, title key and sketch, found by
 * key and by LSH band (the sketch cut into STORY_LSH_BANDS bands of
 * STORY_LSH_ROWS slots; two sketches that agree on a whole band are
 * candidates). An article is compared with those published within the
 * window of its time; the memory holds at most STORY_LSH_MAX_ENTRIES
 * (the oldest go first). Not thread-safe: the caller serialises. */
#ifndef NEWSD_STORY_LSH_H
#define NEWSD_STORY_LSH_H

#include <stddef.h>
#include <stdint.h>

#include "story/sketch.h"

/* Rows per band: a pair with similarity s becomes a candidate with
 * probability 1 - (1 - s^ROWS)^BANDS: with 16 bands of 2 rows (the first
 * 32 slots), 0.94 at 0.4 (the default threshold) and 0.99 at 0.5, so
 * mostly the threshold and not the index decides; 3 x 21 missed 6 % of the pairs at 0.5, and 2 x 32
 * cost the import a quarter of its rate in table probes (docs/stories.md). */
#define STORY_LSH_ROWS 2
#define STORY_LSH_BANDS 16
_Static_assert(STORY_LSH_ROWS *STORY_LSH_BANDS <= STORY_SKETCH_K, "bands fit in a sketch");
/* Entries looked at per key: a key shared by many articles (a boiler-plate
 * band) costs no more than this. Newest first. */
#define STORY_LSH_CHAIN_MAX 64
/* Articles held at most (~0.4 KB each plus ~0.5 KB of table): three days
 * of 150,000 a day with room to spare; the window otherwise holds what
 * was published within two windows of the newest (lsh.c). */
#define STORY_LSH_MAX_ENTRIES 1000000

struct story_lsh;

/* window_s: how far back in publication time an article is compared. */
int story_lsh_new(struct story_lsh **out, int64_t window_s);
void story_lsh_free(struct story_lsh *l);

/* Remember an article (ERR_NOMEM). url_key / title_key 0: none. */
int story_lsh_add(struct story_lsh *l, int64_t t, int64_t story, uint64_t site_key,
                  uint64_t url_key, uint64_t title_key, const struct story_sketch *sk);

/* Start loading where the look-ups of an article's keys will go (a hint:
 * in a window larger than the cache the probes then overlap). */
void story_lsh_prefetch(const struct story_lsh *l, uint64_t url_key, uint64_t title_key,
                        const struct story_sketch *sk);

/* The story of the newest article with this URL key (the same article
 * again, at any time the window still holds); 0 none. */
int64_t story_lsh_find_url(const struct story_lsh *l, uint64_t url_key);

/* The story of the newest article with this title key published within
 * max_dt seconds of t; 0 none. */
int64_t story_lsh_find_title(const struct story_lsh *l, uint64_t title_key, int64_t t,
                             int64_t max_dt);

/* The story of the most similar candidate from another host (site_key
 * 0: any) within the window of t whose similarity is at least threshold
 * (*sim gets it; ties: the newest); 0 none. */
int64_t story_lsh_find_similar(const struct story_lsh *l, const struct story_sketch *sk,
                               uint64_t site_key, int64_t t, double threshold, double *sim);

/* Articles held (for tests and the metrics). */
size_t story_lsh_size(const struct story_lsh *l);

#endif
