/* push/seen.h: two open-addressing tables, the current generation and the
 * one before; a story found in the older one moves to the current one,
 * and when the current one holds PUSH_SEEN_MAX stories it becomes the
 * older one (the oldest stories are forgotten, a table at a time). */
#include "push/seen.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/banned.h"

struct gen {
    int64_t *story; /* 0: free (story ids are never 0) */
    uint64_t *count;
    size_t n, cap; /* cap: a power of two, at most twice PUSH_SEEN_MAX */
};

struct push_seen {
    struct gen cur, old;
};

static void gen_free(struct gen *g)
{
    free(g->story);
    free(g->count);
    memset(g, 0, sizeof *g);
}

static size_t slot_of(const struct gen *g, int64_t story)
{
    size_t h = (size_t)hash_fib((uint64_t)story, 20);
    for (h &= g->cap - 1; g->story[h] && g->story[h] != story; h = (h + 1) & (g->cap - 1))
        ;
    return h;
}

/* Room for one more in g (grown to hold twice its stories): false on OOM. */
static bool gen_room(struct gen *g)
{
    if (g->cap && 2 * (g->n + 1) <= g->cap)
        return true;
    struct gen big = {.cap = g->cap ? 2 * g->cap : 64, .n = g->n};
    big.story = calloc(big.cap, sizeof *big.story);
    big.count = calloc(big.cap, sizeof *big.count);
    if (big.story == NULL || big.count == NULL) {
        gen_free(&big);
        return false;
    }
    for (size_t i = 0; i < g->cap; i++) {
        if (!g->story[i])
            continue;
        size_t h = slot_of(&big, g->story[i]);
        big.story[h] = g->story[i];
        big.count[h] = g->count[i];
    }
    gen_free(g);
    *g = big;
    return true;
}

static uint64_t gen_find(const struct gen *g, int64_t story)
{
    if (g->cap == 0)
        return 0;
    size_t h = slot_of(g, story);
    return g->story[h] ? g->count[h] : 0;
}

struct push_seen *push_seen_new(void)
{
    return calloc(1, sizeof(struct push_seen));
}

void push_seen_clear(struct push_seen *s)
{
    gen_free(&s->cur);
    gen_free(&s->old);
}

void push_seen_free(struct push_seen *s)
{
    if (s == NULL)
        return;
    push_seen_clear(s);
    free(s);
}

uint64_t push_seen_add(struct push_seen *s, int64_t story)
{
    if (s->cur.cap) {
        size_t h = slot_of(&s->cur, story);
        if (s->cur.story[h])
            return ++s->cur.count[h];
    }
    uint64_t before = gen_find(&s->old, story);
    if (s->cur.n >= PUSH_SEEN_MAX) { /* a new generation: the oldest go */
        gen_free(&s->old);
        s->old = s->cur;
        memset(&s->cur, 0, sizeof s->cur);
    }
    if (!gen_room(&s->cur))
        return 0;
    size_t h = slot_of(&s->cur, story);
    s->cur.story[h] = story;
    s->cur.count[h] = before + 1;
    s->cur.n++;
    return before + 1;
}
