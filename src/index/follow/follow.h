/* The follower of a node-local index in cluster mode (DESIGN.md): a thread
 * that keeps a replica of a PostgreSQL store's articles and sources (an
 * embedded store's file, store/sqlite/replica.h) in step with the store's
 * article log (store/pg/pg.h), which the FTS5 index then searches. Searches
 * never touch PostgreSQL.
 *
 * The thread LISTENs for newsd_articles / newsd_sources on a connection of
 * its own and also polls every INDEX_FOLLOW_POLL_MS (a notification can be
 * lost with a connection). Each round applies the changes after the
 * replica's last seq in batches of INDEX_FOLLOW_BATCH, each batch in one
 * transaction with its position; sources are copied when their revision
 * moves. A fresh node starts at seq 0 (bootstrap), a restarted one where it
 * stopped. A lost connection is reopened with backoff while searches go on
 * over what the replica holds. */
#ifndef NEWSD_INDEX_FOLLOW_FOLLOW_H
#define NEWSD_INDEX_FOLLOW_FOLLOW_H

#include "index/index.h"

#define INDEX_FOLLOW_POLL_MS 200
#define INDEX_FOLLOW_BATCH 2000
#define INDEX_FOLLOW_SOURCES_CHECK_MS 5000 /* without a notification */

struct index_follow;

/* Connect to the store at uri, open (or start) the replica in dir and
 * remember where it stands; the thread starts with index_follow_start. */
int index_follow_new(struct index_follow **out, const char *uri, const char *dir, struct err *err);

/* The replica's database file, for the FTS5 index. */
const char *index_follow_db_path(const struct index_follow *f);

int index_follow_start(struct index_follow *f, struct err *err);

/* Stop the thread (waits for the batch in hand) and close. NULL: no-op. */
void index_follow_free(struct index_follow *f);

void index_follow_status(struct index_follow *f, struct index_replica_status *out);

#endif
