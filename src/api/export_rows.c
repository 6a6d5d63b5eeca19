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
    int rc = store_reader_open_scan(&r->reader, store_journal_path(index_journal(idx)), err);
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

/* store_reader_articles_each's callback: the article with its story
 * resolved, to the caller's fn. */
struct each_ctx {
    api_export_row_fn fn;
    void *ctx;
};

static int each_row(void *ctx, const struct article *a)
{
    const struct each_ctx *e = ctx;
    struct article art = *a;
    /* An article stored before stories has story_id 0: give it the story
     * every other reader gives it (the one /v2/stories shows), so that an
     * export's storyId is never 0. */
    art.story_id = store_story_resolve(art.story_id, art.canonical_url, art.id);
    return e->fn(e->ctx, &art);
}

int api_export_rows_each(struct api_export_rows *r, const int64_t *ids, size_t n,
                         api_export_row_fn fn, void *ctx, struct err *err)
{
    /* One snapshot per call: its rows agree with one another; a long
     * export holds no snapshot across calls (SQLite's WAL would grow
     * behind it), so the caller writes nothing to its client in fn. */
    int rc = store_reader_begin(r->reader, err);
    if (rc < 0)
        return rc;
    struct each_ctx e = {fn, ctx};
    rc = store_reader_articles_each(r->reader, ids, n, each_row, &e, err);
    store_reader_end(r->reader, NULL);
    return rc;
}
