/* The writer's segments and their publication (index/engine/writer.h):
 * the list the writer owns, and the immutable snapshot made of it that
 * searches take (index/engine/snapshot.c). */
#include "index/engine/writer.h"
#include "index/engine/columns.h"

#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

#include "util/banned.h"

uint64_t eng_writer_live(const struct eng_writer *w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->nseg; i++)
        n += w->segs[i]->n - (w->deletions[i] ? w->deletions[i]->n : 0);
    return n;
}

/* s->listed: the sources with a popularity, the most popular first (the
 * popularity page walks them in this order: sets.c). A double's bits,
 * the sign's flipped (all of them for a negative), order as the double;
 * their complement the other way. */
static int listed_order(struct eng_snap *s)
{
    struct sort_keyed *k = malloc((s->npop + 1) * sizeof *k);
    if (k == NULL || (s->listed = malloc((s->npop + 1) * sizeof *s->listed)) == NULL) {
        free(k);
        return ERR_NOMEM;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < s->npop; i++) {
        if (s->pop[i] == -1.0) /* sources.c: not in the catalogue */
            continue;
        uint64_t b;
        memcpy(&b, &s->pop[i], sizeof b);
        b = b >> 63 ? ~b : b | (uint64_t)1 << 63;
        k[n++] = (struct sort_keyed){~b, i};
    }
    qsort(k, n, sizeof *k, sort_cmp_keyed);
    for (size_t i = 0; i < n; i++)
        s->listed[i] = (uint32_t)k[i].at;
    s->nlisted = n;
    free(k);
    return 0;
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
    if (listed_order(s) < 0) {
        eng_snap_unref(s);
        return ERR_NOMEM;
    }
    s->nseg = w->nseg;
    s->covered = w->covered;
    s->count_cache = w->count_cache;
    for (size_t i = 0; i < w->nseg; i++) {
        /* The popularity page's docids by source (sets.c), made here on
         * the writer's thread rather than by a segment's first popularity
         * page (at 1 M, 7 ms of that page's first run). Out of memory is
         * no error: that page makes it then. */
        const struct eng_source_docs *sd;
        (void)eng_source_docs(w->segs[i], &sd);
        const uint8_t *norm; /* relevancy's length bytes likewise (a pass over dl) */
        (void)eng_length_norms(w->segs[i], &norm);
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
