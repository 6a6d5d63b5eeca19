/* Transparent huge pages (util/hugepage.h). */
#include "util/hugepage.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/banned.h"

void hugepage_advise(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (p == NULL || n < HUGEPAGE_MIN)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* a hint: failure is harmless */
#else
    (void)p;
    (void)n;
#endif
}
