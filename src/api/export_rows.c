/* Whole articles for an export (api/export_rows.h): the only file of
 * src/api/ that calls store/journal.h. */
#include "api/export_rows.h"

#include <stdlib.h>

#include "store/journal.h"

#include "util/banned.h"

struct api_export_rows {
    struct store_reader *reader;
};

int api_export_rows_open(struct api_export_rows **out, struct index *idx, struct err *err)
{
    struct api_export_rows *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return err_set(err, ERR_NOMEM, "out of memory");
    int rc = store_reader_open(&r->reader, store_journal_path(index_journal(idx)), err);
    if (rc < 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void api_export_rows_close(struct api_export_rows *r)
{
    if (!r)
        return;
    store_reader_close(r->reader);
    free(r);
}

int api_export_rows_get(struct api_export_rows *r, struct arena *a, const int64_t *ids, size_t n,
                        struct article *arts, struct err *err)
{
    /* One snapshot per batch: a batch's rows agree with one another; a
     * long export holds no snapshot across batches (SQLite's WAL would
     * grow behind it). */
    int rc = store_reader_begin(r->reader, err);
    if (rc < 0)
        return rc;
    rc = store_reader_articles(r->reader, a, ids, n, arts, err);
    store_reader_end(r->reader, NULL);
    return rc;
}
