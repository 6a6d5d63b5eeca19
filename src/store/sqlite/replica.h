/* A node-local replica of a PostgreSQL store's articles and sources, kept
 * in an embedded store's file (<dir>/newsd.db, the same schema and FTS5
 * triggers), so the FTS5 index searches it exactly as it searches an
 * embedded store. Rows are applied with the ids and sequence numbers the
 * PostgreSQL store gave them (store/replicate.c reads its log); the last
 * applied sequence number is recorded in the same transaction as the rows,
 * so a crash never loses or applies twice. The replica also records which
 * database it follows (its origin, store/pg/pg.h), so a node pointed at
 * another database starts over instead of mixing the two.
 * One writer (the follower thread); readers open the file themselves. */
#ifndef NEWSD_STORE_SQLITE_REPLICA_H
#define NEWSD_STORE_SQLITE_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/err.h"

struct store_replica;

/* Where the replica stands. */
struct store_replica_position {
    char origin[64];     /* "" for a new replica */
    int64_t seq;         /* last applied sequence number; 0 none */
    int64_t sources_rev; /* revision of the sources copied; -1 never */
    int64_t articles;    /* rows held */
};

/* Open (creating) the replica in dir (created, mode 0700, when missing) for
 * the database whose origin is given: a replica of another origin is
 * deleted and started afresh. origin NULL (the database out of reach):
 * the replica as it stands, whatever it follows ("" when new). */
int store_replica_open(struct store_replica **out, const char *dir, const char *origin,
                       struct err *err);
void store_replica_close(struct store_replica *r);

/* The database file (for the FTS5 index). */
const char *store_replica_path(const struct store_replica *r);

int store_replica_position(struct store_replica *r, struct store_replica_position *out,
                           struct err *err);

/* Empty the replica while it is open (the followed database changed
 * origin) and record the new origin. */
int store_replica_reset(struct store_replica *r, const char *origin, struct err *err);

/* Apply n changes in seq order, in one transaction that also records upto
 * as the last applied seq: arts[i] is written with its id and seq
 * (replacing any row with its id or canonical url), or deleted by id when
 * deleted[i]. *delta (may be NULL) gets the change in the row count. */
int store_replica_apply(struct store_replica *r, const struct article *arts, const bool *deleted,
                        size_t n, int64_t upto, int64_t *delta, struct err *err);

/* Replace every source by src[0..n) and record rev, in one transaction. */
int store_replica_sources_replace(struct store_replica *r, const struct source *src, size_t n,
                                  int64_t rev, struct err *err);

#endif
