/* Residuals (index/plan.h resid, docs/engine.md "Residuals"): beside a
 * word that has a "~stem" beside some of its occurrences, the term word NUL
 * (right after the word in byte order: NUL is in no token) holding, per
 * field, the word's occurrences with no stem beside them. A search of the
 * word in every stemmed language that scores nothing reads the stems and
 * the residual in place of the word's own list (iter.c): `people` and
 * `~peopl` are about as long, the residual of `people` holds its Russian,
 * Hebrew and Chinese documents. A segment flags the word ENG_TERM_RESID
 * where it keeps the residual (absent: empty), ENG_TERM_BARE where no
 * occurrence has a stem (the word is its own residual, none is written);
 * a word with neither is read as itself. segbuild.c makes them, merge.c
 * merges them. Private to the engine. */
#ifndef NEWSD_INDEX_ENGINE_RESID_H
#define NEWSD_INDEX_ENGINE_RESID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "index/engine/internal.h"

/* A segment keeps a word's residual when it holds at most half the word's
 * documents, or the word is in fewer than this many: a residual as long as
 * its word saves nothing and costs its bytes, but a small segment (a few
 * fresh articles) that left one out would take the flag from every segment
 * it is merged into. */
#define ENG_RESID_MIN_DF 64

/* Whether a segment keeps the residual of a word in df documents, the
 * residual in resid_df of them (min_df: ENG_RESID_MIN_DF, but in tests). */
static inline bool eng_resid_kept(uint32_t min_df, uint64_t df, uint64_t resid_df)
{
    return df < min_df || 2 * resid_df <= df;
}

/* Whether term str[0, len) is the residual of word w[0, wlen). */
static inline bool eng_resid_of(const char *str, size_t len, const char *w, size_t wlen)
{
    return len == wlen + 1 && str[wlen] == '\0' && memcmp(str, w, wlen) == 0;
}

/* Which words' residuals a segment being built keeps: a word none of whose
 * occurrences had a stem beside it is flagged ENG_TERM_BARE (it is its own
 * residual); one whose residual is worth it ENG_TERM_RESID, its residual
 * given the word's postings from before its first stem (segbuild.c); the
 * other residuals are left out (resid1 ENG_RESID_NONE; eng_resid_kept with
 * min_df). 0 or ERR_NOMEM. */
struct eng_bdict;
int eng_resid_settle(struct eng_bdict *d, uint32_t min_df);

#endif
