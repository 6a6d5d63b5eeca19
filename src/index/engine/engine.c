/* The engine backend (index/backend.h, docs/engine.md): the vtable, the
 * follower thread that runs the writer (writer.h), and read-your-writes. A
 * search takes a reference to the current snapshot (snapshot.c), so readers
 * never wait for the writer's work; the page rows come from the log. */
#include "index/engine/internal.h"
#include "index/engine/warm.h"
#include "index/engine/writer.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/journal.h"
#include "store/meta.h"
#include "text/text.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sort.h"
#include "util/banned.h"

/* The follower's look at the file's data version (one cheap pragma): new
 * articles show within a second while thousands a second are imported. */
#define POLL_MS 100

/* Sleep ms unless the engine stops first; true when it stopped. */
static bool sleep_unless_stopped(struct index_engine *e, int64_t ms)
{
    struct timespec at = clock_mono_in(ms);
    pthread_mutex_lock(&e->stop_lock);
    while (!e->stop && pthread_cond_timedwait(&e->stop_cond, &e->stop_lock, &at) != ETIMEDOUT)
        ;
    bool stop = e->stop;
    pthread_mutex_unlock(&e->stop_lock);
    return stop;
}

/* Wake the follower for a poll now. */
static void follower_wake(struct index_engine *e)
{
    pthread_mutex_lock(&e->stop_lock);
    pthread_cond_signal(&e->stop_cond);
    pthread_mutex_unlock(&e->stop_lock);
}

/* ERR_BUSY until the index is open (index_engine_start). */
static int not_ready(struct index_engine *e, struct err *err)
{
    return atomic_load(&e->ready) ? 0 : err_set(err, ERR_BUSY, "the search index is being built");
}

/* Segment files a snapshot maps, and their bytes. */
static uint64_t snap_file_bytes(const struct eng_snap *s, size_t *files)
{
    uint64_t bytes = 0;
    *files = 0;
    for (size_t i = 0; i < s->nseg; i++) {
        if (s->segs[i]->home == ENG_SEG_MAPPED) {
            (*files)++;
            bytes += s->segs[i]->image_len;
        }
    }
    return bytes;
}

/* Read-your-writes: when the table has moved past what the snapshot covers
 * (the log's head: an import that just committed, or a cluster replica that
 * applied a delete), wake the follower and wait for it, up to CATCH_UP_MS
 * or the request's deadline. Two indexed lookups per search. */
#define CATCH_UP_MS 1000
static void catch_up(struct index_engine *e, int64_t deadline_ms)
{
    struct store_reader *r = NULL;
    int64_t head = 0;

    if (store_readers_get(e->readers, &r, NULL) < 0)
        return;
    store_reader_head(r, &head, NULL); /* 0 when it cannot be read: no wait */
    store_readers_put(e->readers, r);

    int64_t until = clock_mono_ms() + CATCH_UP_MS;
    if (deadline_ms > 0 && deadline_ms < until)
        until = deadline_ms;
    pthread_mutex_lock(&e->stop_lock);
    while (e->pub_seq < head && !e->stop && clock_mono_ms() < until) {
        struct timespec at = clock_mono_in(20);
        pthread_cond_signal(&e->stop_cond);
        pthread_cond_timedwait(&e->pub_cond, &e->stop_lock, &at);
    }
    pthread_mutex_unlock(&e->stop_lock);
}

/* True when a segment of s failed a check (eng_segment_damage): a search
 * over it may have left out what it could not read, so it fails rather
 * than answer something else than the table holds. */
static bool snap_damaged(const struct eng_snap *s)
{
    for (size_t i = 0; i < s->nseg; i++) {
        if (eng_segment_damaged(s->segs[i]))
            return true;
    }
    return false;
}

static int engine_search(struct index_backend *b, struct arena *a, const struct index_request *req,
                         struct index_result *out, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    struct eng_snap *s;
    int64_t *ids = NULL;
    struct eng_doc_ref *refs = NULL;
    size_t n = 0, kept = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = not_ready(e, err)) < 0)
        return rc;
    catch_up(e, req->deadline_ms);
    s = eng_slot_get(&e->slot);
    /* Both cores for one search only while it is the only one and no merge
     * runs: on a busy server the other core serves the other searches, or
     * the merge (whose lower priority would leave the second half of the
     * search waiting on it rather than the merge waiting). */
    int others = atomic_fetch_add(&e->searching, 1);
    enum eng_split split = e->opt.split == INDEX_SPLIT_NEVER          ? ENG_SPLIT_NEVER
                           : e->opt.split == INDEX_SPLIT_ALWAYS       ? ENG_SPLIT_ALWAYS
                           : others == 0 && eng_merges_running() == 0 ? ENG_SPLIT_HEAVY
                                                                      : ENG_SPLIT_NEVER;
    rc = req->walk ? eng_search_walk(s, a, req, split, &out->total, &ids, &refs, &out->keys,
                                     &out->stats, &n, err)
                   : eng_search_ids(s, a, req, split, &out->total, &ids, &refs, &n, err);
    atomic_fetch_sub(&e->searching, 1);
    /* The page from the same snapshot: its segments' document stores. */
    if (rc == 0 && n > 0) {
        out->docs = arena_calloc(a, n, sizeof *out->docs);
        if (!out->docs) {
            rc = err_set(err, ERR_NOMEM, "out of memory for a page of results");
        } else if (req->ids_only) { /* every id found is a live document of s */
            for (kept = 0; kept < n; kept++)
                out->docs[kept].id = ids[kept];
        } else {
            rc = eng_page_docs(s, a, ids, refs, n, out->docs, &kept, err);
        }
    }
    if (snap_damaged(s)) {
        if (rc == 0)
            rc = err_set(err, ERR_STORE,
                         "the search index is damaged; the damaged segment is "
                         "being rebuilt from the table");
        follower_wake(e); /* the rebuild is the follower's */
    }
    eng_snap_unref(s);
    if (rc < 0)
        goto fail;
    out->n = kept;
    return 0;
fail:
    memset(out, 0, sizeof *out);
    return rc;
}

/* A one-thread job over the snapshot as engine_search takes it
 * (read-your-writes, a damaged segment fails the request): counts,
 * facets, each match's story and the articles shown by id. */
typedef int (*engine_job)(struct index_engine *e, const struct eng_snap *s, void *ctx,
                          struct err *err);

/* The end of a job over s: rc, or ERR_STORE when a segment of s is
 * damaged (its rebuild asked for); s's reference dropped. */
static int snap_done(struct index_engine *e, struct eng_snap *s, int rc, struct err *err)
{
    if (snap_damaged(s)) {
        if (rc == 0)
            rc = err_set(err, ERR_STORE,
                         "the search index is damaged; the damaged segment is "
                         "being rebuilt from the table");
        follower_wake(e);
    }
    eng_snap_unref(s);
    return rc;
}

static int engine_on_snapshot(struct index_engine *e, int64_t deadline_ms, engine_job job,
                              void *ctx, struct err *err)
{
    int rc = not_ready(e, err);
    if (rc < 0)
        return rc;
    catch_up(e, deadline_ms);
    struct eng_snap *s = eng_slot_get(&e->slot);
    atomic_fetch_add(&e->searching, 1);
    rc = job(e, s, ctx, err);
    atomic_fetch_sub(&e->searching, 1);
    return snap_done(e, s, rc, err);
}

/* index_counts and index_facets. */
struct engine_agg {
    struct arena *a;
    const struct index_request *req;
    const int64_t *bounds;
    size_t nbuckets;
    uint64_t *counts; /* counts: not NULL */
    unsigned mask;
    size_t size;
    struct index_facet_top *top;
};

static int engine_agg_job(struct index_engine *e, const struct eng_snap *s, void *ctx,
                          struct err *err)
{
    const struct engine_agg *g = ctx;
    if (g->counts)
        return eng_counts_run(s, g->a, g->req, g->bounds, g->nbuckets, g->counts, err);
    eng_warm_note(e, g->mask & ENG_WARM_FACETS);
    int rc = eng_warm_facets(s, g->mask, g->req->deadline_ms, err);
    return rc < 0 ? rc : eng_facets_run(s, g->a, g->req, g->mask, g->size, g->top, err);
}

static int engine_counts(struct index_backend *b, struct arena *a, const struct index_request *req,
                         const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err)
{
    struct engine_agg g = {
        .a = a, .req = req, .bounds = bounds, .nbuckets = nbuckets, .counts = counts};
    return engine_on_snapshot((struct index_engine *)b, req->deadline_ms, engine_agg_job, &g, err);
}

static int engine_facets(struct index_backend *b, struct arena *a, const struct index_request *req,
                         unsigned mask, size_t size, struct index_facet_top *out, struct err *err)
{
    struct engine_agg g = {.a = a, .req = req, .mask = mask, .size = size, .top = out};
    return engine_on_snapshot((struct index_engine *)b, req->deadline_ms, engine_agg_job, &g, err);
}

/* index_story_matches. */
struct engine_story_matches_ctx {
    struct arena *a;
    const struct index_request *req;
    size_t keep;
    struct index_story_matches *out;
};

static int engine_story_matches_job(struct index_engine *e, const struct eng_snap *s, void *ctx,
                                    struct err *err)
{
    struct engine_story_matches_ctx *x = ctx;
    eng_warm_note(e, ENG_WARM_STORY);
    int rc = eng_warm_stories(s, e->readers, x->req->deadline_ms, err);
    return rc < 0 ? rc : eng_story_matches_run(s, e->readers, x->a, x->req, x->keep, x->out, err);
}

static int engine_story_matches(struct index_backend *b, struct arena *a,
                                const struct index_request *req, size_t keep,
                                struct index_story_matches *out, struct err *err)
{
    struct engine_story_matches_ctx x = {a, req, keep, out};
    return engine_on_snapshot((struct index_engine *)b, req->deadline_ms, engine_story_matches_job,
                              &x, err);
}

/* index_docs: the snapshot's document stores, as a search's page (the
 * ids come from searches and story columns: live in it, or deleted since
 * and left out as a vanished row is); stories from its columns. No
 * catch-up wait: the search that gave the ids waited. */
static int engine_docs(struct index_backend *b, struct arena *a, const int64_t *ids, size_t n,
                       struct index_doc *out, int64_t *stories, size_t *kept, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = not_ready(e, err);
    *kept = 0;
    if (rc < 0)
        return rc;
    struct eng_snap *s = eng_slot_get(&e->slot);
    rc = eng_page_docs(s, a, ids, NULL, n, out, kept, err);
    if (rc == 0 && stories)
        rc = eng_page_stories(s, e->readers, out, *kept, stories, err);
    return snap_done(e, s, rc, err);
}

/* index_story_members: the snapshot's story columns, read as
 * engine_story_matches reads them. */
static int engine_story_members(struct index_backend *b, struct arena *a, int64_t story, int64_t lo,
                                int64_t hi, int64_t deadline_ms, int64_t **out, size_t *n,
                                struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = not_ready(e, err);
    if (rc < 0)
        return rc;
    catch_up(e, deadline_ms);
    struct eng_snap *s = eng_slot_get(&e->slot);
    eng_warm_note(e, ENG_WARM_STORY);
    rc = eng_warm_stories(s, e->readers, deadline_ms, err);
    if (rc == 0)
        rc = eng_story_members_run(s, e->readers, a, story, lo, hi, out, n, err);
    eng_snap_unref(s);
    return rc;
}

static int engine_term_docs(struct index_backend *b, const char *const *terms, const size_t *lens,
                            size_t n, uint64_t *df, uint64_t *ndocs, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = not_ready(e, err);
    if (rc < 0)
        return rc;
    struct eng_snap *s = eng_slot_get(&e->slot);
    eng_term_docs_run(s, terms, lens, n, df, ndocs);
    eng_snap_unref(s);
    return 0;
}

static int engine_prefix_terms(struct index_backend *b, struct arena *a, const char *p, size_t len,
                               size_t max, const char ***out, size_t *n, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = not_ready(e, err);
    if (rc < 0)
        return rc;
    struct eng_snap *s = eng_slot_get(&e->slot);
    rc = eng_prefix_terms(s, a, p, len, max, out, n);
    eng_snap_unref(s);
    return rc < 0 ? err_set(err, rc, "out of memory") : 0;
}

static int engine_newest_headline(struct index_backend *b, int64_t before, int64_t *out,
                                  struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = not_ready(e, err);
    if (rc < 0)
        return rc;
    struct eng_snap *s = eng_slot_get(&e->slot);
    const char term[] = {ENG_META_MARK, STORE_META_HEADLINE};
    int64_t hi = store_id_hi(before), best = INT64_MIN;

    for (size_t i = 0; i < s->nseg; i++) {
        const struct eng_segment *seg = s->segs[i];
        struct eng_term t;
        struct eng_cursor c;
        int found = eng_segment_term_open(seg, term, sizeof term, &t);
        if (found < 0) {
            eng_snap_unref(s);
            follower_wake(e);
            return err_set(err, ERR_STORE, "the search index is damaged");
        }
        if (found == 0)
            continue;
        eng_cursor_init(&c, seg, &t);
        uint32_t d = eng_cursor_seek(&c, eng_segment_first_le(seg, hi));
        while (d != ENG_END && eng_deletions_has(s->deletions[i], d))
            d = eng_cursor_seek(&c, d + 1);
        if (d != ENG_END && seg->ids[d] > best)
            best = seg->ids[d];
    }
    eng_snap_unref(s);
    if (best == INT64_MIN)
        return err_set(err, ERR_NOTFOUND, "no headline articles");
    *out = store_id_time(best);
    return 0;
}

/* The table's ids (ascending) and head, read in one transaction. */
static int table_ids(struct index_engine *e, int64_t **ids, size_t *n, int64_t *head,
                     struct err *err)
{
    struct store_reader *r = NULL;
    int rc;

    *ids = NULL;
    *n = 0;
    if ((rc = store_readers_get(e->readers, &r, err)) < 0)
        return rc;
    if ((rc = store_reader_begin(r, err)) == 0) {
        rc = store_reader_head(r, head, err);
        if (rc == 0)
            rc = store_reader_ids(r, ids, n, err);
        store_reader_end(r, NULL);
    }
    store_readers_put(e->readers, r);
    return rc;
}

/* Every segment checked whole, then the live documents against the table's
 * rows, on a snapshot that shows the same head as the rows read (the
 * follower is given a few chances to catch up with a busy table). */
static int engine_verify(struct index_backend *b, struct index_verify_report *out, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    struct eng_snap *s = NULL;
    int64_t *rows = NULL, *docs = NULL, head = 0;
    size_t nrows = 0, ndocs = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if ((rc = not_ready(e, err)) < 0)
        return rc;
    /* An open from the files compares the row count at its first poll. */
    for (int i = 0; i < 6000 && eng_writer_count_pending(e->w); i++) {
        struct timespec d = {0, 10 * 1000 * 1000};
        follower_wake(e);
        nanosleep(&d, NULL);
    }
    for (int attempt = 0; attempt < 50; attempt++) {
        free(rows);
        eng_snap_unref(s);
        catch_up(e, 0);
        s = eng_slot_get(&e->slot);
        if ((rc = table_ids(e, &rows, &nrows, &head, err)) < 0)
            goto out;
        if (head == s->covered)
            break;
    }
    if (head != s->covered) {
        rc = err_set(err, ERR_BUSY, "the articles table keeps changing; verify again later");
        goto out;
    }
    out->from_files = e->loaded;
    out->rows = nrows;
    out->segments = s->nseg;
    out->bytes = snap_file_bytes(s, &out->files);
    if ((rc = eng_snap_check_live(s, &docs, &ndocs, &out->extra, out->detail, sizeof out->detail)) <
        0) {
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    out->indexed = ndocs;
    qsort(docs, ndocs, sizeof *docs, sort_cmp_i64);
    size_t a = 0, d = 0;
    while (a < nrows || d < ndocs) {
        if (d < ndocs && d > 0 && docs[d] == docs[d - 1]) {
            out->extra++;
            if (!out->detail[0])
                snprintf(out->detail, sizeof out->detail, "article %lld is indexed twice",
                         (long long)docs[d]);
            d++;
        } else if (d == ndocs || (a < nrows && rows[a] < docs[d])) {
            out->missing++;
            if (!out->detail[0])
                snprintf(out->detail, sizeof out->detail, "article %lld is not indexed",
                         (long long)rows[a]);
            a++;
        } else if (a == nrows || docs[d] < rows[a]) {
            out->extra++;
            if (!out->detail[0])
                snprintf(out->detail, sizeof out->detail,
                         "article %lld is indexed but not in the table", (long long)docs[d]);
            d++;
        } else {
            a++;
            d++;
        }
    }
out:
    free(rows);
    free(docs);
    eng_snap_unref(s);
    return rc;
}

static bool engine_ready(struct index_backend *b)
{
    return atomic_load(&((struct index_engine *)b)->ready);
}

static void engine_stats(struct index_backend *b, struct index_stats *out)
{
    struct index_engine *e = (struct index_engine *)b;
    out->engine = true;
    out->merging = (uint64_t)eng_merges_running();
    out->split_searches = eng_split_searches();
    if (e->count_cache) {
        size_t bytes;
        eng_count_cache_stats(e->count_cache, &out->cache_hits, &out->cache_misses, &bytes);
    }
    if (!atomic_load(&e->ready))
        return;
    struct eng_snap *s = eng_slot_get(&e->slot);
    size_t files;
    out->documents = s->nrow;
    out->segments = s->nseg;
    out->file_bytes = snap_file_bytes(s, &files);
    eng_snap_unref(s);
}

/* How long /healthz's count check waits for the follower, at most, per
 * look (two looks when the first disagrees). */
#define COUNT_CHECK_WAIT_MS 300

/* Wait for the follower's next publish (it wakes at once), up to ms. */
static void follower_next_poll(struct index_engine *e, int64_t ms)
{
    struct timespec at = clock_mono_in(ms);
    pthread_mutex_lock(&e->stop_lock);
    pthread_cond_signal(&e->stop_cond);
    if (!e->stop)
        pthread_cond_timedwait(&e->pub_cond, &e->stop_lock, &at);
    pthread_mutex_unlock(&e->stop_lock);
}

/* One look: the table's head and rows in one read transaction, against a
 * snapshot taken after catching up. */
static int count_look(struct index_engine *e, struct index_count_check *out, struct err *err)
{
    struct store_reader *r = NULL;
    int64_t head = 0;
    int rc;
    catch_up(e, clock_mono_ms() + COUNT_CHECK_WAIT_MS);
    struct eng_snap *s = eng_slot_get(&e->slot);
    if ((rc = store_readers_get(e->readers, &r, err)) < 0)
        goto out;
    if ((rc = store_reader_begin(r, err)) == 0) {
        rc = store_reader_head(r, &head, err);
        if (rc == 0)
            rc = store_reader_count(r, &out->rows, err);
        store_reader_end(r, NULL);
    }
    store_readers_put(e->readers, r);
    out->documents = (int64_t)s->nrow;
    out->compared = rc == 0 && head == s->covered;
out:
    eng_snap_unref(s);
    return rc;
}

static int engine_count_check(struct index_backend *b, struct index_count_check *out,
                              struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc = count_look(e, out, err);
    if (rc == 0 && out->compared && out->rows != out->documents) {
        /* Rows deleted since the last poll: that poll reconciles them. */
        follower_next_poll(e, COUNT_CHECK_WAIT_MS);
        rc = count_look(e, out, err);
    }
    return rc;
}

static void engine_free(struct index_backend *b)
{
    struct index_engine *e = (struct index_engine *)b;
    if (e == NULL)
        return;
    if (e->started) {
        atomic_store(&e->stopping, true); /* also ends a build in progress */
        pthread_mutex_lock(&e->stop_lock);
        e->stop = true;
        pthread_cond_signal(&e->stop_cond);
        pthread_mutex_unlock(&e->stop_lock);
        pthread_join(e->thread, NULL);
    }
    eng_warm_drain(); /* a column being made reads the segments and e->readers */
    eng_writer_close(e->w, atomic_load(&e->ready)); /* not after a half-done open */
    eng_slot_release(&e->slot);
    eng_count_cache_free(e->count_cache); /* after the last snapshot that points at it */
    store_readers_free(e->readers);
    pthread_mutex_destroy(&e->stop_lock);
    pthread_cond_destroy(&e->stop_cond);
    pthread_cond_destroy(&e->pub_cond);
    free(e->db_path);
    free(e->warm_dir);
    free(e);
}

static bool engine_open_background(struct index_engine *e);

/* The follower thread: the writer polls the log every POLL_MS, or at once
 * when a search wants news. */
static void *follower_main(void *arg)
{
    struct index_engine *e = arg;
    struct err err;
    bool failing = false;

    if (e->background && !engine_open_background(e)) {
        text_thread_release();
        return NULL;
    }
    pthread_mutex_lock(&e->stop_lock);
    while (!e->stop) {
        struct timespec at = clock_mono_in(POLL_MS);
        int w = pthread_cond_timedwait(&e->stop_cond, &e->stop_lock, &at);
        if (e->stop)
            break;
        if (w != 0 && w != ETIMEDOUT)
            continue;
        pthread_mutex_unlock(&e->stop_lock);
        err_clear(&err);
        int rc = eng_writer_poll(e->w, &err);
        int64_t applied = eng_writer_covered(e->w);
        /* Say it once per failure streak; the next poll retries. */
        if (rc < 0 && !failing)
            log_msg(LOG_WARN, "search index: cannot follow the store: %s", err_msg(&err, rc));
        failing = rc < 0;
        eng_warm_follow(e); /* a merge's or a build's new segments */
        pthread_mutex_lock(&e->stop_lock);
        e->pub_seq = applied;
        pthread_cond_broadcast(&e->pub_cond);
        /* The checkpoint (segment files written and synced: hundreds of
         * milliseconds on a busy disk) after the searches waiting for
         * these rows were let go, not before. */
        if (rc == 0) {
            pthread_mutex_unlock(&e->stop_lock);
            eng_checkpoint_maybe(e->w);
            pthread_mutex_lock(&e->stop_lock);
        }
    }
    pthread_mutex_unlock(&e->stop_lock);
    text_thread_release(); /* this thread's stemmers */
    return NULL;
}

/* Open (map the files or build from the table), then publish; on the
 * follower thread when the engine was started in the background. */
static int engine_open_index(struct index_engine *e, struct err *err)
{
    int64_t t0 = clock_mono_ms();
    if (e->opt.build_delay_ms > 0 && sleep_unless_stopped(e, e->opt.build_delay_ms))
        return err_set(err, ERR_BUSY, "stopping"); /* tests: a slow build, ended by stop */
    struct eng_writer_config cfg = {
        .db_path = e->db_path,
        .opt = &e->opt,
        .slot = &e->slot,
        .count_cache = e->count_cache,
        .stopping = &e->stopping,
    };
    int rc = eng_writer_open(&e->w, &cfg, err);
    if (rc < 0)
        return rc;
    e->loaded = eng_writer_loaded(e->w);
    e->built_ms = clock_mono_ms() - t0;
    /* The builder's scratch is gone: give its pages back (glibc keeps them). */
    malloc_trim(0);
    struct eng_snap *sn = eng_slot_get(&e->slot);
    size_t bytes = 0;
    for (size_t i = 0; i < sn->nseg; i++) {
        const struct eng_segment *g = sn->segs[i];
        bytes += g->post_len + g->tdict_len + (size_t)g->n * 24;
    }
    log_msg(LOG_INFO, "search index: engine holds %llu articles in %zu MB, %s in %lld ms",
            (unsigned long long)sn->nrow, bytes >> 20,
            e->loaded ? "opened from its files" : "built from the table", (long long)e->built_ms);
    eng_snap_unref(sn);
    const char *dir = eng_writer_dir(e->w);
    if (dir && e->warm_dir == NULL)
        e->warm_dir = strdup(dir); /* (out of memory: no marks, as without a directory) */
    eng_warm_recall(e);
    eng_warm_follow(e); /* (before ready: its threads are running when a search comes) */
    pthread_mutex_lock(&e->stop_lock);
    e->pub_seq = eng_writer_covered(e->w);
    atomic_store(&e->ready, true);
    pthread_cond_broadcast(&e->pub_cond);
    pthread_mutex_unlock(&e->stop_lock);
    return 0;
}

/* The background open's loop: retried every few seconds until it works or
 * the engine stops (a store that cannot be read yet, a full disk). */
static bool engine_open_background(struct index_engine *e)
{
    bool said = false;
    for (;;) {
        struct err err;
        err_clear(&err);
        int rc = engine_open_index(e, &err);
        if (rc == 0)
            return true;
        if (atomic_load(&e->stopping))
            return false; /* stopped mid-build: nothing to say */
        if (!said)
            log_msg(LOG_WARN, "search index: cannot open: %s (retrying)", err_msg(&err, rc));
        said = true;
        if (sleep_unless_stopped(e, 5000))
            return false;
    }
}

/* Where the current snapshot's bytes go, segment by segment. */
static int engine_sizes(struct index_backend *b, struct index_size_report *out, struct err *err)
{
    struct index_engine *e = (struct index_engine *)b;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = not_ready(e, err)) < 0)
        return rc;
    struct eng_snap *s = eng_slot_get(&e->slot);
    out->file_bytes = snap_file_bytes(s, &out->files);
    for (size_t i = 0; i < s->nseg; i++)
        eng_segment_sizes(s->segs[i], out);
    eng_snap_unref(s);
    return 0;
}

static int engine_new(struct index_engine **out, const char *db_path,
                      const struct index_engine_options *opt, struct err *err)
{
    struct index_engine *e = calloc(1, sizeof *e);
    int rc;

    *out = NULL;
    if (e == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    e->base = (struct index_backend){
        .kind = "engine",
        .free = engine_free,
        .search = engine_search,
        .newest_headline = engine_newest_headline,
        .verify = engine_verify,
        .sizes = engine_sizes,
        .ready = engine_ready,
        .stats = engine_stats,
        .count_check = engine_count_check,
        .counts = engine_counts,
        .facets = engine_facets,
        .story_matches = engine_story_matches,
        .story_members = engine_story_members,
        .docs = engine_docs,
        .term_docs = engine_term_docs,
        .prefix_terms = engine_prefix_terms,
    };
    eng_slot_init(&e->slot);
    eng_segment_damage_init();
    pthread_mutex_init(&e->stop_lock, NULL);
    clock_cond_init(&e->stop_cond);
    clock_cond_init(&e->pub_cond);
    atomic_init(&e->ready, false);
    atomic_init(&e->stopping, false);
    e->db_path = strdup(db_path);
    if (e->db_path == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_readers_new(&e->readers, db_path, err)) < 0)
        goto out;
    if (opt)
        e->opt = *opt;
    if (!e->opt.no_count_cache && eng_count_cache_new(&e->count_cache, ENG_COUNT_CACHE_BYTES) < 0) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    *out = e;
    e = NULL;
out:
    engine_free(e ? &e->base : NULL);
    return rc;
}

/* index_engine_new (the index opened here) and index_engine_start (opened
 * by the follower thread: background) are this with the one difference. */
static int engine_launch(struct index_backend **out, const char *db_path,
                         const struct index_engine_options *opt, bool background, struct err *err)
{
    struct index_engine *e = NULL;
    int rc;

    *out = NULL;
    if ((rc = engine_new(&e, db_path, opt, err)) < 0)
        return rc;
    e->background = background;
    if (!background && (rc = engine_open_index(e, err)) < 0)
        goto out;
    if (pthread_create(&e->thread, NULL, follower_main, e) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot start the index follower");
        goto out;
    }
    e->started = true;
    *out = &e->base;
    e = NULL;
out:
    engine_free(e ? &e->base : NULL);
    return rc;
}

int index_engine_new(struct index_backend **out, const char *db_path,
                     const struct index_engine_options *opt, struct err *err)
{
    return engine_launch(out, db_path, opt, false, err);
}

int index_engine_start(struct index_backend **out, const char *db_path,
                       const struct index_engine_options *opt, struct err *err)
{
    return engine_launch(out, db_path, opt, true, err);
}

uint32_t index_engine_segment_version(void)
{
    return eng_segment_version();
}

int index_engine_staged_dir(const char *db_path, char *out, size_t n, struct err *err)
{
    return eng_staged_dir(db_path, out, n, err);
}
