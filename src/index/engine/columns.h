/* A segment's per-document columns that are not in its file: built in
 * memory the first time a search asks for them (facets.c: a value number
 * per docid and facet; stories.c: each docid's story), kept with the
 * segment and freed with it (snapshot.c). Their memory is here, below
 * the snapshot that frees them; what fills them is above, with the
 * searches that read them. */
#ifndef NEWSD_INDEX_ENGINE_COLUMNS_H
#define NEWSD_INDEX_ENGINE_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>

#include "index/index.h"
#include "util/strtab.h"

#define ENG_FACET_NO_VALUE UINT32_MAX

/* Values whose documents a narrowing ANDs as a bitset, per column (one bit
 * a document each: bounded, so no run of filters can grow it without end). */
#define ENG_FACET_VALUE_SETS 8

struct eng_facet_col {
    uint32_t *v;        /* per docid: the value's number in vals, ENG_FACET_NO_VALUE */
    struct strtab vals; /* the segment's values of this facet */
    /* set[i]: the docids holding value set_value[i], for i < nset (the
     * value first, then the set, then nset: readers take nset first) */
    _Atomic uint32_t nset;
    uint32_t set_value[ENG_FACET_VALUE_SETS];
    uint64_t *set[ENG_FACET_VALUE_SETS];
};

/* A segment's docids by interned source: source k's are docs[off[k],
 * off[k + 1]) ascending, for k < nsrc (ENG_NO_SOURCE's left out). */
struct eng_source_docs {
    uint32_t nsrc;
    uint32_t *off, *docs;
};

struct eng_facet_cols {
    _Atomic(struct eng_facet_col *) col[INDEX_FACET_N];
    _Atomic(struct eng_source_docs *) by_source;
    _Atomic(uint8_t *) norm; /* per docid: eng_norm_of(dl[docid]) */
    unsigned building;       /* the columns a thread is making (facet_cols.c's build_lock) */
};

/* A document's length in a byte, rounded down: exact below 128, then
 * four bits of mantissa (steps of 3-6 %), 31,744 for any length above.
 * What relevancy bounds a match by before it reads dl[d]: one byte a
 * document is four times as many documents a cache line as dl's four
 * (Lucene and tantivy keep only such a byte; FTS5's scores need the
 * exact length, so it stays, read only for matches the byte lets by). */
static inline uint8_t eng_norm_of(uint32_t dl)
{
    if (dl < 128)
        return (uint8_t)dl;
    unsigned e = 31u - (unsigned)__builtin_clz(dl) - 4; /* dl >> e in [16, 32) */
    if (e > 10)
        return 255;
    return (uint8_t)(((e + 5) << 4) + (dl >> e) - 16);
}

/* The least length of norm c: at most every length it was made of. */
static inline uint32_t eng_norm_length(uint8_t c)
{
    return c < 128 ? c : (16u + (c & 15u)) << ((c >> 4) - 5);
}

struct eng_segment;
struct eng_term;

/* Facet f's column of s, built the first time it is asked (facet_cols.c;
 * the author's from the document store). */
int eng_facet_column(struct eng_segment *s, enum index_facet f, const struct eng_facet_col **out);

/* The facet column of meta term t of s and the number of t's value in it,
 * when t is a language or source term (one value per document: the
 * column holds t's value exactly where t's postings are): 1 with *col and
 * *want set, 0 when not, ERR_NOMEM. */
int eng_facet_term_column(struct eng_segment *s, const struct eng_term *t, const uint32_t **col,
                          uint32_t *want);

/* Narrows the candidates in v (bit d - base, nw words) by meta term t of
 * s through its facet column: keeps those with t's value (neg: those
 * without). 1 when done, 0 when t is not a language or source term (or a
 * value the column lacks), ERR_NOMEM. */
int eng_facet_column_narrow(struct eng_segment *s, const struct eng_term *t, uint64_t *v,
                            uint32_t base, uint32_t nw, bool neg);

/* s's docids by source, built the first time it is asked (facet_cols.c:
 * a counting sort of the source column). 0 or ERR_NOMEM. */
int eng_source_docs(struct eng_segment *s, const struct eng_source_docs **out);

/* s's length norms (eng_norm_of), built the first time they are asked
 * (facet_cols.c). 0 or ERR_NOMEM. */
int eng_length_norms(struct eng_segment *s, const uint8_t **out);

/* One facet column freed (NULL: nothing). */
void eng_facet_col_free(struct eng_facet_col *c);

/* A segment's docids alone in their story (stories.c). A bit is set when
 * no other document of the segment, nor of any segment it was checked
 * against (paired), has the docid's story; bits are only ever cleared
 * after the build, so a search over any snapshot holding the segment may
 * read them while a newer snapshot's segments are checked (a bit cleared
 * by a segment the search does not see only lists one match more). */
struct eng_story_alone {
    _Atomic uint64_t *bits;
    uint32_t *slot;   /* open addressing by story: a docid with it; UINT32_MAX free */
    uint32_t shift;   /* 64 - log2(slots) */
    uint64_t *paired; /* gens of the segments checked against */
    size_t npaired, cap;
};

#endif
