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

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/journal.h"
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

/* s's story column, read from the table when it is not yet. */
static int column(struct eng_segment *s, struct store_readers *readers, const int64_t **out,
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

struct matches_run {
    const int64_t **col; /* per segment of the snapshot */
    const struct eng_snap *snap;
    struct index_story_match *m;
    size_t n, cap;
    bool nomem;
};

static void match_doc(void *ctx, uint32_t si, uint32_t doc)
{
    struct matches_run *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        struct index_story_match *m = r->nomem ? NULL : realloc(r->m, cap * sizeof *m);
        if (m == NULL) {
            r->nomem = true;
            return;
        }
        r->m = m;
        r->cap = cap;
    }
    r->m[r->n++] = (struct index_story_match){r->snap->segs[si]->ids[doc], r->col[si][doc]};
}

int eng_story_matches_run(const struct eng_snap *s, struct store_readers *readers, struct arena *a,
                          const struct index_request *req, struct index_story_match **out,
                          size_t *n, struct err *err)
{
    struct matches_run r = {.snap = s};
    struct eng_visit v = {.doc = match_doc, .term = NULL, .ctx = &r};
    uint64_t total;
    int rc;

    *out = NULL;
    *n = 0;
    r.col = arena_calloc(a, s->nseg ? s->nseg : 1, sizeof *r.col);
    if (r.col == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for stories");
    for (size_t si = 0; si < s->nseg; si++)
        if ((rc = column(s->segs[si], readers, &r.col[si], err)) < 0)
            return rc;
    rc = eng_search_visit(s, a, req, &v, &total, err);
    if (rc == 0 && r.nomem)
        rc = err_set(err, ERR_NOMEM, "out of memory for stories");
    if (rc == 0 && r.n > 0) {
        /* into the arena: the caller's to keep */
        if ((*out = arena_alloc(a, r.n * sizeof **out)) == NULL)
            rc = err_set(err, ERR_NOMEM, "out of memory for stories");
        else
            memcpy(*out, r.m, r.n * sizeof **out);
        *n = rc == 0 ? r.n : 0;
    }
    free(r.m);
    return rc;
}

struct members_run {
    int64_t story, lo, hi;
    int64_t *ids;
    size_t n, cap;
};

static int members_add(struct members_run *r, int64_t id)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        int64_t *ids = realloc(r->ids, cap * sizeof *ids);
        if (ids == NULL)
            return -1;
        r->ids = ids;
        r->cap = cap;
    }
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
        if ((rc = column(s->segs[si], readers, &col, err)) < 0)
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
            const struct eng_term *t = eng_segment_term(s->segs[si], terms[i], lens[i]);
            if (t && t->kind == ENG_TERM_EXACT)
                df[i] += t->df;
        }
    }
    *ndocs = s->nrow;
}
