/* Loading and following the articles table (index/engine/internal.h): the
 * single writer. At open the segments the index directory's MANIFEST names
 * are mapped and the rows past what it covers are read (without a usable
 * manifest, every row is read in seq order into segments); then, whenever PRAGMA data_version says
 * another connection committed, rows with seq > applied become a new segment, an article whose
 * canonical_url (or id) is already indexed has its old document deleted,
 * and when the table's row count still differs from the index's live count
 * (rows deleted without a replacement) every indexed id is checked against
 * the table. Segments of similar size are merged eight at a time (and a
 * segment with more than a quarter deleted is rewritten) by re-reading
 * their live rows: the table is the document store, there is no other.
 * Checkpoints write the segments built since the last one to files, map
 * them in place of their heap copies, and replace the manifest. */
#include "index/engine/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

#include "store/log.h"
#include "util/banned.h"

#define MERGE_FAN 8
/* Documents per segment built at open, and the size past which a segment
 * is no longer merged with others (only rewritten when a quarter is
 * deleted): a bounded builder keeps the build's hash table and peak memory
 * small, at the cost of visiting N / SEGMENT_FULL segments per query. */
#define SEGMENT_FULL 131072
#define SEGMENT_FULL_ENV "NEWSD_ENGINE_SEGMENT_DOCS" /* tests: many small segments */
/* A checkpoint when this long has passed since the last one with changes
 * since, or when this many documents are only in RAM: a crash costs at
 * most that much re-reading at the next start. */
#define CHECKPOINT_MS 5000
#define CHECKPOINT_DOCS 65536
#define CHECKPOINT_RETRY_MS 60000
#define CHECKPOINT_ENV "NEWSD_ENGINE_CHECKPOINT_MS" /* tests: 0 = after every change */
#define PERSIST_ENV "NEWSD_ENGINE_PERSIST"          /* "0": never read or write files */
struct eng_writer {
    struct store_reader *db;
    int64_t data_version;
    int64_t applied_seq;
    int64_t covered;                /* the log's head as of the last successful poll */
    char epoch[STORE_IDENTITY_MAX]; /* the table's identity the segments belong to */
    /* persistence: the index directory, NULL when there is none */
    char *dir;
    int lock_fd;   /* <dir>/lock, flock()ed by the one process that writes */
    bool writable; /* this process holds the lock */
    bool dirty;    /* changes since the last manifest */
    uint64_t next_file;
    int64_t last_checkpoint_ms;
    int64_t checkpoint_retry_ms; /* after a failed checkpoint: not before this */
    int64_t checkpoint_ms;
    /* interned source ids */
    char **srcs;
    size_t nsrc, srccap;
    uint32_t *shash;
    size_t shcap;
    double *pop;                 /* by interned id */
    uint32_t seg_full;           /* SEGMENT_FULL unless the environment says otherwise */
    const atomic_bool *stopping; /* the engine is being freed: a long read ends */
    atomic_bool count_pending;   /* the row count check is still to be made (eng_follow_poll) */
    /* the writer's copy of what it last published */
    size_t nseg;
    struct eng_segment **segs;
    struct eng_dels **dels;
};

/* --- sources ---------------------------------------------------------------- */

static int src_intern(struct eng_writer *w, const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    if ((w->nsrc + 1) * 2 > w->shcap) {
        size_t cap = w->shcap ? w->shcap * 2 : 256;
        uint32_t *h = calloc(cap, sizeof *h);
        if (h == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < w->nsrc; i++) {
            size_t j = eng_hash_bytes(w->srcs[i], strlen(w->srcs[i])) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(w->shash);
        w->shash = h;
        w->shcap = cap;
    }
    size_t j = eng_hash_bytes(s, n) & (w->shcap - 1);
    while (w->shash[j]) {
        if (strcmp(w->srcs[w->shash[j] - 1], s) == 0) {
            *out = w->shash[j] - 1;
            return 0;
        }
        j = (j + 1) & (w->shcap - 1);
    }
    if (w->nsrc == w->srccap) {
        size_t cap = w->srccap ? w->srccap * 2 : 256;
        char **v = realloc(w->srcs, cap * sizeof *v);
        double *p = v ? realloc(w->pop, cap * sizeof *p) : NULL;
        if (v)
            w->srcs = v;
        if (p == NULL)
            return ERR_NOMEM;
        w->pop = p;
        w->srccap = cap;
    }
    if ((w->srcs[w->nsrc] = strdup(s)) == NULL)
        return ERR_NOMEM;
    w->pop[w->nsrc] = -1.0; /* not in the catalogue: below every source (fts5.c) */
    w->shash[j] = (uint32_t)w->nsrc + 1;
    *out = (uint32_t)w->nsrc++;
    return 0;
}

static int source_seen(void *ctx, const char *id, double popularity)
{
    struct eng_writer *w = ctx;
    uint32_t k;
    int rc = src_intern(w, id, &k);
    if (rc == 0)
        w->pop[k] = popularity;
    return rc;
}

/* Popularity of every catalogue source (coalesce(popularity, -1) of fts5.c). */
static int sources_load(struct eng_writer *w, struct err *err)
{
    for (size_t i = 0; i < w->nsrc; i++)
        w->pop[i] = -1.0;
    int rc = store_reader_sources(w->db, source_seen, w, err);
    if (rc == ERR_NOMEM)
        return err_set(err, rc, "out of memory");
    return rc;
}

/* --- deletes (copy-on-write per poll) ---------------------------------------- */

struct pending {
    struct eng_dels **dels; /* per segment: the writer's new set, or NULL = unchanged */
    size_t n;               /* segments when the poll began (later ones have no deletions) */
    bool changed;
};

static int dels_mark(struct eng_writer *w, struct pending *p, size_t si, uint32_t doc)
{
    const struct eng_segment *seg = w->segs[si];
    struct eng_dels *d = p->dels[si];
    if (d == NULL) {
        size_t words = (seg->n + 63) / 64 + 1;
        d = calloc(1, sizeof *d);
        if (d == NULL || (d->bits = calloc(words, sizeof *d->bits)) == NULL) {
            free(d);
            return ERR_NOMEM;
        }
        atomic_init(&d->ref, 1);
        d->gen = eng_next_gen();
        if (w->dels[si]) {
            memcpy(d->bits, w->dels[si]->bits, words * sizeof *d->bits);
            d->n = w->dels[si]->n;
            d->ntoken = w->dels[si]->ntoken;
        }
        p->dels[si] = d;
    }
    if (eng_dels_has(d, doc))
        return 0;
    d->bits[doc >> 6] |= (uint64_t)1 << (doc & 63);
    d->n++;
    d->ntoken += seg->dl[doc];
    p->changed = true;
    return 0;
}

static const struct eng_dels *dels_now(const struct eng_writer *w, const struct pending *p,
                                       size_t si)
{
    return p->dels[si] ? p->dels[si] : w->dels[si];
}

/* Delete the live document of article id, wherever it is (segments of
 * this poll hold only live rows: they are not searched). */
static int delete_id(struct eng_writer *w, struct pending *p, int64_t id)
{
    for (size_t i = 0; i < p->n; i++) {
        uint32_t d = eng_segment_find(w->segs[i], id);
        if (d != ENG_END && !eng_dels_has(dels_now(w, p, i), d))
            return dels_mark(w, p, i, d);
    }
    return 0;
}

/* Delete the live documents whose canonical URL hashes to h: an upsert
 * that gave the article a new id (its publication time changed). A 64-bit
 * hash is the key: two canonical URLs colliding (odds ~1e-8 at 1e6
 * articles) would make the second's arrival delete the first from the
 * index (docs/engine.md). */
static int delete_url(struct eng_writer *w, struct pending *p, uint64_t h)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t k = eng_segment_pk_first(seg, h); k < seg->n && seg->pk_hash[k] == h; k++) {
            uint32_t d = seg->pk_doc[k];
            int rc;
            if (!eng_dels_has(dels_now(w, p, i), d) && (rc = dels_mark(w, p, i, d)) < 0)
                return rc;
        }
    }
    return 0;
}

/* --- publishing ----------------------------------------------------------- */

static uint64_t live_count(const struct eng_writer *w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->nseg; i++)
        n += w->segs[i]->n - (w->dels[i] ? w->dels[i]->n : 0);
    return n;
}

/* A snapshot of the writer's state (new references throughout). */
static int publish(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    struct eng_snap *s = calloc(1, sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    atomic_init(&s->ref, 1);
    s->segs = calloc(w->nseg + 1, sizeof *s->segs);
    s->dels = calloc(w->nseg + 1, sizeof *s->dels);
    s->pop = malloc((w->nsrc + 1) * sizeof *s->pop);
    if (s->segs == NULL || s->dels == NULL || s->pop == NULL) {
        eng_snap_unref(s);
        return ERR_NOMEM;
    }
    if (w->nsrc)
        memcpy(s->pop, w->pop, w->nsrc * sizeof *s->pop);
    s->npop = w->nsrc;
    s->nseg = w->nseg;
    s->covered = w->covered;
    s->ccache = e->ccache;
    for (size_t i = 0; i < w->nseg; i++) {
        s->segs[i] = w->segs[i];
        atomic_fetch_add(&w->segs[i]->ref, 1);
        s->dels[i] = w->dels[i];
        if (w->dels[i])
            atomic_fetch_add(&w->dels[i]->ref, 1);
        s->nrow += w->segs[i]->n - (w->dels[i] ? w->dels[i]->n : 0);
        s->ntoken += w->segs[i]->ntoken - (w->dels[i] ? w->dels[i]->ntoken : 0);
    }
    eng_snap_publish(e, s);
    return 0;
}

/* Adopt the pending delete sets into the writer's state. */
static void pending_apply(struct eng_writer *w, struct pending *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->dels[i] == NULL)
            continue;
        eng_dels_unref(w->dels[i]);
        w->dels[i] = p->dels[i];
        p->dels[i] = NULL;
        w->dirty = true;
    }
}

static void pending_drop(struct eng_writer *w, struct pending *p)
{
    (void)w;
    if (p->dels == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        eng_dels_unref(p->dels[i]);
    free(p->dels);
    p->dels = NULL;
}

static int seg_append(struct eng_writer *w, struct eng_segment *seg)
{
    struct eng_segment **s = realloc(w->segs, (w->nseg + 1) * sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    w->segs = s;
    struct eng_dels **d = realloc(w->dels, (w->nseg + 1) * sizeof *d);
    if (d == NULL)
        return ERR_NOMEM;
    w->dels = d;
    w->segs[w->nseg] = seg;
    w->dels[w->nseg] = NULL;
    w->nseg++;
    w->dirty = true;
    return 0;
}

static int segment_persist(struct eng_writer *w, size_t i, struct err *err);

/* --- reading rows ----------------------------------------------------------- */

/* The hash of the row's canonical URL (0 for none). */
static uint64_t row_url_hash(const struct store_row *row)
{
    const char *url = row->canonical_url;
    return url ? eng_hash_bytes(url, strlen(url)) : 0;
}

static int row_add(struct eng_writer *w, struct eng_builder *b, const struct store_row *row,
                   uint64_t url_hash)
{
    struct eng_row r = {
        .id = row->id,
        .seq = row->seq,
        .published_at = row->published_at,
        .title = row->title,
        .description = row->description,
        .content = row->content,
        .language = row->language,
        .meta_terms = row->meta_terms,
        .src = ENG_NO_SOURCE,
        .url_hash = url_hash,
    };
    if (row->source_id && src_intern(w, row->source_id, &r.src) < 0)
        return ERR_NOMEM;
    return eng_builder_add(b, &r);
}

/* New rows (seq > applied) into b, deleting the documents they replace. */
static int read_new(struct eng_writer *w, struct eng_builder *b, struct pending *p, struct err *err)
{
    struct store_rows *rows = NULL;
    struct store_row row;
    int rc = store_rows_after(&rows, w->db, w->applied_seq, err);
    if (rc < 0)
        return rc;
    /* (a failure of the read itself has set err: only the others are said here) */
    while ((rc = store_rows_next(rows, &row, err)) == 1) {
        uint64_t url_hash = row_url_hash(&row);
        if ((p->n > 0 && (rc = delete_id(w, p, row.id)) < 0) ||
            (p->n > 0 && url_hash && (rc = delete_url(w, p, url_hash)) < 0) ||
            (rc = row_add(w, b, &row, url_hash)) < 0) {
            rc = err_set(err, rc, "out of memory indexing articles");
            break;
        }
        w->applied_seq = row.seq;
        if ((eng_builder_count(b) & 4095) == 0 && w->stopping && atomic_load(w->stopping)) {
            rc = err_set(err, ERR_BUSY, "stopping");
            break;
        }
        /* A large backlog (the first load, or a restart far behind) is cut
         * into full segments as it is read. */
        if (eng_builder_count(b) >= w->seg_full) {
            struct eng_segment *seg = NULL;
            if ((rc = eng_builder_finish(b, &seg)) < 0 || (rc = seg_append(w, seg)) < 0) {
                eng_segment_unref(seg);
                rc = err_set(err, rc, "out of memory indexing articles");
                break;
            }
            /* To its file at once: a build larger than RAM then fits (the
             * kernel pages the files), and its peak is one segment's. */
            struct err perr;
            err_clear(&perr);
            if (w->writable && segment_persist(w, w->nseg - 1, &perr) < 0)
                log_msg(LOG_WARN, "search index: %s (the segment stays in memory)",
                        err_msg(&perr, ERR_IO));
        }
    }
    store_rows_free(rows);
    return rc < 0 ? rc : 0;
}

int eng_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Rows deleted without a replacement: every live id checked against the table. */
static int reconcile(struct eng_writer *w, struct pending *p, struct err *err)
{
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = store_reader_ids(w->db, &ids, &n, err);

    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t d = 0; d < seg->n && rc == 0; d++) {
            if (eng_dels_has(dels_now(w, p, i), d))
                continue;
            if (bsearch(&seg->ids[d], ids, n, sizeof *ids, eng_cmp_i64) == NULL &&
                (rc = dels_mark(w, p, i, d)) < 0)
                rc = err_set(err, rc, "out of memory");
        }
    }
    free(ids);
    return rc;
}

/* --- merging ------------------------------------------------------------- */

static unsigned tier(uint64_t n)
{
    unsigned t = 0;
    while (n >= MERGE_FAN) {
        n /= MERGE_FAN;
        t++;
    }
    return t;
}

/* Rebuild the segments flagged in pick[] from their live rows, as one. */
static int merge(struct index_engine *e, const bool *pick, struct err *err)
{
    struct eng_writer *w = e->w;
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    int rc;

    if (eng_builder_new(&b) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_rows_by_id(&rows, w->db, err)) < 0)
        goto out;
    if ((rc = store_reader_begin(w->db, err)) < 0)
        goto out;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        if (!pick[i])
            continue;
        for (uint32_t d = 0; d < w->segs[i]->n && rc == 0; d++) {
            if (eng_dels_has(w->dels[i], d))
                continue;
            rc = store_rows_get(rows, w->segs[i]->ids[d], &row, err);
            if (rc == 1)
                rc = row_add(w, b, &row, row_url_hash(&row)) < 0
                         ? err_set(err, ERR_NOMEM, "out of memory")
                         : 0;
            /* (0: deleted meanwhile: dropped here, the count check agrees) */
        }
    }
    store_reader_end(w->db, NULL);
    if (rc < 0)
        goto out;
    if ((rc = eng_builder_finish(b, &seg)) < 0) {
        rc = err_set(err, rc, "out of memory merging segments");
        goto out;
    }
    /* The new segment first: if that fails, nothing is dropped. */
    size_t old_n = w->nseg;
    if (seg->n == 0) {
        eng_segment_unref(seg);
    } else if ((rc = seg_append(w, seg)) < 0) {
        eng_segment_unref(seg);
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->nseg; i++) {
        if (i < old_n && pick[i]) {
            eng_segment_unref(w->segs[i]);
            eng_dels_unref(w->dels[i]);
            continue;
        }
        w->segs[k] = w->segs[i];
        w->dels[k++] = w->dels[i];
    }
    w->nseg = k;
    w->dirty = true;
    rc = publish(e);
    if (rc < 0)
        rc = err_set(err, rc, "out of memory");
out:
    store_rows_free(rows);
    eng_builder_free(b);
    return rc;
}

/* One merge when a tier holds MERGE_FAN segments or a segment is more than
 * a quarter deleted. */
static int maybe_merge(struct index_engine *e, struct err *err)
{
    struct eng_writer *w = e->w;
    bool *pick = calloc(w->nseg + 1, sizeof *pick);
    unsigned counts[32] = {0};
    int rc = 0, want = -1;

    if (pick == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < w->nseg; i++) {
        uint32_t dn = w->dels[i] ? w->dels[i]->n : 0;
        if (dn > 0 && (uint64_t)dn * 4 > w->segs[i]->n) {
            pick[i] = true;
            want = 0;
            break;
        }
        if (w->segs[i]->n - dn >= w->seg_full)
            continue;
        unsigned t = tier(w->segs[i]->n - dn);
        if (t < 32 && ++counts[t] >= MERGE_FAN && want < 0)
            want = (int)t + 1;
    }
    if (want > 0) {
        unsigned n = 0;
        for (size_t i = 0; i < w->nseg && n < MERGE_FAN; i++) {
            uint32_t dn = w->dels[i] ? w->dels[i]->n : 0;
            if (w->segs[i]->n - dn < w->seg_full &&
                tier(w->segs[i]->n - dn) == (unsigned)(want - 1)) {
                pick[i] = true;
                n++;
            }
        }
    }
    if (want >= 0)
        rc = merge(e, pick, err);
    free(pick);
    return rc;
}

/* --- the poll ------------------------------------------------------------- */

static void segments_drop(struct eng_writer *w)
{
    for (size_t i = 0; i < w->nseg; i++) {
        eng_segment_unref(w->segs[i]);
        eng_dels_unref(w->dels[i]);
    }
    w->nseg = 0;
    w->applied_seq = 0;
    w->covered = 0;
    w->dirty = true;
}

/* The table's identity ("" when it has none). */
static int epoch_read(struct eng_writer *w, char out[STORE_IDENTITY_MAX], struct err *err)
{
    return store_reader_identity(w->db, out, err);
}

/* One look at the table; force: even when data_version did not move;
 * count: compare the row count with the live count (deletions without a
 * replacement). */
static int poll_once(struct index_engine *e, bool force, bool count, struct err *err)
{
    struct eng_writer *w = e->w;
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    struct pending p = {0};
    int64_t dv = 0, rows = 0, head = 0, applied = w->applied_seq;
    char epoch[STORE_IDENTITY_MAX];
    int rc;

    if ((rc = store_reader_version(w->db, &dv, err)) < 0)
        return rc;
    if (!force && dv == w->data_version)
        return 0;
    /* One read transaction: the epoch, the new rows and the row count agree. */
    if ((rc = store_reader_begin(w->db, err)) < 0)
        return rc;
    if ((rc = epoch_read(w, epoch, err)) < 0) {
        store_reader_end(w->db, NULL);
        return rc;
    }
    if (strcmp(epoch, w->epoch) != 0) {
        /* Another table under the same name (a replica rebuilt from its
         * origin, a store replaced): nothing indexed belongs to it. */
        if (w->nseg > 0)
            log_msg(LOG_WARN, "search index: the articles table was replaced; reindexing");
        segments_drop(w);
        applied = 0;
        snprintf(w->epoch, sizeof w->epoch, "%s", epoch);
    }
    p.n = w->nseg;
    if (eng_builder_new(&b) < 0 || (p.dels = calloc(w->nseg + 1, sizeof *p.dels)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto commit;
    }
    rc = sources_load(w, err);
    if (rc == 0)
        rc = read_new(w, b, &p, err);
    if (rc == 0 && w->nseg > p.n) { /* a large backlog appended whole segments */
        struct eng_dels **d = realloc(p.dels, (w->nseg + 1) * sizeof *d);
        if (d == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
        } else {
            memset(d + p.n, 0, (w->nseg + 1 - p.n) * sizeof *d);
            p.dels = d;
            p.n = w->nseg;
        }
    }
    if (rc == 0 && count)
        rc = store_reader_count(w->db, &rows, err);
    if (rc == 0)
        rc = store_reader_head(w->db, &head, err);
    if (rc == 0 && count) {
        uint64_t live = live_count(w) + eng_builder_count(b);
        for (size_t i = 0; i < p.n; i++) {
            if (p.dels[i])
                live -= p.dels[i]->n - (w->dels[i] ? w->dels[i]->n : 0);
        }
        if (live != (uint64_t)rows)
            rc = reconcile(w, &p, err);
    }
commit:
    store_reader_end(w->db, NULL);
    if (rc < 0)
        goto out;
    w->data_version = dv;
    if (eng_builder_count(b) > 0 && (rc = eng_builder_finish(b, &seg)) < 0) {
        rc = err_set(err, rc, "out of memory indexing articles");
        goto out;
    }
    pending_apply(w, &p);
    if (seg && seg->n > 0) {
        if ((rc = seg_append(w, seg)) < 0) {
            rc = err_set(err, rc, "out of memory");
            goto out;
        }
        seg = NULL;
    }
    int64_t covered_before = w->covered;
    w->covered = head;
    if ((rc = publish(e)) < 0) {
        w->covered = covered_before;
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    applied = w->applied_seq;
    rc = maybe_merge(e, err);
out:
    w->applied_seq = applied; /* after a failure the same rows are read again */
    eng_segment_unref(seg);
    pending_drop(w, &p);
    eng_builder_free(b);
    return rc;
}

/* --- persistence ------------------------------------------------------------ */

static int seg_path(const struct eng_writer *w, uint64_t id, char *out, size_t cap)
{
    return (size_t)snprintf(out, cap, "%s/seg-%016" PRIx64 ".seg", w->dir, id) < cap ? 0 : -1;
}

/* Remove what the manifest does not name: segments a crash left behind or
 * a merge replaced, and half-written .tmp files. */
static void dir_sweep(const struct eng_writer *w)
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        uint64_t id = 0;
        char tail[8] = "";
        bool keep = true;
        size_t len = strlen(de->d_name);
        if (len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0) {
            keep = false;
        } else if (sscanf(de->d_name, "seg-%16" SCNx64 "%7s", &id, tail) == 2 &&
                   strcmp(tail, ".seg") == 0) {
            keep = false;
            for (size_t i = 0; i < w->nseg && !keep; i++)
                keep = w->segs[i]->file_id == id;
        }
        if (!keep) {
            char path[4096];
            if ((size_t)snprintf(path, sizeof path, "%s/%s", w->dir, de->d_name) < sizeof path)
                unlink(path);
        }
    }
    closedir(d);
}

/* Write segment i to its file and put the mapped file in its place (the
 * heap copy goes with the last snapshot that holds it). */
static int segment_persist(struct eng_writer *w, size_t i, struct err *err)
{
    char path[4096];
    struct eng_segment *mapped = NULL;
    uint64_t id = w->next_file++;
    int rc;

    if (seg_path(w, id, path, sizeof path) < 0)
        return err_set(err, ERR_INVALID, "index path too long");
    if ((rc = eng_segment_write(w->segs[i], path, err)) < 0 ||
        (rc = eng_segment_map(path, id, &mapped, err)) < 0)
        return rc;
    if (mapped->n != w->segs[i]->n || mapped->nterms != w->segs[i]->nterms) {
        eng_segment_unref(mapped);
        return err_set(err, ERR_IO, "%s reads back different from what was written", path);
    }
    eng_segment_unref(w->segs[i]);
    w->segs[i] = mapped;
    return 0;
}

/* Write the segments only in RAM, map them in place of their heap copies,
 * then replace the manifest: a crash anywhere leaves the old manifest and
 * files it names, or the new ones. */
static int checkpoint(struct index_engine *e, struct err *err)
{
    struct eng_writer *w = e->w;
    struct eng_manifest m = {0};
    bool wrote = false;
    int rc = 0;

    if (!w->writable)
        return 0;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        if (w->segs[i]->file_id != 0)
            continue;
        if ((rc = segment_persist(w, i, err)) == 0)
            wrote = true;
    }
    if (wrote) /* the snapshot then searches the mapped files, not the heap copies */
        publish(e);
    /* The segment files' names are durable before a manifest names them. */
    if (rc == 0)
        rc = eng_dir_sync(w->dir, err);
    if (rc < 0)
        return rc;

    snprintf(m.epoch, sizeof m.epoch, "%s", w->epoch);
    m.applied_seq = w->applied_seq;
    m.covered = w->covered;
    m.next_file = w->next_file;
    m.nsrc = (uint32_t)w->nsrc;
    m.srcs = w->srcs; /* borrowed: not cleared below */
    m.nseg = (uint32_t)w->nseg;
    m.segs = calloc(w->nseg + 1, sizeof *m.segs);
    if (m.segs == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_dels *d = w->dels[i];
        struct eng_manifest_seg *ms = &m.segs[i];
        ms->file_id = w->segs[i]->file_id;
        ms->n = w->segs[i]->n;
        if ((ms->del = malloc(((size_t)(d ? d->n : 0) + 1) * sizeof *ms->del)) == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
            break;
        }
        for (uint32_t k = 0; d && k < w->segs[i]->n; k++) {
            if (eng_dels_has(d, k))
                ms->del[ms->ndel++] = k;
        }
    }
    if (rc == 0)
        rc = eng_manifest_write(w->dir, &m, err);
    for (size_t i = 0; i < w->nseg; i++)
        free(m.segs[i].del);
    free(m.segs);
    if (rc < 0)
        return rc;
    w->dirty = false;
    w->last_checkpoint_ms = eng_mono_ms();
    dir_sweep(w);
    return 0;
}

/* A checkpoint when one is due. A failed one (a full disk) is logged once
 * and retried after CHECKPOINT_RETRY_MS, not at every poll: the index keeps
 * serving from RAM meanwhile, and the next start reads more rows again. */
static void maybe_checkpoint(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    uint64_t heap_docs = 0;
    int64_t now = eng_mono_ms();
    if (!w->writable || !w->dirty || now < w->checkpoint_retry_ms)
        return;
    for (size_t i = 0; i < w->nseg; i++) {
        if (w->segs[i]->file_id == 0)
            heap_docs += w->segs[i]->n;
    }
    if (heap_docs < CHECKPOINT_DOCS && now - w->last_checkpoint_ms < w->checkpoint_ms)
        return;
    struct err err;
    err_clear(&err);
    int rc = checkpoint(e, &err);
    if (rc < 0 && w->checkpoint_retry_ms == 0)
        log_msg(LOG_WARN, "search index: cannot write %s: %s (kept in memory; retrying every %d s)",
                w->dir, err_msg(&err, rc), CHECKPOINT_RETRY_MS / 1000);
    else if (rc == 0 && w->checkpoint_retry_ms != 0)
        log_msg(LOG_INFO, "search index: %s written again", w->dir);
    w->checkpoint_retry_ms = rc < 0 ? now + CHECKPOINT_RETRY_MS : 0;
}

/* The index directory beside the database file: <db>.engine. Only the
 * process that holds its lock writes there; another one (a second
 * process on the same store) reads the manifest and keeps its changes in
 * RAM. */
static void persist_open(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    const char *off = getenv(PERSIST_ENV);
    size_t n = strlen(e->db_path) + sizeof ".engine";
    char path[4096];

    w->lock_fd = -1;
    if ((off && strcmp(off, "0") == 0) || (w->dir = malloc(n)) == NULL)
        return;
    snprintf(w->dir, n, "%s.engine", e->db_path);
    if (mkdir(w->dir, 0700) != 0 && errno != EEXIST) {
        log_msg(LOG_WARN, "search index: cannot create %s (%s): the index stays in memory", w->dir,
                strerror(errno));
        free(w->dir);
        w->dir = NULL;
        return;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/lock", w->dir) >= sizeof path)
        return;
    w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    w->writable = w->lock_fd >= 0 && flock(w->lock_fd, LOCK_EX | LOCK_NB) == 0;
}

/* A manifest that is not used is removed (and the removal made durable)
 * before the rebuild writes any segment file: the rebuild's files reuse
 * names, and an old manifest read at the next start must not find them. */
static void manifest_retire(struct eng_writer *w)
{
    char path[4096];
    struct err err;
    if (!w->writable ||
        (size_t)snprintf(path, sizeof path, "%s/%s", w->dir, ENG_MANIFEST_NAME) >= sizeof path)
        return;
    if (unlink(path) == 0)
        (void)eng_dir_sync(w->dir, &err);
}

/* Map what the manifest names; false (and nothing kept) when it cannot be
 * used, and the table is then read whole. */
static bool persist_load(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    struct eng_manifest m;
    struct err err;
    char epoch[STORE_IDENTITY_MAX];
    bool ok = false;

    err_clear(&err);
    if (w->dir == NULL)
        return false;
    int rc = eng_manifest_read(w->dir, &m, &err);
    if (rc == ERR_NOTFOUND)
        return false;
    if (rc < 0) {
        log_msg(LOG_WARN, "search index: %s; rebuilding from the table", err_msg(&err, rc));
        manifest_retire(w);
        return false;
    }
    if (epoch_read(w, epoch, &err) < 0 || epoch[0] == '\0' || strcmp(epoch, m.epoch) != 0) {
        log_msg(LOG_WARN, "search index: %s belongs to another articles table; rebuilding", w->dir);
        goto out;
    }
    /* A table behind the files (the store restored from an older backup):
     * its next rows would reuse seqs the files already cover. */
    int64_t head = 0;
    if (store_reader_head(w->db, &head, &err) < 0 || head < m.applied_seq) {
        log_msg(LOG_WARN,
                "search index: the articles table is behind %s (restored from a backup?); "
                "rebuilding",
                w->dir);
        goto out;
    }
    for (uint32_t i = 0; i < m.nsrc; i++) {
        uint32_t id;
        if (src_intern(w, m.srcs[i], &id) < 0 || id != i)
            goto out;
    }
    for (uint32_t i = 0; i < m.nseg; i++) {
        char path[4096];
        struct eng_segment *seg = NULL;
        if (seg_path(w, m.segs[i].file_id, path, sizeof path) < 0)
            goto out;
        if ((rc = eng_segment_map(path, m.segs[i].file_id, &seg, &err)) < 0 ||
            seg->n != m.segs[i].n) {
            log_msg(LOG_WARN, "search index: %s; rebuilding from the table",
                    rc < 0 ? err_msg(&err, rc) : "a segment disagrees with the manifest");
            eng_segment_unref(seg);
            goto out;
        }
        if (seg_append(w, seg) < 0) {
            eng_segment_unref(seg);
            goto out;
        }
        if (m.segs[i].ndel == 0)
            continue;
        struct eng_dels *d = calloc(1, sizeof *d);
        if (d == NULL || (d->bits = calloc((seg->n + 63) / 64 + 1, sizeof *d->bits)) == NULL) {
            free(d);
            goto out;
        }
        atomic_init(&d->ref, 1);
        d->gen = eng_next_gen();
        for (uint32_t k = 0; k < m.segs[i].ndel; k++) {
            uint32_t doc = m.segs[i].del[k];
            d->bits[doc >> 6] |= (uint64_t)1 << (doc & 63);
            d->ntoken += seg->dl[doc];
        }
        d->n = m.segs[i].ndel;
        w->dels[w->nseg - 1] = d;
    }
    snprintf(w->epoch, sizeof w->epoch, "%s", m.epoch);
    w->applied_seq = m.applied_seq;
    w->covered = m.covered;
    w->next_file = m.next_file;
    w->dirty = false;
    ok = true;
out:
    if (!ok) {
        segments_drop(w);
        w->epoch[0] = '\0';
        if (m.next_file > w->next_file)
            w->next_file = m.next_file;
        manifest_retire(w);
    }
    eng_manifest_clear(&m);
    return ok;
}

bool eng_follow_count_pending(struct index_engine *e)
{
    return e->w && atomic_load(&e->w->count_pending);
}

int64_t eng_follow_covered(const struct index_engine *e)
{
    return e->w ? e->w->covered : 0;
}

int eng_follow_poll(struct index_engine *e, struct err *err)
{
    /* The count check an open from the files left for later: forced once. */
    int rc = poll_once(e, atomic_load(&e->w->count_pending), true, err);
    if (rc == 0) {
        atomic_store(&e->w->count_pending, false);
        maybe_checkpoint(e);
    }
    return rc;
}

int eng_follow_open(struct index_engine *e, struct err *err)
{
    struct eng_writer *w;
    int rc;
    e->w = w = calloc(1, sizeof *e->w);
    if (w == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    w->lock_fd = -1; /* closed by eng_follow_close: never fd 0 */
    const char *full = getenv(SEGMENT_FULL_ENV);
    long v = full ? strtol(full, NULL, 10) : 0;
    w->seg_full = v > 0 && v <= SEGMENT_FULL ? (uint32_t)v : SEGMENT_FULL;
    const char *ck = getenv(CHECKPOINT_ENV);
    v = ck && *ck ? strtol(ck, NULL, 10) : -1;
    w->checkpoint_ms = v >= 0 ? v : CHECKPOINT_MS;
    w->next_file = 1;
    w->stopping = &e->stopping;
    if ((rc = store_reader_open(&w->db, e->db_path, err)) < 0)
        return rc;
    persist_open(e);
    e->loaded = persist_load(e);
    /* Opening from the files leaves the row count (rows deleted while
     * newsd was stopped) to the first poll: on a cold page cache count(*)
     * is most of an open (2.5 s of 2.6 at 5 M articles). A full build
     * reads every row in one transaction: nothing to compare. */
    if ((rc = poll_once(e, true, false, err)) < 0)
        return rc;
    atomic_store(&w->count_pending, e->loaded);
    if (w->epoch[0] == '\0')
        w->writable = false; /* a table without an epoch: files could not be told apart */
    if (w->writable && (w->dirty || !e->loaded)) {
        /* (a checkpoint that works sweeps the directory itself; one that
         * fails must leave every file the MANIFEST on disk names) */
        struct err cerr;
        err_clear(&cerr);
        if ((rc = checkpoint(e, &cerr)) < 0)
            log_msg(LOG_WARN, "search index: cannot write %s: %s (the index stays in memory)",
                    w->dir, err_msg(&cerr, rc));
    } else if (w->writable && e->loaded) {
        dir_sweep(w);
    }
    return 0;
}

/* Write what is only in RAM, so that the next start reads nothing again. */
void eng_follow_close(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    if (w == NULL)
        return;
    if (w->writable && w->dirty && atomic_load(&e->ready)) { /* not a half-done open */
        struct err err;
        err_clear(&err);
        int rc = checkpoint(e, &err);
        if (rc < 0)
            log_msg(LOG_WARN, "search index: cannot write %s: %s", w->dir, err_msg(&err, rc));
    }
    store_reader_close(w->db);
    for (size_t i = 0; i < w->nseg; i++) {
        eng_segment_unref(w->segs[i]);
        eng_dels_unref(w->dels[i]);
    }
    free(w->segs);
    free(w->dels);
    for (size_t i = 0; i < w->nsrc; i++)
        free(w->srcs[i]);
    free(w->srcs);
    free(w->shash);
    free(w->pop);
    if (w->lock_fd >= 0)
        close(w->lock_fd); /* releases the lock */
    free(w->dir);
    free(w);
    e->w = NULL;
}
