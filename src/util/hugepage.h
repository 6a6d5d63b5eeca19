/* Transparent huge pages for a large table read at random. A table of
 * millions of small entries looked up in no order (the segment builder's
 * term hash and term array) misses the TLB on nearly every lookup with 4 KiB
 * pages, and a prefetch of such an entry waits for its page walk. Debian's
 * kernels give huge pages only where asked (transparent_hugepage=madvise). */
#ifndef NEWSD_UTIL_HUGEPAGE_H
#define NEWSD_UTIL_HUGEPAGE_H

#include <stddef.h>

/* Ask for huge pages for the whole pages inside p[0..n), those not yet
 * touched (a page already faulted in keeps its size until the kernel's
 * khugepaged merges it). Only a hint: nothing happens below HUGEPAGE_MIN
 * bytes, or where the kernel has them off. */
#define HUGEPAGE_MIN (4u << 20)
void hugepage_advise(void *p, size_t n);

#endif
