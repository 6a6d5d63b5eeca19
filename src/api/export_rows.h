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

/* arts[0..n) := the articles of ids[0..n), in that order, strings in a,
 * each with its story_id resolved (never 0: store_story_resolve); an id
 * whose row is gone (deleted since the search) leaves its slot's id 0. */
int api_export_rows_get(struct api_export_rows *r, struct arena *a, const int64_t *ids, size_t n,
                        struct article *arts, struct err *err);

#endif
