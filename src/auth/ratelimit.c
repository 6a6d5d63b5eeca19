/* Per-key burst limit (auth.h): a token bucket holding up to `capacity`
 * requests, refilled continuously at `rate` per second. Time is whole
 * seconds from the caller, so tests drive it without sleeping. */
#include "auth/internal.h"

#include <math.h>

#include "util/banned.h"

/* Tolerance for the float sums of refills (0.1 * 10 may land just under 1). */
#define BUCKET_EPSILON 1e-9

double auth_bucket_capacity(const struct auth_plan *p)
{
    if (p->burst_size > 0)
        return (double)p->burst_size;
    double c = ceil(p->burst_per_second);
    return c < 1 ? 1 : c;
}

int64_t auth_bucket_take(struct auth_bucket *b, double rate, double capacity, int64_t now)
{
    if (!b->started) {
        b->tokens = capacity;
        b->last = now;
        b->started = true;
    }
    /* A clock that steps back (threads reading it around one second) neither
     * refills nor rewinds the bucket. */
    if (now > b->last) {
        b->tokens += (double)(now - b->last) * rate;
        b->last = now;
    }
    if (b->tokens > capacity)
        b->tokens = capacity;
    if (b->tokens + BUCKET_EPSILON >= 1.0) {
        b->tokens -= 1.0;
        if (b->tokens < 0)
            b->tokens = 0;
        return 0;
    }
    double wait = ceil((1.0 - b->tokens - BUCKET_EPSILON) / rate);
    if (!(wait >= 1))
        return 1;
    if (wait > 86400.0 * 366)
        return 86400 * 366;
    return (int64_t)wait;
}
