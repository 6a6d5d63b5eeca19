/* eng_fetch_articles() of internal.h: the page's rows from the articles
 * table by id (ENGINE.md: in embedded mode the table is the document
 * store), through the reader index/fts5/fts5.c uses too, so both backends
 * give byte-identical articles. */
#include "index/engine/internal.h"

#include "store/log.h"
#include "util/banned.h"

int eng_fetch_articles(struct index_engine *e, struct arena *a, const int64_t *ids, size_t n,
                       struct article *arts, size_t *kept, struct err *err)
{
    struct store_reader *r = NULL;
    int rc;

    *kept = 0;
    if (n == 0)
        return 0;
    if ((rc = store_readers_get(e->readers, &r, err)) < 0)
        return rc;
    if ((rc = store_reader_begin(r, err)) < 0)
        goto out;
    rc = store_reader_articles(r, a, ids, n, arts, err);
    if (rc == 0)
        rc = store_reader_end(r, err);
    /* A row deleted since the snapshot (an upsert racing the search) is
     * dropped, as fts5.c drops a vanished row. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (arts[i].id == ids[i])
            arts[(*kept)++] = arts[i];
    }
out:
    store_readers_put(e->readers, r);
    return rc;
}
