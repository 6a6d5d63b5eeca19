/* The percolator: many saved searches (index/match.h matchers) against
 * each article as it is committed. Matchers are filed under their keys
 * (index_matcher_keys), so an article is tested only against the searches
 * one of its terms could satisfy; the cost grows with the searches an
 * article could match, not with all of them. Searches without keys are
 * tried on every article.
 *
 * Threads: percolator_add / percolator_remove may run while another thread
 * calls percolator_match (an internal read-write lock). */
#ifndef NEWSD_PUSH_PERCOLATOR_H
#define NEWSD_PUSH_PERCOLATOR_H

#include <stddef.h>
#include <stdint.h>

#include "index/match.h"
#include "util/err.h"

struct percolator;

int percolator_new(struct percolator **out, struct err *err);
void percolator_free(struct percolator *p); /* NULL: no-op; frees its matchers */

/* File matcher m under id (ids are the caller's: a stream's or an alert's;
 * an id already present is replaced). The percolator owns m afterwards,
 * also on failure. */
int percolator_add(struct percolator *p, uint64_t id, struct index_matcher *m, struct err *err);

/* Take id out (its matcher freed); an unknown id is a no-op. */
void percolator_remove(struct percolator *p, uint64_t id);

/* Number of searches filed. */
size_t percolator_size(struct percolator *p);

/* Number of distinct keys held: those of the searches filed, and at most
 * as many again (or 1,024) of searches gone. */
size_t percolator_keys(struct percolator *p);

/* The ids of the searches d matches, ascending, in *ids (malloc()ed; NULL
 * when none). */
int percolator_match(struct percolator *p, const struct index_match_doc *d, uint64_t **ids,
                     size_t *n, struct err *err);

#endif
