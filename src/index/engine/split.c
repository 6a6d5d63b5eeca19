/* Every segment of a search (search.h), on this thread or over two. */
#include "index/engine/search.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "util/banned.h"

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
    struct eng_term t;
    if (eng_iter_phrase_pair(seg, p, &t)) /* the phrase reads its pair's list alone */
        return t.df;
    if (p->kind == PLAN_TERM || p->kind == PLAN_PHRASE || p->kind == PLAN_NEAR) {
        for (size_t i = 0; i < p->n; i++)
            c += eng_segment_term(seg, p->terms[i], p->lens[i], &t) ? t.df : 0;
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
        p->rc = eng_run_segment(&p->r, p->a, p->segs[i], p->id_lo, p->id_hi);
    return p->rc;
}

static void *part_main(void *arg)
{
    struct part *p = arg;
    if (p->bar) {
        p->rc = eng_run_leaf_hits(&p->r, p->a, p->segs, p->nsegs, p->hits);
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
    if (r->pend_d && eng_rank_pending_new(&p->r, a) < 0)
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
int eng_split_run(struct run *r, struct arena *a, enum eng_split split, int64_t id_lo,
                  int64_t id_hi)
{
    struct part part[2] = {{.a = a, .id_lo = id_lo, .id_hi = id_hi},
                           {.a = a, .id_lo = id_lo, .id_hi = id_hi}};
    size_t nleaves = r->plan.nleaves ? r->plan.nleaves : 1;
    /* relevancy's nHits to count (a cursor walk's frozen ones are given) */
    bool rel = r->idf != NULL && !r->frozen, two = split_deal(r, a, split, part), bar_made = false;
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
            if ((rc = eng_run_leaf_hits(r, a, order, n, hits)) < 0)
                return rc;
            eng_rank_idf(r, hits);
        }
        for (size_t i = 0; i < n; i++) {
            if ((rc = eng_run_segment(r, a, order[i], id_lo, id_hi)) < 0)
                return rc;
        }
        return 0;
    }
    atomic_fetch_add(&split_searches, 1);
    part[0].r = *r;
    if (rel) { /* the two halves' nHits, summed into the idf both score with */
        part[0].rc = eng_run_leaf_hits(&part[0].r, a, part[0].segs, part[0].nsegs, part[0].hits);
        pthread_barrier_wait(&bar);
        for (size_t i = 0; i < r->plan.nleaves; i++)
            part[0].hits[i] += part[1].hits[i];
        eng_rank_idf(r, part[0].hits); /* r->idf: the array both runs point at */
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
