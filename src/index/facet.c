/* Facet values merged and cut to their top (index.h), shared by both
 * backends so that their orders agree byte for byte. */
#include "index/index.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

static const char *const facet_names[INDEX_FACET_N] = {"source",  "domain",   "language",
                                                       "country", "category", "author"};

const char *index_facet_name(enum index_facet f)
{
    return (unsigned)f < INDEX_FACET_N ? facet_names[f] : "";
}

int index_facet_acc_add(struct index_facet_acc *acc, struct arena *a, const char *value,
                        size_t len, uint64_t count)
{
    if (acc->n == acc->cap) {
        size_t cap = acc->cap ? acc->cap * 2 : 64;
        struct index_facet_value *v = arena_calloc(a, cap, sizeof *v);
        if (v == NULL)
            return ERR_NOMEM;
        if (acc->n)
            memcpy(v, acc->v, acc->n * sizeof *v);
        acc->v = v;
        acc->cap = cap;
    }
    char *copy = arena_alloc(a, len + 1);
    if (copy == NULL)
        return ERR_NOMEM;
    memcpy(copy, value, len);
    copy[len] = '\0';
    acc->v[acc->n++] = (struct index_facet_value){copy, len, count};
    return 0;
}

static int cmp_value(const void *x, const void *y)
{
    const struct index_facet_value *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->value, b->value, n);
    if (c)
        return c;
    return (a->len > b->len) - (a->len < b->len);
}

static int cmp_top(const void *x, const void *y)
{
    const struct index_facet_value *a = x, *b = y;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return cmp_value(x, y);
}

void index_facet_acc_top(struct index_facet_acc *acc, size_t size, struct index_facet_top *out)
{
    size_t m = 0;
    if (acc->n > 0) {
        qsort(acc->v, acc->n, sizeof *acc->v, cmp_value);
        for (size_t i = 0; i < acc->n; i++) {
            if (m > 0 && cmp_value(&acc->v[m - 1], &acc->v[i]) == 0) {
                acc->v[m - 1].count += acc->v[i].count;
                continue;
            }
            acc->v[m++] = acc->v[i];
        }
        size_t k = 0; /* a value all of whose pairs were 0 is no value */
        for (size_t i = 0; i < m; i++)
            if (acc->v[i].count > 0)
                acc->v[k++] = acc->v[i];
        m = k;
        qsort(acc->v, m, sizeof *acc->v, cmp_top);
    }
    out->v = acc->v;
    out->n = m < size ? m : size;
}
