/* Comparison functions for qsort(3) and bsearch(3), kept once here so that
 * modules sorting the same kind of array (id lists, hashes) order it alike.
 * They compare, never subtract: no overflow whatever the values. */
#ifndef NEWSD_UTIL_SORT_H
#define NEWSD_UTIL_SORT_H

/* Two uint64_t, ascending: negative, 0 or positive. */
int sort_cmp_u64(const void *x, const void *y);

#endif
