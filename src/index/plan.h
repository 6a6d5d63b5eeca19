/* Private to src/index/ (the engine, and index/match.c, which evaluates
 * the same plan over one article so that its answers are the engine's by
 * construction): a request as a segment-independent tree
 * (plan.c) with the semantics of the FTS5 MATCH expression that
 * index/fts5/match.c writes for it — the same terms, the same column
 * restrictions, the same errors — and the list of its scored leaves in the
 * order FTS5 numbers its phrases (bm25 sums over them in that order). */
#ifndef NEWSD_INDEX_PLAN_H
#define NEWSD_INDEX_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "index/index.h"
#include "query/query.h"
#include "util/arena.h"
#include "util/err.h"

#define PLAN_FIELDS 3         /* text fields: title, description, content */
#define PLAN_META_MARK '\x1E' /* first byte of a meta term (a filter) */

enum plan_kind {
    PLAN_TERM,   /* one term (text: restricted to colset) */
    PLAN_PHRASE, /* ≥ 2 exact terms at consecutive positions of one field in colset */
    PLAN_AND,
    PLAN_OR,
    PLAN_ANDNOT, /* kids[0] and not kids[1] */
    PLAN_NEAR,   /* ≥ 2 distinct exact terms in one window of one field in colset (near.h) */
};

struct plan {
    enum plan_kind kind;
    unsigned colset;   /* enum index_field mask; 0 for meta terms */
    size_t n;          /* TERM 1, PHRASE/NEAR tokens */
    unsigned distance; /* NEAR: other tokens allowed in the window */
    const char **terms;
    size_t *lens;
    struct plan **kids;
    size_t nkids;
    int leaf;    /* index among the scored leaves, -1 */
    bool prefix; /* TERM: word* as the saved-search matcher tests it (index/match.c); the
                  * backends never see one (index/prefix.c expands it first) */
    /* OR: a plain word's forms (index/expand.h) where kids[0], the word itself,
     * adds no match inside the request's language filter: that language stems
     * the word to another string s, and its documents hold "~s" (a form too)
     * beside every occurrence of it (text_fts5_token_stem). A search that
     * scores no leaf leaves kids[0] out (index/engine/iter.c). */
    bool stems_cover;
    /* OR: a plain word's forms in every stemmed language (no language
     * filter, or one without a stemmer): its residual, the term word NUL
     * (NUL is in no token: it sorts right after the word), which holds, per field, the word's
     * occurrences without a "~stem" beside them (every other occurrence has one, and that stem is
     * one of the forms). Where a segment keeps it (the word's entry flagged ENG_TERM_RESID,
     * docs/engine.md "Residuals"), a search that scores no leaf reads it in place of kids[0], the
     * word's own list: `people` and `~peopl` are about as long, the residual of `people` holds its
     * Russian, Hebrew and Chinese documents (index/engine/iter.c). NULL: none. */
    struct plan *resid;
};

struct plan_tree {
    struct plan *root;
    struct plan **leaves; /* TERM/PHRASE/NEAR of q and qInTitle outside exclusions */
    size_t nleaves;
    bool has_prefix; /* a TERM is a prefix: for the matcher only */
};

/* The meta term kind (store/meta.h) of a META node's field: source,
 * domain or author. */
char index_plan_meta_kind(enum query_field field);

/* Build the plan of req (arena-owned). ERR_INVALID / ERR_TOO_LARGE /
 * ERR_NOMEM as index_fts5_match_build. */
int index_plan_build(struct plan_tree *out, struct arena *a, const struct index_request *req,
                     struct err *err);

/* p's fingerprint for the count cache: kinds, column sets and term bytes
 * in tree order with every length explicit, so two plans share one only
 * when they are the same tree (and so match the same documents). In the
 * arena, its length in *len; NULL when out of memory (no caching then). */
const char *index_plan_key(struct arena *a, const struct plan *p, size_t *len);

#endif
