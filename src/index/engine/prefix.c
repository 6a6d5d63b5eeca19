/* eng_prefix_terms (internal.h): a prefix's words for index/prefix.c.
 * Each segment's dictionary is sorted, so a prefix's words are one run of
 * it from the prefix's lower bound; the runs of the segments are merged
 * into one sorted set, which stops growing at max (the caller's bound, so
 * a prefix of thousands of words costs max + 1 insertions per segment, not
 * thousands). */
#include "index/engine/internal.h"

#include <string.h>

#include "util/sort.h"
#include "util/banned.h"

struct word {
    const char *s;
    size_t len;
};

struct words {
    struct word *v; /* ascending */
    size_t n, max;
};

/* Byte order, a shorter word before the longer one it begins. */
static int cmp_word(const void *element, const void *key)
{
    const struct word *x = element, *y = key;
    return sort_order_bytes(x->s, x->len, y->s, y->len);
}

/* Insert w[0..len) unless there; *full when the set is full. */
static int words_add(struct arena *a, struct words *s, const char *w, size_t len, bool *full)
{
    struct word key = {w, len};
    size_t at = sort_lower_bound(s->v, s->n, sizeof *s->v, &key, cmp_word);
    if (at < s->n && cmp_word(&s->v[at], &key) == 0)
        return 0;
    if (s->n == s->max) {
        *full = true;
        return 0;
    }
    char *copy = arena_strndup(a, w, len);
    if (copy == NULL)
        return ERR_NOMEM;
    memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof *s->v);
    s->v[at] = (struct word){copy, len};
    s->n++;
    return 0;
}

int eng_prefix_terms(const struct eng_snap *s, struct arena *a, const char *p, size_t len,
                     size_t max, const char ***out, size_t *n)
{
    struct words w = {.max = max};
    bool full = false;
    int rc;

    *out = NULL;
    *n = 0;
    const char **list = arena_calloc(a, max ? max : 1, sizeof *list);
    w.v = arena_calloc(a, max ? max : 1, sizeof *w.v);
    if (list == NULL || w.v == NULL)
        return ERR_NOMEM;
    for (size_t si = 0; si < s->nseg && !full; si++) {
        const struct eng_segment *seg = s->segs[si];
        struct eng_term_iter it;
        struct eng_term t;
        /* (a damaged dictionary ends the walk: nothing more from it) */
        for (bool more = eng_term_iter_at(&it, seg, eng_tdict_lower(seg, p, len, &t), &t);
             more && !full; more = eng_term_iter_next(&it)) {
            if (t.len < len || memcmp(seg->strs + t.str, p, len) != 0)
                break; /* past the run */
            if (eng_kind(t.kind) == ENG_TERM_EXACT &&
                (rc = words_add(a, &w, seg->strs + t.str, t.len, &full)) < 0)
                return rc;
        }
    }
    for (size_t i = 0; i < w.n; i++)
        list[i] = w.v[i].s;
    *out = list;
    *n = w.n;
    return 0;
}
