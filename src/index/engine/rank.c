/* Relevancy: FTS5's bm25() (sqlite ext/fts5/fts5_aux.c) with the weights
 * index/fts5/fts5.c gives it, computed by the same expression over the same
 * statistics so the order is FTS5's (search.h): the statistics (nHit per
 * scored leaf, the idf), a match scored lazily against the page's worst,
 * and the page of a plain plan weighed a term at a time. */
#include "index/engine/search.h"

#include "index/engine/heads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

/* A plan whose scored leaves are all terms (column-restricted or not) with
 * no AND (or NOT) between them and an OR above: at a match, each node
 * above such a leaf matches whenever the leaf does (AND and NOT nodes on
 * the way down match with their parent; an OR matches with any kid), so a
 * scored leaf sits on a match exactly when its term holds the document (in
 * its columns), as the document-at-a-time walk leaves it (docs/engine.md
 * "Relevancy"). */
bool eng_rank_plain(const struct plan *p, bool under_or)
{
    switch (p->kind) {
    case PLAN_TERM:
        return true;
    case PLAN_PHRASE: /* a phrase's node sits on a match exactly when it occurs there */
        return p->leaf < 0 || (p->colset & INDEX_FIELD_ALL) == INDEX_FIELD_ALL;
    case PLAN_NEAR:
        return p->leaf < 0;
    case PLAN_OR:
        for (size_t i = 0; i < p->nkids; i++) {
            if (!eng_rank_plain(p->kids[i], true))
                return false;
        }
        return true;
    case PLAN_AND:
        for (size_t i = 0; i < p->nkids; i++) {
            if (!eng_rank_plain(p->kids[i], under_or))
                return false;
        }
        return !under_or;
    case PLAN_ANDNOT: /* the excluded side is never scored */
        return !under_or && eng_rank_plain(p->kids[0], under_or);
    }
    return false;
}

/* Relevancy's statistics, in two halves so that a search split over two
 * threads counts its nHits split too: eng_rank_begin (one thread, the
 * request's arena), eng_run_leaf_hits (run.c) over some segments (any
 * thread, adding into hits[] per leaf), eng_rank_idf (one thread, once
 * every segment is counted). */
int eng_rank_begin(struct run *r, struct arena *a)
{
    size_t n = r->plan.nleaves ? r->plan.nleaves : 1;
    r->idf = arena_calloc(a, n, sizeof *r->idf);
    r->freq = arena_calloc(a, n, sizeof *r->freq);
    r->hit_keys = arena_calloc(a, n, sizeof *r->hit_keys);
    r->hit_keylens = arena_calloc(a, n, sizeof *r->hit_keylens);
    r->hits = arena_calloc(a, n, sizeof *r->hits);
    if (r->idf == NULL || r->freq == NULL || r->hit_keys == NULL || r->hit_keylens == NULL ||
        r->hits == NULL || eng_rank_pending_new(r, a) < 0)
        return ERR_NOMEM;
    if (r->req->stats)
        return eng_rank_frozen(r);
    r->nrow = (int64_t)r->snap->nrow;
    r->ntoken = (int64_t)r->snap->ntoken;
    r->avgdl = (double)r->ntoken / (double)r->nrow;
    for (size_t i = 0; r->snap->count_cache && i < r->plan.nleaves; i++) {
        struct plan copy = *r->plan.leaves[i];
        copy.leaf = -1;
        if ((r->hit_keys[i] = index_plan_key(a, &copy, &r->hit_keylens[i])) == NULL)
            return ERR_NOMEM;
    }
    return 0;
}

void eng_rank_idf(struct run *r, const int64_t *hits)
{
    int64_t n_row = r->nrow;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        /* fts5Bm25GetData(): the IDF, clamped so that it is never negative. */
        double idf = log((n_row - hits[i] + 0.5) / (hits[i] + 0.5));
        if (idf <= 0.0)
            idf = 1e-6;
        r->idf[i] = idf;
        r->hits[i] = hits[i];
    }
}

int eng_rank_frozen(struct run *r)
{
    const struct index_rank_stats *st = r->req->stats;
    /* (a collection with a scored word has tokens: avgdl 0 would be NaN) */
    if (st->nleaves != r->plan.nleaves || st->nrow <= 0 || st->ntoken < 0 ||
        (st->ntoken == 0 && st->nleaves > 0))
        return ERR_INVALID;
    for (size_t i = 0; i < st->nleaves; i++) {
        if (st->hits[i] < 0 || st->hits[i] > st->nrow)
            return ERR_INVALID;
    }
    r->frozen = true;
    r->nrow = st->nrow;
    r->ntoken = st->ntoken;
    r->avgdl = (double)r->ntoken / (double)r->nrow; /* as eng_rank_begin's */
    eng_rank_idf(r, st->hits);
    return 0;
}

/* Each leaf's frequency at doc into r->freq. */
static void leaf_freqs(struct run *r, struct ev *ev, uint32_t doc)
{
    for (size_t i = 0; i < r->plan.nleaves; i++)
        r->freq[i] = eng_iter_leaf_freq(ev, ev->leaf_nodes[i], doc);
}

/* A bound of eng_iter_leaf_freq() at the leaf's current doc from the skip table
 * alone: the block maximum of its weighted frequency. A phrase occurs no
 * more often in a field than any of its tokens (the least maximum); a
 * proximity's windows can outnumber either word's ("a b a": two windows of
 * "a b"~1, one b), never all its words' together (eng_iter_near_bound). */
static double leaf_freq_bound(const struct node *n, uint32_t doc)
{
    if (n == NULL || !n->started || n->doc != doc)
        return 0.0;
    if (n->kind == PLAN_NEAR) {
        double sum = 0.0;
        for (size_t k = 0; k < n->n; k++)
            sum += eng_cursor_block(&n->cur[k])->wf2_max;
        return sum * 0.5;
    }
    uint32_t w = UINT32_MAX;
    for (size_t k = 0; k < n->n; k++) {
        uint32_t m = eng_cursor_block(&n->cur[k])->wf2_max;
        if (m < w)
            w = m;
    }
    return w * 0.5;
}

/* Whether leaf n is a proximity on doc whose windows are not counted yet
 * (matched by its pairs). */
static bool near_due(const struct node *n, uint32_t doc)
{
    return n && n->pf_due && n->doc == doc;
}

/* The exact frequency of each leaf leaf_freqs_bounded() bounded (its
 * windows counted now), the others' left as it read them. */
static void near_freqs(struct run *r, struct ev *ev, uint32_t doc)
{
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        if (near_due(ev->leaf_nodes[i], doc))
            r->freq[i] = eng_iter_leaf_freq(ev, ev->leaf_nodes[i], doc);
    }
}

/* Each leaf's frequency at doc into r->freq, but a proximity's windows not
 * counted yet (matched by its pairs), bounded from its words' frequencies
 * instead; whether one was. */
static bool leaf_freqs_bounded(struct run *r, struct ev *ev, uint32_t doc)
{
    bool bounded = false;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        struct node *n = ev->leaf_nodes[i];
        double f = near_due(n, doc) ? eng_iter_near_bound(n) : -1.0;
        bounded |= f >= 0.0;
        r->freq[i] = f >= 0.0 ? f : eng_iter_leaf_freq(ev, n, doc);
    }
    return bounded;
}

/* bm25() of doc or more, without decoding any posting's data: the same sum
 * with each leaf's frequency replaced by its bound and doc's length by D,
 * at most dl[doc] (docs/engine.md "Relevancy"). */
static double bm25_bound(struct run *r, struct ev *ev, uint32_t doc, double D)
{
    double score = 0.0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        double f = leaf_freq_bound(ev->leaf_nodes[i], doc);
        if (f != 0.0) /* as eng_bm25_sum */
            score += eng_bm25_term(r, r->idf[i], f, D);
    }
    return score;
}

/* At most dl[doc], from the skip table alone (dl[doc] itself is a cache
 * miss per match): every block a leaf's cursor is in at doc holds doc. */
static uint32_t dl_floor(struct run *r, struct ev *ev, uint32_t doc)
{
    uint32_t D = 0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        const struct node *n = ev->leaf_nodes[i];
        if (n == NULL || !n->started || n->doc != doc)
            continue;
        for (size_t k = 0; k < n->n; k++) {
            uint32_t m = eng_cursor_block(&n->cur[k])->dl_min;
            if (m > D)
                D = m;
        }
    }
    return D;
}

/* Matches whose frequencies are known (phrases, proximities) wait here,
 * their lengths asked for, while the walk finds the next ones: dl[d] of a
 * sparse match is a cache miss (~100 ns; the proximity's relevancy page at
 * 10 M, 117,000 matches, read each as it came). Only those past every
 * bound that needs no dl[d]. */
#define RANK_PENDING 16

int eng_rank_pending_new(struct run *r, struct arena *a)
{
    size_t n = r->plan.nleaves ? r->plan.nleaves : 1;
    r->pend_n = 0;
    r->pend_d = arena_calloc(a, RANK_PENDING, sizeof *r->pend_d);
    r->pend_f = arena_calloc(a, RANK_PENDING * n, sizeof *r->pend_f);
    return r->pend_d && r->pend_f ? 0 : ERR_NOMEM;
}

void eng_rank_flush(struct run *r)
{
    if (r->pend_n == 0)
        return;
    const struct eng_segment *seg = r->snap->segs[r->pend_si];
    size_t nl = r->plan.nleaves;
    for (uint32_t i = 0; i < r->pend_n; i++) {
        uint32_t d = r->pend_d[i];
        double score = eng_bm25_sum(r, r->pend_f + i * nl, (double)seg->dl[d]);
        if (heap_may_take(&r->heap, score))
            heap_offer(r, (struct cand){score, seg->ids[d], {r->pend_si, d}});
    }
    r->pend_n = 0;
}

static void rank_wait(struct run *r, const struct ev *ev, uint32_t d)
{
    if (r->pend_n > 0 && r->pend_si != ev->si)
        eng_rank_flush(r);
    __builtin_prefetch(&ev->seg->dl[d]);
    memcpy(r->pend_f + (size_t)r->pend_n * r->plan.nleaves, r->freq,
           r->plan.nleaves * sizeof *r->freq);
    r->pend_si = ev->si;
    r->pend_d[r->pend_n++] = d;
    if (r->pend_n == RANK_PENDING)
        eng_rank_flush(r);
}

/* Score match d into the heap lazily. Once the heap is full, a match is
 * dropped at the first of these bounds that falls below the page's worst
 * (then it cannot enter whatever its id), each costing more than the one
 * before: the skip table alone; the exact frequencies (postings data, read
 * in order) with the length floor; the exact score (dl[d], a cache miss).
 * ids[d], another miss, is read only for a score that can enter. */
void eng_rank_match(struct run *r, struct ev *ev, uint32_t d)
{
    const struct eng_segment *seg = ev->seg;
    bool full = r->heap.n == r->heap.k && !r->snap->score_all;
    double worst = full ? r->heap.v[0].key : 0.0;
    double floor = 0.0;
    if (full) {
        floor = dl_floor(r, ev, d);
        if (bm25_bound(r, ev, d, floor) < worst)
            return;
        /* the exact length before the postings' data of term leaves:
         * reading dl[d] costs less than decoding data up to d (profile of
         * a nested OR/AND relevancy page: eng_cursor_data 31 %); a
         * phrase's frequency is known already, the read would be waste */
        if (r->term_leaves) {
            double least = eng_norm_floor(ev, d, floor);
            if (least > floor && bm25_bound(r, ev, d, least) < worst)
                return;
            floor = (double)seg->dl[d];
            if (bm25_bound(r, ev, d, floor) < worst)
                return;
        }
    }
    /* A proximity matched by its pairs counts its windows from positions
     * (the profile of "Premier League"~3 by relevancy at 10 M: counting
     * 40 % of the search; under 1 % with this bound): the bound from
     * its words' frequencies first. */
    if (full && r->near_leaves) {
        if (leaf_freqs_bounded(r, ev, d)) {
            if (eng_bm25_sum(r, r->freq, floor) < worst)
                return;
            double least = eng_norm_floor(ev, d, floor);
            if (least > floor && eng_bm25_sum(r, r->freq, least) < worst)
                return;
            /* dl[d] (a miss) still costs less than counting the windows:
             * the loop over that page at 10 M, 57 → 68 queries/s */
            floor = (double)seg->dl[d];
            if (eng_bm25_sum(r, r->freq, floor) < worst)
                return;
            near_freqs(r, ev, d);
        }
    } else {
        leaf_freqs(r, ev, d);
    }
    if (full && eng_bm25_sum(r, r->freq, floor) < worst)
        return;
    if (!r->term_leaves && r->pend_d) { /* dl[d] not read yet: wait for it */
        rank_wait(r, ev, d);
        return;
    }
    double score = eng_bm25_sum(r, r->freq, (double)seg->dl[d]); /* fts5Bm25Function() */
    if (full && score < worst)
        return;
    heap_offer(r, (struct cand){score, seg->ids[d], {ev->si, d}});
}

/* Match d of ev's segment, its frequencies in r->freq and its length at
 * least floor, into the heap: as eng_rank_match's third bound, the exact
 * frequencies with the floor of the blocks holding d first, before dl[d]
 * (a cache miss per match: 71 % of the weighed page's samples on a common
 * word's relevancy page at 10 M), then the exact score. */
static void score_weighed(struct run *r, const struct ev *ev, uint32_t d, double floor)
{
    const struct eng_segment *seg = ev->seg;
    /* one bound, at the larger of floor and the length byte's: the byte
     * is read for every match here, and a bound at floor first was one
     * bm25_sum more for each that it let by (the nested shape, fifteen
     * leaves: 5-12 % slower with both) */
    if (r->heap.n == r->heap.k && !r->snap->score_all &&
        eng_bm25_sum(r, r->freq, eng_norm_floor(ev, d, floor)) < r->heap.v[0].key)
        return;
    double score = eng_bm25_sum(r, r->freq, (double)seg->dl[d]); /* fts5Bm25Function() */
    if (heap_may_take(&r->heap, score))
        heap_offer(r, (struct cand){score, seg->ids[d], {ev->si, d}});
}

/* Max-heap of blocks by key: h[0] the best. */
static void block_sift(struct eng_block_bound *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, best = i;
        if (l < n && h[l].key > h[best].key)
            best = l;
        if (l + 1 < n && h[l + 1].key > h[best].key)
            best = l + 1;
        if (best == i)
            return;
        struct eng_block_bound x = h[i];
        h[i] = h[best];
        h[best] = x;
        i = best;
    }
}

/* The relevancy page of one weighed term (block-max top-k): its blocks
 * holding a match are scored best bound first — bm25 of the block's
 * largest weighted frequency at its shortest length, above every score in
 * it — each match as eng_rank_weigh_page scores it, until the next bound
 * is below the page's worst: no document of it or of any block after
 * could enter (ties by id included: the heap takes an equal score). The
 * total is the set's, counted before; only the page's work shrinks. */
static int rank_blocks(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v)
{
    const struct eng_segment *seg = ev2->seg;
    const struct eng_term *t = ev2->leaf_nodes[0]->cur[0].t;
    struct eng_block_bound *h = malloc((size_t)eng_term_nblocks(t) * sizeof *h);
    uint32_t ids[ENG_BLOCK], wf2[ENG_BLOCK];
    int rc = 0;

    if (h == NULL)
        return ERR_NOMEM;
    uint32_t n = eng_postings_blocks(seg, t, b->lo, b->hi, v, b->base, h);
    for (uint32_t i = 0; i < n; i++)
        h[i].key = eng_bm25_term(r, r->idf[0], h[i].wf2_max * 0.5, h[i].dl_min);
    for (uint32_t i = n / 2; i-- > 0;)
        block_sift(h, n, i);
    while (n > 0 && rc == 0) {
        struct eng_block_bound top = h[0];
        if (r->heap.n == r->heap.k && top.key < r->heap.v[0].key)
            break;
        h[0] = h[--n];
        block_sift(h, n, 0);
        uint32_t nin = eng_postings_block(seg, t, top.b, b->lo, b->hi, v, b->base, ids, wf2);
        for (uint32_t j = 0; ev2->norm && j < nin; j++) /* the matches' length bytes asked for */
            __builtin_prefetch(&ev2->norm[ids[j]]);
        for (uint32_t j = 0; j < nin; j++) {
            r->freq[0] = wf2[j] * 0.5; /* as eng_rank_weigh_page */
            score_weighed(r, ev2, ids[j], top.dl_min);
        }
        if (expired(r))
            rc = ERR_TIMEOUT;
    }
    free(h);
    return rc;
}

/* The cheapest bound of a match when every scored leaf is weighed: each
 * leaf's bm25 term at the shortest length any match of the window can have
 * (the least of their length floors), tabled by weighted frequency once a
 * window, then summed in eng_bm25_sum's order (+0.0 skipped as there). Rounded
 * operations are monotone, so the sum is above the exact score: a match
 * below the page's worst costs loads and additions, where the floor bound
 * divides once a leaf (a common word's relevancy page at 10 M: bm25_sum
 * 36 % of the profile, nearly all of it that bound). NULL: not tabled
 * (out of memory is no error here: the slower bounds remain). */
double *eng_rank_wf2_table(const struct run *r, const size_t *slot, const uint32_t *floor,
                           uint32_t nm)
{
    uint32_t lo = UINT32_MAX;
    for (uint32_t m = 0; m < nm; m++)
        lo = floor[m] < lo ? floor[m] : lo;
    double *t = malloc(r->plan.nleaves * ENG_TABLE_WF2 * sizeof *t);
    for (size_t i = 0; t && i < r->plan.nleaves; i++) {
        for (uint32_t w = 0; w < ENG_TABLE_WF2; w++)
            t[i * ENG_TABLE_WF2 + w] =
                slot[i] && w ? eng_bm25_term(r, r->idf[i], w * 0.5, lo) : 0.0;
    }
    return t;
}

/* The tabled bounds (table: eng_rank_wf2_table) of matches m0 .. m0 + n - 1
 * into bound, a weighed leaf (slot) at a time: each one's sum in leaf
 * order, a frequency of 0 adding the table's +0.0 (the same sum as
 * skipping it), one past the table +inf (no bound); no branch per match on
 * a leaf's frequency, which an OR's word has or not as the match goes
 * (mispredicted about as often as not). A match at a time, the loop over
 * the leaves and the walk of the set's bits around it were most of the
 * weighed page (an OR of two words at 10 M: 166,000 matches, 5 % of them
 * let by). */
#define BOUND_CHUNK 256

static void wf2_table_bounds(const struct run *r, const double *table, const size_t *slot,
                             const uint32_t *wf2, uint32_t nm, uint32_t m0, uint32_t n,
                             double *bound)
{
    for (uint32_t j = 0; j < n; j++)
        bound[j] = 0.0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        if (!slot[i])
            continue;
        const uint32_t *row = wf2 + (slot[i] - 1) * (size_t)nm + m0;
        const double *t = table + i * ENG_TABLE_WF2;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t w = row[j];
            double term = t[w < ENG_TABLE_WF2 ? w : 0];
            bound[j] += w < ENG_TABLE_WF2 ? term : INFINITY;
        }
    }
}

/* The docid of match m of v (m counted from 0 across v's words; rank[w]:
 * the matches before word w of nw), *w the word to start looking at, moved
 * forward to m's. */
static uint32_t match_docid(const uint64_t *v, const uint32_t *rank, uint32_t nw, uint32_t base,
                            uint32_t *w, uint32_t m)
{
    while (*w + 1 < nw && rank[*w + 1] <= m)
        ++*w;
    uint64_t bits = v[*w];
    for (uint32_t k = m - rank[*w]; k > 0; k--)
        bits &= bits - 1;
    return base + *w * 64 + bits_low(bits);
}

/* What eng_rank_weigh_page read (per leaf its slot, 0: sought, else its
 * row of wf2 with one entry per match of the window; each match's length
 * floor) and the matches that passed the tabled bound, waiting to be
 * scored a batch at a time. */
#define WEIGHED_BATCH 16

struct weighed {
    const size_t *slot;
    const uint32_t *wf2;
    uint32_t *floor, nm;
    uint32_t n, m[WEIGHED_BATCH], d[WEIGHED_BATCH];
};

/* The waiting matches scored, in docid order (the sought leaves' cursors
 * only move forward). */
static void weighed_flush(struct run *r, struct ev *ev2, struct weighed *wd)
{
    size_t nl = r->plan.nleaves;
    for (uint32_t k = 0; k < wd->n; k++) {
        uint32_t m = wd->m[k], d = wd->d[k];
        for (size_t i = 0; i < nl; i++) {
            struct node *n = ev2->leaf_nodes[i];
            if (wd->slot[i]) {
                /* as leaf_freq: sum of eng_wf2 * 0.5 * tf, exact */
                r->freq[i] = wd->wf2[(wd->slot[i] - 1) * (size_t)wd->nm + m] * 0.5;
            } else if (n) {
                n->started = true;
                n->doc = eng_cursor_seek(&n->cur[0], d);
                r->freq[i] = eng_iter_leaf_freq(ev2, n, d);
                if (n->doc == d && wd->floor[m] < eng_cursor_block(&n->cur[0])->dl_min)
                    wd->floor[m] = eng_cursor_block(&n->cur[0])->dl_min;
            } else {
                r->freq[i] = 0.0;
            }
        }
        score_weighed(r, ev2, d, wd->floor[m]);
    }
    wd->n = 0;
}

/* Match m (docid d) to be scored: its length byte and length asked of
 * memory now, read when its batch is scored. Those loads were a cache
 * miss a match, one at a time: with a branch on each bound between them
 * the core had one in flight (the 10 M mix over 16 clients: 60 % of
 * score_weighed on the length byte's load). */
static void weighed_wait(struct run *r, struct ev *ev2, struct weighed *wd, uint32_t m, uint32_t d)
{
    if (ev2->norm)
        __builtin_prefetch(&ev2->norm[d]);
    __builtin_prefetch(&ev2->seg->dl[d]);
    wd->m[wd->n] = m;
    wd->d[wd->n++] = d;
    if (wd->n == WEIGHED_BATCH)
        weighed_flush(r, ev2, wd);
}

/* Relevancy's page from the matches v of a plain plan (plain_plan: a
 * scored leaf sits on a match exactly when its term holds it), its
 * frequencies read term at a time for the leaves that pay (ENG_WEIGH_RATIO),
 * sought per match for the others, each match then scored exactly as
 * relevancy_match scores it. The profile of the nested shape's relevancy
 * page (4,538 matches of five words): seeking five cursors to each match
 * and the bounds before it were 60 % of its time. Returns 1 when no leaf
 * pays (the caller seeks them all). */
int eng_rank_weigh_page(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v)
{
    const struct eng_segment *seg = ev2->seg;
    size_t nl = r->plan.nleaves, nweigh = 0;
    uint32_t nm = 0, *wf2 = NULL, *floor = NULL;
    double *table = NULL;
    int rc = 1; /* no leaf pays, until one does */

    uint32_t *rank = malloc((size_t)b->nw * sizeof *rank);
    size_t *slot = arena_calloc(ev2->a, nl + 1, sizeof *slot); /* 0: sought, else weighed */
    if (rank == NULL || slot == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    nm = eng_set_ranks(v, b->nw, rank);
    for (size_t i = 0; i < nl; i++) {
        const struct node *n = ev2->leaf_nodes[i];
        if (n == NULL)
            continue;
        if (n->kind != PLAN_TERM) /* not a plain plan's leaf */
            goto out;
        if (eng_rank_weighs(b, n->cur[0].t, nm))
            slot[i] = ++nweigh;
    }
    if (nweigh == 0)
        goto out;
    if (nl == 1 && !r->snap->score_all && !ev2->leaf_nodes[0]->filter) {
        rc = rank_blocks(r, ev2, b, v);
        goto out;
    }
    if ((wf2 = calloc(nweigh * (size_t)nm, sizeof *wf2)) == NULL ||
        (floor = calloc(nm, sizeof *floor)) == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < nl; i++) {
        if (slot[i])
            eng_postings_weigh(seg, ev2->leaf_nodes[i]->cur[0].t, b->lo, b->hi, v, b->base, rank,
                               wf2 + (slot[i] - 1) * (size_t)nm, floor,
                               eng_node_cols(ev2->leaf_nodes[i]));
    }
    rc = 0;
    bool all_weighed = !r->snap->score_all;
    for (size_t i = 0; i < nl; i++)
        all_weighed &= slot[i] || ev2->leaf_nodes[i] == NULL;
    table = all_weighed ? eng_rank_wf2_table(r, slot, floor, nm) : NULL;
    struct weighed wd = {.slot = slot, .wf2 = wf2, .floor = floor, .nm = nm};
    if (table) { /* the matches tabled a chunk at a time, then bounded */
        double bound[BOUND_CHUNK];
        uint32_t w = 0;
        for (uint32_t m0 = 0; m0 < nm && rc == 0; m0 += BOUND_CHUNK) {
            uint32_t n = nm - m0 < BOUND_CHUNK ? nm - m0 : BOUND_CHUNK;
            wf2_table_bounds(r, table, slot, wf2, nm, m0, n, bound);
            for (uint32_t j = 0; j < n; j++) {
                if (r->heap.n == r->heap.k && bound[j] < r->heap.v[0].key)
                    continue;
                weighed_wait(r, ev2, &wd, m0 + j, match_docid(v, rank, b->nw, b->base, &w, m0 + j));
            }
            if (expired(r))
                rc = ERR_TIMEOUT;
        }
    } else {
        uint32_t m = 0;
        for (uint32_t w = 0; w < b->nw && rc == 0; w++) {
            for (uint64_t bits = v[w]; bits; bits &= bits - 1, m++)
                weighed_wait(r, ev2, &wd, m, b->base + w * 64 + bits_low(bits));
            if (expired(r))
                rc = ERR_TIMEOUT;
        }
    }
    weighed_flush(r, ev2, &wd);
out:
    free(table);
    free(floor);
    free(wf2);
    free(rank);
    return rc;
}
