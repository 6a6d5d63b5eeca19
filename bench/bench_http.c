/* bench_http: the query mix against a running `newsd serve` over HTTP on
 * loopback, as NewsAPI clients send it: GET /v2/everything?<params> with
 * X-Api-Key, one libcurl easy handle (one keep-alive connection) per client
 * thread. Latency is the whole request as the client sees it (send, server
 * work, JSON rendering, receive); the server's resident memory is read from
 * /proc/PID/status before and after.
 *
 *   bench_http --url http://127.0.0.1:PORT --key KEY --mix FILE [--pid PID]
 *              [--reps R] [--warmup W] [--clients 1,2,4,16] [--seconds S]
 *              [--name NAME]
 *   bench_http --url BASE --wait-healthy TIMEOUT [--since EPOCH] [--pid PID]
 *              [--name NAME]
 *   bench_http --url BASE --wait-settled TIMEOUT [--since EPOCH] [--pid PID]
 *              [--name NAME]
 *   bench_http --url BASE --key KEY --export PARAMS [--pid PID] [--name NAME]
 *
 * A request that does not answer 200 with a totalResults is an error (err
 * line), never a silent fast sample. Prints lat/tput/mem lines
 * (bench/common.h) on stdout, labelled NAME (default http), and stat lines
 * with the server's count cache hits and misses from /metrics (a server
 * started with NEWSD_ENGINE_COUNT_CACHE=0 must show none).
 *
 * --wait-healthy polls the server every 2 ms until GET /healthz answers 200
 * (the index is open) and prints how long after EPOCH (wall-clock seconds,
 * when the server was started) it first answered at all (listening_seconds)
 * and answered 200 (healthy_seconds); exit 1 when TIMEOUT seconds pass or
 * the process PID ends first. --wait-settled then waits for the background
 * merges the first build leaves to end (wait_settled).
 *
 * --export streams GET /v2/everything/export?PARAMS (NDJSON: a line per
 * article) to its end and prints its rate (articles/s, MB/s) with the
 * server's anonymous memory (RssAnon) before, at its highest during the
 * transfer (sampled every 64 MiB received) and after; then, as the
 * baseline of the same run, walks the same matches with cursor paging
 * (pageSize=100, what a client does without an export) and prints its
 * rate: `export` and `export-cursor` stat lines. */
#include "common.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"

#include "util/banned.h"

#define BODY_MAX (64u << 20)

struct hctx {
    const char *base, *key;
    const struct mix *m;
};

struct hstate {
    CURL *curl;
    struct curl_slist *headers;
    char **urls; /* one per query of the mix */
    size_t n_urls;
    struct buf body;
};

static void h_done(void *state)
{
    struct hstate *st = state;
    if (st == NULL)
        return;
    if (st->curl)
        curl_easy_cleanup(st->curl);
    curl_slist_free_all(st->headers);
    for (size_t i = 0; i < st->n_urls; i++)
        free(st->urls[i]);
    free(st->urls);
    buf_release(&st->body);
    free(st);
}

static void *h_init(void *arg)
{
    const struct hctx *c = arg;
    struct hstate *st = calloc(1, sizeof *st);
    char header[512];

    if (st == NULL)
        return NULL;
    buf_init(&st->body, BODY_MAX);
    st->curl = curl_easy_init();
    snprintf(header, sizeof header, "X-Api-Key: %s", c->key);
    st->headers = curl_slist_append(NULL, header);
    st->urls = calloc(c->m->n, sizeof *st->urls);
    if (!st->curl || !st->headers || !st->urls) {
        h_done(st);
        return NULL;
    }
    for (size_t i = 0; i < c->m->n; i++) {
        size_t n = strlen(c->base) + strlen(c->m->q[i].params) + 32;
        st->urls[i] = malloc(n);
        if (st->urls[i] == NULL) {
            h_done(st);
            return NULL;
        }
        snprintf(st->urls[i], n, "%s/v2/everything?%s", c->base, c->m->q[i].params);
        st->n_urls++;
    }
    curl_easy_setopt(st->curl, CURLOPT_HTTPHEADER, st->headers);
    curl_easy_setopt(st->curl, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(st->curl, CURLOPT_WRITEDATA, &st->body);
    curl_easy_setopt(st->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(st->curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(st->curl, CURLOPT_TIMEOUT, 600L);
    return st;
}

static int h_run(void *state, const struct mix_query *q, size_t qi, uint64_t *total,
                 struct err *err)
{
    struct hstate *st = state;
    long status = 0;
    CURLcode cc;
    const char *p;

    (void)q;
    buf_reset(&st->body);
    curl_easy_setopt(st->curl, CURLOPT_URL, st->urls[qi]);
    cc = curl_easy_perform(st->curl);
    if (cc != CURLE_OK)
        return err_set(err, ERR_IO, "%s", curl_easy_strerror(cc));
    curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &status);
    p = st->body.data ? strstr(st->body.data, "\"totalResults\":") : NULL;
    if (status != 200 || p == NULL)
        return err_set(err, ERR_INVALID, "HTTP %ld: %.200s", status,
                       st->body.data ? st->body.data : "");
    *total = strtoull(p + strlen("\"totalResults\":"), NULL, 10);
    return 0;
}

/* ---- --export ------------------------------------------------------------- */

struct export_count {
    uint64_t bytes, lines, next_sample;
    pid_t pid;
    long anon_max;
};

static size_t on_export(char *p, size_t size, size_t n, void *ud)
{
    struct export_count *e = ud;
    size_t len = size * n;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(p + len - q))) != NULL; q++)
        e->lines++;
    e->bytes += len;
    if (e->bytes >= e->next_sample) {
        long kb = e->pid > 0 ? bench_status_kb(e->pid, "RssAnon") : -1;
        if (kb > e->anon_max)
            e->anon_max = kb;
        e->next_sample = e->bytes + (64u << 20);
    }
    return len;
}

static CURL *export_handle(struct curl_slist **headers, const char *key)
{
    char header[512];
    CURL *curl = curl_easy_init();
    snprintf(header, sizeof header, "X-Api-Key: %s", key);
    *headers = curl_slist_append(NULL, header);
    if (!curl || !*headers) {
        if (curl)
            curl_easy_cleanup(curl);
        curl_slist_free_all(*headers);
        return NULL;
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, *headers);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 7200L);
    return curl;
}

/* The cursor walk of the same search: articles and seconds, or -1. */
static int cursor_walk(const struct hctx *c, const char *params, uint64_t *articles,
                       double *seconds)
{
    struct curl_slist *headers = NULL;
    CURL *curl = export_handle(&headers, c->key);
    struct buf body;
    char url[8192], cursor[64] = "*";
    int rc = -1;
    if (!curl)
        return -1;
    buf_init(&body, BODY_MAX);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    *articles = 0;
    double t0 = bench_now();
    for (;;) {
        long status = 0;
        snprintf(url, sizeof url, "%s/v2/everything?%s&pageSize=100&cursor=%s", c->base, params,
                 cursor);
        buf_reset(&body);
        curl_easy_setopt(curl, CURLOPT_URL, url);
        if (curl_easy_perform(curl) != CURLE_OK)
            goto out;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        buf_putc(&body, '\0');
        if (status != 200 || buf_error(&body))
            goto out;
        /* Articles: each has one "publishedAt" key. */
        for (const char *q = body.data; (q = strstr(q, "\"publishedAt\":")) != NULL; q++)
            (*articles)++;
        const char *nc = strstr(body.data, "\"nextCursor\":\"");
        if (!nc)
            break;
        nc += strlen("\"nextCursor\":\"");
        size_t n = strcspn(nc, "\"");
        if (n >= sizeof cursor)
            goto out;
        memcpy(cursor, nc, n);
        cursor[n] = '\0';
    }
    *seconds = bench_now() - t0;
    rc = 0;
out:
    buf_release(&body);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return rc;
}

static int run_export(const struct hctx *c, const char *params, const char *name, pid_t pid)
{
    struct curl_slist *headers = NULL;
    CURL *curl = export_handle(&headers, c->key);
    struct export_count e = {.pid = pid, .anon_max = -1};
    char url[8192];
    long status = 0;
    if (!curl)
        return 1;
    snprintf(url, sizeof url, "%s/v2/everything/export?%s", c->base, params);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_export);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &e);
    long before = pid > 0 ? bench_status_kb(pid, "RssAnon") : -1;
    double t0 = bench_now();
    CURLcode cc = curl_easy_perform(curl);
    double secs = bench_now() - t0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (cc != CURLE_OK || status != 200) {
        printf("err\t%s\texport\tHTTP %ld: %s\n", name, status, curl_easy_strerror(cc));
        return 1;
    }
    printf("stat\t%s\tparams\t%s\n", name, params);
    printf("stat\t%s\tarticles\t%llu\n", name, (unsigned long long)e.lines);
    printf("stat\t%s\tbytes\t%llu\n", name, (unsigned long long)e.bytes);
    printf("stat\t%s\tseconds\t%.3f\n", name, secs);
    printf("stat\t%s\tarticles_per_s\t%.0f\n", name, secs > 0 ? (double)e.lines / secs : 0);
    if (pid > 0) {
        printf("stat\t%s\tanon_before_kb\t%ld\n", name, before);
        printf("stat\t%s\tanon_max_kb\t%ld\n", name, e.anon_max);
        printf("stat\t%s\tanon_after_kb\t%ld\n", name, bench_status_kb(pid, "RssAnon"));
    }
    fflush(stdout);
    uint64_t walked;
    double wsecs;
    if (cursor_walk(c, params, &walked, &wsecs) < 0) {
        printf("err\t%s\tcursor walk failed\n", name);
        return 1;
    }
    printf("stat\t%s-cursor\tarticles\t%llu\n", name, (unsigned long long)walked);
    printf("stat\t%s-cursor\tseconds\t%.3f\n", name, wsecs);
    printf("stat\t%s-cursor\tarticles_per_s\t%.0f\n", name, wsecs > 0 ? (double)walked / wsecs : 0);
    fflush(stdout);
    if (walked != e.lines) {
        printf("err\t%s\texport gave %llu articles, the cursor walk %llu\n", name,
               (unsigned long long)e.lines, (unsigned long long)walked);
        return 1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_http --url BASE --key KEY --mix FILE [--pid PID] [--reps R]\n"
                    "                  [--warmup W] [--clients 1,2,4,16] [--seconds S]\n"
                    "                  [--name NAME]\n"
                    "       bench_http --url BASE --wait-healthy TIMEOUT [--since EPOCH]\n"
                    "                  [--pid PID] [--name NAME]\n"
                    "       bench_http --url BASE --wait-settled TIMEOUT [--since EPOCH]\n"
                    "                  [--pid PID] [--name NAME]\n"
                    "       bench_http --url BASE --key KEY --export PARAMS [--pid PID]\n"
                    "                  [--name NAME]\n");
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* --wait-healthy: 0 once /healthz answers 200, 1 on timeout or when the
 * server process is gone. */
static int wait_healthy(const char *base, const char *name, double since, double timeout, pid_t pid)
{
    char url[1024];
    CURL *curl = curl_easy_init();
    double start = bench_now(), listening = -1;
    int rc = 1;

    if (curl == NULL)
        return 1;
    snprintf(url, sizeof url, "%s/healthz", base);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    while (bench_now() - start < timeout) {
        long status = 0;
        if (curl_easy_perform(curl) == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
            if (listening < 0) {
                listening = wall_now() - since;
                printf("stat\t%s\tlistening_seconds\t%.3f\n", name, listening);
            }
            if (status == 200) {
                printf("stat\t%s\thealthy_seconds\t%.3f\n", name, wall_now() - since);
                rc = 0;
                break;
            }
        }
        if (pid > 0 && kill(pid, 0) != 0) {
            fprintf(stderr, "bench_http: the server (pid %ld) is gone\n", (long)pid);
            break;
        }
        usleep(2000);
    }
    if (rc != 0)
        printf("err\t%s\thealthz\tnot healthy within %.0f s\n", name, timeout);
    fflush(stdout);
    curl_easy_cleanup(curl);
    return rc;
}

/* A handle that GETs base's /metrics into body. */
static CURL *metrics_handle(const char *base, struct buf *body)
{
    char url[1024];
    CURL *curl = curl_easy_init();
    if (curl == NULL)
        return NULL;
    snprintf(url, sizeof url, "%s/metrics", base);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    return curl;
}

/* One scrape into body (emptied first), NUL-terminated: true when it came. */
static bool metrics_get(CURL *curl, struct buf *body)
{
    buf_reset(body);
    if (curl_easy_perform(curl) != CURLE_OK || body->data == NULL)
        return false;
    buf_putc(body, '\0');
    return true;
}

/* A metric's value from the /metrics body (at the start of a line: the
 * # HELP line names the metric too); -1 when it is not there. */
static double metric_in(const char *body, const char *metric)
{
    char at[128];
    snprintf(at, sizeof at, "\n%s ", metric);
    const char *p = strstr(body, at);
    return p ? strtod(p + strlen(at), NULL) : -1;
}

/* The count cache's counters from /metrics, as stat lines (none when the
 * server does not export them: the FTS5 backend). */
static void server_cache_stats(const char *base, const char *name, const char *when)
{
    static const char *const metric[2] = {"newsd_index_count_cache_hits_total",
                                          "newsd_index_count_cache_misses_total"};
    static const char *const label[2] = {"count_cache_hits", "count_cache_misses"};
    struct buf body;
    buf_init(&body, BODY_MAX);
    CURL *curl = metrics_handle(base, &body);

    if (curl == NULL)
        return;
    if (metrics_get(curl, &body)) {
        for (int k = 0; k < 2; k++) {
            double v = metric_in(body.data, metric[k]);
            if (v >= 0)
                printf("stat\t%s\t%s_%s\t%.0f\n", name, label[k], when, v);
        }
    }
    fflush(stdout);
    buf_release(&body);
    curl_easy_cleanup(curl);
}

/* --wait-settled: 0 once the server's index has run no merge and kept its
 * segment count for SETTLED_S seconds, printing when (settled_seconds,
 * after EPOCH) and its segments then; 1 on timeout or when the process PID
 * ends first. A server without the engine's metrics (the FTS5 backend) is
 * settled at once. Polled once a second: each /metrics counts the table's
 * rows, 55 ms of the server's CPU at 10 M, and polling every 100 ms took a
 * third of the core that the merges being timed share. */
#define SETTLED_S 3.0
#define SETTLED_POLL_US 1000000
static int wait_settled(const char *base, const char *name, double since, double timeout, pid_t pid)
{
    struct buf body;
    buf_init(&body, BODY_MAX);
    CURL *curl = metrics_handle(base, &body);
    double start = bench_now(), quiet_since = -1, quiet_wall = 0, last_segments = -2;
    const char *why = NULL;

    if (curl == NULL)
        return 1;
    while (why == NULL) {
        if (bench_now() - start >= timeout) {
            why = "merges still running";
            break;
        }
        if (metrics_get(curl, &body)) {
            double merging = metric_in(body.data, "newsd_index_merges_running");
            double segments = metric_in(body.data, "newsd_index_segments");
            if (merging != 0 || segments != last_segments) {
                quiet_since = -1;
            } else if (quiet_since < 0) {
                quiet_since = bench_now();
                quiet_wall = wall_now();
            }
            last_segments = segments;
            if (merging < 0 || (quiet_since >= 0 && bench_now() - quiet_since >= SETTLED_S)) {
                /* settled when the quiet spell began (at once without the
                 * engine's metrics) */
                printf("stat\t%s\tsettled_seconds\t%.3f\n", name,
                       (merging < 0 ? wall_now() : quiet_wall) - since);
                if (segments >= 0)
                    printf("stat\t%s\tsettled_segments\t%.0f\n", name, segments);
                break;
            }
        }
        if (pid > 0 && kill(pid, 0) != 0)
            why = "the server is gone";
        else
            usleep(SETTLED_POLL_US);
    }
    if (why)
        printf("err\t%s\tsettle\t%s after %.0f s\n", name, why, bench_now() - start);
    fflush(stdout);
    buf_release(&body);
    curl_easy_cleanup(curl);
    return why ? 1 : 0;
}

static void server_mem(pid_t pid, const char *name, const char *when)
{
    if (pid <= 0)
        return;
    printf("mem\t%s\t%s\t%ld\n", name, when, bench_status_kb(pid, "VmRSS"));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *clients_arg = "1,2,4,16", *mix_path = NULL, *name = "http", *export = NULL;
    struct hctx c = {0};
    struct mix m = {0};
    int reps = 3, warmup = 0, clients[16], n_clients, rc = 1;
    double seconds = 10, wait = -1, settle = -1, since = 0;
    pid_t pid = 0;

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--url") == 0)
            c.base = v;
        else if (v && strcmp(argv[i], "--key") == 0)
            c.key = v;
        else if (v && strcmp(argv[i], "--mix") == 0)
            mix_path = v;
        else if (v && strcmp(argv[i], "--pid") == 0)
            pid = (pid_t)strtol(v, NULL, 10);
        else if (v && strcmp(argv[i], "--reps") == 0)
            reps = (int)strtol(v, NULL, 10);
        else if (v && strcmp(argv[i], "--warmup") == 0)
            warmup = (int)strtol(v, NULL, 10);
        else if (v && strcmp(argv[i], "--clients") == 0)
            clients_arg = v;
        else if (v && strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--name") == 0)
            name = v;
        else if (v && strcmp(argv[i], "--wait-healthy") == 0)
            wait = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--wait-settled") == 0)
            settle = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--since") == 0)
            since = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--export") == 0)
            export = v;
        else {
            usage();
            return 2;
        }
        i++;
    }
    n_clients = bench_parse_ints(clients_arg, clients, 16);
    if (c.base && (wait > 0 || settle > 0)) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
            return 1;
        if (wait > 0)
            rc = wait_healthy(c.base, name, since > 0 ? since : wall_now(), wait, pid);
        else
            rc = wait_settled(c.base, name, since > 0 ? since : wall_now(), settle, pid);
        curl_global_cleanup();
        return rc;
    }
    if (c.base && c.key && export) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
            return 1;
        rc = run_export(&c, export, name, pid);
        curl_global_cleanup();
        return rc;
    }
    if (!c.base || !c.key || !mix_path || reps < 1 || warmup < 0 || n_clients < 0) {
        usage();
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return 1;
    if (mix_load(&m, mix_path) < 0)
        goto out;
    c.m = &m;
    struct bench_engine e = {
        .name = name, .ctx = &c, .thread_init = h_init, .thread_done = h_done, .run = h_run};
    server_mem(pid, name, "loaded");
    rc = bench_latency(&e, &m, warmup, reps, stdout) < 0;
    server_mem(pid, name, "after-latency");
    server_cache_stats(c.base, name, "latency");
    for (int k = 0; k < n_clients && seconds > 0; k++)
        rc |= bench_throughput(&e, &m, clients[k], seconds, stdout) < 0;
    server_mem(pid, name, "after-throughput");
    /* VmRSS counts the mapped index files' pages the mix touched (page
     * cache the kernel may take back); RssAnon is what the server holds */
    if (pid > 0)
        printf("mem\t%s\tafter-throughput-anon\t%ld\n", name, bench_status_kb(pid, "RssAnon"));
    server_cache_stats(c.base, name, "end");
    if (pid > 0)
        printf("mem\t%s\tpeak\t%ld\n", name, bench_status_kb(pid, "VmHWM"));
out:
    mix_free(&m);
    curl_global_cleanup();
    return rc;
}
