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
#include "util/arena.h"

struct eng_bslot {
    uint32_t idx1;    /* term number + 1; 0: empty */
    uint32_t len_tag; /* hash tag << 8 | min(len, 255) */
    uint64_t pre;     /* first 8 bytes, zero padded */
};

/* A zeroed eng_bdict is an empty one. */
struct eng_bdict {
    struct eng_bterm *terms; /* numbered as first seen */
    size_t n, cap;
    struct eng_bslot *hash;
    size_t hcap;
    /* The terms' strings and their first (small) postings and data arrays:
     * most terms of a segment occur in one or two documents, and their three
     * malloc()s and free()s were about 7 % of a first build (perf, 1 M). */
    struct arena arena;
};

/* The number of term s[0..n) (hv: hash_bytes64 of it), added with kind when
 * new. The terms may move. 0 or ERR_NOMEM. */
int eng_bdict_find(struct eng_bdict *d, const char *s, size_t n, uint64_t hv, uint8_t kind,
                   uint32_t *out);

/* Room for a term string of n bytes, d's until it is cleared; NULL when
 * out of memory. */
char *eng_bdict_string_room(struct eng_bdict *d, size_t n);

/* Add term s[0..n) (from eng_bdict_string_room), known to be new, as
 * number d->n without a slot: the pairs (segbuild.c) are numbered by their
 * own table and never looked up here. 0 or ERR_NOMEM. */
int eng_bdict_append(struct eng_bdict *d, char *s, size_t n, uint8_t kind);

/* Room in term t for one more posting and for its data to reach data_need
 * bytes (0: the term keeps no data). 0 or ERR_NOMEM. */
int eng_bdict_posting_room(struct eng_bdict *d, struct eng_bterm *t, size_t data_need);

/* Ask for the slot where a term of hash hv is looked up. */
static inline void eng_bdict_prefetch(const struct eng_bdict *d, uint64_t hv)
{
    if (d->hcap)
        __builtin_prefetch(&d->hash[hv & (d->hcap - 1)]);
}

/* Every term number in the order of the strings (bytewise, a prefix first)
 * into order[0..d->n). 0 or ERR_NOMEM. */
int eng_bdict_sorted(const struct eng_bdict *d, uint32_t *order);

/* A term's arrays are in d's arena while their room is at most this small
 * (bdict.c); arrays with more room are on the heap, and t's own. */
#define ENG_BDICT_SMALL_POSTINGS 2
#define ENG_BDICT_SMALL_DATA 32

/* Free what term t holds outside d's arena (its string and small arrays
 * stay until d is cleared), and empty it. */
void eng_bdict_term_release(struct eng_bterm *t);

/* Empty d: every term released, the hash freed (the terms' array is kept
 * for the next segment). */
void eng_bdict_clear(struct eng_bdict *d);

/* Free all of d. */
void eng_bdict_free(struct eng_bdict *d);

#endif
