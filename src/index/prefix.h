/* Private to src/index/: the prefixes of a request (word*, query.h) made
 * into words before a backend sees it. A prefix stands for the exact words
 * of the index that start with it, read from the backend's own dictionary
 * (index_backend.prefix_terms: the engine's segments, FTS5's vocabulary),
 * so both backends search the same OR of words, score it alike, and agree
 * with the saved-search matcher, which tests the prefix on each article's
 * own words (index/match.c). Bounded: LIMIT_PREFIX_WORDS words for one
 * prefix and LIMIT_QUERY_TERMS for all of them, past which the request is
 * ERR_REFUSED ("too broad"), never a slow query. */
#ifndef NEWSD_INDEX_PREFIX_H
#define NEWSD_INDEX_PREFIX_H

#include "index/backend.h"

/* req with q's and qInTitle's prefixes replaced by the OR of their words
 * (a prefix no word starts with matches nothing), into *out: req itself
 * when it has none, else a copy in a. ERR_REFUSED past the bounds (the
 * message names the prefix), a backend's errors. */
int index_prefix_expand(struct index_backend *b, struct arena *a, const struct index_request *req,
                        const struct index_request **out, struct err *err);

#endif
