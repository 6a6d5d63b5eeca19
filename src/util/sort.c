/* Integer comparisons for qsort and bsearch (util/sort.h). */
#include "util/sort.h"

#include <string.h>

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

void sort_u64_merge(uint64_t *a, uint64_t *tmp, size_t n)
{
    enum { RUN = 16 };
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            uint64_t v = a[i];
            size_t j = i;
            while (j > lo && a[j - 1] > v) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    }
    uint64_t *src = a, *dst = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = src[j] < src[i] ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}
