/* Article imports (ingest/ingest.h: ingest_import_file): reading the file,
 * telling its format, batching into the store, reporting bad lines.
 *
 * Formats, told apart by content:
 *   - JSONL: one article object per line (blank lines ignored). A line may
 *     also hold a whole NewsAPI response ({"articles":[...]}).
 *   - one JSON value spread over the file (a saved, pretty-printed NewsAPI
 *     response; also a single article object or an array of articles).
 * The first non-blank line decides: when it is a complete JSON value the
 * file is JSONL and is streamed; otherwise the file (at most
 * INGEST_MAX_FILE_BYTES) is read whole and parsed as one value, and if that
 * fails it is read as JSONL after all (so a bad first line is just a bad
 * line) unless its first line is a lone "{" or "[" (a broken document:
 * one report). Problems go to opt->report (else stderr) as "line N: reason" or
 * "articles[i]: reason", and the article is skipped.
 * Articles are stored in batches of LIMIT_IMPORT_BATCH, one transaction and
 * one arena each; a url seen twice in one batch keeps the later article.
 *
 * The input is read with read(2) through a buffer of its own, not stdio: a
 * pipe that goes quiet (tail -f file | newsd import -) is waited on with
 * poll(2) only until the batch being filled is due (IMPORT_BATCH_MS after
 * its first article), which needs to know what is buffered already. A
 * regular file never blocks and is never polled.
 *
 * Two stages: this thread reads, parses and normalises the next batch while
 * a writer thread commits the previous one (two batches, handed over in
 * order, so what is committed is always a prefix of the file). Parsing
 * (jansson, normalising) and committing (SQLite) each take about half of an
 * import: measured on 100 k bench articles, 1.6x the articles/s of one
 * thread (docs/performance.md). */
#include "ingest/ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ingest/imports/imports_internal.h"
#include "story/assign.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/limits.h"

#include "util/banned.h"

/* A batch also ends when its arena holds this much (bounds memory when
 * articles are large). */
#define IMPORT_BATCH_BYTES ((size_t)64 * 1024 * 1024)
/* ... or when its first article has waited this long, whether more input
 * arrives or not (input_wait): input that trickles in (a pipe fed as
 * articles come, e.g. at 5,000/s, or one article now and then) is stored,
 * and so searchable, within a fraction of a second instead of when 2,000
 * have gathered. A file read at full speed fills its batches long before. */
#define IMPORT_BATCH_MS 200
/* Open-addressing table of the batch's canonical urls: a power of two,
 * at least twice LIMIT_IMPORT_BATCH. */
#define IMPORT_SLOTS 4096

struct import_batch {
    struct arena a;
    struct article *arts;     /* LIMIT_IMPORT_BATCH */
    struct story_prep *preps; /* arts[i]'s story inputs, made on the parsing thread */
    size_t n;
    size_t replaced;              /* later duplicates within the batch */
    int64_t first_ms;             /* clock_mono_ms() when its first article came */
    uint32_t slots[IMPORT_SLOTS]; /* index + 1 into arts, 0 = empty */
};

struct import_ctx {
    struct store *s;
    const struct ingest_options *opt;
    struct ingest_stats *stats;
    struct err *err;
    FILE *report;
    struct import_batch *b;     /* being filled by this thread */
    struct import_batch *spare; /* the other one: free, or the writer's */
    /* the writer thread */
    pthread_t writer;
    bool writer_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct import_batch *pending; /* handed over, not yet committed */
    bool quit;
    int writer_rc; /* its first failure; it commits nothing after it */
    struct err writer_err;
};

void ingest_report(FILE *report, const char *fmt, ...)
{
    va_list ap;
    FILE *f = report ? report : stderr;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

static void batch_reset(struct import_batch *b)
{
    arena_release(&b->a);
    arena_init(&b->a, 0);
    b->n = 0;
    b->replaced = 0;
    memset(b->slots, 0, sizeof b->slots);
}

/* On the writer thread: commit one batch. */
static int batch_commit(struct import_ctx *c, struct import_batch *b)
{
    struct store_put_stats ps = {0, 0};
    int rc = store_articles_put_prepared(c->s, b->arts, b->preps, b->n, &ps, &c->writer_err);
    if (rc == 0) {
        c->stats->imported += ps.inserted;
        c->stats->updated += ps.updated + b->replaced;
        if (c->opt->progress) {
            /* Printed only after the commit: whoever reads it may count on it. */
            fprintf(c->opt->progress, "committed %zu\n", c->stats->imported + c->stats->updated);
            fflush(c->opt->progress);
        }
    }
    batch_reset(b);
    return rc;
}

static void *writer_main(void *arg)
{
    struct import_ctx *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->pending && !c->quit)
            pthread_cond_wait(&c->cv, &c->mu);
        struct import_batch *b = c->pending;
        if (!b)
            break;
        bool failed = c->writer_rc < 0;
        pthread_mutex_unlock(&c->mu);
        int rc = failed ? 0 : batch_commit(c, b);
        if (failed)
            batch_reset(b); /* after a failure nothing more is committed */
        pthread_mutex_lock(&c->mu);
        if (rc < 0 && c->writer_rc == 0)
            c->writer_rc = rc;
        c->pending = NULL;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Wait until the writer holds no batch; its failure, if any. */
static int writer_idle(struct import_ctx *c)
{
    pthread_mutex_lock(&c->mu);
    while (c->pending)
        pthread_cond_wait(&c->cv, &c->mu);
    int rc = c->writer_rc;
    pthread_mutex_unlock(&c->mu);
    if (rc < 0 && c->err)
        *c->err = c->writer_err;
    return rc;
}

/* Hand the batch being filled to the writer and go on with the other. */
static int batch_flush(struct import_ctx *c)
{
    if (c->b->n == 0)
        return 0;
    int rc = writer_idle(c); /* the spare is then free */
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&c->mu);
    c->pending = c->b;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    struct import_batch *t = c->b;
    c->b = c->spare;
    c->spare = t;
    return 0;
}

/* What the story rules compare of arts[i], made here so that the writer
 * thread only looks it up (a profile put the words of the text on the
 * writer: it was the import's slower stage). */
static void batch_prepare(struct import_batch *b, size_t i)
{
    const struct article *a = &b->arts[i];
    struct story_input in = {a->canonical_url, a->title, a->description, a->content,
                             a->published_at};
    story_prepare(&b->preps[i], &in);
}

/* Add a normalised article; the later of two equal canonical urls wins. */
static int batch_add(struct import_ctx *c, const struct article *art)
{
    struct import_batch *b = c->b;
    size_t mask = IMPORT_SLOTS - 1;
    const char *url = art->canonical_url;
    size_t i = (size_t)hash_bytes64(url, strlen(url)) & mask;
    while (b->slots[i]) {
        struct article *old = &b->arts[b->slots[i] - 1];
        if (strcmp(old->canonical_url, art->canonical_url) == 0) {
            *old = *art;
            batch_prepare(b, (size_t)(old - b->arts));
            b->replaced++;
            return 0;
        }
        i = (i + 1) & mask;
    }
    b->arts[b->n] = *art;
    batch_prepare(b, b->n);
    b->slots[i] = (uint32_t)(b->n + 1);
    b->n++;
    int64_t now = clock_mono_ms();
    if (b->n == 1)
        b->first_ms = now;
    if (b->n == LIMIT_IMPORT_BATCH || b->a.used >= IMPORT_BATCH_BYTES ||
        now - b->first_ms >= IMPORT_BATCH_MS)
        return batch_flush(c);
    return 0;
}

/* ---- the input ------------------------------------------------------------ */

struct import_input {
    int fd;
    bool may_block; /* a pipe, terminal or socket: a read may wait for input */
    bool eof;
    size_t pos, len; /* buf[pos..len) is read and not yet used */
    char buf[IMPORT_READ_BYTES];
};

static void input_open(struct import_input *in, int fd)
{
    struct stat st;
    in->fd = fd;
    in->may_block = fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
    in->eof = false;
    in->pos = in->len = 0;
}

/* Before a read that may block, wait for input (the input may also have
 * been left non-blocking by whoever set it up): while the batch being
 * filled holds articles, only until the batch is due, then hand it to the
 * writer, so the last articles of a pipe that went quiet do not wait for
 * the next line or the end of input. */
static int input_wait(struct import_ctx *c, struct import_input *in)
{
    while (in->may_block) {
        int timeout = -1;
        if (c->b->n > 0) {
            int64_t left = c->b->first_ms + IMPORT_BATCH_MS - clock_mono_ms();
            if (left <= 0) {
                int rc = batch_flush(c);
                if (rc < 0)
                    return rc;
                continue;
            }
            timeout = (int)left;
        }
        struct pollfd p = {.fd = in->fd, .events = POLLIN};
        int r = poll(&p, 1, timeout);
        if (r > 0 || (r < 0 && errno != EINTR))
            return 0; /* readable, closed, or an error read(2) will report */
    }
    return 0;
}

/* Refill the buffer: 1 when there is more, 0 at end of input, ERR_IO, or
 * the writer's failure (a due batch is handed over while waiting). */
static int input_fill(struct import_ctx *c, struct import_input *in)
{
    if (in->eof)
        return 0;
    ssize_t k;
    do {
        int rc = input_wait(c, in);
        if (rc < 0)
            return rc;
        k = read(in->fd, in->buf, sizeof in->buf);
    } while (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
    if (k < 0)
        return err_set(c->err, ERR_IO, "read error: %s", strerror(errno));
    in->pos = 0;
    in->len = (size_t)k;
    in->eof = k == 0;
    return k > 0;
}

/* Read one line (without its '\n' and a '\r' before it) into b, bounded by
 * b->max: a longer line is consumed to its end and b's sticky error is
 * ERR_TOO_LARGE. 1 when a line was read, 0 at end of input, < 0 as
 * input_fill. */
static int input_line(struct import_ctx *c, struct import_input *in, struct buf *b)
{
    bool any = false;
    buf_reset(b);
    for (;;) {
        if (in->pos == in->len) {
            int rc = input_fill(c, in);
            if (rc <= 0) {
                if (rc < 0)
                    return rc;
                break;
            }
        }
        any = true;
        const char *p = in->buf + in->pos;
        const char *nl = memchr(p, '\n', in->len - in->pos);
        size_t take = nl ? (size_t)(nl - p) : in->len - in->pos;
        buf_append(b, p, take); /* past b->max: sticky error, keep consuming */
        in->pos += take + (nl != NULL);
        if (nl)
            break;
    }
    if (!any)
        return 0;
    if (b->len > 0 && b->data[b->len - 1] == '\r')
        b->data[--b->len] = '\0';
    return 1;
}

/* The rest of the input appended to b (until b's sticky error). */
static int input_rest(struct import_ctx *c, struct import_input *in, struct buf *b)
{
    int rc = 0;
    do {
        buf_append(b, in->buf + in->pos, in->len - in->pos);
        in->pos = in->len;
    } while (buf_error(b) == 0 && (rc = input_fill(c, in)) > 0);
    return buf_error(b) ? 0 : rc;
}

/* ---- articles ----------------------------------------------------------------- */

/* Prefix of a report: "line N", "line N: articles[i]", "articles[i]", or
 * "file" for a whole-file value. */
static const char *where_name(const char *where)
{
    return where[0] ? where : "file";
}

/* An article read into the batch's arena (rc and e: how reading went):
 * normalised and batched, or reported with `where` and skipped when it is
 * invalid. */
static int add_read(struct import_ctx *c, struct article *art, int rc, struct err *e,
                    const char *where)
{
    const char *image = rc == 0 ? art->url_to_image : NULL;
    if (rc == 0)
        rc = ingest_normalize(c->s, &c->b->a, art, c->opt, e);
    if (rc == ERR_INVALID) {
        ingest_report(c->report, "%s: %s", where_name(where), err_msg(e, rc));
        c->stats->skipped++;
        return 0;
    }
    if (rc < 0) {
        if (c->err)
            *c->err = *e;
        return rc;
    }
    if (image && image[0] && !art->url_to_image) { /* an empty one just says "none" */
        ingest_report(c->report, "%s: urlToImage is not an absolute http(s) URL; stored as null",
                      where_name(where));
        c->stats->images_dropped++;
    }
    return batch_add(c, art);
}

/* One article object; bad ones are reported with `where` and skipped. */
static int import_article(struct import_ctx *c, const json_t *obj, const char *where)
{
    struct article art;
    struct err e;
    err_clear(&e);
    int rc = ingest_article_from_json(&c->b->a, obj, &art, &e);
    return add_read(c, &art, rc, &e, where);
}

/* A parsed JSON value found at `where`: an article, a NewsAPI response, or
 * an array of articles. */
static int import_value(struct import_ctx *c, const json_t *v, const char *where)
{
    char sub[96];
    const json_t *list = NULL;
    int rc = 0;
    if (json_is_object(v)) {
        const json_t *status = json_object_get(v, "status");
        if (json_is_string(status) && strcmp(json_string_value(status), "error") == 0) {
            const json_t *msg = json_object_get(v, "message");
            ingest_report(c->report, "%s: a NewsAPI error response: %s", where_name(where),
                          json_is_string(msg) ? json_string_value(msg) : "(no message)");
            c->stats->skipped++;
            return 0;
        }
        list = json_object_get(v, "articles");
        if (!json_is_array(list) || json_object_get(v, "url"))
            return import_article(c, v, where);
    } else if (json_is_array(v)) {
        list = v;
    } else {
        ingest_report(c->report, "%s: not a JSON object", where_name(where));
        c->stats->skipped++;
        return 0;
    }
    for (size_t i = 0; i < json_array_size(list) && rc == 0; i++) {
        if (where[0])
            snprintf(sub, sizeof sub, "%s: articles[%zu]", where, i);
        else
            snprintf(sub, sizeof sub, "articles[%zu]", i);
        rc = import_article(c, json_array_get(list, i), sub);
    }
    return rc;
}

static bool blank_line(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\f' && s[i] != '\v')
            return false;
    }
    return true;
}

static int import_line(struct import_ctx *c, const char *s, size_t n, bool too_long, size_t lineno)
{
    char where[32];
    snprintf(where, sizeof where, "line %zu", lineno);
    if (too_long || n > LIMIT_IMPORT_LINE_BYTES) {
        ingest_report(c->report, "%s: longer than %d bytes", where, LIMIT_IMPORT_LINE_BYTES);
        c->stats->skipped++;
        return 0;
    }
    json_error_t jerr;
    json_t *v = json_loadb(s, n, JSON_DECODE_ANY, &jerr);
    if (!v) {
        ingest_report(c->report, "%s: invalid JSON at column %d: %s", where, jerr.column,
                      jerr.text);
        c->stats->skipped++;
        return 0;
    }
    int rc = import_value(c, v, where);
    json_decref(v);
    return rc;
}

/* JSONL held in memory (the fallback after a failed whole-file parse). */
static int import_lines_mem(struct import_ctx *c, const char *s, size_t n, size_t lineno)
{
    size_t i = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
        size_t l = len;
        if (l > 0 && s[i + l - 1] == '\r')
            l--;
        if (!blank_line(s + i, l))
            rc = import_line(c, s + i, l, false, lineno);
        lineno++;
        i += len + 1;
    }
    return rc;
}

/* A first line that is only "{" or "[" starts a pretty-printed document,
 * never a JSONL record. */
static bool opens_document(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n == i + 1 && (s[i] == '{' || s[i] == '[');
}

static int import_stream(struct import_ctx *c, struct import_input *in)
{
    struct buf line, all;
    size_t lineno = 0;
    int rc, got;
    buf_init(&line, INGEST_MAX_FILE_BYTES);
    buf_init(&all, INGEST_MAX_FILE_BYTES);

    /* The first non-blank line. */
    do {
        got = input_line(c, in, &line);
        lineno++;
    } while (got == 1 && buf_error(&line) == 0 && blank_line(line.data, line.len));
    rc = got < 0 ? got : 0;
    if (got <= 0)
        goto out;
    if (buf_error(&line) == 0) {
        json_error_t jerr;
        json_t *v = NULL;
        if (line.len <= LIMIT_IMPORT_LINE_BYTES)
            v = json_loadb(line.data, line.len, JSON_DECODE_ANY, &jerr);
        if (v) {
            /* JSONL: stream line by line. */
            char where[32];
            snprintf(where, sizeof where, "line %zu", lineno);
            rc = import_value(c, v, where);
            json_decref(v);
            line.max = LIMIT_IMPORT_LINE_BYTES;
            while (rc == 0 && (got = input_line(c, in, &line)) == 1) {
                lineno++;
                if (buf_error(&line) == 0 && blank_line(line.data, line.len))
                    continue;
                rc = import_line(c, line.data, line.len, buf_error(&line) != 0, lineno);
            }
            if (rc == 0 && got < 0)
                rc = got;
            goto out;
        }
    }
    if (buf_error(&line) != 0) {
        rc = err_set(c->err, ERR_TOO_LARGE, "a line or the file is larger than %zu bytes",
                     INGEST_MAX_FILE_BYTES);
        goto out;
    }
    /* One JSON value over several lines, or JSONL whose first line is bad. */
    size_t first = lineno;
    buf_append(&all, line.data, line.len);
    buf_putc(&all, '\n');
    rc = input_rest(c, in, &all);
    if (rc < 0)
        goto out;
    if (buf_error(&all) != 0) {
        rc = err_set(c->err, buf_error(&all), "file larger than %zu bytes", INGEST_MAX_FILE_BYTES);
        goto out;
    }
    json_error_t jerr;
    json_t *v = json_loadb(all.data, all.len, JSON_DECODE_ANY, &jerr);
    if (v) {
        rc = import_value(c, v, "");
        json_decref(v);
    } else if (opens_document(line.data, line.len)) {
        /* A pretty-printed document that is broken: one report, not one
         * per line of it. */
        ingest_report(c->report, "file: invalid JSON at line %zu, column %d: %s",
                      (size_t)jerr.line + first - 1, jerr.column, jerr.text);
        c->stats->skipped++;
    } else {
        rc = import_lines_mem(c, all.data, all.len, first);
    }
out:
    buf_release(&line);
    buf_release(&all);
    return rc;
}

int ingest_import_article(struct import_ctx *c, const struct article *in, const char *where)
{
    struct article art;
    int rc = ingest_article_copy(&c->b->a, &art, in);
    if (rc < 0)
        return err_set(c->err, rc, "out of memory");
    struct err e;
    err_clear(&e);
    return add_read(c, &art, 0, &e, where);
}

void ingest_import_skip(struct import_ctx *c)
{
    c->stats->skipped++;
}

FILE *ingest_import_report(struct import_ctx *c)
{
    return c->report ? c->report : stderr;
}

static int file_producer(struct import_ctx *c, void *arg)
{
    return import_stream(c, arg);
}

int ingest_import_file(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err)
{
    /* The input's buffer (IMPORT_READ_BYTES) is too large for a stack. */
    struct import_input *in = malloc(sizeof *in);
    if (!in)
        return err_set(err, ERR_NOMEM, "out of memory");
    int fd = STDIN_FILENO;
    if (strcmp(path, "-") != 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        free(in);
        return err_set(err, ERR_IO, "cannot open: %s", strerror(errno));
    }
    input_open(in, fd);
    int rc = ingest_import_run(s, opt, stats, err, file_producer, in);
    if (fd != STDIN_FILENO)
        close(fd);
    free(in);
    return rc;
}

int ingest_import_run(struct store *s, const struct ingest_options *opt, struct ingest_stats *stats,
                      struct err *err, int (*produce)(struct import_ctx *c, void *arg), void *arg)
{
    static const struct ingest_options defaults = {0};
    struct ingest_stats local = {0};
    struct ingest_options o = opt ? *opt : defaults;
    struct import_batch *b = NULL;
    struct import_ctx c = {0};
    int rc;

    if (!stats)
        stats = &local;
    /* One import time for every article of the file. */
    if (!o.now)
        o.now = (int64_t)time(NULL);
    c = (struct import_ctx){.s = s, .opt = &o, .stats = stats, .err = err, .report = o.report};
    rc = ERR_NOMEM;
    for (int i = 0; i < 2; i++) {
        b = calloc(1, sizeof *b);
        if (!b)
            goto out;
        arena_init(&b->a, 0);
        b->arts = calloc(LIMIT_IMPORT_BATCH, sizeof *b->arts);
        b->preps = calloc(LIMIT_IMPORT_BATCH, sizeof *b->preps);
        *(i == 0 ? &c.b : &c.spare) = b;
        b = NULL;
        if (!(i == 0 ? c.b : c.spare)->arts || !(i == 0 ? c.b : c.spare)->preps)
            goto out;
    }
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    if (pthread_create(&c.writer, NULL, writer_main, &c) != 0) {
        rc = err_set(err, ERR_NOMEM, "cannot start the import's writer thread");
        goto sync;
    }
    c.writer_started = true;
    rc = produce(&c, arg);
    if (rc == 0)
        rc = batch_flush(&c);
    {
        /* Whatever happened here, what was handed over is committed (or the
         * writer's failure is the answer) before returning. */
        int wrc = writer_idle(&c);
        if (rc == 0)
            rc = wrc;
    }
    pthread_mutex_lock(&c.mu);
    c.quit = true;
    pthread_cond_broadcast(&c.cv);
    pthread_mutex_unlock(&c.mu);
    pthread_join(c.writer, NULL);
sync:
    pthread_mutex_destroy(&c.mu);
    pthread_cond_destroy(&c.cv);
out:
    for (int i = 0; i < 2; i++) {
        struct import_batch *x = i == 0 ? c.b : c.spare;
        if (x) {
            arena_release(&x->a);
            free(x->arts);
            free(x->preps);
            free(x);
        }
    }
    if (rc == ERR_NOMEM && err && !err->code)
        err_set(err, rc, "out of memory");
    return rc;
}
