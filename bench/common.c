/* Shared benchmark code (bench/common.h): the mix, request decoding, the
 * latency and throughput loops, /proc readings. */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/params.h"
#include "query/query.h"
#include "util/buf.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define MIX_LINE_MAX 8192

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int mix_load(struct mix *m, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[MIX_LINE_MAX];
    size_t cap = 0;
    int rc = -1;

    m->q = NULL;
    m->n = 0;
    if (f == NULL) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *field[6], *p = line;
        int k;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0' || strncmp(line, "id\t", 3) == 0)
            continue;
        for (k = 0; k < 6 && p; k++) {
            field[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (k < 6) {
            fprintf(stderr, "%s: a line with fewer than 6 columns: %s\n", path, line);
            goto out;
        }
        if (m->n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct mix_query *nq = realloc(m->q, ncap * sizeof *nq);
            if (nq == NULL)
                goto out;
            m->q = nq;
            cap = ncap;
        }
        struct mix_query *q = &m->q[m->n];
        q->id = dup_str(field[0]);
        q->shape = dup_str(field[1]);
        q->sort = dup_str(field[2]);
        q->filter = dup_str(field[3]);
        q->page = (int)strtol(field[4], NULL, 10);
        q->params = dup_str(field[5]);
        m->n++;
        if (!q->id || !q->shape || !q->sort || !q->filter || !q->params)
            goto out;
    }
    rc = m->n > 0 ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "%s: no queries\n", path);
out:
    fclose(f);
    if (rc < 0)
        mix_free(m);
    return rc;
}

void mix_free(struct mix *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->q[i].id);
        free(m->q[i].shape);
        free(m->q[i].sort);
        free(m->q[i].filter);
        free(m->q[i].params);
    }
    free(m->q);
    m->q = NULL;
    m->n = 0;
}

static int parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || end == s || v == 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int get_list(struct arena *a, const struct api_params *p, const char *name,
                    const char *const **items, size_t *n)
{
    const char *joined = api_params_joined(a, p, name, ",");
    const char **v = NULL;
    *items = NULL;
    *n = 0;
    if (joined == NULL)
        return 0;
    if (api_list_split(a, joined, &v, n) < 0)
        return ERR_NOMEM;
    *items = v;
    return 0;
}

int bench_request_build(struct arena *a, const char *params, struct index_request *out,
                        struct err *err)
{
    struct api_params p;
    const struct api_param *v;
    size_t page = 1, size = 100;
    int rc;

    memset(out, 0, sizeof *out);
    out->q_fields = INDEX_FIELD_ALL;
    out->from = INT64_MIN;
    out->to = INT64_MAX;
    out->sort = INDEX_SORT_PUBLISHED_DESC;
    if ((rc = api_params_parse(a, params, strlen(params), &p)) < 0)
        return err_set(err, rc, "out of memory");
    for (size_t i = 0; i < p.n; i++) {
        struct query_node *tree = NULL;
        if (strcmp(p.items[i].name, "q") != 0)
            continue;
        if ((rc = query_parse(a, p.items[i].value, p.items[i].len, &tree, err)) < 0)
            return rc;
        out->q = query_and(a, (struct query_node *)out->q, tree);
    }
    if ((v = api_params_first(&p, "qintitle")) != NULL &&
        (rc = query_parse(a, v->value, v->len, (struct query_node **)&out->q_title, err)) < 0)
        return rc;
    if (get_list(a, &p, "sources", &out->sources, &out->n_sources) < 0 ||
        get_list(a, &p, "domains", &out->domains, &out->n_domains) < 0 ||
        get_list(a, &p, "excludedomains", &out->exclude_domains, &out->n_exclude_domains) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    /* Domains compare in lower case without www. (API.md §8). */
    const char *const *lists[2] = {out->domains, out->exclude_domains};
    size_t counts[2] = {out->n_domains, out->n_exclude_domains};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < counts[l]; i++) {
            char *d = (char *)lists[l][i];
            for (char *c = d; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                    *c = (char)(*c - 'A' + 'a');
            if (strncmp(d, "www.", 4) == 0)
                memmove(d, d + 4, strlen(d + 4) + 1);
        }
    }
    if ((v = api_params_first(&p, "language")) != NULL) {
        char *lang = arena_strdup(a, v->value);
        if (lang == NULL)
            return err_set(err, ERR_NOMEM, "out of memory");
        for (char *c = lang; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        if (strcmp(lang, "se") == 0)
            lang[1] = 'v';
        out->language = lang;
    }
    if ((v = api_params_first(&p, "from")) != NULL &&
        timefmt_parse_iso8601(v->value, v->len, &out->from, NULL) < 0)
        return err_set(err, ERR_INVALID, "bad from: %s", v->value);
    if ((v = api_params_first(&p, "to")) != NULL) {
        bool date_only = false;
        if (timefmt_parse_iso8601(v->value, v->len, &out->to, &date_only) < 0)
            return err_set(err, ERR_INVALID, "bad to: %s", v->value);
        if (date_only)
            out->to += 86399;
    }
    if ((v = api_params_first(&p, "sortby")) != NULL) {
        if (strcasecmp(v->value, "relevancy") == 0)
            out->sort = INDEX_SORT_RELEVANCY;
        else if (strcasecmp(v->value, "popularity") == 0)
            out->sort = INDEX_SORT_POPULARITY;
        else if (strcasecmp(v->value, "publishedat") == 0)
            out->sort = INDEX_SORT_PUBLISHED_DESC;
        else
            return err_set(err, ERR_INVALID, "bad sortBy: %s", v->value);
    }
    if ((v = api_params_first(&p, "page")) != NULL && parse_size(v->value, &page) < 0)
        return err_set(err, ERR_INVALID, "bad page: %s", v->value);
    if ((v = api_params_first(&p, "pagesize")) != NULL &&
        (parse_size(v->value, &size) < 0 || size > 100))
        return err_set(err, ERR_INVALID, "bad pageSize: %s", v->value);
    out->offset = (page - 1) * size;
    out->limit = size;
    return 0;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long bench_status_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    size_t flen = strlen(field);
    long kb = -1;
    FILE *f;

    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            kb = strtol(line + flen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

int bench_parse_ints(const char *s, int *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0 || v > 1024)
            return -1;
        out[n++] = (int)v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

static void print_lat(FILE *out, const char *engine, const struct mix_query *q, double us,
                      uint64_t total, int pass)
{
    fprintf(out, "lat\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%llu\t%d\n", engine, q->id, q->shape, q->sort,
            q->filter, q->page, us, (unsigned long long)total, pass);
}

int bench_latency(const struct bench_engine *e, const struct mix *m, int warmup, int reps,
                  FILE *out)
{
    void *st = e->thread_init(e->ctx);
    int rc = 0;
    if (st == NULL)
        return -1;
    for (int r = 0; r < warmup + reps; r++) {
        for (size_t i = 0; i < m->n; i++) {
            struct err err;
            uint64_t total = 0;
            err_clear(&err);
            double t0 = bench_now();
            int qrc = e->run(st, &m->q[i], i, &total, &err);
            double t1 = bench_now();
            if (qrc < 0) {
                fprintf(out, "err\t%s\t%s\t%s\n", e->name, m->q[i].id, err_msg(&err, qrc));
                rc = -1;
                continue;
            }
            if (r >= warmup)
                print_lat(out, e->name, &m->q[i], (t1 - t0) * 1e6, total, r - warmup);
        }
        fflush(out);
    }
    e->thread_done(st);
    return rc;
}

struct tput_worker {
    const struct bench_engine *e;
    const struct mix *m;
    size_t start;
    double deadline;
    const atomic_int *go;
    uint64_t done, errors;
    int failed;
    char errmsg[ERR_MSG_MAX];
};

static void *tput_thread(void *arg)
{
    struct tput_worker *w = arg;
    void *st = w->e->thread_init(w->e->ctx);
    size_t i = w->start;
    if (st == NULL) {
        w->failed = 1;
        return NULL;
    }
    while (!atomic_load(w->go))
        ; /* spin until every client is ready, so they start together */
    while (bench_now() < w->deadline) {
        struct err err;
        uint64_t total = 0;
        err_clear(&err);
        if (w->e->run(st, &w->m->q[i], i, &total, &err) < 0) {
            if (w->errors == 0)
                snprintf(w->errmsg, sizeof w->errmsg, "%s: %s", w->m->q[i].id,
                         err_msg(&err, err.code));
            w->errors++;
        } else {
            w->done++;
        }
        i = (i + 1) % w->m->n;
    }
    w->e->thread_done(st);
    return NULL;
}

int bench_throughput(const struct bench_engine *e, const struct mix *m, int clients, double seconds,
                     FILE *out)
{
    struct tput_worker *w = calloc((size_t)clients, sizeof *w);
    pthread_t *th = calloc((size_t)clients, sizeof *th);
    atomic_int go = 0;
    uint64_t done = 0, errors = 0;
    int started = 0, rc = 0;
    double t0, t1;

    if (!w || !th) {
        free(w);
        free(th);
        return -1;
    }
    /* The deadline is set before the threads start; they spin on go. */
    t0 = bench_now() + 0.2 + 0.01 * clients;
    for (int k = 0; k < clients; k++) {
        w[k] = (struct tput_worker){.e = e,
                                    .m = m,
                                    .start = (size_t)k * m->n / (size_t)clients,
                                    .deadline = t0 + seconds,
                                    .go = &go};
        if (pthread_create(&th[k], NULL, tput_thread, &w[k]) != 0) {
            rc = -1;
            break;
        }
        started++;
    }
    while (bench_now() < t0)
        ;
    atomic_store(&go, 1);
    for (int k = 0; k < started; k++) {
        pthread_join(th[k], NULL);
        done += w[k].done;
        errors += w[k].errors;
        if (w[k].failed)
            rc = -1;
        if (w[k].errors && errors == w[k].errors)
            fprintf(out, "err\t%s\ttput\t%s\n", e->name, w[k].errmsg);
    }
    t1 = bench_now();
    /* Requests still running at the deadline finish late: count the real
     * time, not the nominal one. */
    fprintf(out, "tput\t%s\t%d\t%llu\t%.3f\t%llu\n", e->name, clients, (unsigned long long)done,
            t1 - t0, (unsigned long long)errors);
    fflush(out);
    free(w);
    free(th);
    return rc;
}

void bench_url_domain(const char *url, char *out, size_t cap)
{
    const char *p = url ? strstr(url, "://") : NULL;
    size_t n = 0;
    out[0] = '\0';
    if (p == NULL)
        return;
    p += 3;
    if (strncmp(p, "www.", 4) == 0)
        p += 4;
    for (; *p && *p != '/' && *p != ':' && *p != '?' && n + 1 < cap; p++)
        out[n++] = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
    out[n] = '\0';
}

size_t bench_on_body(char *p, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    buf_append(b, p, size * n);
    return buf_error(b) ? 0 : size * n;
}

int bench_mix_opt(struct bench_mix_opts *o, const char *name, const char *value)
{
    if (value == NULL)
        return 0;
    if (strcmp(name, "--mix") == 0)
        o->mix = value;
    else if (strcmp(name, "--reps") == 0)
        o->reps = (int)strtol(value, NULL, 10);
    else if (strcmp(name, "--warmup") == 0)
        o->warmup = (int)strtol(value, NULL, 10);
    else if (strcmp(name, "--clients") == 0)
        o->clients = value;
    else if (strcmp(name, "--seconds") == 0)
        o->seconds = strtod(value, NULL);
    else
        return 0;
    return 1;
}

int bench_run_mix(const struct bench_engine *e, const struct mix *m, const struct bench_mix_opts *o,
                  FILE *out)
{
    int clients[16], n_clients = bench_parse_ints(o->clients, clients, 16), rc = 0;
    if (o->reps < 1 || o->warmup < 0 || n_clients < 0) {
        fprintf(stderr, "%s: --reps >= 1, --warmup >= 0, --clients N,N...\n", e->name);
        return -1;
    }
    rc |= bench_latency(e, m, o->warmup, o->reps, out);
    for (int k = 0; k < n_clients && o->seconds > 0; k++)
        rc |= bench_throughput(e, m, clients[k], o->seconds, out);
    return rc;
}

static void query_quote(struct buf *b, char *const *tokens, size_t n, char escape)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            buf_putc(b, ' ');
        for (const char *p = tokens[i]; *p; p++) {
            if (*p == '"' || *p == escape)
                buf_putc(b, escape);
            buf_putc(b, *p);
        }
    }
    buf_putc(b, '"');
}

void bench_query_text(struct buf *b, const struct query_node *n,
                      const struct bench_query_syntax *syn)
{
    switch (n->kind) {
    case QUERY_WORD:
    case QUERY_PHRASE:
        query_quote(b, n->tokens, n->n, syn->escape);
        return;
    case QUERY_OR:
        buf_putc(b, '(');
        for (size_t i = 0; i < n->n; i++) {
            if (i > 0)
                buf_puts(b, " OR ");
            bench_query_text(b, n->kids[i], syn);
        }
        buf_putc(b, ')');
        return;
    case QUERY_AND: {
        size_t pos = 0;
        buf_puts(b, syn->and_open);
        for (size_t i = 0; i < n->n; i++) {
            if (n->kids[i]->kind == QUERY_NOT)
                continue;
            if (pos++ > 0)
                buf_puts(b, syn->and_sep);
            bench_query_text(b, n->kids[i], syn);
        }
        buf_puts(b, syn->and_mid);
        for (size_t i = 0; i < n->n; i++) {
            if (n->kids[i]->kind != QUERY_NOT)
                continue;
            buf_puts(b, syn->not_sep);
            bench_query_text(b, n->kids[i]->kids[0], syn);
        }
        buf_putc(b, ')');
        return;
    }
    case QUERY_NOT: /* never outside AND in normal form */
    default:
        buf_puts(b, "\"\"");
        return;
    }
}
