/* Region allocator (util/arena.h). Blocks grow geometrically up to 1 MiB;
 * large requests get a block of their own. */
#include "util/arena.h"
#include "util/err.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
    struct arena_block *next;
    size_t size; /* usable bytes in data */
    size_t off;  /* next free offset */
    max_align_t data[];
};

#define ARENA_ALIGN (_Alignof(max_align_t))
#define ARENA_FIRST_BLOCK 4096
#define ARENA_MAX_BLOCK (1024 * 1024)

void arena_init(struct arena *a, size_t limit)
{
    a->head = NULL;
    a->used = 0;
    a->limit = limit;
}

void arena_release(struct arena *a)
{
    struct arena_block *b = a->head;
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used = 0;
}

static size_t round_up(size_t n)
{
    return (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
}

void *arena_alloc(struct arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / 2)
        return NULL;
    size_t need = round_up(n);
    if (a->limit && (need > a->limit || a->used > a->limit - need))
        return NULL;
#ifdef NEWSD_DEBUG_ARENA
    /* One malloc per allocation: ASan then catches overflows between them. */
    struct arena_block *db = malloc(sizeof *db + n);
    if (!db)
        return NULL;
    db->next = a->head;
    db->size = n;
    db->off = n;
    a->head = db;
    a->used += need;
    return db->data;
#else
    struct arena_block *b = a->head;
    if (!b || b->size - b->off < need) {
        size_t size = b ? b->size * 2 : ARENA_FIRST_BLOCK;
        if (size > ARENA_MAX_BLOCK)
            size = ARENA_MAX_BLOCK;
        if (size < need)
            size = need;
        struct arena_block *nb = malloc(sizeof *nb + size);
        if (!nb)
            return NULL;
        nb->size = size;
        nb->off = 0;
        if (b && size == need && b->size - b->off > 256) {
            /* Oversized request: keep the current block in front for small ones. */
            nb->next = b->next;
            b->next = nb;
            nb->off = need;
            a->used += need;
            return nb->data;
        }
        nb->next = b;
        a->head = nb;
        b = nb;
    }
    void *p = (char *)b->data + b->off;
    b->off += need;
    a->used += need;
    return p;
#endif
}

void *arena_calloc(struct arena *a, size_t count, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(count, size, &n))
        return NULL;
    void *p = arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

int arena_grow(struct arena *a, void *items_ptr, size_t *cap, size_t n, size_t first, size_t size)
{
    if (n < *cap)
        return 0;
    if (*cap > SIZE_MAX / 2)
        return ERR_NOMEM;
    size_t grown_cap = *cap ? *cap * 2 : first;
    void *grown = arena_calloc(a, grown_cap, size);
    if (grown == NULL)
        return ERR_NOMEM;
    /* The caller's pointer is read and written as bytes: items_ptr may
     * point to any object pointer type. */
    void *items;
    memcpy(&items, items_ptr, sizeof items);
    if (n)
        memcpy(grown, items, n * size);
    memcpy(items_ptr, &grown, sizeof grown);
    *cap = grown_cap;
    return 0;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
