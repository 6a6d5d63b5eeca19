/* Bounds of a relevancy page whose plan is not plain (rank.c
 * eng_rank_plain): a scored proximity, or a term under an AND below an OR,
 * need not sit on every match its words hold, so the page seeks its plan
 * to each match and scores it there (sets.c sets_page). Before that seek,
 * a match is bounded from its words' weighted frequencies, read a term at
 * a time over the matches (eng_postings_weigh): a term leaf's frequency is
 * at most its term's (equal where the leaf sits on the match, else 0); a
 * proximity's, its windows in each field holding all its words, at most
 * their tfs there less k - 1 (iter.c eng_iter_near_bound: the sweep of
 * near.c counts at most one window a step), so its words' heads are read
 * whole, a field at a time (heads.h), not summed. Those bounds,
 * tabled at the least length floor, then at the match's own length byte,
 * are above the exact score: a match below the page's worst is passed
 * over. The profile of "Premier League"~3 by relevancy at 10 M: seeking
 * its words and reading their frequencies at each of 117,266 matches was
 * half the search. */
#include "index/engine/search.h"

#include <stdlib.h>

#include "index/engine/heads.h"

#include "util/banned.h"

/* Scored leaves at most (a bound's frequencies on the stack). */
#define ENG_BOUND_LEAVES 64

struct eng_rank_bounds {
    uint32_t nm;
    size_t *row;     /* per scored leaf: its first row, rows[leaf] of them */
    size_t *rows;    /* per scored leaf: its words weighed (0: absent here; the table's mask) */
    bool *near;      /* per scored leaf: a proximity (its rows packed heads) */
    uint32_t *wf2;   /* row r at match m (r * nm + m): its word's wf2, or its head packed */
    uint32_t *floor; /* per match: the largest block floor of its words */
    double *table;   /* eng_rank_wf2_table at the least floor */
};

void eng_rank_bounds_free(struct eng_rank_bounds *bd)
{
    if (bd == NULL)
        return;
    free(bd->row);
    free(bd->rows);
    free(bd->near);
    free(bd->wf2);
    free(bd->floor);
    free(bd->table);
    free(bd);
}

/* Words of scored leaf n whose frequencies bound its own; 0 when it has
 * none (a phrase: its frequency is no sum of its words'; a filter's
 * term). A column-restricted term is weighed in its columns. */
static size_t leaf_words(const struct node *n)
{
    if (n->kind == PLAN_TERM && eng_kind(n->cur[0].t->kind) != ENG_TERM_META)
        return 1;
    if (n->kind == PLAN_NEAR && (n->colset & INDEX_FIELD_ALL) == INDEX_FIELD_ALL)
        return n->n;
    return 0;
}

struct eng_rank_bounds *eng_rank_bounds_new(struct run *r, const struct ev *ev2,
                                            const struct sets *b, const uint64_t *v)
{
    const struct eng_segment *seg = ev2->seg;
    size_t nl = r->plan.nleaves, nrow = 0;
    uint32_t *rank = NULL;
    if (r->snap->score_all || nl > ENG_BOUND_LEAVES)
        return NULL;
    struct eng_rank_bounds *bd = calloc(1, sizeof *bd);
    if (bd == NULL || (bd->row = calloc(nl + 1, sizeof *bd->row)) == NULL ||
        (bd->rows = calloc(nl + 1, sizeof *bd->rows)) == NULL ||
        (bd->near = calloc(nl + 1, sizeof *bd->near)) == NULL ||
        (rank = malloc((size_t)b->nw * sizeof *rank)) == NULL)
        goto none;
    bd->nm = eng_set_ranks(v, b->nw, rank);
    for (size_t i = 0; i < nl; i++) {
        const struct node *n = ev2->leaf_nodes[i];
        if (n == NULL)
            continue;
        if ((bd->rows[i] = leaf_words(n)) == 0)
            goto none;
        for (size_t k = 0; k < n->n; k++) { /* as eng_rank_weigh_page: seeking is cheaper */
            if (!eng_rank_weighs(b, n->cur[k].t, bd->nm))
                goto none;
        }
        bd->near[i] = n->kind == PLAN_NEAR;
        bd->row[i] = nrow;
        nrow += bd->rows[i];
    }
    if (nrow == 0 || (bd->wf2 = calloc(nrow * (size_t)bd->nm, sizeof *bd->wf2)) == NULL ||
        (bd->floor = calloc(bd->nm ? bd->nm : 1, sizeof *bd->floor)) == NULL)
        goto none;
    for (size_t i = 0; i < nl; i++) {
        for (size_t k = 0; k < bd->rows[i]; k++)
            eng_postings_weigh(seg, ev2->leaf_nodes[i]->cur[k].t, b->lo, b->hi, v, b->base, rank,
                               bd->wf2 + (bd->row[i] + k) * bd->nm, bd->floor,
                               bd->near[i] ? ENG_WEIGH_PACKED : eng_node_cols(ev2->leaf_nodes[i]));
    }
    if ((bd->table = eng_rank_wf2_table(r, bd->rows, bd->floor, bd->nm)) == NULL)
        goto none;
    free(rank);
    return bd;
none:
    free(rank);
    eng_rank_bounds_free(bd);
    return NULL;
}

/* Twice the most leaf i's frequency can be at match m (its wf2's unit);
 * UINT32_MAX when a tf was too many to pack. */
static uint32_t leaf_wf2(const struct eng_rank_bounds *bd, size_t i, uint32_t m)
{
    const uint32_t *at = bd->wf2 + bd->row[i] * bd->nm + m;
    if (!bd->near[i])
        return bd->rows[i] ? *at : 0;
    unsigned mask = 7;
    for (size_t k = 0; k < bd->rows[i]; k++)
        mask &= eng_head_mask(at[k * bd->nm]); /* 0 where a word is absent */
    uint32_t w = 0;
    for (; mask; mask &= mask - 1) {
        unsigned f = (unsigned)__builtin_ctz(mask);
        uint32_t sum = 0;
        for (size_t k = 0; k < bd->rows[i]; k++) {
            uint32_t tf = eng_head_tf(at[k * bd->nm], f);
            if (tf == ENG_HEAD_TF_MAX)
                return UINT32_MAX;
            sum += tf;
        }
        w += eng_wf2[f] * (sum - (uint32_t)(bd->rows[i] - 1));
    }
    return w;
}

bool eng_rank_bounds_below(const struct run *r, const struct eng_rank_bounds *bd,
                           const struct ev *ev2, uint32_t m, uint32_t d)
{
    double worst = r->heap.v[0].key, bound = 0.0;
    size_t nl = r->plan.nleaves;
    uint32_t f[ENG_BOUND_LEAVES];
    bool tabled = true;
    for (size_t i = 0; i < nl; i++) { /* in bm25_sum's order, +0.0 skipped as there */
        if ((f[i] = leaf_wf2(bd, i, m)) == UINT32_MAX)
            return false;
        if (f[i] >= ENG_TABLE_WF2)
            tabled = false;
        else if (f[i])
            bound += bd->table[i * ENG_TABLE_WF2 + f[i]];
    }
    if (tabled && bound < worst)
        return true;
    /* at the match's own floor or length byte, whichever is more */
    double D = eng_norm_floor(ev2, d, bd->floor[m]);
    bound = 0.0;
    for (size_t i = 0; i < nl; i++) {
        if (f[i])
            bound += eng_bm25_term(r, r->idf[i], f[i] * 0.5, D);
    }
    return bound < worst;
}
