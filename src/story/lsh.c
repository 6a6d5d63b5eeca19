/* The window of story/lsh.h. Entries are kept in arrays in the order they
 * came; one open-addressing table maps a (slot, key) pair to the newest
 * entry with it, and each entry links to the previous one per slot, so a
 * key's entries are a chain, newest first. Slots: the URL key, the title
 * key, then one per band. An entry is compared only with articles
 * published within the window of its own time, whatever order they come
 * in (an import of old articles, a feed that is late).
 *
 * Memory follows the window, not the input: once the entries are four
 * times what the last clean-up kept (and are at least COMPACT_MIN), those published
 * more than two windows before the recent end of the held times go (the
 * slack keeps late and out-of-order articles comparable), and the table is
 * built again from the rest: amortised O(1) per add. An import of years
 * of articles in time order so holds a few windows' worth (profiled on
 * 200,000 bench articles: the whole input in the window made the table
 * 128 MB and every probe a cache miss). STORY_LSH_MAX_ENTRIES bounds a
 * window that is that full by itself: then the older half goes. */
#include "story/lsh.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/banned.h"

#define SLOT_URL 0
#define SLOT_TITLE 1
#define SLOT_BAND0 2
#define NSLOTS (SLOT_BAND0 + STORY_LSH_BANDS)
#define NONE UINT32_MAX
/* Entries below which the window is never cleaned up: small windows are
 * cheap, and tests of a few hundred articles see no eviction. */
#define COMPACT_MIN 4096

struct entry {
    int64_t t, story;
    uint64_t host;               /* story_site_key */
    uint64_t url_key, title_key; /* 0: none */
    uint32_t next[NSLOTS];       /* the previous entry with the same key per slot */
    struct story_sketch sk;
};

struct story_lsh {
    int64_t window_s;
    struct entry *e;
    size_t n, cap;
    size_t compact_at; /* clean up when n reaches this */
    /* open addressing, 8 bytes a slot: fp, 32 bits of the table key (0:
     * empty), its other bits pick the slot; head the newest entry. Two keys
     * with one fingerprint share a chain: look-ups check the entry. */
    struct slot {
        uint32_t fp;
        uint32_t head;
    } * t;
    size_t tcap, tused;
};

/* The table key of (slot, key); a band's key is its slots' values. */
static uint64_t slot_key(unsigned slot, uint64_t key)
{
    uint64_t k = hash_mix64(key ^ ((uint64_t)(slot + 1) * 0x9E3779B97F4A7C15ULL));
    return k ? k : 1;
}

static uint64_t band_value(const struct story_sketch *sk, unsigned b)
{
    _Static_assert(STORY_LSH_ROWS == 2, "a band is two 32-bit slots");
    return (uint64_t)sk->slot[b * 2] << 32 | sk->slot[b * 2 + 1];
}

/* The table keys of an entry's slots, 0 where it has no key. */
static void entry_keys(uint64_t k[NSLOTS], uint64_t url_key, uint64_t title_key,
                       const struct story_sketch *sk)
{
    k[SLOT_URL] = url_key ? slot_key(SLOT_URL, url_key) : 0;
    k[SLOT_TITLE] = title_key ? slot_key(SLOT_TITLE, title_key) : 0;
    for (unsigned b = 0; b < STORY_LSH_BANDS; b++)
        k[SLOT_BAND0 + b] = sk->shingles >= STORY_SKETCH_MIN_SHINGLES
                                ? slot_key(SLOT_BAND0 + b, band_value(sk, b))
                                : 0;
}

static uint32_t key_fp(uint64_t k)
{
    uint32_t fp = (uint32_t)(k >> 32);
    return fp ? fp : 1;
}

static size_t table_find(const struct story_lsh *l, uint64_t k)
{
    size_t mask = l->tcap - 1, i = (size_t)k & mask;
    uint32_t fp = key_fp(k);
    while (l->t[i].fp != 0 && l->t[i].fp != fp)
        i = (i + 1) & mask;
    return i;
}

/* Start the probes of an article's keys together: in a table larger than
 * the cache each is a miss, and they overlap instead of queueing. */
static void table_prefetch(const struct story_lsh *l, const uint64_t k[NSLOTS])
{
    for (unsigned s = 0; s < NSLOTS; s++)
        if (k[s])
            __builtin_prefetch(&l->t[(size_t)k[s] & (l->tcap - 1)]);
}

static int table_alloc(struct story_lsh *l, size_t cap)
{
    if (cap == l->tcap) { /* a clean-up's rebuild: the pages are there */
        memset(l->t, 0, cap * sizeof *l->t);
        l->tused = 0;
        return 0;
    }
    struct slot *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return ERR_NOMEM;
    free(l->t);
    l->t = t;
    l->tcap = cap;
    l->tused = 0;
    return 0;
}

/* Link entry i into the table under its keys k. The table has room. */
static void link_entry(struct story_lsh *l, uint32_t i, const uint64_t k[NSLOTS])
{
    struct entry *e = &l->e[i];
    for (unsigned s = 0; s < NSLOTS; s++) {
        e->next[s] = NONE;
        if (k[s] == 0)
            continue;
        size_t at = table_find(l, k[s]);
        if (l->t[at].fp == 0) {
            l->t[at].fp = key_fp(k[s]);
            l->tused++;
        } else {
            e->next[s] = l->t[at].head;
        }
        l->t[at].head = i;
    }
}

/* Build the table again over the entries (in order, so chains stay newest
 * first), with room for want more keys. */
static int rebuild(struct story_lsh *l, size_t want)
{
    size_t cap = 1024;
    while (cap < 2 * (l->n * NSLOTS + want))
        cap *= 2;
    int rc = table_alloc(l, cap);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < l->n; i++) {
        uint64_t k[NSLOTS];
        entry_keys(k, l->e[i].url_key, l->e[i].title_key, &l->e[i].sk);
        link_entry(l, (uint32_t)i, k);
    }
    return 0;
}

/* Clean up: drop the entries published more than two windows before the
 * recent end of the held times (the time of the 99th percentile, so one
 * article dated years ahead does not empty the window); when the window
 * is full by itself (STORY_LSH_MAX_ENTRIES), the older half. */
static int compact(struct story_lsh *l)
{
    int64_t *ts = malloc(l->n * sizeof *ts);
    if (ts == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < l->n; i++)
        ts[i] = l->e[i].t;
    qsort(ts, l->n, sizeof *ts, sort_cmp_i64);
    int64_t recent = ts[l->n - 1 - l->n / 100];
    int64_t cut = recent > INT64_MIN + 2 * l->window_s ? recent - 2 * l->window_s : INT64_MIN;
    /* At the cut time itself, keep at most `at_cut` entries (the latest
     * come): a full window of one time still halves. */
    size_t at_cut = SIZE_MAX;
    if (l->n >= STORY_LSH_MAX_ENTRIES && ts[l->n / 2] >= cut) {
        cut = ts[l->n / 2];
        size_t above = 0;
        for (size_t i = l->n / 2; i < l->n; i++)
            above += ts[i] > cut;
        at_cut = l->n / 2 > above ? l->n / 2 - above : 0;
    }
    free(ts);
    size_t w = 0, equal = 0;
    for (size_t i = 0; i < l->n; i++)
        equal += l->e[i].t == cut;
    for (size_t i = 0; i < l->n; i++) {
        const struct entry *e = &l->e[i];
        if (e->t == cut && equal-- > at_cut)
            continue; /* an earlier one of too many at the cut */
        if (e->t >= cut)
            l->e[w++] = *e;
    }
    l->n = w;
    l->compact_at = 4 * w > COMPACT_MIN ? 4 * w : COMPACT_MIN;
    if (l->compact_at > STORY_LSH_MAX_ENTRIES)
        l->compact_at = STORY_LSH_MAX_ENTRIES;
    if (l->cap > 4 * l->compact_at) { /* give back what a burst took */
        struct entry *e = realloc(l->e, l->compact_at * sizeof *e);
        if (e != NULL) {
            l->e = e;
            l->cap = l->compact_at;
        }
    }
    /* room for the keys until the next clean-up: no growth on the way */
    return rebuild(l, l->compact_at > w ? (l->compact_at - w) * NSLOTS : 0);
}

int story_lsh_new(struct story_lsh **out, int64_t window_s)
{
    struct story_lsh *l = calloc(1, sizeof *l);
    *out = NULL;
    if (l == NULL)
        return ERR_NOMEM;
    l->window_s = window_s > 0 ? window_s : 1;
    l->compact_at = COMPACT_MIN;
    if (table_alloc(l, 1024) < 0) {
        free(l);
        return ERR_NOMEM;
    }
    *out = l;
    return 0;
}

void story_lsh_free(struct story_lsh *l)
{
    if (l == NULL)
        return;
    free(l->e);
    free(l->t);
    free(l);
}

size_t story_lsh_size(const struct story_lsh *l)
{
    return l->n;
}

int story_lsh_add(struct story_lsh *l, int64_t t, int64_t story, uint64_t site_key,
                  uint64_t url_key, uint64_t title_key, const struct story_sketch *sk)
{
    int rc;
    if (l->n >= l->compact_at && (rc = compact(l)) < 0)
        return rc;
    if (array_reserve(&l->e, &l->cap, l->n, 1, sizeof *l->e) < 0)
        return ERR_NOMEM;
    if (2 * (l->tused + NSLOTS) > l->tcap && (rc = rebuild(l, NSLOTS)) < 0)
        return rc;
    struct entry *e = &l->e[l->n];
    uint64_t k[NSLOTS];
    e->t = t;
    e->story = story;
    e->host = site_key;
    e->url_key = url_key;
    e->title_key = title_key;
    e->sk = *sk;
    entry_keys(k, url_key, title_key, sk);
    link_entry(l, (uint32_t)l->n, k);
    l->n++;
    return 0;
}

/* The newest entry under table key k (0: none), NONE when none. */
static uint32_t chain_head(const struct story_lsh *l, uint64_t k)
{
    if (k == 0)
        return NONE;
    size_t at = table_find(l, k);
    return l->t[at].fp == 0 ? NONE : l->t[at].head;
}

void story_lsh_prefetch(const struct story_lsh *l, uint64_t url_key, uint64_t title_key,
                        const struct story_sketch *sk)
{
    uint64_t k[NSLOTS];
    entry_keys(k, url_key, title_key, sk);
    table_prefetch(l, k);
}

int64_t story_lsh_find_url(const struct story_lsh *l, uint64_t url_key)
{
    unsigned seen = 0;
    for (uint32_t i = chain_head(l, url_key ? slot_key(SLOT_URL, url_key) : 0);
         i != NONE && seen < STORY_LSH_CHAIN_MAX; i = l->e[i].next[SLOT_URL], seen++) {
        if (l->e[i].url_key == url_key)
            return l->e[i].story;
    }
    return 0;
}

static int64_t dt_abs(int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

int64_t story_lsh_find_title(const struct story_lsh *l, uint64_t title_key, int64_t t,
                             int64_t max_dt)
{
    unsigned seen = 0;
    for (uint32_t i = chain_head(l, title_key ? slot_key(SLOT_TITLE, title_key) : 0);
         i != NONE && seen < STORY_LSH_CHAIN_MAX; i = l->e[i].next[SLOT_TITLE], seen++) {
        const struct entry *e = &l->e[i];
        if (e->title_key == title_key && dt_abs(e->t, t) <= max_dt)
            return e->story;
    }
    return 0;
}

int64_t story_lsh_find_similar(const struct story_lsh *l, const struct story_sketch *sk,
                               uint64_t site_key, int64_t t, double threshold, double *sim)
{
    int64_t best_story = 0;
    double best = -1;
    uint64_t k[NSLOTS];
    *sim = 0;
    if (sk->shingles < STORY_SKETCH_MIN_SHINGLES)
        return 0;
    entry_keys(k, 0, 0, sk);
    for (unsigned b = 0; b < STORY_LSH_BANDS; b++) {
        unsigned seen = 0;
        for (uint32_t i = chain_head(l, k[SLOT_BAND0 + b]); i != NONE && seen < STORY_LSH_CHAIN_MAX;
             i = l->e[i].next[SLOT_BAND0 + b], seen++) {
            const struct entry *e = &l->e[i];
            if (dt_abs(e->t, t) > l->window_s || band_value(&e->sk, b) != band_value(sk, b))
                continue;
            double s = story_sketch_similarity(sk, &e->sk);
            if (site_key != 0 && e->host == site_key) {
                /* A page of its own site this like it under another URL
                 * and title (rules 1 and 2 found no copy): the text is the
                 * site's boiler-plate (a template, a consent wall, a
                 * disclaimer), and what it is like elsewhere is that. */
                if (s >= threshold)
                    return 0;
                continue;
            }
            if (s >= threshold && best >= threshold && e->story != best_story)
                return 0; /* like two stories: text they share, not one's */
            if (s > best) {
                best = s;
                best_story = e->story;
            }
        }
    }
    if (best < threshold)
        return 0;
    *sim = best;
    return best_story;
}
