/* The segment writer of segment.c: a segment from postings already in
 * their final docids, as a merge (merge.c) hands them over. */
#ifndef NEWSD_INDEX_ENGINE_SEGW_H
#define NEWSD_INDEX_ENGINE_SEGW_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "index/engine/internal.h"

/* A segment written from postings already in its final docid order (the
 * merge, merge.c): eng_segw_new(n), eng_segw_doc for every docid < n, then
 * for each term in ascending byte order eng_segw_term, its postings in
 * ascending docid order, eng_segw_term_end (a term left without postings
 * is dropped); eng_segw_finish hands the segment over. Postings are
 * encoded by the builder's own encoder. Every call 0 or ERR_NOMEM. */
struct eng_segw;
struct eng_segw_doc {
    int64_t id;
    uint32_t dl, src;
    uint64_t url_hash;
};
int eng_segw_new(struct eng_segw **out, uint32_t n);
void eng_segw_free(struct eng_segw *w);
/* Terms of min_df documents or more get a tier (tiers.h; ENG_TIER_MIN_DF
 * until this is called; 0: none). */
void eng_segw_tiers(struct eng_segw *w, uint32_t min_df);
/* Documents in docid order, 0 .. n-1. 0 or ERR_NOMEM. */
int eng_segw_doc(struct eng_segw *w, uint32_t doc, const struct eng_segw_doc *d);
/* Their document store's JSON (copied), in docid order 0 .. n-1, before
 * eng_segw_docs, on its thread if it has one. 0 or ERR_NOMEM. */
int eng_segw_json(struct eng_segw *w, uint32_t doc, const char *json, size_t len);
/* str is borrowed until eng_segw_term_end. */
int eng_segw_term(struct eng_segw *w, const char *str, size_t len, uint8_t kind);
/* pos[f] holds tf[f] positions (exact terms; tf[f] <= ENG_POS_MAX). */
int eng_segw_posting(struct eng_segw *w, uint32_t doc, unsigned mask, const uint32_t tf[ENG_FIELDS],
                     const uint32_t (*pos)[ENG_POS_MAX]);
int eng_segw_term_end(struct eng_segw *w);
/* Kind flags (ENG_TERM_RESID, ENG_TERM_BARE) added to the term being
 * written, before its eng_segw_term_end. */
void eng_segw_term_flags(struct eng_segw *w, unsigned flags);
/* The document store, once every document is in: it shares no field with
 * the terms, so another thread may build it while they are added (else
 * eng_segw_finish does). 0, ERR_NOMEM, ERR_BUSY or ERR_INVALID (eng_docs_build). */
int eng_segw_docs(struct eng_segw *w, const atomic_bool *cancel);
int eng_segw_finish(struct eng_segw *w, struct eng_segment **out);

#endif
