/* Growable byte buffer with a maximum size. The contents are always
 * NUL-terminated (the NUL is not counted in len). Errors are sticky: once an
 * append fails (out of memory or over max) every later append is a no-op
 * and buf_error() reports it, so builders check once at the end. */
#ifndef NEWSD_UTIL_BUF_H
#define NEWSD_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap;
    size_t max; /* 0 = unlimited */
    int err;    /* 0 or ERR_NOMEM / ERR_TOO_LARGE (sticky) */
};

#define BUF_INIT                                                                                   \
    {                                                                                              \
        NULL, 0, 0, 0, 0                                                                           \
    }

void buf_init(struct buf *b, size_t max);
void buf_release(struct buf *b);
/* Empty the buffer, keep its memory, clear the sticky error. */
void buf_reset(struct buf *b);

/* Make room for n more bytes; 0 or a negative ERR_*. */
int buf_grow(struct buf *b, size_t n);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* 0 or the sticky error. */
int buf_error(const struct buf *b);

/* Hand the malloc'd data to the caller (never NULL on success: an empty
 * buffer yields ""); the buffer is left empty. Caller frees. */
char *buf_detach(struct buf *b, size_t *len_out);

#endif
