/* Deletion sets, copy-on-write per poll (index/engine/writer.h): a poll
 * marks the documents that rows replaced or that left the table in new
 * sets of its own, adopted only when the whole poll succeeds. */
#include "index/engine/writer.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

int eng_pending_mark(struct eng_writer *w, struct eng_pending *p, size_t si, uint32_t doc)
{
    const struct eng_segment *seg = w->segs[si];
    struct eng_deletions *d = p->deletions[si];
    if (d == NULL) {
        size_t words = (seg->n + 63) / 64 + 1;
        if ((d = eng_deletions_new(seg->n)) == NULL)
            return ERR_NOMEM;
        if (w->deletions[si]) {
            memcpy(d->bits, w->deletions[si]->bits, words * sizeof *d->bits);
            d->n = w->deletions[si]->n;
            d->ntoken = w->deletions[si]->ntoken;
        }
        p->deletions[si] = d;
    }
    if (eng_deletions_has(d, doc))
        return 0;
    d->bits[doc >> 6] |= (uint64_t)1 << (doc & 63);
    d->n++;
    d->ntoken += seg->dl[doc];
    p->changed = true;
    return 0;
}

const struct eng_deletions *eng_pending_deletions(const struct eng_writer *w,
                                                  const struct eng_pending *p, size_t si)
{
    return p->deletions[si] ? p->deletions[si] : w->deletions[si];
}

/* Delete the live document of article id, wherever it is (segments of
 * this poll hold only live rows: they are not searched). */
int eng_pending_delete_id(struct eng_writer *w, struct eng_pending *p, int64_t id)
{
    for (size_t i = 0; i < p->n; i++) {
        uint32_t d = eng_segment_find(w->segs[i], id);
        if (d != ENG_END && !eng_deletions_has(eng_pending_deletions(w, p, i), d))
            return eng_pending_mark(w, p, i, d);
    }
    return 0;
}

/* Delete the live documents whose canonical URL hashes to h: an upsert
 * that gave the article a new id (its publication time changed). A 64-bit
 * hash is the key: two canonical URLs colliding (odds ~1e-8 at 1e6
 * articles) would make the second's arrival delete the first from the
 * index (docs/engine.md). */
int eng_pending_delete_url(struct eng_writer *w, struct eng_pending *p, uint64_t h)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t k = eng_segment_pk_first(seg, h); k < seg->n && seg->pk_hash[k] == h; k++) {
            uint32_t d = seg->pk_doc[k];
            int rc;
            if (!eng_deletions_has(eng_pending_deletions(w, p, i), d) &&
                (rc = eng_pending_mark(w, p, i, d)) < 0)
                return rc;
        }
    }
    return 0;
}

/* Adopt the pending delete sets into the writer's state. */
void eng_pending_apply(struct eng_writer *w, struct eng_pending *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->deletions[i] == NULL)
            continue;
        eng_deletions_unref(w->deletions[i]);
        w->deletions[i] = p->deletions[i];
        p->deletions[i] = NULL;
        w->dirty = true;
    }
}

void eng_pending_drop(struct eng_writer *w, struct eng_pending *p)
{
    (void)w;
    if (p->deletions == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        eng_deletions_unref(p->deletions[i]);
    free(p->deletions);
    p->deletions = NULL;
}
