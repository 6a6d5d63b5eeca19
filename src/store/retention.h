/* Retention: deleting articles in batches that leave the writer free in
 * between, and giving their space back (store_articles_delete,
 * store_space_release). Two users: the policy `newsd serve` runs in a
 * thread of its own ([retention] max_age_days / max_articles, every
 * period: the articles past the limits go, oldest first by publication
 * time), and `newsd articles delete`, which runs one deletion to its end.
 *
 * Cost: a batch is one write transaction of `batch` deletes (the embedded
 * store's writer is held for it: about 0.1 ms per article, so ~110 ms for
 * the default batch; docs/operations.md), then a pause as long as the
 * batch took (at least pause_ms), in which imports take their turn:
 * deleting never takes more than half of the writer's time. Searches do
 * not wait for the writer (WAL). The index learns each batch's ids from
 * the store's log (store/journal.h store_reader_deletions). */
#ifndef NEWSD_STORE_RETENTION_H
#define NEWSD_STORE_RETENTION_H

#include <stdatomic.h>
#include <stdint.h>

#include "util/metrics.h"

#include "store/store.h"
#include "util/err.h"

#define RETENTION_PERIOD_S_DEFAULT 300 /* between two runs of the policy */
#define RETENTION_BATCH_DEFAULT 1000   /* articles per transaction */
#define RETENTION_PAUSE_MS_DEFAULT 50  /* between two batches, at least */
#define RETENTION_VACUUM_PAGES 4096    /* pages given back per step (16 MiB) */

/* How to delete: batch size and pause (0: the defaults). */
struct retention_pace {
    int64_t batch;
    int64_t pause_ms;
    struct metric *counter; /* each batch's deletions added as it commits (NULL: none) */
};

/* Delete every article matching f, batch by batch, then give the space
 * back; *deleted gets how many went (also when it fails part way: what
 * was committed stays deleted). stop (may be NULL) ends it between
 * batches. */
int retention_delete(struct store *s, const struct store_delete_filter *f,
                     const struct retention_pace *pace, const atomic_bool *stop, int64_t *deleted,
                     struct err *err);

/* The policy: 0 disables a limit; both 0: retention is off. */
struct retention_options {
    int64_t max_age_days; /* articles published longer ago than this go */
    int64_t max_articles; /* beyond this many, the oldest go */
    int64_t period_s;     /* between runs (0: RETENTION_PERIOD_S_DEFAULT) */
    struct retention_pace pace;
};

/* One run of the policy at time now (unix seconds): *deleted gets how
 * many articles went. */
int retention_run(struct store *s, const struct retention_options *o, int64_t now,
                  const atomic_bool *stop, int64_t *deleted, struct err *err);

struct retention;

/* Start the policy's thread over s (which must outlive it); the first run
 * is at once. *out is NULL, and nothing started, when both limits are 0. */
int retention_start(struct retention **out, struct store *s, const struct retention_options *o,
                    struct err *err);

/* Stop the thread (it ends the batch in hand) and free. NULL: no-op. */
void retention_stop(struct retention *r);

#endif
