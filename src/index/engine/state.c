/* The writer's segments and their publication (index/engine/writer.h):
 * the list the writer owns, and the immutable snapshot made of it that
 * searches take (index/engine/snapshot.c). */
#include "index/engine/writer.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

uint64_t eng_writer_live(const struct eng_writer *w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->nseg; i++)
        n += w->segs[i]->n - (w->deletions[i] ? w->deletions[i]->n : 0);
    return n;
}

/* A snapshot of the writer's state (new references throughout). */
int eng_writer_publish(struct eng_writer *w)
{
    struct eng_snap *s = calloc(1, sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    atomic_init(&s->ref, 1);
    s->segs = calloc(w->nseg + 1, sizeof *s->segs);
    s->deletions = calloc(w->nseg + 1, sizeof *s->deletions);
    s->pop = malloc((w->nsrc + 1) * sizeof *s->pop);
    if (s->segs == NULL || s->deletions == NULL || s->pop == NULL) {
        eng_snap_unref(s);
        return ERR_NOMEM;
    }
    if (w->nsrc)
        memcpy(s->pop, w->pop, w->nsrc * sizeof *s->pop);
    s->npop = w->nsrc;
    s->nseg = w->nseg;
    s->covered = w->covered;
    s->count_cache = w->count_cache;
    for (size_t i = 0; i < w->nseg; i++) {
        s->segs[i] = w->segs[i];
        atomic_fetch_add(&w->segs[i]->ref, 1);
        s->deletions[i] = w->deletions[i];
        if (w->deletions[i])
            atomic_fetch_add(&w->deletions[i]->ref, 1);
        s->nrow += w->segs[i]->n - (w->deletions[i] ? w->deletions[i]->n : 0);
        s->ntoken += w->segs[i]->ntoken - (w->deletions[i] ? w->deletions[i]->ntoken : 0);
    }
    eng_slot_publish(w->slot, s);
    return 0;
}

int eng_writer_append(struct eng_writer *w, struct eng_segment *seg)
{
    struct eng_segment **s = realloc(w->segs, (w->nseg + 1) * sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    w->segs = s;
    struct eng_deletions **d = realloc(w->deletions, (w->nseg + 1) * sizeof *d);
    if (d == NULL)
        return ERR_NOMEM;
    w->deletions = d;
    w->segs[w->nseg] = seg;
    w->deletions[w->nseg] = NULL;
    w->nseg++;
    w->dirty = true;
    return 0;
}

void eng_writer_drop_all(struct eng_writer *w)
{
    for (size_t i = 0; i < w->nseg; i++) {
        eng_segment_unref(w->segs[i]);
        eng_deletions_unref(w->deletions[i]);
    }
    w->nseg = 0;
    w->applied_seq = 0;
    w->covered = 0;
    w->dirty = true;
}
