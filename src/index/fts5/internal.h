/* Private to src/index/fts5/: the FTS5 backend (fts5.c: connections and
 * SQL) and the translation of a request into one FTS5 MATCH expression
 * (match.c). */
#ifndef NEWSD_INDEX_FTS5_INTERNAL_H
#define NEWSD_INDEX_FTS5_INTERNAL_H

#include "index/backend.h"
#include "util/buf.h"

#define INDEX_FTS5_MATCH_MAX (256 * 1024) /* bytes of one MATCH expression */

/* Write the MATCH expression of req into b (which should be empty): the
 * text conditions (q, q_title) restricted to their columns, and every
 * filter as a term of the meta column (store/meta.h). Temporary
 * strings go to a. Returns 0, ERR_INVALID for a tree outside query.h's
 * normal form (NOT at the root or under OR, an AND of exclusions only, an
 * empty WORD/PHRASE), ERR_TOO_LARGE, or ERR_NOMEM; err says which. */
int index_fts5_match_build(struct buf *b, struct arena *a, const struct index_request *req,
                           struct err *err);

#endif
