/* eng_page_articles() of internal.h: a results page's rows from the log by
 * id (docs/engine.md: the table is the document store), read as the fts5
 * index reads them (store_reader_articles), so both backends give
 * byte-identical articles. */
#include "index/engine/internal.h"

#include "store/log.h"
#include "util/banned.h"

int eng_page_articles(struct store_readers *readers, struct arena *a, const int64_t *ids, size_t n,
                      struct article *arts, size_t *kept, struct err *err)
{
    struct store_reader *r = NULL;
    int rc;

    *kept = 0;
    if (n == 0)
        return 0;
    if ((rc = store_readers_get(readers, &r, err)) < 0)
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
    store_readers_put(readers, r);
    return rc;
}
