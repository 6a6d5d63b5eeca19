/* The query string of a request as NewsAPI clients send it (API.md §1, §8):
 * names are case-insensitive (stored lower-case), values are URL-decoded
 * ('+' is a space, %XX a byte; a malformed escape is kept literally), an
 * empty value is the same as an absent parameter, a name that decodes to
 * a NUL byte anywhere is dropped, and a repeated parameter
 * keeps every value in order. Pure functions over an arena: fuzzed by
 * fuzz/fuzz_params.c. */
#ifndef NEWSD_API_PARAMS_H
#define NEWSD_API_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

struct api_param {
    const char *name;  /* lower-case, decoded */
    const char *value; /* decoded, NUL-terminated; never empty */
    size_t len;        /* bytes of value (it may hold decoded NULs) */
};

struct api_params {
    struct api_param *items;
    size_t n;
};

/* Split and decode query[0..len). Empty values are dropped. Returns 0 or
 * ERR_NOMEM. */
int api_params_parse(struct arena *a, const char *query, size_t len, struct api_params *out);

/* First value of name (lower-case), NULL when absent. */
const struct api_param *api_params_first(const struct api_params *p, const char *name);

/* Number of values of name. */
size_t api_params_count(const struct api_params *p, const char *name);

/* Every value of name joined with sep (e.g. "," for lists, " AND " would be
 * wrong for q: callers combine parsed trees). NULL when absent. */
const char *api_params_joined(struct arena *a, const struct api_params *p, const char *name,
                              const char *sep);

/* /v2/everything's search-only parameters, its date window, order and
 * paging: from, to, sortBy, page, pageSize, and the form of its page
 * (format: a feed; cursor: a walk). They mean nothing to a live
 * stream or an alert (both get every new matching article), which refuse
 * them rather than ignore them; the list is kept here once for both. */

/* name's documented spelling ("sortBy") when name is one of them, ASCII
 * case ignored (an alert body's keys); NULL otherwise. */
const char *api_search_only_param(const char *name);

/* The first of them, in the order above, that p holds, by its documented
 * spelling; NULL when p holds none. */
const char *api_params_search_only(const struct api_params *p);

/* Split a comma list into trimmed, non-empty items (spaces and tabs
 * trimmed). *n_out items; returns 0 or ERR_NOMEM. */
int api_list_split(struct arena *a, const char *list, const char ***items_out, size_t *n_out);

#endif
