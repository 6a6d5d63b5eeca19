/* One segment of a search (search.h): its docid window, its plan's
 * instance, then the count (a single term's from its skip table, a cached
 * one, else every match) and its share of the page, by iterators or by
 * sets (sets.c); and a leaf's nHit for relevancy (eng_run_leaf_hits). */
#include "index/engine/search.h"

#include "index/engine/columns.h"

#include "util/banned.h"

/* A segment's newest-first page is walked by its iterators, its count
 * cached, when the count is this many times the page's k or more. */
#define WALK_RATIO 16

/* Docid interval [*lo, *hi) of the request's id window in seg. */
static void doc_window(const struct eng_segment *seg, int64_t id_lo, int64_t id_hi, uint32_t *lo,
                       uint32_t *hi)
{
    *lo = eng_segment_first_le(seg, id_hi);
    *hi = id_lo == INT64_MIN ? seg->n : eng_segment_first_le(seg, id_lo - 1);
}

static int run_segment_in(struct run *r, struct arena *a, size_t si, int64_t id_lo, int64_t id_hi)
{
    const struct eng_segment *seg = r->snap->segs[si];
    const struct eng_deletions *deletions = r->snap->deletions[si];
    enum index_sort sort = r->req->sort;
    struct ev ev = {.a = a,
                    .seg = seg,
                    .si = (uint32_t)si,
                    .positions = r->snap->doc_at_a_time,
                    .match_only = sort != INDEX_SORT_RELEVANCY};
    uint32_t lo, hi, d;

    doc_window(seg, id_lo, id_hi, &lo, &hi);
    if (lo >= hi)
        return 0;
    ev.leaf_nodes = arena_calloc(a, r->plan.nleaves + 1, sizeof *ev.leaf_nodes);
    if (sort == INDEX_SORT_RELEVANCY) /* out of memory: no bound by them */
        (void)eng_length_norms((struct eng_segment *)(uintptr_t)seg, &ev.norm);
    ev.pa = r->pa;
    ev.st = r->st;
    if (ev.leaf_nodes == NULL)
        return ERR_NOMEM;
    struct node *root = eng_iter_new(&ev, r->plan.root);
    if (ev.nomem)
        return ERR_NOMEM;
    if (root == NULL)
        return 0;

    /* A page without its count (index_request.no_total), newest first: the
     * window's first live matches until they are too old to enter, by
     * iterators whatever the plan (the set evaluator builds the whole
     * window's sets to count them). */
    if (r->req->no_total && r->k > 0 && sort == INDEX_SORT_PUBLISHED_DESC && !r->visit) {
        for (d = eng_iter_seek(&ev, root, lo); d < hi; d = eng_iter_seek(&ev, root, d + 1)) {
            if (expired(r))
                return ERR_TIMEOUT;
            if (eng_deletions_has(deletions, d))
                continue;
            if (!take_newest(r, seg, ev.si, d))
                break;
            r->total++;
        }
        return 0;
    }

    /* Count path of a single unfiltered term: the skip table, no decoding
     * of whole blocks; the page is the first k postings. */
    if (root->kind == PLAN_TERM && !root->filter && deletions == NULL &&
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
    struct eng_count_cache_key ck = {seg->gen, deletions ? deletions->gen : 0, lo, hi, r->key,
                                     r->keylen};
    uint64_t cached;
    bool known = !r->visit && r->key && eng_count_cache_get(r->snap->count_cache, &ck, &cached);
    /* The page's part of a segment whose count is known: none when the page
     * already holds k matches newer than the segment's newest document; a
     * walk of its iterators newest first when the count is large against k
     * (the page's matches come early); else the sets below, as if the
     * count were not known. A walk pays ~20 ns a posting its leaves pass
     * over, a set ~2 ns a posting of the window: over a sparse AND it read
     * most of its leaves' lists through cursors (and-3 newest first, 10 M,
     * count cache on: 6.9 ms against 1.0 with the cache off). */
    bool newest = sort == INDEX_SORT_PUBLISHED_DESC;
    bool older = r->k == 0 || (newest && r->heap.n == r->heap.k && seg->ids[lo] < r->heap.v[0].id);
    if (known && (older || (newest && cached >= WALK_RATIO * r->k))) {
        for (d = older ? hi : eng_iter_seek(&ev, root, lo); d < hi;
             d = eng_iter_seek(&ev, root, d + 1)) {
            if (!eng_deletions_has(deletions, d) && !take_newest(r, seg, ev.si, d))
                break;
        }
        r->total += cached;
        return 0;
    }

    /* A visitor that takes sets takes them for any plan: a term's matches
     * decode into a set as fast as an OR's (stories AND them with a set).
     * So does a one-term relevancy page (a column-restricted term too): the
     * set's page weighs the term a block at a time and bounds each match
     * before its length is read (rank.c), where the iterators seek it to
     * every match. And a proximity of two paired words: its pairs' sets
     * answer most of it (sets.c near_by_sets), and its relevancy page is
     * bounded from its words weighed (bounds.c) before the plan is sought
     * to a match. And
     * any popularity page: by sets the most popular sources' documents are
     * offered first (sets.c pop_by_source), where the walk reads every
     * match's source, a cache miss each ("Premier League" by popularity at
     * 10 M: 6.0 ms, 72 % of it on that load; 0.7 with a language filter,
     * which made it an AND). */
    bool sets_kind = root->kind == PLAN_AND || root->kind == PLAN_OR || root->kind == PLAN_ANDNOT ||
                     (r->visit && r->visit->set) ||
                     (root->kind == PLAN_NEAR && eng_sets_near(root)) ||
                     (sort == INDEX_SORT_RELEVANCY && r->k > 0 && root->kind == PLAN_TERM) ||
                     (sort == INDEX_SORT_POPULARITY && r->k > 0);
    if (!r->snap->doc_at_a_time && sets_kind && eng_sets_use(r, seg, root, lo, hi))
        return eng_sets_run_segment(r, &ev, si, root, lo, hi, &ck, known);

    size_t ring_n = 0;
    uint64_t here = 0;
    bool taking = true; /* newest first: matches may still enter the page */
    for (d = eng_iter_seek(&ev, root, lo); d < hi; d = eng_iter_seek(&ev, root, d + 1)) {
        if (eng_deletions_has(deletions, d))
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
                heap_offer(r, (struct cand){pop, seg->ids[d], {ev.si, d}});
            break;
        }
        case INDEX_SORT_RELEVANCY:
            eng_rank_match(r, &ev, d);
            break;
        }
    }
    if (sort == INDEX_SORT_RELEVANCY)
        eng_rank_flush(r);
    if (r->key && !known)
        eng_count_cache_put(r->snap->count_cache, &ck, here);
    if (sort == INDEX_SORT_PUBLISHED_ASC) {
        size_t m = ring_n < r->k ? ring_n : r->k;
        for (size_t i = 0; i < m; i++)
            r->list[r->nlist++] = r->ring[(ring_n - m + i) % r->k];
    }
    return 0;
}

/* One segment, its iterators in a scratch arena (see leaf_hits); what the
 * page keeps goes to r's arrays, allocated before. */
int eng_run_segment(struct run *r, struct arena *a, size_t si, int64_t id_lo, int64_t id_hi)
{
    struct arena scratch;
    arena_init(&scratch, a->limit);
    int rc = run_segment_in(r, &scratch, si, id_lo, id_hi);
    arena_release(&scratch);
    return rc;
}

static int leaf_hits_segment(struct run *r, struct arena *a, size_t s, const struct plan *leaf,
                             const char *key, size_t keylen, int64_t *hits)
{
    struct ev ev = {.a = a, .seg = r->snap->segs[s], .positions = r->snap->doc_at_a_time};
    const struct eng_deletions *deletions = r->snap->deletions[s];
    struct eng_count_cache_key ck = {ev.seg->gen, deletions ? deletions->gen : 0, 0, ev.seg->n, key,
                                     keylen};
    uint64_t cached;
    if (key && eng_count_cache_get(r->snap->count_cache, &ck, &cached)) {
        *hits += (int64_t)cached;
        return 0;
    }
    struct node *dummy[1];
    struct plan copy = *leaf;
    copy.leaf = -1;
    ev.leaf_nodes = dummy;
    ev.pa = r->pa;
    ev.st = r->st;
    struct node *n = eng_iter_new(&ev, &copy);
    if (ev.nomem)
        return ERR_NOMEM;
    if (n == NULL)
        return 0;
    if (n->kind == PLAN_TERM && !n->filter && deletions == NULL) {
        *hits += n->cur[0].t->df;
        return 0;
    }
    uint64_t here = 0;
    /* as sets where they pay: a proximity whose pairs answer it ("Premier
     * League"~3 by relevancy at 10 M: its hits walked by iterators were
     * as long as its whole count), a term (column-restricted or not: its
     * heads read in a walk) of more than a posting per 256 documents less
     * its deletions (a set costs a word per 64 documents to clear and
     * count; a word's rare forms walk their few postings) */
    if (!ev.positions && ((n->kind == PLAN_NEAR && eng_sets_near(n)) ||
                          (n->kind == PLAN_TERM && n->cur[0].t->df > ev.seg->n / 256))) {
        int rc = eng_sets_count(r, &ev, n, deletions, &here);
        if (rc < 0)
            return rc;
    } else {
        for (uint32_t d = eng_iter_seek(&ev, n, 0); d != ENG_END;
             d = eng_iter_seek(&ev, n, d + 1)) {
            if (!eng_deletions_has(deletions, d))
                here++;
            if (expired(r))
                return ERR_TIMEOUT;
        }
    }
    *hits += (int64_t)here;
    if (key)
        eng_count_cache_put(r->snap->count_cache, &ck, here);
    return 0;
}

/* nHit of FTS5's bm25 (live documents matching a leaf anywhere), of every
 * leaf over segs[0..nsegs), added to hits[leaf]. Each segment's iterators
 * live in a scratch arena dropped after it (limit: a's): a query of
 * hundreds of words over many segments would otherwise pile them all up in
 * the request's arena. */
int eng_run_leaf_hits(struct run *r, const struct arena *a, const size_t *segs, size_t nsegs,
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
