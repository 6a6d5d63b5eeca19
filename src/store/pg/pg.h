/* The PostgreSQL store's article log (cluster mode, DESIGN.md), which
 * replication (store/replicate.h) copies into a node's local replica.
 * Private to src/store/ (store.c opens the store through store/backend.h).
 *
 * The article log: every insert, update or delete of an article takes the
 * next value of one sequence (articles.seq, or the seq of a tombstone row
 * for a delete) while holding one transaction-scoped advisory lock, so
 * sequence numbers become visible in order: a reader that has seen seq s
 * has seen every change below s. A follower asks for "changes after s" in
 * seq order and never misses or repeats one. Each commit that changes
 * articles sends NOTIFY newsd_articles; one that changes sources sends
 * NOTIFY newsd_sources. */
#ifndef NEWSD_STORE_PG_PG_H
#define NEWSD_STORE_PG_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

/* --- the article log ------------------------------------------------------ */

/* A connection of its own (LISTEN needs one that is never shared). */
struct store_pg_log;

#define STORE_PG_ORIGIN_MAX 64 /* bytes of an origin id, NUL included */

/* Connect and LISTEN. ERR_BUSY when the server cannot be reached. */
int store_pg_log_open(struct store_pg_log **out, const char *uri, struct err *err);
void store_pg_log_close(struct store_pg_log *l);

/* The database's origin: a random id made when its schema was created (and
 * again if the articles table is truncated), so a replica can tell that it
 * was built from another database. */
int store_pg_log_origin(struct store_pg_log *l, char out[STORE_PG_ORIGIN_MAX], struct err *err);

/* The highest sequence number of any committed change (0: none). */
int store_pg_log_head(struct store_pg_log *l, int64_t *out, struct err *err);

/* Up to max changes with seq > after, in seq order: arts[i] is the article
 * as it is now (id and seq set), or, when deleted[i], only id, seq and
 * canonical_url of a deleted one. Arrays and strings in the arena. */
int store_pg_log_read(struct store_pg_log *l, struct arena *a, int64_t after, size_t max,
                      struct article **arts_out, bool **deleted_out, size_t *n_out,
                      struct err *err);

/* The revision of the sources table (grows with every change to it). */
int store_pg_log_sources_rev(struct store_pg_log *l, int64_t *out, struct err *err);

/* Every source, ordered by id, in the arena. */
int store_pg_log_sources(struct store_pg_log *l, struct arena *a, struct source **out,
                         size_t *n_out, struct err *err);

/* Wait up to timeout_ms for a notification; *articles / *sources say which
 * channels spoke (both false on a timeout). ERR_BUSY when the connection is
 * lost (close and open again). */
int store_pg_log_wait(struct store_pg_log *l, int timeout_ms, bool *articles, bool *sources,
                      struct err *err);

#endif
