/* Private to the search of the engine (search.c the driver, iter.c,
 * rank.c, tierpage.c, sets.c, run.c, split.c): the state one search carries
 * through them. A search is a plan (index/plan.h) evaluated segment by
 * segment (run.c), by document-at-a-time iterators (iter.c) or by sets of
 * a docid window (sets.c), each segment counted exactly and feeding the
 * page's candidates (this header's heap; rank.c scores relevancy,
 * tierpage.c from the tiers when it can), over one thread or two
 * (split.c). Small functions of the hot loops are inline
 * here so that cutting the search into files costs no call per match. */
#ifndef NEWSD_INDEX_ENGINE_SEARCH_H
#define NEWSD_INDEX_ENGINE_SEARCH_H

#include "index/engine/columns.h"
#include "index/engine/internal.h"

#include "util/bits.h"
#include "util/clock.h"

#define DEADLINE_EVERY 1024 /* matches between two looks at the clock */

/* --- iterators (iter.c) ----------------------------------------------------- */

struct node {
    enum plan_kind kind;
    bool started, filter; /* filter: a text term whose mask must meet colset */
    /* TERM: a dense language or source term checked at a target from its
     * facet column before its cursor is moved (iter.c seek_term) */
    const uint32_t *col;
    uint32_t col_want, col_n;
    uint32_t doc;
    unsigned colset;
    struct eng_cursor *cur; /* TERM 1, PHRASE/NEAR n */
    struct eng_cursor
        *lead; /* PHRASE: its rarest pair's cursor (pairs.h), seeked first; NULL none */
    uint32_t pf[ENG_FIELDS];       /* PHRASE/NEAR: its instances per field at doc */
    bool pf_due;                   /* NEAR matched by a pair: pf not counted yet */
    struct eng_cursor *near_pairs; /* NEAR of two paired words: "a b", "b a" (t NULL: absent) */
    uint32_t *near_pos;            /* NEAR: every word's positions at doc, grown as needed */
    size_t near_cap;
    size_t n;
    struct node **kids;
    size_t nkids;
    const struct plan *plan;
};

struct ev {
    struct arena *a;
    const struct eng_segment *seg;
    uint32_t si;                 /* seg's index in the snapshot */
    uint32_t (*pa)[ENG_POS_MAX]; /* positions of one token, per field */
    uint32_t (*st)[ENG_POS_MAX]; /* phrase start candidates, per field */
    struct node **leaf_nodes;    /* per scored leaf, this segment; NULL absent */
    const uint8_t *norm;         /* relevancy: seg's length bytes (columns.h); NULL none */
    bool positions;              /* phrases by positions alone, no pairs (the reference) */
    /* Matches only, no leaf scored: a word its stems cover inside the
     * language filter is left out of its OR of forms (plan.h stems_cover),
     * a word outside one is read as its residual (plan.h resid) */
    bool match_only;
    bool nomem;
};

/* The node of p in this segment; NULL when it cannot match here. */
struct node *eng_iter_new(struct ev *ev, const struct plan *p);
/* n's first match >= target, ENG_END past the last. */
uint32_t eng_iter_seek(struct ev *ev, struct node *n, uint32_t target);
/* FTS5's weighted instance count of a scored leaf at doc (a proximity
 * matched by its pairs counts its windows now). */
double eng_iter_leaf_freq(struct ev *ev, struct node *n, uint32_t doc);
/* At least eng_iter_leaf_freq() at n's doc for a proximity whose windows
 * are not counted yet (pf_due), from its words' frequencies alone, no
 * position read. */
double eng_iter_near_bound(struct node *n);
/* Whether proximity n matches doc d >= its words' cursors by its words'
 * positions alone (no pair looked up: the caller knows none holds d). */
bool eng_iter_near_at(struct ev *ev, struct node *n, uint32_t d);
/* The pair term (pairs.h) answering phrase p of two words in seg into
 * *out; false when they are not both paired there or p is no such phrase. */
bool eng_iter_phrase_pair(const struct eng_segment *seg, const struct plan *p,
                          struct eng_term *out);

/* --- the page's candidates ---------------------------------------------------- */

struct cand {
    double key; /* score or popularity; unused for time orders */
    int64_t id;
    struct eng_doc_ref at; /* where its document is: the page reads it there */
};

/* a ranks before b: higher key, then higher id (newest). */
static inline bool before(const struct cand *a, const struct cand *b)
{
    return a->key > b->key || (a->key == b->key && a->id > b->id);
}

struct heap {
    struct cand *v;
    size_t n, k;
};

/* Whether a candidate of this key may enter the heap, whatever its id:
 * false when the heap is full and its worst key is higher (the caller
 * then reads nothing more of the document, not even its id). */
static inline bool heap_may_take(const struct heap *h, double key)
{
    return h->n < h->k || key >= h->v[0].key;
}

/* Min-heap of the k best: v[0] is the worst kept. */
static inline void heap_push(struct heap *h, struct cand c)
{
    size_t i;
    if (h->n < h->k) {
        i = h->n++;
        while (i > 0 && before(&h->v[(i - 1) / 2], &c)) {
            h->v[i] = h->v[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h->v[i] = c;
        return;
    }
    if (!before(&c, &h->v[0]))
        return;
    i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct cand *worst = &c;
        if (l < h->n && before(worst, &h->v[l])) {
            m = l;
            worst = &h->v[l];
        }
        if (r < h->n && before(worst, &h->v[r]))
            m = r;
        if (m == i)
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    h->v[i] = c;
}

/* --- one search ----------------------------------------------------------------- */

struct run {
    const struct eng_snap *snap;
    const struct index_request *req;
    struct plan_tree plan;
    size_t k;          /* offset + limit */
    struct heap heap;  /* relevancy, popularity */
    struct cand *list; /* oldest first: candidates of every segment */
    size_t nlist;
    struct cand *ring; /* oldest first: the last k of one segment */
    double *idf, avgdl;
    int64_t nrow, ntoken;  /* relevancy: what idf and avgdl were made of */
    int64_t *hits;         /* relevancy: each leaf's nHit (counted, or frozen) */
    bool frozen;           /* relevancy: statistics from req->stats, none counted */
    const char **hit_keys; /* relevancy: each leaf's count-cache key (nHit) */
    size_t *hit_keylens;
    double *freq; /* relevancy: each leaf's frequency at the current doc */
    /* relevancy: matches of segment pend_si waiting for their lengths (rank.c
     * eng_rank_match), their frequencies nleaves apiece */
    uint32_t *pend_d, pend_n, pend_si;
    double *pend_f;
    uint64_t total;
    int64_t deadline;
    uint64_t ticks;
    uint32_t (*pa)[ENG_POS_MAX]; /* phrase scratch shared by every evaluation */
    uint32_t (*st)[ENG_POS_MAX];
    const char *key; /* the root plan's fingerprint (count cache) */
    size_t keylen;
    bool plain;                    /* eng_rank_plain(root) */
    bool term_leaves;              /* some scored leaf is a term (its frequency is postings data) */
    bool near_leaves;              /* some scored leaf is a proximity */
    const struct eng_visit *visit; /* eng_search_visit: every match handed over */
};

/* Newest first: match d of segment si into the page's k newest, a heap by
 * id (r->k > 0). false once d is older than the k-th newest kept: docids
 * run newest first, so the segment's later matches are older still and
 * its part of the page is done (only its count goes on). Segments visited
 * newest first (order_newest) mostly stop at their first match. */
static inline bool take_newest(struct run *r, const struct eng_segment *seg, uint32_t si,
                               uint32_t d)
{
    int64_t id = seg->ids[d];
    if (r->heap.n == r->heap.k && id < r->heap.v[0].id)
        return false;
    heap_push(&r->heap, (struct cand){0, id, {si, d}});
    return true;
}

/* Cursor paging in a ranked order (index_request.after): whether a
 * candidate ranks after the cursor's place, as before() orders them. */
static inline bool after_cursor(const struct run *r, double key, int64_t id)
{
    const struct index_request *q = r->req;
    return !q->after || key < q->after_key || (key == q->after_key && id < q->after_id);
}

/* A ranked candidate (relevancy, popularity) into the page's heap, unless
 * a cursor has given it already. */
static inline void heap_offer(struct run *r, struct cand c)
{
    if (after_cursor(r, c.key, c.id))
        heap_push(&r->heap, c);
}

static inline bool expired(struct run *r)
{
    return r->deadline > 0 && (r->ticks++ % DEADLINE_EVERY) == 0 && clock_mono_ms() >= r->deadline;
}

/* --- sets of a docid window (sets.c) -------------------------------------------- */

#define SETS_MAX 64 /* sets alive at once in one segment's evaluation, at most */

struct sets {
    struct ev *ev;
    struct run *r;
    uint32_t lo, hi, base, nw; /* window [lo, hi); bit i of a set = docid base + i */
    uint64_t scale_num, scale_den;
    /* Sets come from malloc, not the arena, and are reused: a large fresh
     * allocation is a page fault per 4 KB written (measured: 13 % of an
     * AND of three words), while malloc hands freed memory back. */
    uint64_t *all[SETS_MAX], *free[SETS_MAX];
    size_t nall, nfree;
};

/* About how many of a list of df postings fall in b's window (its share
 * of the segment's documents). */
static inline uint64_t eng_sets_window_df(const struct sets *b, uint32_t df)
{
    return (uint64_t)df * b->scale_num / b->scale_den;
}

/* Whether proximity n is built as sets: two paired words over all
 * columns, the pairs' documents matches without a position read. */
bool eng_sets_near(const struct node *n);
/* The live documents of ev's segment that leaf node n matches, as a set
 * (a proximity eng_sets_near builds, a term with deletions to subtract). */
int eng_sets_count(struct run *r, struct ev *ev, struct node *n,
                   const struct eng_deletions *deletions, uint64_t *count);
/* Whether segment seg's window [lo, hi) is better evaluated as sets. */
bool eng_sets_use(const struct run *r, const struct eng_segment *seg, struct node *root,
                  uint32_t lo, uint32_t hi);
/* Segment si by the set evaluator (root: a fresh AND, OR or NOT instance
 * over the window [lo, hi)): its count into r->total (and the count cache
 * unless known), its share of the page into r. */
int eng_sets_run_segment(struct run *r, struct ev *ev, size_t si, struct node *root, uint32_t lo,
                         uint32_t hi, const struct eng_count_cache_key *ck, bool known);

/* --- relevancy (rank.c) ------------------------------------------------------- */

/* A plan whose scored leaves sit on a match exactly when their terms hold
 * it (rank.c says when). */
bool eng_rank_plain(const struct plan *p, bool under_or);
/* Relevancy's statistics, in two halves so that a search split over two
 * threads counts its nHits split too: eng_rank_begin (one thread, the
 * request's arena), eng_run_leaf_hits (run.c) over some segments (any thread,
 * adding into hits[] per leaf), eng_rank_idf (one thread, once every
 * segment is counted). */
int eng_rank_begin(struct run *r, struct arena *a);
/* A cursor walk's frozen statistics (index_request.stats) as r's idf and
 * avgdl: nothing is counted. ERR_INVALID when they do not fit the plan. */
int eng_rank_frozen(struct run *r);
int eng_run_leaf_hits(struct run *r, const struct arena *a, const size_t *segs, size_t nsegs,
                      int64_t *hits);
void eng_rank_idf(struct run *r, const int64_t *hits);
/* Score match d of ev's segment into the page's heap (lazily: bounds first). */
void eng_rank_match(struct run *r, struct ev *ev, uint32_t d);
/* The matches eng_rank_match left waiting for their lengths, scored into the
 * page: at the end of each segment's walk. */
void eng_rank_flush(struct run *r);
/* A part of a split search's own waiting room (split.c). */
int eng_rank_pending_new(struct run *r, struct arena *a);
/* Relevancy's page from the matches v of a plain plan; 1 when no leaf
 * pays to be weighed (the caller seeks them all). */
int eng_rank_weigh_page(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v);

/* One phrase's term of fts5Bm25Function(): weighted frequency f in a
 * document of D tokens. Rounded operations are monotone, so this grows with
 * f and shrinks with D in floating point too: with f and D bounded it gives
 * a true bound of the exact score. */
static inline double eng_bm25_term(const struct run *r, double idf, double f, double D)
{
    const double k1 = ENG_BM25_K1, b = ENG_BM25_B;
    return idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / r->avgdl)));
}

/* fts5Bm25Function(), summing phrases in FTS5's order: the exact score of
 * leaf frequencies f[] in a document of D tokens. */
static inline double eng_bm25_sum(const struct run *r, const double *f, double D)
{
    double score = 0.0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        /* a phrase absent here adds exactly +0.0, which changes no sum
         * (score starts at +0.0): skipped, a division saved per leaf */
        if (f[i] != 0.0)
            score += eng_bm25_term(r, r->idf[i], f[i], D);
    }
    return score;
}

/* The relevancy page of a plain plan's window from its leaves' tiers
 * (tierpage.c, docs/engine.md "Tiers"), tried before eng_rank_weigh_page:
 * 0 when it is decided (the page's share of the window offered), 1 when
 * not (nothing offered: the caller walks every match), else an error. nm:
 * the matches in v. */
int eng_rank_tiers(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v,
                   uint32_t nm);

/* A scored leaf's frequencies are read a term at a time over the matches
 * (eng_postings_weigh) when its postings in the window are at most this
 * many per match; else it is sought to each match. A sought leaf costs a
 * skip-table search and a block decode per match (~80 ns), a weighed one
 * ~2 ns per posting of its list (blocks without a match skipped). */
#define ENG_WEIGH_RATIO 40

/* The columns term node n is read in: its own when it is restricted to
 * some (filter), else every one (eng_postings_fill_in, eng_postings_weigh). */
static inline unsigned eng_node_cols(const struct node *n)
{
    return n->filter ? n->colset : INDEX_FIELD_ALL;
}

/* Whether term t pays to be weighed over nm matches of the window of b. */
static inline bool eng_rank_weighs(const struct sets *b, const struct eng_term *t, uint32_t nm)
{
    const struct eng_segment *seg = b->ev->seg;
    uint64_t in_window = (uint64_t)t->df * (b->hi - b->lo) / (seg->n ? seg->n : 1);
    return in_window <= (uint64_t)ENG_WEIGH_RATIO * nm;
}

/* rank[w]: the bits of v before word w (nw words); returns them all. */
static inline uint32_t eng_set_ranks(const uint64_t *v, uint32_t nw, uint32_t *rank)
{
    uint32_t nm = 0;
    for (uint32_t w = 0; w < nw; w++) {
        rank[w] = nm;
        nm += bits_pop(v[w]);
    }
    return nm;
}

/* The least length of match d by its length byte (columns.h
 * eng_norm_of), floor when that is more: a bound before dl[d], a cache
 * miss a match where the byte is one for four documents. Of a common
 * word's relevancy matches at 10 M that the length floor let by, three in
 * four then scored below the page's worst. */
static inline double eng_norm_floor(const struct ev *ev, uint32_t d, double floor)
{
    double least = ev->norm ? (double)eng_norm_length(ev->norm[d]) : 0.0;
    return least > floor ? least : floor;
}

/* Per scored leaf with slot[i] != 0, its bm25 term at the least of the nm
 * length floors for each weighted frequency below ENG_TABLE_WF2 (rank.c);
 * NULL out of memory. */
#define ENG_TABLE_WF2 256
double *eng_rank_wf2_table(const struct run *r, const size_t *slot, const uint32_t *floor,
                           uint32_t nm);

/* Bounds of a relevancy page's matches whose plan is not plain, from the
 * words of its scored terms and proximities weighed over the matches v
 * (bounds.c): NULL when a scored leaf is neither, a word does not pay to
 * be weighed, or out of memory (the page scores every match then). */
struct eng_rank_bounds;
struct eng_rank_bounds *eng_rank_bounds_new(struct run *r, const struct ev *ev2,
                                            const struct sets *b, const uint64_t *v);
/* Whether match m of v (docid d), with the page full, cannot enter it. */
bool eng_rank_bounds_below(const struct run *r, const struct eng_rank_bounds *bd,
                           const struct ev *ev2, uint32_t m, uint32_t d);
void eng_rank_bounds_free(struct eng_rank_bounds *bd);

/* --- one segment (run.c), every segment (split.c) ----------------------------------- */

/* One segment into r, its iterators in a scratch arena (limit: a's). */
int eng_run_segment(struct run *r, struct arena *a, size_t si, int64_t id_lo, int64_t id_hi);
/* Every segment of the snapshot into r, over two threads when it pays. */
int eng_split_run(struct run *r, struct arena *a, enum eng_split split, int64_t id_lo,
                  int64_t id_hi);

#endif
