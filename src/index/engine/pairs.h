/* Pairs, a next-word index (docs/engine.md "Pairs"): a segment holds, for
 * every two exact terms a and b it marks ENG_TERM_PAIRED, the term
 * ENG_PAIR_MARK a ENG_PAIR_SEP b whose postings are where b follows a at
 * the next position of one field, its tf per field the instances of the
 * phrase "a b" there as the phrase matcher counts them (ENG_POS_MAX
 * included). A phrase of two paired words is then that list, no position
 * read; a longer one is driven by its rarest pair. A term is paired where
 * it is frequent (eng_pair_min_df): the phrases whose positional check
 * costs are those of frequent words. 0xFF begins no UTF-8 token and 0x1F
 * is in no token, so pair terms sort after every paired word and are no
 * token. Private to the engine (internal.h includes it). */
#ifndef NEWSD_INDEX_ENGINE_PAIRS_H
#define NEWSD_INDEX_ENGINE_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A term's kind: the enum (internal.h) in the low bits, and for an exact
 * term that is paired, ENG_TERM_PAIRED; for a term with a tier (tiers.h),
 * ENG_TERM_TIERED; for an exact term whose residual the segment keeps
 * (resid.h: the term word NUL after it, absent when empty), ENG_TERM_RESID;
 * for one no occurrence of which has a stem beside it (its residual is
 * itself), ENG_TERM_BARE. */
#define ENG_TERM_KIND_MASK 0x0fu
#define ENG_TERM_BARE 0x10u
#define ENG_TERM_RESID 0x20u
#define ENG_TERM_TIERED 0x40u
#define ENG_TERM_PAIRED 0x80u
static inline unsigned eng_kind(unsigned kind)
{
    return kind & ENG_TERM_KIND_MASK;
}

#define ENG_PAIR_MARK '\xFF'
#define ENG_PAIR_SEP '\x1F'
#define ENG_PAIR_RATIO 64 /* a paired term is in one document of 256 or more */

/* The fewest documents a term of a segment of n documents is paired in. */
static inline uint32_t eng_pair_min_df(uint32_t n)
{
    return n / ENG_PAIR_RATIO > 1 ? n / ENG_PAIR_RATIO : 1;
}

/* A word that may be paired: not empty, not beginning with the mark (an
 * invalid UTF-8 token would otherwise sort among the pairs). */
static inline int eng_pair_word(const char *s, size_t len)
{
    return len > 0 && s[0] != ENG_PAIR_MARK;
}

/* The pair term of a and b into out (room for alen + blen + 2); its length. */
static inline size_t eng_pair_str(char *out, const char *a, size_t alen, const char *b, size_t blen)
{
    out[0] = ENG_PAIR_MARK;
    memcpy(out + 1, a, alen);
    out[1 + alen] = ENG_PAIR_SEP;
    memcpy(out + 2 + alen, b, blen);
    return alen + blen + 2;
}

/* The two words of pair term str[0, len) into *a, *alen, *b, *blen; false
 * when it is not one (a damaged file). */
static inline bool eng_pair_words(const char *str, size_t len, const char **a, size_t *alen,
                                  const char **b, size_t *blen)
{
    const char *sep =
        len >= 4 && str[0] == ENG_PAIR_MARK ? memchr(str + 1, ENG_PAIR_SEP, len - 1) : NULL;
    if (sep == NULL)
        return false;
    *a = str + 1;
    *alen = (size_t)(sep - str - 1);
    *b = sep + 1;
    *blen = (size_t)(str + len - sep - 1);
    return true;
}

/* Whether the term str a merge wrote before is paired (segment.c). */
struct eng_segw;
bool eng_segw_paired(const struct eng_segw *w, const char *str, size_t len);

#endif
