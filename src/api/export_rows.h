/* The whole articles of an export's ids, read from the log the index
 * follows (store/journal.h): the index's pages carry `content` cut to 200
 * characters, an export carries it whole. Every call into store/journal.h
 * from src/api/ is in export_rows.c, so that a rename there is one file
 * here. One struct api_export_rows per export, used by one thread. */
#ifndef NEWSD_API_EXPORT_ROWS_H
#define NEWSD_API_EXPORT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

struct api_export_rows;

/* A reader of idx's log (its own read-only connection). */
int api_export_rows_open(struct api_export_rows **out, struct index *idx, struct err *err);
void api_export_rows_close(struct api_export_rows *r); /* NULL: no-op */

/* The articles of ids[0..n) handed to fn one by one, in that order, each
 * with its story_id resolved (never 0: store_story_resolve), from one
 * snapshot; an id whose row is gone (deleted since the search) is passed
 * over. a's strings are valid during the call only. fn's first non-zero
 * return stops the walk and is returned. */
typedef int (*api_export_row_fn)(void *ctx, const struct article *a);
int api_export_rows_each(struct api_export_rows *r, const int64_t *ids, size_t n,
                         api_export_row_fn fn, void *ctx, struct err *err);

#endif
