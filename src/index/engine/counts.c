/* Matches per time bucket (index_counts, index.h) over a snapshot. Docids
 * run newest first in time order, so each bucket boundary is a docid
 * boundary in every segment (eng_segment_first_le): the matches are
 * handed over in ascending docid order (eng_search_visit) and each goes to
 * the bucket whose docid range holds it, found by walking the boundaries
 * along with the docids. A plan that is one unfiltered term (a one-word
 * query, or no q: the "every article" term) is counted per bucket from its
 * skip table, without decoding the blocks that lie inside a bucket
 * (eng_cursor_count_range). */
#include "index/engine/internal.h"

#include <string.h>

#include "store/store.h"
#include "util/banned.h"

struct counts_run {
    const struct eng_snap *snap;
    const int64_t *bounds;
    size_t nb;
    uint64_t *counts;
    uint32_t *edge; /* per bound j of the current segment: first docid older than bounds[j] */
    uint32_t si;    /* the segment edge is for; UINT32_MAX none yet */
    size_t at;      /* the bucket of the last match (matches come newest first) */
};

/* Bucket i of segment si is the docid range [edge[i + 1], edge[i]). */
static void segment_edges(struct counts_run *c, uint32_t si)
{
    const struct eng_segment *seg = c->snap->segs[si];
    if (c->si == si)
        return;
    for (size_t j = 0; j <= c->nb; j++)
        c->edge[j] = eng_segment_first_le(seg, store_id_lo(c->bounds[j]) - 1);
    c->si = si;
    c->at = c->nb - 1;
}

static void count_doc(void *ctx, uint32_t si, uint32_t doc)
{
    struct counts_run *c = ctx;
    segment_edges(c, si);
    if (doc >= c->edge[0] || doc < c->edge[c->nb])
        return;                   /* outside every bucket (the window is inside them) */
    if (doc < c->edge[c->at + 1]) /* a new segment's walk restarts */
        c->at = c->nb - 1;
    while (doc >= c->edge[c->at])
        c->at--;
    c->counts[c->at]++;
}

static void count_term(void *ctx, uint32_t si, const struct eng_term *t, uint32_t lo, uint32_t hi)
{
    struct counts_run *c = ctx;
    const struct eng_segment *seg = c->snap->segs[si];
    struct eng_cursor cur;
    segment_edges(c, si);
    for (size_t i = 0; i < c->nb; i++) {
        uint32_t a = c->edge[i + 1] > lo ? c->edge[i + 1] : lo;
        uint32_t b = c->edge[i] < hi ? c->edge[i] : hi;
        if (a >= b)
            continue;
        eng_cursor_init(&cur, seg, t);
        c->counts[i] += eng_cursor_count_range(&cur, a, b);
    }
}

int eng_counts_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err)
{
    struct counts_run c = {
        .snap = s, .bounds = bounds, .nb = nbuckets, .counts = counts, .si = UINT32_MAX};
    struct eng_visit v = {.doc = count_doc, .term = count_term, .ctx = &c};
    uint64_t total;

    if (nbuckets == 0)
        return 0;
    c.edge = arena_calloc(a, nbuckets + 1, sizeof *c.edge);
    if (c.edge == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for counts");
    return eng_search_visit(s, a, req, &v, &total, err);
}
