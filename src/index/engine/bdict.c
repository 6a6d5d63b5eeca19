/* The segment builder's dictionary (index/engine/bdict.h). */
#include "index/engine/bdict.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/hugepage.h"
#include "util/sort.h"
#include "util/banned.h"

static uint64_t prefix8(const char *s, size_t n)
{
    uint64_t x = 0;
    memcpy(&x, s, n < 8 ? n : 8);
    return x;
}

static uint32_t len_tag(uint64_t hv, size_t n)
{
    return (uint32_t)(hv >> 40) << 8 | (uint32_t)(n < 255 ? n : 255);
}

static int rehash(struct eng_bdict *d)
{
    size_t cap = d->hcap ? d->hcap * 2 : 1024;
    struct eng_bslot *h = calloc(cap, sizeof *h);
    if (h == NULL)
        return ERR_NOMEM;
    hugepage_advise(h, cap * sizeof *h);
    for (size_t i = 0; i < d->n; i++) {
        const struct eng_bterm *t = &d->terms[i];
        uint64_t hv = hash_bytes64(t->s, t->len);
        size_t j = hv & (cap - 1);
        while (h[j].idx1)
            j = (j + 1) & (cap - 1);
        h[j] = (struct eng_bslot){(uint32_t)i + 1, len_tag(hv, t->len), prefix8(t->s, t->len)};
    }
    free(d->hash);
    d->hash = h;
    d->hcap = cap;
    return 0;
}

/* Room for one more term. */
static int terms_room(struct eng_bdict *d)
{
    size_t cap = d->cap;
    if (eng_grow((void **)&d->terms, &d->cap, d->n + 1, sizeof *d->terms) < 0)
        return ERR_NOMEM;
    if (d->cap != cap)
        hugepage_advise(d->terms, d->cap * sizeof *d->terms);
    return 0;
}

int eng_bdict_find(struct eng_bdict *d, const char *s, size_t n, uint64_t hv, uint8_t kind,
                   uint32_t *out)
{
    if ((d->n + 1) * 2 > d->hcap && rehash(d) < 0)
        return ERR_NOMEM;
    uint64_t p8 = prefix8(s, n);
    uint32_t lt = len_tag(hv, n);
    size_t j = hv & (d->hcap - 1);
    while (d->hash[j].idx1) {
        const struct eng_bslot *h = &d->hash[j];
        if (h->len_tag == lt && h->pre == p8) {
            uint32_t k = h->idx1 - 1;
            if (n <= 8) { /* length and bytes are in the slot */
                *out = k;
                return 0;
            }
            const struct eng_bterm *t = &d->terms[k];
            if (t->len == n && memcmp(t->s + 8, s + 8, n - 8) == 0) {
                *out = k;
                return 0;
            }
        }
        j = (j + 1) & (d->hcap - 1);
    }
    if (terms_room(d) < 0)
        return ERR_NOMEM;
    struct eng_bterm *t = &d->terms[d->n];
    memset(t, 0, sizeof *t);
    if ((t->s = eng_bdict_string_room(d, n)) == NULL)
        return ERR_NOMEM;
    memcpy(t->s, s, n);
    t->len = (uint32_t)n;
    t->kind = kind;
    d->hash[j] = (struct eng_bslot){(uint32_t)d->n + 1, lt, p8};
    *out = (uint32_t)d->n++;
    return 0;
}

char *eng_bdict_string_room(struct eng_bdict *d, size_t n)
{
    return arena_alloc(&d->arena, n);
}

int eng_bdict_append(struct eng_bdict *d, char *s, size_t n, uint8_t kind)
{
    if (terms_room(d) < 0)
        return ERR_NOMEM;
    struct eng_bterm *t = &d->terms[d->n++];
    memset(t, 0, sizeof *t);
    t->s = s;
    t->len = (uint32_t)n;
    t->kind = kind;
    return 0;
}

/* A term in the sort: its first 8 bytes as a big-endian number (zero
 * padded) order most pairs without reading the strings, whose cache misses
 * made the sort ~3 % of a first build. */
struct term_key {
    uint64_t head;
    uint32_t idx;
};

static _Thread_local const struct eng_bterm *sort_terms; /* qsort's context */

static int cmp_term(const void *x, const void *y)
{
    const struct term_key *ka = x, *kb = y;
    if (ka->head != kb->head)
        return ka->head < kb->head ? -1 : 1;
    const struct eng_bterm *a = &sort_terms[ka->idx], *b = &sort_terms[kb->idx];
    return sort_order_bytes(a->s, a->len, b->s, b->len);
}

static uint64_t term_head(const struct eng_bterm *t)
{
    uint64_t h = 0;
    size_t n = t->len < 8 ? t->len : 8;
    for (size_t i = 0; i < n; i++)
        h |= (uint64_t)(unsigned char)t->s[i] << (56 - 8 * i);
    return h;
}

int eng_bdict_sorted(const struct eng_bdict *d, uint32_t *order)
{
    struct term_key *k = malloc((d->n + 1) * sizeof *k);
    if (k == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < d->n; i++)
        k[i] = (struct term_key){term_head(&d->terms[i]), (uint32_t)i};
    sort_terms = d->terms;
    qsort(k, d->n, sizeof *k, cmp_term);
    for (size_t i = 0; i < d->n; i++)
        order[i] = k[i].idx;
    free(k);
    return 0;
}

/* A term's arrays start in the arena, room for SMALL_POSTINGS postings and
 * SMALL_DATA bytes of data (a posting of up to three occurrences); an
 * array that outgrows that moves to the heap. So an array is the arena's
 * exactly when its room is that small. */
#define SMALL_POSTINGS ENG_BDICT_SMALL_POSTINGS
#define SMALL_DATA ENG_BDICT_SMALL_DATA

/* Room for need items of size bytes in *p (room *cap): a first small
 * room in the arena, then on the heap (util/array.h's doubling). */
static int array_room(struct eng_bdict *d, void **p, uint32_t *cap, size_t need, size_t size,
                      size_t small)
{
    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return ERR_NOMEM; /* (the room is kept in 32 bits) */
    size_t c = *cap;
    if (c > small) { /* on the heap already */
        if (array_reserve(p, &c, need, 0, size) < 0)
            return ERR_NOMEM;
    } else {
        for (c = c ? c : small; c < need;)
            c *= 2;
        void *q = c <= small ? arena_alloc(&d->arena, c * size) : malloc(c * size);
        if (q == NULL)
            return ERR_NOMEM;
        if (*cap)
            memcpy(q, *p, *cap * size);
        *p = q;
    }
    *cap = (uint32_t)c;
    return 0;
}

int eng_bdict_posting_room(struct eng_bdict *d, struct eng_bterm *t, size_t data_need)
{
    if (array_room(d, (void **)&t->pst, &t->cap, (size_t)t->n + 1, sizeof *t->pst, SMALL_POSTINGS) <
        0)
        return ERR_NOMEM;
    return data_need ? array_room(d, (void **)&t->data, &t->dcap, data_need, 1, SMALL_DATA) : 0;
}

void eng_bdict_term_release(struct eng_bterm *t)
{
    if (t->cap > SMALL_POSTINGS)
        free(t->pst);
    if (t->dcap > SMALL_DATA)
        free(t->data);
    memset(t, 0, sizeof *t);
}

void eng_bdict_clear(struct eng_bdict *d)
{
    for (size_t i = 0; i < d->n; i++)
        eng_bdict_term_release(&d->terms[i]);
    arena_release(&d->arena);
    d->n = 0;
    free(d->hash);
    d->hash = NULL;
    d->hcap = 0;
}

void eng_bdict_free(struct eng_bdict *d)
{
    eng_bdict_clear(d);
    free(d->terms);
    d->terms = NULL;
    d->cap = 0;
}
