/* bench_page: the time of one results page alone (docs/performance.md, "The
 * page from the engine's document store"), on a store the engine has
 * indexed. For 100 articles — consecutive docids of the first segment, and
 * ids scattered over every segment — it times, page after page, each in a
 * fresh arena and response buffer as a request has:
 *   rows:  the rows read from the table (store_reader_articles, what the
 *          fts5 backend and the engine before its document store did) and
 *          rendered (api_render_articles);
 *   store: the engine's stored JSON decompressed (eng_page_docs) and copied
 *          into the envelope (api_render_page).
 * The two pages are compared byte for byte, then each way is timed in a
 * pass of its own; medians and means in microseconds.
 *
 *   bench_page --store DIR [--pages N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/render.h"
#include "index/engine/internal.h"
#include "store/journal.h"
#include "util/arena.h"

#define PAGE 100

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

static double mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

/* The rows way into out; 0 or an ERR_*. */
static int page_rows(struct index_engine *e, const int64_t *ids, struct buf *out, struct err *err)
{
    struct arena a;
    struct store_reader *r = NULL;
    struct article arts[PAGE];
    int rc;
    arena_init(&a, 0);
    if ((rc = store_readers_get(e->readers, &r, err)) == 0 &&
        (rc = store_reader_begin(r, err)) == 0 &&
        (rc = store_reader_articles(r, &a, ids, PAGE, arts, err)) == 0) {
        store_reader_end(r, NULL);
        api_render_articles(out, 123, arts, PAGE);
    }
    store_readers_put(e->readers, r);
    arena_release(&a);
    return rc;
}

/* The document store's way into out. */
static int page_store(const struct eng_snap *s, const int64_t *ids, struct buf *out,
                      struct err *err)
{
    struct arena a;
    struct index_doc docs[PAGE];
    size_t kept = 0;
    arena_init(&a, 0);
    int rc = eng_page_docs(s, &a, ids, NULL, PAGE, docs, &kept, err);
    if (rc == 0)
        api_render_page(out, 123, docs, kept);
    arena_release(&a);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    size_t pages = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--store") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--pages") == 0)
            pages = (size_t)strtoul(argv[i + 1], NULL, 10);
    }
    if (dir == NULL || pages == 0) {
        fprintf(stderr, "usage: bench_page --store DIR [--pages N]\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/newsd.db", dir);
    struct index_backend *b = NULL;
    struct index_engine_options opt = {.no_count_cache = true};
    struct err err;
    err_clear(&err);
    if (index_engine_new(&b, path, &opt, &err) < 0) {
        fprintf(stderr, "bench_page: %s\n", err.msg);
        return 1;
    }
    struct index_engine *e = (struct index_engine *)b;
    struct eng_snap *s = eng_slot_get(&e->slot);
    if (s == NULL || s->nseg == 0 || s->segs[0]->n < 2 * PAGE) {
        fprintf(stderr, "bench_page: the index holds too few articles\n");
        return 1;
    }
    int64_t ids[2][PAGE];
    srand(42);
    for (int i = 0; i < PAGE; i++) {
        ids[0][i] = s->segs[0]->ids[PAGE + i];
        size_t si = (size_t)rand() % s->nseg;
        ids[1][i] = s->segs[si]->ids[(uint32_t)rand() % s->segs[si]->n];
    }
    double *tr = calloc(pages, sizeof *tr), *ts = calloc(pages, sizeof *ts);
    const char *name[2] = {"consecutive", "scattered"};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0 && tr && ts; k++) {
        struct buf r, d;
        /* The same page both ways, compared; then each way alone, so that
         * neither runs in the caches the other just filled. */
        buf_init(&r, 0);
        buf_init(&d, 0);
        if ((rc = page_rows(e, ids[k], &r, &err)) == 0 &&
            (rc = page_store(s, ids[k], &d, &err)) == 0 &&
            (r.len != d.len || memcmp(r.data, d.data, r.len) != 0)) {
            fprintf(stderr, "bench_page: the two pages differ\n");
            rc = 1;
        }
        size_t bytes = d.len;
        buf_release(&r);
        buf_release(&d);
        for (size_t p = 0; p < pages && rc == 0; p++) {
            buf_init(&r, 0);
            double t0 = now();
            rc = page_rows(e, ids[k], &r, &err);
            tr[p] = (now() - t0) * 1e6;
            buf_release(&r);
        }
        for (size_t p = 0; p < pages && rc == 0; p++) {
            buf_init(&d, 0);
            double t0 = now();
            rc = page_store(s, ids[k], &d, &err);
            ts[p] = (now() - t0) * 1e6;
            buf_release(&d);
        }
        if (rc == 0)
            printf("page\t%s\t%d articles\t%zu bytes\trows median %.1f mean %.1f us\t"
                   "store median %.1f mean %.1f us\n",
                   name[k], PAGE, bytes, median(tr, pages), mean(tr, pages), median(ts, pages),
                   mean(ts, pages));
    }
    if (rc != 0 && err.msg[0])
        fprintf(stderr, "bench_page: %s\n", err.msg);
    free(tr);
    free(ts);
    eng_snap_unref(s);
    b->free(b);
    return rc == 0 ? 0 : 1;
}
