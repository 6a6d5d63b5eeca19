/* Cursor paging's cursors (api/cursor.h). */
#include "api/cursor.h"

#include <string.h>

#include "util/ascii.h"
#include "util/hash.h"

#include "util/banned.h"

/* The parameters that make the search; their values in request order. */
static const char *const search_params[] = {"q",        "qintitle",       "searchin", "sources",
                                            "domains",  "excludedomains", "from",     "to",
                                            "language", "sortby"};

uint64_t api_cursor_search(const struct api_params *p)
{
    uint64_t h = HASH_FNV1A64_INIT;
    for (size_t k = 0; k < sizeof search_params / sizeof search_params[0]; k++) {
        h = hash_fnv1a64_update(h, search_params[k], strlen(search_params[k]) + 1);
        for (size_t i = 0; i < p->n; i++) {
            if (strcmp(p->items[i].name, search_params[k]) != 0)
                continue;
            /* Each value with its length: "a,b" + "c" differs from "a" + "b,c". */
            uint64_t len = p->items[i].len;
            h = hash_fnv1a64_update(h, &len, sizeof len);
            h = hash_fnv1a64_update(h, p->items[i].value, p->items[i].len);
        }
    }
    return hash_mix64(h);
}

static uint32_t check_of(const char *s, size_t n)
{
    return (uint32_t)(hash_bytes64(s, n) >> 32);
}

/* v as 2 * n lower-case hex digits (its low n bytes, most significant
 * first) into out, no terminator. */
static void hex_put(char *out, uint64_t v, size_t n)
{
    for (size_t i = n; i-- > 0; v >>= 8)
        ascii_hex_byte(out + 2 * i, (unsigned char)(v & 0xff));
}

/* "c1", the search, the id (16 hex digits each), a check of those (8):
 * written by hand, not snprintf (an export writes one per line). */
void api_cursor_encode(const struct api_cursor *c, char out[API_CURSOR_LEN + 1])
{
    out[0] = 'c';
    out[1] = '1';
    hex_put(out + 2, c->search, 8);
    hex_put(out + 18, (uint64_t)c->id, 8);
    hex_put(out + 34, check_of(out, 34), 4);
    out[API_CURSOR_LEN] = '\0';
}

/* n lower-case hex digits of s into *out. */
static bool hex_read(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = ascii_hex_value(s[i]);
        if (d < 0 || ascii_is_upper(s[i]))
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

bool api_cursor_decode(const char *s, size_t n, struct api_cursor *out)
{
    uint64_t search, id, check;
    if (n != API_CURSOR_LEN || memcmp(s, "c1", 2) != 0 || !hex_read(s + 2, 16, &search) ||
        !hex_read(s + 18, 16, &id) || !hex_read(s + 34, 8, &check) || check != check_of(s, 34))
        return false;
    out->search = search;
    out->id = (int64_t)id;
    return true;
}
