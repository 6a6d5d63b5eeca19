/* The count cache of ENGINE.md §4 (index/engine/internal.h): exact match
 * counts of (segment, deletion set, plan, docid window). Segments and
 * deletion sets are immutable and each carries a generation number that is
 * never reused, so an entry stays true for as long as both live and is
 * simply never asked for again once either is replaced: no invalidation.
 *
 * Two generations of hash tables bound the memory: entries go to the
 * young table; when it holds ENG_COUNT_CACHE_BYTES / 2 the old table is dropped
 * and the young one becomes old; a hit in the old table moves the entry
 * back to the young one. What is asked for again survives, what is not
 * goes within two rounds: LRU-like at the cost of one pointer swap. */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#include "util/banned.h"

struct centry {
    struct centry *next; /* hash chain */
    uint64_t hash, seg_gen, del_gen, count;
    uint32_t lo, hi;
    size_t len;
    char key[]; /* the plan's fingerprint */
};

struct ctable {
    struct centry **slots;
    size_t nslots; /* power of two */
    size_t bytes;
};

struct eng_count_cache {
    pthread_mutex_t lock;
    struct ctable young, old;
    size_t max_bytes;
    uint64_t hits, misses;
};

#define SLOTS 16384

static void table_clear(struct ctable *t)
{
    for (size_t i = 0; t->slots && i < t->nslots; i++) {
        struct centry *e = t->slots[i];
        while (e) {
            struct centry *n = e->next;
            free(e);
            e = n;
        }
        t->slots[i] = NULL;
    }
    t->bytes = 0;
}

int eng_count_cache_new(struct eng_count_cache **out, size_t max_bytes)
{
    struct eng_count_cache *c = calloc(1, sizeof *c);
    *out = NULL;
    if (c == NULL)
        return ERR_NOMEM;
    c->young.slots = calloc(SLOTS, sizeof *c->young.slots);
    c->old.slots = calloc(SLOTS, sizeof *c->old.slots);
    if (c->young.slots == NULL || c->old.slots == NULL) {
        free(c->young.slots);
        free(c->old.slots);
        free(c);
        return ERR_NOMEM;
    }
    c->young.nslots = c->old.nslots = SLOTS;
    c->max_bytes = max_bytes;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return 0;
}

void eng_count_cache_free(struct eng_count_cache *c)
{
    if (c == NULL)
        return;
    table_clear(&c->young);
    table_clear(&c->old);
    free(c->young.slots);
    free(c->old.slots);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static uint64_t key_hash(const struct eng_count_cache_key *k)
{
    uint64_t h = hash_bytes64(k->plan, k->len);
    h ^= k->seg_gen * 0x9e3779b97f4a7c15ull;
    h ^= (k->del_gen + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= ((uint64_t)k->lo << 32 | k->hi) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static struct centry **find(struct ctable *t, const struct eng_count_cache_key *k, uint64_t h)
{
    struct centry **p = &t->slots[h & (t->nslots - 1)];
    for (; *p; p = &(*p)->next) {
        const struct centry *e = *p;
        if (e->hash == h && e->seg_gen == k->seg_gen && e->del_gen == k->del_gen &&
            e->lo == k->lo && e->hi == k->hi && e->len == k->len &&
            memcmp(e->key, k->plan, k->len) == 0)
            return p;
    }
    return NULL;
}

static void insert(struct eng_count_cache *c, struct centry *e)
{
    if (c->young.bytes + sizeof *e + e->len > c->max_bytes / 2) {
        /* the old generation goes; the young one becomes old */
        table_clear(&c->old);
        struct ctable t = c->old;
        c->old = c->young;
        c->young = t;
    }
    struct centry **slot = &c->young.slots[e->hash & (c->young.nslots - 1)];
    e->next = *slot;
    *slot = e;
    c->young.bytes += sizeof *e + e->len;
}

bool eng_count_cache_get(struct eng_count_cache *c, const struct eng_count_cache_key *k,
                         uint64_t *count)
{
    if (c == NULL)
        return false;
    uint64_t h = key_hash(k);
    bool hit = false;
    pthread_mutex_lock(&c->lock);
    struct centry **p = find(&c->young, k, h);
    if (p) {
        *count = (*p)->count;
        hit = true;
    } else if ((p = find(&c->old, k, h)) != NULL) {
        struct centry *e = *p;
        *p = e->next; /* back to the young generation */
        c->old.bytes -= sizeof *e + e->len;
        *count = e->count;
        insert(c, e);
        hit = true;
    }
    if (hit)
        c->hits++;
    else
        c->misses++;
    pthread_mutex_unlock(&c->lock);
    return hit;
}

void eng_count_cache_put(struct eng_count_cache *c, const struct eng_count_cache_key *k,
                         uint64_t count)
{
    if (c == NULL || k->len + sizeof(struct centry) > c->max_bytes / 4)
        return;
    uint64_t h = key_hash(k);
    struct centry *e = malloc(sizeof *e + k->len);
    if (e == NULL)
        return; /* a cache may forget */
    *e = (struct centry){.hash = h,
                         .seg_gen = k->seg_gen,
                         .del_gen = k->del_gen,
                         .count = count,
                         .lo = k->lo,
                         .hi = k->hi,
                         .len = k->len};
    memcpy(e->key, k->plan, k->len);
    pthread_mutex_lock(&c->lock);
    if (find(&c->young, k, h) || find(&c->old, k, h))
        free(e); /* another search got there first */
    else
        insert(c, e);
    pthread_mutex_unlock(&c->lock);
}

void eng_count_cache_stats(struct eng_count_cache *c, uint64_t *hits, uint64_t *misses,
                           size_t *bytes)
{
    pthread_mutex_lock(&c->lock);
    *hits = c->hits;
    *misses = c->misses;
    *bytes = c->young.bytes + c->old.bytes;
    pthread_mutex_unlock(&c->lock);
}
