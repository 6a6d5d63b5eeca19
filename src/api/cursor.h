/* Cursor paging on /v2/everything (docs/api.md, "Every match: cursor
 * paging"): a position in a walk over a search's matches in its sortBy
 * order, past the result window, with no gap and no duplicate while
 * articles are imported or deleted. A keyset, never an offset:
 *
 *  - publishedAt: an article's id is its publication second shifted left
 *    (store.h STORE_ID_SHIFT) plus a counter, so newest first is id order,
 *    for both search backends, and "the rest of the walk" is "ids below the
 *    last one given", a bound that imports and deletions cannot shift.
 *  - popularity: (the source's popularity, id), both the article's own;
 *    the rest is what ranks after the last one given in that order.
 *  - relevancy: (score, id), where the score is bm25 over the collection's
 *    statistics (documents, tokens, each scored word's documents), which
 *    imports and deletions move. The cursor carries the statistics of the
 *    walk's first page and every later page ranks with them: a score is
 *    then a function of the article alone, and (score, id) a place that
 *    stays put. The score travels as its bits, compared exactly.
 *
 * The cursor carries a fingerprint of the search it belongs to; it is
 * opaque to clients and checked, so a malformed or another search's
 * cursor is refused, never misread. Pure functions: fuzzed by
 * fuzz/fuzz_cursor.c. */
#ifndef NEWSD_API_CURSOR_H
#define NEWSD_API_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/params.h"
#include "index/index.h"

/* The publishedAt cursor: "c1", 16 hex digits of the search, 16 of the
 * id, 8 of a check. */
#define API_CURSOR_LEN 42
/* A ranked order's: "c2", the order's letter (p popularity, r relevancy),
 * 16 hex digits each of the search, the id and the key's bits, then for
 * relevancy "." and a number (hex, no leading zero) for the documents,
 * the tokens and each scored leaf's documents, then 8 of a check. */
#define API_CURSOR_MAX (2 + 1 + 48 + (2 + INDEX_RANK_LEAVES_MAX) * 17 + 8)

enum api_cursor_kind {
    API_CURSOR_PUBLISHED,  /* sortBy=publishedAt */
    API_CURSOR_POPULARITY, /* sortBy=popularity */
    API_CURSOR_RELEVANCY,  /* sortBy=relevancy */
};

struct api_cursor {
    enum api_cursor_kind kind;
    uint64_t search;               /* api_cursor_search of the request that made it */
    int64_t id;                    /* the last article given */
    double key;                    /* ranked: its popularity or score (finite) */
    struct index_rank_stats stats; /* relevancy: the walk's frozen statistics */
};

/* The fingerprint of a request's search: every value of the parameters
 * that choose and order its matches (q, qInTitle, searchIn, sources,
 * domains, excludeDomains, from, to, language, sortBy), not those of the
 * page (pageSize, cursor, the key). */
uint64_t api_cursor_search(const struct api_params *p);

/* c as at most API_CURSOR_MAX characters and a NUL into out, which holds
 * API_CURSOR_MAX + 1 bytes (API_CURSOR_LEN + 1 suffice for a publishedAt
 * cursor: exactly that many are written). */
void api_cursor_encode(const struct api_cursor *c, char *out);

/* s[0..n) back into *out: false when it is not a cursor this build wrote
 * (length, version, digits, check, a key or statistics no walk has). */
bool api_cursor_decode(const char *s, size_t n, struct api_cursor *out);

#endif
