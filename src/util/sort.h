/* Ordering, kept once here: the comparison functions for qsort(3) and
 * bsearch(3), so that modules sorting the same kind of array (id lists,
 * hashes) order it alike, and the one lower-bound search over a sorted
 * array. They compare, never subtract: no overflow whatever the values. */
#ifndef NEWSD_UTIL_SORT_H
#define NEWSD_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* a against b: -1, 0 or 1. For comparators of records keyed by integers. */
static inline int sort_order_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static inline int sort_order_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* a[0..alen) against b[0..blen) in byte order (memcmp's), a string
 * before the longer ones it begins: negative, 0 or positive. For term and
 * value strings kept with their lengths. */
static inline int sort_order_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = alen && blen ? memcmp(a, b, alen < blen ? alen : blen) : 0;
    return c ? c : sort_order_u64(alen, blen);
}

/* Two uint64_t / int64_t, ascending: negative, 0 or positive. */
int sort_cmp_u64(const void *x, const void *y);
int sort_cmp_i64(const void *x, const void *y);
/* int64_t values, descending (newest id first). */
int sort_cmp_i64_desc(const void *x, const void *y);

/* A 64-bit key (a hash) and where it came from (an index, a docid). */
struct sort_keyed {
    uint64_t key;
    uint64_t at;
};

/* The k-th largest of x[0, n) (1 <= k <= n, no NaN), x reordered: a
 * three-way quickselect, O(n) on average where a sort is O(n log n). */
double sort_kth_largest(double *x, size_t n, size_t k);

/* struct sort_keyed by key, equal keys by where they came from: qsort(3)
 * is not stable, and this order is what a stable sort by key would give
 * an array filled in place order. */
int sort_cmp_keyed(const void *x, const void *y);

/* The lower bound of key in base[0..n) (elements of size bytes, sorted by
 * cmp): the first index whose element is not less than key, n when every
 * element is. cmp(element, key) is negative when the element orders before
 * key. The element at the result, when it is < n, is key's only when
 * cmp there is 0: "found" is the caller's second look. Inline so that a
 * static comparator is inlined too (the tokenizer asks per code point). */
static inline size_t sort_lower_bound(const void *base, size_t n, size_t size, const void *key,
                                      int (*cmp)(const void *element, const void *key))
{
    const char *p = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(p + mid * size, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* sort_lower_bound's cmp over ascending uint32_t (a docid list). */
static inline int sort_u32_before(const void *element, const void *key)
{
    return *(const uint32_t *)element < *(const uint32_t *)key ? -1 : 0;
}

#endif
