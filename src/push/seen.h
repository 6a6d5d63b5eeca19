/* The stories a push subscriber (a live stream with dedupe=true, a webhook
 * alert with "dedupe": true) has been sent, and how many copies of each
 * it has met since: a bounded memory, so that a stream open for weeks
 * holds no more than PUSH_SEEN_MAX stories' worth (two generations of at
 * most that many: a story is remembered at least until PUSH_SEEN_MAX
 * other stories came after it). */
#ifndef NEWSD_PUSH_SEEN_H
#define NEWSD_PUSH_SEEN_H

#include <stdint.h>

#define PUSH_SEEN_MAX 4096

struct push_seen;

/* NULL when out of memory. */
struct push_seen *push_seen_new(void);
void push_seen_free(struct push_seen *s);

/* Count one more article of story: 1 when it is the first remembered (to
 * be sent), else how many articles of it have been met, this one
 * included; 0 when out of memory (the caller sends it, as a first). */
uint64_t push_seen_add(struct push_seen *s, int64_t story);

/* Forget every story (a subscriber that reads its articles again). */
void push_seen_clear(struct push_seen *s);

#endif
