/* Loading and following the articles table (index/engine/internal.h): the
 * single writer. At open every row is read in seq order into one segment;
 * then, whenever PRAGMA data_version says another connection committed,
 * rows with seq > applied become a new segment, an article whose
 * canonical_url (or id) is already indexed has its old document deleted,
 * and when the table's row count still differs from the index's live count
 * (rows deleted without a replacement) every indexed id is checked against
 * the table. Segments of similar size are merged eight at a time (and a
 * segment with more than a quarter deleted is rewritten) by re-reading
 * their live rows: the table is the document store, there is no other. */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "store/sqlite/db.h"
#include "util/banned.h"

#define MERGE_FAN 8
/* Documents per segment built at open, and the size past which a segment
 * is no longer merged with others (only rewritten when a quarter is
 * deleted): a bounded builder keeps the build's hash table and peak memory
 * small, at the cost of visiting N / SEGMENT_FULL segments per query. */
#define SEGMENT_FULL 131072
#define SEGMENT_FULL_ENV "NEWSD_ENGINE_SEGMENT_DOCS" /* tests: many small segments */
#define ROW_COLUMNS                                                                                \
    "id, seq, published_at, title, description, content, language, meta_terms, source_id,"         \
    " canonical_url"

struct eng_writer {
    sqlite3 *db;
    int64_t data_version;
    int64_t applied_seq;
    int64_t covered; /* ENG_HEAD_SQL as of the last successful poll */
    /* canonical_url hash → article id (open addressing, key 0 = empty) */
    uint64_t *ukeys;
    int64_t *uvals;
    size_t ucap, un;
    /* interned source ids */
    char **srcs;
    size_t nsrc, srccap;
    uint32_t *shash;
    size_t shcap;
    double *pop;       /* by interned id */
    uint32_t seg_full; /* SEGMENT_FULL unless the environment says otherwise */
    /* the writer's copy of what it last published */
    size_t nseg;
    struct eng_segment **segs;
    struct eng_dels **dels;
};

static uint64_t hash64(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

/* --- url map ---------------------------------------------------------------- */

static int umap_grow(struct eng_writer *w)
{
    size_t cap = w->ucap ? w->ucap * 2 : 4096;
    uint64_t *k = calloc(cap, sizeof *k);
    int64_t *v = calloc(cap, sizeof *v);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < w->ucap; i++) {
        if (w->ukeys[i] == 0)
            continue;
        size_t j = w->ukeys[i] & (cap - 1);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = w->ukeys[i];
        v[j] = w->uvals[i];
    }
    free(w->ukeys);
    free(w->uvals);
    w->ukeys = k;
    w->uvals = v;
    w->ucap = cap;
    return 0;
}

/* Set url → id; *old = the previous id or INT64_MIN. A 64-bit hash is the
 * key: two canonical URLs colliding (odds ~1e-8 at 1e6 articles) would make
 * the second's arrival delete the first from the index (docs/engine.md). */
static int umap_put(struct eng_writer *w, const char *url, int64_t id, int64_t *old)
{
    uint64_t h = hash64(url, strlen(url));
    *old = INT64_MIN;
    if ((w->un + 1) * 2 > w->ucap && umap_grow(w) < 0)
        return ERR_NOMEM;
    size_t j = h & (w->ucap - 1);
    while (w->ukeys[j] && w->ukeys[j] != h)
        j = (j + 1) & (w->ucap - 1);
    if (w->ukeys[j] == h) {
        *old = w->uvals[j];
    } else {
        w->ukeys[j] = h;
        w->un++;
    }
    w->uvals[j] = id;
    return 0;
}

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
            size_t j = hash64(w->srcs[i], strlen(w->srcs[i])) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(w->shash);
        w->shash = h;
        w->shcap = cap;
    }
    size_t j = hash64(s, n) & (w->shcap - 1);
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

/* Popularity of every catalogue source (coalesce(popularity, -1) of fts5.c). */
static int sources_load(struct eng_writer *w, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    for (size_t i = 0; i < w->nsrc; i++)
        w->pop[i] = -1.0;
    if ((rc = store_sqlite_prepare(w->db, "SELECT id, popularity FROM sources", &st, err)) < 0)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        uint32_t k;
        if (id == NULL)
            continue;
        if ((rc = src_intern(w, id, &k)) < 0) {
            rc = err_set(err, rc, "out of memory");
            goto out;
        }
        w->pop[k] = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1.0 : sqlite3_column_double(st, 1);
    }
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(w->db, rc, err);
out:
    sqlite3_finalize(st);
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

/* Delete the live document of article id, wherever it is. */
static int delete_id(struct eng_writer *w, struct pending *p, int64_t id)
{
    for (size_t i = 0; i < w->nseg; i++) {
        uint32_t d = eng_segment_find(w->segs[i], id);
        if (d != ENG_END && !eng_dels_has(dels_now(w, p, i), d))
            return dels_mark(w, p, i, d);
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
    return 0;
}

/* --- reading rows ----------------------------------------------------------- */

static int row_add(struct eng_writer *w, struct eng_builder *b, sqlite3_stmt *st)
{
    struct eng_row r = {
        .id = sqlite3_column_int64(st, 0),
        .seq = sqlite3_column_int64(st, 1),
        .published_at = sqlite3_column_int64(st, 2),
        .title = (const char *)sqlite3_column_text(st, 3),
        .description = (const char *)sqlite3_column_text(st, 4),
        .content = (const char *)sqlite3_column_text(st, 5),
        .language = (const char *)sqlite3_column_text(st, 6),
        .meta_terms = (const char *)sqlite3_column_text(st, 7),
        .src = ENG_NO_SOURCE,
    };
    const char *src = (const char *)sqlite3_column_text(st, 8);
    if (src && src_intern(w, src, &r.src) < 0)
        return ERR_NOMEM;
    return eng_builder_add(b, &r);
}

/* New rows (seq > applied) into b, deleting the documents they replace. */
static int read_new(struct eng_writer *w, struct eng_builder *b, struct pending *p, bool initial,
                    struct err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t old;
    int rc = store_sqlite_prepare(
        w->db, "SELECT " ROW_COLUMNS " FROM articles WHERE seq > ?1 ORDER BY seq", &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, w->applied_seq);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *url = (const char *)sqlite3_column_text(st, 9);
        if (!initial && (rc = delete_id(w, p, id)) < 0)
            break;
        if (url && (rc = umap_put(w, url, id, &old)) < 0)
            break;
        if (!initial && url && old != INT64_MIN && old != id && (rc = delete_id(w, p, old)) < 0)
            break;
        if ((rc = row_add(w, b, st)) < 0)
            break;
        w->applied_seq = sqlite3_column_int64(st, 1);
        if (initial && eng_builder_count(b) >= w->seg_full) {
            struct eng_segment *seg = NULL;
            if ((rc = eng_builder_finish(b, &seg)) < 0 || (rc = seg_append(w, seg)) < 0) {
                eng_segment_unref(seg);
                break;
            }
        }
    }
    if (rc == SQLITE_DONE)
        rc = 0;
    else if (rc > 0)
        rc = store_sqlite_fail(w->db, rc, err);
    else if (rc < 0)
        rc = err_set(err, rc, "out of memory indexing articles");
    sqlite3_finalize(st);
    return rc;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Rows deleted without a replacement: every live id checked against the table. */
static int reconcile(struct eng_writer *w, struct pending *p, int64_t rows, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t *ids = malloc(((size_t)rows + 1) * sizeof *ids);
    size_t n = 0;
    int rc;

    if (ids == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((rc = store_sqlite_prepare(w->db, "SELECT id FROM articles", &st, err)) < 0)
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < (size_t)rows)
        ids[n++] = sqlite3_column_int64(st, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rc = store_sqlite_fail(w->db, rc, err);
        goto out;
    }
    qsort(ids, n, sizeof *ids, cmp_i64);
    rc = 0;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_segment *seg = w->segs[i];
        for (uint32_t d = 0; d < seg->n && rc == 0; d++) {
            if (eng_dels_has(dels_now(w, p, i), d))
                continue;
            if (bsearch(&seg->ids[d], ids, n, sizeof *ids, cmp_i64) == NULL)
                rc = dels_mark(w, p, i, d);
        }
    }
    if (rc < 0)
        rc = err_set(err, rc, "out of memory");
out:
    sqlite3_finalize(st);
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
    sqlite3_stmt *st = NULL;
    int rc;

    if (eng_builder_new(&b) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    rc =
        store_sqlite_prepare(w->db, "SELECT " ROW_COLUMNS " FROM articles WHERE id = ?1", &st, err);
    if (rc < 0)
        goto out;
    if ((rc = store_sqlite_exec(w->db, "BEGIN", err)) < 0)
        goto out;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        if (!pick[i])
            continue;
        for (uint32_t d = 0; d < w->segs[i]->n && rc == 0; d++) {
            if (eng_dels_has(w->dels[i], d))
                continue;
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, w->segs[i]->ids[d]);
            rc = sqlite3_step(st);
            if (rc == SQLITE_ROW)
                rc = row_add(w, b, st) < 0 ? err_set(err, ERR_NOMEM, "out of memory") : 0;
            else if (rc == SQLITE_DONE)
                rc = 0; /* deleted meanwhile: dropped here, the count check agrees */
            else
                rc = store_sqlite_fail(w->db, rc, err);
        }
    }
    sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
    if (rc < 0)
        goto out;
    if ((rc = eng_builder_finish(b, &seg)) < 0) {
        rc = err_set(err, rc, "out of memory merging segments");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->nseg; i++) {
        if (pick[i]) {
            eng_segment_unref(w->segs[i]);
            eng_dels_unref(w->dels[i]);
            continue;
        }
        w->segs[k] = w->segs[i];
        w->dels[k++] = w->dels[i];
    }
    w->nseg = k;
    if (seg->n == 0) {
        eng_segment_unref(seg);
    } else if ((rc = seg_append(w, seg)) < 0) {
        eng_segment_unref(seg);
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    rc = publish(e);
    if (rc < 0)
        rc = err_set(err, rc, "out of memory");
out:
    sqlite3_finalize(st);
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

static int poll_once(struct index_engine *e, bool initial, struct err *err)
{
    struct eng_writer *w = e->w;
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    struct pending p = {0};
    int64_t dv = 0, rows = 0, head = 0, applied = w->applied_seq;
    int rc;

    if ((rc = store_sqlite_query_int(w->db, "PRAGMA data_version", &dv, err)) < 0)
        return rc;
    if (!initial && dv == w->data_version)
        return 0;
    p.n = w->nseg;
    if (eng_builder_new(&b) < 0 || (p.dels = calloc(w->nseg + 1, sizeof *p.dels)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    /* One read transaction: the new rows and the row count agree. */
    if ((rc = store_sqlite_exec(w->db, "BEGIN", err)) < 0)
        goto out;
    rc = sources_load(w, err);
    if (rc == 0)
        rc = read_new(w, b, &p, initial, err);
    if (rc == 0 && w->nseg > p.n) { /* the initial load appended whole segments */
        struct eng_dels **d = realloc(p.dels, (w->nseg + 1) * sizeof *d);
        if (d == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
        } else {
            memset(d + p.n, 0, (w->nseg + 1 - p.n) * sizeof *d);
            p.dels = d;
            p.n = w->nseg;
        }
    }
    if (rc == 0)
        rc = store_sqlite_query_int(w->db, "SELECT count(*) FROM articles", &rows, err);
    if (rc == 0)
        rc = store_sqlite_query_int(w->db, ENG_HEAD_SQL, &head, err);
    if (rc == 0) {
        uint64_t live = live_count(w) + eng_builder_count(b);
        for (size_t i = 0; i < p.n; i++) {
            if (p.dels[i])
                live -= p.dels[i]->n - (w->dels[i] ? w->dels[i]->n : 0);
        }
        if (live != (uint64_t)rows)
            rc = reconcile(w, &p, rows, err);
    }
    sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
    if (rc < 0)
        goto out;
    w->data_version = dv;
    if (eng_builder_count(b) > 0 || initial) {
        if ((rc = eng_builder_finish(b, &seg)) < 0) {
            rc = err_set(err, rc, "out of memory indexing articles");
            goto out;
        }
    }
    pending_apply(w, &p);
    if (seg && seg->n > 0) {
        if ((rc = seg_append(w, seg)) < 0) {
            rc = err_set(err, rc, "out of memory");
            goto out;
        }
        seg = NULL;
    }
    if ((rc = publish(e)) < 0) {
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    applied = w->applied_seq;
    w->covered = head;
    rc = maybe_merge(e, err);
out:
    w->applied_seq = applied; /* after a failure the same rows are read again */
    eng_segment_unref(seg);
    pending_drop(w, &p);
    eng_builder_free(b);
    return rc;
}

int64_t eng_follow_covered(const struct index_engine *e)
{
    return e->w ? e->w->covered : 0;
}

int eng_follow_poll(struct index_engine *e, struct err *err)
{
    return poll_once(e, false, err);
}

int eng_follow_open(struct index_engine *e, struct err *err)
{
    int rc;
    e->w = calloc(1, sizeof *e->w);
    if (e->w == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    const char *full = getenv(SEGMENT_FULL_ENV);
    long v = full ? strtol(full, NULL, 10) : 0;
    e->w->seg_full = v > 0 && v <= SEGMENT_FULL ? (uint32_t)v : SEGMENT_FULL;
    if ((rc = store_sqlite_conn_open(&e->w->db, e->db_path, true, err)) < 0)
        return rc;
    return poll_once(e, true, err);
}

void eng_follow_close(struct index_engine *e)
{
    struct eng_writer *w = e->w;
    if (w == NULL)
        return;
    store_sqlite_conn_close(w->db);
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
    free(w->ukeys);
    free(w->uvals);
    free(w);
    e->w = NULL;
}
