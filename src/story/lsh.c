/* The window of story/lsh.h. Entries are kept in arrays in the order they
 * came; one open-addressing table maps a (slot, key) pair to the newest
 * entry with it, and each entry links to the previous one per slot, so a
 * key's entries are a chain, newest first. Slots: the URL key, the title
 * key, then one per band. An entry is compared only with articles
 * published within the window of its own time, whatever order they come
 * in (an import of old articles, a feed that is late). The memory is
 * bounded by STORY_LSH_MAX_ENTRIES: when it is reached, the entries out of
 * the window of the newest article go, else the older half by time; the
 * table is then built again from the rest (amortised O(1) per add). */
#include "story/lsh.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/hash.h"
#include "util/banned.h"

#define SLOT_URL 0
#define SLOT_TITLE 1
#define SLOT_BAND0 2
#define NSLOTS (SLOT_BAND0 + STORY_LSH_BANDS)
#define NONE UINT32_MAX

struct entry {
    int64_t t, story;
    uint64_t host;        /* story_host_key */
    uint64_t key[NSLOTS]; /* 0: no key in that slot */
    uint32_t next[NSLOTS];
    struct story_sketch sk;
};

struct story_lsh {
    int64_t window_s;
    int64_t newest;
    bool any;
    struct entry *e;
    size_t n, cap;
    /* open addressing: t[i].key == 0 empty; t[i].head the newest entry
     * (one cache line per probe) */
    struct slot {
        uint64_t key;
        uint32_t head;
    } *t;
    size_t tcap, tused;
};

static uint64_t slot_key(unsigned slot, uint64_t key)
{
    uint64_t k = hash_mix64(key ^ ((uint64_t)(slot + 1) * 0x9E3779B97F4A7C15ULL));
    return k ? k : 1;
}

static size_t table_find(const struct story_lsh *l, uint64_t k)
{
    size_t mask = l->tcap - 1, i = (size_t)k & mask;
    while (l->t[i].key != 0 && l->t[i].key != k)
        i = (i + 1) & mask;
    return i;
}

static int table_alloc(struct story_lsh *l, size_t cap)
{
    struct slot *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return ERR_NOMEM;
    free(l->t);
    l->t = t;
    l->tcap = cap;
    l->tused = 0;
    return 0;
}

/* Link entry i into the table under its keys. The table has room. */
static void link_entry(struct story_lsh *l, uint32_t i)
{
    struct entry *e = &l->e[i];
    for (unsigned s = 0; s < NSLOTS; s++) {
        e->next[s] = NONE;
        if (e->key[s] == 0)
            continue;
        uint64_t k = slot_key(s, e->key[s]);
        size_t at = table_find(l, k);
        if (l->t[at].key == 0) {
            l->t[at].key = k;
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
    for (size_t i = 0; i < l->n; i++)
        link_entry(l, (uint32_t)i);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Make room: drop the entries published before cut. */
static int drop_before(struct story_lsh *l, int64_t cut)
{
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].t >= cut)
            l->e[w++] = l->e[i];
    l->n = w;
    return rebuild(l, 0);
}

/* The window is full: out-of-window entries go, else the older half. */
static int compact(struct story_lsh *l)
{
    int64_t cut = l->newest - l->window_s;
    size_t old = 0;
    for (size_t i = 0; i < l->n; i++)
        old += l->e[i].t < cut;
    if (old * 4 < l->n) {
        int64_t *ts = malloc(l->n * sizeof *ts);
        if (ts == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < l->n; i++)
            ts[i] = l->e[i].t;
        qsort(ts, l->n, sizeof *ts, cmp_i64);
        cut = ts[l->n / 2];
        free(ts);
    }
    return drop_before(l, cut);
}

int story_lsh_new(struct story_lsh **out, int64_t window_s)
{
    struct story_lsh *l = calloc(1, sizeof *l);
    *out = NULL;
    if (l == NULL)
        return ERR_NOMEM;
    l->window_s = window_s > 0 ? window_s : 1;
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

int story_lsh_add(struct story_lsh *l, int64_t t, int64_t story, uint64_t host_key,
                  uint64_t url_key, uint64_t title_key, const struct story_sketch *sk)
{
    int rc;
    if (!l->any || t > l->newest)
        l->newest = t;
    l->any = true;
    if (l->n >= STORY_LSH_MAX_ENTRIES && (rc = compact(l)) < 0)
        return rc;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct entry *e = realloc(l->e, cap * sizeof *e);
        if (e == NULL)
            return ERR_NOMEM;
        l->e = e;
        l->cap = cap;
    }
    if (2 * (l->tused + NSLOTS) > l->tcap && (rc = rebuild(l, NSLOTS)) < 0)
        return rc;
    struct entry *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    e->t = t;
    e->story = story;
    e->host = host_key;
    e->sk = *sk;
    e->key[SLOT_URL] = url_key;
    e->key[SLOT_TITLE] = title_key;
    if (sk->shingles >= STORY_SKETCH_MIN_SHINGLES) {
        for (unsigned b = 0; b < STORY_LSH_BANDS; b++) {
            uint64_t h = hash_fnv1a64(&sk->slot[b * STORY_LSH_ROWS],
                                      STORY_LSH_ROWS * sizeof sk->slot[0]);
            e->key[SLOT_BAND0 + b] = h ? h : 1;
        }
    }
    link_entry(l, (uint32_t)l->n);
    l->n++;
    return 0;
}

/* The newest entry under (slot, key), NONE when none. */
static uint32_t chain_head(const struct story_lsh *l, unsigned slot, uint64_t key)
{
    if (key == 0)
        return NONE;
    uint64_t k = slot_key(slot, key);
    size_t at = table_find(l, k);
    return l->t[at].key == 0 ? NONE : l->t[at].head;
}

int64_t story_lsh_find_url(const struct story_lsh *l, uint64_t url_key)
{
    unsigned seen = 0;
    for (uint32_t i = chain_head(l, SLOT_URL, url_key); i != NONE && seen < STORY_LSH_CHAIN_MAX;
         i = l->e[i].next[SLOT_URL], seen++) {
        if (l->e[i].key[SLOT_URL] == url_key)
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
    for (uint32_t i = chain_head(l, SLOT_TITLE, title_key);
         i != NONE && seen < STORY_LSH_CHAIN_MAX; i = l->e[i].next[SLOT_TITLE], seen++) {
        const struct entry *e = &l->e[i];
        if (e->key[SLOT_TITLE] == title_key && dt_abs(e->t, t) <= max_dt)
            return e->story;
    }
    return 0;
}

int64_t story_lsh_find_similar(const struct story_lsh *l, const struct story_sketch *sk,
                               uint64_t host_key, int64_t t, double threshold, double *sim)
{
    int64_t best_story = 0;
    double best = -1;
    *sim = 0;
    if (sk->shingles < STORY_SKETCH_MIN_SHINGLES)
        return 0;
    for (unsigned b = 0; b < STORY_LSH_BANDS; b++) {
        uint64_t h = hash_fnv1a64(&sk->slot[b * STORY_LSH_ROWS], STORY_LSH_ROWS * sizeof sk->slot[0]);
        h = h ? h : 1;
        unsigned seen = 0;
        for (uint32_t i = chain_head(l, SLOT_BAND0 + b, h); i != NONE && seen < STORY_LSH_CHAIN_MAX;
             i = l->e[i].next[SLOT_BAND0 + b], seen++) {
            const struct entry *e = &l->e[i];
            if (e->key[SLOT_BAND0 + b] != h || dt_abs(e->t, t) > l->window_s ||
                (host_key != 0 && e->host == host_key))
                continue;
            double s = story_sketch_similarity(sk, &e->sk);
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
