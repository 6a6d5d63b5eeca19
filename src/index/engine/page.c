/* eng_page_docs() of internal.h: a results page from the segments' own
 * document stores (docs.c; docs/engine.md "The page"): per article, find
 * its live document in the snapshot the search ran on and decompress its
 * JSON. No row is read and nothing is escaped on the request path. */
#include "index/engine/internal.h"

#include "util/banned.h"

/* The live document of article id in s: its segment and docid, or false.
 * Segments are few and each covers an id range (ids descending), so most
 * are passed over with two comparisons. An upserted article keeps its
 * id, so a deleted copy of it may sit in an older segment: skip those. */
static bool find_live(const struct eng_snap *s, int64_t id, size_t *si, uint32_t *doc)
{
    for (size_t i = 0; i < s->nseg; i++) {
        const struct eng_segment *seg = s->segs[i];
        if (seg->n == 0 || id > seg->ids[0] || id < seg->ids[seg->n - 1])
            continue;
        uint32_t d = eng_segment_find(seg, id);
        if (d != ENG_END && !eng_dels_has(s->dels[i], d)) {
            *si = i;
            *doc = d;
            return true;
        }
    }
    return false;
}

int eng_page_docs(const struct eng_snap *s, struct eng_docs_pool *pool, struct arena *a,
                  const int64_t *ids, size_t n, struct index_doc *docs, size_t *kept,
                  struct err *err)
{
    void *dctx;
    int rc = 0;

    *kept = 0;
    if (n == 0)
        return 0;
    if ((dctx = eng_docs_pool_get(pool)) == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t si;
        uint32_t d;
        struct index_doc *o = &docs[*kept];
        /* (not found cannot happen: the ids come from this snapshot's live
         * documents; dropped like a vanished row all the same) */
        if (!find_live(s, ids[i], &si, &d))
            continue;
        rc = eng_docs_get(s->segs[si], dctx, d, a, &o->json, &o->len);
        if (rc == ERR_NOMEM)
            rc = err_set(err, rc, "out of memory for a page of results");
        else if (rc < 0)
            rc = err_set(err, ERR_STORE,
                         "a stored article does not decode (run newsd index verify)");
        o->id = ids[i];
        if (rc == 0)
            (*kept)++;
    }
    eng_docs_pool_put(pool, dctx);
    return rc;
}
