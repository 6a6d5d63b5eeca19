/* One article against one search request, without an index: what the
 * live streams and webhook alerts (src/push/) use to decide whether an
 * article just committed matches a saved search. The answer is the one
 * both search backends give for the same request over the same row (the
 * same tokenizer, the same expansion, index/expand.h; the same meta terms
 * for the filters, store/meta.h); tests/unit/test_index_match.c holds it to the
 * engine's answers over a real corpus.
 *
 * An article is prepared once (index_match_doc_new: tokenized, its terms
 * and positions per field) and then tested against any number of
 * requests, so the cost of tokenizing is paid once per article, not once
 * per saved search.
 *
 * Threads: a matcher is read-only after index_matcher_new and may be
 * tested from any thread; a doc belongs to one thread at a time. */
#ifndef NEWSD_INDEX_MATCH_H
#define NEWSD_INDEX_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "index/index.h"
#include "store/journal.h"
#include "util/err.h"

/* A request compiled for matching: q, q_fields, q_title, sources, domains,
 * exclude_domains, language, country, category, headlines_only, from, to.
 * sort, offset, limit and deadline_ms play no part. The matcher copies
 * what it needs: req and its strings may go after the call. */
struct index_matcher;
int index_matcher_new(struct index_matcher **out, const struct index_request *req, struct err *err);
void index_matcher_free(struct index_matcher *m); /* NULL: no-op */

/* The terms a matching article must have at least one of (its "keys",
 * what a percolator files the matcher under): query forms or meta terms,
 * chosen to be as rare as the request allows (the cheapest required part of
 * an AND by a guess from the terms alone: a source or domain filter before
 * a long word before a short word before a language, country or category;
 * every key of every branch of an OR; every form of a word). *n == 0: no
 * such set (the matcher must be tried on every article). Strings owned by
 * the matcher. Spelling: text terms as indexed (a token, "~" stem), meta
 * terms as "\x1E" then store_meta_term's spelling ("\x1Elen"), so a word
 * and a meta term never meet. */
void index_matcher_keys(const struct index_matcher *m, const char *const **keys, size_t *n);

/* One article prepared for matching. Copies what it needs of row. */
struct index_match_doc;
int index_match_doc_new(struct index_match_doc **out, const struct store_row *row, struct err *err);
void index_match_doc_free(struct index_match_doc *d); /* NULL: no-op */

/* The distinct terms of the doc in the spelling index_matcher_keys uses
 * (tokens, "~stem" forms and "\x1E"-marked meta terms), each once, for a
 * percolator's lookup. Strings owned by the doc. */
void index_match_doc_terms(const struct index_match_doc *d, const char *const **terms, size_t *n);

/* Whether the doc matches the matcher's request. */
bool index_matcher_test(const struct index_matcher *m, const struct index_match_doc *d);

#endif
