/* Extraction quality and speed on real pages (make bench-pages,
 * docs/extraction.md): runs ingest/pages/pages.h over every page folder of a
 * directory (source.html, expected.html, expected-metadata.json, as in
 * tests/data/pages) and prints, per page and overall:
 *
 *   text   token recall, precision and F1 of the extracted text against the
 *          text of expected.html. Tokens are the search tokenizer's
 *          (text/text.h: case folded, accents off, CJK bigrams), counted as
 *          a multiset: precision = shared / extracted, recall = shared /
 *          expected. Both texts go through the same HTML-to-text step
 *          (ingest/pages/pages.h) where they are HTML.
 *   title, byline, excerpt: match when their token sequences are equal
 *          (case, accents, punctuation and white space aside; a byline's
 *          leading "by" aside), or when both are absent
 *   lang   equal ignoring case, or both absent
 *   published  the same instant (ISO 8601 or RFC 822 read by util/timefmt),
 *          or both absent
 *   readerable  the same yes/no
 *
 * BENCH_PAGES_VERBOSE=1 prints each page's metadata beside the reference's;
 * BENCH_PAGES_DUMP=DIR writes each page's text and the reference's there.
 * With a second argument, a JSONL file of another extractor's output
 * ({"page", "title", "html", "seconds"} per page: bench/pages_readability.py
 * writes readability-lxml's), the same text and title figures for it beside
 * ours. Speed: pages per second of CPU time of this one thread, parsing
 * included, the best of SPEED_ROUNDS rounds over every page (other work on
 * the machine only ever slows a round down). Prints figures, asserts
 * nothing. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "ingest/pages/pages.h"
#include "text/text.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/timefmt.h"

#define PAGE_URL "http://fakehost/test/page.html"
#define SPEED_ROUNDS 5

struct tokens {
    char **t;
    size_t n, cap;
};

static int token_add(const struct text_token *tok, void *ctx)
{
    struct tokens *ts = ctx;
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? ts->cap * 2 : 256;
        ts->t = realloc(ts->t, ts->cap * sizeof *ts->t);
        if (!ts->t)
            abort();
    }
    ts->t[ts->n] = strndup(tok->text, tok->len);
    if (!ts->t[ts->n])
        abort();
    ts->n++;
    return 0;
}

static void tokens_of(struct tokens *ts, const char *s)
{
    ts->n = 0;
    if (s)
        text_tokenize(s, strlen(s), token_add, ts);
}

static void tokens_free(struct tokens *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        free(ts->t[i]);
    free(ts->t);
    memset(ts, 0, sizeof *ts);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Multiset intersection size of two token lists (sorted here). */
static size_t shared(struct tokens *a, struct tokens *b)
{
    qsort(a->t, a->n, sizeof *a->t, cmp_str);
    qsort(b->t, b->n, sizeof *b->t, cmp_str);
    size_t i = 0, j = 0, k = 0;
    while (i < a->n && j < b->n) {
        int c = strcmp(a->t[i], b->t[j]);
        if (c == 0)
            k++, i++, j++;
        else if (c < 0)
            i++;
        else
            j++;
    }
    return k;
}

struct prf {
    double p, r, f;
};

static struct prf text_score(const char *got, const char *want)
{
    struct tokens g = {0}, w = {0};
    tokens_of(&g, got);
    tokens_of(&w, want);
    size_t k = shared(&g, &w);
    struct prf s;
    s.p = g.n ? (double)k / (double)g.n : (w.n ? 0 : 1);
    s.r = w.n ? (double)k / (double)w.n : 1;
    s.f = s.p + s.r > 0 ? 2 * s.p * s.r / (s.p + s.r) : 0;
    tokens_free(&g);
    tokens_free(&w);
    return s;
}

static bool blank(const char *s)
{
    if (!s)
        return true;
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\t' && *s != '\r')
            return false;
    return true;
}

/* Token sequences equal; with drop_by, a leading "by" is no token. */
static bool same_words(const char *a, const char *b, bool drop_by)
{
    if (blank(a) || blank(b))
        return blank(a) && blank(b);
    struct tokens x = {0}, y = {0};
    tokens_of(&x, a);
    tokens_of(&y, b);
    size_t i = drop_by && x.n && strcmp(x.t[0], "by") == 0;
    size_t j = drop_by && y.n && strcmp(y.t[0], "by") == 0;
    bool same = x.n - i == y.n - j;
    for (; same && i < x.n; i++, j++)
        same = strcmp(x.t[i], y.t[j]) == 0;
    tokens_free(&x);
    tokens_free(&y);
    return same;
}

static bool same_lang(const char *a, const char *b)
{
    if (blank(a) || blank(b))
        return blank(a) && blank(b);
    return strcasecmp(a, b) == 0;
}

static bool same_time(const char *a, const char *b)
{
    if (blank(a) || blank(b))
        return blank(a) && blank(b);
    int64_t x, y;
    if (timefmt_parse_any(a, strlen(a), &x) == 0 && timefmt_parse_any(b, strlen(b), &y) == 0)
        return x == y;
    return strcmp(a, b) == 0;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b;
    buf_init(&b, 0);
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, k);
    fclose(f);
    return buf_detach(&b, n);
}

static char *html_to_text(struct arena *a, const char *html)
{
    struct html_text_out o;
    if (!html || html_text_extract(a, html, strlen(html), 0, 0, &o) < 0)
        return NULL;
    return o.text;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct totals {
    double p, r, f;
    size_t n;
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_pages PAGES_DIR [OTHER.jsonl]\n");
        return 2;
    }
    const char *dir = argv[1];
    json_t *other = json_object(); /* page -> {title, html, seconds} */
    if (argc > 2) {
        FILE *f = fopen(argv[2], "r");
        char *line = NULL;
        size_t cap = 0;
        while (f && getline(&line, &cap, f) > 0) {
            json_t *v = json_loads(line, 0, NULL);
            if (v && jstr(v, "page"))
                json_object_set(other, jstr(v, "page"), v);
            json_decref(v);
        }
        free(line);
        if (f)
            fclose(f);
    }

    DIR *dh = opendir(dir);
    if (!dh) {
        perror(dir);
        return 1;
    }
    char **names = NULL;
    size_t n_names = 0;
    struct dirent *de;
    while ((de = readdir(dh))) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/source.html", dir, de->d_name);
        FILE *t = fopen(p, "rb");
        if (!t)
            continue;
        fclose(t);
        names = realloc(names, (n_names + 1) * sizeof *names);
        names[n_names++] = strdup(de->d_name);
    }
    closedir(dh);
    qsort(names, n_names, sizeof *names, cmp_name);

    char **sources = calloc(n_names, sizeof *sources);
    size_t *source_len = calloc(n_names, sizeof *source_len);
    struct totals ours = {0}, theirs = {0};
    size_t m_title = 0, m_byline = 0, m_excerpt = 0, m_lang = 0, m_time = 0, m_read = 0;
    size_t o_title = 0, not_article = 0, not_article_right = 0, article_wrong = 0;
    /* pages where the reference has a value, and of those the right ones */
    size_t has_byline = 0, has_byline_right = 0, has_excerpt = 0, has_excerpt_right = 0;
    size_t has_time = 0, has_time_right = 0, extra_time = 0;
    double cpu = 0, other_seconds = 0;
    size_t bytes = 0;
    printf("%-34s %5s %5s %5s | %5s %5s %5s | T B E L P R\n", "page", "rec", "prec", "F1", "rec",
           "prec", "F1");
    for (size_t i = 0; i < n_names; i++) {
        char p[4096];
        size_t src_n = 0, exp_n = 0, meta_n = 0;
        snprintf(p, sizeof p, "%s/%s/source.html", dir, names[i]);
        char *src = slurp(p, &src_n);
        snprintf(p, sizeof p, "%s/%s/expected.html", dir, names[i]);
        char *exp = slurp(p, &exp_n);
        snprintf(p, sizeof p, "%s/%s/expected-metadata.json", dir, names[i]);
        char *meta_s = slurp(p, &meta_n);
        json_t *meta = meta_s ? json_loads(meta_s, 0, NULL) : NULL;
        if (!src || !exp || !meta) {
            fprintf(stderr, "%s: missing files\n", names[i]);
            return 1;
        }
        bytes += src_n;
        struct arena a;
        arena_init(&a, 0);
        struct extracted_page pg;
        struct extract_options opt = {.url = PAGE_URL};
        double t0 = cpu_now();
        int rc = extract_page(&a, src, src_n, &opt, &pg);
        cpu += cpu_now() - t0;
        if (rc < 0) {
            fprintf(stderr, "%s: extract failed %d\n", names[i], rc);
            return 1;
        }
        const char *want = html_to_text(&a, exp);
        const char *dump = getenv("BENCH_PAGES_DUMP"); /* a directory: texts to compare */
        if (dump) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.got.txt", dump, names[i]);
            FILE *df = fopen(path, "w");
            if (df) {
                fputs(pg.text, df);
                fclose(df);
            }
            snprintf(path, sizeof path, "%s/%s.want.txt", dump, names[i]);
            df = fopen(path, "w");
            if (df) {
                fputs(want ? want : "", df);
                fclose(df);
            }
        }
        struct prf s = text_score(pg.text, want);
        ours.p += s.p, ours.r += s.r, ours.f += s.f, ours.n++;

        bool t = same_words(pg.title, jstr(meta, "title"), false);
        bool b = same_words(pg.byline, jstr(meta, "byline"), true);
        bool e = same_words(pg.excerpt, jstr(meta, "excerpt"), false);
        bool l = same_lang(pg.lang, jstr(meta, "lang"));
        bool pt = same_time(pg.published, jstr(meta, "publishedTime"));
        bool want_read = json_is_true(json_object_get(meta, "readerable"));
        bool r = pg.readerable == want_read;
        m_title += t, m_byline += b, m_excerpt += e, m_lang += l, m_time += pt, m_read += r;
        if (!blank(jstr(meta, "byline")))
            has_byline++, has_byline_right += b;
        if (!blank(jstr(meta, "excerpt")))
            has_excerpt++, has_excerpt_right += e;
        if (!blank(jstr(meta, "publishedTime")))
            has_time++, has_time_right += pt;
        else if (pg.published)
            extra_time++;
        if (!want_read) {
            not_article++;
            not_article_right += r;
        } else if (!r) {
            article_wrong++;
        }

        const json_t *o = json_object_get(other, names[i]);
        char theirs_col[64] = "    -     -     -";
        if (o) {
            struct prf os = text_score(html_to_text(&a, jstr(o, "html")), want);
            theirs.p += os.p, theirs.r += os.r, theirs.f += os.f, theirs.n++;
            o_title += same_words(jstr(o, "title"), jstr(meta, "title"), false);
            other_seconds += json_real_value(json_object_get(o, "seconds"));
            snprintf(theirs_col, sizeof theirs_col, "%5.3f %5.3f %5.3f", os.r, os.p, os.f);
        }
        printf("%-34.34s %5.3f %5.3f %5.3f | %s | %c %c %c %c %c %c\n", names[i], s.r, s.p, s.f,
               theirs_col, t ? '+' : '-', b ? '+' : '-', e ? '+' : '-', l ? '+' : '-',
               pt ? '+' : '-', r ? '+' : '-');
        if (getenv("BENCH_PAGES_VERBOSE")) {
            printf("    title   %s\n    want    %s\n    byline  %s\n    want    %s\n",
                   pg.title ? pg.title : "(null)", jstr(meta, "title") ? jstr(meta, "title") : "",
                   pg.byline ? pg.byline : "(null)",
                   jstr(meta, "byline") ? jstr(meta, "byline") : "");
            printf("    excerpt %s\n    want    %s\n    time    %s / %s\n",
                   pg.excerpt ? pg.excerpt : "(null)",
                   jstr(meta, "excerpt") ? jstr(meta, "excerpt") : "",
                   pg.published ? pg.published : "(null)",
                   jstr(meta, "publishedTime") ? jstr(meta, "publishedTime") : "");
        }
        arena_release(&a);
        json_decref(meta);
        sources[i] = src;
        source_len[i] = src_n;
        free(exp);
        free(meta_s);
    }
    for (int round = 1; round < SPEED_ROUNDS; round++) {
        double t = 0;
        for (size_t i = 0; i < n_names; i++) {
            struct arena a;
            arena_init(&a, 0);
            struct extracted_page pg;
            struct extract_options opt = {.url = PAGE_URL};
            double t0 = cpu_now();
            extract_page(&a, sources[i], source_len[i], &opt, &pg);
            t += cpu_now() - t0;
            arena_release(&a);
        }
        if (t < cpu)
            cpu = t;
    }
    for (size_t i = 0; i < n_names; i++)
        free(sources[i]);
    size_t n = ours.n ? ours.n : 1;
    printf("\n%-34s %5.3f %5.3f %5.3f", "mean (newsd)", ours.r / (double)n, ours.p / (double)n,
           ours.f / (double)n);
    if (theirs.n)
        printf(" | %5.3f %5.3f %5.3f (readability-lxml, %zu pages)", theirs.r / (double)theirs.n,
               theirs.p / (double)theirs.n, theirs.f / (double)theirs.n, theirs.n);
    printf("\n");
    printf("pages %zu\n", ours.n);
    printf("title right      %3zu (%.1f %%)", m_title, 100.0 * (double)m_title / (double)n);
    if (theirs.n)
        printf("   readability-lxml %zu (%.1f %%)", o_title,
               100.0 * (double)o_title / (double)theirs.n);
    printf("\nbyline right     %3zu (%.1f %%); of %zu pages with one in the reference: %zu\n",
           m_byline, 100.0 * (double)m_byline / (double)n, has_byline, has_byline_right);
    printf("excerpt right    %3zu (%.1f %%); of %zu pages with one in the reference: %zu\n",
           m_excerpt, 100.0 * (double)m_excerpt / (double)n, has_excerpt, has_excerpt_right);
    printf("lang right       %3zu (%.1f %%)\n", m_lang, 100.0 * (double)m_lang / (double)n);
    printf("published right  %3zu (%.1f %%); of %zu pages with one in the reference: %zu; "
           "found where the reference has none: %zu\n",
           m_time, 100.0 * (double)m_time / (double)n, has_time, has_time_right, extra_time);
    printf("readerable right %3zu (%.1f %%): %zu of %zu non-articles recognised, %zu articles "
           "taken for non-articles\n",
           m_read, 100.0 * (double)m_read / (double)n, not_article_right, not_article,
           article_wrong);
    printf("speed            %.0f pages/s, %.1f MB/s (CPU time of one thread, %.3f s for %zu "
           "pages, best of %d rounds)",
           (double)ours.n / cpu, (double)bytes / cpu / 1e6, cpu, ours.n, SPEED_ROUNDS);
    if (theirs.n && other_seconds > 0)
        printf("; readability-lxml %.0f pages/s", (double)theirs.n / other_seconds);
    printf("\n");
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    free(sources);
    free(source_len);
    json_decref(other);
    return 0;
}
