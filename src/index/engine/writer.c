/* The engine's single writer (index/engine/internal.h, writer.h): at open
 * the segments the index directory's MANIFEST names are mapped and the rows
 * past what it covers are read (without a usable manifest, every row is
 * read in seq order into segments); then, whenever the log's version says
 * another connection committed, one poll reads in one snapshot the table's
 * identity, the new rows (a new segment; an article already indexed by id
 * or canonical URL has its old document deleted), and, when the row count
 * differs from the live count, reconciles; then publishes, merges and
 * checkpoints. */
#include "index/engine/writer.h"
#include "index/engine/tiers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/banned.h"

/* A checkpoint when this long has passed since the last one with changes
 * since, or when CHECKPOINT_DOCS documents are only in RAM (checkpoint.c):
 * a crash costs at most that much re-reading at the next start. */
#define CHECKPOINT_MS 5000
/* The row count is compared with the live count (deletions the log does
 * not hold: a DELETE by hand) at most this often while the table keeps
 * changing: count(*) scans an index of the whole table (55 ms at 10 M
 * articles warm, seconds cold), and made at every 100 ms poll of an
 * import it took half a core. A poll that leaves it out owes it to the
 * next one past this time, changes or not. */
#define COUNT_EVERY_MS 1000
/* ... and at most one twentieth of the follower's time: an import beside
 * the server at 10 M articles, count(*) reading its index through pread
 * while the import's writes churned the page cache, was 12.6 % of the
 * server's samples and held up each second's poll of the new rows for as
 * long (bench/fresh.py). The next count is due after this many times the
 * last one's duration, when that is longer than COUNT_EVERY_MS. */
#define COUNT_SHARE 20

/* A document dictionary of the table's segments (the last one's that has
 * one) to b, for the segment it is about to finish: a poll's segment takes
 * it rather than training one of its own (eng_builder_docs_dict). */
static void writer_docs_dict(const struct eng_writer *w, struct eng_builder *b)
{
    for (size_t i = w->nseg; i-- > 0;) {
        const struct eng_segment *s = w->segs[i];
        if (s->dict_len > 0) {
            eng_builder_docs_dict(b, s->dict, s->dict_len);
            return;
        }
    }
}

/* One look at the table; force: even when the version did not move;
 * count: compare the row count with the live count (deletions without a
 * replacement). */
static int poll_once(struct eng_writer *w, bool force, bool count, struct err *err)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    struct eng_pending p = {0};
    int64_t dv = 0, rows = 0, head = 0, applied = w->applied_seq;
    char epoch[STORE_IDENTITY_MAX];
    int rc;

    if ((rc = store_reader_version(w->db, &dv, err)) < 0)
        return rc;
    if (!force && dv == w->data_version)
        return eng_merge_maybe(w, err); /* a merge that finished meanwhile */
    /* One read transaction: the epoch, the new rows and the row count agree. */
    if ((rc = store_reader_begin(w->db, err)) < 0)
        return rc;
    if ((rc = store_reader_identity(w->db, epoch, err)) < 0) {
        store_reader_end(w->db, NULL);
        return rc;
    }
    if (strcmp(epoch, w->epoch) != 0) {
        /* Another table under the same name (a replica rebuilt from its
         * origin, a store replaced): nothing indexed belongs to it. */
        if (w->nseg > 0)
            log_msg(LOG_WARN, "search index: the articles table was replaced; reindexing");
        eng_writer_drop_all(w);
        applied = 0;
        snprintf(w->epoch, sizeof w->epoch, "%s", epoch);
    }
    p.n = w->nseg;
    if (eng_builder_new(&b) == 0)
        eng_builder_tiers(b, w->tier_min_df);
    if (b == NULL || (p.deletions = calloc(w->nseg + 1, sizeof *p.deletions)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto commit;
    }
    rc = eng_sources_load(w, err);
    unsigned workers = eng_build_workers(w);
    if (rc == 0)
        rc = eng_deletions_apply(w, &p, err);
    if (rc == 0)
        rc = workers > 1 ? eng_build_parallel(w, workers, err) : eng_rows_read_new(w, b, &p, err);
    if (rc == 0 && w->nseg > p.n) { /* a large backlog appended whole segments */
        struct eng_deletions **d = realloc(p.deletions, (w->nseg + 1) * sizeof *d);
        if (d == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
        } else {
            memset(d + p.n, 0, (w->nseg + 1 - p.n) * sizeof *d);
            p.deletions = d;
            p.n = w->nseg;
        }
    }
    if (rc == 0 && count) {
        int64_t count_start = clock_mono_ms();
        rc = store_reader_count(w->db, &rows, err);
        int64_t took = clock_mono_ms() - count_start;
        w->count_every_ms =
            took * COUNT_SHARE > COUNT_EVERY_MS ? took * COUNT_SHARE : COUNT_EVERY_MS;
    }
    if (rc == 0)
        rc = store_reader_head(w->db, &head, err);
    if (rc == 0 && count) {
        uint64_t live = eng_writer_live(w) + eng_builder_count(b);
        for (size_t i = 0; i < p.n; i++) {
            if (p.deletions[i])
                live -= p.deletions[i]->n - (w->deletions[i] ? w->deletions[i]->n : 0);
        }
        if (live != (uint64_t)rows)
            rc = eng_reconcile(w, &p, err);
    }
commit:
    store_reader_end(w->db, NULL);
    if (rc < 0)
        goto out;
    w->data_version = dv;
    if (count) {
        w->counted_ms = clock_mono_ms();
        atomic_store(&w->count_pending, false);
    } else {
        atomic_store(&w->count_pending, true);
    }
    if (eng_builder_count(b) > 0) {
        writer_docs_dict(w, b);
        if ((rc = eng_builder_finish(b, &seg)) < 0) {
            rc = err_set(err, rc, "out of memory indexing articles");
            goto out;
        }
    }
    eng_pending_apply(w, &p);
    if (seg && seg->n > 0) {
        if ((rc = eng_writer_append(w, seg)) < 0) {
            rc = err_set(err, rc, "out of memory");
            goto out;
        }
        seg = NULL;
    }
    int64_t covered_before = w->covered;
    w->covered = head;
    if ((rc = eng_writer_publish(w)) < 0) {
        w->covered = covered_before;
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    applied = w->applied_seq;
    rc = eng_merge_maybe(w, err);
out:
    w->applied_seq = applied; /* after a failure the same rows are read again */
    eng_segment_unref(seg);
    eng_pending_drop(w, &p);
    eng_builder_free(b);
    return rc;
}

bool eng_writer_count_pending(const struct eng_writer *w)
{
    return w && atomic_load(&w->count_pending);
}

int64_t eng_writer_covered(const struct eng_writer *w)
{
    return w ? w->covered : 0;
}

bool eng_writer_loaded(const struct eng_writer *w)
{
    return w->loaded;
}

const char *eng_writer_dir(const struct eng_writer *w)
{
    return w->persist ? w->dir : NULL;
}

/* Damaged segments rebuilt before the poll (a merge reading one is ended
 * first: its work would be installed over the rebuilt segment). *reread:
 * the whole table is to be read again. */
static int writer_repair(struct eng_writer *w, bool *reread, struct err *err)
{
    *reread = false;
    for (size_t i = 0; i < w->nseg; i++) {
        if (eng_segment_damaged(w->segs[i])) {
            eng_merge_stop(w);
            return eng_repair(w, reread, err);
        }
    }
    return 0;
}

int eng_writer_poll(struct eng_writer *w, struct err *err)
{
    bool reread;
    int rc = writer_repair(w, &reread, err);
    if (rc < 0)
        return rc;
    /* The count check an open from the files left for later, or one a busy
     * poll left out: forced once it is due. */
    bool due = clock_mono_ms() - w->counted_ms >= w->count_every_ms;
    return poll_once(w, reread || (due && atomic_load(&w->count_pending)), reread || due, err);
}

static int writer_load(struct eng_writer *w, struct err *err)
{
    int rc;
    if ((rc = store_reader_open(&w->db, w->db_path, err)) < 0)
        return rc;
    eng_persist_open(w);
    w->loaded = eng_persist_load(w);
    if (w->files_only && !w->loaded)
        return err_set(err, ERR_NOTFOUND,
                       "no index files of segment format %u in %s.engine (newsd serve builds "
                       "them from the store, newsd index build ahead of it)",
                       (unsigned)eng_segment_version(), w->db_path);
    /* Opening from the files leaves the row count (rows deleted while
     * newsd was stopped) to the first poll: on a cold page cache count(*)
     * is most of an open (2.5 s of 2.6 at 5 M articles). A full build
     * reads every row in one transaction: nothing to compare. */
    if ((rc = poll_once(w, true, false, err)) < 0)
        return rc;
    atomic_store(&w->count_pending, w->loaded);
    if (w->epoch[0] == '\0')
        w->writable = false; /* a table without an epoch: files could not be told apart */
    if (w->writable && (w->dirty || !w->loaded)) {
        /* (a checkpoint that works sweeps the directory itself; one that
         * fails must leave every file the MANIFEST on disk names) */
        struct err cerr;
        err_clear(&cerr);
        if ((rc = eng_checkpoint(w, &cerr)) < 0)
            log_msg(LOG_WARN, "search index: cannot write %s: %s (the index stays in memory)",
                    w->dir, err_msg(&cerr, rc));
    } else if (w->writable && w->loaded) {
        eng_dir_sweep(w);
    }
    return 0;
}

int eng_writer_open(struct eng_writer **out, const struct eng_writer_config *cfg, struct err *err)
{
    struct eng_writer *w = calloc(1, sizeof *w);
    int rc;

    *out = NULL;
    if (w == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    w->lock_fd = -1; /* closed by eng_writer_close: never fd 0 */
    uint32_t docs = cfg->opt->segment_docs;
    w->seg_full = docs > 0 && docs <= ENG_SEGMENT_FULL ? docs : ENG_SEGMENT_FULL;
    w->merge_max = ENG_MERGE_MAX;
    w->tier_min_df = cfg->opt->tier_min_df ? cfg->opt->tier_min_df : ENG_TIER_MIN_DF;
    int64_t ck = cfg->opt->checkpoint_ms;
    w->checkpoint_ms = ck == INDEX_CHECKPOINT_ALWAYS ? 0 : ck > 0 ? ck : CHECKPOINT_MS;
    w->persist = !cfg->opt->no_files;
    w->staged = cfg->opt->staged;
    w->files_only = cfg->opt->files_only;
    w->count_every_ms = COUNT_EVERY_MS;
    w->next_file = 1;
    w->stopping = cfg->stopping;
    w->slot = cfg->slot;
    w->count_cache = cfg->count_cache;
    if ((w->db_path = strdup(cfg->db_path)) == NULL) {
        free(w);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    if ((rc = writer_load(w, err)) < 0) {
        eng_writer_close(w, false);
        return rc;
    }
    *out = w;
    return 0;
}

void eng_writer_close(struct eng_writer *w, bool checkpoint)
{
    if (w == NULL)
        return;
    eng_merge_stop(w);
    if (checkpoint && w->writable && w->dirty) {
        struct err err;
        err_clear(&err);
        int rc = eng_checkpoint(w, &err);
        if (rc < 0)
            log_msg(LOG_WARN, "search index: cannot write %s: %s", w->dir, err_msg(&err, rc));
    }
    store_reader_close(w->db);
    for (size_t i = 0; i < w->nseg; i++) {
        eng_segment_unref(w->segs[i]);
        eng_deletions_unref(w->deletions[i]);
    }
    free(w->segs);
    free(w->deletions);
    for (size_t i = 0; i < w->nsrc; i++)
        free(w->srcs[i]);
    free(w->srcs);
    strtab_release(&w->src_ids);
    free(w->pop);
    free(w->pinned);
    if (w->lock_fd >= 0)
        close(w->lock_fd); /* releases the lock */
    free(w->dir);
    free(w->db_path);
    free(w);
}
