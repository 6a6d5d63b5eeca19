/* The engine's bottom layer (index/engine/internal.h): how long what a
 * snapshot holds lives. Segments and deletion sets are immutable and
 * shared between snapshots by reference counts; a generation number names
 * each one in the count cache (a set that changes is a new set, with a new
 * gen); the slot holds the snapshot that searches take. Everything else in
 * the engine calls down to this file; it calls only docs.c below it. */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "util/log.h"
#include "util/metrics.h"

#include "util/banned.h"

uint64_t eng_next_gen(void)
{
    static atomic_uint_fast64_t next = 1;
    return atomic_fetch_add(&next, 1);
}

static struct metric *damage_counter(void)
{
    return metrics_counter("newsd_index_corrupt_total",
                           "Search index segments found damaged (then rebuilt from the table)");
}

void eng_segment_damage_init(void)
{
    (void)damage_counter();
}

void eng_segment_damage(const struct eng_segment *s, const char *why)
{
    /* The flag is the one part of a segment that changes after it is
     * built; the first to set it logs and counts, so that a damaged
     * segment searched a thousand times is one line and one count. */
    struct eng_segment *m = (struct eng_segment *)(uintptr_t)s;
    if (atomic_exchange(&m->damaged, true))
        return;
    metrics_add(damage_counter(), 1);
    log_msg(LOG_ERROR,
            "search index: segment file %llu is damaged (%s); rebuilding it from the table",
            (unsigned long long)s->file_id, why ? why : "a check failed");
}

void eng_segment_unref(struct eng_segment *s)
{
    if (s == NULL || atomic_fetch_sub(&s->ref, 1) != 1)
        return;
    eng_facet_cols_free(s);
    eng_story_col_free(s);
    eng_docs_release(s);
    free((void *)atomic_load(&s->term_cache));
    if (s->home != ENG_SEG_HEAP) { /* every array points into the file image (segfile.c) */
        if (s->home == ENG_SEG_MAPPED && s->image)
            munmap((void *)(uintptr_t)s->image, s->image_len);
        free(s->term_ok);
        free(s);
        return;
    }
    free(s->pk_hash);
    free(s->pk_doc);
    free(s->ids);
    free(s->dl);
    free(s->src);
    free(s->tidx);
    free(s->tdict);
    free(s->strs);
    free(s->post);
    free(s);
}

struct eng_deletions *eng_deletions_new(uint32_t n)
{
    struct eng_deletions *d = calloc(1, sizeof *d);
    if (d == NULL || (d->bits = calloc((size_t)(n + 63) / 64 + 1, sizeof *d->bits)) == NULL) {
        free(d);
        return NULL;
    }
    atomic_init(&d->ref, 1);
    d->gen = eng_next_gen();
    return d;
}

void eng_deletions_unref(struct eng_deletions *d)
{
    if (d == NULL || atomic_fetch_sub(&d->ref, 1) != 1)
        return;
    free(d->bits);
    free(d);
}

void eng_snap_unref(struct eng_snap *s)
{
    if (s == NULL || atomic_fetch_sub(&s->ref, 1) != 1)
        return;
    for (size_t i = 0; i < s->nseg; i++) {
        eng_segment_unref(s->segs[i]);
        eng_deletions_unref(s->deletions[i]);
    }
    free(s->segs);
    free(s->deletions);
    free(s->pop);
    free(s->listed);
    free(s);
}

void eng_slot_init(struct eng_slot *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->cur = NULL;
}

void eng_slot_release(struct eng_slot *s)
{
    eng_snap_unref(s->cur);
    s->cur = NULL;
    pthread_mutex_destroy(&s->lock);
}

struct eng_snap *eng_slot_get(struct eng_slot *s)
{
    struct eng_snap *snap;
    pthread_mutex_lock(&s->lock);
    snap = s->cur;
    if (snap)
        atomic_fetch_add(&snap->ref, 1);
    pthread_mutex_unlock(&s->lock);
    return snap;
}

void eng_slot_publish(struct eng_slot *s, struct eng_snap *snap)
{
    struct eng_snap *old;
    pthread_mutex_lock(&s->lock);
    old = s->cur;
    s->cur = snap;
    pthread_mutex_unlock(&s->lock);
    eng_snap_unref(old); /* freed when the last search holding it ends */
}
