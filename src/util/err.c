/* Error codes table and struct err helpers (util/err.h). */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ERR_MAP as one table, "no error" first: a code's name and its message
 * are looked up the same way, and a code not in it gets err_unknown's. */
static const struct err_row {
    int code;
    const char *name, *msg;
} err_rows[] = {{0, "OK", "ok"},
#define ERR_ROW_(name, val, msg) {val, #name, msg},
                ERR_MAP(ERR_ROW_)
#undef ERR_ROW_
};

static const struct err_row err_unknown = {0, "ERR_UNKNOWN", "unknown error"};

static const struct err_row *err_row_of(int code)
{
    for (size_t i = 0; i < sizeof err_rows / sizeof err_rows[0]; i++) {
        if (err_rows[i].code == code)
            return &err_rows[i];
    }
    return &err_unknown;
}

const char *err_name(int code)
{
    return err_row_of(code)->name;
}

const char *err_default_msg(int code)
{
    return err_row_of(code)->msg;
}

const char *err_msg(const struct err *e, int code)
{
    if (e && e->msg[0])
        return e->msg;
    return err_default_msg(code);
}
