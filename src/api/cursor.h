/* Cursor paging on /v2/everything (docs/api.md, "Every match: cursor
 * paging"): a position in a newest-first walk over a search's matches,
 * past the result window, with no gap and no duplicate while articles are
 * imported or deleted.
 *
 * Why it works: an article's id is its publication second shifted left
 * (store.h STORE_ID_SHIFT) plus a counter, so newest first is id order,
 * for both search backends, and "the rest of the walk" is "ids below the
 * last one given", a bound that imports and deletions cannot shift (an
 * offset can). The cursor carries that id and a fingerprint of the search
 * it belongs to; it is opaque to clients and checked, so a malformed or
 * another search's cursor is refused, never misread. Pure functions:
 * fuzzed by fuzz/fuzz_cursor.c. */
#ifndef NEWSD_API_CURSOR_H
#define NEWSD_API_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/params.h"

/* "c1", 16 hex digits of the search, 16 of the id, 8 of a check. */
#define API_CURSOR_LEN 42

struct api_cursor {
    uint64_t search; /* api_cursor_search of the request that made it */
    int64_t id;      /* the walk goes on below this article id */
};

/* The fingerprint of a request's search: every value of the parameters
 * that choose and order its matches (q, qInTitle, searchIn, sources,
 * domains, excludeDomains, from, to, language, sortBy), not those of the
 * page (pageSize, cursor, the key). */
uint64_t api_cursor_search(const struct api_params *p);

/* c as its API_CURSOR_LEN characters and a NUL. */
void api_cursor_encode(const struct api_cursor *c, char out[API_CURSOR_LEN + 1]);

/* s[0..n) back into *out: false when it is not a cursor this build wrote
 * (length, version, digits, check). */
bool api_cursor_decode(const char *s, size_t n, struct api_cursor *out);

#endif
