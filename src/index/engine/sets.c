/* The set evaluator of a search (search.h): a plan's matches in a docid
 * window as bitsets, the count a popcount and the page read off the set. */
#include "index/engine/search.h"
#include "index/engine/columns.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

#include "util/banned.h"

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

/* A language or source term is read from its facet column (facet_cols.c)
 * when its postings exceed this many per candidate: a column read is a
 * load per candidate (~3 ns), a decoded posting ~1.5 ns and its share of
 * the AND over the window's words. */
#define COLUMN_RATIO 4

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

/* v &= t (neg: v &= ~t), counting what is left in the same pass: a
 * narrowing was followed by a count of its own over the window's words
 * (the 10 M mix over 16 clients: count_popcnt 5 %). */
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("popcnt"))) static uint64_t and_count_popcnt(uint64_t *v, const uint64_t *t,
                                                                   uint32_t nw, uint64_t flip)
{
    uint64_t c = 0;
    for (uint32_t w = 0; w < nw; w++) {
        v[w] &= t[w] ^ flip;
        c += (uint64_t)__builtin_popcountll(v[w]);
    }
    return c;
}
#endif

static uint64_t set_and_count(const struct sets *b, uint64_t *v, const uint64_t *t, bool neg)
{
    uint64_t flip = neg ? ~(uint64_t)0 : 0, c = 0;
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("popcnt"))
        return and_count_popcnt(v, t, b->nw, flip);
#endif
    for (uint32_t w = 0; w < b->nw; w++) {
        v[w] &= t[w] ^ flip;
        c += bits_pop(v[w]);
    }
    return c;
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
        c = eng_sets_window_df(b, n->cur[0].t->df);
        return n->filter ? 4 * c : c; /* a filter term decodes each posting's data */
    case PLAN_PHRASE:
    case PLAN_NEAR:
        c = UINT64_MAX;
        for (size_t i = 0; i < n->n; i++) {
            uint64_t d = eng_sets_window_df(b, n->cur[i].t->df);
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
    uint64_t c = n->kind == PLAN_TERM || n->kind == PLAN_PHRASE || n->kind == PLAN_NEAR ? n->n : 0;
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

/* Clears the candidates of v where n matches (drop) or does not (keep);
 * *left the candidates left, counted on the way rather than by a pass over
 * every word of the window after it. A probe has few candidates in a
 * window of many words: the empty words are passed over by a scan that
 * does nothing else. (The profile of the and-3 shape at 1 M put a tenth of
 * its search on the probe's words and the count after it; alternated, the
 * change measured 0.984, within the noise: kept for the pass it removes.) */
static int set_probe(struct sets *b, struct node *n, uint64_t *v, bool drop, uint64_t *left)
{
    uint64_t c = 0;
    for (uint32_t w = 0; w < b->nw; w++) {
        if (v[w] == 0)
            continue;
        uint64_t bits = v[w];
        for (uint64_t x = bits; x; x &= x - 1) {
            unsigned i = bits_low(x);
            uint32_t d = b->base + (uint32_t)w * 64 + i;
            if ((eng_iter_seek(b->ev, n, d) == d) == drop)
                bits &= ~((uint64_t)1 << i);
        }
        v[w] = bits;
        c += bits_pop(bits);
        if (expired(b->r))
            return ERR_TIMEOUT;
    }
    *left = c;
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
    /* A broad language or source filter (a language: most documents) read
     * at each candidate from its facet column, a load a candidate, rather
     * than its postings decoded (q=people&language=en at 10 M: 8.5 million
     * postings for 332,719 candidates) */
    uint64_t cost = set_cost(b, n);
    if (n->kind == PLAN_TERM && !n->filter && cost > COLUMN_RATIO * *cand) {
        int rc = eng_facet_column_narrow((struct eng_segment *)(uintptr_t)b->ev->seg, n->cur[0].t,
                                         v, b->base, b->nw, neg);
        if (rc != 0) {
            *cand = set_count(b, v);
            return rc < 0 ? rc : 0;
        }
    }
    if (cost > PROBE_RATIO * *cand * node_cursors(n))
        return set_probe(b, n, v, neg, cand);
    uint64_t *t = set_new(b);
    int rc;
    if (t == NULL)
        return ERR_NOMEM;
    if ((rc = set_build(b, n, t)) < 0)
        return rc;
    *cand = set_and_count(b, v, t, neg);
    set_done(b, t);
    return 0;
}

bool eng_sets_near(const struct node *n)
{
    return n->n == 2 && n->near_pairs && (n->colset & INDEX_FIELD_ALL) == INDEX_FIELD_ALL;
}

/* A proximity of two paired words (iter.c near_pairs) over all columns
 * into out, as sets: its words' lists ANDed; the candidates where a pair
 * of the two ("a b" or "b a": a window of any distance) holds them match,
 * the others are checked by their words' positions. Walked a candidate at a
 * time, a leapfrog of both words and a seek of both pairs each
 * ("Premier League"~3 newest first at 10 M: 7 ms for 117,266 matches).
 * 1 when n is no such proximity (built by its iterators then). */
static int near_by_sets(struct sets *b, struct node *n, uint64_t *out)
{
    const struct eng_segment *seg = b->ev->seg;
    if (!eng_sets_near(n))
        return 1;
    uint64_t *t = set_new(b);
    if (t == NULL)
        return ERR_NOMEM;
    eng_postings_fill(seg, n->cur[0].t, b->lo, b->hi, out, b->base);
    eng_postings_fill(seg, n->cur[1].t, b->lo, b->hi, t, b->base);
    uint64_t cand = set_and_count(b, out, t, false);
    if (cand > 0) {
        memset(t, 0, (size_t)b->nw * sizeof *t);
        for (int k = 0; k < 2; k++) {
            if (n->near_pairs[k].t)
                eng_postings_fill(seg, n->near_pairs[k].t, b->lo, b->hi, t, b->base);
        }
        for (uint32_t w = 0; w < b->nw; w++) { /* t: the unpaired candidates */
            uint64_t unpaired = out[w] & ~t[w];
            out[w] &= t[w];
            t[w] = unpaired;
        }
        for (uint32_t w = 0; w < b->nw; w++) { /* the unpaired by positions */
            for (uint64_t bits = t[w]; bits; bits &= bits - 1) {
                unsigned i = bits_low(bits);
                if (eng_iter_near_at(b->ev, n, b->base + w * 64 + i))
                    out[w] |= (uint64_t)1 << i;
            }
            if (expired(b->r))
                return ERR_TIMEOUT;
        }
    }
    set_done(b, t);
    return 0;
}

/* n's matches in the window into out (all zero on entry). */
static int set_build(struct sets *b, struct node *n, uint64_t *out)
{
    int rc;
    if (expired(b->r))
        return ERR_TIMEOUT;
    switch (n->kind) {
    case PLAN_TERM: /* (a column-restricted term: its postings in its columns) */
        eng_postings_fill_in(b->ev->seg, n->cur[0].t, eng_node_cols(n), b->lo, b->hi, out, b->base);
        return 0;
    case PLAN_OR:
        for (size_t i = 0; i < n->nkids; i++) {
            struct node *k = n->kids[i];
            if (k->kind == PLAN_TERM) { /* a term only adds bits: straight into out */
                if ((rc = set_build(b, k, out)) < 0)
                    return rc;
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
    case PLAN_NEAR:
        if ((rc = near_by_sets(b, n, out)) <= 0)
            return rc;
        break;
    case PLAN_PHRASE:
        break;
    }
    /* by its iterators: phrases, proximities */
    for (uint32_t d = eng_iter_seek(b->ev, n, b->lo); d < b->hi;
         d = eng_iter_seek(b->ev, n, d + 1)) {
        out[(d - b->base) >> 6] |= (uint64_t)1 << ((d - b->base) & 63);
        if (expired(b->r))
            return ERR_TIMEOUT;
    }
    return 0;
}

/* n has a node whose relevancy the set evaluator reads by its iterators: a
 * phrase or proximity built by them; a column-restricted term when the
 * plan is not plain (its relevancy page weighs such terms in their
 * columns: rank.c; a phrase of a pair is one, title:"Premier League" by
 * relevancy at 10 M 5.6 ms document at a time, 6.4 by sets). */
static bool iterated(const struct node *n, bool plain)
{
    if (n->kind == PLAN_PHRASE || (n->kind == PLAN_NEAR && !eng_sets_near(n)) ||
        (n->kind == PLAN_TERM && n->filter && !plain))
        return true;
    for (size_t i = 0; i < n->nkids; i++) {
        if (iterated(n->kids[i], plain))
            return true;
    }
    return false;
}

/* Sets pay when the plan decodes more than a few postings per word of the
 * set: a set costs a zeroed word and a scan per 64 docids, whatever it
 * holds (a rare word's OR of forms is faster by its iterators). */
bool eng_sets_use(const struct run *r, const struct eng_segment *seg, struct node *root,
                  uint32_t lo, uint32_t hi)
{
    struct sets b = {.lo = lo, .hi = hi, .scale_num = hi - lo, .scale_den = seg->n ? seg->n : 1};
    /* Relevancy seeks a second instance to every match: a phrase, built by
     * its iterators, would decode its positions (data) twice. Measured:
     * the phrase shape with a language filter, relevancy, 3.2 -> 5.4 ms
     * through sets. */
    if (r->req->sort == INDEX_SORT_RELEVANCY && r->k > 0 && iterated(root, r->plain))
        return false;
    return set_cost(&b, root) > (hi - lo) / 64 / 4;
}

int eng_sets_count(struct run *r, struct ev *ev, struct node *n,
                   const struct eng_deletions *deletions, uint64_t *count)
{
    const struct eng_segment *seg = ev->seg;
    struct sets b = {.ev = ev, .r = r, .lo = 0, .hi = seg->n, .base = 0};
    b.nw = (seg->n + 63) / 64;
    b.scale_num = b.scale_den = 1;
    uint64_t *v = set_new(&b);
    int rc = v == NULL ? ERR_NOMEM : set_build(&b, n, v);
    if (rc == 0 && ev->nomem)
        rc = ERR_NOMEM;
    if (rc == 0)
        *count = deletions ? set_and_count(&b, v, deletions->bits, true) : set_count(&b, v);
    sets_release(&b);
    return rc;
}

/* Segment si by the set evaluator (run_segment_in: root is a fresh AND, OR
 * or NOT instance over the window [lo, hi)); count and page as there. */
static int sets_page(struct run *r, struct ev *ev, struct sets *b, const uint64_t *v, uint64_t nm);

int eng_sets_run_segment(struct run *r, struct ev *ev, size_t si, struct node *root, uint32_t lo,
                         uint32_t hi, const struct eng_count_cache_key *ck, bool known)
{
    const struct eng_segment *seg = ev->seg;
    const struct eng_deletions *deletions = r->snap->deletions[si];
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
        uint64_t here = deletions ? set_and_count(&b, v, deletions->bits + (b.base >> 6), true)
                                  : set_count(&b, v);
        r->total += here;
        if (r->visit && r->visit->set) /* eng_search_visit */
            r->visit->set(r->visit->ctx, ev->si, b.base, b.nw, v);
        for (uint32_t w = 0; r->visit && !r->visit->set && w < b.nw; w++)
            for (uint64_t bits = v[w]; bits; bits &= bits - 1)
                r->visit->doc(r->visit->ctx, ev->si, b.base + w * 64 + bits_low(bits));
        if (r->key && !known)
            eng_count_cache_put(r->snap->count_cache, ck, here);
        if (r->k > 0 && here > 0)
            rc = sets_page(r, ev, &b, v, here);
    }
    sets_release(&b);
    return rc;
}

/* Source k's docids in the window: [*a, *z) of sd->docs. */
static void source_window(const struct eng_source_docs *sd, uint32_t k, const struct sets *b,
                          const uint32_t **a, const uint32_t **z)
{
    const uint32_t *p = sd->docs + (k < sd->nsrc ? sd->off[k] : 0);
    size_t n = k < sd->nsrc ? sd->off[k + 1] - sd->off[k] : 0;
    *a = p + sort_lower_bound(p, n, sizeof *p, &b->lo, sort_u32_before);
    *z = p + sort_lower_bound(p, n, sizeof *p, &b->hi, sort_u32_before);
}

/* The popularity page's scan: each match of v keyed by its source's
 * popularity (unlisted: only those of unlisted sources, -1) into the
 * heap. (Asking for the sources of the matches eight words ahead was
 * tried: the mix's popularity lines at 10 M, no faster.) */
static void pop_scan(struct run *r, const struct ev *ev, const struct sets *b, const uint64_t *v,
                     bool unlisted)
{
    const struct eng_segment *seg = ev->seg;
    const struct eng_snap *snap = r->snap;
    uint32_t d[64], src[64];
    for (uint32_t w = 0; w < b->nw; w++) {
        /* a word's sources read first, no branch between the loads, so
         * that they miss the cache together rather than one at a time
         * behind each match's branch on the heap (the 10 M mix over 16
         * clients: this scan 6 %, nearly all of it those loads) */
        uint32_t n = 0;
        for (uint64_t bits = v[w]; bits; bits &= bits - 1, n++) {
            d[n] = b->base + w * 64 + bits_low(bits);
            src[n] = seg->src[d[n]];
        }
        for (uint32_t k = 0; k < n; k++) {
            double pop = src[k] < snap->npop ? snap->pop[src[k]] : -1.0;
            if ((!unlisted || pop == -1.0) && heap_may_take(&r->heap, pop))
                heap_offer(r, (struct cand){pop, seg->ids[d[k]], {ev->si, d[k]}});
        }
    }
}

/* The popularity page by sources, the most popular first (a match's key
 * is its source's popularity): each listed source's documents in the
 * window that are matches offered to the heap, a group of equal
 * popularity at a time, until the heap is full and the next group's
 * popularity is below its worst; then the matches of unlisted sources
 * (-1), by a scan, when they can still enter. The scan reads every
 * match's source, a cache miss each (profile of the mix at 10 M over 16
 * clients: 7 % of the server). 1 when the walk would not pay (the caller
 * scans): the first group holds more window documents than four per
 * match (nm, counted by the caller). */
static int pop_by_source(struct run *r, const struct ev *ev, const struct sets *b,
                         const uint64_t *v, uint64_t nm)
{
    const struct eng_snap *snap = r->snap;
    const struct eng_segment *seg = ev->seg;
    const struct eng_source_docs *sd;
    const uint32_t *a, *z;
    if (snap->nlisted == 0)
        return 1;
    uint64_t first = 0;
    if (eng_source_docs((struct eng_segment *)(uintptr_t)seg, &sd) < 0)
        return 1; /* out of memory: the scan needs none */
    double top = snap->pop[snap->listed[0]];
    for (size_t i = 0; i < snap->nlisted && snap->pop[snap->listed[i]] == top; i++) {
        source_window(sd, snap->listed[i], b, &a, &z);
        first += (uint64_t)(z - a);
    }
    if (first > 4 * nm)
        return 1;
    for (size_t i = 0; i < snap->nlisted;) {
        double pop = snap->pop[snap->listed[i]];
        if (!heap_may_take(&r->heap, pop))
            break; /* nor can any after it (but the unlisted, -1, may be above) */
        for (; i < snap->nlisted && snap->pop[snap->listed[i]] == pop; i++) {
            source_window(sd, snap->listed[i], b, &a, &z);
            for (; a < z; a++) {
                if (!bits_get(v, *a - b->base))
                    continue;
                struct cand c = {pop, seg->ids[*a], {ev->si, *a}};
                /* a later docid of the source is an older id of the same
                 * key: when this one cannot enter, none of them can (its
                 * id read only for a match: a cache miss each, 22 % of
                 * this function when every match of the group was read) */
                if (r->heap.n == r->heap.k && !before(&c, &r->heap.v[0]))
                    break;
                heap_offer(r, c);
            }
        }
        if (expired(r))
            return ERR_TIMEOUT;
    }
    if (heap_may_take(&r->heap, -1.0))
        pop_scan(r, ev, b, v, true);
    return 0;
}

/* The page's share of segment ev->seg from its matches v (nm of them). */
static int sets_page(struct run *r, struct ev *ev, struct sets *sb, const uint64_t *v, uint64_t nm)
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
    case INDEX_SORT_POPULARITY: {
        int rc = pop_by_source(r, ev, &b, v, nm);
        if (rc <= 0)
            return rc;
        pop_scan(r, ev, &b, v, false);
        return 0;
    }
    case INDEX_SORT_RELEVANCY: {
        /* a second instance, sought to each match: its scored leaves then
         * sit where the document-at-a-time walk leaves them */
        struct ev ev2 = *ev;
        ev2.leaf_nodes = arena_calloc(ev->a, r->plan.nleaves + 1, sizeof *ev2.leaf_nodes);
        if (ev2.leaf_nodes == NULL)
            return ERR_NOMEM;
        struct node *root2 = eng_iter_new(&ev2, r->plan.root);
        if (ev2.nomem)
            return ERR_NOMEM;
        if (r->plain && root2) { /* from the tiers, else a term at a time */
            int rc = eng_rank_tiers(r, &ev2, &b, v, (uint32_t)nm);
            if (rc == 1)
                rc = eng_rank_weigh_page(r, &ev2, &b, v);
            if (rc <= 0)
                return rc;
        }
        struct eng_rank_bounds *bd =
            !r->plain && root2 ? eng_rank_bounds_new(r, &ev2, &b, v) : NULL;
        uint32_t m = 0;
        for (uint32_t w = 0; w < b.nw && root2; w++) {
            /* the length bytes the bounds read, a cache line a word of
             * the set, asked for four words ahead (the bound's load of
             * them was 39 % of it, "Premier League"~3 at 10 M) */
            if (bd && ev2.norm && w + 4 < b.nw && v[w + 4])
                __builtin_prefetch(&ev2.norm[b.base + (w + 4) * 64]);
            for (uint64_t bits = v[w]; bits; bits &= bits - 1, m++) {
                uint32_t d = b.base + w * 64 + bits_low(bits);
                if (bd && r->heap.n == r->heap.k && eng_rank_bounds_below(r, bd, &ev2, m, d))
                    continue;   /* cannot enter: not sought */
                if (r->plain) { /* the scored leaves alone (plain_plan) */
                    for (size_t i = 0; i < r->plan.nleaves; i++) {
                        struct node *n = ev2.leaf_nodes[i];
                        if (n) /* a term's cursor, or its pair's (pairs.h) */
                            eng_iter_seek(&ev2, n, d);
                    }
                    eng_rank_match(r, &ev2, d);
                } else if (eng_iter_seek(&ev2, root2, d) == d) { /* always: d matches */
                    eng_rank_match(r, &ev2, d);
                }
            }
            if (expired(r)) {
                eng_rank_bounds_free(bd);
                return ERR_TIMEOUT;
            }
        }
        eng_rank_bounds_free(bd);
        eng_rank_flush(r);
        return 0;
    }
    }
    return 0;
}
