/* The one monotonic clock. Every deadline, timeout and duration in newsd is
 * measured on CLOCK_MONOTONIC in these units, so that a deadline computed in
 * one module (api's request budget) means the same instant in another (the
 * index's search loop). Wall-clock time (publishedAt, quotas' days) is
 * util/timefmt.h's business, not this file's. */
#ifndef NEWSD_UTIL_CLOCK_H
#define NEWSD_UTIL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds / microseconds. */
int64_t clock_mono_ms(void);
int64_t clock_mono_us(void);

/* The CLOCK_MONOTONIC instant ms from now, as a timespec: the absolute
 * time for pthread_cond_timedwait on a condition variable made by
 * clock_cond_init. ms <= 0 is now. */
struct timespec clock_mono_in(int64_t ms);

/* Initialise cv to time its waits on CLOCK_MONOTONIC (pthread's default is
 * the wall clock, which a clock step would stall or hurry). Returns 0 or
 * the error number of pthread_condattr_init/_setclock/pthread_cond_init;
 * cv is left uninitialised on error. */
int clock_cond_init(pthread_cond_t *cv);

/* Sleep ms milliseconds (restarted after a signal; ms <= 0 returns). */
void clock_sleep_ms(int64_t ms);

#endif
