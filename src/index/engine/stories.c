/* Each match's story (index_story_matches, index.h) over a snapshot: per
 * segment a column holding each docid's story, so that a match costs one
 * array read; the matches come from the search's visitor
 * (eng_search_visit), as facets' do.
 *
 * The column is not in the segment files: a story id belongs to the row
 * (articles.story_id, replicated to every node), and reading it back for a
 * segment is one range scan of the table's primary key (ids are the
 * segment's, descending), done the first time a search asks for stories
 * of that segment and kept with it (docs/engine.md "Stories"). A segment
 * file of an older build then needs no rebuild, and an assignment made
 * better later (story/) reaches the index with the rows. */
#include "index/engine/internal.h"
#include "index/engine/columns.h"
#include "index/engine/search.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/journal.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/banned.h"

/* Columns are built one at a time: two searches asking for the same
 * segment's wait for one build. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

struct col_fill {
    const struct eng_segment *seg;
    int64_t *col;
};

static int col_row(void *ctx, int64_t id, int64_t story)
{
    struct col_fill *f = ctx;
    uint32_t d = eng_segment_find(f->seg, id);
    if (d != ENG_END)
        f->col[d] = story;
    return 0;
}

int eng_story_column(struct eng_segment *s, struct store_readers *readers, const int64_t **out,
                     struct err *err)
{
    int64_t *col = atomic_load(&s->story);
    struct store_reader *r = NULL;
    int rc = 0;
    if (col) {
        *out = col;
        return 0;
    }
    pthread_mutex_lock(&build_lock);
    if ((col = atomic_load(&s->story)) != NULL)
        goto out;
    if ((col = calloc(s->n ? s->n : 1, sizeof *col)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory for a story column");
        goto out;
    }
    /* A docid the table no longer has (deleted since the segment was
     * built, so not live either) is its own story: its id. */
    for (uint32_t d = 0; d < s->n; d++)
        col[d] = s->ids[d];
    if (s->n > 0) {
        struct col_fill f = {s, col};
        if ((rc = store_readers_get(readers, &r, err)) == 0)
            rc = store_reader_stories(r, s->ids[s->n - 1], s->ids[0], col_row, &f, err);
        store_readers_put(readers, r);
    }
    if (rc < 0) {
        free(col);
        col = NULL;
        goto out;
    }
    atomic_store(&s->story, col);
out:
    pthread_mutex_unlock(&build_lock);
    *out = col;
    return rc;
}

/* --- which docids are alone in their story ----------------------------------
 * Most articles of a feed are the only one of their story; a search by
 * story counts those matches with a popcount (matches AND alone) instead of
 * listing and grouping each (docs/stories.md "Speed"). Alone is a property
 * of the whole index, so a segment's set is its own (built once from its
 * column: a story met twice clears both docids) and then checked against
 * each other segment of the snapshot once (alone_pair: the smaller
 * segment's stories looked up in the larger one's table). A deleted
 * document still counts as a member: its story's others are listed, and
 * listing is always exact; only counting a match as alone needs its bit
 * to be true. */

static pthread_mutex_t alone_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void alone_clear(struct eng_story_alone *al, uint32_t d)
{
    atomic_fetch_and_explicit(&al->bits[d >> 6], ~((uint64_t)1 << (d & 63)), memory_order_relaxed);
}

static inline bool alone_has(const struct eng_story_alone *al, uint32_t d)
{
    return atomic_load_explicit(&al->bits[d >> 6], memory_order_relaxed) >> (d & 63) & 1;
}

static inline uint32_t alone_hash(const struct eng_story_alone *al, int64_t story)
{
    return (uint32_t)hash_fib((uint64_t)story, al->shift);
}

/* A docid with story in the segment of al and col, or ENG_END. */
static uint32_t alone_find(const struct eng_story_alone *al, const int64_t *col, int64_t story)
{
    uint32_t mask = (uint32_t)(UINT64_MAX >> al->shift);
    for (uint32_t h = alone_hash(al, story); al->slot[h] != ENG_END; h = (h + 1) & mask)
        if (col[al->slot[h]] == story)
            return al->slot[h];
    return ENG_END;
}

/* s's own set: the docids alone in s. NULL when out of memory. */
static struct eng_story_alone *alone_build(const struct eng_segment *s, const int64_t *col)
{
    struct eng_story_alone *al = calloc(1, sizeof *al);
    uint64_t slots = 16;
    uint32_t shift = 60;
    while (slots < (uint64_t)s->n + s->n / 3 + 1) { /* at most 3/4 full */
        slots *= 2;
        shift--;
    }
    if (al == NULL || (al->bits = calloc(s->n / 64 + 1, sizeof *al->bits)) == NULL ||
        (al->slot = malloc(slots * sizeof *al->slot)) == NULL) {
        if (al)
            free((void *)al->bits);
        free(al);
        return NULL;
    }
    al->shift = shift;
    memset(al->slot, 0xff, slots * sizeof *al->slot); /* ENG_END */
    for (uint32_t d = 0; d < s->n; d++) {
        uint32_t h = alone_hash(al, col[d]);
        while (al->slot[h] != ENG_END && col[al->slot[h]] != col[d])
            h = (h + 1) & (uint32_t)(slots - 1);
        if (al->slot[h] == ENG_END) {
            al->slot[h] = d;
            atomic_fetch_or_explicit(&al->bits[d >> 6], (uint64_t)1 << (d & 63),
                                     memory_order_relaxed);
        } else {
            alone_clear(al, al->slot[h]); /* (d's own bit was never set) */
        }
    }
    return al;
}

static bool alone_paired(const struct eng_story_alone *al, uint64_t gen)
{
    for (size_t i = 0; i < al->npaired; i++)
        if (al->paired[i] == gen)
            return true;
    return false;
}

static int alone_note(struct eng_story_alone *al, uint64_t gen)
{
    if (array_reserve(&al->paired, &al->cap, al->npaired, 1, sizeof *al->paired) < 0)
        return -1;
    al->paired[al->npaired++] = gen;
    return 0;
}

/* A story of both segments is alone in neither. */
static void alone_pair(const struct eng_segment *x, const int64_t *xcol,
                       const struct eng_segment *y, const int64_t *ycol)
{
    if (x->n > y->n) { /* the smaller one's docids looked up in the larger */
        const struct eng_segment *t = x;
        const int64_t *tc = xcol;
        x = y;
        xcol = ycol;
        y = t;
        ycol = tc;
    }
    struct eng_story_alone *xa = atomic_load(&x->alone), *ya = atomic_load(&y->alone);
    for (uint32_t d = 0; d < x->n; d++) {
        uint32_t e = alone_find(ya, ycol, xcol[d]);
        if (e != ENG_END) {
            alone_clear(xa, d);
            alone_clear(ya, e);
        }
    }
}

/* Every segment of s has its set, checked against every other of s. */
static int alone_ready(const struct eng_snap *s, const int64_t *const *col, struct err *err)
{
    int rc = 0;
    pthread_mutex_lock(&alone_lock);
    for (size_t i = 0; i < s->nseg && rc == 0; i++) {
        struct eng_segment *seg = s->segs[i];
        struct eng_story_alone *al = atomic_load(&seg->alone);
        if (al == NULL && (al = alone_build(seg, col[i])) == NULL)
            rc = err_set(err, ERR_NOMEM, "out of memory for stories");
        else if (al)
            atomic_store(&seg->alone, al);
    }
    for (size_t i = 0; i < s->nseg && rc == 0; i++) {
        struct eng_story_alone *ai = atomic_load(&s->segs[i]->alone);
        for (size_t j = i + 1; j < s->nseg && rc == 0; j++) {
            struct eng_story_alone *aj = atomic_load(&s->segs[j]->alone);
            if (alone_paired(ai, s->segs[j]->gen))
                continue;
            alone_pair(s->segs[i], col[i], s->segs[j], col[j]);
            if (alone_note(ai, s->segs[j]->gen) < 0 || alone_note(aj, s->segs[i]->gen) < 0)
                rc = err_set(err, ERR_NOMEM, "out of memory for stories");
        }
    }
    pthread_mutex_unlock(&alone_lock);
    return rc;
}

/* Every segment's story column of s into col[0..nseg). */
static int story_columns(const struct eng_snap *s, struct store_readers *readers,
                         const int64_t **col, struct err *err)
{
    int rc = 0;
    for (size_t si = 0; si < s->nseg && rc == 0; si++)
        rc = eng_story_column(s->segs[si], readers, &col[si], err);
    return rc;
}

int eng_story_alone_ready(const struct eng_snap *s, struct store_readers *readers, struct err *err)
{
    const int64_t **col = calloc(s->nseg ? s->nseg : 1, sizeof *col);
    if (col == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for stories");
    int rc = story_columns(s, readers, col, err);
    if (rc == 0)
        rc = alone_ready(s, col, err);
    free(col);
    return rc;
}

/* --- each match's story ------------------------------------------------------ */

/* The keep matches alone in their story with the highest ids (newest) or
 * the lowest: a heap whose root is the worst kept, grown as matches come
 * (a deep page asks for a large keep; the matches may be few). */
struct keep_heap {
    struct index_story_match *v;
    size_t n, cap, k;
    bool newest, nomem;
};

static inline bool keep_worse(const struct keep_heap *h, int64_t a, int64_t b)
{
    return h->newest ? a < b : a > b;
}

/* Whether m entered the heap (false: it is worse than every kept one). */
static bool keep_push(struct keep_heap *h, struct index_story_match m)
{
    size_t i;
    if (h->k == 0)
        return false;
    if (h->n < h->k && (h->nomem || array_reserve(&h->v, &h->cap, h->n, 1, sizeof *h->v) < 0)) {
        h->nomem = true;
        return false;
    }
    if (h->n < h->k) {
        for (i = h->n++; i > 0 && keep_worse(h, m.id, h->v[(i - 1) / 2].id); i = (i - 1) / 2)
            h->v[i] = h->v[(i - 1) / 2];
        h->v[i] = m;
        return true;
    }
    if (!keep_worse(h, h->v[0].id, m.id))
        return false;
    for (i = 0;;) { /* m replaces the root, sifted down */
        size_t l = 2 * i + 1, r = l + 1, w = i;
        int64_t wid = m.id;
        if (l < h->n && keep_worse(h, h->v[l].id, wid)) {
            w = l;
            wid = h->v[l].id;
        }
        if (r < h->n && keep_worse(h, h->v[r].id, wid))
            w = r;
        if (w == i)
            break;
        h->v[i] = h->v[w];
        i = w;
    }
    h->v[i] = m;
    return true;
}

/* m[0..n) into a copy in the arena at *out (NULL when n is 0); -1 when out
 * of memory. */
static int matches_to_arena(struct arena *a, const struct index_story_match *m, size_t n,
                            struct index_story_match **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    if ((*out = arena_alloc(a, n * sizeof **out)) == NULL)
        return -1;
    memcpy(*out, m, n * sizeof **out);
    return 0;
}

static int cmp_match_id_desc(const void *x, const void *y)
{
    const struct index_story_match *a = x, *b = y;
    return a->id > b->id ? -1 : a->id < b->id;
}

struct matches_run {
    const int64_t **col; /* per segment of the snapshot */
    const struct eng_snap *snap;
    bool split; /* alone matches counted and kept at the ends, not listed */
    uint64_t alone;
    struct keep_heap newest, oldest;
    struct index_story_match *m;
    size_t n, cap;
    bool nomem;
};

static inline struct index_story_match match_at(const struct matches_run *r, uint32_t si,
                                                uint32_t doc)
{
    return (struct index_story_match){r->snap->segs[si]->ids[doc], r->col[si][doc]};
}

static void match_add(struct matches_run *r, uint32_t si, uint32_t doc)
{
    if (r->nomem || array_reserve(&r->m, &r->cap, r->n, 1, sizeof *r->m) < 0) {
        r->nomem = true;
        return;
    }
    r->m[r->n++] = match_at(r, si, doc);
}

static void match_doc(void *ctx, uint32_t si, uint32_t doc)
{
    struct matches_run *r = ctx;
    if (!r->split || !alone_has(atomic_load(&r->snap->segs[si]->alone), doc)) {
        match_add(r, si, doc);
        return;
    }
    r->alone++;
    keep_push(&r->newest, match_at(r, si, doc));
    keep_push(&r->oldest, match_at(r, si, doc));
}

/* A segment's matches as a set: the alone ones counted (each word of the
 * alone set read once, so that a bit cleared meanwhile puts its match on
 * one side, never both), the others listed; the keep newest alone are the
 * segment's lowest docids, the keep earliest its highest. */
static void match_set(void *ctx, uint32_t si, uint32_t base, uint32_t nw, const uint64_t *v)
{
    struct matches_run *r = ctx;
    const struct eng_story_alone *al = r->split ? atomic_load(&r->snap->segs[si]->alone) : NULL;
    bool newest = r->newest.k > 0, oldest = r->oldest.k > 0;
    uint32_t first = 0, last = 0; /* the words holding alone matches: [first, last) */
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t one =
            al ? atomic_load_explicit(&al->bits[(base >> 6) + w], memory_order_relaxed) & v[w] : 0;
        for (uint64_t bits = v[w] & ~one; bits; bits &= bits - 1)
            match_add(r, si, base + w * 64 + bits_low(bits));
        if (one == 0)
            continue;
        if (last == 0)
            first = w;
        last = w + 1;
        r->alone += bits_pop(one);
        for (; newest && one; one &= one - 1)
            newest = keep_push(&r->newest, match_at(r, si, base + w * 64 + bits_low(one)));
    }
    for (uint32_t w = last; oldest && w-- > first;) {
        uint64_t one =
            atomic_load_explicit(&al->bits[(base >> 6) + w], memory_order_relaxed) & v[w];
        while (one && oldest) {
            unsigned i = bits_high(one);
            one &= ~((uint64_t)1 << i);
            oldest = keep_push(&r->oldest, match_at(r, si, base + w * 64 + i));
        }
    }
}

int eng_story_matches_run(const struct eng_snap *s, struct store_readers *readers, struct arena *a,
                          const struct index_request *req, size_t keep,
                          struct index_story_matches *out, struct err *err)
{
    struct matches_run r = {.snap = s, .split = keep != INDEX_STORY_ALL};
    struct eng_visit v = {.doc = match_doc, .term = NULL, .set = match_set, .ctx = &r};
    uint64_t total;
    int rc;

    memset(out, 0, sizeof *out);
    r.col = arena_calloc(a, s->nseg ? s->nseg : 1, sizeof *r.col);
    if (r.col == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for stories");
    if ((rc = story_columns(s, readers, r.col, err)) < 0)
        return rc;
    if (r.split) {
        if (keep > s->nrow)
            keep = (size_t)s->nrow;
        r.newest = (struct keep_heap){.k = keep, .newest = true};
        r.oldest = (struct keep_heap){.k = keep, .newest = false};
        if ((rc = alone_ready(s, r.col, err)) < 0)
            return rc;
    }
    rc = eng_search_visit(s, a, req, &v, &total, err);
    if (rc == 0 && (r.nomem || r.newest.nomem || r.oldest.nomem))
        rc = err_set(err, ERR_NOMEM, "out of memory for stories");
    /* into the arena: the caller's to keep */
    if (rc == 0 && (matches_to_arena(a, r.m, r.n, &out->m) < 0 ||
                    matches_to_arena(a, r.newest.v, r.newest.n, &out->newest) < 0 ||
                    matches_to_arena(a, r.oldest.v, r.oldest.n, &out->oldest) < 0))
        rc = err_set(err, ERR_NOMEM, "out of memory for stories");
    free(r.m);
    free(r.newest.v);
    free(r.oldest.v);
    if (rc < 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->n = r.n;
    out->nnewest = r.newest.n;
    out->noldest = r.oldest.n;
    if (out->nnewest > 1)
        qsort(out->newest, out->nnewest, sizeof *out->newest, cmp_match_id_desc);
    if (out->noldest > 1)
        qsort(out->oldest, out->noldest, sizeof *out->oldest, cmp_match_id_desc);
    for (size_t i = 0; i < out->noldest / 2; i++) { /* earliest first */
        struct index_story_match t = out->oldest[i];
        out->oldest[i] = out->oldest[out->noldest - 1 - i];
        out->oldest[out->noldest - 1 - i] = t;
    }
    out->alone = r.alone;
    return 0;
}

struct members_run {
    int64_t story, lo, hi;
    int64_t *ids;
    size_t n, cap;
};

static int members_add(struct members_run *r, int64_t id)
{
    if (array_reserve(&r->ids, &r->cap, r->n, 1, sizeof *r->ids) < 0)
        return -1;
    r->ids[r->n++] = id;
    return 0;
}

int eng_story_members_run(const struct eng_snap *s, struct store_readers *readers, struct arena *a,
                          int64_t story, int64_t lo, int64_t hi, int64_t **out, size_t *n,
                          struct err *err)
{
    struct members_run r = {.story = story, .lo = lo, .hi = hi};
    int rc = 0;

    *out = NULL;
    *n = 0;
    /* A read of every live docid's 8 bytes of the column: at 1 M articles
     * 8 MB, a few milliseconds, and no index on the table (an index on
     * story_id cost imports a third of their rate, docs/stories.md). */
    for (size_t si = 0; si < s->nseg && rc == 0; si++) {
        const struct eng_segment *seg = s->segs[si];
        const struct eng_deletions *deletions = s->deletions[si];
        const int64_t *col;
        if ((rc = eng_story_column(s->segs[si], readers, &col, err)) < 0)
            break;
        /* ids descending: the docid window of [lo, hi] */
        for (uint32_t d = eng_segment_first_le(seg, hi); d < seg->n && seg->ids[d] >= lo; d++) {
            if (col[d] != story || eng_deletions_has(deletions, d))
                continue;
            if (members_add(&r, seg->ids[d]) < 0) {
                rc = err_set(err, ERR_NOMEM, "out of memory for a story's articles");
                break;
            }
        }
    }
    if (rc == 0 && r.n > 0) {
        qsort(r.ids, r.n, sizeof *r.ids, sort_cmp_i64_desc); /* segments may interleave */
        if ((*out = arena_alloc(a, r.n * sizeof **out)) == NULL)
            rc = err_set(err, ERR_NOMEM, "out of memory for a story's articles");
        else {
            memcpy(*out, r.ids, r.n * sizeof **out);
            *n = r.n;
        }
    }
    free(r.ids);
    return rc;
}

void eng_term_docs_run(const struct eng_snap *s, const char *const *terms, const size_t *lens,
                       size_t n, uint64_t *df, uint64_t *ndocs)
{
    /* A term's df summed over the segments' dictionaries: deleted
     * documents still count, as they do in BM25's statistics here. */
    for (size_t i = 0; i < n; i++) {
        df[i] = 0;
        for (size_t si = 0; si < s->nseg; si++) {
            struct eng_term t;
            if (eng_segment_term(s->segs[si], terms[i], lens[i], &t) &&
                eng_kind(t.kind) == ENG_TERM_EXACT)
                df[i] += t.df;
        }
    }
    *ndocs = s->nrow;
}
