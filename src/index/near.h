/* Private to src/index/ (the engine's iterator and index/match.c): the
 * windows of a proximity "a b c"~N (query.h QUERY_NEAR) in one field,
 * counted from the sorted positions of its words, so that the engine and
 * the saved-search matcher decide a match by the same code. */
#ifndef NEWSD_INDEX_NEAR_H
#define NEWSD_INDEX_NEAR_H

#include <stddef.h>
#include <stdint.h>

/* The widest window of k words with `distance` other tokens among them:
 * the last word's position minus the first's is at most this. */
static inline uint32_t index_near_span(unsigned distance, size_t k)
{
    return (uint32_t)distance + (uint32_t)k - 1;
}

/* pos[i][0..n[i]) are the ascending positions of distinct word i of k
 * (2 ≤ k ≤ LIMIT_NEAR_WORDS) in one field. Returns how many positions
 * start a window holding every word with last − first ≤ span (0: no
 * match): the proximity's instance count, in O(k · Σ n). */
uint32_t index_near_windows(const uint32_t *const *pos, const uint32_t *n, size_t k, uint32_t span);

#endif
