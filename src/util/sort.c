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

double sort_kth_largest(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, want = k - 1;
    for (;;) {
        if (lo == hi)
            return x[lo];
        double p = x[lo + (hi - lo) / 2];
        /* [lo, lt) above p, [lt, i) equal, [gt, hi] below */
        size_t lt = lo, i = lo, gt = hi + 1;
        while (i < gt) {
            double t = x[i];
            if (t > p) {
                x[i++] = x[lt];
                x[lt++] = t;
            } else if (t < p) {
                x[i] = x[--gt];
                x[gt] = t;
            } else {
                i++;
            }
        }
        if (want < lt)
            hi = lt - 1;
        else if (want >= gt)
            lo = gt;
        else
            return p;
    }
}
