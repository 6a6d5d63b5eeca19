/* A typed growable array: the items, how many there are and the room,
 * grown by doubling with every size computation checked for overflow (the
 * idea of libgit2's git_array_t). One copy of the realloc-and-double that
 * modules otherwise write by hand, each with its own overflow question.
 *
 *     ARRAY(struct sub *) subs = ARRAY_INIT;
 *     struct sub **slot = array_push(&subs);
 *     if (!slot) return ERR_NOMEM;
 *     *slot = s;
 *     ...
 *     array_release(&subs);
 *
 * A module with its own field names (an array inside a larger struct)
 * calls array_reserve with them. Not thread-safe: callers lock. */
#ifndef NEWSD_UTIL_ARRAY_H
#define NEWSD_UTIL_ARRAY_H

#include <stddef.h>
#include <stdlib.h>

/* The first room an empty array gets. */
#define ARRAY_MIN_CAP 16

/* Room in the array *items_ptr (a pointer to the caller's `T *`, holding
 * n items in room for *cap) for more items beyond n: 0, or ERR_NOMEM when
 * n + more or the byte size overflows or realloc fails; on failure the
 * array and *cap are as they were. The room doubles (from ARRAY_MIN_CAP)
 * until it holds n + more. */
int array_reserve(void *items_ptr, size_t *cap, size_t n, size_t more, size_t size);

#define ARRAY(type)                                                                                \
    struct {                                                                                       \
        type *items;                                                                               \
        size_t n, cap;                                                                             \
    }

#define ARRAY_INIT                                                                                 \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Room for more items: 0 or ERR_NOMEM. a is evaluated more than once. */
#define array_grow(a, more)                                                                        \
    array_reserve(&(a)->items, &(a)->cap, (a)->n, (more), sizeof *(a)->items)

/* A pointer to a new last item (its bytes unset), or NULL when there is no
 * room (the array unchanged). a is evaluated more than once. */
#define array_push(a) (array_grow((a), 1) == 0 ? &(a)->items[(a)->n++] : NULL)

/* Free the items; the array is empty again. */
#define array_release(a) (free((a)->items), (a)->items = NULL, (a)->n = (a)->cap = 0)

#endif
