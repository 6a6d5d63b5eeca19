/* Turns for webhook deliveries (push/webhook.c): which waiting deliveries
 * may start now, so that a slow or dead receiver holds back only its own
 * alerts. Pure bookkeeping, no threads and no I/O (tests/unit/test_push_sched.c).
 *
 *   slots     at most `total` POSTs in flight at once;
 *   per host  at most `per_host` of them to one receiver (scheme, host and
 *             port: what a connection goes to), so one receiver cannot
 *             hold every slot, and is not flooded;
 *   per key   at most `per_key` of them for the alerts of one API key, so
 *             one tenant's receivers cannot hold every slot either;
 *   turns     push_sched_order hands the slots round the keys, one
 *             delivery per key per round, starting after the key served
 *             last, and within a key to the alert served longest ago.
 *
 * A struct push_sched belongs to one thread. Its tables hold at most
 * `total` entries (one per POST in flight): taking a slot never allocates. */
#ifndef NEWSD_PUSH_SCHED_H
#define NEWSD_PUSH_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define PUSH_SCHED_HOST_MAX 300 /* "scheme://host:port" of a receiver, NUL included */

struct push_sched_count {
    int64_t key_id;
    char host[PUSH_SCHED_HOST_MAX];
    size_t n;
};

struct push_sched {
    size_t total, per_host, per_key;
    size_t busy;                    /* slots taken */
    struct push_sched_count *hosts; /* n_hosts of them, each n > 0 */
    size_t n_hosts;
    struct push_sched_count *keys; /* n_keys of them, each n > 0 */
    size_t n_keys;
};

/* Limits (each at least 1); ERR_INVALID or ERR_NOMEM. */
int push_sched_init(struct push_sched *s, size_t total, size_t per_host, size_t per_key,
                    struct err *err);
void push_sched_release(struct push_sched *s);

/* The receiver a webhook URL goes to, in out (PUSH_SCHED_HOST_MAX bytes):
 * "scheme://host:port" in lower case, the port the scheme's when the URL
 * names none. A host over 255 bytes is cut there: receivers alike that
 * far share their limit. */
void push_sched_host(const char *url, char out[PUSH_SCHED_HOST_MAX]);

/* Take a slot for a POST of key_id's to host when every limit allows it;
 * false (nothing taken) when one does not. */
bool push_sched_take(struct push_sched *s, int64_t key_id, const char *host);

/* Give back a slot push_sched_take gave for the same key_id and host. */
void push_sched_give(struct push_sched *s, int64_t key_id, const char *host);

/* No slot left at all. */
bool push_sched_full(const struct push_sched *s);

/* A delivery waiting for a slot. */
struct push_sched_cand {
    int64_t key_id;
    int64_t alert_id;
    int64_t served_ms; /* when its alert last got a slot (0: never) */
};

/* The order in which to offer cands[0..n) the slots, as indexes into
 * cands, in out[0..n): round after round, one candidate of each key, the
 * keys in ascending order starting with the first one after after_key
 * (wrapping round), and each key's candidates in ascending served_ms
 * (then alert_id). 0 or ERR_NOMEM (out is then 0..n-1 in order). */
int push_sched_order(const struct push_sched_cand *cands, size_t n, int64_t after_key, size_t *out);

#endif
