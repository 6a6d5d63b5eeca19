/* Relevancy's page from the frequent terms' tiers (tiers.h, docs/engine.md
 * "Tiers"): eng_rank_tiers, which the set evaluator (sets.c) tries on a
 * plain plan's window before the term-at-a-time page (rank.c). */
#include "index/engine/search.h"

#include "index/engine/heads.h"
#include "index/engine/tiers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/sort.h"
#include "util/banned.h"

/* The largest bm25 term any posting outside tier t can give leaf i: its
 * front's pairs, each a wf2 at least and a length at most some posting's. */
static double tier_rest(const struct run *r, size_t i, const struct eng_tier *t)
{
    double best = 0.0;
    for (uint32_t k = 0; k < t->nfront; k++) {
        double x = eng_bm25_term(r, r->idf[i], t->front_wf2[k] * 0.5, t->front_dl[k]);
        best = x > best ? x : best;
    }
    return best;
}

/* The k-th largest of the heap's keys and x[0, n): -inf when there are
 * fewer than k. (qsort of the heap's keys and 10,000 candidates was half
 * the time of an OR's tier page: a selection instead.) */
static double kth_key(const struct run *r, const double *x, uint32_t n)
{
    size_t k = r->heap.k, all_n = r->heap.n + n;
    if (all_n < k || k == 0)
        return -INFINITY;
    double *all = malloc(all_n * sizeof *all);
    if (all == NULL)
        return -INFINITY; /* (undecided: the walk needs no memory) */
    for (size_t i = 0; i < r->heap.n; i++)
        all[i] = r->heap.v[i].key;
    memcpy(all + r->heap.n, x, n * sizeof *x);
    double kth = sort_kth_largest(all, all_n, k);
    free(all);
    return kth;
}

/* What the tier page reads of a scored leaf in the window: the docids
 * (ascending) and wf2 of its tier's matches, or of all its matches when
 * whole (a list under tier_min_df, read through: rest 0). */
struct tier_leaf {
    uint32_t *doc, *wf2;
    uint32_t n, at;
    uint32_t in_window; /* its tier's postings in the window, matches or not */
    bool whole;
    double rest; /* above its bm25 term at any match outside doc[] */
};

#define TIER_LEAVES 24       /* a word's forms in every stemmed language, and more */
#define TIER_WHOLE_MAX 16384 /* postings of the untiered lists read through */
#define TIER_READ_RATIO 8    /* the walk's postings a candidate must save, at least */
#define TIER_KEPT_RATIO 4    /* the tiers' postings in the window a match of them may stand for */
#define TIER_UNKNOWN UINT32_MAX

/* Leaf i's tier for the tier page into *l (its matches in the window);
 * a leaf absent here is whole and empty. 1 when it has none that pays: a
 * phrase, a column filter. */
static int tier_leaf(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v,
                     uint32_t nm, size_t i, struct tier_leaf *l)
{
    const struct node *n = ev2->leaf_nodes[i];
    *l = (struct tier_leaf){.whole = true};
    if (n == NULL)
        return 0; /* absent here: adds nothing */
    const struct eng_term *t = n->cur[0].t;
    if (n->kind != PLAN_TERM || n->filter)
        return 1;
    if (!(t->kind & ENG_TERM_TIERED))
        return 0; /* read through by tier_whole, when it pays */
    /* (as the check of the tiers' postings kept below, before reading them:
     * when the matches are few beside the list, so are its tier's) */
    if ((uint64_t)nm * TIER_KEPT_RATIO < eng_sets_window_df(b, t->df))
        return 1;
    struct eng_tier *tier = arena_alloc(ev2->a, sizeof *tier);
    if (tier == NULL)
        return ERR_NOMEM;
    if (eng_tier_read(ev2->seg, t, tier) < 0)
        return ERR_PARSE; /* (a file's tier is checked when its term is opened) */
    l->whole = false;
    l->rest = tier_rest(r, i, tier);
    l->doc = tier->doc;
    l->wf2 = tier->wf2;
    for (uint32_t j = 0; j < tier->n; j++) { /* its matches in the window */
        uint32_t d = tier->doc[j];
        if (d < b->lo || d >= b->hi)
            continue;
        l->in_window++;
        if (bits_get(v, d - b->base)) {
            l->doc[l->n] = d;
            l->wf2[l->n++] = tier->wf2[j];
        }
    }
    return 0;
}

/* Untiered term leaf t's matches in the window, all of them, into *l. */
static int tier_whole(struct ev *ev2, const struct sets *b, const uint64_t *v,
                      const struct eng_term *t, struct tier_leaf *l)
{
    l->doc = arena_alloc(ev2->a, (size_t)t->df * sizeof *l->doc);
    l->wf2 = arena_alloc(ev2->a, (size_t)t->df * sizeof *l->wf2);
    if (l->doc == NULL || l->wf2 == NULL)
        return ERR_NOMEM;
    uint32_t ids[ENG_BLOCK], wf2[ENG_BLOCK];
    for (uint32_t k = 0; k < eng_term_nblocks(t); k++) {
        uint32_t np = eng_postings_block(ev2->seg, t, k, b->lo, b->hi, v, b->base, ids, wf2);
        memcpy(l->doc + l->n, ids, np * sizeof *ids);
        memcpy(l->wf2 + l->n, wf2, np * sizeof *wf2);
        l->n += np;
    }
    return 0;
}

/* The relevancy page of the window from its leaves' tiers (tiers.h).
 * Every scored leaf present is a term read in all its columns, with a tier
 * or a list small enough to read through. The candidates are the matches
 * in some tier or small list; each has a score at least lo (its known
 * leaves' terms) and at most hi (the unknown ones at their rest bound):
 * those whose hi is below the k-th largest lo cannot enter, the others
 * outside a leaf's tier have it sought (a fresh instance: the caller's
 * cursors stay where they are). Every other match scores at most the sum
 * of the leaves' rests (bound): when the page's worst with the candidates
 * is above it (strictly: an equal score could enter by its id), the
 * candidates are the page. 0: the window's page is done; 1: not decided,
 * nothing offered (the caller walks every match); else an error. The
 * profile of a common word's relevancy page at 10 M (332,719 matches): 83 %
 * the weighed page, which reads every match's frequency. */
int eng_rank_tiers(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v,
                   uint32_t nm)
{
    const struct eng_segment *seg = ev2->seg;
    size_t nl = r->plan.nleaves;
    if (r->snap->score_all || r->heap.k == 0 || nl == 0 || nl > TIER_LEAVES)
        return 1;
    struct tier_leaf *l = arena_calloc(ev2->a, nl, sizeof *l);
    if (l == NULL)
        return ERR_NOMEM;
    size_t ncand_max = 0, whole = 0, in_window = 0;
    uint64_t postings = 0; /* the leaves' in the window, as the walk reads them */
    bool tiered = false;
    for (size_t i = 0; i < nl; i++) { /* the tiers first: the other lists only when they pay */
        int rc = tier_leaf(r, ev2, b, v, nm, i, &l[i]);
        if (rc != 0)
            return rc;
        const struct node *n = ev2->leaf_nodes[i];
        if (n)
            postings += eng_sets_window_df(b, n->cur[0].t->df);
        if (n && l[i].whole)
            whole += n->cur[0].t->df;
        ncand_max += l[i].n;
        in_window += l[i].in_window;
        tiered |= !l[i].whole;
    }
    /* The walk reads the leaves' postings at ~2 ns each; the tiers and the
     * lists read through cost a candidate each, its terms summed (an OR of
     * a common word and a middling one, "football OR cricket" at 1 M, read
     * through a third of its postings: 1.25 times the walk's time). And a
     * tier holds the best postings of the whole segment: when the matches
     * keep few of them (an AND of two words, a filter), the page's best are
     * mostly elsewhere and the rest's bound is not met (the nested and AND
     * shapes at 10 M: 1.15-1.2 times the walk's time when tried). */
    if (!tiered || whole > TIER_WHOLE_MAX || (ncand_max + whole) * TIER_READ_RATIO > postings ||
        ncand_max * TIER_KEPT_RATIO < in_window || ncand_max + whole + r->heap.n < r->heap.k)
        return 1;
    for (size_t i = 0; i < nl; i++) {
        const struct node *n = ev2->leaf_nodes[i];
        if (n && l[i].whole) {
            int rc = tier_whole(ev2, b, v, n->cur[0].t, &l[i]);
            if (rc < 0)
                return rc;
            ncand_max += l[i].n;
        }
    }
    if (ncand_max + r->heap.n < r->heap.k)
        return 1;
    double bound = 0.0; /* in eng_bm25_sum's order: each term at least the leaf's */
    for (size_t i = 0; i < nl; i++)
        bound += l[i].rest;

    /* the candidates in docid order, once each: lo, hi and each leaf's
     * wf2 where known (TIER_UNKNOWN: outside its tier) */
    uint32_t *cd = malloc(ncand_max * sizeof *cd);
    uint32_t *cw = malloc(ncand_max * nl * sizeof *cw);
    double *lo = malloc(ncand_max * sizeof *lo), *hi = malloc(ncand_max * sizeof *hi);
    struct ev ev3 = *ev2;
    uint32_t nc = 0;
    int rc = 0;
    if (cd == NULL || cw == NULL || lo == NULL || hi == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    uint64_t unknown = 0;
    for (;;) {
        uint32_t d = ENG_END;
        for (size_t i = 0; i < nl; i++)
            if (l[i].at < l[i].n && l[i].doc[l[i].at] < d)
                d = l[i].doc[l[i].at];
        if (d == ENG_END)
            break;
        uint32_t *w = cw + (size_t)nc * nl;
        for (size_t i = 0; i < nl; i++) {
            w[i] = l[i].at < l[i].n && l[i].doc[l[i].at] == d ? l[i].wf2[l[i].at++]
                   : l[i].whole                               ? 0
                                                              : TIER_UNKNOWN;
            unknown += w[i] == TIER_UNKNOWN;
        }
        cd[nc++] = d;
    }
    /* a seek (~80 ns) costs what the walk's read of ENG_WEIGH_RATIO
     * postings does: when the candidates would seek more, the walk pays.
     * Known before any length is read: the bounds below drop few of them
     * (a word whose forms' tiers share few documents, "year" at 10 M: its
     * 2,040 candidates a window all sought, and the page still not
     * decided; 1.2 times the walk's time when they were bounded first). */
    if (unknown * ENG_WEIGH_RATIO > postings) {
        rc = 1;
        goto out;
    }
    for (uint32_t j = 0; j < nc; j++) {
        if (j + 8 < nc)
            __builtin_prefetch(&seg->dl[cd[j + 8]]);
        double D = (double)seg->dl[cd[j]], x = 0.0, y = 0.0;
        const uint32_t *w = cw + (size_t)j * nl;
        for (size_t i = 0; i < nl; i++) {
            /* (as eng_bm25_sum: a term of +0.0 skipped changes no sum) */
            double term =
                w[i] != TIER_UNKNOWN && w[i] ? eng_bm25_term(r, r->idf[i], w[i] * 0.5, D) : 0.0;
            x += term;
            y += w[i] == TIER_UNKNOWN ? l[i].rest : term;
        }
        lo[j] = x;
        hi[j] = y;
    }
    /* the page's worst will be between these */
    if (kth_key(r, hi, nc) <= bound) {
        rc = 1;
        goto out;
    }
    double least = kth_key(r, lo, nc);
    uint32_t kept = 0;
    for (uint32_t j = 0; j < nc && rc == 0; j++) {
        if (hi[j] < least)
            continue; /* below the page's worst whatever its unknown terms */
        const uint32_t *w = cw + (size_t)j * nl;
        uint32_t d = cd[j];
        bool known = true;
        for (size_t i = 0; i < nl; i++)
            known &= w[i] != TIER_UNKNOWN;
        if (!known) {
            if (ev3.leaf_nodes == NULL) {
                ev3.leaf_nodes = arena_calloc(ev2->a, nl + 1, sizeof *ev3.leaf_nodes);
                if (ev3.leaf_nodes == NULL || (eng_iter_new(&ev3, r->plan.root), ev3.nomem)) {
                    rc = ERR_NOMEM;
                    break;
                }
            }
            for (size_t i = 0; i < nl; i++) {
                struct node *n = ev3.leaf_nodes[i];
                if (w[i] != TIER_UNKNOWN) {
                    r->freq[i] = w[i] * 0.5;
                    continue;
                }
                n->started = true; /* outside this leaf's tier: its frequency sought */
                n->doc = eng_cursor_seek(&n->cur[0], d);
                r->freq[i] = eng_iter_leaf_freq(&ev3, n, d);
            }
            lo[j] = eng_bm25_sum(r, r->freq, (double)seg->dl[d]); /* fts5Bm25Function() */
        }
        cd[kept] = d;
        lo[kept++] = lo[j]; /* exact now */
    }
    if (rc == 0 && kth_key(r, lo, kept) <= bound)
        rc = 1;
    for (uint32_t j = 0; rc == 0 && j < kept; j++) {
        if (heap_may_take(&r->heap, lo[j]))
            heap_offer(r, (struct cand){lo[j], seg->ids[cd[j]], {ev2->si, cd[j]}});
    }
out:
    free(cd);
    free(cw);
    free(lo);
    free(hi);
    return rc;
}
