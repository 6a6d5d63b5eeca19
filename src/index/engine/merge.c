/* The merge policy (index/engine/writer.h): segments of similar size are
 * merged MERGE_FAN at a time, and a segment with more than a quarter
 * deleted is rewritten, by re-reading their live rows: the table is the
 * document store, there is no other. */
#include "index/engine/writer.h"

#include <stdlib.h>

#include "util/banned.h"

#define MERGE_FAN 8

static unsigned tier(uint64_t n)
{
    unsigned t = 0;
    while (n >= MERGE_FAN) {
        n /= MERGE_FAN;
        t++;
    }
    return t;
}

/* Rebuild the segments flagged in pick[] from their live rows, as one. */
static int merge(struct eng_writer *w, const bool *pick, struct err *err)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    int rc;

    if (eng_builder_new(&b) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_rows_by_id(&rows, w->db, err)) < 0)
        goto out;
    if ((rc = store_reader_begin(w->db, err)) < 0)
        goto out;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        if (!pick[i])
            continue;
        for (uint32_t d = 0; d < w->segs[i]->n && rc == 0; d++) {
            if (eng_dels_has(w->dels[i], d))
                continue;
            rc = store_rows_get(rows, w->segs[i]->ids[d], &row, err);
            if (rc == 1)
                rc = eng_row_add(w, b, &row, eng_row_url_hash(&row)) < 0
                         ? err_set(err, ERR_NOMEM, "out of memory")
                         : 0;
            /* (0: deleted meanwhile: dropped here, the count check agrees) */
        }
    }
    store_reader_end(w->db, NULL);
    if (rc < 0)
        goto out;
    if ((rc = eng_builder_finish(b, &seg)) < 0) {
        rc = err_set(err, rc, "out of memory merging segments");
        goto out;
    }
    /* The new segment first: if that fails, nothing is dropped. */
    size_t old_n = w->nseg;
    if (seg->n == 0) {
        eng_segment_unref(seg);
    } else if ((rc = eng_writer_append(w, seg)) < 0) {
        eng_segment_unref(seg);
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->nseg; i++) {
        if (i < old_n && pick[i]) {
            eng_segment_unref(w->segs[i]);
            eng_dels_unref(w->dels[i]);
            continue;
        }
        w->segs[k] = w->segs[i];
        w->dels[k++] = w->dels[i];
    }
    w->nseg = k;
    w->dirty = true;
    rc = eng_writer_publish(w);
    if (rc < 0)
        rc = err_set(err, rc, "out of memory");
out:
    store_rows_free(rows);
    eng_builder_free(b);
    return rc;
}

/* One merge when a tier holds MERGE_FAN segments or a segment is more than
 * a quarter deleted. */
int eng_merge_maybe(struct eng_writer *w, struct err *err)
{
    bool *pick = calloc(w->nseg + 1, sizeof *pick);
    unsigned counts[32] = {0};
    int rc = 0, want = -1;

    if (pick == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < w->nseg; i++) {
        uint32_t dn = w->dels[i] ? w->dels[i]->n : 0;
        if (dn > 0 && (uint64_t)dn * 4 > w->segs[i]->n) {
            pick[i] = true;
            want = 0;
            break;
        }
        if (w->segs[i]->n - dn >= w->seg_full)
            continue;
        unsigned t = tier(w->segs[i]->n - dn);
        if (t < 32 && ++counts[t] >= MERGE_FAN && want < 0)
            want = (int)t + 1;
    }
    if (want > 0) {
        unsigned n = 0;
        for (size_t i = 0; i < w->nseg && n < MERGE_FAN; i++) {
            uint32_t dn = w->dels[i] ? w->dels[i]->n : 0;
            if (w->segs[i]->n - dn < w->seg_full &&
                tier(w->segs[i]->n - dn) == (unsigned)(want - 1)) {
                pick[i] = true;
                n++;
            }
        }
    }
    if (want >= 0)
        rc = merge(w, pick, err);
    free(pick);
    return rc;
}
