/* Subcommand helpers (cmd/common.h). */
#include "cmd/common.h"
#include "index/index.h"
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

const char *cmd_store_location(const char *option)
{
    if (option && *option)
        return option;
    const char *env = getenv("NEWSD_STORE");
    if (env && *env)
        return env;
    return CMD_DEFAULT_STORE;
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
