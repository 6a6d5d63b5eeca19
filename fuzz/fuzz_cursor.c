/* libFuzzer harness: cursor paging's cursors (api/cursor.h), which come
 * from clients. Any bytes: decoding never reads past them, and what
 * decodes encodes back to the same bytes (a cursor has one spelling, so a
 * forged or altered one is refused, never misread). The search
 * fingerprint of the bytes read as a query string is stable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/cursor.h"
#include "api/params.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_cursor c;
    char again[API_CURSOR_LEN + 1];
    if (api_cursor_decode((const char *)data, size, &c)) {
        api_cursor_encode(&c, again);
        if (size != API_CURSOR_LEN || memcmp(again, data, size) != 0)
            abort();
    }
    /* A round trip of any position and search. */
    if (size >= 16) {
        memcpy(&c.search, data, 8);
        memcpy(&c.id, data + 8, 8);
        struct api_cursor back;
        api_cursor_encode(&c, again);
        if (!api_cursor_decode(again, strlen(again), &back) || back.search != c.search ||
            back.id != c.id)
            abort();
    }
    struct arena a;
    arena_init(&a, 1 << 20);
    struct api_params p;
    if (api_params_parse(&a, (const char *)data, size, &p) == 0 &&
        api_cursor_search(&p) != api_cursor_search(&p))
        abort();
    arena_release(&a);
    return 0;
}
