/* The percolator of push/percolator.h. Each search is an entry with a
 * dense slot number; its keys (index_matcher_keys) are numbered by a
 * string table, and each key number has a bucket of the entries filed
 * under it. An article looks each of its distinct terms up (one hash
 * probe each), marks the entries of the buckets it finds in a bitmap over
 * the slots (so an entry reached by several terms is tested once), then
 * tests the marked entries and the keyless ones. Entries are also kept in
 * an array sorted by id, for replacing and removing.
 *
 * A key whose searches are all gone keeps its (empty) bucket and its
 * string until empty keys are most of the table: then the table is built
 * again from the live keys (compact). Keys are what clients send (a stream
 * reconnecting with new words each time files new ones), so without that
 * the table would grow with every search ever filed. */
#include "push/percolator.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/sort.h"
#include "util/strtab.h"
#include "util/banned.h"

struct entry {
    uint64_t id;
    struct index_matcher *m;
    size_t slot;
    size_t *keys; /* key numbers it is filed under */
    size_t n_keys;
};

struct bucket {
    struct entry **v;
    size_t n, cap;
};

struct percolator {
    pthread_rwlock_t lock;
    struct strtab keys;
    struct bucket *buckets; /* by key number */
    size_t buckets_cap;
    size_t live_keys; /* keys whose bucket holds a search */
    struct bucket keyless;
    struct entry **by_id; /* sorted by id */
    size_t n, by_id_cap;
    struct entry **slots; /* by slot; NULL: free */
    size_t n_slots, slots_cap;
    size_t *free_slots; /* room for every slot */
    size_t n_free, free_cap;
};

int percolator_new(struct percolator **out, struct err *err)
{
    struct percolator *p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if (pthread_rwlock_init(&p->lock, NULL) != 0) {
        free(p);
        return err_set(err, ERR_NOMEM, "cannot make a lock");
    }
    strtab_init(&p->keys);
    *out = p;
    return 0;
}

static void entry_free(struct entry *e)
{
    if (e == NULL)
        return;
    index_matcher_free(e->m);
    free(e->keys);
    free(e);
}

void percolator_free(struct percolator *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        entry_free(p->by_id[i]);
    for (size_t i = 0; i < p->keys.n; i++)
        free(p->buckets[i].v);
    free(p->buckets);
    free(p->keyless.v);
    free(p->by_id);
    free(p->slots);
    free(p->free_slots);
    strtab_release(&p->keys);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}

static int bucket_push(struct bucket *b, struct entry *e)
{
    if (array_reserve(&b->v, &b->cap, b->n, 1, sizeof *b->v) < 0)
        return ERR_NOMEM;
    b->v[b->n++] = e;
    return 0;
}

static void bucket_drop(struct bucket *b, const struct entry *e)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->v[i] == e) {
            b->v[i] = b->v[--b->n];
            return;
        }
    }
}

/* Take e out of the buckets of its first n keys (or the keyless list). */
static void unfile(struct percolator *p, struct entry *e, size_t n)
{
    if (e->n_keys == 0)
        bucket_drop(&p->keyless, e);
    for (size_t i = 0; i < n; i++) {
        struct bucket *b = &p->buckets[e->keys[i]];
        bucket_drop(b, e);
        if (b->n == 0)
            p->live_keys--;
    }
}

/* Fewer keys than this are never compacted: the table is small anyway. */
#define COMPACT_MIN_KEYS 1024

/* The key table and buckets again with only the keys that hold a search,
 * renumbered, when empty keys are more than half of them. Nothing changes
 * when memory is short: compacting is a saving, not a duty. */
static void compact(struct percolator *p)
{
    size_t n = p->keys.n, live = p->live_keys;
    if (n < COMPACT_MIN_KEYS || live * 2 >= n)
        return;
    struct strtab t;
    struct bucket *nb = calloc(live ? live : 1, sizeof *nb);
    size_t *map = malloc(n * sizeof *map);
    strtab_init(&t);
    for (size_t k = 0; nb && map && k < n; k++) {
        int added;
        map[k] = SIZE_MAX;
        if (p->buckets[k].n > 0 &&
            strtab_add(&t, strtab_str(&p->keys, k), strtab_len(&p->keys, k), &map[k], &added) < 0)
            goto fail;
    }
    if (nb == NULL || map == NULL || t.n != live) /* (t.n != live: a miscount; keep all) */
        goto fail;
    for (size_t k = 0; k < n; k++) {
        if (map[k] == SIZE_MAX)
            free(p->buckets[k].v);
        else
            nb[map[k]] = p->buckets[k];
    }
    for (size_t i = 0; i < p->n; i++) {
        struct entry *e = p->by_id[i];
        for (size_t j = 0; j < e->n_keys; j++)
            e->keys[j] = map[e->keys[j]];
    }
    free(p->buckets);
    strtab_release(&p->keys);
    p->keys = t;
    p->buckets = nb;
    p->buckets_cap = live ? live : 1;
    free(map);
    return;
fail:
    strtab_release(&t);
    free(nb);
    free(map);
}

/* File e under its matcher's keys; on failure nothing stays filed. */
static int file(struct percolator *p, struct entry *e)
{
    const char *const *keys;
    size_t n, i;
    index_matcher_keys(e->m, &keys, &n);
    if (n == 0)
        return bucket_push(&p->keyless, e);
    if ((e->keys = calloc(n, sizeof *e->keys)) == NULL)
        return ERR_NOMEM;
    for (i = 0; i < n; i++) {
        size_t k;
        int added;
        /* the bucket's room first: a key in the table always has one */
        if (array_reserve(&p->buckets, &p->buckets_cap, p->keys.n, 1, sizeof *p->buckets) < 0 ||
            strtab_add(&p->keys, keys[i], strlen(keys[i]), &k, &added) < 0)
            break;
        if (added)
            memset(&p->buckets[k], 0, sizeof p->buckets[k]);
        if (bucket_push(&p->buckets[k], e) < 0)
            break;
        if (p->buckets[k].n == 1)
            p->live_keys++;
        e->keys[i] = k;
    }
    e->n_keys = i;
    if (i < n) {
        unfile(p, e, i);
        return ERR_NOMEM;
    }
    return 0;
}

/* Position of id in by_id, or where it would go. */
static int entry_cmp_id(const void *element, const void *key)
{
    return sort_order_u64((*(struct entry *const *)element)->id, *(const uint64_t *)key);
}

static size_t find(const struct percolator *p, uint64_t id, bool *found)
{
    size_t at = sort_lower_bound(p->by_id, p->n, sizeof *p->by_id, &id, entry_cmp_id);
    *found = at < p->n && p->by_id[at]->id == id;
    return at;
}

static void slot_release(struct percolator *p, struct entry *e)
{
    p->slots[e->slot] = NULL;
    p->free_slots[p->n_free++] = e->slot; /* room: reserved with the slot */
}

int percolator_add(struct percolator *p, uint64_t id, struct index_matcher *m, struct err *err)
{
    struct entry *e = calloc(1, sizeof *e);
    bool found;
    int rc;

    if (e == NULL) {
        index_matcher_free(m);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    e->id = id;
    e->m = m;
    pthread_rwlock_wrlock(&p->lock);
    /* Every allocation first, so that a failure leaves the old search. */
    if (array_reserve(&p->by_id, &p->by_id_cap, p->n, 1, sizeof *p->by_id) < 0 ||
        array_reserve(&p->slots, &p->slots_cap, p->n_slots, 1, sizeof *p->slots) < 0 ||
        array_reserve(&p->free_slots, &p->free_cap, p->n_slots, 1, sizeof *p->free_slots) < 0) {
        rc = ERR_NOMEM;
        goto fail;
    }
    if ((rc = file(p, e)) < 0)
        goto fail;
    e->slot = p->n_free > 0 ? p->free_slots[--p->n_free] : p->n_slots++;
    p->slots[e->slot] = e;
    size_t at = find(p, id, &found);
    if (found) {
        struct entry *old = p->by_id[at];
        unfile(p, old, old->n_keys);
        slot_release(p, old);
        entry_free(old);
    } else {
        memmove(p->by_id + at + 1, p->by_id + at, (p->n - at) * sizeof *p->by_id);
        p->n++;
    }
    p->by_id[at] = e;
    compact(p); /* a replaced search may have left keys empty */
    pthread_rwlock_unlock(&p->lock);
    return 0;
fail:
    pthread_rwlock_unlock(&p->lock);
    entry_free(e);
    return err_set(err, rc, "out of memory filing a search");
}

void percolator_remove(struct percolator *p, uint64_t id)
{
    bool found;
    pthread_rwlock_wrlock(&p->lock);
    size_t at = find(p, id, &found);
    if (found) {
        struct entry *e = p->by_id[at];
        unfile(p, e, e->n_keys);
        slot_release(p, e);
        memmove(p->by_id + at, p->by_id + at + 1, (p->n - at - 1) * sizeof *p->by_id);
        p->n--;
        entry_free(e);
        compact(p);
    }
    pthread_rwlock_unlock(&p->lock);
}

size_t percolator_keys(struct percolator *p)
{
    pthread_rwlock_rdlock(&p->lock);
    size_t n = p->keys.n;
    pthread_rwlock_unlock(&p->lock);
    return n;
}

size_t percolator_size(struct percolator *p)
{
    pthread_rwlock_rdlock(&p->lock);
    size_t n = p->n;
    pthread_rwlock_unlock(&p->lock);
    return n;
}

int percolator_match(struct percolator *p, const struct index_match_doc *d, uint64_t **ids,
                     size_t *n, struct err *err)
{
    const char *const *terms;
    size_t n_terms, got = 0;
    uint64_t *seen = NULL, *out = NULL;
    int rc = 0;

    *ids = NULL;
    *n = 0;
    index_match_doc_terms(d, &terms, &n_terms);
    pthread_rwlock_rdlock(&p->lock);
    if (p->n == 0)
        goto done;
    seen = calloc((p->n_slots + 63) / 64, sizeof *seen);
    out = malloc(p->n * sizeof *out);
    if (seen == NULL || out == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory matching searches");
        goto done;
    }
    for (size_t i = 0; i < n_terms; i++) {
        int64_t k = strtab_find(&p->keys, terms[i], strlen(terms[i]));
        if (k < 0)
            continue;
        const struct bucket *b = &p->buckets[k];
        for (size_t j = 0; j < b->n; j++) {
            const struct entry *e = b->v[j];
            uint64_t bit = (uint64_t)1 << (e->slot & 63);
            if (seen[e->slot >> 6] & bit)
                continue;
            seen[e->slot >> 6] |= bit;
            if (index_matcher_test(e->m, d))
                out[got++] = e->id;
        }
    }
    for (size_t j = 0; j < p->keyless.n; j++) {
        const struct entry *e = p->keyless.v[j];
        if (index_matcher_test(e->m, d))
            out[got++] = e->id;
    }
done:
    pthread_rwlock_unlock(&p->lock);
    free(seen);
    if (rc < 0 || got == 0) {
        free(out);
        return rc;
    }
    qsort(out, got, sizeof *out, sort_cmp_u64);
    *ids = out;
    *n = got;
    return 0;
}
