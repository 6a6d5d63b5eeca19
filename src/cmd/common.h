/* Helpers shared by the subcommands: where the store is, the config file,
 * and the uniform "newsd: <message>" failure line. */
#ifndef NEWSD_CMD_COMMON_H
#define NEWSD_CMD_COMMON_H

#include <stdbool.h>

#include "config/config.h"
#include "index/index.h"
#include "ingest/crawl.h"
#include "ingest/fetch.h"
#include "store/store.h"
#include "util/arena.h"

#define CMD_DEFAULT_STORE "./newsd-data"

/* --store value, else $NEWSD_STORE, else ./newsd-data. */
const char *cmd_store_location(const char *option);
/* The same with the config file's [server] store between the environment
 * and the default (NULL or "": not set). */
const char *cmd_store_location_configured(const char *option, const char *configured);

/* The search index a command works for: option (its --index) when given,
 * else $NEWSD_INDEX, else configured (the config file's [server] index;
 * NULL or "" = not set), else INDEX_KIND_DEFAULT. Not checked here:
 * index_open_kind refuses an unknown kind. */
const char *cmd_index_kind(const char *option, const char *configured);

/* Whether an embedded store keeps its FTS5 side for index_kind: only for
 * the fts5 index, which searches it. The engine does not read it, and
 * imports into a store without it are several times faster. The one place
 * this is decided; cmd_store_open and cmd_store_fit_index ask it. */
bool cmd_store_wants_fulltext(const char *index_kind);

/* Open the store at loc or print one line on stderr; 0 or -1. A new
 * embedded store gets the FTS5 side when cmd_store_wants_fulltext(index_kind). */
int cmd_store_open(struct store **out, const char *loc, const char *index_kind);

/* Build or drop an embedded store's FTS5 side to match index_kind (serve:
 * a store made for one index may be served with the other). A no-op on
 * other stores; 0, or -1 after one line on stderr. */
int cmd_store_fit_index(struct store *s, const char *index_kind);

/* config_defaults, then the file at path (--config) when path is not NULL.
 * CMD_EXIT_OK, or the exit status after one line on stderr: CMD_EXIT_USAGE
 * for a malformed file, CMD_EXIT_FAIL for one that cannot be read. */
int cmd_config_load(struct config *c, const char *path);
/* The engine's options from the environment (index.h documents each):
 *   NEWSD_ENGINE_COUNT_CACHE=0     no count cache (benchmarks' cold figures)
 *   NEWSD_ENGINE_PERSIST=0         no index directory, everything in RAM
 *   NEWSD_ENGINE_SPLIT=0           a search never takes a second thread
 * and the test hooks
 *   NEWSD_ENGINE_SPLIT=always      every search over two segments or more does
 *   NEWSD_ENGINE_BUILD_DELAY_MS=N  a slow first build (tests/api/test_startup.py)
 *   NEWSD_ENGINE_SEGMENT_DOCS=N    many small segments (tests/reliability)
 *   NEWSD_ENGINE_CHECKPOINT_MS=N   checkpoint period; 0 after every change
 * Unset, empty or unparsable values keep the defaults. */
void cmd_engine_options(struct index_engine_options *out);

/* The fetch options of the config's [outbound] section (address policy,
 * User-Agent, proxy), borrowed from c: the one place a crawler's outgoing
 * requests get their settings (crawl and serve). */
void cmd_fetch_options(struct fetch_options *out, const struct config *c);

/* The config file's settings of the crawler ([outbound] for its fetches,
 * [crawl] for its scheduling) into out; its other fields are left. */
void cmd_crawl_options(struct crawl_options *out, const struct config *c);

/* Print "newsd: <msg>\n" on stderr. */
void cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A cell of a printed table: "-" for none or empty, control bytes as '?'
 * (a name or URL from the store cannot move the terminal's cursor). */
const char *cmd_table_cell(struct arena *ar, const char *s);

#endif
