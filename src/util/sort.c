/* Integer comparisons for qsort and bsearch (util/sort.h). */
#include "util/sort.h"

#include "util/banned.h"

int sort_cmp_u64(const void *x, const void *y)
{
    return sort_order_u64(*(const uint64_t *)x, *(const uint64_t *)y);
}

int sort_cmp_i64(const void *x, const void *y)
{
    return sort_order_i64(*(const int64_t *)x, *(const int64_t *)y);
}

int sort_cmp_keyed(const void *x, const void *y)
{
    const struct sort_keyed *a = x, *b = y;
    int c = sort_order_u64(a->key, b->key);
    return c ? c : sort_order_u64(a->at, b->at);
}

int sort_cmp_i64_desc(const void *x, const void *y)
{
    return sort_order_i64(*(const int64_t *)y, *(const int64_t *)x);
}
