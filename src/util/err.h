/* Error codes and the caller-owned error detail passed down every call.
 * Invariant: functions return 0 on success or a negative ERR_* code; when
 * they fail they may fill a struct err with a one-line message. */
#ifndef NEWSD_UTIL_ERR_H
#define NEWSD_UTIL_ERR_H

#include <stddef.h>

/* X(name, value, default message) */
#define ERR_MAP(X)                                                                                 \
    X(ERR_NOMEM, -1, "out of memory")                                                              \
    X(ERR_IO, -2, "input/output error")                                                            \
    X(ERR_INVALID, -3, "invalid value")                                                            \
    X(ERR_NOTFOUND, -4, "not found")                                                               \
    X(ERR_TOO_LARGE, -5, "too large")                                                              \
    X(ERR_PARSE, -6, "malformed input")                                                            \
    X(ERR_STORE, -7, "store failure")                                                              \
    X(ERR_EXISTS, -8, "already exists")                                                            \
    X(ERR_BUSY, -9, "busy, try again")                                                             \
    X(ERR_TIMEOUT, -10, "timed out")                                                               \
    X(ERR_UNSUPPORTED, -11, "not supported")                                                       \
    X(ERR_FULL, -12, "no space left on device")                                                    \
    X(ERR_INTERNAL, -13, "internal error")                                                         \
    X(ERR_REFUSED, -14, "refused by policy")                                                       \
    X(ERR_OUTDATED, -15, "the store needs a migration")                                            \
    X(ERR_WARMING, -16, "being prepared, try again shortly")

enum err_code {
    ERR_OK = 0,
#define ERR_ENUM_(name, val, msg) name = val,
    ERR_MAP(ERR_ENUM_)
#undef ERR_ENUM_
};

#define ERR_MSG_MAX 512

/* Detail of the first failure; callers own it (stack), no globals. */
struct err {
    int code;              /* ERR_* or 0 */
    char msg[ERR_MSG_MAX]; /* one line, no trailing newline */
};

/* Reset to "no error". */
void err_clear(struct err *e);

/* Record code and a printf-style message; returns code so callers can
 * `return err_set(e, ERR_INVALID, "...")`. e may be NULL. */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Static name ("ERR_NOMEM") and default message of a code. */
const char *err_name(int code);
const char *err_default_msg(int code);

/* The message of e, or the default message of code when e has none. */
const char *err_msg(const struct err *e, int code);

#endif
