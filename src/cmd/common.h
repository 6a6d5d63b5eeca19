/* Helpers shared by the subcommands: where the store is, the config file,
 * and the uniform "newsd: <message>" failure line. */
#ifndef NEWSD_CMD_COMMON_H
#define NEWSD_CMD_COMMON_H

#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>

#include "config/config.h"
#include "index/index.h"
#include "ingest/feeds/feeds.h"
#include "fetch/fetch.h"
#include "store/store.h"
#include "util/arena.h"

#define CMD_DEFAULT_STORE "./newsd-data"
/* The config file read when neither --config nor $NEWSD_CONFIG names one,
 * if it exists (where `make install` puts it). */
#define CMD_DEFAULT_CONFIG "/etc/newsd/newsd.conf"

/* The config file a command reads: option (its --config), else
 * $NEWSD_CONFIG, else CMD_DEFAULT_CONFIG when it exists, else NULL (the
 * defaults alone). */
const char *cmd_config_path(const char *option);

/* Where a command's store is, and why there (for the messages). */
struct cmd_store_where {
    const char *loc;
    /* "--store", "NEWSD_STORE", "the config file F" or "the default" */
    char from[CONFIG_PATH_MAX + 32];
    /* from --store or $NEWSD_STORE: a place typed for this run, where a
     * missing store is more likely a typo than a first start */
    bool chosen;
    char configured[CONFIG_PATH_MAX]; /* the config's [server] store, when it gave loc */
    int64_t story_window_days;        /* the config's [stories] window_days; 0 default */
    int64_t story_similarity_percent; /* [stories] similarity_percent; 0 default */
};

/* The store: option (its --store), else $NEWSD_STORE, else the [server]
 * store of the config file at config_path (NULL: none), else
 * CMD_DEFAULT_STORE. CMD_EXIT_OK, or the exit status after one line on
 * stderr (a config file that cannot be read or parsed). */
int cmd_store_where_get(struct cmd_store_where *out, const char *option, const char *config_path);
/* The same for a command that has loaded the config c already. */
void cmd_store_where_from(struct cmd_store_where *out, const char *option, const struct config *c,
                          const char *config_path);

/* How cmd_store_open_where may treat the store. */
enum cmd_open_flags {
    /* A command that makes stores (import, sources import, keys create,
     * feeds add/import): a missing store is created when it is the
     * configured or default one */
    CMD_OPEN_MAY_CREATE = 1 << 0,
    /* and wherever it is (--create; serve) */
    CMD_OPEN_CREATE = 1 << 1,
    /* An older schema is migrated (serve, migrate); without it such a
     * store is refused, telling to run newsd migrate */
    CMD_OPEN_MIGRATE = 1 << 2,
    /* An older schema is not reported: cmd_store_open_where returns 1 and
     * opens nothing (serve takes its lock before migrating) */
    CMD_OPEN_OUTDATED_QUIET = 1 << 3,
    /* An older schema is left as it is and the store opened to read its
     * articles (store_options.read_outdated: index build) */
    CMD_OPEN_READ_OUTDATED = 1 << 4,
    /* A PostgreSQL store that cannot be reached opens anyway, its
     * migration owed to the first connection (store_options
     * start_unreachable: serve) */
    CMD_OPEN_START_UNREACHABLE = 1 << 5,
};

/* The flags of a command that makes stores: CMD_OPEN_MAY_CREATE, and
 * CMD_OPEN_CREATE when it was given --create. */
unsigned cmd_open_making(bool create);

/* Open the store w names under flags (enum cmd_open_flags), or print one
 * line on stderr: 0, 1 (outdated, with CMD_OPEN_OUTDATED_QUIET) or -1. A
 * missing embedded store is refused naming where its path came from,
 * unless flags allow creating it there; a migration is logged with its
 * from and to versions. */
int cmd_store_open_where(struct store **out, const struct cmd_store_where *w,
                         const char *index_kind, unsigned flags);

/* What an admin command does to reach its store: the config file of
 * cmd_config_path(config_option), the store cmd_store_where_from finds
 * with it, opened under flags with the config's index kind (a new store
 * gets the FTS5 side only for the fts5 index). CMD_EXIT_OK, or the exit
 * status after one line on stderr. */
int cmd_store_open_for(struct store **out, const char *store_option, const char *config_option,
                       unsigned flags);

/* For commands without --config (backup): cmd_store_where_get with the
 * config file of cmd_config_path(NULL), remembered for cmd_store_open;
 * NULL after one line on stderr. */
const char *cmd_store_location(const char *option);

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

/* Open the existing store at loc to read it (backup), or print one line
 * on stderr; 0 or -1. Where loc came from is what cmd_store_location
 * found. A store of an older schema is opened as it is
 * (CMD_OPEN_READ_OUTDATED): a backup before an upgrade copies the store
 * as the old server has it. */
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
 *   NEWSD_ENGINE_TIER_MIN_DF=N     terms of N documents a segment get a tier
 *                                  (tests: tiers in a small index; benchmarks:
 *                                  4294967295, none)
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

/* One option of a command's table (ended by a row whose name is NULL).
 * take does what the option means, as getopt_long reads it (in argv's
 * order, so a bad value is refused before a later option is looked at):
 * value is the option's argument (NULL for one that has none); it gives
 * CMD_EXIT_OK, or the exit status after one line on stderr. to is where
 * it puts what it read. CMD_TEXT and CMD_FLAG are the common rows. */
struct cmd_option {
    const char *name;
    bool has_value;
    int (*take)(const char *value, void *to);
    void *to;
};

/* take for --NAME VALUE kept as it is: *(const char **)to = value. */
int cmd_take_text(const char *value, void *to);
/* take for --NAME without a value: *(bool *)to = true. */
int cmd_take_flag(const char *value, void *to);

/* The rows for those two; the ?: only checks that to has the right type. */
#define CMD_TEXT(name, to)                                                                         \
    {                                                                                              \
        (name), true, cmd_take_text, (void *)(1 ? (to) : (const char **)0)                         \
    }
#define CMD_FLAG(name, to)                                                                         \
    {                                                                                              \
        (name), false, cmd_take_flag, (void *)(1 ? (to) : (bool *)0)                               \
    }
#define CMD_OPTIONS_END                                                                            \
    {                                                                                              \
        NULL, false, NULL, NULL                                                                    \
    }

/* What cmd_options_parse gives when the command goes on (never an exit
 * status). */
#define CMD_GO_ON (-1)

/* Read argv's options (from argv[1], getopt_long's order and messages):
 * every command's --store LOC into *store and --help, then the rows of
 * opts. CMD_GO_ON with optind at the first operand; else the exit status
 * to return: a row's take refused its value, --help printed the usage on
 * stdout (CMD_EXIT_OK), an unknown option or a missing value printed it
 * on stderr (CMD_EXIT_USAGE). At most CMD_OPTIONS_MAX rows. */
#define CMD_OPTIONS_MAX 30
int cmd_options_parse(int argc, char **argv, const struct cmd_option *opts, const char **store,
                      void (*usage)(FILE *));
/* For the commands that take no operand (crawl, migrate, serve, articles
 * VERB): cmd_options_parse, then "newsd: NAME: unexpected argument 'A'"
 * and CMD_EXIT_USAGE for an operand A. */
int cmd_options_only(const char *name, int argc, char **argv, const struct cmd_option *opts,
                     const char **store, void (*usage)(FILE *));

/* For the commands that take --store and one FILE (backup, restore):
 * cmd_options_parse without rows of their own, then exactly one operand,
 * not empty (argv[optind] when CMD_GO_ON), else the usage on stderr and
 * CMD_EXIT_USAGE. */
int cmd_options_store_file(int argc, char **argv, const char **store, void (*usage)(FILE *));

/* Print "newsd: <msg>\n" on stderr. */
void cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The exit status of a call that gave rc with err: CMD_EXIT_OK when rc >= 0,
 * else "newsd: <msg>: <why>" on stderr and CMD_EXIT_FAIL. */
int cmd_status_of(int rc, const struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* s as plain decimal digits, 1 to max_digits (at most 18, so it fits);
 * -1 otherwise. */
int64_t cmd_parse_digits(const char *s, size_t max_digits);

/* A name typed on the command line (a key's name, a feed's source): 1 to
 * max bytes, no control byte, and no blank unless blanks. */
bool cmd_name_valid(const char *s, size_t max, bool blanks);

/* A cell of a printed table: "-" for none or empty, control bytes as '?'
 * (a name or URL from the store cannot move the terminal's cursor). */
const char *cmd_table_cell(struct arena *ar, const char *s);

#endif
