/* Articles from WARC and ARC files (ingest/ingest.h: ingest_import_warc):
 * every HTML response with status 200, and every HTML resource record,
 * whose page holds an article (ingest/pages) becomes an article, through the
 * import pipeline of import.c (normalised, batched, committed by its
 * writer thread, upserted by canonical URL).
 *
 * Threads: a reader (decompression and WARC parsing, imports.h), `workers`
 * extractors, this thread (in order: normalising and batching, progress)
 * and import.c's writer (SQLite). Records travel through a ring of RING
 * slots in file order; each slot owns its record's bytes and its arena, so
 * memory stays bounded by the ring whatever the file's size, and the
 * articles are added in file order (the later of two equal canonical URLs
 * wins, as in every import).
 *
 * An article from a page:
 *   url          the page's canonical URL (link rel=canonical, og:url), else
 *                the record's target URI
 *   source       the catalogue source whose URL has the article's domain,
 *                else {id: null, name: og:site_name, else the host}
 *   title, author, description, urlToImage, content: the page's
 *   publishedAt  the page's, else the record's WARC-Date
 *   language     the page's (html lang, og:locale), else the source's, else
 *                detected (ingest_normalize)
 * Records that are neither responses nor resources are counted and passed
 * over; pages that give no article are counted skipped by reason. The
 * summary says which formats the records were read in (imports.h). */
#include "ingest/imports/imports.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/imports/imports_internal.h"
#include "ingest/ingest.h"
#include "ingest/pages/pages.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hash.h"

#include "util/banned.h"

#define RING_PER_WORKER 3
#define DEFAULT_WORKERS 2
#define MAX_WORKERS 16
#define DEFAULT_PROGRESS_MS 5000
#define SLOT_ARENA_BYTES ((size_t)64 << 20)

enum outcome {
    OUT_ARTICLE,
    OUT_NOT_RESPONSE, /* request, metadata, warcinfo, ...: not counted skipped */
    OUT_BAD_RECORD,
    OUT_STATUS,
    OUT_NOT_HTML,
    OUT_NO_ARTICLE,
    OUT_NO_TITLE,
    OUT_BAD_URL,
    OUT_COUNT
};

static const char *const outcome_names[OUT_COUNT] = {
    "article",  "not a response", "malformed", "status not 200",
    "not HTML", "no article",     "no title",  "no usable URL",
};

enum slot_state { SLOT_FREE, SLOT_READY, SLOT_WORKING, SLOT_DONE };

struct slot {
    enum slot_state state;
    uint64_t seq;
    enum outcome outcome;
    uint64_t offset;
    enum warc_format format; /* of a record read (not OUT_BAD_RECORD) */
    struct buf uri, charset, body, note;
    int64_t date_s;
    struct arena a;
    struct article art;
};

/* Catalogue sources by the domain of their URL. */
struct domain_map {
    struct arena a;
    struct source *src; /* borrowed from a */
    size_t n;
    const char **domain; /* n */
    uint32_t *slots;     /* index + 1, open addressing */
    size_t mask;
};

struct warc_job {
    struct import_ctx *c;
    const struct ingest_options *opt;
    const char *path;
    struct warc_reader *r;
    struct domain_map dm;
    unsigned workers;
    struct slot *ring;
    size_t ring_n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next_read;  /* seq the reader fills next */
    uint64_t next_claim; /* seq a worker takes next */
    bool reader_done;
    bool stop;
    int reader_rc;
    struct err reader_err;
    /* counts, on the consuming thread */
    uint64_t records, counts[OUT_COUNT];
    unsigned formats; /* 1 << enum warc_format of every record read */
    int64_t start_ms, last_progress_ms;
};

/* ---- the catalogue by domain ---------------------------------------------------- */

static int domain_map_build(struct domain_map *dm, struct store *s, struct err *err)
{
    arena_init(&dm->a, 0);
    struct source_filter all = {NULL, NULL, NULL, false};
    int rc = store_sources_list(s, &dm->a, &all, &dm->src, &dm->n, err);
    if (rc < 0)
        return rc;
    size_t cap = 16;
    while (cap < dm->n * 2)
        cap *= 2;
    dm->mask = cap - 1;
    dm->slots = arena_calloc(&dm->a, cap, sizeof *dm->slots);
    dm->domain = arena_calloc(&dm->a, dm->n ? dm->n : 1, sizeof *dm->domain);
    if (!dm->slots || !dm->domain)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < dm->n; i++) {
        char *dom = NULL;
        if (!dm->src[i].url || ingest_url_canonical(&dm->a, dm->src[i].url, NULL, &dom) < 0)
            continue;
        dm->domain[i] = dom;
        size_t h = (size_t)hash_bytes64(dom, strlen(dom)) & dm->mask;
        while (dm->slots[h]) {
            /* the first source of a domain (by id) keeps it */
            if (strcmp(dm->domain[dm->slots[h] - 1], dom) == 0)
                goto next;
            h = (h + 1) & dm->mask;
        }
        dm->slots[h] = (uint32_t)(i + 1);
    next:;
    }
    return 0;
}

static const struct source *domain_map_find(const struct domain_map *dm, const char *dom)
{
    if (!dm->slots)
        return NULL;
    size_t h = (size_t)hash_bytes64(dom, strlen(dom)) & dm->mask;
    while (dm->slots[h]) {
        size_t i = dm->slots[h] - 1;
        if (strcmp(dm->domain[i], dom) == 0)
            return &dm->src[i];
        h = (h + 1) & dm->mask;
    }
    return NULL;
}

/* ---- one page to one article (worker threads) ------------------------------------- */

static bool is_html(const char *ctype, const char *body, size_t n)
{
    if (ctype && ctype[0]) {
        return strncasecmp(ctype, "text/html", 9) == 0 ||
               strncasecmp(ctype, "application/xhtml+xml", 21) == 0;
    }
    /* no Content-Type: what the bytes start with */
    size_t lim = n < 1024 ? n : 1024;
    for (size_t i = 0; i + 5 <= lim; i++)
        if (body[i] == '<' && (strncasecmp(body + i, "<html", 5) == 0 ||
                               (i + 14 <= lim && strncasecmp(body + i, "<!doctype html", 14) == 0)))
            return true;
    return false;
}

static void page_to_article(struct warc_job *j, struct slot *sl)
{
    struct extracted_page pg;
    struct extract_options eo = {.url = sl->uri.data,
                                 .charset = sl->charset.len ? sl->charset.data : NULL};
    arena_release(&sl->a);
    arena_init(&sl->a, SLOT_ARENA_BYTES);
    if (extract_page(&sl->a, sl->body.data ? sl->body.data : "", sl->body.len, &eo, &pg) < 0) {
        sl->outcome = OUT_NO_ARTICLE; /* out of memory on this page: too large */
        return;
    }
    if (!pg.readerable) {
        sl->outcome = OUT_NO_ARTICLE;
        return;
    }
    if (!pg.title) {
        sl->outcome = OUT_NO_TITLE;
        return;
    }
    struct article *art = &sl->art;
    memset(art, 0, sizeof *art);
    char *dom = NULL;
    const char *url = pg.canonical;
    if (!url || ingest_url_canonical(&sl->a, url, NULL, &dom) < 0) {
        url = sl->uri.data;
        if (!url || ingest_url_canonical(&sl->a, url, NULL, &dom) < 0) {
            sl->outcome = OUT_BAD_URL;
            return;
        }
    }
    art->url = url;
    art->title = pg.title;
    page_fill(art, &pg, false);
    if (!art->published_at)
        art->published_at = sl->date_s;
    const struct source *src = domain_map_find(&j->dm, dom);
    if (src) {
        art->source_id = src->id;
        art->source_name = src->name;
    } else {
        art->source_name = pg.site_name ? pg.site_name : dom;
    }
    sl->outcome = OUT_ARTICLE;
}

static void *worker_main(void *arg)
{
    struct warc_job *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        struct slot *sl = NULL;
        while (!j->stop) {
            if (j->next_claim < j->next_read) {
                sl = &j->ring[j->next_claim % j->ring_n];
                if (sl->state == SLOT_READY && sl->seq == j->next_claim)
                    break;
                sl = NULL;
            } else if (j->reader_done) {
                break;
            }
            pthread_cond_wait(&j->cv, &j->mu);
        }
        if (!sl)
            break;
        j->next_claim++;
        sl->state = SLOT_WORKING;
        pthread_mutex_unlock(&j->mu);
        if (sl->outcome == OUT_ARTICLE)
            page_to_article(j, sl);
        pthread_mutex_lock(&j->mu);
        sl->state = SLOT_DONE;
        pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* ---- the reader thread --------------------------------------------------------------- */

static void copy_str(struct buf *b, const char *s, size_t n)
{
    buf_reset(b);
    if (s)
        buf_append(b, s, n);
}

static bool is_resource(const struct warc_record *rec)
{
    return rec->type && strcasecmp(rec->type, "resource") == 0;
}

/* A record that may hold a page: a response, or a resource (a page stored
 * as it is, without HTTP: no status to check). */
static bool page_record(const struct warc_record *rec)
{
    return rec->type && (strcasecmp(rec->type, "response") == 0 || is_resource(rec));
}

static void *reader_main(void *arg)
{
    struct warc_job *j = arg;
    struct warc_record rec;
    struct err e;
    for (;;) {
        err_clear(&e);
        int rc = warc_next(j->r, &rec, &e);
        if (rc == WARC_END || rc < 0) {
            pthread_mutex_lock(&j->mu);
            if (rc < 0) {
                j->reader_rc = rc;
                j->reader_err = e;
            }
            j->reader_done = true;
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
            return NULL;
        }
        pthread_mutex_lock(&j->mu);
        struct slot *sl = &j->ring[j->next_read % j->ring_n];
        while (sl->state != SLOT_FREE && !j->stop)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->stop) {
            j->reader_done = true;
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
            return NULL;
        }
        pthread_mutex_unlock(&j->mu);
        /* The slot is ours until it is READY. */
        sl->offset = rec.offset;
        sl->format = rec.format;
        buf_reset(&sl->note);
        buf_reset(&sl->body);
        if (rc == WARC_BAD) {
            sl->outcome = OUT_BAD_RECORD;
            buf_puts(&sl->note, e.msg);
        } else if (!page_record(&rec)) {
            sl->outcome = OUT_NOT_RESPONSE;
        } else if (rec.http_status != 200 && !is_resource(&rec)) {
            sl->outcome = OUT_STATUS;
        } else if (!is_html(rec.content_type, rec.body, rec.body_len)) {
            sl->outcome = OUT_NOT_HTML;
        } else {
            sl->outcome = OUT_ARTICLE; /* so far: the worker decides */
            copy_str(&sl->uri, rec.target_uri, rec.target_uri ? strlen(rec.target_uri) : 0);
            copy_str(&sl->charset, rec.charset, rec.charset ? strlen(rec.charset) : 0);
            copy_str(&sl->body, rec.body, rec.body_len);
            sl->date_s = rec.date_s;
            if (buf_error(&sl->body) || buf_error(&sl->uri) || buf_error(&sl->charset))
                sl->outcome = OUT_NO_ARTICLE;
        }
        pthread_mutex_lock(&j->mu);
        sl->seq = j->next_read++;
        sl->state = SLOT_READY;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
    }
}

/* ---- in order, on the import's thread ---------------------------------------------- */

/* "; read as WARC/0.17 and ARC v1": the formats of the records read. */
static void status_formats(const struct warc_job *j, FILE *f)
{
    if (!j->formats) {
        if (j->records)
            fprintf(f, "; no WARC or ARC record read");
        return;
    }
    const char *sep = "; read as ";
    for (int k = 0; k < WARC_FORMAT_COUNT; k++) {
        if (j->formats & (1u << k)) {
            fprintf(f, "%s%s", sep, warc_format_name((enum warc_format)k));
            sep = " and ";
        }
    }
}

/* "warc FILE: WHAT N records (R/s), P responses (R/s), A articles, S
 * skipped (reason n, ...); read as FORMAT"; malformed records count as responses. */
static void status_line(const struct warc_job *j, FILE *f, const char *what)
{
    int64_t ms = clock_mono_ms() - j->start_ms;
    double s = ms > 0 ? (double)ms / 1000.0 : 0.001;
    uint64_t skipped = 0;
    for (int k = OUT_BAD_RECORD; k < OUT_COUNT; k++)
        skipped += j->counts[k];
    uint64_t pages = j->records - j->counts[OUT_NOT_RESPONSE];
    fprintf(f,
            "warc %s: %s %llu records (%.0f/s), %llu responses (%.0f/s), %llu articles, %llu "
            "skipped",
            j->path, what, (unsigned long long)j->records, (double)j->records / s,
            (unsigned long long)pages, (double)pages / s,
            (unsigned long long)j->counts[OUT_ARTICLE], (unsigned long long)skipped);
    const char *sep = " (";
    for (int k = OUT_BAD_RECORD; k < OUT_COUNT; k++) {
        if (j->counts[k]) {
            fprintf(f, "%s%s %llu", sep, outcome_names[k], (unsigned long long)j->counts[k]);
            sep = ", ";
        }
    }
    fprintf(f, "%s", sep[0] == ',' ? ")" : "");
    status_formats(j, f);
    fprintf(f, "\n");
    fflush(f);
}

static int consume(struct warc_job *j, struct slot *sl)
{
    j->records++;
    j->counts[sl->outcome]++;
    if (sl->outcome != OUT_BAD_RECORD)
        j->formats |= 1u << sl->format;
    char where[64];
    switch (sl->outcome) {
    case OUT_ARTICLE:
        snprintf(where, sizeof where, "record at offset %llu", (unsigned long long)sl->offset);
        return ingest_import_article(j->c, &sl->art, where);
    case OUT_NOT_RESPONSE:
        return 0;
    case OUT_BAD_RECORD:
        ingest_report(ingest_import_report(j->c), "%s: record at offset %llu: %s", j->path,
                      (unsigned long long)sl->offset, sl->note.data ? sl->note.data : "malformed");
        ingest_import_skip(j->c);
        return 0;
    default:
        ingest_import_skip(j->c);
        return 0;
    }
}

static int warc_produce(struct import_ctx *c, void *arg)
{
    struct warc_job *j = arg;
    j->c = c;
    pthread_t reader, workers[MAX_WORKERS];
    unsigned started = 0;
    bool reader_started = false;
    int rc = 0;
    int64_t every = j->opt->progress_ms > 0 ? j->opt->progress_ms : DEFAULT_PROGRESS_MS;
    j->start_ms = j->last_progress_ms = clock_mono_ms();
    if (pthread_create(&reader, NULL, reader_main, j) != 0) {
        rc = err_set(NULL, ERR_NOMEM, "no thread");
        goto out;
    }
    reader_started = true;
    for (; started < j->workers; started++)
        if (pthread_create(&workers[started], NULL, worker_main, j) != 0)
            break;
    if (started == 0) {
        rc = ERR_NOMEM;
        goto out;
    }
    uint64_t next = 0;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        struct slot *sl = &j->ring[next % j->ring_n];
        while (!(sl->state == SLOT_DONE && sl->seq == next) &&
               !(j->reader_done && next == j->next_read)) {
            struct timespec until = clock_mono_in(every);
            pthread_cond_timedwait(&j->cv, &j->mu, &until);
            if (clock_mono_ms() - j->last_progress_ms >= every)
                break;
        }
        bool ready = sl->state == SLOT_DONE && sl->seq == next;
        bool done = !ready && j->reader_done && next == j->next_read;
        pthread_mutex_unlock(&j->mu);
        if (ready) {
            rc = consume(j, sl);
            pthread_mutex_lock(&j->mu);
            sl->state = SLOT_FREE;
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
            next++;
            if (rc < 0)
                break;
        }
        if (clock_mono_ms() - j->last_progress_ms >= every) {
            status_line(j, ingest_import_report(j->c), "read");
            j->last_progress_ms = clock_mono_ms();
        }
        if (done)
            break;
    }
out:
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    if (reader_started)
        pthread_join(reader, NULL);
    for (unsigned k = 0; k < started; k++)
        pthread_join(workers[k], NULL);
    if (rc == 0 && j->reader_rc < 0)
        rc = j->reader_rc;
    return rc;
}

int ingest_import_warc(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err)
{
    static const struct ingest_options defaults = {0};
    struct warc_job j = {.opt = opt ? opt : &defaults, .path = path};
    int rc = warc_open(&j.r, path, err);
    if (rc < 0)
        return rc;
    rc = domain_map_build(&j.dm, s, err);
    if (rc < 0)
        goto out;
    j.workers = j.opt->workers ? j.opt->workers : DEFAULT_WORKERS;
    if (j.workers > MAX_WORKERS)
        j.workers = MAX_WORKERS;
    j.ring_n = (size_t)j.workers * RING_PER_WORKER;
    j.ring = calloc(j.ring_n, sizeof *j.ring);
    if (!j.ring) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < j.ring_n; k++) {
        buf_init(&j.ring[k].uri, 0);
        buf_init(&j.ring[k].charset, 0);
        buf_init(&j.ring[k].body, WARC_MAX_BODY + 1);
        buf_init(&j.ring[k].note, 0);
        arena_init(&j.ring[k].a, SLOT_ARENA_BYTES);
    }
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    /* progress waits use clock_mono_in: the condition variable must run on
     * CLOCK_MONOTONIC */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&j.cv);
    pthread_cond_init(&j.cv, &ca);
    pthread_condattr_destroy(&ca);
    rc = ingest_import_run(s, j.opt, stats, err, warc_produce, &j);
    if (rc == 0 && j.reader_rc < 0 && err)
        *err = j.reader_err;
    status_line(&j, j.opt->report ? j.opt->report : stderr, "done:");
    pthread_mutex_destroy(&j.mu);
    pthread_cond_destroy(&j.cv);
out:
    if (j.ring) {
        for (size_t k = 0; k < j.ring_n; k++) {
            buf_release(&j.ring[k].uri);
            buf_release(&j.ring[k].charset);
            buf_release(&j.ring[k].body);
            buf_release(&j.ring[k].note);
            arena_release(&j.ring[k].a);
        }
        free(j.ring);
    }
    arena_release(&j.dm.a);
    warc_close(j.r);
    return rc;
}
