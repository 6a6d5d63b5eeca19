/* libFuzzer harness: cursor paging's cursors (api/cursor.h), which come
 * from clients. Any bytes: decoding never reads past them, what decodes
 * is a cursor a walk could hold (a finite key, at most
 * INDEX_RANK_LEAVES_MAX leaves, counts within their collection), and it
 * encodes back to the same bytes (a cursor has one spelling, so a forged
 * or altered one is refused, never misread). Every kind of cursor built
 * from the bytes survives the round trip. The search fingerprint of the
 * bytes read as a query string is stable. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/cursor.h"
#include "api/params.h"
#include "util/arena.h"

static bool same(const struct api_cursor *a, const struct api_cursor *b)
{
    if (a->kind != b->kind || a->search != b->search || a->id != b->id)
        return false;
    if (a->kind == API_CURSOR_PUBLISHED)
        return true;
    if (memcmp(&a->key, &b->key, sizeof a->key) != 0)
        return false;
    if (a->kind == API_CURSOR_POPULARITY)
        return true;
    if (a->stats.nrow != b->stats.nrow || a->stats.ntoken != b->stats.ntoken ||
        a->stats.nleaves != b->stats.nleaves)
        return false;
    for (size_t i = 0; i < a->stats.nleaves; i++) {
        if (a->stats.hits[i] != b->stats.hits[i])
            return false;
    }
    return true;
}

/* A cursor of kind k from the bytes: a walk's position, and for
 * relevancy statistics a collection can have. false: too few bytes. */
static bool cursor_from(const uint8_t *data, size_t size, enum api_cursor_kind k,
                        struct api_cursor *c)
{
    if (size < 24)
        return false;
    memset(c, 0, sizeof *c);
    c->kind = k;
    memcpy(&c->search, data, 8);
    memcpy(&c->id, data + 8, 8);
    if (k != API_CURSOR_PUBLISHED) {
        memcpy(&c->key, data + 16, 8);
        if (!isfinite(c->key))
            c->key = 0.0;
    }
    if (k == API_CURSOR_RELEVANCY) {
        size_t at = 24;
        c->stats.nrow = 1 + (int64_t)(size * 977);
        c->stats.ntoken = (int64_t)(size * 31337);
        for (; at < size && c->stats.nleaves < INDEX_RANK_LEAVES_MAX; at++)
            c->stats.hits[c->stats.nleaves++] = data[at] % (c->stats.nrow + 1);
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_cursor c, back;
    char again[API_CURSOR_MAX + 1];
    if (api_cursor_decode((const char *)data, size, &c)) {
        if (c.kind != API_CURSOR_PUBLISHED && !isfinite(c.key))
            abort();
        if (c.kind == API_CURSOR_RELEVANCY) {
            if (c.stats.nrow <= 0 || c.stats.ntoken < 0 || c.stats.nleaves > INDEX_RANK_LEAVES_MAX)
                abort();
            for (size_t i = 0; i < c.stats.nleaves; i++) {
                if (c.stats.hits[i] < 0 || c.stats.hits[i] > c.stats.nrow)
                    abort();
            }
        }
        api_cursor_encode(&c, again);
        if (strlen(again) != size || memcmp(again, data, size) != 0)
            abort();
    }
    /* A round trip of any position of each kind. */
    for (int k = API_CURSOR_PUBLISHED; k <= API_CURSOR_RELEVANCY; k++) {
        if (!cursor_from(data, size, (enum api_cursor_kind)k, &c))
            break;
        api_cursor_encode(&c, again);
        if (strlen(again) > API_CURSOR_MAX || !api_cursor_decode(again, strlen(again), &back) ||
            !same(&c, &back))
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
