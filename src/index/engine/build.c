/* The first build on every core (index/engine/writer.h). A build from the
 * table spends its time in the builder - term hashing, posting appends,
 * sorting, encoding (perf of `newsd index verify` on 200,000 articles:
 * eng_builder_add, pend_push, term_find, memmove/memcmp and encode_term
 * are ~55 %, reading rows from SQLite ~3 %, tokenizing and stemming ~5 %)
 * - so the writer's thread reads the rows (interning their sources) and
 * deals copies of them, in batches, to worker threads that each render the
 * rows' JSON (the document store's copy) and build their own segments, each
 * written to its file and mapped by the worker that built it; the writer
 * puts them in its list. Segments built side by side overlap in time; the
 * merge policy (merge.c) makes large segments of them later.
 *
 * Only for a build from nothing (no segments, nothing applied): then no
 * row replaces a document, and the rows' order across segments does not
 * matter. */
#include "index/engine/tiers.h"
#include "index/engine/writer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/text.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/log.h"

#include "util/banned.h"

#define BATCH_ROWS 256
#define QUEUE_BATCHES 8 /* per worker: the reader stays ahead, memory bounded */
#define WORKERS_MAX 4

/* Rows copied out of the reader's cursor (its strings live until the next
 * row only): the strings back to back in buf, placed by offset until the
 * batch is sealed (buf moves while it grows). */
enum {
    F_TITLE,
    F_DESCRIPTION,
    F_CONTENT,
    F_LANGUAGE,
    F_META,
    F_SOURCE_ID,
    F_CANONICAL,
    F_SOURCE_NAME,
    F_AUTHOR,
    F_URL,
    F_IMAGE,
    F_N
};
#define F_NONE SIZE_MAX

struct batch {
    struct batch *next;
    size_t n;
    struct store_row rows[BATCH_ROWS]; /* strings set by batch_seal */
    uint32_t src[BATCH_ROWS];          /* interned by the reader */
    uint64_t url_hash[BATCH_ROWS];
    size_t off[BATCH_ROWS][F_N];
    char *buf;
    size_t len, cap;
};

struct seg_item {
    struct seg_item *next;
    struct eng_segment *seg;    /* as built, on the heap */
    struct eng_segment *mapped; /* its file, mapped; NULL: not written */
};

struct pbuild {
    pthread_mutex_t lock;
    pthread_cond_t more; /* a batch was queued, or the end */
    pthread_cond_t room; /* a batch was taken, or a worker failed */
    struct batch *head, *tail;
    size_t queued, max_queued;
    bool eof;
    bool failed;
    struct seg_item *done; /* finished segments for the writer */
    uint32_t seg_full;
    uint32_t tier_min_df; /* the writer's (tiers.h) */
    /* Each worker writes its segments' files: written by the writer's
     * thread, they held up the reading of rows (and so both workers) for
     * the copy into the page cache and the fsync, and the last ones were
     * written one after the other once the workers were done. */
    const struct eng_writer *w; /* its directory, when its files are written */
    uint64_t next_file;         /* the next file id, under lock */
};

static void batch_free(struct batch *b)
{
    if (b) {
        free(b->buf);
        free(b);
    }
}

static int batch_str(struct batch *b, const char *s, size_t *off)
{
    if (s == NULL) {
        *off = F_NONE;
        return 0;
    }
    size_t n = strlen(s) + 1;
    if (array_reserve(&b->buf, &b->cap, b->len, n, 1) < 0)
        return ERR_NOMEM;
    memcpy(b->buf + b->len, s, n);
    *off = b->len;
    b->len += n;
    return 0;
}

static const char *batch_ptr(const struct batch *b, size_t off)
{
    return off == F_NONE ? NULL : b->buf + off;
}

/* The rows' strings, once the buffer stops moving. */
static void batch_seal(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        struct store_row *r = &b->rows[i];
        const size_t *o = b->off[i];
        r->title = batch_ptr(b, o[F_TITLE]);
        r->description = batch_ptr(b, o[F_DESCRIPTION]);
        r->content = batch_ptr(b, o[F_CONTENT]);
        r->language = batch_ptr(b, o[F_LANGUAGE]);
        r->meta_terms = batch_ptr(b, o[F_META]);
        r->source_id = batch_ptr(b, o[F_SOURCE_ID]);
        r->canonical_url = batch_ptr(b, o[F_CANONICAL]);
        r->source_name = batch_ptr(b, o[F_SOURCE_NAME]);
        r->author = batch_ptr(b, o[F_AUTHOR]);
        r->url = batch_ptr(b, o[F_URL]);
        r->url_to_image = batch_ptr(b, o[F_IMAGE]);
    }
}

/* One row copied into the batch; its source interned and its URL hashed
 * here (the writer's), its JSON rendered by the worker. */
static int batch_add(struct eng_writer *w, struct batch *b, const struct store_row *row)
{
    const char *str[F_N] = {row->title,      row->description, row->content,       row->language,
                            row->meta_terms, row->source_id,   row->canonical_url, row->source_name,
                            row->author,     row->url,         row->url_to_image};
    size_t i = b->n;
    b->src[i] = ENG_NO_SOURCE;
    if (row->source_id && eng_src_intern(w, row->source_id, &b->src[i]) < 0)
        return ERR_NOMEM;
    b->url_hash[i] = eng_row_url_hash(row);
    b->rows[i] = *row;
    for (unsigned f = 0; f < F_N; f++) {
        if (batch_str(b, str[f], &b->off[i][f]) < 0)
            return ERR_NOMEM;
    }
    b->n++;
    return 0;
}

static int hand_over(struct pbuild *pb, struct eng_segment *seg)
{
    struct seg_item *it = malloc(sizeof *it);
    if (it == NULL)
        return ERR_NOMEM;
    it->seg = seg;
    it->mapped = NULL;
    if (pb->w) {
        struct err perr;
        err_clear(&perr);
        pthread_mutex_lock(&pb->lock);
        uint64_t id = pb->next_file++;
        pthread_mutex_unlock(&pb->lock);
        if (eng_segment_write_file(pb->w, seg, id, &it->mapped, &perr) < 0)
            log_msg(LOG_WARN, "search index: %s (the segment stays in memory)",
                    err_msg(&perr, ERR_IO));
    }
    pthread_mutex_lock(&pb->lock);
    it->next = pb->done;
    pb->done = it;
    pthread_mutex_unlock(&pb->lock);
    return 0;
}

static int finish_into(struct pbuild *pb, struct eng_builder *b)
{
    struct eng_segment *seg = NULL;
    int rc = eng_builder_finish(b, &seg);
    if (rc == 0 && (rc = hand_over(pb, seg)) < 0)
        eng_segment_unref(seg);
    return rc;
}

static void *worker_main(void *arg)
{
    struct pbuild *pb = arg;
    struct eng_builder *b = NULL;
    struct buf json;
    int rc = eng_builder_new(&b);
    if (rc == 0)
        eng_builder_tiers(b, pb->tier_min_df);

    buf_init(&json, 0);

    for (;;) {
        pthread_mutex_lock(&pb->lock);
        while (pb->head == NULL && !pb->eof && !pb->failed)
            pthread_cond_wait(&pb->more, &pb->lock);
        struct batch *bt = pb->failed ? NULL : pb->head;
        if (bt) {
            pb->head = bt->next;
            if (pb->head == NULL)
                pb->tail = NULL;
            pb->queued--;
            pthread_cond_signal(&pb->room);
        }
        pthread_mutex_unlock(&pb->lock);
        if (bt == NULL)
            break;
        for (size_t i = 0; i < bt->n && rc == 0; i++) {
            struct eng_row r;
            buf_reset(&json);
            eng_row_json(&bt->rows[i], &json);
            if (json.err) {
                rc = ERR_NOMEM;
                break;
            }
            eng_row_view(&bt->rows[i], bt->url_hash[i], bt->src[i], &json, &r);
            rc = eng_builder_add(b, &r);
            if (rc == 0 && eng_builder_count(b) >= pb->seg_full)
                rc = finish_into(pb, b);
        }
        batch_free(bt);
        if (rc < 0)
            break;
    }
    if (rc == 0 && eng_builder_count(b) > 0)
        rc = finish_into(pb, b);
    if (rc < 0) {
        pthread_mutex_lock(&pb->lock);
        pb->failed = true;
        pthread_cond_broadcast(&pb->room);
        pthread_cond_broadcast(&pb->more);
        pthread_mutex_unlock(&pb->lock);
    }
    eng_builder_free(b);
    buf_release(&json);
    text_thread_release(); /* this thread's stemmers */
    return NULL;
}

/* Queue a batch for the workers; false when one of them failed. */
static bool queue_put(struct pbuild *pb, struct batch *bt)
{
    pthread_mutex_lock(&pb->lock);
    while (pb->queued >= pb->max_queued && !pb->failed)
        pthread_cond_wait(&pb->room, &pb->lock);
    bool ok = !pb->failed;
    if (ok) {
        bt->next = NULL;
        if (pb->tail)
            pb->tail->next = bt;
        else
            pb->head = bt;
        pb->tail = bt;
        pb->queued++;
        pthread_cond_signal(&pb->more);
    }
    pthread_mutex_unlock(&pb->lock);
    if (!ok)
        batch_free(bt);
    return ok;
}

/* The finished segments into the writer's list, each in its file's place. */
static int adopt_done(struct eng_writer *w, struct pbuild *pb)
{
    pthread_mutex_lock(&pb->lock);
    struct seg_item *it = pb->done;
    pb->done = NULL;
    pthread_mutex_unlock(&pb->lock);
    int rc = 0;
    while (it) {
        struct seg_item *next = it->next;
        if (rc == 0 && (rc = eng_writer_append(w, it->seg)) == 0) {
            struct err perr;
            err_clear(&perr);
            if (it->mapped && eng_segment_install_mapped(w, w->nseg - 1, it->mapped, &perr) < 0)
                log_msg(LOG_WARN, "search index: %s (the segment stays in memory)",
                        err_msg(&perr, ERR_IO));
        } else {
            eng_segment_unref(it->seg);
            eng_segment_unref(it->mapped);
        }
        free(it);
        it = next;
    }
    return rc;
}

unsigned eng_build_workers(const struct eng_writer *w)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (w->nseg != 0 || w->applied_seq != 0 || n < 2)
        return 0;
    return n > WORKERS_MAX ? WORKERS_MAX : (unsigned)n;
}

int eng_build_parallel(struct eng_writer *w, unsigned workers, struct err *err)
{
    struct pbuild pb = {.seg_full = w->seg_full,
                        .max_queued = QUEUE_BATCHES * workers,
                        .w = w->writable ? w : NULL,
                        .tier_min_df = w->tier_min_df,
                        .next_file = w->next_file};
    pthread_t th[WORKERS_MAX];
    unsigned started = 0;
    struct store_rows *rows = NULL;
    struct store_row row;
    struct batch *bt = NULL;
    int64_t last_seq = w->applied_seq;
    uint64_t nrows = 0;
    int rc;

    pthread_mutex_init(&pb.lock, NULL);
    pthread_cond_init(&pb.more, NULL);
    pthread_cond_init(&pb.room, NULL);
    /* In the table's order, not the seq index's: a scan, where seq order
     * looks each row up by id (the rows' order does not matter here). */
    if ((rc = store_rows_all(&rows, w->db, err)) < 0)
        goto out;
    for (; started < workers; started++) {
        if (pthread_create(&th[started], NULL, worker_main, &pb) != 0)
            break;
    }
    if (started == 0) {
        rc = err_set(err, ERR_NOMEM, "cannot start a build thread");
        goto out;
    }
    while ((rc = store_rows_next(rows, &row, err)) == 1) {
        if (bt == NULL && (bt = calloc(1, sizeof *bt)) == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory indexing articles");
            break;
        }
        if (batch_add(w, bt, &row) < 0) {
            rc = err_set(err, ERR_NOMEM, "out of memory indexing articles");
            break;
        }
        if (row.seq > last_seq)
            last_seq = row.seq;
        if (bt->n == BATCH_ROWS) {
            batch_seal(bt);
            if (!queue_put(&pb, bt)) {
                bt = NULL;
                rc = err_set(err, ERR_NOMEM, "out of memory indexing articles");
                break;
            }
            bt = NULL;
            if ((rc = adopt_done(w, &pb)) < 0) {
                rc = err_set(err, rc, "out of memory indexing articles");
                break;
            }
        }
        if ((++nrows & 4095) == 0 && w->stopping && atomic_load(w->stopping)) {
            rc = err_set(err, ERR_BUSY, "stopping");
            break;
        }
    }
    if (rc == 0 && bt && bt->n > 0) {
        batch_seal(bt);
        if (!queue_put(&pb, bt))
            rc = err_set(err, ERR_NOMEM, "out of memory indexing articles");
        bt = NULL;
    }
    pthread_mutex_lock(&pb.lock);
    pb.eof = true;
    if (rc < 0)
        pb.failed = true; /* the workers drop what is queued */
    pthread_cond_broadcast(&pb.more);
    pthread_mutex_unlock(&pb.lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (rc == 0 && pb.failed)
        rc = err_set(err, ERR_NOMEM, "out of memory indexing articles");
    if (rc == 0 && (rc = adopt_done(w, &pb)) < 0)
        rc = err_set(err, rc, "out of memory indexing articles");
    w->next_file = pb.next_file; /* (an unused id is harmless; a reused one is not) */
    if (rc == 0)
        w->applied_seq = last_seq;
    else
        eng_writer_drop_all(w); /* a build from nothing: read again from the start */
out:
    while (pb.head) {
        struct batch *next = pb.head->next;
        batch_free(pb.head);
        pb.head = next;
    }
    while (pb.done) {
        struct seg_item *next = pb.done->next;
        eng_segment_unref(pb.done->seg);
        eng_segment_unref(pb.done->mapped);
        free(pb.done);
        pb.done = next;
    }
    batch_free(bt);
    store_rows_free(rows);
    pthread_cond_destroy(&pb.room);
    pthread_cond_destroy(&pb.more);
    pthread_mutex_destroy(&pb.lock);
    return rc < 0 ? rc : 0;
}
