/* bench_http: the query mix against a running `newsd serve` over HTTP on
 * loopback, as NewsAPI clients send it: GET /v2/everything?<params> with
 * X-Api-Key, one libcurl easy handle (one keep-alive connection) per client
 * thread. Latency is the whole request as the client sees it (send, server
 * work, JSON rendering, receive); the server's resident memory is read from
 * /proc/PID/status before and after.
 *
 *   bench_http --url http://127.0.0.1:PORT --key KEY --mix FILE [--pid PID]
 *              [--reps R] [--warmup W] [--clients 1,2,4,16] [--seconds S]
 *
 * A request that does not answer 200 with a totalResults is an error (err
 * line), never a silent fast sample. Prints lat/tput/mem lines
 * (bench/common.h) on stdout. */
#include "common.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    buf_append(b, p, size * n);
    return buf_error(b) ? 0 : size * n;
}

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
    curl_easy_setopt(st->curl, CURLOPT_WRITEFUNCTION, on_body);
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

static void usage(void)
{
    fprintf(stderr, "usage: bench_http --url BASE --key KEY --mix FILE [--pid PID] [--reps R]\n"
                    "                  [--warmup W] [--clients 1,2,4,16] [--seconds S]\n");
}

static void server_mem(pid_t pid, const char *when)
{
    if (pid <= 0)
        return;
    printf("mem\tserver\t%s\t%ld\n", when, bench_status_kb(pid, "VmRSS"));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *clients_arg = "1,2,4,16", *mix_path = NULL;
    struct hctx c = {0};
    struct mix m = {0};
    int reps = 3, warmup = 0, clients[16], n_clients, rc = 1;
    double seconds = 10;
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
        else {
            usage();
            return 2;
        }
        i++;
    }
    n_clients = bench_parse_ints(clients_arg, clients, 16);
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
        .name = "http", .ctx = &c, .thread_init = h_init, .thread_done = h_done, .run = h_run};
    server_mem(pid, "loaded");
    rc = bench_latency(&e, &m, warmup, reps, stdout) < 0;
    server_mem(pid, "after-latency");
    for (int k = 0; k < n_clients && seconds > 0; k++)
        rc |= bench_throughput(&e, &m, clients[k], seconds, stdout) < 0;
    server_mem(pid, "after-throughput");
    if (pid > 0)
        printf("mem\tserver\tpeak\t%ld\n", bench_status_kb(pid, "VmHWM"));
out:
    mix_free(&m);
    curl_global_cleanup();
    return rc;
}
