/* eng_page_docs() of internal.h: a results page from the segments' own
 * document stores (docs.c; docs/engine.md "The page"): per article, its
 * live document in the snapshot the search ran on (where the search found
 * it, or looked up by id) and its JSON decompressed. No row is read and
 * nothing is escaped on the request path. */
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
        if (d != ENG_END && !eng_deletions_has(s->deletions[i], d)) {
            *si = i;
            *doc = d;
            return true;
        }
    }
    return false;
}

int eng_page_docs(const struct eng_snap *s, struct arena *a, const int64_t *ids,
                  const struct eng_doc_ref *refs, size_t n, struct index_doc *docs, size_t *kept,
                  struct err *err)
{
    size_t *seg = arena_alloc(a, (n + 1) * sizeof *seg), total = 0, k = 0;
    uint32_t *doc = arena_alloc(a, (n + 1) * sizeof *doc);
    char *out;

    *kept = 0;
    if (n == 0)
        return 0;
    if (seg == NULL || doc == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    /* Where each document is: told by the search, else looked up. */
    for (size_t i = 0; i < n; i++) {
        if (refs) {
            seg[k] = refs[i].seg;
            doc[k] = refs[i].doc;
        } else if (!find_live(s, ids[i], &seg[k], &doc[k])) {
            /* (cannot happen: the ids come from this snapshot's live
             * documents; dropped like a vanished row all the same) */
            continue;
        }
        docs[k].id = ids[i];
        k++;
    }
    /* Every frame's first bytes on their way before the first is read: a
     * page's documents lie anywhere in the store, and the misses of one
     * after another were most of a rare word's page in the bench mix. */
    for (size_t i = 0; i < k; i++)
        eng_docs_prefetch(s->segs[seg[i]], doc[i]);
    /* How long each JSON is, then one allocation for the page: fresh
     * memory per article costs more than decoding it. */
    for (size_t i = 0; i < k; i++) {
        if (eng_docs_size(s->segs[seg[i]], doc[i], &docs[i].len) < 0) {
            eng_segment_damage(s->segs[seg[i]], "a stored article does not decode");
            return err_set(err, ERR_STORE,
                           "a stored article does not decode (the index "
                           "segment is being rebuilt from the table)");
        }
        total += docs[i].len;
    }
    if ((out = arena_alloc(a, total + 1)) == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    for (size_t i = 0; i < k; i++) {
        if (eng_docs_read(s->segs[seg[i]], doc[i], out, docs[i].len) < 0) {
            /* never a text other than the one indexed: the frame's checksum */
            eng_segment_damage(s->segs[seg[i]], "a stored article fails its checksum");
            return err_set(err, ERR_STORE,
                           "a stored article fails its checksum (the index "
                           "segment is being rebuilt from the table)");
        }
        docs[i].json = out;
        out += docs[i].len;
    }
    *kept = k;
    return 0;
}

int eng_page_stories(const struct eng_snap *s, struct store_readers *readers,
                     const struct index_doc *docs, size_t n, int64_t *stories, struct err *err)
{
    for (size_t i = 0; i < n; i++) {
        const int64_t *col;
        size_t si;
        uint32_t d;
        int rc;
        if (!find_live(s, docs[i].id, &si, &d)) /* (found by eng_page_docs just before) */
            return err_set(err, ERR_STORE, "an article of the page left the index");
        if ((rc = eng_story_column(s->segs[si], readers, &col, err)) < 0)
            return rc;
        stories[i] = col[d];
    }
    return 0;
}
