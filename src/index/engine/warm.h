/* A segment's columns that take a whole pass to make (columns.h: the
 * author facet reads every document of the store; the story column scans
 * the table's rows, past each row's text), made off the request's thread.
 *
 * At 10 M articles the first author facet or `dedupe` after a start made
 * them in the request's thread: 9 to 14 s, well past the request's budget
 * (query_timeout_ms), which was only looked at afterwards. Now a request
 * that finds a column missing hands the missing segments to a thread of
 * their own and waits for them until its deadline: in time, it goes on
 * as before; late, it answers ERR_WARMING (the API's 503 with Retry-After)
 * and the thread goes on, so that a later request finds them made. */
#ifndef NEWSD_INDEX_ENGINE_WARM_H
#define NEWSD_INDEX_ENGINE_WARM_H

#include <stdint.h>

#include "index/engine/internal.h"
#include "store/journal.h"
#include "util/err.h"

/* Every facet of mask (bit f: enum index_facet f) made for every segment
 * of s, or ERR_WARMING with err set when deadline_ms (clock_mono_ms; <= 0:
 * none, and nothing is waited for: the callers make what is missing
 * themselves, as before) came first. A column that could not be made
 * (out of memory, a damaged file) is left to the caller's own call, which
 * reports why. */
int eng_warm_facets(const struct eng_snap *s, unsigned mask, int64_t deadline_ms, struct err *err);

/* The story column of every segment of s, likewise (read from readers). */
int eng_warm_stories(const struct eng_snap *s, struct store_readers *readers, int64_t deadline_ms,
                     struct err *err);

/* The kinds of column (warm.c): bit f is facet f, this bit the story
 * column. */
#define ENG_WARM_FACETS ((1u << INDEX_FACET_N) - 1)
#define ENG_WARM_STORY (1u << INDEX_FACET_N)

/* Start making the columns of kinds of the segments of s with at least
 * min_docs documents that have not got them, on threads of their own,
 * without waiting: what a server whose searches have asked for them
 * before does at its start and for each segment a merge makes. */
void eng_warm_background(const struct eng_snap *s, unsigned kinds, uint32_t min_docs,
                         struct store_readers *readers);

/* The kinds a search of e asks for (warm.h's bits): a new one is marked
 * in the index directory (an empty WARM-<kind>), for the next start. */
void eng_warm_note(struct index_engine *e, unsigned kinds);

/* At open: the kinds marked in e's index directory (e->warm_dir). */
void eng_warm_recall(struct index_engine *e);

/* eng_warm_background of the kinds e's searches asked for over its
 * current snapshot's large segments (at open, and after each poll: the
 * segments a build or a merge adds). */
void eng_warm_follow(struct index_engine *e);

/* Wait for every thread making columns to end (each ends after the
 * segment it is making): before the readers they read go. */
void eng_warm_drain(void);

#endif
