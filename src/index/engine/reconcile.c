/* Reconciling with the table (index/engine/writer.h): rows deleted without
 * a replacement. The store says which (store_reader_deletions: each
 * delete's id under its seq), so a poll marks those documents at a cost
 * per deletion; when the row count still differs from the live documents
 * (a delete the records no longer hold, a row removed by hand) every
 * indexed id is checked against the table. A segment that failed a check
 * of its bytes (eng_segment_damage) is built again from the rows its ids
 * name. */
#include "index/engine/writer.h"
#include "index/engine/tiers.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#include "util/sort.h"
#include "util/banned.h"

/* Rows deleted without a replacement: every live id checked against the table. */
int eng_reconcile(struct eng_writer *w, struct eng_pending *p, struct err *err)
{
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = store_reader_ids(w->db, &ids, &n, err);

    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t d = 0; d < seg->n && rc == 0; d++) {
            if (eng_deletions_has(eng_pending_deletions(w, p, i), d))
                continue;
            if (bsearch(&seg->ids[d], ids, n, sizeof *ids, sort_cmp_i64) == NULL &&
                (rc = eng_pending_mark(w, p, i, d)) < 0)
                rc = err_set(err, rc, "out of memory");
        }
    }
    free(ids);
    return rc;
}

/* The store's deletions since the head the last poll covered, marked
 * where they are indexed. Before the poll reads its new rows: the
 * segments hold only rows read before, which a deletion with a higher seq
 * did remove, while an id deleted and imported again comes back among the
 * new rows, untouched. */
int eng_deletions_apply(struct eng_writer *w, struct eng_pending *p, struct err *err)
{
    int64_t *ids = NULL, last = 0;
    size_t n = 0;
    if (p->n == 0)
        return 0; /* nothing indexed yet: nothing to delete */
    int rc = store_reader_deletions(w->db, w->covered, &ids, &n, &last, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if ((rc = eng_pending_delete_id(w, p, ids[i])) < 0)
            rc = err_set(err, rc, "out of memory");
    }
    free(ids);
    return rc;
}

/* Segment i built again from the table's rows of its live ids (read in one
 * snapshot); it leaves the writer's list when none is left. */
static int repair_one(struct eng_writer *w, size_t i, struct err *err)
{
    const struct eng_segment *seg = w->segs[i];
    struct eng_builder *b = NULL;
    struct store_rows *rows = NULL;
    struct eng_segment *fresh = NULL;
    uint64_t file_id = seg->file_id;
    int rc;

    if (eng_builder_new(&b) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    eng_builder_tiers(b, w->tier_min_df);
    if ((rc = store_reader_begin(w->db, err)) < 0)
        goto out;
    rc = store_rows_by_id(&rows, w->db, err);
    for (uint32_t d = 0; d < seg->n && rc == 0; d++) {
        struct store_row row;
        if (eng_deletions_has(w->deletions[i], d))
            continue;
        /* (a row since replaced is read again as a new row by the next
         * poll, which deletes this copy of it as any upsert does) */
        int got = store_rows_get(rows, seg->ids[d], &row, err);
        if (got < 0)
            rc = got;
        else if (got == 1 && eng_row_add(w, b, &row, eng_row_url_hash(&row)) < 0)
            rc = err_set(err, ERR_NOMEM, "out of memory");
    }
    store_rows_free(rows);
    store_reader_end(w->db, NULL);
    if (rc == 0 && eng_builder_count(b) > 0 && (rc = eng_builder_finish(b, &fresh)) < 0)
        rc = err_set(err, rc, "out of memory");
    if (rc < 0)
        goto out;
    eng_segment_unref(w->segs[i]);
    eng_deletions_unref(w->deletions[i]);
    if (fresh) {
        w->segs[i] = fresh;
        w->deletions[i] = NULL;
    } else {
        memmove(w->segs + i, w->segs + i + 1, (w->nseg - i - 1) * sizeof *w->segs);
        memmove(w->deletions + i, w->deletions + i + 1, (w->nseg - i - 1) * sizeof *w->deletions);
        w->nseg--;
    }
    w->dirty = true; /* the next checkpoint writes it and drops the damaged file */
    log_msg(LOG_INFO, "search index: segment file %llu rebuilt from the table (%u articles)",
            (unsigned long long)file_id, fresh ? fresh->n : 0);
out:
    eng_builder_free(b);
    return rc;
}

int eng_repair(struct eng_writer *w, bool *reread, struct err *err)
{
    bool changed = false;
    int rc = 0;

    *reread = false;
    for (size_t i = 0; i < w->nseg && rc == 0;) {
        if (!eng_segment_damaged(w->segs[i])) {
            i++;
            continue;
        }
        if (!eng_segment_ids_intact(w->segs[i])) {
            /* Which rows it held is lost with its ids: everything again. */
            log_msg(LOG_WARN, "search index: a damaged segment's ids are damaged too; "
                              "rebuilding the whole index from the table");
            eng_writer_drop_all(w);
            *reread = true;
            return 0;
        }
        if ((rc = repair_one(w, i, err)) == 0)
            changed = true;
    }
    if (changed && eng_writer_publish(w) < 0)
        rc = err_set(err, ERR_NOMEM, "out of memory");
    return rc;
}
