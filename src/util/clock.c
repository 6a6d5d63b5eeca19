/* The one monotonic clock (util/clock.h). */
#include "util/clock.h"

#include <errno.h>

int64_t clock_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct timespec clock_mono_in(int64_t ms)
{
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    if (ms <= 0)
        return at;
    at.tv_sec += (time_t)(ms / 1000);
    at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return at;
}

int clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    int e = pthread_condattr_init(&attr);
    if (e != 0)
        return e;
    e = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (e == 0)
        e = pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
    return e;
}

void clock_sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}
