/* Subcommand helpers (cmd/common.h). */
#include "cmd/common.h"
#include "cmd/cmd.h"
#include "index/index.h"
#include "util/ascii.h"
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/banned.h"

const char *cmd_config_path(const char *option)
{
    if (option && *option)
        return option;
    const char *env = getenv("NEWSD_CONFIG");
    if (env && *env)
        return env;
    return access(CMD_DEFAULT_CONFIG, F_OK) == 0 ? CMD_DEFAULT_CONFIG : NULL;
}

void cmd_store_where_from(struct cmd_store_where *out, const char *option, const struct config *c,
                          const char *config_path)
{
    const char *env = getenv("NEWSD_STORE");
    memset(out, 0, sizeof *out);
    if (option && *option) {
        out->loc = option;
        out->chosen = true;
        snprintf(out->from, sizeof out->from, "given by --store");
    } else if (env && *env) {
        out->loc = env;
        out->chosen = true;
        snprintf(out->from, sizeof out->from, "from $NEWSD_STORE");
    } else if (c && c->store[0]) {
        snprintf(out->configured, sizeof out->configured, "%s", c->store);
        out->loc = out->configured;
        snprintf(out->from, sizeof out->from, "from the config file %s",
                 config_path ? config_path : "");
    } else {
        out->loc = CMD_DEFAULT_STORE;
        snprintf(out->from, sizeof out->from, "the default");
    }
    if (c)
        out->story_window_days = c->stories.window_days;
    if (c)
        out->story_similarity_percent = c->stories.similarity_percent;
}

int cmd_store_where_get(struct cmd_store_where *out, const char *option, const char *config_path)
{
    struct config cfg;
    int status = cmd_config_load(&cfg, config_path);
    if (status != CMD_EXIT_OK)
        return status;
    cmd_store_where_from(out, option, &cfg, config_path);
    return CMD_EXIT_OK;
}

/* What cmd_store_location found, for cmd_store_open's messages (one
 * command per process: its store is resolved once). */
static struct cmd_store_where location_last;

const char *cmd_store_location(const char *option)
{
    if (cmd_store_where_get(&location_last, option, cmd_config_path(NULL)) != CMD_EXIT_OK)
        return NULL;
    return location_last.loc;
}

/* $name as an integer; false when unset or empty. */
static bool env_int(const char *name, long *out)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return false;
    *out = strtol(v, NULL, 10);
    return true;
}

static bool env_is_zero(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

void cmd_engine_options(struct index_engine_options *out)
{
    long v;
    memset(out, 0, sizeof *out);
    out->no_count_cache = env_is_zero("NEWSD_ENGINE_COUNT_CACHE");
    out->no_files = env_is_zero("NEWSD_ENGINE_PERSIST");
    const char *split = getenv("NEWSD_ENGINE_SPLIT");
    if (split && strcmp(split, "0") == 0)
        out->split = INDEX_SPLIT_NEVER;
    else if (split && strcmp(split, "always") == 0)
        out->split = INDEX_SPLIT_ALWAYS;
    if (env_int("NEWSD_ENGINE_BUILD_DELAY_MS", &v) && v > 0)
        out->build_delay_ms = v;
    if (env_int("NEWSD_ENGINE_SEGMENT_DOCS", &v) && v > 0 && v <= UINT32_MAX)
        out->segment_docs = (uint32_t)v;
    if (env_int("NEWSD_ENGINE_TIER_MIN_DF", &v) && v > 0 && v <= UINT32_MAX)
        out->tier_min_df = (uint32_t)v;
    if (env_int("NEWSD_ENGINE_CHECKPOINT_MS", &v) && v >= 0)
        out->checkpoint_ms = v == 0 ? INDEX_CHECKPOINT_ALWAYS : v;
}

int cmd_take_text(const char *value, void *to)
{
    *(const char **)to = value;
    return CMD_EXIT_OK;
}

int cmd_take_flag(const char *value, void *to)
{
    (void)value;
    *(bool *)to = true;
    return CMD_EXIT_OK;
}

/* getopt_long's value for --store; a row of opts is OPTION_ROW + its index
 * (above every byte, so no short option can stand for one). */
#define OPTION_STORE 's'
#define OPTION_ROW 256

int cmd_options_parse(int argc, char **argv, const struct cmd_option *opts, const char **store,
                      void (*usage)(FILE *))
{
    struct option table[CMD_OPTIONS_MAX + 3];
    size_t n = 0;
    table[n++] = (struct option){"store", required_argument, NULL, OPTION_STORE};
    for (size_t i = 0; opts[i].name; i++) {
        if (i == CMD_OPTIONS_MAX)
            abort(); /* a command's table outgrew CMD_OPTIONS_MAX */
        table[n++] =
            (struct option){opts[i].name, opts[i].has_value ? required_argument : no_argument, NULL,
                            OPTION_ROW + (int)i};
    }
    table[n++] = (struct option){"help", no_argument, NULL, 'h'};
    table[n] = (struct option){NULL, 0, NULL, 0};

    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", table, NULL)) != -1) {
        if (ch == OPTION_STORE) {
            *store = optarg;
        } else if (ch >= OPTION_ROW) {
            const struct cmd_option *o = &opts[ch - OPTION_ROW];
            int status = o->take(o->has_value ? optarg : NULL, o->to);
            if (status != CMD_EXIT_OK)
                return status;
        } else {
            usage(ch == 'h' ? stdout : stderr);
            return ch == 'h' ? CMD_EXIT_OK : CMD_EXIT_USAGE;
        }
    }
    return CMD_GO_ON;
}

int cmd_options_only(const char *name, int argc, char **argv, const struct cmd_option *opts,
                     const char **store, void (*usage)(FILE *))
{
    int status = cmd_options_parse(argc, argv, opts, store, usage);
    if (status == CMD_GO_ON && optind != argc) {
        cmd_fail("%s: unexpected argument '%s'", name, argv[optind]);
        return CMD_EXIT_USAGE;
    }
    return status;
}

int cmd_options_store_file(int argc, char **argv, const char **store, void (*usage)(FILE *))
{
    static const struct cmd_option none[] = {CMD_OPTIONS_END};
    int status = cmd_options_parse(argc, argv, none, store, usage);
    if (status != CMD_GO_ON)
        return status;
    if (optind + 1 != argc || !argv[optind][0]) {
        usage(stderr);
        return CMD_EXIT_USAGE;
    }
    return CMD_GO_ON;
}

void cmd_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("newsd: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cmd_status_of(int rc, const struct err *err, const char *fmt, ...)
{
    if (rc >= 0)
        return CMD_EXIT_OK;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cmd_fail("%s: %s", msg, err_msg(err, rc));
    return CMD_EXIT_FAIL;
}

int64_t cmd_parse_digits(const char *s, size_t max_digits)
{
    int64_t v = 0;
    size_t n = strlen(s);
    if (n == 0 || n > max_digits)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!ascii_is_digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

bool cmd_name_valid(const char *s, size_t max, bool blanks)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f || (ch == ' ' && !blanks))
            return false;
    }
    return true;
}

const char *cmd_index_kind(const char *option, const char *configured)
{
    if (option && *option)
        return option;
    const char *env = getenv(INDEX_KIND_ENV);
    if (env && *env)
        return env;
    if (configured && *configured)
        return configured;
    return INDEX_KIND_DEFAULT;
}

bool cmd_store_wants_fulltext(const char *index_kind)
{
    return strcmp(index_kind, INDEX_KIND_FTS5) == 0;
}

int cmd_config_load(struct config *c, const char *path)
{
    config_defaults(c);
    if (!path)
        return CMD_EXIT_OK;
    struct err err;
    err_clear(&err);
    int rc = config_load(path, c, &err);
    if (rc < 0) {
        cmd_fail("%s", err_msg(&err, rc));
        return rc == ERR_PARSE ? CMD_EXIT_USAGE : CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* An embedded store at loc that has no database file yet. */
static bool store_missing(const char *loc)
{
    char db[4096];
    struct stat sb;
    if (store_location_is_pg(loc) || store_sqlite_path_at(loc, db, sizeof db, NULL) < 0)
        return false; /* opening says what is wrong */
    return stat(db, &sb) != 0 && errno == ENOENT;
}

unsigned cmd_open_making(bool create)
{
    return CMD_OPEN_MAY_CREATE | (create ? CMD_OPEN_CREATE : 0u);
}

/* Whether flags let a command make a new store where w points. */
static bool store_may_create(const struct cmd_store_where *w, unsigned flags)
{
    return (flags & CMD_OPEN_CREATE) || ((flags & CMD_OPEN_MAY_CREATE) && !w->chosen);
}

int cmd_store_open_where(struct store **out, const struct cmd_store_where *w,
                         const char *index_kind, unsigned flags)
{
    char shown[512];
    struct err err;
    struct store_schema schema;
    int rc;

    *out = NULL;
    err_clear(&err);
    store_location_redacted(w->loc, shown, sizeof shown);
    if (!store_may_create(w, flags) && store_missing(w->loc)) {
        /* A typo must not become an empty store (a key printed that the
         * server, on its own store, rejects). */
        if (flags & CMD_OPEN_MAY_CREATE)
            cmd_fail("no store at %s (%s): pass --create to make a new one there", shown, w->from);
        else
            cmd_fail("no store at %s (%s): check the path (--store, $NEWSD_STORE, the config "
                     "file's [server] store); newsd import, sources import and keys create make "
                     "a new store with --create",
                     shown, w->from);
        return -1;
    }
    struct store_options opt = {.fulltext_when_new = cmd_store_wants_fulltext(index_kind),
                                .migrate = (flags & CMD_OPEN_MIGRATE) != 0,
                                .read_outdated = (flags & CMD_OPEN_READ_OUTDATED) != 0,
                                .start_unreachable = (flags & CMD_OPEN_START_UNREACHABLE) != 0};
    rc = store_open_with(out, w->loc, &opt, &err);
    if (rc == ERR_OUTDATED && (flags & CMD_OPEN_OUTDATED_QUIET))
        return 1;
    if (rc == ERR_OUTDATED) {
        cmd_fail("store %s (%s): %s; this command does not migrate: stop the newsd server of "
                 "the old version first, then run `newsd migrate --store %s` (or start the new "
                 "newsd serve, which migrates)",
                 shown, w->from, err_msg(&err, rc), shown);
        return -1;
    }
    if (rc < 0) {
        cmd_fail("cannot open store %s (%s): %s", shown, w->from, err_msg(&err, rc));
        return -1;
    }
    if (w->story_window_days > 0)
        store_stories_window_set(*out, w->story_window_days);
    if (w->story_similarity_percent > 0)
        store_stories_similarity_set(*out, w->story_similarity_percent);
    store_schema_get(*out, &schema);
    if (schema.opened > 0 && schema.opened != schema.current)
        log_info("store %s: schema migrated from version %lld to %lld", shown,
                 (long long)schema.opened, (long long)schema.current);
    return 0;
}

int cmd_store_open_for(struct store **out, const char *store_option, const char *config_option,
                       unsigned flags)
{
    struct config cfg;
    struct cmd_store_where w;
    const char *path = cmd_config_path(config_option);
    int status = cmd_config_load(&cfg, path);

    *out = NULL;
    if (status != CMD_EXIT_OK)
        return status;
    cmd_store_where_from(&w, store_option, &cfg, path);
    if (cmd_store_open_where(out, &w, cmd_index_kind(NULL, cfg.index), flags) != 0)
        return CMD_EXIT_FAIL;
    return CMD_EXIT_OK;
}

int cmd_store_open(struct store **out, const char *loc, const char *index_kind)
{
    struct cmd_store_where w;
    if (loc == NULL)
        return -1; /* cmd_store_location said why */
    if (loc == location_last.loc)
        return cmd_store_open_where(out, &location_last, index_kind, CMD_OPEN_READ_OUTDATED);
    cmd_store_where_from(&w, loc, NULL, NULL);
    return cmd_store_open_where(out, &w, index_kind, CMD_OPEN_READ_OUTDATED);
}

int cmd_store_fit_index(struct store *s, const char *index_kind)
{
    if (store_sqlite_path(s) == NULL)
        return 0;
    struct err err;
    err_clear(&err);
    bool fulltext = false, want = cmd_store_wants_fulltext(index_kind);
    int rc = store_fulltext_get(s, &fulltext, &err);
    if (rc == 0 && fulltext != want) {
        log_info("store: %s its FTS5 side for the %s index", want ? "building" : "dropping",
                 index_kind);
        rc = store_fulltext_set(s, want, &err);
    }
    if (rc < 0) {
        cmd_fail("cannot prepare the store for the %s index: %s", index_kind, err_msg(&err, rc));
        return -1;
    }
    return 0;
}

void cmd_fetch_options(struct fetch_options *out, const struct config *c)
{
    memset(out, 0, sizeof *out);
    out->policy = &c->outbound.policy;
    out->user_agent = c->outbound.user_agent[0] ? c->outbound.user_agent : NULL;
    out->proxy = c->outbound.proxy[0] ? c->outbound.proxy : NULL;
    out->timeout_ms = (long)c->outbound.timeout_seconds * 1000; /* 0: the fetcher's default */
}

void cmd_crawl_options(struct crawl_options *out, const struct config *c)
{
    cmd_fetch_options(&out->fetch, c);
    out->max_interval_s = c->crawl_cfg.max_interval_s;
    out->headlines_max_interval_s = c->crawl_cfg.headlines_max_interval_s;
}

const char *cmd_table_cell(struct arena *ar, const char *s)
{
    if (!s || !*s)
        return "-";
    char *c = arena_strdup(ar, s);
    if (!c)
        return "?";
    for (char *p = c; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
    return c;
}
