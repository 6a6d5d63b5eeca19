/* Shared by the unit tests that hold two ways of answering a search to the
 * same answers (test_index_engine: the engine against FTS5; test_index_match: the
 * single-article matcher against both): random requests made of a real
 * corpus' words, title phrases, sources, domains and dates. */
#ifndef NEWSD_TEST_REQUESTS_H
#define NEWSD_TEST_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/backend.h"
#include "index/index.h"
#include "index/prefix.h"
#include "query/query.h"
#include "store/store.h"
#include "text/text.h"
#include "util/arena.h"
#include "util/err.h"

#define MAX_WORDS 3000
#define MAX_TITLES 600
#define MAX_TIMES 4000

struct test_corpus {
    char *words[MAX_WORDS]; /* frequent words first (met first) */
    size_t n_words;
    char *titles[MAX_TITLES]; /* token lists "a b c" of titles, for phrases */
    size_t n_titles;
    char *sources[64], *domains[64];
    size_t n_sources, n_domains;
    int64_t t_min, t_max;
    int64_t times[MAX_TIMES]; /* publication seconds, for windows on a boundary */
    size_t n_times;
};

static void test_corpus_release(struct test_corpus *f)
{
    for (size_t i = 0; i < f->n_words; i++)
        free(f->words[i]);
    for (size_t i = 0; i < f->n_titles; i++)
        free(f->titles[i]);
    for (size_t i = 0; i < f->n_sources; i++)
        free(f->sources[i]);
    for (size_t i = 0; i < f->n_domains; i++)
        free(f->domains[i]);
    memset(f, 0, sizeof *f);
}

static int collect_token(const struct text_token *tok, void *ctx)
{
    char **line = ctx; /* "a b c" */
    size_t n = *line ? strlen(*line) : 0;
    char *s = realloc(*line, n + tok->len + 2);
    if (s == NULL)
        return 1;
    if (n)
        s[n++] = ' ';
    memcpy(s + n, tok->text, tok->len);
    s[n + tok->len] = '\0';
    *line = s;
    return 0;
}

static bool has(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i], s) == 0)
            return true;
    }
    return false;
}

/* Learn the words, titles, sources, domains and dates of arts[0..n). */
static void test_corpus_learn(struct test_corpus *f, const struct article *arts, size_t n)
{
    f->t_min = INT64_MAX;
    f->t_max = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const struct article *art = &arts[i];
        char *line = NULL;
        if (art->published_at < f->t_min)
            f->t_min = art->published_at;
        if (art->published_at > f->t_max)
            f->t_max = art->published_at;
        if (f->n_times < MAX_TIMES)
            f->times[f->n_times++] = art->published_at;
        if (art->title)
            text_tokenize(art->title, strlen(art->title), collect_token, &line);
        if (line && f->n_titles < MAX_TITLES)
            f->titles[f->n_titles++] = strdup(line);
        if (art->description)
            text_tokenize(art->description, strlen(art->description), collect_token, &line);
        for (char *w = line ? strtok(line, " ") : NULL; w; w = strtok(NULL, " ")) {
            if (f->n_words < MAX_WORDS && !has(f->words, f->n_words, w))
                f->words[f->n_words++] = strdup(w);
        }
        free(line);
        if (art->source_id && f->n_sources < 64 && !has(f->sources, f->n_sources, art->source_id))
            f->sources[f->n_sources++] = strdup(art->source_id);
        if (art->domain && f->n_domains < 64 && !has(f->domains, f->n_domains, art->domain))
            f->domains[f->n_domains++] = strdup(art->domain);
    }
}

/* --- random requests ------------------------------------------------------- */

static unsigned rnd(unsigned n)
{
    return (unsigned)(rand() % (int)n);
}

static const char *word(struct test_corpus *f)
{
    /* Frequent words sit early in the list (they are met first). */
    return f->words[rnd(2) ? rnd(f->n_words < 60 ? (unsigned)f->n_words : 60)
                           : rnd((unsigned)f->n_words)];
}

/* Two or three consecutive tokens of a title, quoted. */
static void phrase(struct test_corpus *f, char *out, size_t cap)
{
    char copy[1024], *toks[64];
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", f->titles[rnd((unsigned)f->n_titles)]);
    for (char *t = strtok(copy, " "); t && n < 64; t = strtok(NULL, " "))
        toks[n++] = t;
    if (n < 2) {
        snprintf(out, cap, "\"%s\"", n ? toks[0] : "x");
        return;
    }
    size_t len = 2 + rnd(2), at = rnd((unsigned)(n - 1));
    if (at + len > n)
        len = n - at;
    size_t w = (size_t)snprintf(out, cap, "\"");
    for (size_t i = 0; i < len; i++)
        w += (size_t)snprintf(out + w, cap - w, "%s%s", i ? " " : "", toks[at + i]);
    snprintf(out + w, cap - w, "\"");
}

/* req as backend b searches it: its prefixes (word*) expanded over b's
 * dictionary as index.c does first (index/prefix.h); NULL with *rc when
 * refused. */
static inline const struct index_request *expanded(struct index_backend *b, struct arena *a,
                                                   const struct index_request *req, int *rc,
                                                   struct err *err)
{
    const struct index_request *x = NULL;
    *rc = index_prefix_expand(b, a, req, &x, err);
    return *rc < 0 ? NULL : x;
}

/* b->search of req with its prefixes expanded, as index_search does. */
static inline int search_expanded(struct index_backend *b, struct arena *a,
                                  const struct index_request *req, struct index_result *r,
                                  struct err *err)
{
    int rc;
    const struct index_request *x = expanded(b, a, req, &rc, err);
    return x ? b->search(b, a, x, r, err) : rc;
}

/* A word of at least 6 letters cut to its first five and a star. */
static void prefix_of(struct test_corpus *f, char *out, size_t cap)
{
    for (int tries = 0; tries < 50; tries++) {
        const char *w = f->words[rnd((unsigned)f->n_words)];
        if (strlen(w) >= 6) {
            snprintf(out, cap, "%.5s*", w);
            return;
        }
    }
    snprintf(out, cap, "%s", word(f));
}

/* A field term (docs/query-language.md): a word or phrase in titles, a
 * source, a domain or a parent domain of the corpus; or a prefix. */
static void field_term(struct test_corpus *f, char *out, size_t cap)
{
    char p[256];
    const char *d = f->domains[rnd((unsigned)f->n_domains)];
    const char *dot = strchr(d, '.');
    switch (rnd(6)) {
    case 4:
        prefix_of(f, out, cap);
        break;
    case 5:
        prefix_of(f, p, sizeof p);
        snprintf(out, cap, "title:%s", p);
        break;
    case 0:
        snprintf(out, cap, "title:%s", word(f));
        break;
    case 1:
        phrase(f, p, sizeof p);
        snprintf(out, cap, "title:%s", p);
        break;
    case 2:
        snprintf(out, cap, "source:%s", f->sources[rnd((unsigned)f->n_sources)]);
        break;
    default:
        snprintf(out, cap, "domain:%s", rnd(3) == 0 && dot && strchr(dot + 1, '.') ? dot + 1 : d);
        break;
    }
}

static void operand(struct test_corpus *f, char *out, size_t cap, int depth)
{
    unsigned k = rnd(10);
    if (k == 9 && rnd(2))
        field_term(f, out, cap);
    else if (k < 5)
        snprintf(out, cap, "%s", word(f));
    else if (k < 7) {
        phrase(f, out, cap);
        if (rnd(3) == 0) { /* a proximity of the phrase's words, "a b"~N */
            size_t w = strlen(out);
            snprintf(out + w, cap - w, "~%u", rnd(4));
        }
    } else if (k < 8 && depth < 2) {
        char a[256], b[256];
        operand(f, a, sizeof a, depth + 1);
        operand(f, b, sizeof b, depth + 1);
        snprintf(out, cap, "(%s %s %s)", a, rnd(2) ? "OR" : "AND", b);
    } else
        snprintf(out, cap, "\"%s\"", word(f));
}

static void random_q(struct test_corpus *f, char *out, size_t cap)
{
    char a[256], b[256], c[256];
    operand(f, a, sizeof a, 0);
    operand(f, b, sizeof b, 0);
    operand(f, c, sizeof c, 0);
    switch (rnd(8)) {
    case 0:
        snprintf(out, cap, "%s", a);
        break;
    case 1:
        snprintf(out, cap, "%s %s", a, b);
        break;
    case 2:
        snprintf(out, cap, "%s OR %s", a, b);
        break;
    case 3:
        snprintf(out, cap, "%s OR %s OR %s", a, b, c);
        break;
    case 4:
        snprintf(out, cap, "%s -%s", a, word(f));
        break;
    case 5:
        snprintf(out, cap, "+%s %s NOT %s", a, b, word(f));
        break;
    case 6:
        snprintf(out, cap, "(%s OR %s) AND %s", a, b, c);
        break;
    default:
        snprintf(out, cap, "%s AND NOT (%s OR %s)", a, b, c);
        break;
    }
}

/* A window whose from and/or to is an article's own publication second or
 * one second either side: an off-by-one at a boundary (> for >=) changes
 * the answer only there, and random spans almost never land on one. */
static void boundary_window(struct test_corpus *f, struct index_request *req)
{
    int64_t t = f->times[rnd((unsigned)f->n_times)];
    int64_t u = f->times[rnd((unsigned)f->n_times)];
    int64_t d = (int64_t)rnd(3) - 1, e = (int64_t)rnd(3) - 1;
    switch (rnd(4)) {
    case 0:
        req->from = t + d; /* open to */
        break;
    case 1:
        req->to = t + d; /* open from */
        break;
    case 2:
        req->from = t + d; /* a few seconds around one article */
        req->to = t + e;
        break;
    default:
        req->from = (t < u ? t : u) + d; /* between two articles' seconds */
        req->to = (t < u ? u : t) + e;
        break;
    }
}

static const char *const langs[] = {"en", "de", "fr", "es", "it", "ru", "ar", "zh", "he", "xx"};

static bool random_request(struct test_corpus *f, struct arena *a, struct index_request *req,
                           char *desc, size_t cap)
{
    char q[1024] = "";
    struct err err;
    memset(req, 0, sizeof *req);
    req->from = INT64_MIN;
    req->to = INT64_MAX;
    if (rnd(10) < 8) {
        random_q(f, q, sizeof q);
        err_clear(&err);
        if (query_parse(a, q, strlen(q), (struct query_node **)&req->q, &err) < 0)
            return false;
        if (rnd(4) == 0)
            req->q_fields = 1 + rnd(7);
    }
    if (rnd(10) == 0) {
        char t[256];
        operand(f, t, sizeof t, 1);
        err_clear(&err);
        if (query_parse(a, t, strlen(t), (struct query_node **)&req->q_title, &err) < 0)
            return false;
    }
    if (rnd(8) == 0) {
        size_t n = 1 + rnd(3);
        const char **v = arena_calloc(a, n, sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = rnd(5) ? f->sources[rnd((unsigned)f->n_sources)] : "no-such-source";
        req->sources = v;
        req->n_sources = n;
    }
    if (rnd(8) == 0) {
        size_t n = 1 + rnd(3);
        const char **v = arena_calloc(a, n, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            const char *d = f->domains[rnd((unsigned)f->n_domains)];
            const char *dot = strchr(d, '.');
            /* a parent domain matches its subdomains */
            v[i] = rnd(3) == 0 && dot && strchr(dot + 1, '.') ? dot + 1 : d;
        }
        req->domains = v;
        req->n_domains = n;
    }
    if (rnd(8) == 0) {
        const char **v = arena_calloc(a, 2, sizeof *v);
        v[0] = f->domains[rnd((unsigned)f->n_domains)];
        v[1] = f->domains[rnd((unsigned)f->n_domains)];
        req->exclude_domains = v;
        req->n_exclude_domains = 2;
    }
    if (rnd(5) == 0)
        req->language = langs[rnd(sizeof langs / sizeof langs[0])];
    if (rnd(15) == 0)
        req->country = rnd(2) ? "us" : "gb";
    if (rnd(15) == 0)
        req->category = rnd(2) ? "business" : "science";
    req->headlines_only = rnd(15) == 0;
    if (rnd(4) == 0) {
        int64_t span = f->t_max - f->t_min + 1;
        req->from = f->t_min + (int64_t)(rand() % (span > 0 ? span : 1));
        req->to = req->from + (int64_t)(rand() % (span > 0 ? span : 1));
        if (rnd(4) == 0)
            req->to = req->from - 1; /* an empty window */
    } else if (f->n_times > 0 && rnd(3) == 0) {
        boundary_window(f, req);
    }
    req->sort = (enum index_sort)rnd(4);
    req->limit = (size_t[]){1, 10, 100}[rnd(3)];
    req->offset = req->limit * rnd(3);
    snprintf(desc, cap,
             "q=[%s] fields=%u sort=%d lang=%s n_src=%zu n_dom=%zu excl=%zu from=%lld to=%lld", q,
             req->q_fields, (int)req->sort, req->language ? req->language : "-", req->n_sources,
             req->n_domains, req->n_exclude_domains, (long long)req->from, (long long)req->to);
    return true;
}

#endif
