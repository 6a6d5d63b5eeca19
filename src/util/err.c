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

const char *err_name(int code)
{
    switch (code) {
    case 0:
        return "OK";
#define ERR_NAME_(name, val, msg)                                                                  \
    case val:                                                                                      \
        return #name;
        ERR_MAP(ERR_NAME_)
#undef ERR_NAME_
    }
    return "ERR_UNKNOWN";
}

const char *err_default_msg(int code)
{
    switch (code) {
    case 0:
        return "ok";
#define ERR_MSG_(name, val, msg)                                                                   \
    case val:                                                                                      \
        return msg;
        ERR_MAP(ERR_MSG_)
#undef ERR_MSG_
    }
    return "unknown error";
}

const char *err_msg(const struct err *e, int code)
{
    if (e && e->msg[0])
        return e->msg;
    return err_default_msg(code);
}
