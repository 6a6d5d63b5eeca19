/* Integer comparisons for qsort and bsearch (util/sort.h). */
#include "util/sort.h"

#include <stdint.h>

#include "util/banned.h"

int sort_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}
