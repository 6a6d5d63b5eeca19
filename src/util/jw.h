/* Compact JSON writer onto a struct buf. Emits keys in the order written
 * (the API's key order is fixed), UTF-8 unescaped except control characters,
 * '"' and '\\'; invalid UTF-8 bytes become U+FFFD so output is always valid.
 * Errors are the buffer's sticky error. Nesting is bounded by JW_MAX_DEPTH. */
#ifndef NEWSD_UTIL_JW_H
#define NEWSD_UTIL_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define JW_MAX_DEPTH 32

struct jw {
    struct buf *out;
    int depth;
    bool need_comma[JW_MAX_DEPTH + 1];
    bool after_key;
};

void jw_init(struct jw *w, struct buf *out);
void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);
/* Object key; the next value call writes its value. */
void jw_key(struct jw *w, const char *key);
/* String value; NULL writes null. */
void jw_str(struct jw *w, const char *s);
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_int(struct jw *w, int64_t v);
void jw_uint(struct jw *w, uint64_t v);
void jw_double(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* Pre-encoded JSON value, copied verbatim. */
void jw_raw(struct jw *w, const char *json, size_t n);

/* Append s[0..n) JSON-escaped (no quotes) to b. */
void jw_escape(struct buf *b, const char *s, size_t n);

#endif
