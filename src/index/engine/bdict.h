/* The segment builder's dictionary (segbuild.c): each distinct term string
 * of the documents being built, numbered as first seen, with the postings
 * collected for it (struct eng_bterm, internal.h). Lookups are by an open
 * addressing hash whose slots hold enough of their term (length, 24 bits of
 * hash, first 8 bytes) that most lookups - news words are short - never
 * touch the term itself: building is bound by cache misses on this table,
 * so the builder prefetches a token's slot (eng_bdict_prefetch) well
 * before it looks the token up. */
#ifndef NEWSD_INDEX_ENGINE_BDICT_H
#define NEWSD_INDEX_ENGINE_BDICT_H

#include <stddef.h>
#include <stdint.h>

#include "index/engine/internal.h"

struct eng_bslot {
    uint32_t idx1;    /* term number + 1; 0: empty */
    uint32_t len_tag; /* hash tag << 8 | min(len, 255) */
    uint64_t pre;     /* first 8 bytes, zero padded */
};

struct eng_bdict {
    struct eng_bterm *terms; /* numbered as first seen */
    size_t n, cap;
    struct eng_bslot *hash;
    size_t hcap;
};

/* The number of term s[0..n) (hv: hash_bytes64 of it), added with kind when
 * new. The terms may move. 0 or ERR_NOMEM. */
int eng_bdict_find(struct eng_bdict *d, const char *s, size_t n, uint64_t hv, uint8_t kind,
                   uint32_t *out);

/* Add term s[0..n) (malloc()ed: d owns it from here, failure included),
 * known to be new, as number d->n without a slot: the pairs (segbuild.c)
 * are numbered by their own table and never looked up here. 0 or
 * ERR_NOMEM. */
int eng_bdict_append(struct eng_bdict *d, char *s, size_t n, uint8_t kind);

/* Ask for the slot where a term of hash hv is looked up. */
static inline void eng_bdict_prefetch(const struct eng_bdict *d, uint64_t hv)
{
    if (d->hcap)
        __builtin_prefetch(&d->hash[hv & (d->hcap - 1)]);
}

/* Every term number in the order of the strings (bytewise, a prefix first)
 * into order[0..d->n). 0 or ERR_NOMEM. */
int eng_bdict_sorted(const struct eng_bdict *d, uint32_t *order);

/* Free term t's string and postings, and empty it. */
void eng_bdict_term_release(struct eng_bterm *t);

/* Empty d: every term released, the hash freed (the terms' array is kept
 * for the next segment). */
void eng_bdict_clear(struct eng_bdict *d);

/* Free all of d. */
void eng_bdict_free(struct eng_bdict *d);

#endif
