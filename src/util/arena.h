/* Region allocator: one arena per request (or per import batch), dropped
 * whole. Allocations are never freed one by one. An arena has a byte
 * ceiling; past it allocation fails (returns NULL) instead of growing
 * without bound. Built with NEWSD_DEBUG_ARENA each allocation is its own
 * malloc so AddressSanitizer sees overflows between them.
 * Not thread-safe: one arena belongs to one thread at a time. */
#ifndef NEWSD_UTIL_ARENA_H
#define NEWSD_UTIL_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
    struct arena_block *head; /* newest block first */
    size_t used;              /* bytes handed out, all blocks */
    size_t limit;             /* ceiling in bytes, 0 = unlimited */
};

/* Start an empty arena with a byte ceiling (0 = no ceiling). */
void arena_init(struct arena *a, size_t limit);

/* Free every block; the arena may be reused after arena_init. */
void arena_release(struct arena *a);

/* n bytes aligned for any type; NULL when out of memory or over the ceiling. */
void *arena_alloc(struct arena *a, size_t n);

/* Like arena_alloc, zero-filled; count*size checked for overflow. */
void *arena_calloc(struct arena *a, size_t count, size_t size);

/* Room for one more item in the arena array *items_ptr (a pointer to the
 * caller's `T *`) holding n items in room for *cap: when it is full, a
 * zeroed array of twice the room (first when empty) takes a copy of the n
 * items. The old array stays in the arena until the arena is dropped: an
 * arena cannot grow a block in place. 0, or ERR_NOMEM with the array and
 * *cap as they were. */
int arena_grow(struct arena *a, void *items_ptr, size_t *cap, size_t n, size_t first, size_t size);

/* Copy of s[0..n) plus a NUL; NULL on failure. s may contain NULs. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Copy of a NUL-terminated string (NULL in, NULL out). */
char *arena_strdup(struct arena *a, const char *s);

/* printf into the arena. */
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
