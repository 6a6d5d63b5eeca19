/* A search's own order kept to a set of matches (index/walk.h). */
#include "index/walk.h"

#include <stdlib.h>

#include "util/sort.h"
#include "util/banned.h"

int index_story_match_cmp_id(const void *x, const void *y)
{
    const struct index_story_match *a = x, *b = y;
    return sort_order_i64(a->id, b->id);
}

int index_walk_matches(struct index *idx, struct arena *a, const struct index_request *req,
                       const struct index_story_match *set, size_t n, size_t chunk,
                       size_t max_walked, index_walk_fn fn, void *ctx, struct err *err)
{
    size_t walked = 0;
    while (walked < max_walked) {
        struct index_request part = *req;
        struct index_result res;
        int rc;
        part.offset = walked;
        part.limit = chunk;
        if ((rc = index_search(idx, a, &part, &res, err)) < 0)
            return rc;
        for (size_t i = 0; i < res.n; i++) {
            struct index_story_match key = {.id = res.docs[i].id};
            const struct index_story_match *m =
                bsearch(&key, set, n, sizeof *set, index_story_match_cmp_id);
            if (m != NULL && (rc = fn(ctx, m)) != 0)
                return rc < 0 ? rc : 0;
        }
        if (res.n < chunk)
            break; /* the end of the matches */
        walked += res.n;
        chunk *= 2;
    }
    return 0;
}
