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
    /* An article stored before stories has story_id 0: give it the story
     * every other reader gives it (the one /v2/stories shows), so that an
     * export's storyId is never 0. */
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (arts[i].id != 0)
            arts[i].story_id =
                store_story_resolve(arts[i].story_id, arts[i].canonical_url, arts[i].id);
    return rc;
}
