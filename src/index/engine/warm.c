/* Columns made off the request's thread (warm.h).
 *
 * One lock and one condition variable for every segment: a request marks
 * the segments it found without the column (their `warming` bit), hands
 * them to a new thread (which holds a reference to each) and waits on the
 * condition, woken each time the thread has made one. The thread makes
 * them with the same calls a search would (eng_facet_column,
 * eng_story_column), so a search that comes meanwhile without a deadline
 * and asks for the column being made waits for that one there; a facet
 * column of another facet or segment it makes at once (facet_cols.c). */
#define _GNU_SOURCE /* gettid */
#include "index/engine/warm.h"
#include "index/engine/columns.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

#define WARM_NICE 10             /* a background job's threads, as merge.c's */
#define WARM_STORY INDEX_FACET_N /* the story column's kind (facets: their number) */

static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t warm_cond; /* a column made, a thread ended */
static pthread_once_t warm_once = PTHREAD_ONCE_INIT;
static bool warm_cond_ok;
static unsigned warm_threads;  /* under warm_lock */
static unsigned warm_draining; /* under warm_lock: the threads pass over what is left */
/* A start's (or a merge's) facet columns are made one at a time, on one
 * niced core at most beside the searches, as when facet_cols.c held one
 * lock over every build: a search that needs another column now makes it
 * at once, and five facets made together took the CPU from the first
 * searches after a restart. */
static pthread_mutex_t background_lock = PTHREAD_MUTEX_INITIALIZER;

static void warm_init(void)
{
    warm_cond_ok = clock_cond_init(&warm_cond) == 0;
}

static bool column_made(const struct eng_segment *s, unsigned kind)
{
    if (kind == WARM_STORY)
        return atomic_load(&s->story) != NULL;
    struct eng_facet_cols *cols = atomic_load(&s->facets);
    return cols != NULL && atomic_load(&cols->col[kind]) != NULL;
}

static const char *kind_name(unsigned kind)
{
    return kind == WARM_STORY ? "story" : index_facet_name((enum index_facet)kind);
}

struct warm_job {
    unsigned kind;
    bool background;               /* nobody waits: below the searches (as a merge is) */
    struct store_readers *readers; /* the story column's */
    struct eng_snap *snap;         /* the story column's: a reference */
    size_t n;
    struct eng_segment *segs[]; /* a reference each */
};

static void make_column(const struct warm_job *j, struct eng_segment *s)
{
    struct err err;
    int rc;
    err_clear(&err);
    if (j->kind == WARM_STORY) {
        const int64_t *col;
        rc = eng_story_column(s, j->readers, &col, &err);
    } else {
        const struct eng_facet_col *col;
        rc = eng_facet_column(s, (enum index_facet)j->kind, &col);
    }
    if (rc < 0) /* the next search's own call tries again and says why */
        log_warn("search index: cannot make a segment's %s column: %s", kind_name(j->kind),
                 err_msg(&err, rc));
}

static bool draining(void)
{
    pthread_mutex_lock(&warm_lock);
    bool d = warm_draining > 0;
    pthread_mutex_unlock(&warm_lock);
    return d;
}

static void made(struct eng_segment *s, unsigned kind)
{
    pthread_mutex_lock(&warm_lock);
    s->warming &= ~(1u << kind);
    pthread_cond_broadcast(&warm_cond);
    pthread_mutex_unlock(&warm_lock);
}

static void *warm_main(void *arg)
{
    struct warm_job *j = arg;
    if (j->background)
        (void)setpriority(PRIO_PROCESS, (id_t)gettid(), WARM_NICE);
    bool one_at_a_time = j->background && j->kind != WARM_STORY;
    for (size_t i = 0; i < j->n; i++) {
        if (one_at_a_time)
            pthread_mutex_lock(&background_lock);
        if (!draining())
            make_column(j, j->segs[i]);
        if (one_at_a_time)
            pthread_mutex_unlock(&background_lock);
        if (j->kind != WARM_STORY)
            made(j->segs[i], j->kind);
    }
    if (j->kind == WARM_STORY) {
        /* Then the sets of matches alone in their story, which the first
         * request would make next (1.9 s at 10 M, pairing every segment
         * with every other): the segments count as made after them. */
        struct err err;
        err_clear(&err);
        int rc = draining() ? 0 : eng_story_alone_ready(j->snap, j->readers, &err);
        if (rc < 0)
            log_warn("search index: cannot make the stories' sets: %s", err_msg(&err, rc));
        for (size_t i = 0; i < j->n; i++)
            made(j->segs[i], j->kind);
        eng_snap_unref(j->snap);
    }
    for (size_t i = 0; i < j->n; i++)
        eng_segment_unref(j->segs[i]);
    free(j);
    pthread_mutex_lock(&warm_lock);
    warm_threads--;
    pthread_cond_broadcast(&warm_cond);
    pthread_mutex_unlock(&warm_lock);
    return NULL;
}

/* seg is large enough, without the column, and no thread is making it
 * (under warm_lock). */
static bool wanted(const struct eng_segment *seg, unsigned kind, uint32_t min_docs)
{
    return seg->n >= min_docs && !column_made(seg, kind) && !(seg->warming >> kind & 1);
}

/* Hand the segments of s that want the column to a new thread (under
 * warm_lock). false when none could be: no thread, no memory. */
static bool warm_start(const struct eng_snap *s, unsigned kind, uint32_t min_docs, bool background,
                       struct store_readers *readers)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nseg; i++)
        n += wanted(s->segs[i], kind, min_docs);
    if (n == 0)
        return true;
    struct warm_job *j = malloc(sizeof *j + n * sizeof *j->segs);
    if (j == NULL)
        return false;
    *j = (struct warm_job){.kind = kind,
                           .background = background,
                           .readers = readers,
                           .snap = (struct eng_snap *)(uintptr_t)s};
    for (size_t i = 0; i < s->nseg; i++) {
        if (wanted(s->segs[i], kind, min_docs))
            j->segs[j->n++] = s->segs[i];
    }
    pthread_attr_t attr;
    pthread_t th;
    bool started = pthread_attr_init(&attr) == 0;
    if (started) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        for (size_t i = 0; i < j->n; i++) {
            atomic_fetch_add(&j->segs[i]->ref, 1);
            j->segs[i]->warming |= 1u << kind;
        }
        if (kind == WARM_STORY)
            atomic_fetch_add(&j->snap->ref, 1);
        started = pthread_create(&th, &attr, warm_main, j) == 0;
        pthread_attr_destroy(&attr);
        if (!started) {
            for (size_t i = 0; i < j->n; i++) {
                j->segs[i]->warming &= ~(1u << kind);
                eng_segment_unref(j->segs[i]);
            }
            if (kind == WARM_STORY)
                eng_snap_unref(j->snap);
        }
    }
    if (!started) {
        free(j);
        return false;
    }
    warm_threads++;
    return true;
}

static bool all_made(const struct eng_snap *s, unsigned kinds)
{
    for (unsigned kind = 0; kind <= WARM_STORY; kind++) {
        for (size_t i = 0; (kinds >> kind & 1) && i < s->nseg; i++) {
            if (!column_made(s->segs[i], kind))
                return false;
        }
    }
    return true;
}

/* The columns of kinds (a bit per kind) of every segment of s made, or
 * the deadline. */
static int warm_wait(const struct eng_snap *s, unsigned kinds, struct store_readers *readers,
                     int64_t deadline_ms, struct err *err)
{
    if (deadline_ms <= 0 || all_made(s, kinds))
        return 0;
    pthread_once(&warm_once, warm_init);
    if (!warm_cond_ok)
        return 0; /* the caller makes them itself */
    int rc = 0;
    pthread_mutex_lock(&warm_lock);
    for (unsigned kind = 0; kind <= WARM_STORY; kind++) {
        if ((kinds >> kind & 1) && !warm_start(s, kind, 0, false, readers)) {
            pthread_mutex_unlock(&warm_lock);
            return 0;
        }
    }
    for (;;) {
        size_t waiting = 0;
        unsigned first = 0;
        for (size_t i = 0; i < s->nseg; i++) {
            unsigned w = s->segs[i]->warming & kinds;
            if (w && !waiting++)
                first = (unsigned)__builtin_ctz(w);
        }
        if (waiting == 0)
            break; /* made, or failed: the caller's own call says why */
        struct timespec at = clock_mono_in(deadline_ms - clock_mono_ms());
        if (clock_mono_ms() >= deadline_ms ||
            pthread_cond_timedwait(&warm_cond, &warm_lock, &at) == ETIMEDOUT) {
            rc = err_set(err, ERR_WARMING,
                         "the index is making the %s column of %zu of its segments, for the "
                         "first time since it opened",
                         kind_name(first), waiting);
            break;
        }
    }
    pthread_mutex_unlock(&warm_lock);
    return rc;
}

int eng_warm_facets(const struct eng_snap *s, unsigned mask, int64_t deadline_ms, struct err *err)
{
    return warm_wait(s, mask & ENG_WARM_FACETS, NULL, deadline_ms, err);
}

int eng_warm_stories(const struct eng_snap *s, struct store_readers *readers, int64_t deadline_ms,
                     struct err *err)
{
    return warm_wait(s, ENG_WARM_STORY, readers, deadline_ms, err);
}

void eng_warm_background(const struct eng_snap *s, unsigned kinds, uint32_t min_docs,
                         struct store_readers *readers)
{
    pthread_once(&warm_once, warm_init);
    if (!warm_cond_ok || kinds == 0)
        return;
    pthread_mutex_lock(&warm_lock);
    for (unsigned kind = 0; kind <= WARM_STORY; kind++) {
        if (kinds >> kind & 1)
            (void)warm_start(s, kind, min_docs, true, readers); /* a request makes it else */
    }
    pthread_mutex_unlock(&warm_lock);
}

void eng_warm_drain(void)
{
    pthread_once(&warm_once, warm_init);
    pthread_mutex_lock(&warm_lock);
    warm_draining++; /* a search's column that is passed over is made by its own call */
    while (warm_threads > 0 && warm_cond_ok) /* (none is started without the condition) */
        pthread_cond_wait(&warm_cond, &warm_lock);
    warm_draining--;
    pthread_mutex_unlock(&warm_lock);
}

/* --- the columns searches asked for, made again at the next start ---------
 * A column of a whole pass (warm.h) asked for once is asked for again: an
 * empty file WARM-<kind> in the index directory says so (its name is all
 * there is to read), so that the next start makes those columns on threads
 * of their own while the first searches run, instead of the first request
 * that needs one waiting (or answering 503), and each segment a merge
 * makes gets them likewise. */
#define WARM_MARK "WARM-"
/* Segments below this many documents are left to the request that asks:
 * theirs take milliseconds, and the follower publishes small ones often. */
#define WARM_MIN_DOCS 65536u

static int warm_mark_path(const struct index_engine *e, unsigned kind, char *out, size_t cap)
{
    if (e->warm_dir == NULL)
        return -1;
    return (size_t)snprintf(out, cap, "%s/" WARM_MARK "%s", e->warm_dir, kind_name(kind)) < cap
               ? 0
               : -1;
}

/* kinds asked for by a search: new ones are marked for the next start. */
void eng_warm_note(struct index_engine *e, unsigned kinds)
{
    unsigned fresh = kinds & ~atomic_fetch_or(&e->warm_kinds, kinds);
    for (unsigned kind = 0; kind <= WARM_STORY; kind++) {
        char path[4096];
        if (!(fresh >> kind & 1) || warm_mark_path(e, kind, path, sizeof path) < 0)
            continue;
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
            close(fd);
        else /* the columns are made on first use next time, as without it */
            log_warn("search index: cannot write %s: %s", path, strerror(errno));
    }
}

/* The kinds marked in the index directory (at open). */
void eng_warm_recall(struct index_engine *e)
{
    unsigned kinds = 0;
    for (unsigned kind = 0; kind <= WARM_STORY; kind++) {
        char path[4096];
        if (warm_mark_path(e, kind, path, sizeof path) == 0 && access(path, F_OK) == 0)
            kinds |= 1u << kind;
    }
    atomic_fetch_or(&e->warm_kinds, kinds);
}

/* The columns of the kinds asked for, for the current snapshot's large
 * segments that have not got them. */
void eng_warm_follow(struct index_engine *e)
{
    unsigned kinds = atomic_load(&e->warm_kinds);
    if (kinds == 0)
        return;
    struct eng_snap *s = eng_slot_get(&e->slot);
    eng_warm_background(s, kinds, e->opt.warm_min_docs ? e->opt.warm_min_docs : WARM_MIN_DOCS,
                        e->readers);
    eng_snap_unref(s);
}
