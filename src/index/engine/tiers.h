/* Tiers: the postings of a frequent term that can hold its best bm25
 * terms, kept beside its docid-ordered list (docs/engine.md "Tiers").
 *
 * A relevancy page over a word of 300,000 matches read every match's
 * frequency to bound it (rank.c), whatever the page's size: 13-21 ms at
 * 10 M, where block maxima did not help (nearly every block of a common
 * word holds a short article with the word in its title). A term of
 * tier_min_df documents or more in a segment keeps its tier: the
 * eng_tier_size(df) postings of the largest bm25 term at the segment's
 * average length (each one's docid and weighted frequency), and the rest's
 * front: pairs (wf2, dl) such that every posting outside the tier has a
 * wf2 at most and a length at least those of one pair. bm25 grows with wf2
 * and shrinks with the length whatever the average length a search uses,
 * so the front bounds the rest's scores exactly at search time: when the
 * page's worst score from the tiers' candidates is above the sum of the
 * rests' bounds, no other match can enter and the page is exact without
 * reading the list (tierpage.c eng_rank_tiers). Private to the engine. */
#ifndef NEWSD_INDEX_ENGINE_TIERS_H
#define NEWSD_INDEX_ENGINE_TIERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/engine/internal.h"

#define ENG_TIER_MAX 1024    /* postings of a tier */
#define ENG_TIER_SHARE 16    /* a tier holds one posting of its list in this many */
#define ENG_TIER_FRONT 32    /* pairs of a front (wf2 in half-octaves) */
#define ENG_TIER_MIN_DF 8192 /* the default tier_min_df (docs/performance.md) */

/* The postings of the tier of a term of df documents: 0 when it has none
 * (tier_min_df 0: no term has one). A sixteenth of the list at most, so
 * that reading the tier saves the walk most of it (rank.c TIER_READ_RATIO). */
static inline uint32_t eng_tier_size(uint32_t df, uint32_t tier_min_df)
{
    if (tier_min_df == 0 || df < tier_min_df || df < 2)
        return 0;
    uint32_t t = df / ENG_TIER_SHARE;
    return t < 1 ? 1 : t < ENG_TIER_MAX ? t : ENG_TIER_MAX;
}

/* A tier decoded: its docids ascending with their wf2, and the rest's front. */
struct eng_tier {
    uint32_t n, nfront;
    uint32_t doc[ENG_TIER_MAX], wf2[ENG_TIER_MAX];
    uint32_t front_wf2[ENG_TIER_FRONT], front_dl[ENG_TIER_FRONT];
};

/* Whether a term of this kind (eng_kind) may have a tier: the words and
 * stems relevancy scores as terms (a pair is scored as a phrase). */
static inline bool eng_tier_kind(unsigned kind)
{
    return kind == ENG_TERM_EXACT || kind == ENG_TERM_STEM;
}

/* Room for the bytes of a tier of size postings. */
static inline size_t eng_tier_encode_max(uint32_t size)
{
    return 5 * (2 + 2 * (size_t)ENG_TIER_FRONT + 2 * (size_t)size);
}

/* The tier of size postings (0 < size < n) of a list of n in docid order
 * (posting i's docid in the high 32 bits of keys[i], as the encoder sorts
 * them; its wf2 wf2[i]; dl by docid) at average length avgdl into out
 * (room for eng_tier_encode_max(size)), its length into *len. 0 or
 * ERR_NOMEM. */
int eng_tier_encode(uint8_t *out, size_t *len, const uint64_t *keys, const uint32_t *wf2,
                    uint32_t n, const uint32_t *dl, double avgdl, uint32_t size);

/* Term t's tier (ENG_TERM_TIERED: tier_bytes after its postings in s) into
 * *out: 0, or ERR_PARSE when it does not decode inside its bytes with
 * docids ascending below s->n, at most t->df of them. */
int eng_tier_read(const struct eng_segment *s, const struct eng_term *t, struct eng_tier *out);

/* The check of a tier against its list (segcheck.c): eng_tier_check_posting
 * for each posting in docid order, false at the first that disagrees
 * (a tier docid absent or of another wf2; a posting outside the tier above
 * every pair of the front); eng_tier_check_end whether every tier docid
 * was met. */
struct eng_tier_check {
    struct eng_tier t;
    uint32_t next;
};
bool eng_tier_check_posting(struct eng_tier_check *c, uint32_t doc, uint32_t wf2, uint32_t dl);
bool eng_tier_check_end(const struct eng_tier_check *c);

#endif
