/* Reconciling with the table (index/engine/writer.h): rows deleted without
 * a replacement. The store says which (store_reader_deletions: each
 * delete's id under its seq), so a poll marks those documents at a cost
 * per deletion; when the row count still differs from the live documents
 * (a delete the records no longer hold, a row removed by hand) every
 * indexed id is checked against the table. */
#include "index/engine/writer.h"

#include <stdlib.h>

#include "util/banned.h"

int eng_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Rows deleted without a replacement: every live id checked against the table. */
int eng_reconcile(struct eng_writer *w, struct eng_pending *p, struct err *err)
{
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = store_reader_ids(w->db, &ids, &n, err);

    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t d = 0; d < seg->n && rc == 0; d++) {
            if (eng_dels_has(eng_pending_dels(w, p, i), d))
                continue;
            if (bsearch(&seg->ids[d], ids, n, sizeof *ids, eng_cmp_i64) == NULL &&
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
