/* A search's matches in the backend's own order (relevancy, popularity),
 * kept to a set of story matches: what dedupe (index/stories.c) and
 * similarTo (index/similar.c) page through. Private to src/index/. */
#ifndef NEWSD_INDEX_WALK_H
#define NEWSD_INDEX_WALK_H

#include "index/index.h"

/* struct index_story_match by id: the order index_walk_matches's set is in. */
int index_story_match_cmp_id(const void *x, const void *y);

/* Called for each match of the walk that is in the set, in the search's
 * order: m is its entry in the set. 0 goes on, 1 ends the walk (enough
 * found), an error ends it with that error. */
typedef int (*index_walk_fn)(void *ctx, const struct index_story_match *m);

/* Walk req's matches from the top in pages that double from chunk (the
 * page and offset of req ignored), calling fn for each whose id is in
 * set[0..n) (sorted by index_story_match_cmp_id; a match not in it, such
 * as one newer than the set, is passed over), until fn ends it, the
 * matches end, or max_walked have been walked. 0 or an error of
 * index_search or fn. */
int index_walk_matches(struct index *idx, struct arena *a, const struct index_request *req,
                       const struct index_story_match *set, size_t n, size_t chunk,
                       size_t max_walked, index_walk_fn fn, void *ctx, struct err *err);

#endif
