/* Replication of a PostgreSQL store into a node-local SQLite file (cluster
 * mode, DESIGN.md): a thread keeps a replica of the store's articles and
 * sources (an embedded store's file, store/sqlite/replica.h) in step with
 * its article log (store/pg/pg.h). The replica is the journal a node's
 * search index reads (store/journal.h, whichever index backend), so
 * searches never touch PostgreSQL.
 *
 * The thread LISTENs for newsd_articles / newsd_sources on a connection of
 * its own and also polls every STORE_REPLICATE_POLL_MS (a notification can
 * be lost with a connection). Each round applies the changes after the
 * replica's last seq in batches of STORE_REPLICATE_BATCH, each batch in one
 * transaction with its position; sources are copied when their revision
 * moves. A fresh node starts at seq 0 (bootstrap), a restarted one where it
 * stopped. A lost connection is reopened with backoff while searches go on
 * over what the replica holds. Private to src/store/: the root's journal.c
 * starts it for a PostgreSQL store (store/backend.h replica_origin). */
#ifndef NEWSD_STORE_REPLICATE_H
#define NEWSD_STORE_REPLICATE_H

#include "store/journal.h"

#define STORE_REPLICATE_POLL_MS 200
#define STORE_REPLICATE_BATCH 2000
#define STORE_REPLICATE_SOURCES_CHECK_MS 5000 /* without a notification */

struct store_replicate;

/* Connect to the store at uri, open (or start) the replica in dir and
 * remember where it stands; the thread starts with store_replicate_start.
 * offline_ok: a store that cannot be reached (ERR_BUSY) is no failure: the
 * replica opens as it stands (whatever database it followed) and the
 * thread connects when it can, checking the origin then; meanwhile the
 * status says not reachable and not caught up. */
int store_replicate_new(struct store_replicate **out, const char *uri, const char *dir,
                        bool offline_ok, struct err *err);

/* The replica's database file (the journal's, store_journal_path). */
const char *store_replicate_path(const struct store_replicate *f);

int store_replicate_start(struct store_replicate *f, struct err *err);

/* Stop the thread (waits for the batch in hand) and close. NULL: no-op. */
void store_replicate_free(struct store_replicate *f);

void store_replicate_status(struct store_replicate *f, struct store_journal_status *out);

#endif
