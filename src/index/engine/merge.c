/* Merges (index/engine/writer.h): the tiered, time-ordered merge policy and
 * the merge itself, on a thread of its own.
 *
 * Policy. A segment's tier is log8 of its live documents. When a tier holds
 * MERGE_FAN segments below the largest merged size, the first MERGE_FAN of
 * them in the writer's list (which is ingest order, so mostly time order)
 * are merged into one, as many as fit in merge_max documents; a segment more
 * than a quarter deleted is rewritten alone. A full build's segments of
 * 131,072 documents thus become segments of about a million, and those of
 * several million: a 10 M index ends as a handful.
 *
 * The merge reads its inputs through postings cursors and writes through
 * eng_segw (segment.c), so it depends on neither side's byte layout. The
 * new docids are a k-way merge of the inputs' live documents by article id
 * (newest first); time-adjacent inputs make it a concatenation with an
 * offset. Each term's postings are the same k-way merge of its cursors,
 * remapped.
 *
 * Background. The inputs are immutable, so the merge runs on its own thread
 * (niced: searches come first) with the deletion sets as they were when it
 * began, and writes its segment file itself. The writer keeps polling; at a
 * poll after the merge is done it installs the result: deletions made
 * meanwhile are carried over through the docid maps, the inputs are
 * replaced by the output in one published snapshot, and the next checkpoint
 * names the new file in the MANIFEST; the inputs' files are removed by the
 * sweep after that manifest is durable (a search still holding an older
 * snapshot keeps its mapping: an unlinked file stays readable while
 * mapped). A crash before the manifest leaves the old manifest and files
 * (the orphan output is swept at the next start); after, the new ones. */
#define _GNU_SOURCE /* gettid */
#include "index/engine/writer.h"
#include "index/engine/merge.h"
#include "index/engine/resid.h"
#include "index/engine/segw.h"
#include "index/engine/tiers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

#define MERGE_FAN 8
#define MERGE_NICE 10

static unsigned tier(uint64_t n)
{
    unsigned t = 0;
    while (n >= MERGE_FAN) {
        n /= MERGE_FAN;
        t++;
    }
    return t;
}

/* The canonical-URL hash of each docid of s, from its pk table. */
static uint64_t *url_of(const struct eng_segment *s)
{
    uint64_t *u = malloc(((size_t)s->n + 1) * sizeof *u);
    for (uint32_t j = 0; u && j < s->n; j++)
        u[s->pk_doc[j]] = s->pk_hash[j];
    return u;
}

/* The one offset that renumbers every docid of an input, when it has one:
 * none deleted and no other input's documents among its own (inputs
 * adjacent in time, as segments of articles indexed in time order are; a
 * first build's from rows imported in any order are not). Then a
 * posting's new docid is a sum, not a load of the map (a cache miss a
 * posting for a sparse list: eng_prefetch_ahead). MAP_LOADED: no. */
static uint32_t map_shift(const uint32_t *map, uint32_t n)
{
    if (n == 0 || map[0] == ENG_END)
        return MAP_LOADED;
    for (uint32_t d = 1; d < n; d++) {
        if (map[d] != map[0] + d)
            return MAP_LOADED;
    }
    return map[0];
}

/* New docids: the inputs' live documents merged by id, newest first (one
 * input after the other when they do not overlap in time); where each
 * comes from into m->from. Their JSON is read by merge_json. */
static int merge_docs(struct eng_merge *m, struct eng_segw **outw)
{
    uint32_t *at = calloc(m->k, sizeof *at);
    uint64_t **url = calloc(m->k, sizeof *url);
    uint64_t live = 0;
    uint32_t n = 0;
    int rc = ERR_NOMEM;

    *outw = NULL;
    if (at == NULL || url == NULL)
        goto out;
    for (size_t i = 0; i < m->k; i++) {
        live += m->in[i]->n - (m->deletions[i] ? m->deletions[i]->n : 0);
        if ((url[i] = url_of(m->in[i])) == NULL)
            goto out;
    }
    if (live >= UINT32_MAX || (m->from = malloc((live + 1) * sizeof *m->from)) == NULL ||
        eng_segw_new(outw, (uint32_t)live) < 0)
        goto out;
    eng_segw_tiers(*outw, m->tier_min_df);
    for (;;) {
        size_t best = m->k;
        for (size_t i = 0; i < m->k; i++) {
            while (at[i] < m->in[i]->n && eng_deletions_has(m->deletions[i], at[i]))
                m->map[i][at[i]++] = ENG_END;
            if (at[i] < m->in[i]->n &&
                (best == m->k || m->in[i]->ids[at[i]] > m->in[best]->ids[at[best]]))
                best = i;
        }
        if (best == m->k)
            break;
        const struct eng_segment *s = m->in[best];
        uint32_t d = at[best]++;
        m->map[best][d] = n;
        m->from[n] = (uint64_t)best << 32 | d;
        rc = eng_segw_doc(
            *outw, n++,
            &(struct eng_segw_doc){
                .id = s->ids[d], .dl = s->dl[d], .src = s->src[d], .url_hash = url[best][d]});
        if (rc < 0)
            goto out;
    }
    m->nfrom = n;
    for (size_t i = 0; i < m->k; i++)
        m->shift[i] = map_shift(m->map[i], m->in[i]->n);
    rc = 0;
out:
    for (size_t i = 0; url && i < m->k; i++)
        free(url[i]);
    free(url);
    free(at);
    return rc;
}

/* Each output document's JSON, decompressed from its input's document
 * store, into the output in docid order, to be compressed again with the
 * output's dictionary. On the thread that then compresses them, beside the
 * terms (in merge_docs it was 4 s of a 39 s merge at 1 M before the terms
 * could start). ERR_PARSE (the input marked damaged), ERR_NOMEM, ERR_BUSY. */
static int merge_json(struct eng_merge *m, struct eng_segw *w)
{
    char *json = NULL;
    size_t jcap = 0;
    int rc = 0;

    for (uint32_t n = 0; n < m->nfrom && rc == 0; n++) {
        const struct eng_segment *s = m->in[m->from[n] >> 32];
        uint32_t d = (uint32_t)m->from[n];
        size_t jlen = 0;
        if ((n & 1023) == 0 && eng_merge_stopped(m)) {
            rc = ERR_BUSY;
        } else if ((rc = eng_docs_size(s, d, &jlen)) < 0) {
            eng_segment_damage(s, "a stored article does not decode");
        } else if (eng_grow((void **)&json, &jcap, jlen + 1, 1) < 0) {
            rc = ERR_NOMEM;
        } else if (jlen > 0 && (rc = eng_docs_read(s, d, json, jlen)) < 0) {
            eng_segment_damage(s, "a stored article fails its checksum");
        } else {
            rc = eng_segw_json(w, n, json, jlen);
        }
    }
    free(json);
    return rc; /* a damaged input: the writer rebuilds it; the merge is tried again after */
}

/* The output's document store is read and compressed on a thread of its
 * own while the terms are merged: compressing every document again with the
 * new dictionary was ~15 % of a merge's time (perf, a 1 M merge), and the
 * merge is one thread beside an idle core once a first build is done. */
struct docs_job {
    struct eng_merge *m;
    struct eng_segw *w;
    int rc;
};

static void *docs_main(void *arg)
{
    struct docs_job *j = arg;
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), MERGE_NICE);
    j->rc = merge_json(j->m, j->w);
    if (j->rc == 0)
        j->rc = eng_segw_docs(j->w, &j->m->cancel);
    return NULL;
}

/* The merged segment of m's inputs (heap), or an ERR_* with m->err set. */
static int merge_build(struct eng_merge *m, struct eng_segment **out)
{
    struct eng_segw *w = NULL;
    struct docs_job job = {.m = m};
    pthread_t docs;
    bool beside = false;
    int rc = merge_docs(m, &w);
    if (rc == 0) {
        job.w = w;
        beside = pthread_create(&docs, NULL, docs_main, &job) == 0;
        if (!beside) /* the JSON here, the store built by eng_segw_finish */
            rc = merge_json(m, w);
    }
    if (rc == 0)
        rc = eng_merge_terms(m, w);
    if (beside) {
        if (rc < 0) /* the store is not wanted: stop it (the merge is over either way) */
            atomic_store(&m->cancel, true);
        pthread_join(docs, NULL);
        if (rc == 0 && job.rc < 0)
            rc = job.rc;
    }
    if (rc == 0)
        rc = eng_segw_finish(w, out);
    eng_segw_free(w);
    if (rc == ERR_UNSUPPORTED)
        err_set(&m->err, rc, "a document has more than %d occurrences of one word in a field",
                ENG_POS_MAX);
    else if (rc == ERR_BUSY)
        err_set(&m->err, rc, "stopping");
    else if (rc == ERR_PARSE)
        err_set(&m->err, rc, "an input segment is damaged (it is rebuilt from the table)");
    else if (rc < 0)
        err_set(&m->err, rc, "out of memory merging segments");
    return rc;
}

/* Merge threads running in this process: a search does not split over
 * two threads while one runs (search.c), the second core being busy. */
static atomic_int merges_running;

int eng_merges_running(void)
{
    return atomic_load(&merges_running);
}

static void *merge_main(void *arg)
{
    struct eng_merge *m = arg;
    struct eng_segment *seg = NULL;
    int rc;

    atomic_fetch_add(&merges_running, 1);
    /* Searches and ingestion come first (a thread's nice value is its own
     * on Linux). */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), MERGE_NICE);
    int64_t t0 = clock_mono_ms();
    if ((rc = merge_build(m, &seg)) < 0)
        goto out;
    m->docs = seg->n;
    if (m->file_id != 0 && seg->n > 0) {
        /* Its file now, off the writer's thread: the checkpoint that names it
         * then only writes the manifest. */
        struct eng_segment *mapped = NULL;
        if ((rc = eng_segment_write_mapped(seg, m->path, m->file_id, &mapped, &m->err)) < 0)
            goto out;
        /* its columns checked as at open (the source table is the writer's
         * thread's: the inputs' source ids were checked) */
        if ((rc = eng_segment_check_columns(mapped, UINT32_MAX, &m->err)) < 0) {
            eng_segment_unref(mapped);
            goto out;
        }
        eng_segment_unref(seg);
        seg = mapped;
    }
    m->out = seg;
    seg = NULL;
    m->ms = clock_mono_ms() - t0;
out:
    eng_segment_unref(seg);
    m->rc = rc;
    atomic_fetch_sub(&merges_running, 1);
    atomic_store(&m->done, true);
    return NULL;
}

static void merge_free(struct eng_merge *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->k; i++) {
        eng_segment_unref(m->in[i]);
        eng_deletions_unref(m->deletions[i]);
        free(m->map[i]);
    }
    free(m->in);
    free(m->deletions);
    free(m->map);
    free(m->shift);
    free(m->from);
    eng_segment_unref(m->out);
    free(m);
}

/* A merge of in[0..k) as their deletion sets deletions[] (NULL entries: none)
 * are now (new references to both); NULL when out of memory. */
static struct eng_merge *merge_new(struct eng_segment *const *in,
                                   struct eng_deletions *const *deletions, size_t k)
{
    struct eng_merge *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    err_clear(&m->err);
    m->tier_min_df = ENG_TIER_MIN_DF;
    m->resid_min_df = ENG_RESID_MIN_DF;
    atomic_init(&m->done, false);
    atomic_init(&m->cancel, false);
    if ((m->in = calloc(k, sizeof *m->in)) == NULL ||
        (m->deletions = calloc(k, sizeof *m->deletions)) == NULL ||
        (m->map = calloc(k, sizeof *m->map)) == NULL ||
        (m->shift = calloc(k, sizeof *m->shift)) == NULL) {
        merge_free(m);
        return NULL;
    }
    for (m->k = 0; m->k < k; m->k++) {
        size_t j = m->k;
        m->in[j] = in[j];
        atomic_fetch_add(&in[j]->ref, 1);
        m->deletions[j] = deletions[j];
        if (deletions[j])
            atomic_fetch_add(&deletions[j]->ref, 1);
        if ((m->map[j] = malloc(((size_t)in[j]->n + 1) * sizeof **m->map)) == NULL) {
            m->k++;
            merge_free(m);
            return NULL;
        }
    }
    return m;
}

int eng_merge_segments(struct eng_segment *const *in, struct eng_deletions *const *deletions,
                       size_t k, struct eng_segment **out, struct err *err)
{
    return eng_merge_segments_tiered(in, deletions, k, ENG_TIER_MIN_DF, ENG_RESID_MIN_DF, out, err);
}

int eng_merge_segments_tiered(struct eng_segment *const *in, struct eng_deletions *const *deletions,
                              size_t k, uint32_t tier_min_df, uint32_t resid_min_df,
                              struct eng_segment **out, struct err *err)
{
    struct eng_merge *m = merge_new(in, deletions, k);
    *out = NULL;
    if (m == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    m->tier_min_df = tier_min_df;
    m->resid_min_df = resid_min_df;
    int rc = merge_build(m, out);
    if (rc < 0)
        err_set(err, rc, "%s", err_msg(&m->err, rc));
    merge_free(m);
    return rc;
}

/* Start merging the segments flagged in pick[] (k of them) on a thread. */
static int merge_start(struct eng_writer *w, const bool *pick, size_t k, struct err *err)
{
    struct eng_segment **in = calloc(k, sizeof *in);
    struct eng_deletions **deletions = calloc(k, sizeof *deletions);
    struct eng_merge *m = NULL;
    size_t j = 0;

    for (size_t i = 0; in && deletions && i < w->nseg; i++) {
        if (pick[i]) {
            in[j] = w->segs[i];
            deletions[j++] = w->deletions[i];
        }
    }
    if (in && deletions)
        m = merge_new(in, deletions, k);
    free(in);
    free(deletions);
    if (m == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    m->stopping = w->stopping;
    m->tier_min_df = w->tier_min_df;
    if (w->writable && w->dir) {
        m->file_id = w->next_file;
        if (eng_segment_path(w, m->file_id, m->path, sizeof m->path) < 0)
            m->file_id = 0;
        else
            w->next_file++;
    }
    if (pthread_create(&m->thread, NULL, merge_main, m) != 0) {
        merge_free(m);
        return err_set(err, ERR_NOMEM, "cannot start a merge thread");
    }
    w->merge = m;
    w->merge_file = m->file_id;
    return 0;
}

/* Index of segment s in the writer's list, or nseg. */
static size_t seg_index(const struct eng_writer *w, const struct eng_segment *s)
{
    size_t i = 0;
    while (i < w->nseg && w->segs[i] != s)
        i++;
    return i;
}

/* The finished merge into the writer's list: deletions since it began
 * carried over, the inputs replaced by the output where the first was. */
static int merge_install(struct eng_writer *w, struct eng_merge *m, bool *taken)
{
    struct eng_segment *out = m->out;
    struct eng_deletions *nd = NULL;
    size_t first = w->nseg;

    for (size_t i = 0; i < m->k; i++) {
        size_t at = seg_index(w, m->in[i]);
        if (at == w->nseg)
            return 0; /* the list was dropped meanwhile (a replaced table) */
        if (at < first)
            first = at;
    }
    for (size_t i = 0; i < m->k && out; i++) {
        const struct eng_deletions *now = w->deletions[seg_index(w, m->in[i])],
                                   *then = m->deletions[i];
        if (now == then || now == NULL)
            continue;
        for (uint32_t d = 0; d < m->in[i]->n; d++) {
            uint32_t x = m->map[i][d];
            if (x == ENG_END || !eng_deletions_has(now, d) || eng_deletions_has(then, d))
                continue;
            if (nd == NULL && (nd = eng_deletions_new(out->n)) == NULL)
                return ERR_NOMEM;
            nd->bits[x >> 6] |= (uint64_t)1 << (x & 63);
            nd->n++;
            nd->ntoken += out->dl[x];
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < w->nseg; i++) {
        bool input = false;
        for (size_t j = 0; j < m->k && !input; j++)
            input = w->segs[i] == m->in[j];
        if (!input) {
            w->segs[k] = w->segs[i];
            w->deletions[k++] = w->deletions[i];
            continue;
        }
        eng_segment_unref(w->segs[i]);
        eng_deletions_unref(w->deletions[i]);
        if (i == first && out && out->n > 0) { /* out takes the first input's place */
            w->segs[k] = out;
            w->deletions[k++] = nd;
            *taken = true;
            out = NULL;
            nd = NULL;
        }
    }
    w->nseg = k;
    m->out = out; /* an empty output is freed with the job */
    eng_deletions_unref(nd);
    w->dirty = true;
    return eng_writer_publish(w);
}

/* A merge's output file that no list took (dropped, failed, cancelled):
 * removed now rather than left to the next sweep. */
static void merge_unlink(const struct eng_merge *m)
{
    char tmp[4200];
    if (m->file_id == 0)
        return;
    unlink(m->path);
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", m->path) < sizeof tmp)
        unlink(tmp);
}

void eng_merge_stop(struct eng_writer *w)
{
    if (w->merge == NULL)
        return;
    atomic_store(&w->merge->cancel, true);
    pthread_join(w->merge->thread, NULL);
    merge_unlink(w->merge);
    merge_free(w->merge);
    w->merge = NULL;
    w->merge_file = 0;
}

/* Segments a merge found it cannot rewrite from postings, never picked again. */
static bool pinned(const struct eng_writer *w, const struct eng_segment *s)
{
    for (size_t i = 0; i < w->npinned; i++) {
        if (w->pinned[i] == s->gen)
            return true;
    }
    return false;
}

static void pin_inputs(struct eng_writer *w, const struct eng_merge *m)
{
    uint64_t *p = realloc(w->pinned, (w->npinned + m->k) * sizeof *p);
    if (p == NULL)
        return;
    w->pinned = p;
    for (size_t i = 0; i < m->k; i++)
        w->pinned[w->npinned++] = m->in[i]->gen;
}

/* Not to be merged now: pinned, or only in RAM while there are files (a
 * checkpoint is about to put its mapped file in its place, and the merge,
 * which finds its inputs by pointer, would then be dropped). */
static bool skip(const struct eng_writer *w, const struct eng_segment *s)
{
    return pinned(w, s) || (w->writable && w->dir && s->file_id == 0);
}

/* The merge to start now, flagged in pick[]; its size. */
static size_t merge_pick(const struct eng_writer *w, bool *pick)
{
    unsigned counts[32] = {0};
    int want = -1;

    for (size_t i = 0; i < w->nseg; i++) {
        uint32_t dn = w->deletions[i] ? w->deletions[i]->n : 0;
        if (skip(w, w->segs[i]))
            continue;
        if (dn > 0 && (uint64_t)dn * 4 > w->segs[i]->n) {
            pick[i] = true;
            return 1;
        }
        uint64_t live = w->segs[i]->n - dn;
        if (live * 2 > w->merge_max)
            continue;
        unsigned t = tier(live);
        if (t < 32 && ++counts[t] >= MERGE_FAN && want < 0)
            want = (int)t;
    }
    if (want < 0)
        return 0;
    size_t n = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < w->nseg && n < MERGE_FAN; i++) {
        uint64_t live = w->segs[i]->n - (w->deletions[i] ? w->deletions[i]->n : 0);
        if (skip(w, w->segs[i]) || live * 2 > w->merge_max || tier(live) != (unsigned)want)
            continue;
        if (n >= 2 && sum + live > w->merge_max)
            break;
        pick[i] = true;
        sum += live;
        n++;
    }
    return n;
}

int eng_merge_maybe(struct eng_writer *w, struct err *err)
{
    int rc = 0;

    if (w->merge != NULL) {
        if (!atomic_load(&w->merge->done))
            return 0;
        struct eng_merge *m = w->merge;
        pthread_join(m->thread, NULL);
        bool taken = false;
        if (m->rc == 0) {
            rc = merge_install(w, m, &taken);
            if (rc < 0)
                rc = err_set(err, rc, "out of memory");
            else if (taken)
                log_msg(LOG_INFO,
                        "search index: merged %zu segments into one of %u documents "
                        "in %lld ms (%zu segments now)",
                        m->k, m->docs, (long long)m->ms, w->nseg);
        } else if (m->rc == ERR_UNSUPPORTED) {
            log_msg(LOG_WARN, "search index: segments left unmerged: %s", err_msg(&m->err, m->rc));
            pin_inputs(w, m);
        } else if (m->rc != ERR_BUSY) {
            log_msg(LOG_WARN, "search index: merge failed: %s (retried)", err_msg(&m->err, m->rc));
        }
        if (!taken)
            merge_unlink(m);
        merge_free(m);
        w->merge = NULL;
        w->merge_file = 0;
        if (rc < 0)
            return rc;
    }
    bool *pick = calloc(w->nseg + 1, sizeof *pick);
    if (pick == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    size_t k = merge_pick(w, pick);
    if (k > 0)
        rc = merge_start(w, pick, k, err);
    free(pick);
    return rc;
}
