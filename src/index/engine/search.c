/* eng_search_ids() of internal.h: a plan (qplan.h) evaluated segment by
 * segment with document-at-a-time iterators: AND leapfrogs on skip tables,
 * OR merges, NOT subtracts, phrases check positions. Every match is counted
 * (exact totals, no scoring on the count path); the page is kept on the
 * side: newest first = a k-heap by id that each segment feeds until its
 * next match is too old to enter (docids are newest first), oldest first =
 * the last k of each segment, relevancy and popularity = a k-heap. Relevancy is FTS5's bm25()
 * (sqlite ext/fts5/fts5_aux.c) with the weights index/fts5/fts5.c gives it, computed by the same
 * expression over the same statistics so the order is FTS5's. */
#include "index/engine/qplan.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/banned.h"

#define DEADLINE_EVERY 1024 /* matches between two looks at the clock */

struct node {
    enum plan_kind kind;
    bool started, filter; /* filter: a text term whose mask must meet colset */
    uint32_t doc;
    unsigned colset;
    struct eng_cursor *cur;  /* TERM 1, PHRASE n */
    uint32_t pf[ENG_FIELDS]; /* PHRASE: its instances per field at doc */
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
    bool nomem;
};

static struct node *inst(struct ev *ev, const struct plan *p);

static struct node *node_alloc(struct ev *ev, const struct plan *p)
{
    struct node *n = arena_calloc(ev->a, 1, sizeof *n);
    if (n == NULL) {
        ev->nomem = true;
        return NULL;
    }
    n->kind = p->kind;
    n->colset = p->colset;
    n->plan = p;
    return n;
}

/* The node of p in this segment; NULL when it cannot match here. */
static struct node *inst(struct ev *ev, const struct plan *p)
{
    struct node *n;
    switch (p->kind) {
    case PLAN_TERM:
    case PLAN_PHRASE: {
        const struct eng_term **t = arena_calloc(ev->a, p->n, sizeof *t);
        if (t == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->n; i++) {
            /* a damaged segment's term is left out here; the search
             * fails once it ends (engine.c) */
            if (eng_segment_term_open(ev->seg, p->terms[i], p->lens[i], &t[i]) < 0 || t[i] == NULL)
                return NULL;
            /* Phrases need positions: only exact terms have them. */
            if (p->kind == PLAN_PHRASE && t[i]->kind != ENG_TERM_EXACT)
                return NULL;
        }
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        n->n = p->n;
        n->cur = arena_alloc(ev->a, p->n * sizeof *n->cur);
        if (n->cur == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->n; i++)
            eng_cursor_init(&n->cur[i], ev->seg, t[i]);
        n->filter = p->kind == PLAN_TERM && t[0]->kind != ENG_TERM_META &&
                    (p->colset & INDEX_FIELD_ALL) != INDEX_FIELD_ALL;
        if (p->leaf >= 0)
            ev->leaf_nodes[p->leaf] = n;
        return n;
    }
    case PLAN_AND:
    case PLAN_OR: {
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        n->kids = arena_calloc(ev->a, p->nkids, sizeof *n->kids);
        if (n->kids == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->nkids; i++) {
            struct node *k = inst(ev, p->kids[i]);
            if (k == NULL && p->kind == PLAN_AND)
                return NULL; /* leaves of the other kids stay unscored: it cannot match */
            if (k)
                n->kids[n->nkids++] = k;
        }
        if (n->nkids == 0)
            return NULL;
        return n->nkids == 1 ? n->kids[0] : n;
    }
    case PLAN_ANDNOT: {
        struct node *pos = inst(ev, p->kids[0]), *neg;
        if (pos == NULL)
            return NULL;
        neg = inst(ev, p->kids[1]);
        if (neg == NULL)
            return pos;
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        n->kids = arena_calloc(ev->a, 2, sizeof *n->kids);
        if (n->kids == NULL) {
            ev->nomem = true;
            return NULL;
        }
        n->kids[0] = pos;
        n->kids[1] = neg;
        n->nkids = 2;
        return n;
    }
    }
    return NULL;
}

static uint32_t seek(struct ev *ev, struct node *n, uint32_t target);

/* Phrase instances of n at its current doc per field of colset, into
 * out[ENG_FIELDS]; returns their sum. */
static uint32_t phrase_count(struct ev *ev, struct node *n, uint32_t out[ENG_FIELDS])
{
    uint32_t ns[ENG_FIELDS] = {0}, tf[ENG_FIELDS], total = 0;
    unsigned mask;

    eng_cursor_data(&n->cur[0], &mask, tf, ev->pa);
    mask &= n->colset;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f)) {
            memcpy(ev->st[f], ev->pa[f], tf[f] * sizeof **ev->pa);
            ns[f] = tf[f];
        }
    }
    for (size_t k = 1; k < n->n && mask; k++) {
        unsigned m2;
        eng_cursor_data(&n->cur[k], &m2, tf, ev->pa);
        mask &= m2;
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            if (!(mask & (1u << f)))
                continue;
            /* keep starts s with s + k among this token's positions */
            uint32_t w = 0, j = 0;
            for (uint32_t i = 0; i < ns[f]; i++) {
                uint32_t want = ev->st[f][i] + (uint32_t)k;
                while (j < tf[f] && ev->pa[f][j] < want)
                    j++;
                if (j < tf[f] && ev->pa[f][j] == want)
                    ev->st[f][w++] = ev->st[f][i];
            }
            ns[f] = w;
            if (w == 0)
                mask &= ~(1u << f);
        }
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t c = (mask & (1u << f)) ? ns[f] : 0;
        if (out)
            out[f] = c;
        total += c;
    }
    return total;
}

static uint32_t seek_term(struct node *n, uint32_t target)
{
    struct eng_cursor *c = &n->cur[0];
    uint32_t d = eng_cursor_seek(c, target), tf[ENG_FIELDS];
    unsigned mask;
    while (n->filter && d != ENG_END) {
        eng_cursor_data(c, &mask, tf, NULL);
        if (mask & n->colset)
            break;
        d = eng_cursor_seek(c, d + 1);
    }
    return d;
}

/* All cursors of a phrase on one doc >= target. */
static uint32_t leapfrog_cursors(struct node *n, uint32_t target)
{
    uint32_t d = eng_cursor_seek(&n->cur[0], target);
    for (size_t i = 1; i < n->n && d != ENG_END;) {
        uint32_t e = eng_cursor_seek(&n->cur[i], d);
        if (e != d) {
            d = e == ENG_END ? ENG_END : eng_cursor_seek(&n->cur[0], e);
            i = 1;
            continue;
        }
        i++;
    }
    return d;
}

/* An exhausted AND / NOT takes its whole subtree with it, as FTS5's
 * fts5ExprSetEof() does: a leaf left on the current doc under it must not
 * count for bm25 (FTS5 reports no instances for an EOF node). */
static void set_end(struct node *n)
{
    n->started = true;
    n->doc = ENG_END;
    for (size_t i = 0; i < n->nkids; i++)
        set_end(n->kids[i]);
}

static uint32_t seek(struct ev *ev, struct node *n, uint32_t target)
{
    uint32_t d;
    if (n->started && n->doc >= target)
        return n->doc;
    n->started = true;
    switch (n->kind) {
    case PLAN_TERM:
        d = seek_term(n, target);
        break;
    case PLAN_PHRASE:
        for (;;) {
            d = leapfrog_cursors(n, target);
            if (d == ENG_END || phrase_count(ev, n, n->pf) > 0)
                break;
            target = d + 1;
        }
        break;
    case PLAN_AND:
        d = seek(ev, n->kids[0], target);
        for (size_t i = 1; i < n->nkids && d != ENG_END;) {
            uint32_t e = seek(ev, n->kids[i], d);
            if (e != d) {
                d = e == ENG_END ? ENG_END : seek(ev, n->kids[0], e);
                i = 1;
                continue;
            }
            i++;
        }
        break;
    case PLAN_OR:
        d = ENG_END;
        for (size_t i = 0; i < n->nkids; i++) {
            uint32_t e = seek(ev, n->kids[i], target);
            if (e < d)
                d = e;
        }
        break;
    case PLAN_ANDNOT:
        d = seek(ev, n->kids[0], target);
        while (d != ENG_END && seek(ev, n->kids[1], d) == d)
            d = seek(ev, n->kids[0], d + 1);
        break;
    default:
        d = ENG_END;
    }
    if (d == ENG_END && (n->kind == PLAN_AND || n->kind == PLAN_ANDNOT))
        set_end(n);
    n->doc = d;
    return d;
}

/* FTS5's weighted instance count of a scored leaf at doc. */
static double leaf_freq(const struct node *n, uint32_t doc)
{
    uint32_t tf[ENG_FIELDS];
    unsigned mask;
    double w = 0.0;

    if (n == NULL || !n->started || n->doc != doc)
        return 0.0;
    if (n->kind == PLAN_PHRASE) {
        memcpy(tf, n->pf, sizeof tf); /* counted when seek() matched doc */
        mask = n->colset;
    } else {
        eng_cursor_data(&n->cur[0], &mask, tf, NULL);
        mask &= n->colset;
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f))
            w += eng_wf2[f] * 0.5 * tf[f]; /* bm25(articles_fts, 3.0, 1.5, 1.0, 0.0) */
    }
    return w;
}

/* --- the page ------------------------------------------------------------- */

struct cand {
    double key; /* score or popularity; unused for time orders */
    int64_t id;
    struct eng_doc_ref at; /* where its document is: the page reads it there */
};

/* a ranks before b: higher key, then higher id (newest). */
static bool before(const struct cand *a, const struct cand *b)
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
static void heap_push(struct heap *h, struct cand c)
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

static int cmp_cand(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    return before(a, b) ? -1 : before(b, a);
}

static int cmp_id_desc(const void *x, const void *y)
{
    int64_t a = ((const struct cand *)x)->id, b = ((const struct cand *)y)->id;
    return a > b ? -1 : a < b;
}

static int cmp_id_asc(const void *x, const void *y)
{
    return -cmp_id_desc(x, y);
}

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
    const char **hit_keys; /* relevancy: each leaf's count-cache key (nHit) */
    size_t *hit_keylens;
    double *freq; /* relevancy: each leaf's frequency at the current doc */
    uint64_t total;
    int64_t deadline;
    uint64_t ticks;
    uint32_t (*pa)[ENG_POS_MAX]; /* phrase scratch shared by every evaluation */
    uint32_t (*st)[ENG_POS_MAX];
    const char *key; /* the root plan's fingerprint (count cache) */
    size_t keylen;
    bool plain;       /* plain_plan(root) */
    bool term_leaves; /* some scored leaf is a term (its frequency is postings data) */
    const struct eng_visit *visit; /* eng_search_visit: every match handed over */
};

/* Newest first: match d of segment si into the page's k newest, a heap by
 * id (r->k > 0). false once d is older than the k-th newest kept: docids
 * run newest first, so the segment's later matches are older still and
 * its part of the page is done (only its count goes on). Segments visited
 * newest first (order_newest) mostly stop at their first match. */
static bool take_newest(struct run *r, const struct eng_segment *seg, uint32_t si, uint32_t d)
{
    int64_t id = seg->ids[d];
    if (r->heap.n == r->heap.k && id < r->heap.v[0].id)
        return false;
    heap_push(&r->heap, (struct cand){0, id, {si, d}});
    return true;
}

/* A plan whose scored leaves are all unrestricted terms with no AND (or
 * NOT) between them and an OR above: at a match, each node above such a
 * leaf matches whenever the leaf does (AND and NOT nodes on the way down
 * match with their parent; an OR matches with any kid), so a scored leaf
 * sits on a match exactly when its term holds the document, as the
 * document-at-a-time walk leaves it (docs/engine.md "Relevancy"). */
static bool plain_plan(const struct plan *p, bool under_or)
{
    switch (p->kind) {
    case PLAN_TERM:
        return p->leaf < 0 || (p->colset & INDEX_FIELD_ALL) == INDEX_FIELD_ALL;
    case PLAN_PHRASE:
        return p->leaf < 0;
    case PLAN_OR:
        for (size_t i = 0; i < p->nkids; i++) {
            if (!plain_plan(p->kids[i], true))
                return false;
        }
        return true;
    case PLAN_AND:
        for (size_t i = 0; i < p->nkids; i++) {
            if (!plain_plan(p->kids[i], under_or))
                return false;
        }
        return !under_or;
    case PLAN_ANDNOT: /* the excluded side is never scored */
        return !under_or && plain_plan(p->kids[0], under_or);
    }
    return false;
}

/* A plan's fingerprint for the count cache: kinds, column sets and term
 * bytes in tree order with every length explicit, so two plans share one
 * only when they are the same tree (and so match the same documents). */
static void plan_key_put(struct buf *b, const struct plan *p)
{
    uint32_t v[4] = {(uint32_t)p->kind, p->colset, (uint32_t)p->n, (uint32_t)p->nkids};
    buf_append(b, v, sizeof v);
    for (size_t i = 0; i < p->n; i++) {
        uint32_t len = (uint32_t)p->lens[i];
        buf_append(b, &len, sizeof len);
        buf_append(b, p->terms[i], p->lens[i]);
    }
    for (size_t i = 0; i < p->nkids; i++)
        plan_key_put(b, p->kids[i]);
}

/* The fingerprint in the arena; NULL when out of memory (no caching then). */
static const char *plan_key(struct arena *a, const struct plan *p, size_t *len)
{
    struct buf b;
    buf_init(&b, 0);
    plan_key_put(&b, p);
    char *out = NULL;
    if (buf_error(&b) == 0 && (out = arena_alloc(a, b.len + 1)) != NULL)
        memcpy(out, b.data ? b.data : "", b.len);
    *len = b.len;
    buf_release(&b);
    return out;
}

static bool expired(struct run *r)
{
    return r->deadline > 0 && (r->ticks++ % DEADLINE_EVERY) == 0 && clock_mono_ms() >= r->deadline;
}

/* Docid interval [*lo, *hi) of the request's id window in seg. */
static void doc_window(const struct eng_segment *seg, int64_t id_lo, int64_t id_hi, uint32_t *lo,
                       uint32_t *hi)
{
    *lo = eng_segment_first_le(seg, id_hi);
    *hi = id_lo == INT64_MIN ? seg->n : eng_segment_first_le(seg, id_lo - 1);
}

static int leaf_hits_segment(struct run *r, struct arena *a, size_t s, const struct plan *leaf,
                             const char *key, size_t keylen, int64_t *hits)
{
    struct ev ev = {.a = a, .seg = r->snap->segs[s]};
    const struct eng_dels *dels = r->snap->dels[s];
    struct eng_ccache_key ck = {ev.seg->gen, dels ? dels->gen : 0, 0, ev.seg->n, key, keylen};
    uint64_t cached;
    if (key && eng_ccache_get(r->snap->ccache, &ck, &cached)) {
        *hits += (int64_t)cached;
        return 0;
    }
    struct node *dummy[1];
    struct plan copy = *leaf;
    copy.leaf = -1;
    ev.leaf_nodes = dummy;
    ev.pa = r->pa;
    ev.st = r->st;
    struct node *n = inst(&ev, &copy);
    if (ev.nomem)
        return ERR_NOMEM;
    if (n == NULL)
        return 0;
    if (n->kind == PLAN_TERM && !n->filter && dels == NULL) {
        *hits += n->cur[0].t->df;
        return 0;
    }
    uint64_t here = 0;
    for (uint32_t d = seek(&ev, n, 0); d != ENG_END; d = seek(&ev, n, d + 1)) {
        if (!eng_dels_has(dels, d))
            here++;
        if (expired(r))
            return ERR_TIMEOUT;
    }
    *hits += (int64_t)here;
    if (key)
        eng_ccache_put(r->snap->ccache, &ck, here);
    return 0;
}

/* Relevancy's statistics, in two halves so that a search split over two
 * threads counts its nHits split too: bm25_begin (one thread, the
 * request's arena), leaf_hits over some segments (any thread, adding into
 * hits[] per leaf), bm25_idf (one thread, once every segment is counted). */
static int bm25_begin(struct run *r, struct arena *a)
{
    size_t n = r->plan.nleaves ? r->plan.nleaves : 1;
    r->idf = arena_calloc(a, n, sizeof *r->idf);
    r->freq = arena_calloc(a, n, sizeof *r->freq);
    r->hit_keys = arena_calloc(a, n, sizeof *r->hit_keys);
    r->hit_keylens = arena_calloc(a, n, sizeof *r->hit_keylens);
    if (r->idf == NULL || r->freq == NULL || r->hit_keys == NULL || r->hit_keylens == NULL)
        return ERR_NOMEM;
    r->avgdl = (double)r->snap->ntoken / (double)r->snap->nrow;
    for (size_t i = 0; r->snap->ccache && i < r->plan.nleaves; i++) {
        struct plan copy = *r->plan.leaves[i];
        copy.leaf = -1;
        if ((r->hit_keys[i] = plan_key(a, &copy, &r->hit_keylens[i])) == NULL)
            return ERR_NOMEM;
    }
    return 0;
}

/* nHit of FTS5's bm25 (live documents matching a leaf anywhere), of every
 * leaf over segs[0..nsegs), added to hits[leaf]. Each segment's iterators
 * live in a scratch arena dropped after it (limit: a's): a query of
 * hundreds of words over many segments would otherwise pile them all up in
 * the request's arena. */
static int leaf_hits(struct run *r, const struct arena *a, const size_t *segs, size_t nsegs,
                     int64_t *hits)
{
    int rc = 0;
    for (size_t i = 0; i < r->plan.nleaves && rc == 0; i++) {
        for (size_t k = 0; k < nsegs && rc == 0; k++) {
            struct arena scratch;
            arena_init(&scratch, a->limit);
            rc = leaf_hits_segment(r, &scratch, segs[k], r->plan.leaves[i], r->hit_keys[i],
                                   r->hit_keylens[i], &hits[i]);
            arena_release(&scratch);
        }
    }
    return rc;
}

static void bm25_idf(struct run *r, const int64_t *hits)
{
    int64_t n_row = (int64_t)r->snap->nrow;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        /* fts5Bm25GetData(): the IDF, clamped so that it is never negative. */
        double idf = log((n_row - hits[i] + 0.5) / (hits[i] + 0.5));
        if (idf <= 0.0)
            idf = 1e-6;
        r->idf[i] = idf;
    }
}

/* One phrase's term of fts5Bm25Function(): weighted frequency f in a
 * document of D tokens. Rounded operations are monotone, so this grows with
 * f and shrinks with D in floating point too: with f and D bounded it gives
 * a true bound of the exact score (bm25_bound). */
static double bm25_term(const struct run *r, double idf, double f, double D)
{
    const double k1 = 1.2;
    const double b = 0.75;
    return idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / r->avgdl)));
}

/* fts5Bm25Function(), summing phrases in FTS5's order. */
static double bm25_sum(const struct run *r, const double *f, double D)
{
    double score = 0.0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        /* a phrase absent here adds exactly +0.0, which changes no sum
         * (score starts at +0.0): skipped, a division saved per leaf */
        if (f[i] != 0.0)
            score += bm25_term(r, r->idf[i], f[i], D);
    }
    return score;
}

/* Each leaf's frequency at doc into r->freq. */
static void leaf_freqs(struct run *r, struct ev *ev, uint32_t doc)
{
    for (size_t i = 0; i < r->plan.nleaves; i++)
        r->freq[i] = leaf_freq(ev->leaf_nodes[i], doc);
}

/* A bound of leaf_freq() at the leaf's current doc from the skip table
 * alone: the block maximum of its weighted frequency (a phrase occurs no
 * more often in a field than any of its tokens). */
static double leaf_freq_bound(const struct node *n, uint32_t doc)
{
    uint32_t w = UINT32_MAX;
    if (n == NULL || !n->started || n->doc != doc)
        return 0.0;
    for (size_t k = 0; k < n->n; k++) {
        uint32_t m = eng_cursor_block(&n->cur[k])->wf2_max;
        if (m < w)
            w = m;
    }
    return w * 0.5;
}

/* bm25() of doc or more, without decoding any posting's data: the same sum
 * with each leaf's frequency replaced by its bound and doc's length by D,
 * at most dl[doc] (docs/engine.md "Relevancy"). */
static double bm25_bound(struct run *r, struct ev *ev, uint32_t doc, double D)
{
    double score = 0.0;
    for (size_t i = 0; i < r->plan.nleaves; i++) {
        double f = leaf_freq_bound(ev->leaf_nodes[i], doc);
        if (f != 0.0) /* as bm25_sum */
            score += bm25_term(r, r->idf[i], f, D);
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

/* Score match d into the heap lazily. Once the heap is full, a match is
 * dropped at the first of these bounds that falls below the page's worst
 * (then it cannot enter whatever its id), each costing more than the one
 * before: the skip table alone; the exact frequencies (postings data, read
 * in order) with the length floor; the exact score (dl[d], a cache miss).
 * ids[d], another miss, is read only for a score that can enter. */
static void relevancy_match(struct run *r, struct ev *ev, uint32_t d)
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
            floor = (double)seg->dl[d];
            if (bm25_bound(r, ev, d, floor) < worst)
                return;
        }
    }
    leaf_freqs(r, ev, d);
    if (full && bm25_sum(r, r->freq, floor) < worst)
        return;
    double score = bm25_sum(r, r->freq, (double)seg->dl[d]); /* fts5Bm25Function() */
    if (full && score < worst)
        return;
    heap_push(&r->heap, (struct cand){score, seg->ids[d], {ev->si, d}});
}

/* --- the set evaluator ------------------------------------------------------
 * A boolean plan's matches in a docid window as a bitset, built bottom up:
 * a term is one sequential decode of its postings into the set (no cursor,
 * no tree walk per posting), OR is bitwise or, AND starts from its cheapest
 * kid and then either ANDs a kid's own set or, when the kid would cost much
 * more to build than the candidates left, probes the kid at each candidate
 * by seeking its iterators (rarest first, skip tables); NOT likewise.
 * Phrases and column-restricted terms are built by their iterators. The
 * count is then a popcount and the page is read off the set; relevancy
 * seeks a second instance of the plan to each match, which puts every
 * scored leaf on it exactly as the document-at-a-time walk would (a leaf
 * sits on a match when it and each node above it match there). Measured
 * on 1 M articles (docs/performance.md): a word's OR of forms cost ~20 ns a
 * posting through the iterators, ~2 ns decoded into a set. */

/* A kid is probed rather than built when its postings exceed this many per
 * candidate and cursor: a probe is a seek of each of its cursors (skip-table
 * search, a partial block decode: ~100 ns), a built posting a byte decode
 * and a bit set (~1.5 ns). Measured on the and-3 shape: 48 per candidate,
 * cursors not counted, probed a three-form OR at 400 candidates for longer
 * than building it took. */
#define PROBE_RATIO 64

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

/* SWAR: without -mpopcnt the compiler's builtin calls a table routine. */
static inline unsigned bits_pop(uint64_t w)
{
    w = w - ((w >> 1) & 0x5555555555555555u);
    w = (w & 0x3333333333333333u) + ((w >> 2) & 0x3333333333333333u);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (unsigned)((w * 0x0101010101010101u) >> 56);
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The popcnt instruction where the CPU has it (every x86-64 since 2008):
 * a million-document set counts in ~5 µs instead of ~40. */
__attribute__((target("popcnt"))) static uint64_t count_popcnt(const uint64_t *v, uint32_t nw)
{
    uint64_t c = 0;
    for (uint32_t w = 0; w < nw; w++)
        c += (uint64_t)__builtin_popcountll(v[w]);
    return c;
}
#endif

static inline unsigned bits_low(uint64_t w) /* index of the lowest set bit, w != 0 */
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(w);
#else
    unsigned i = 0;
    while (!(w & 1)) {
        w >>= 1;
        i++;
    }
    return i;
#endif
}

static inline unsigned bits_high(uint64_t w) /* index of the highest set bit, w != 0 */
{
#if defined(__GNUC__)
    return 63u - (unsigned)__builtin_clzll(w);
#else
    unsigned i = 63;
    while (!(w >> i & 1))
        i--;
    return i;
#endif
}

static uint64_t set_count(const struct sets *b, const uint64_t *v)
{
    uint64_t c = 0;
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("popcnt"))
        return count_popcnt(v, b->nw);
#endif
    for (uint32_t w = 0; w < b->nw; w++)
        c += bits_pop(v[w]);
    return c;
}

/* Postings a node would decode in the window (its cost to build). */
static uint64_t set_cost(const struct sets *b, const struct node *n)
{
    uint64_t c = 0;
    switch (n->kind) {
    case PLAN_TERM:
        c = (uint64_t)n->cur[0].t->df * b->scale_num / b->scale_den;
        return n->filter ? 4 * c : c; /* a filter term decodes each posting's data */
    case PLAN_PHRASE:
        c = UINT64_MAX;
        for (size_t i = 0; i < n->n; i++) {
            uint64_t d = (uint64_t)n->cur[i].t->df * b->scale_num / b->scale_den;
            if (d < c)
                c = d;
        }
        return 8 * c; /* positions */
    case PLAN_OR:
        for (size_t i = 0; i < n->nkids; i++)
            c += set_cost(b, n->kids[i]);
        return c;
    case PLAN_AND:
        c = UINT64_MAX;
        for (size_t i = 0; i < n->nkids; i++) {
            uint64_t d = set_cost(b, n->kids[i]);
            if (d < c)
                c = d;
        }
        return c;
    case PLAN_ANDNOT:
        return set_cost(b, n->kids[0]);
    }
    return c;
}

/* Cursors a probe of n seeks. */
static uint64_t node_cursors(const struct node *n)
{
    uint64_t c = n->kind == PLAN_TERM || n->kind == PLAN_PHRASE ? n->n : 0;
    for (size_t i = 0; i < n->nkids; i++)
        c += node_cursors(n->kids[i]);
    return c;
}

/* Sets kept by a thread from one search to its next. A set of a
 * million-document window is 128 KB: malloc serves that from fresh mapped
 * pages, and the profile of an AND of three words (and-3, 1 M articles)
 * had 15 % of its time in the kernel faulting them in, query after query.
 * A few per thread, each as large as any window it served; freed when the
 * thread ends (the pthread key's destructor). */
#define POOL_SETS 4

struct set_pool {
    uint64_t *v[POOL_SETS];
    size_t bytes[POOL_SETS];
    size_t n;
};

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static bool pool_ok;

static void pool_free(void *arg)
{
    struct set_pool *p = arg;
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p);
}

static void pool_init(void)
{
    pool_ok = pthread_key_create(&pool_key, pool_free) == 0;
}

/* This thread's pool; NULL when it cannot have one (no memory, no key). */
static struct set_pool *pool_get(void)
{
    pthread_once(&pool_once, pool_init);
    if (!pool_ok)
        return NULL;
    struct set_pool *p = pthread_getspecific(pool_key);
    if (p == NULL && (p = calloc(1, sizeof *p)) != NULL && pthread_setspecific(pool_key, p) != 0) {
        free(p);
        p = NULL;
    }
    return p;
}

/* A set of at least bytes from the thread's pool (zeroed), else calloc. */
static uint64_t *pool_take(size_t bytes)
{
    struct set_pool *p = pool_get();
    for (size_t i = 0; p && i < p->n; i++) {
        if (p->bytes[i] >= bytes) {
            uint64_t *v = p->v[i];
            p->v[i] = p->v[--p->n];
            p->bytes[i] = p->bytes[p->n];
            memset(v, 0, bytes);
            return v;
        }
    }
    return calloc(1, bytes);
}

/* Back to the thread's pool, which keeps its POOL_SETS largest. */
static void pool_give(uint64_t *v, size_t bytes)
{
    struct set_pool *p = pool_get();
    if (p && p->n < POOL_SETS) {
        p->v[p->n] = v;
        p->bytes[p->n++] = bytes;
        return;
    }
    size_t small = 0;
    for (size_t i = 1; p && i < p->n; i++) {
        if (p->bytes[i] < p->bytes[small])
            small = i;
    }
    if (p && p->bytes[small] < bytes) {
        uint64_t *old = p->v[small];
        p->v[small] = v;
        p->bytes[small] = bytes;
        v = old;
    }
    free(v);
}

/* An all-zero set; NULL (ev->nomem set) when out of memory. */
static uint64_t *set_new(struct sets *b)
{
    uint64_t *v = NULL;
    size_t bytes = (b->nw ? b->nw : 1) * sizeof *v;
    if (b->nfree > 0) {
        v = b->free[--b->nfree];
        memset(v, 0, bytes);
    } else if (b->nall < SETS_MAX && (v = pool_take(bytes)) != NULL) {
        b->all[b->nall++] = v;
    } else { /* beyond SETS_MAX, or calloc failed */
        v = arena_calloc(b->ev->a, b->nw ? b->nw : 1, sizeof *v);
    }
    if (v == NULL)
        b->ev->nomem = true;
    return v;
}

/* v (from set_new) is not used any more. */
static void set_done(struct sets *b, uint64_t *v)
{
    for (size_t i = 0; i < b->nall; i++) {
        if (b->all[i] == v) {
            b->free[b->nfree++] = v;
            return;
        }
    }
}

static void sets_release(struct sets *b)
{
    for (size_t i = 0; i < b->nall; i++)
        pool_give(b->all[i], (b->nw ? b->nw : 1) * sizeof *b->all[i]);
    b->nall = b->nfree = 0;
}

/* Clears the candidates of v where n matches (drop) or does not (keep). */
static int set_probe(struct sets *b, struct node *n, uint64_t *v, bool drop)
{
    for (uint32_t w = 0; w < b->nw; w++) {
        uint64_t bits = v[w];
        while (bits) {
            unsigned i = bits_low(bits);
            uint32_t d = b->base + (uint32_t)w * 64 + i;
            bits &= bits - 1;
            if ((seek(b->ev, n, d) == d) == drop)
                v[w] &= ~((uint64_t)1 << i);
        }
        if (expired(b->r))
            return ERR_TIMEOUT;
    }
    return 0;
}

static int set_build(struct sets *b, struct node *n, uint64_t *out);

/* The conjuncts of AND n with nested ANDs flattened, into k from at (NULL:
 * only counted); returns the new end. */
static size_t and_leaves(struct node *n, struct node **k, size_t at)
{
    for (size_t i = 0; i < n->nkids; i++) {
        if (n->kids[i]->kind == PLAN_AND)
            at = and_leaves(n->kids[i], k, at);
        else if (k)
            k[at++] = n->kids[i];
        else
            at++;
    }
    return at;
}

/* Narrows the candidates in v, about *cand of them, by kid n: AND (neg
 * false) or NOT (neg true). *cand is then the candidates left, counted
 * while narrowing. */
static int set_narrow(struct sets *b, struct node *n, uint64_t *v, bool neg, uint64_t *cand)
{
    if (*cand == 0)
        return 0;
    if (set_cost(b, n) > PROBE_RATIO * *cand * node_cursors(n)) {
        int rc = set_probe(b, n, v, neg);
        *cand = set_count(b, v);
        return rc;
    }
    uint64_t *t = set_new(b);
    int rc;
    if (t == NULL)
        return ERR_NOMEM;
    if ((rc = set_build(b, n, t)) < 0)
        return rc;
    if (neg) {
        for (uint32_t w = 0; w < b->nw; w++)
            v[w] &= ~t[w];
    } else {
        for (uint32_t w = 0; w < b->nw; w++)
            v[w] &= t[w];
    }
    set_done(b, t);
    *cand = set_count(b, v);
    return 0;
}

/* n's matches in the window into out (all zero on entry). */
static int set_build(struct sets *b, struct node *n, uint64_t *out)
{
    int rc;
    if (expired(b->r))
        return ERR_TIMEOUT;
    switch (n->kind) {
    case PLAN_TERM:
        if (n->filter)
            break;
        eng_postings_fill(b->ev->seg, n->cur[0].t, b->lo, b->hi, out, b->base);
        return 0;
    case PLAN_OR:
        for (size_t i = 0; i < n->nkids; i++) {
            struct node *k = n->kids[i];
            if (k->kind == PLAN_TERM && !k->filter) { /* straight into out */
                eng_postings_fill(b->ev->seg, k->cur[0].t, b->lo, b->hi, out, b->base);
                continue;
            }
            uint64_t *t = set_new(b);
            if (t == NULL)
                return ERR_NOMEM;
            if ((rc = set_build(b, k, t)) < 0)
                return rc;
            for (uint32_t w = 0; w < b->nw; w++)
                out[w] |= t[w];
            set_done(b, t);
        }
        return 0;
    case PLAN_AND: {
        /* cheapest kid first (nested ANDs flattened: the request's filters
         * AND the q of an AND); the others narrow its set, cheapest next */
        size_t nk = and_leaves(n, NULL, 0);
        struct node **k = arena_alloc(b->ev->a, nk * sizeof *k);
        uint64_t *cost = arena_alloc(b->ev->a, nk * sizeof *cost);
        if (k == NULL || cost == NULL)
            return ERR_NOMEM;
        and_leaves(n, k, 0);
        for (size_t i = 0; i < nk; i++) {
            struct node *x = k[i];
            uint64_t c = set_cost(b, x);
            size_t j = i;
            for (; j > 0 && cost[j - 1] > c; j--) {
                k[j] = k[j - 1];
                cost[j] = cost[j - 1];
            }
            k[j] = x;
            cost[j] = c;
        }
        if ((rc = set_build(b, k[0], out)) < 0)
            return rc;
        uint64_t cand = set_count(b, out);
        for (size_t i = 1; i < nk; i++) {
            if ((rc = set_narrow(b, k[i], out, false, &cand)) < 0)
                return rc;
        }
        return 0;
    }
    case PLAN_ANDNOT:
        if ((rc = set_build(b, n->kids[0], out)) < 0)
            return rc;
        uint64_t cand = set_count(b, out);
        return set_narrow(b, n->kids[1], out, true, &cand);
    case PLAN_PHRASE:
        break;
    }
    /* by its iterators: phrases, column-restricted terms */
    for (uint32_t d = seek(b->ev, n, b->lo); d < b->hi; d = seek(b->ev, n, d + 1)) {
        out[(d - b->base) >> 6] |= (uint64_t)1 << ((d - b->base) & 63);
        if (expired(b->r))
            return ERR_TIMEOUT;
    }
    return 0;
}

/* n has a node the set evaluator builds by its iterators. */
static bool iterated(const struct node *n)
{
    if (n->kind == PLAN_PHRASE || (n->kind == PLAN_TERM && n->filter))
        return true;
    for (size_t i = 0; i < n->nkids; i++) {
        if (iterated(n->kids[i]))
            return true;
    }
    return false;
}

/* Sets pay when the plan decodes more than a few postings per word of the
 * set: a set costs a zeroed word and a scan per 64 docids, whatever it
 * holds (a rare word's OR of forms is faster by its iterators). */
static bool use_sets(const struct run *r, const struct eng_segment *seg, struct node *root,
                     uint32_t lo, uint32_t hi)
{
    struct sets b = {.lo = lo, .hi = hi, .scale_num = hi - lo, .scale_den = seg->n ? seg->n : 1};
    /* Relevancy seeks a second instance to every match: a phrase (or a
     * column-restricted term), built by its iterators, would decode its
     * positions (data) twice. Measured: the phrase shape with a language
     * filter, relevancy, 3.2 -> 5.4 ms through sets. */
    if (r->req->sort == INDEX_SORT_RELEVANCY && r->k > 0 && iterated(root))
        return false;
    return set_cost(&b, root) > (hi - lo) / 64 / 4;
}

/* Segment si by the set evaluator (run_segment_in: root is a fresh AND, OR
 * or NOT instance over the window [lo, hi)); count and page as there. */
static int sets_page(struct run *r, struct ev *ev, struct sets *b, const uint64_t *v);

static int run_segment_sets(struct run *r, struct ev *ev, size_t si, struct node *root, uint32_t lo,
                            uint32_t hi, const struct eng_ccache_key *ck, bool known)
{
    const struct eng_segment *seg = ev->seg;
    const struct eng_dels *dels = r->snap->dels[si];
    struct sets b = {.ev = ev, .r = r, .lo = lo, .hi = hi, .base = lo & ~63u};
    int rc = 0;

    b.nw = (hi - b.base + 63) / 64;
    b.scale_num = hi - lo;
    b.scale_den = seg->n ? seg->n : 1;
    uint64_t *v = set_new(&b);
    if (v == NULL)
        rc = ERR_NOMEM;
    else if ((rc = set_build(&b, root, v)) == 0 && ev->nomem)
        rc = ERR_NOMEM;
    if (rc == 0) {
        if (dels) {
            for (uint32_t w = 0; w < b.nw; w++)
                v[w] &= ~dels->bits[(b.base >> 6) + w];
        }
        uint64_t here = set_count(&b, v);
        r->total += here;
        for (uint32_t w = 0; r->visit && w < b.nw; w++) /* eng_search_visit */
            for (uint64_t bits = v[w]; bits; bits &= bits - 1)
                r->visit->doc(r->visit->ctx, ev->si, b.base + w * 64 + bits_low(bits));
        if (r->key && !known)
            eng_ccache_put(r->snap->ccache, ck, here);
        if (r->k > 0 && here > 0)
            rc = sets_page(r, ev, &b, v);
    }
    sets_release(&b);
    return rc;
}

/* A scored leaf's frequencies are read a term at a time over the matches
 * (eng_postings_weigh) when its postings in the window are at most this
 * many per match; else it is sought to each match. A sought leaf costs a
 * skip-table search and a block decode per match (~80 ns), a weighed one
 * ~2 ns per posting of its list (blocks without a match skipped). */
#define WEIGH_RATIO 40

/* Relevancy's page from the matches v of a plain plan (plain_plan: a
 * scored leaf sits on a match exactly when its term holds it), its
 * frequencies read term at a time for the leaves that pay (WEIGH_RATIO),
 * sought per match for the others, each match then scored exactly as
 * relevancy_match scores it. The profile of the nested shape's relevancy
 * page (4,538 matches of five words): seeking five cursors to each match
 * and the bounds before it were 60 % of its time. Returns 1 when no leaf
 * pays (the caller seeks them all). */
static int weigh_page(struct run *r, struct ev *ev2, const struct sets *b, const uint64_t *v)
{
    const struct eng_segment *seg = ev2->seg;
    size_t nl = r->plan.nleaves, nweigh = 0;
    uint32_t nm = 0, *wf2 = NULL;
    int rc = 1; /* no leaf pays, until one does */

    uint32_t *rank = malloc((size_t)b->nw * sizeof *rank);
    size_t *slot = arena_calloc(ev2->a, nl + 1, sizeof *slot); /* 0: sought, else weighed */
    if (rank == NULL || slot == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    for (uint32_t w = 0; w < b->nw; w++) {
        rank[w] = nm;
        nm += bits_pop(v[w]);
    }
    for (size_t i = 0; i < nl; i++) {
        const struct node *n = ev2->leaf_nodes[i];
        if (n == NULL)
            continue;
        if (n->kind != PLAN_TERM || n->filter) /* not a plain plan's leaf */
            goto out;
        uint64_t in_window = (uint64_t)n->cur[0].t->df * (b->hi - b->lo) / (seg->n ? seg->n : 1);
        if (in_window <= (uint64_t)WEIGH_RATIO * nm)
            slot[i] = ++nweigh;
    }
    if (nweigh == 0)
        goto out;
    if ((wf2 = calloc(nweigh * (size_t)nm, sizeof *wf2)) == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < nl; i++) {
        if (slot[i])
            eng_postings_weigh(seg, ev2->leaf_nodes[i]->cur[0].t, b->lo, b->hi, v, b->base, rank,
                               wf2 + (slot[i] - 1) * (size_t)nm);
    }
    rc = 0;
    uint32_t m = 0;
    for (uint32_t w = 0; w < b->nw && rc == 0; w++) {
        for (uint64_t bits = v[w]; bits; bits &= bits - 1, m++) {
            uint32_t d = b->base + w * 64 + bits_low(bits);
            for (size_t i = 0; i < nl; i++) {
                struct node *n = ev2->leaf_nodes[i];
                if (slot[i]) {
                    /* as leaf_freq: sum of eng_wf2 * 0.5 * tf, exact */
                    r->freq[i] = wf2[(slot[i] - 1) * (size_t)nm + m] * 0.5;
                } else if (n) {
                    n->started = true;
                    n->doc = eng_cursor_seek(&n->cur[0], d);
                    r->freq[i] = leaf_freq(n, d);
                } else {
                    r->freq[i] = 0.0;
                }
            }
            double score = bm25_sum(r, r->freq, (double)seg->dl[d]); /* fts5Bm25Function() */
            if (heap_may_take(&r->heap, score))
                heap_push(&r->heap, (struct cand){score, seg->ids[d], {ev2->si, d}});
        }
        if (expired(r))
            rc = ERR_TIMEOUT;
    }
out:
    free(wf2);
    free(rank);
    return rc;
}

/* The page's share of segment ev->seg from its matches v. */
static int sets_page(struct run *r, struct ev *ev, struct sets *sb, const uint64_t *v)
{
    const struct eng_segment *seg = ev->seg;
    const struct sets b = *sb;
    size_t got = 0;

    switch (r->req->sort) {
    case INDEX_SORT_PUBLISHED_DESC: /* newest first, while they can enter */
        for (uint32_t w = 0; w < b.nw; w++) {
            for (uint64_t bits = v[w]; bits; bits &= bits - 1) {
                if (!take_newest(r, seg, ev->si, b.base + w * 64 + bits_low(bits)))
                    return 0;
            }
        }
        return 0;
    case INDEX_SORT_PUBLISHED_ASC: /* the last k */
        for (uint32_t w = b.nw; w-- > 0 && got < r->k;) {
            for (uint64_t bits = v[w]; bits && got < r->k;) {
                unsigned i = bits_high(bits);
                bits &= ~((uint64_t)1 << i);
                r->list[r->nlist + got++] =
                    (struct cand){0, seg->ids[b.base + w * 64 + i], {ev->si, b.base + w * 64 + i}};
            }
        }
        r->nlist += got;
        return 0;
    case INDEX_SORT_POPULARITY:
        for (uint32_t w = 0; w < b.nw; w++) {
            for (uint64_t bits = v[w]; bits; bits &= bits - 1) {
                uint32_t d = b.base + w * 64 + bits_low(bits);
                uint32_t src = seg->src[d];
                double pop = src < r->snap->npop ? r->snap->pop[src] : -1.0;
                if (heap_may_take(&r->heap, pop))
                    heap_push(&r->heap, (struct cand){pop, seg->ids[d], {ev->si, d}});
            }
        }
        return 0;
    case INDEX_SORT_RELEVANCY: {
        /* a second instance, sought to each match: its scored leaves then
         * sit where the document-at-a-time walk leaves them */
        struct ev ev2 = *ev;
        ev2.leaf_nodes = arena_calloc(ev->a, r->plan.nleaves + 1, sizeof *ev2.leaf_nodes);
        if (ev2.leaf_nodes == NULL)
            return ERR_NOMEM;
        struct node *root2 = inst(&ev2, r->plan.root);
        if (ev2.nomem)
            return ERR_NOMEM;
        if (r->plain && root2) {
            int rc = weigh_page(r, &ev2, &b, v);
            if (rc <= 0)
                return rc;
        }
        for (uint32_t w = 0; w < b.nw && root2; w++) {
            for (uint64_t bits = v[w]; bits; bits &= bits - 1) {
                uint32_t d = b.base + w * 64 + bits_low(bits);
                if (r->plain) { /* the scored leaves alone (plain_plan) */
                    for (size_t i = 0; i < r->plan.nleaves; i++) {
                        struct node *n = ev2.leaf_nodes[i];
                        if (n) {
                            n->started = true;
                            n->doc = eng_cursor_seek(&n->cur[0], d);
                        }
                    }
                    relevancy_match(r, &ev2, d);
                } else if (seek(&ev2, root2, d) == d) { /* always: d matches */
                    relevancy_match(r, &ev2, d);
                }
            }
            if (expired(r))
                return ERR_TIMEOUT;
        }
        return 0;
    }
    }
    return 0;
}

static int run_segment_in(struct run *r, struct arena *a, size_t si, int64_t id_lo, int64_t id_hi)
{
    const struct eng_segment *seg = r->snap->segs[si];
    const struct eng_dels *dels = r->snap->dels[si];
    struct ev ev = {.a = a, .seg = seg, .si = (uint32_t)si};
    enum index_sort sort = r->req->sort;
    uint32_t lo, hi, d;

    doc_window(seg, id_lo, id_hi, &lo, &hi);
    if (lo >= hi)
        return 0;
    ev.leaf_nodes = arena_calloc(a, r->plan.nleaves + 1, sizeof *ev.leaf_nodes);
    ev.pa = r->pa;
    ev.st = r->st;
    if (ev.leaf_nodes == NULL)
        return ERR_NOMEM;
    struct node *root = inst(&ev, r->plan.root);
    if (ev.nomem)
        return ERR_NOMEM;
    if (root == NULL)
        return 0;

    /* Count path of a single unfiltered term: the skip table, no decoding
     * of whole blocks; the page is the first k postings. */
    if (root->kind == PLAN_TERM && !root->filter && dels == NULL &&
        (r->k == 0 || sort == INDEX_SORT_PUBLISHED_DESC) && (!r->visit || r->visit->term)) {
        if (r->visit)
            r->visit->term(r->visit->ctx, ev.si, root->cur[0].t, lo, hi);
        struct eng_cursor c;
        eng_cursor_init(&c, seg, root->cur[0].t);
        for (d = eng_cursor_seek(&c, lo); r->k > 0 && d < hi && take_newest(r, seg, ev.si, d);
             d = eng_cursor_seek(&c, d + 1))
            ;
        eng_cursor_init(&c, seg, root->cur[0].t);
        r->total += eng_cursor_count_range(&c, lo, hi);
        return 0;
    }

    /* A count this segment already gave for the same plan and window: the
     * newest-first page then needs only its first k live matches. */
    struct eng_ccache_key ck = {seg->gen, dels ? dels->gen : 0, lo, hi, r->key, r->keylen};
    uint64_t cached;
    bool known = !r->visit && r->key && eng_ccache_get(r->snap->ccache, &ck, &cached);
    if (known && (r->k == 0 || sort == INDEX_SORT_PUBLISHED_DESC)) {
        for (d = r->k > 0 ? seek(&ev, root, lo) : hi; d < hi; d = seek(&ev, root, d + 1)) {
            if (!eng_dels_has(dels, d) && !take_newest(r, seg, ev.si, d))
                break;
        }
        r->total += cached;
        return 0;
    }

    if (!r->snap->doc_at_a_time &&
        (root->kind == PLAN_AND || root->kind == PLAN_OR || root->kind == PLAN_ANDNOT) &&
        use_sets(r, seg, root, lo, hi))
        return run_segment_sets(r, &ev, si, root, lo, hi, &ck, known);

    size_t ring_n = 0;
    uint64_t here = 0;
    bool taking = true; /* newest first: matches may still enter the page */
    for (d = seek(&ev, root, lo); d < hi; d = seek(&ev, root, d + 1)) {
        if (eng_dels_has(dels, d))
            continue;
        r->total++;
        here++;
        if (r->visit)
            r->visit->doc(r->visit->ctx, ev.si, d);
        if (expired(r))
            return ERR_TIMEOUT;
        if (r->k == 0)
            continue;
        switch (sort) {
        case INDEX_SORT_PUBLISHED_DESC:
            if (taking)
                taking = take_newest(r, seg, ev.si, d);
            break;
        case INDEX_SORT_PUBLISHED_ASC:
            r->ring[ring_n++ % r->k] = (struct cand){0, seg->ids[d], {ev.si, d}};
            break;
        case INDEX_SORT_POPULARITY: {
            uint32_t src = seg->src[d];
            double pop = src < r->snap->npop ? r->snap->pop[src] : -1.0;
            if (heap_may_take(&r->heap, pop))
                heap_push(&r->heap, (struct cand){pop, seg->ids[d], {ev.si, d}});
            break;
        }
        case INDEX_SORT_RELEVANCY:
            relevancy_match(r, &ev, d);
            break;
        }
    }
    if (r->key && !known)
        eng_ccache_put(r->snap->ccache, &ck, here);
    if (sort == INDEX_SORT_PUBLISHED_ASC) {
        size_t m = ring_n < r->k ? ring_n : r->k;
        for (size_t i = 0; i < m; i++)
            r->list[r->nlist++] = r->ring[(ring_n - m + i) % r->k];
    }
    return 0;
}

/* One segment, its iterators in a scratch arena (see leaf_hits); what the
 * page keeps goes to r's arrays, allocated before. */
static int run_segment(struct run *r, struct arena *a, size_t si, int64_t id_lo, int64_t id_hi)
{
    struct arena scratch;
    arena_init(&scratch, a->limit);
    int rc = run_segment_in(r, &scratch, si, id_lo, id_hi);
    arena_release(&scratch);
    return rc;
}

/* --- one search over two threads -----------------------------------------
 * On an idle server a heavy search gives part of its segments to a second
 * thread (both cores, one query). Each part is a run of its own: its own
 * page arrays, phrase scratch and counters over the same plan, statistics
 * and snapshot (read only; the count cache locks itself). The parts'
 * totals add up; their pages merge into what one run would have kept: a
 * heap holds the k best of a strict order (key, then id), so the k best
 * of two parts' k best are the k best of all, and the time orders keep k
 * candidates per segment whichever thread read it. */

/* Below this many postings in the plan's lists, a search runs on one
 * thread: starting and joining a thread (~50 us) costs about what a
 * quarter of a million postings take to read. */
#define SPLIT_MIN_POSTINGS (256u * 1024)

/* Postings of plan p's terms in seg (what evaluating p there reads, at
 * most: an AND may read fewer). */
static uint64_t plan_postings(const struct plan *p, const struct eng_segment *seg)
{
    uint64_t c = 0;
    if (p->kind == PLAN_TERM || p->kind == PLAN_PHRASE) {
        for (size_t i = 0; i < p->n; i++) {
            const struct eng_term *t = eng_segment_term(seg, p->terms[i], p->lens[i]);
            c += t ? t->df : 0;
        }
    }
    for (size_t i = 0; i < p->nkids; i++)
        c += plan_postings(p->kids[i], seg);
    return c;
}

struct part {
    struct run r;
    struct arena *a; /* the request's: read for its limit only, by run_segment */
    size_t *segs, nsegs;
    int64_t id_lo, id_hi;
    /* relevancy: nHit per leaf over this part's segments, and the barrier
     * both threads pass when both are counted and again once the other
     * thread has made the idf of the sums */
    int64_t *hits;
    pthread_barrier_t *bar;
    int rc;
};

static int part_run(struct part *p)
{
    for (size_t i = 0; i < p->nsegs && p->rc == 0; i++)
        p->rc = run_segment(&p->r, p->a, p->segs[i], p->id_lo, p->id_hi);
    return p->rc;
}

static void *part_main(void *arg)
{
    struct part *p = arg;
    if (p->bar) {
        p->rc = leaf_hits(&p->r, p->a, p->segs, p->nsegs, p->hits);
        pthread_barrier_wait(p->bar);
        pthread_barrier_wait(p->bar);
    }
    part_run(p);
    return NULL;
}

/* Deals the segments to two parts by their documents, the largest first
 * to the lighter part (each part's segments stay in snapshot order); false
 * when one part would be empty or, under ENG_SPLIT_HEAVY, the plan's
 * postings do not pay. Those are estimated from the largest segment alone
 * and scaled: a term's lookup in every segment's dictionary would cost a
 * cheap search more than it saves. */
static bool split_deal(const struct run *r, struct arena *a, enum eng_split split,
                       struct part part[2])
{
    const struct eng_snap *s = r->snap;
    if (split == ENG_SPLIT_NEVER || s->nseg < 2 || r->plan.root == NULL)
        return false;
    size_t *order = arena_calloc(a, s->nseg, sizeof *order);
    uint8_t *to = arena_calloc(a, s->nseg, 1);
    uint64_t docs = 0, load[2] = {0, 0};
    if (order == NULL || to == NULL)
        return false; /* one thread it is */
    for (size_t i = 0; i < s->nseg; i++) {
        docs += s->segs[i]->n;
        size_t j = i; /* insertion by size, largest first */
        for (; j > 0 && s->segs[order[j - 1]]->n < s->segs[i]->n; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    const struct eng_segment *big = s->segs[order[0]];
    if (split == ENG_SPLIT_HEAVY &&
        (big->n == 0 || plan_postings(r->plan.root, big) * docs / big->n < SPLIT_MIN_POSTINGS))
        return false;
    for (size_t i = 0; i < s->nseg; i++) {
        size_t seg = order[i];
        to[seg] = load[1] < load[0];
        load[to[seg]] += s->segs[seg]->n + 1; /* + 1: empty segments alternate */
    }
    for (int k = 0; k < 2; k++) {
        part[k].segs = arena_calloc(a, s->nseg, sizeof *part[k].segs);
        if (part[k].segs == NULL)
            return false;
        for (size_t i = 0; i < s->nseg; i++) {
            if (to[i] == k)
                part[k].segs[part[k].nsegs++] = i;
        }
        if (part[k].nsegs == 0)
            return false;
    }
    return true;
}

/* part[1]'s run: r's plan and statistics, arrays of its own. */
static int part_prepare(const struct run *r, struct arena *a, struct part *p)
{
    size_t segs = p->nsegs;
    p->r = *r;
    p->r.total = 0;
    p->r.ticks = 0;
    p->r.nlist = 0;
    p->r.heap.n = 0;
    p->r.pa = arena_alloc(a, ENG_FIELDS * sizeof *p->r.pa);
    p->r.st = arena_alloc(a, ENG_FIELDS * sizeof *p->r.st);
    if (p->r.pa == NULL || p->r.st == NULL)
        return ERR_NOMEM;
    if (r->freq && (p->r.freq = arena_calloc(a, r->plan.nleaves ? r->plan.nleaves : 1,
                                             sizeof *p->r.freq)) == NULL)
        return ERR_NOMEM;
    if (r->heap.v && (p->r.heap.v = arena_calloc(a, r->k, sizeof *p->r.heap.v)) == NULL)
        return ERR_NOMEM;
    if (r->list && ((p->r.list = arena_calloc(a, r->k * segs, sizeof *p->r.list)) == NULL ||
                    (p->r.ring = arena_calloc(a, r->k, sizeof *p->r.ring)) == NULL))
        return ERR_NOMEM;
    return 0;
}

/* segs[0..n) newest first (by each segment's newest document) when the
 * page is newest first: take_newest then stops most segments at their
 * first match. Other orders visit them as they come. */
static void order_segments(const struct run *r, size_t *segs, size_t n)
{
    if (r->req->sort != INDEX_SORT_PUBLISHED_DESC)
        return;
    for (size_t i = 1; i < n; i++) {
        size_t x = segs[i], j = i;
        const struct eng_segment *sx = r->snap->segs[x];
        int64_t newest = sx->n ? sx->ids[0] : INT64_MIN;
        for (; j > 0; j--) {
            const struct eng_segment *sy = r->snap->segs[segs[j - 1]];
            if ((sy->n ? sy->ids[0] : INT64_MIN) >= newest)
                break;
            segs[j] = segs[j - 1];
        }
        segs[j] = x;
    }
}

/* Searches this process ran over two threads: /metrics shows it, so that a
 * test (and an operator) can see that searches are split at all. */
static atomic_uint_fast64_t split_searches;

uint64_t eng_split_searches(void)
{
    return (uint64_t)atomic_load(&split_searches);
}

/* Every segment of the snapshot into r (relevancy: its nHits first, then
 * the idf, then the scores): by two threads when split_deal says so (and a
 * thread can be had), else by this one alone. */
static int run_segments(struct run *r, struct arena *a, enum eng_split split, int64_t id_lo,
                        int64_t id_hi)
{
    struct part part[2] = {{.a = a, .id_lo = id_lo, .id_hi = id_hi},
                           {.a = a, .id_lo = id_lo, .id_hi = id_hi}};
    size_t nleaves = r->plan.nleaves ? r->plan.nleaves : 1;
    bool rel = r->idf != NULL, two = split_deal(r, a, split, part), bar_made = false;
    pthread_barrier_t bar;
    pthread_t th;
    int rc;

    if (two) {
        order_segments(r, part[0].segs, part[0].nsegs);
        order_segments(r, part[1].segs, part[1].nsegs);
        two = part_prepare(r, a, &part[1]) == 0;
    }
    if (two && rel) {
        part[0].hits = arena_calloc(a, nleaves, sizeof *part[0].hits);
        part[1].hits = arena_calloc(a, nleaves, sizeof *part[1].hits);
        two = part[0].hits && part[1].hits && pthread_barrier_init(&bar, NULL, 2) == 0;
        bar_made = two;
        part[1].bar = two ? &bar : NULL;
    }
    if (two && pthread_create(&th, NULL, part_main, &part[1]) != 0) {
        two = false;
    }
    if (!two) {
        if (bar_made)
            pthread_barrier_destroy(&bar);
        size_t n = r->snap->nseg, *order = arena_calloc(a, n ? n : 1, sizeof *order);
        int64_t *hits = rel ? arena_calloc(a, nleaves, sizeof *hits) : NULL;
        if (order == NULL || (rel && hits == NULL))
            return ERR_NOMEM;
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        order_segments(r, order, n);
        if (rel) {
            if ((rc = leaf_hits(r, a, order, n, hits)) < 0)
                return rc;
            bm25_idf(r, hits);
        }
        for (size_t i = 0; i < n; i++) {
            if ((rc = run_segment(r, a, order[i], id_lo, id_hi)) < 0)
                return rc;
        }
        return 0;
    }
    atomic_fetch_add(&split_searches, 1);
    part[0].r = *r;
    if (rel) { /* the two halves' nHits, summed into the idf both score with */
        part[0].rc = leaf_hits(&part[0].r, a, part[0].segs, part[0].nsegs, part[0].hits);
        pthread_barrier_wait(&bar);
        for (size_t i = 0; i < r->plan.nleaves; i++)
            part[0].hits[i] += part[1].hits[i];
        bm25_idf(r, part[0].hits); /* r->idf: the array both runs point at */
        pthread_barrier_wait(&bar);
    }
    part_run(&part[0]);
    pthread_join(th, NULL);
    if (bar_made)
        pthread_barrier_destroy(&bar);
    *r = part[0].r;
    if (part[0].rc < 0)
        return part[0].rc;
    if (part[1].rc < 0)
        return part[1].rc;
    const struct run *o = &part[1].r;
    r->total += o->total;
    for (size_t i = 0; i < o->heap.n; i++)
        heap_push(&r->heap, o->heap.v[i]);
    if (o->nlist > 0) {
        memcpy(r->list + r->nlist, o->list, o->nlist * sizeof *o->list);
        r->nlist += o->nlist;
    }
    return 0;
}

static int search_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                      enum eng_split split, const struct eng_visit *visit, uint64_t *total,
                      int64_t **ids, struct eng_doc_ref **refs, size_t *n, struct err *err);

int eng_search_ids(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   enum eng_split split, uint64_t *total, int64_t **ids, struct eng_doc_ref **refs,
                   size_t *n, struct err *err)
{
    return search_run(s, a, req, split, NULL, total, ids, refs, n, err);
}

int eng_search_visit(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                     const struct eng_visit *visit, uint64_t *total, struct err *err)
{
    struct index_request count = *req;
    int64_t *ids;
    size_t n;
    count.offset = count.limit = 0;
    return search_run(s, a, &count, ENG_SPLIT_NEVER, visit, total, &ids, NULL, &n, err);
}

static int search_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                      enum eng_split split, const struct eng_visit *visit, uint64_t *total,
                      int64_t **ids, struct eng_doc_ref **refs, size_t *n, struct err *err)
{
    struct run r = {.snap = s, .req = req, .deadline = req->deadline_ms, .visit = visit};
    int64_t id_lo = store_id_lo(req->from), id_hi = index_request_id_hi(req);
    int rc;

    *total = 0;
    *ids = NULL;
    if (refs)
        *refs = NULL;
    *n = 0;
    if ((rc = eng_plan_build(&r.plan, a, req, err)) < 0)
        return rc;
    /* Phrase scratch (positions per field), one evaluation at a time. */
    r.pa = arena_alloc(a, ENG_FIELDS * sizeof *r.pa);
    r.st = arena_alloc(a, ENG_FIELDS * sizeof *r.st);
    if (r.pa == NULL || r.st == NULL)
        goto nomem;
    if (s->ccache && r.plan.root)
        r.key = plan_key(a, r.plan.root, &r.keylen);
    r.plain = r.plan.root && plain_plan(r.plan.root, false);
    for (size_t i = 0; i < r.plan.nleaves; i++)
        r.term_leaves |= r.plan.leaves[i]->kind == PLAN_TERM;
    if (req->from > req->to || id_lo > id_hi || s->nrow == 0)
        return 0;
    if (req->limit > 0) {
        r.k = req->offset + req->limit;
        if (r.k < req->offset)
            r.k = SIZE_MAX;
        if (r.k > s->nrow)
            r.k = (size_t)s->nrow;
    }
    if (r.k > 0) {
        if (req->sort != INDEX_SORT_PUBLISHED_ASC) {
            r.heap.k = r.k;
            r.heap.v = arena_calloc(a, r.k, sizeof *r.heap.v);
            if (r.heap.v == NULL)
                goto nomem;
        } else {
            r.list = arena_calloc(a, r.k * s->nseg, sizeof *r.list);
            r.ring = arena_calloc(a, r.k, sizeof *r.ring);
            if (r.list == NULL || r.ring == NULL)
                goto nomem;
        }
        if (req->sort == INDEX_SORT_RELEVANCY && (rc = bm25_begin(&r, a)) < 0)
            goto fail;
    }
    if (expired(&r)) { /* a budget already spent fails even a search with no matches */
        rc = ERR_TIMEOUT;
        goto fail;
    }
    if ((rc = run_segments(&r, a, split, id_lo, id_hi)) < 0)
        goto fail;
    *total = r.total;
    if (r.k == 0 || r.total <= req->offset)
        return 0;

    struct cand *v;
    size_t m;
    if (r.heap.v) {
        v = r.heap.v;
        m = r.heap.n;
        qsort(v, m, sizeof *v, cmp_cand);
    } else {
        v = r.list;
        m = r.nlist;
        qsort(v, m, sizeof *v, req->sort == INDEX_SORT_PUBLISHED_ASC ? cmp_id_asc : cmp_id_desc);
    }
    if (m <= req->offset)
        return 0;
    m -= req->offset;
    if (m > req->limit)
        m = req->limit;
    *ids = arena_calloc(a, m, sizeof **ids);
    if (*ids == NULL || (refs && (*refs = arena_calloc(a, m, sizeof **refs)) == NULL))
        goto nomem;
    for (size_t i = 0; i < m; i++) {
        (*ids)[i] = v[req->offset + i].id;
        if (refs)
            (*refs)[i] = v[req->offset + i].at;
    }
    *n = m;
    return 0;
nomem:
    rc = ERR_NOMEM;
fail:
    *total = 0;
    if (rc == ERR_TIMEOUT)
        return err_set(err, ERR_TIMEOUT, "the search ran out of its time budget");
    if (rc == ERR_NOMEM)
        return err_set(err, ERR_NOMEM, "out of memory for a search");
    return rc;
}
