/* Subcommand helpers (cmd/common.h). */
#include "cmd/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

int cmd_store_open(struct store **out, const char *loc)
{
    struct err err;
    err_clear(&err);
    int rc = store_open(out, loc, &err);
    if (rc < 0) {
        cmd_fail("cannot open store %s: %s", loc, err_msg(&err, rc));
        return -1;
    }
    return 0;
}
