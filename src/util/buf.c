/* Growable bounded buffer (util/buf.h). */
#include "util/buf.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->err = 0;
}

void buf_release(struct buf *b)
{
    free(b->data);
    buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    b->err = 0;
    if (b->data)
        b->data[0] = '\0';
}

int buf_grow(struct buf *b, size_t n)
{
    if (b->err)
        return b->err;
    size_t need;
    if (__builtin_add_overflow(b->len, n, &need) || __builtin_add_overflow(need, 1, &need)) {
        b->err = ERR_TOO_LARGE;
        return b->err;
    }
    if (b->max && need - 1 > b->max) {
        b->err = ERR_TOO_LARGE;
        return b->err;
    }
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->err = ERR_NOMEM;
        return b->err;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
    if (buf_grow(b, n) < 0)
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
    buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        if (!b->err)
            b->err = ERR_INVALID;
        return;
    }
    if (buf_grow(b, (size_t)n) < 0)
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

int buf_error(const struct buf *b)
{
    return b->err;
}

char *buf_detach(struct buf *b, size_t *len_out)
{
    if (!b->data) {
        if (buf_grow(b, 0) < 0)
            return NULL;
        b->data[0] = '\0';
    }
    char *p = b->data;
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}
