/* bench_index: latency and throughput of newsd's search measured in-process,
 * through the index.h call the HTTP API makes (index_search), on a store
 * loaded by `newsd import`. Each client thread decodes and parses the whole
 * mix before the clock starts; the clock covers index_search alone (count,
 * page of ids, the page's articles as JSON into the request's arena) and
 * dropping the arena.
 *
 *   bench_index --store DIR --mix FILE [--reps R] [--warmup W]
 *               [--clients 1,2,4,16] [--seconds S] [--index fts5|engine]
 *               [--name NAME]
 *
 * --index picks the search backend (default: $NEWSD_INDEX, else the
 * engine); the engine's settings come from the environment as they do for
 * `newsd serve` (NEWSD_ENGINE_COUNT_CACHE=0: every count cold). The time
 * the index took to open (the engine builds its index then) goes to stderr.
 * --name labels the lines (default newsd; run.sh: newsd-cold, newsd-warm).
 *
 * Prints lat/tput/mem lines (bench/common.h) on stdout, and stat lines: the
 * time index_open took (the engine maps its files, or builds them when
 * there are none), the backend, and the count cache's hits and misses after
 * the latency passes and at the end (a cold run must show no hits). */
#include "common.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "index/index.h"
#include "store/store.h"
#include "text/text.h"

#include "util/banned.h"

#define REQUEST_ARENA_BYTES (64u << 20)

struct ctx {
    struct index *idx;
    const struct mix *m;
};

/* A client thread: every request of the mix decoded once (in reqs_arena),
 * and a fresh arena per search, as the HTTP layer gives each request. */
struct thread_state {
    struct index *idx;
    struct arena reqs_arena;
    struct index_request *reqs;
    struct arena a;
};

static void thread_done(void *state)
{
    struct thread_state *st = state;
    if (st == NULL)
        return;
    arena_release(&st->a);
    arena_release(&st->reqs_arena);
    free(st->reqs);
    text_thread_release();
    free(st);
}

static void *thread_init(void *arg)
{
    const struct ctx *ctx = arg;
    struct thread_state *st = calloc(1, sizeof *st);
    struct err err;
    if (st == NULL)
        return NULL;
    st->idx = ctx->idx;
    arena_init(&st->reqs_arena, 0);
    arena_init(&st->a, REQUEST_ARENA_BYTES);
    st->reqs = calloc(ctx->m->n, sizeof *st->reqs);
    if (st->reqs == NULL) {
        thread_done(st);
        return NULL;
    }
    for (size_t i = 0; i < ctx->m->n; i++) {
        err_clear(&err);
        if (bench_request_build(&st->reqs_arena, ctx->m->q[i].params, &st->reqs[i], &err) < 0) {
            fprintf(stderr, "bench_index: %s: %s\n", ctx->m->q[i].id, err.msg);
            thread_done(st);
            return NULL;
        }
    }
    return st;
}

/* The timed part: one index_search (and dropping its arena). */
static int run(void *state, const struct mix_query *q, size_t qi, uint64_t *total, struct err *err)
{
    struct thread_state *st = state;
    struct index_result res;
    int rc;

    (void)q;
    rc = index_search(st->idx, &st->a, &st->reqs[qi], &res, err);
    if (rc == 0)
        *total = res.total;
    arena_release(&st->a);
    arena_init(&st->a, REQUEST_ARENA_BYTES);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_index --store DIR --mix FILE [--reps R] [--warmup W]\n"
                    "                   [--clients 1,2,4,16] [--seconds S] [--index fts5|engine]\n"
                    "                   [--name NAME]\n");
}

static void print_cache_stats(struct index *idx, const char *name, const char *when)
{
    struct index_stats st;
    index_stats(idx, &st);
    printf("stat\t%s\tcount_cache_hits_%s\t%llu\n", name, when, (unsigned long long)st.cache_hits);
    printf("stat\t%s\tcount_cache_misses_%s\t%llu\n", name, when,
           (unsigned long long)st.cache_misses);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *store_dir = NULL, *mix_path = NULL, *clients_arg = "1,2,4,16", *kind = NULL;
    const char *name = "newsd";
    int reps = 3, warmup = 0, clients[16], n_clients;
    double seconds = 10;
    struct store *s = NULL;
    struct ctx ctx = {0};
    struct mix m = {0};
    struct err err;
    int rc = 1;

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--store") == 0)
            store_dir = v;
        else if (v && strcmp(argv[i], "--mix") == 0)
            mix_path = v;
        else if (v && strcmp(argv[i], "--reps") == 0)
            reps = (int)strtol(v, NULL, 10);
        else if (v && strcmp(argv[i], "--warmup") == 0)
            warmup = (int)strtol(v, NULL, 10);
        else if (v && strcmp(argv[i], "--clients") == 0)
            clients_arg = v;
        else if (v && strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--index") == 0)
            kind = v;
        else if (v && strcmp(argv[i], "--name") == 0)
            name = v;
        else {
            usage();
            return 2;
        }
        i++;
    }
    n_clients = bench_parse_ints(clients_arg, clients, 16);
    if (!store_dir || !mix_path || reps < 1 || warmup < 0 || n_clients < 0 || seconds < 0) {
        usage();
        return 2;
    }
    if (mix_load(&m, mix_path) < 0)
        goto out;
    ctx.m = &m;
    err_clear(&err);
    double t_open = bench_now();
    struct index_options iopt = {.kind = cmd_index_kind(kind, NULL)};
    cmd_engine_options(&iopt.engine);
    if (store_open(&s, store_dir, &err) < 0 || index_open_with(&ctx.idx, s, &iopt, &err) < 0) {
        fprintf(stderr, "bench_index: %s: %s\n", store_dir, err.msg);
        goto out;
    }
    double opened = bench_now() - t_open;
    fprintf(stderr, "bench_index: %s index opened in %.1f s\n", index_kind(ctx.idx), opened);
    printf("stat\t%s\tindex_kind\t%s\n", name, index_kind(ctx.idx));
    printf("stat\t%s\topen_seconds\t%.3f\n", name, opened);
    struct bench_engine e = {
        .name = name,
        .ctx = &ctx,
        .thread_init = thread_init,
        .thread_done = thread_done,
        .run = run,
    };
    printf("mem\t%s\topened\t%ld\n", name, bench_status_kb(0, "VmRSS"));
    rc = bench_latency(&e, &m, warmup, reps, stdout) < 0;
    printf("mem\t%s\tafter-latency\t%ld\n", name, bench_status_kb(0, "VmRSS"));
    print_cache_stats(ctx.idx, name, "latency");
    for (int k = 0; k < n_clients && seconds > 0; k++)
        rc |= bench_throughput(&e, &m, clients[k], seconds, stdout) < 0;
    print_cache_stats(ctx.idx, name, "end");
    printf("mem\t%s\tafter-throughput\t%ld\n", name, bench_status_kb(0, "VmRSS"));
    printf("mem\t%s\tafter-throughput-anon\t%ld\n", name, bench_status_kb(0, "RssAnon"));
    printf("mem\t%s\tpeak\t%ld\n", name, bench_status_kb(0, "VmHWM"));
out:
    index_close(ctx.idx);
    store_close(s);
    mix_free(&m);
    return rc;
}
