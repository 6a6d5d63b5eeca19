/* A statement's values, as both backends take them: typed values for the
 * placeholders ?1, ?2, ... (SQLite) or $1, $2, ... (PostgreSQL) in order,
 * written with the STORE_INT/TEXT/... makers and passed as STORE_ARGS(...)
 * (the array and its count; NULL, 0 for none). One way of listing a
 * statement's values for both backends, instead of a bind call per value in
 * one and a parameter call per value in the other. Strings and blobs are
 * not copied: they must live until the call returns. Macros and types
 * only: included by the backends, never by the rest of the program. */
#ifndef NEWSD_STORE_ARGS_H
#define NEWSD_STORE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum store_arg_kind {
    STORE_ARG_INT,
    STORE_ARG_DOUBLE,
    STORE_ARG_BOOL, /* SQLite: 0 or 1; PostgreSQL: boolean */
    STORE_ARG_TEXT, /* NULL is SQL NULL; len < 0: up to the NUL */
    STORE_ARG_BLOB,
};

struct store_arg {
    enum store_arg_kind kind;
    int64_t i;
    double d;
    const void *p;
    int len;
};

#define STORE_INT(v) ((struct store_arg){.kind = STORE_ARG_INT, .i = (int64_t)(v)})
#define STORE_DOUBLE(v) ((struct store_arg){.kind = STORE_ARG_DOUBLE, .d = (v)})
#define STORE_BOOL(v) ((struct store_arg){.kind = STORE_ARG_BOOL, .i = (v) ? 1 : 0})
#define STORE_TEXT(s) ((struct store_arg){.kind = STORE_ARG_TEXT, .p = (s), .len = -1})
/* A char[3] code: its 0..2 bytes ("" is '', not NULL). */
#define STORE_CODE(c)                                                                              \
    ((struct store_arg){.kind = STORE_ARG_TEXT, .p = (c), .len = (int)strnlen((c), 2)})
#define STORE_BLOB(b, n) ((struct store_arg){.kind = STORE_ARG_BLOB, .p = (b), .len = (int)(n)})
#define STORE_ARGS(...)                                                                            \
    (const struct store_arg[]){__VA_ARGS__},                                                       \
        sizeof((const struct store_arg[]){__VA_ARGS__}) / sizeof(struct store_arg)

#endif
