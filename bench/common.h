/* Shared by the benchmark programs (bench_index, bench_http, fts5_baseline):
 * the query mix (bench/querymix.tsv), turning one line of it into an
 * index_request the way /v2/everything does, the latency and throughput
 * loops, and the result lines every program prints (bench/README.md):
 *
 *   lat   ENGINE ID SHAPE SORT FILTER PAGE MICROSECONDS TOTAL PASS
 *   tput  ENGINE CLIENTS REQUESTS SECONDS ERRORS
 *   mem   ENGINE WHAT KILOBYTES
 *   load  ENGINE ARTICLES SECONDS BYTES
 *   size  ENGINE WHAT BYTES
 *   stat  ENGINE WHAT VALUE
 *   err   ENGINE ID MESSAGE
 *
 * PASS counts the timed passes over the mix from 0: with no warm-up, pass 0
 * is each query's first run in that process (nothing cached yet but what
 * the operating system keeps), the later ones are repeats. ENGINE names the
 * program and its setting (newsd-cold, http-warm, fts5).
 * tab-separated, one per line, read by bench/report.py. Figures only:
 * nothing here asserts anything about speed. */
#ifndef NEWSD_BENCH_COMMON_H
#define NEWSD_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "index/index.h"
#include "util/arena.h"
#include "util/err.h"

struct mix_query {
    char *id, *shape, *sort, *filter;
    int page;
    char *params; /* URL-encoded query string of /v2/everything */
};

struct mix {
    struct mix_query *q;
    size_t n;
};

/* Load the mix file; 0, or -1 with a message on stderr. */
int mix_load(struct mix *m, const char *path);
void mix_free(struct mix *m);

/* Decode a query string into *out as /v2/everything would (q parsed with
 * query_parse, lists split, domains lower-cased without www., dates in UTC
 * with a date-only `to` meaning the end of that day, sortBy, page and
 * pageSize). Everything lives in a. 0 or a negative ERR_* with err set. */
int bench_request_build(struct arena *a, const char *params, struct index_request *out,
                        struct err *err);

/* One engine as the loops see it: per-thread state, and one query run.
 * run returns 0 and the query's total, or a negative code with err set. */
struct bench_engine {
    const char *name;
    void *ctx;
    void *(*thread_init)(void *ctx); /* NULL on failure */
    void (*thread_done)(void *state);
    int (*run)(void *state, const struct mix_query *q, size_t qi, uint64_t *total, struct err *err);
};

/* Every query of the mix `reps` times in one thread (after `warmup`
 * untimed passes), one lat line per run, numbered by timed pass. */
int bench_latency(const struct bench_engine *e, const struct mix *m, int warmup, int reps,
                  FILE *out);

/* `clients` threads each running the mix in a loop (each from its own
 * offset) for `seconds`; one tput line. */
int bench_throughput(const struct bench_engine *e, const struct mix *m, int clients, double seconds,
                     FILE *out);

/* How a peer's query language writes newsd's parse tree (query/query.h,
 * normal form: NOT only as a child of AND): words and phrases as quoted
 * strings (a '"' or the escape character inside is preceded by escape),
 * OR as "(a OR b)", AND as and_open a and_sep b and_mid, then not_sep c
 * for each NOT child, then ")". */
struct bench_query_syntax {
    const char *and_open, *and_sep, *and_mid, *not_sep;
    char escape;
};
struct buf;
struct query_node;
void bench_query_text(struct buf *b, const struct query_node *n,
                      const struct bench_query_syntax *syn);

/* The options of a program that runs the mix: --mix FILE, --reps R,
 * --warmup W, --clients 1,2,4,16, --seconds S. */
struct bench_mix_opts {
    const char *mix, *clients;
    int reps, warmup;
    double seconds;
};
#define BENCH_MIX_OPTS_INIT                                                                        \
    {                                                                                              \
        .clients = "1,2,4,16", .reps = 3, .seconds = 10                                            \
    }

/* If name is one of those options, store value (not NULL) and return 1;
 * else 0. */
int bench_mix_opt(struct bench_mix_opts *o, const char *name, const char *value);

/* Run the mix m (loaded from o->mix by the caller, whose engine holds it):
 * the latency passes, then one throughput run per client count. 0, or -1
 * (a message on stderr or an err line). */
int bench_run_mix(const struct bench_engine *e, const struct mix *m, const struct bench_mix_opts *o,
                  FILE *out);

/* Monotonic seconds. */
double bench_now(void);

/* A field of /proc/PID/status in kB (VmRSS, VmHWM); pid 0 = this process.
 * -1 when unreadable. */
long bench_status_kb(pid_t pid, const char *field);

/* Host of a URL into out: lower case, without www. and port ("" when
 * there is none). The baselines' domain column, as newsd files it. */
void bench_url_domain(const char *url, char *out, size_t cap);

/* A libcurl write callback appending to the struct buf ud (util/buf.h);
 * 0 (libcurl aborts) once the buffer failed. */
size_t bench_on_body(char *p, size_t size, size_t n, void *ud);

/* Parse "1,2,4,16" into at most cap ints; the count, or -1. */
int bench_parse_ints(const char *s, int *out, int cap);

#endif
