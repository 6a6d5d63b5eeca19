/* Reconciling with the table (index/engine/writer.h): rows deleted without
 * a replacement leave no trace in the log, so when the row count differs
 * from the live documents every indexed id is checked against the table. */
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
