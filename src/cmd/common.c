/* Subcommand helpers (cmd/common.h). */
#include "cmd/common.h"
#include "cmd/cmd.h"
#include "index/index.h"
#include "util/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

const char *cmd_store_location_configured(const char *option, const char *configured)
{
    if (option && *option)
        return option;
    const char *env = getenv("NEWSD_STORE");
    if (env && *env)
        return env;
    if (configured && *configured)
        return configured;
    return CMD_DEFAULT_STORE;
}

const char *cmd_store_location(const char *option)
{
    return cmd_store_location_configured(option, NULL);
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
    if (env_int("NEWSD_ENGINE_CHECKPOINT_MS", &v) && v >= 0)
        out->checkpoint_ms = v == 0 ? INDEX_CHECKPOINT_ALWAYS : v;
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

int cmd_store_open(struct store **out, const char *loc, const char *index_kind)
{
    struct err err;
    err_clear(&err);
    struct store_options opt = {.fulltext_when_new = cmd_store_wants_fulltext(index_kind)};
    int rc = store_open_with(out, loc, &opt, &err);
    if (rc < 0) {
        char shown[512];
        cmd_fail("cannot open store %s: %s", store_location_redacted(loc, shown, sizeof shown),
                 err_msg(&err, rc));
        return -1;
    }
    return 0;
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
