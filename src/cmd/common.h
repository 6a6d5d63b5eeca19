/* Helpers shared by the subcommands: where the store is, the config file,
 * and the uniform "newsd: <message>" failure line. */
#ifndef NEWSD_CMD_COMMON_H
#define NEWSD_CMD_COMMON_H

#include "config/config.h"
#include "store/store.h"
#include "util/arena.h"

#define CMD_DEFAULT_STORE "./newsd-data"

/* --store value, else $NEWSD_STORE, else ./newsd-data. */
const char *cmd_store_location(const char *option);

/* Open the store at loc or print one line on stderr; 0 or -1. A new
 * embedded store gets the FTS5 side only when the index it is made for
 * (index_kind_resolve(NULL): $NEWSD_INDEX, else the engine) is fts5, so
 * that imports into a store kept for the engine do not pay for it. */
int cmd_store_open(struct store **out, const char *loc);

/* config_defaults, then the file at path (--config) when path is not NULL.
 * CMD_EXIT_OK, or the exit status after one line on stderr: CMD_EXIT_USAGE
 * for a malformed file, CMD_EXIT_FAIL for one that cannot be read. */
int cmd_config_load(struct config *c, const char *path);

/* Print "newsd: <msg>\n" on stderr. */
void cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A cell of a printed table: "-" for none or empty, control bytes as '?'
 * (a name or URL from the store cannot move the terminal's cursor). */
const char *cmd_table_cell(struct arena *ar, const char *s);

#endif
