/* Facet values merged and cut to their top (index.h), shared by both
 * backends so that their orders agree byte for byte. */
#include "index/index.h"

#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

#include "util/banned.h"

static const char *const facet_names[INDEX_FACET_N] = {"source",  "domain",   "language",
                                                       "country", "category", "author"};

const char *index_facet_name(enum index_facet f)
{
    return (unsigned)f < INDEX_FACET_N ? facet_names[f] : "";
}

int index_facet_acc_add(struct index_facet_acc *acc, struct arena *a, const char *value, size_t len,
                        uint64_t count)
{
    if (arena_grow(a, &acc->v, &acc->cap, acc->n, 64, sizeof *acc->v) < 0)
        return ERR_NOMEM;
    acc->v[acc->n++] = (struct index_facet_value){value, len, count};
    return 0;
}

static int cmp_value(const void *x, const void *y)
{
    const struct index_facet_value *a = x, *b = y;
    return sort_order_bytes(a->value, a->len, b->value, b->len);
}

/* x ranks before y: more matches, then the smaller value. */
static int cmp_top(const void *x, const void *y)
{
    const struct index_facet_value *a = x, *b = y;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return cmp_value(x, y);
}

/* The kept top as a heap whose root ranks last: a value that ranks before
 * the root replaces it. O(values · log size), not a sort of every value
 * (a common word's matches have tens of thousands of domains). */
static void sift_down(struct index_facet_value *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cmp_top(&h[l], &h[m]) > 0)
            m = l;
        if (r < n && cmp_top(&h[r], &h[m]) > 0)
            m = r;
        if (m == i)
            return;
        struct index_facet_value t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(struct index_facet_value *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cmp_top(&h[i], &h[p]) <= 0)
            return;
        struct index_facet_value t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

int index_facet_acc_top(struct index_facet_acc *acc, struct arena *a, size_t size,
                        struct index_facet_top *out)
{
    size_t m = acc->n;
    out->n = 0;
    out->v = NULL;
    if (acc->repeats && m > 0) { /* a value from several segments: summed */
        qsort(acc->v, acc->n, sizeof *acc->v, cmp_value);
        m = 0;
        for (size_t i = 0; i < acc->n; i++) {
            if (m > 0 && cmp_value(&acc->v[m - 1], &acc->v[i]) == 0) {
                acc->v[m - 1].count += acc->v[i].count;
                continue;
            }
            acc->v[m++] = acc->v[i];
        }
    }
    struct index_facet_value *h = arena_calloc(a, size ? size : 1, sizeof *h);
    if (h == NULL)
        return ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (acc->v[i].count == 0) /* a value all of whose pairs were 0 is no value */
            continue;
        if (k < size) {
            h[k] = acc->v[i];
            sift_up(h, k++);
        } else if (size > 0 && cmp_top(&acc->v[i], &h[0]) < 0) {
            h[0] = acc->v[i];
            sift_down(h, k, 0);
        }
    }
    qsort(h, k, sizeof *h, cmp_top);
    for (size_t i = 0; i < k; i++) { /* the strings the caller lent, copied */
        char *copy = arena_alloc(a, h[i].len + 1);
        if (copy == NULL)
            return ERR_NOMEM;
        memcpy(copy, h[i].value, h[i].len);
        copy[h[i].len] = '\0';
        h[i].value = copy;
    }
    out->v = h;
    out->n = k;
    return 0;
}
