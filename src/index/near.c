/* index/near.h: a sweep of k cursors, one per word, always moving the one
 * on the lowest position: each window start is met once with the nearest
 * instance of every other word at or after it, which is the narrowest
 * window starting there. */
#include "index/near.h"

#include "util/limits.h"
#include "util/banned.h"

uint32_t index_near_windows(const uint32_t *const *pos, const uint32_t *n, size_t k, uint32_t span)
{
    uint32_t at[LIMIT_NEAR_WORDS] = {0}, windows = 0;

    if (k < 2 || k > LIMIT_NEAR_WORDS)
        return 0;
    for (size_t i = 0; i < k; i++) {
        if (n[i] == 0)
            return 0;
    }
    for (;;) {
        size_t lo = 0;
        uint32_t hi = pos[0][at[0]];
        for (size_t i = 1; i < k; i++) {
            uint32_t p = pos[i][at[i]];
            if (p < pos[lo][at[lo]])
                lo = i;
            if (p > hi)
                hi = p;
        }
        if (hi - pos[lo][at[lo]] <= span)
            windows++;
        if (++at[lo] == n[lo])
            return windows;
    }
}
