/* The string table of util/strtab.h. */
#include "util/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/banned.h"

void strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
}

void strtab_release(struct strtab *t)
{
    free(t->slots);
    free(t->off);
    free(t->len);
    free(t->hash);
    free(t->bytes);
    memset(t, 0, sizeof *t);
}

static size_t slot_of(const struct strtab *t, const char *s, size_t len, uint64_t h)
{
    size_t mask = t->nslots - 1, j = h & mask;
    while (t->slots[j]) {
        size_t k = t->slots[j] - 1;
        if (t->hash[k] == h && t->len[k] == len && memcmp(t->bytes + t->off[k], s, len) == 0)
            break;
        j = (j + 1) & mask;
    }
    return j;
}

int64_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
    if (t->n == 0)
        return -1;
    size_t j = slot_of(t, s, len, hash_bytes64(s, len));
    return t->slots[j] ? (int64_t)t->slots[j] - 1 : -1;
}

static int rehash(struct strtab *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (slots == NULL)
        return ERR_NOMEM;
    for (size_t k = 0; k < t->n; k++) {
        size_t j = t->hash[k] & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = (uint32_t)k + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

static int grow(struct strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 32;
    size_t *off = realloc(t->off, cap * sizeof *off);
    if (off == NULL)
        return ERR_NOMEM;
    t->off = off;
    uint32_t *len = realloc(t->len, cap * sizeof *len);
    if (len == NULL)
        return ERR_NOMEM;
    t->len = len;
    uint64_t *hash = realloc(t->hash, cap * sizeof *hash);
    if (hash == NULL)
        return ERR_NOMEM;
    t->hash = hash;
    t->cap = cap;
    return 0;
}

int strtab_add(struct strtab *t, const char *s, size_t len, size_t *num, int *added)
{
    uint64_t h = hash_bytes64(s, len);
    *added = 0;
    if (len > UINT32_MAX || t->n >= UINT32_MAX - 1)
        return ERR_NOMEM;
    if ((t->n + 1) * 2 > t->nslots && rehash(t) < 0)
        return ERR_NOMEM;
    size_t j = slot_of(t, s, len, h);
    if (t->slots[j]) {
        *num = t->slots[j] - 1;
        return 0;
    }
    if (t->n == t->cap && grow(t) < 0)
        return ERR_NOMEM;
    size_t at = t->blen;
    if (array_reserve(&t->bytes, &t->bcap, at, len + 1, 1) < 0)
        return ERR_NOMEM;
    memcpy(t->bytes + at, s, len);
    t->bytes[at + len] = '\0';
    t->blen = at + len + 1;
    t->off[t->n] = at;
    t->len[t->n] = (uint32_t)len;
    t->hash[t->n] = h;
    t->slots[j] = (uint32_t)t->n + 1;
    *num = t->n++;
    *added = 1;
    return 0;
}

const char *strtab_str(const struct strtab *t, size_t num)
{
    return t->bytes + t->off[num];
}

size_t strtab_len(const struct strtab *t, size_t num)
{
    return t->len[num];
}
