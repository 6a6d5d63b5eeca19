/* Helpers shared by the subcommands: where the store is, and the uniform
 * "newsd: <message>" failure line. */
#ifndef NEWSD_CMD_COMMON_H
#define NEWSD_CMD_COMMON_H

#include "index/index.h"
#include "store/store.h"
#include "util/arena.h"

#define CMD_DEFAULT_STORE "./newsd-data"

/* --store value, else $NEWSD_STORE, else ./newsd-data. */
const char *cmd_store_location(const char *option);

/* Open the store at loc or print one line on stderr; 0 or -1. A new
 * embedded store gets the FTS5 side only when the index it is made for
 * (cmd_index_kind(NULL): $NEWSD_INDEX, else the engine) is fts5, so
 * that imports into a store kept for the engine do not pay for it. */
int cmd_store_open(struct store **out, const char *loc);

/* --index value, else $NEWSD_INDEX (INDEX_KIND_ENV), else NULL (the
 * config file's, else INDEX_KIND_DEFAULT: index_kind_resolve). */
const char *cmd_index_kind(const char *option);

/* The engine's options from the environment (index.h documents each):
 *   NEWSD_ENGINE_COUNT_CACHE=0     no count cache (benchmarks' cold figures)
 *   NEWSD_ENGINE_PERSIST=0         no index directory, everything in RAM
 * and the test hooks
 *   NEWSD_ENGINE_BUILD_DELAY_MS=N  a slow first build (tests/api/test_startup.py)
 *   NEWSD_ENGINE_SEGMENT_DOCS=N    many small segments (tests/reliability)
 *   NEWSD_ENGINE_CHECKPOINT_MS=N   checkpoint period; 0 after every change
 * Unset, empty or unparsable values keep the defaults. */
void cmd_engine_options(struct index_engine_options *out);

/* Print "newsd: <msg>\n" on stderr. */
void cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A cell of a printed table: "-" for none or empty, control bytes as '?'
 * (a name or URL from the store cannot move the terminal's cursor). */
const char *cmd_table_cell(struct arena *ar, const char *s);

#endif
