/* The growable array's one growth step (util/array.h). */
#include "util/array.h"

#include <stdint.h>
#include <string.h>

#include "util/err.h"

#include "util/banned.h"

int array_reserve(void *items_ptr, size_t *cap, size_t n, size_t more, size_t size)
{
    if (more > SIZE_MAX - n)
        return ERR_NOMEM;
    size_t need = n + more;
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : ARRAY_MIN_CAP;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return ERR_NOMEM;
        c *= 2;
    }
    if (size && c > SIZE_MAX / size)
        return ERR_NOMEM;
    /* The caller's pointer is read and written as bytes: items_ptr may
     * point to any object pointer type. */
    void *items;
    memcpy(&items, items_ptr, sizeof items);
    void *grown = realloc(items, c * size);
    if (!grown)
        return ERR_NOMEM;
    memcpy(items_ptr, &grown, sizeof grown);
    *cap = c;
    return 0;
}
