/* bench/bench_percolate: saved searches against each new article (issue
 * 17's percolator, push/percolator.h), on one core.
 *
 *   bench_percolate --store DIR [--searches S] [--articles A]
 *                   [--brute-articles B] [--seconds T] [--seed N]
 *
 * Reads the first A articles of the store's log (a bench/gen store: `make
 * bench` gives it the one it loaded), files S saved searches made of them
 * and times, over the articles in log order as a follower gives them:
 *   prep        index_match_doc_new alone (tokenizing, stems, meta terms);
 *   percolate   prep + percolator_match: what a stream or an alert pays
 *               per committed article (reading the row is not counted);
 *   brute       prep + index_matcher_test of every search (the baseline),
 *               over the first B articles, whose answers must be the
 *               percolator's (else an err line and exit 1).
 * The searches mix what people save: one word (35 %), an AND of 2-3 words
 * (25 %), an OR of 2-3 words (15 %), a phrase of two adjacent title words
 * (10 %), a word with a source (15 %); 15 % of all get a language. Words
 * are drawn by document frequency among those of the articles' titles and
 * descriptions, leaving out the 100 most frequent (words nobody saves a
 * search for) and words seen once.
 *
 * Prints `stat percolate WHAT VALUE` lines (bench/common.h's format) for
 * bench/report.py: searches, keyless, articles, prep_per_s,
 * articles_per_s, brute_per_s, brute_articles, matches_per_article. */
#include "common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/match.h"
#include "push/percolator.h"
#include "query/query.h"
#include "store/journal.h"
#include "store/store.h"
#include "text/text.h"
#include "util/strtab.h"

#include "util/banned.h"

#define STOP_WORDS 100 /* the most frequent words, left out of searches */

/* A row copied out of the reader. */
struct row {
    struct store_row v;
    char *s[8];
};

struct corpus {
    struct row *rows;
    size_t n;
    struct strtab words; /* title and description tokens */
    uint32_t *df;        /* per word */
    size_t *drawable;    /* word numbers searches are made of */
    double *cum;         /* cumulative df over drawable */
    size_t n_drawable;
    struct strtab sources; /* source ids, for filters */
};

static unsigned long long rnd_state = 42;

static uint32_t rnd(uint32_t n)
{
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rnd_state >> 33) % n);
}

static char *copy_str(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int read_rows(struct corpus *c, const char *dir, size_t want)
{
    struct store *s = NULL;
    struct store_reader *r = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    struct err err;
    int rc;

    err_clear(&err);
    if ((rc = store_open(&s, dir, &err)) < 0 ||
        (rc = store_reader_open(&r, store_sqlite_path(s), &err)) < 0 ||
        (rc = store_rows_after(&rows, r, 0, &err)) < 0) {
        fprintf(stderr, "bench_percolate: %s: %s\n", dir, err.msg);
        store_reader_close(r);
        store_close(s);
        return -1;
    }
    c->rows = calloc(want, sizeof *c->rows);
    while (c->rows && c->n < want && (rc = store_rows_next(rows, &row, &err)) == 1) {
        struct row *x = &c->rows[c->n++];
        x->v = row;
        x->v.title = x->s[0] = copy_str(row.title);
        x->v.description = x->s[1] = copy_str(row.description);
        x->v.content = x->s[2] = copy_str(row.content);
        x->v.language = x->s[3] = copy_str(row.language);
        x->v.meta_terms = x->s[4] = copy_str(row.meta_terms);
        x->v.source_id = x->s[5] = copy_str(row.source_id);
        x->v.canonical_url = NULL;
        x->v.source_name = x->v.author = x->v.url = x->v.url_to_image = NULL;
    }
    store_rows_free(rows);
    store_reader_close(r);
    store_close(s);
    return c->n > 0 ? 0 : -1;
}

static int count_token(const struct text_token *tok, void *ctx)
{
    struct corpus *c = ctx;
    size_t k;
    int added;
    if (strtab_add(&c->words, tok->text, tok->len, &k, &added) < 0)
        return ERR_NOMEM;
    if (added) {
        uint32_t *df = realloc(c->df, c->words.cap * sizeof *df);
        if (df == NULL)
            return ERR_NOMEM;
        c->df = df;
        c->df[k] = 0;
    }
    c->df[k]++; /* occurrences: close enough to document frequency here */
    return 0;
}

static const struct corpus *sort_ctx;
static int by_df_desc(const void *x, const void *y)
{
    uint32_t a = sort_ctx->df[*(const size_t *)x], b = sort_ctx->df[*(const size_t *)y];
    return a > b ? -1 : a < b;
}

static int learn(struct corpus *c)
{
    strtab_init(&c->words);
    strtab_init(&c->sources);
    for (size_t i = 0; i < c->n; i++) {
        const struct store_row *r = &c->rows[i].v;
        size_t k;
        int added;
        if ((r->title && text_tokenize(r->title, strlen(r->title), count_token, c) != 0) ||
            (r->description &&
             text_tokenize(r->description, strlen(r->description), count_token, c) != 0))
            return -1;
        if (r->source_id &&
            strtab_add(&c->sources, r->source_id, strlen(r->source_id), &k, &added) < 0)
            return -1;
    }
    size_t *order = malloc(c->words.n * sizeof *order);
    c->drawable = malloc(c->words.n * sizeof *c->drawable);
    c->cum = malloc(c->words.n * sizeof *c->cum);
    if (order == NULL || c->drawable == NULL || c->cum == NULL)
        return -1;
    for (size_t i = 0; i < c->words.n; i++)
        order[i] = i;
    sort_ctx = c;
    qsort(order, c->words.n, sizeof *order, by_df_desc);
    double sum = 0;
    for (size_t i = STOP_WORDS; i < c->words.n; i++) {
        if (c->df[order[i]] < 2)
            break;
        sum += c->df[order[i]];
        c->drawable[c->n_drawable] = order[i];
        c->cum[c->n_drawable++] = sum;
    }
    free(order);
    return c->n_drawable > 0 ? 0 : -1;
}

/* A word drawn by frequency. */
static const char *word(const struct corpus *c)
{
    double x = (double)rnd(1u << 30) / (double)(1u << 30) * c->cum[c->n_drawable - 1];
    size_t lo = 0, hi = c->n_drawable - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->cum[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return strtab_str(&c->words, c->drawable[lo]);
}

struct toks {
    char t[64][64];
    size_t n;
};

static int collect(const struct text_token *tok, void *ctx)
{
    struct toks *t = ctx;
    if (t->n < 64 && tok->len < 64) {
        memcpy(t->t[t->n], tok->text, tok->len);
        t->t[t->n++][tok->len] = '\0';
    }
    return 0;
}

/* Two adjacent words of a random title, quoted. */
static void phrase(const struct corpus *c, char *out, size_t cap)
{
    for (int tries = 0; tries < 100; tries++) {
        const char *title = c->rows[rnd((uint32_t)c->n)].v.title;
        struct toks t = {.n = 0};
        if (title == NULL)
            continue;
        text_tokenize(title, strlen(title), collect, &t);
        if (t.n < 2)
            continue;
        size_t at = rnd((uint32_t)(t.n - 1));
        snprintf(out, cap, "\"%s %s\"", t.t[at], t.t[at + 1]);
        return;
    }
    snprintf(out, cap, "%s", word(c));
}

static const char *const langs[] = {"en", "de", "fr", "es", "ru", "zh", "it", "pt"};

/* One saved search as its request; the query text in q. */
static int make_request(const struct corpus *c, struct arena *a, struct index_request *req, char *q,
                        size_t cap)
{
    struct err err;
    unsigned k = rnd(100);
    memset(req, 0, sizeof *req);
    req->from = INT64_MIN;
    req->to = INT64_MAX;
    if (k < 35) {
        snprintf(q, cap, "%s", word(c));
    } else if (k < 60) {
        if (rnd(2))
            snprintf(q, cap, "%s %s", word(c), word(c));
        else
            snprintf(q, cap, "%s AND %s AND %s", word(c), word(c), word(c));
    } else if (k < 75) {
        if (rnd(2))
            snprintf(q, cap, "%s OR %s", word(c), word(c));
        else
            snprintf(q, cap, "%s OR %s OR %s", word(c), word(c), word(c));
    } else if (k < 85) {
        phrase(c, q, cap);
    } else {
        snprintf(q, cap, "%s", word(c));
        if (c->sources.n > 0) {
            const char **v = arena_calloc(a, 1, sizeof *v);
            if (v == NULL)
                return ERR_NOMEM;
            v[0] = strtab_str(&c->sources, rnd((uint32_t)c->sources.n));
            req->sources = v;
            req->n_sources = 1;
        }
    }
    if (rnd(100) < 15)
        req->language = langs[rnd(sizeof langs / sizeof langs[0])];
    err_clear(&err);
    return query_parse(a, q, strlen(q), (struct query_node **)&req->q, &err);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_percolate --store DIR [--searches S] [--articles A]\n"
                    "                       [--brute-articles B] [--seconds T] [--seed N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    size_t n_searches = 10000, n_articles = 20000, n_brute = 300;
    double seconds = 2;
    struct corpus c = {0};
    struct percolator *p = NULL;
    struct index_matcher **brute;
    struct err err;
    int status = 0;

    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--store") == 0)
            dir = v;
        else if (v && strcmp(argv[i], "--searches") == 0)
            n_searches = strtoul(v, NULL, 10);
        else if (v && strcmp(argv[i], "--articles") == 0)
            n_articles = strtoul(v, NULL, 10);
        else if (v && strcmp(argv[i], "--brute-articles") == 0)
            n_brute = strtoul(v, NULL, 10);
        else if (v && strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(v, NULL);
        else if (v && strcmp(argv[i], "--seed") == 0)
            rnd_state = strtoull(v, NULL, 10);
        else
            usage();
    }
    if (dir == NULL || n_searches == 0 || n_articles == 0)
        usage();
    if (read_rows(&c, dir, n_articles) < 0 || learn(&c) < 0) {
        fprintf(stderr, "bench_percolate: cannot read the articles of %s\n", dir);
        return 1;
    }
    if (n_brute > c.n)
        n_brute = c.n;

    /* The searches: one matcher filed, one for the brute force. */
    err_clear(&err);
    brute = calloc(n_searches, sizeof *brute);
    if (brute == NULL || percolator_new(&p, &err) < 0)
        return 1;
    size_t keyless = 0;
    for (size_t i = 0; i < n_searches; i++) {
        struct arena a;
        struct index_request req;
        struct index_matcher *m = NULL;
        char q[512];
        arena_init(&a, 0);
        if (make_request(&c, &a, &req, q, sizeof q) < 0 || index_matcher_new(&m, &req, &err) < 0 ||
            index_matcher_new(&brute[i], &req, &err) < 0 || percolator_add(p, i, m, &err) < 0) {
            printf("err\tpercolate\tsearch\t%s: %s\n", q, err.msg);
            return 1;
        }
        const char *const *keys;
        size_t nk;
        index_matcher_keys(brute[i], &keys, &nk);
        keyless += nk == 0;
        arena_release(&a);
    }

    /* prep alone */
    size_t done = 0;
    double t0 = bench_now(), t1;
    do {
        for (size_t i = 0; i < c.n; i++) {
            struct index_match_doc *d = NULL;
            if (index_match_doc_new(&d, &c.rows[i].v, &err) < 0)
                return 1;
            index_match_doc_free(d);
        }
        done += c.n;
    } while ((t1 = bench_now()) - t0 < seconds / 4);
    double prep_rate = (double)done / (t1 - t0);

    /* prep + percolate */
    size_t matches = 0;
    done = 0;
    t0 = bench_now();
    do {
        for (size_t i = 0; i < c.n; i++) {
            struct index_match_doc *d = NULL;
            uint64_t *ids = NULL;
            size_t n = 0;
            if (index_match_doc_new(&d, &c.rows[i].v, &err) < 0 ||
                percolator_match(p, d, &ids, &n, &err) < 0)
                return 1;
            matches += n;
            free(ids);
            index_match_doc_free(d);
        }
        done += c.n;
    } while ((t1 = bench_now()) - t0 < seconds);
    double rate = (double)done / (t1 - t0);

    /* prep + every search tested, and the answers compared */
    t0 = bench_now();
    for (size_t i = 0; i < n_brute; i++) {
        struct index_match_doc *d = NULL;
        size_t hits = 0;
        if (index_match_doc_new(&d, &c.rows[i].v, &err) < 0)
            return 1;
        for (size_t j = 0; j < n_searches; j++)
            hits += index_matcher_test(brute[j], d);
        index_match_doc_free(d);
        (void)hits;
    }
    t1 = bench_now();
    double brute_rate = n_brute ? (double)n_brute / (t1 - t0) : 0;
    for (size_t i = 0; i < n_brute; i++) {
        struct index_match_doc *d = NULL;
        uint64_t *ids = NULL;
        size_t n = 0, k = 0;
        bool same = true;
        if (index_match_doc_new(&d, &c.rows[i].v, &err) < 0 ||
            percolator_match(p, d, &ids, &n, &err) < 0)
            return 1;
        for (size_t j = 0; j < n_searches; j++) {
            if (index_matcher_test(brute[j], d))
                same = same && k < n && ids[k++] == j;
        }
        if (!same || k != n) {
            printf("err\tpercolate\tanswer\tarticle %lld: the percolator and the brute force "
                   "differ\n",
                   (long long)c.rows[i].v.id);
            status = 1;
        }
        free(ids);
        index_match_doc_free(d);
    }

    printf("stat\tpercolate\tsearches\t%zu\n", n_searches);
    printf("stat\tpercolate\tkeyless\t%zu\n", keyless);
    printf("stat\tpercolate\tarticles\t%zu\n", c.n);
    printf("stat\tpercolate\tprep_per_s\t%.0f\n", prep_rate);
    printf("stat\tpercolate\tarticles_per_s\t%.0f\n", rate);
    printf("stat\tpercolate\tbrute_per_s\t%.1f\n", brute_rate);
    printf("stat\tpercolate\tbrute_articles\t%zu\n", n_brute);
    printf("stat\tpercolate\tmatches_per_article\t%.2f\n", done ? (double)matches / done : 0.0);

    for (size_t i = 0; i < n_searches; i++)
        index_matcher_free(brute[i]);
    free(brute);
    percolator_free(p);
    for (size_t i = 0; i < c.n; i++) {
        for (size_t j = 0; j < 8; j++)
            free(c.rows[i].s[j]);
    }
    free(c.rows);
    free(c.df);
    free(c.drawable);
    free(c.cum);
    strtab_release(&c.words);
    strtab_release(&c.sources);
    return status;
}
