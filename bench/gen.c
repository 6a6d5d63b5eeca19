/* bench/gen: a deterministic, streaming generator of NewsAPI-shaped JSONL
 * articles (one per line, the shape `newsd import` reads) for the benchmark.
 *
 *   gen [--seed S] [--data DIR] [--profile full|newsapi|page] [--stats] N
 *                                               N articles to stdout
 *   gen [--seed S] [--data DIR] --sources       the source catalogue to stdout
 *
 * The same (seed, N) always gives the same bytes, so a corpus is never kept:
 * it is generated again for every consumer. Memory does not grow with N
 * (word lists, 150,000 sources and a per-hour time table only).
 *
 * The corpus: 150,000 publishers with Zipf-skewed volume (the 129 catalogue
 * sources of bench/data/catalogue.tsv placed among the 400 busiest), each
 * with a language so that article volume follows LANG_SHARES; publish
 * times over two years (2023-07-01 .. 2025-06-30 UTC) with a daily rhythm,
 * quieter weekends, a slow growth and news-heavy days, emitted in time
 * order (as a crawler ingests); text drawn from each language's real word
 * list (bench/data/words-<lang>.txt, Zipf by rank, plus 64 topics per
 * language that make words co-occur) with recurring multi-word names
 * (bench/data/names-<lang>.txt) so phrase queries hit.
 *
 * Two profiles share all of that (sources, times, words, names: the query
 * mix matches the same way in both) and differ in the articles' fields:
 *   full     (the default) a title of about 10 words, a description of
 *            about 30, the whole content (1,300-2,700 characters): about
 *            3 KB of JSON, the heavier corpus of the earlier runs;
 *   newsapi  every field as NewsAPI serves it, lengths and nulls drawn to
 *            match the real articles in ../shared/data/real (31,967): a
 *            title of about 85 characters, a description of at most 260,
 *            content cut to 199 characters + "… [+N chars]": about 850
 *            bytes of JSON (the real ones: 836 on average), plus the
 *            metadata keys both profiles carry (language, country,
 *            category, headline: about 55 bytes). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define GEN_SOURCES 150000       /* publishers, catalogue included */
#define GEN_CATALOGUE_SPREAD 400 /* catalogue sources sit among the busiest this many */
#define GEN_SOURCES_WITH_ID 300  /* busiest long-tail sources that have an id */
#define GEN_TOPICS 64            /* per language */
#define GEN_TOPIC_WORDS 200      /* words of one topic */
#define GEN_DAYS 730             /* two years */
#define GEN_HOURS (GEN_DAYS * 24)
#define GEN_LINE_MAX (64 * 1024) /* one article line, bytes */
#define GEN_WORDS_MAX 20000      /* per language */
#define GEN_NAMES_MAX 2000

enum lang {
    L_AR,
    L_DE,
    L_EN,
    L_ES,
    L_FR,
    L_HE,
    L_IT,
    L_NL,
    L_NO,
    L_PT,
    L_RU,
    L_SV,
    L_UD,
    L_ZH,
    L_COUNT
};

static const char *const lang_code[L_COUNT] = {"ar", "de", "en", "es", "fr", "he", "it",
                                               "nl", "no", "pt", "ru", "sv", "ud", "zh"};

/* Share of articles per language, percent: English dominates news on the
 * web, then the big European languages, Chinese, Russian and Arabic. */
static const double lang_shares[L_COUNT] = {
    [L_AR] = 4.0, [L_DE] = 8.0, [L_EN] = 42.0, [L_ES] = 9.0, [L_FR] = 7.0,
    [L_HE] = 1.5, [L_IT] = 4.0, [L_NL] = 3.0,  [L_NO] = 1.5, [L_PT] = 5.0,
    [L_RU] = 6.0, [L_SV] = 2.0, [L_UD] = 2.0,  [L_ZH] = 5.0,
};

/* Host suffixes of long-tail publishers by language, with their country. */
struct tld {
    const char *suffix;
    const char *country;
};
static const struct tld tlds[L_COUNT][6] = {
    [L_AR] = {{"ae", "ae"}, {"com.sa", "sa"}, {"com.eg", "eg"}, {"ma", "ma"}, {"com", "ae"}},
    [L_DE] = {{"de", "de"}, {"de", "de"}, {"at", "at"}, {"ch", "ch"}},
    [L_EN] = {{"com", "us"},
              {"com", "us"},
              {"co.uk", "gb"},
              {"com.au", "au"},
              {"ca", "ca"},
              {"co.in", "in"}},
    [L_ES] = {{"es", "es"}, {"com.mx", "mx"}, {"com.ar", "ar"}, {"com.co", "co"}, {"cl", "ve"}},
    [L_FR] = {{"fr", "fr"}, {"fr", "fr"}, {"be", "be"}, {"ch", "ch"}, {"ca", "ca"}},
    [L_HE] = {{"co.il", "il"}},
    [L_IT] = {{"it", "it"}},
    [L_NL] = {{"nl", "nl"}, {"nl", "nl"}, {"be", "be"}},
    [L_NO] = {{"no", "no"}},
    [L_PT] = {{"com.br", "br"}, {"com.br", "br"}, {"pt", "pt"}},
    [L_RU] = {{"ru", "ru"}},
    [L_SV] = {{"se", "se"}},
    [L_UD] = {{"pk", "pk"}, {"com.pk", "pk"}},
    [L_ZH] = {{"cn", "cn"}, {"com.cn", "cn"}, {"com.tw", "tw"}, {"com.hk", "hk"}},
};

/* Words that make a publisher's name, after one of its language's words. */
static const char *const name_suffix[L_COUNT][6] = {
    [L_AR] = {"اليوم", "نيوز", "الخبر", "الجديد"},
    [L_DE] = {"Zeitung", "Nachrichten", "Rundschau", "Kurier", "Anzeiger", "Online"},
    [L_EN] = {"News", "Times", "Post", "Herald", "Daily", "Journal"},
    [L_ES] = {"Diario", "Noticias", "Crónica", "Heraldo", "Hoy"},
    [L_FR] = {"Journal", "Info", "Actu", "Matin", "Quotidien"},
    [L_HE] = {"חדשות", "היום", "אונליין"},
    [L_IT] = {"Notizie", "Giornale", "Oggi", "Gazzetta"},
    [L_NL] = {"Nieuws", "Dagblad", "Courant"},
    [L_NO] = {"Nytt", "Avis", "Tidende"},
    [L_PT] = {"Notícias", "Jornal", "Diário", "Hoje"},
    [L_RU] = {"Новости", "Вести", "Газета", "Онлайн"},
    [L_SV] = {"Nyheter", "Tidning", "Kuriren"},
    [L_UD] = {"نیوز", "اخبار", "ٹائمز"},
    [L_ZH] = {"新闻", "日报", "时报", "在线"},
};

/* Catalogue sources that are among the very busiest (they are what the
 * query mix filters by): big_sources[k] gets rank 2 + 5k. */
static const char *const big_sources[] = {
    "reuters",
    "bbc-news",
    "cnn",
    "associated-press",
    "google-news",
    "the-times-of-india",
    "bloomberg",
    "lenta",
    "rbc",
    "spiegel-online",
    "le-monde",
    "el-mundo",
    "rt",
    "xinhua-net",
    "the-washington-post",
};
#define N_BIG (sizeof big_sources / sizeof big_sources[0])

static const char *const categories[7] = {"business", "entertainment", "general",   "health",
                                          "science",  "sports",        "technology"};

/* The shape of an article's fields: what the two profiles differ in. Ranges
 * are inclusive; shares are probabilities. */
struct profile {
    const char *name;
    int title_words[2], title_words_cjk[2];
    double title_publisher; /* title ends with " - <publisher>" */
    double author_null;
    double desc_null, desc_empty;
    int desc_words[2], desc_words_cjk[2];
    uint32_t desc_max_chars; /* 0: no cap */
    double image_null;
    double content_null;
    int content_chars[2]; /* the whole content's length (full, page) */
    /* newsapi only: NewsAPI's truncated content. A share of the contents
     * is empty or short (under 200 characters, shown whole); the others
     * are their first 199 characters + "… [+N chars]", N log-normal. */
    bool content_truncated;
    double content_empty, content_short;
    double content_rest_median, content_rest_sigma;
};

static const struct profile profiles[] = {
    {
        .name = "full",
        .title_words = {6, 15},
        .title_words_cjk = {6, 14},
        .title_publisher = 0.6,
        .author_null = 0.25,
        .desc_null = 0.04,
        .desc_words = {18, 42},
        .desc_words_cjk = {15, 35},
        .image_null = 0.06,
        .content_null = 0.05,
        .content_chars = {1300, 2700},
    },
    {
        /* What the crawler stores: the page's whole extracted text, 9.5 KB
         * on average on real feeds (issue 30, sizing), so content of
         * 4,000-12,000 characters (with the other fields, about 9.5 KB). */
        .name = "page",
        .title_words = {6, 15},
        .title_words_cjk = {6, 14},
        .title_publisher = 0.3,
        .author_null = 0.2,
        .desc_null = 0.04,
        .desc_words = {18, 42},
        .desc_words_cjk = {15, 35},
        .image_null = 0.06,
        .content_null = 0.02,
        .content_chars = {4000, 12000},
    },
    {
        /* Measured on ../shared/data/real/articles.jsonl: title 45/82/148
         * characters (5th/50th/99th percentile), 89 % ending " - <publisher>";
         * author null 28 %; description null 4.5 %, empty 1.6 %, 149
         * characters at the median, cut at 260; urlToImage null 6 %;
         * content null 13 %, empty 0.6 %, 9 % of the rest shorter than 200
         * characters, the rest 199 + "… [+N chars]" with N 130/2093/13771
         * (5th/50th/99th). */
        .name = "newsapi",
        .title_words = {6, 15},
        .title_words_cjk = {10, 24},
        .title_publisher = 0.88,
        .author_null = 0.28,
        .desc_null = 0.045,
        .desc_empty = 0.016,
        .desc_words = {6, 42},
        .desc_words_cjk = {20, 70},
        .desc_max_chars = 260,
        .image_null = 0.06,
        .content_null = 0.13,
        .content_truncated = true,
        .content_empty = 0.007,
        .content_short = 0.09,
        .content_rest_median = 2093,
        .content_rest_sigma = 0.8,
    },
};

/* ---- random numbers: xoshiro256** seeded through splitmix64 ------------ */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xD1342543DE82EF95ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n), n > 0. */
static uint32_t rng_below(struct rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform integer in [lo, hi]. */
static int rng_range(struct rng *r, int lo, int hi)
{
    return lo + (int)rng_below(r, (uint32_t)(hi - lo + 1));
}

static bool rng_chance(struct rng *r, double p)
{
    return rng_unit(r) < p;
}

/* ---- Walker's alias tables: O(1) draws from a fixed distribution --------- */

struct alias {
    uint32_t n;
    double *prob;
    uint32_t *other;
};

static int alias_build(struct alias *a, const double *w, uint32_t n)
{
    double sum = 0, *scaled = NULL;
    uint32_t *small = NULL, *large = NULL, ns = 0, nl = 0;
    int rc = -1;

    a->n = n;
    a->prob = malloc(n * sizeof *a->prob);
    a->other = malloc(n * sizeof *a->other);
    scaled = malloc(n * sizeof *scaled);
    small = malloc(n * sizeof *small);
    large = malloc(n * sizeof *large);
    if (!a->prob || !a->other || !scaled || !small || !large || n == 0)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        sum += w[i];
    for (uint32_t i = 0; i < n; i++) {
        scaled[i] = w[i] * n / sum;
        if (scaled[i] < 1.0)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[--nl];
        a->prob[s] = scaled[s];
        a->other[s] = l;
        scaled[l] = scaled[l] + scaled[s] - 1.0;
        if (scaled[l] < 1.0)
            small[ns++] = l;
        else
            large[nl++] = l;
    }
    while (nl > 0) {
        uint32_t l = large[--nl];
        a->prob[l] = 1.0;
        a->other[l] = l;
    }
    while (ns > 0) { /* rounding leftovers */
        uint32_t s = small[--ns];
        a->prob[s] = 1.0;
        a->other[s] = s;
    }
    rc = 0;
out:
    free(scaled);
    free(small);
    free(large);
    return rc;
}

static uint32_t alias_draw(const struct alias *a, struct rng *r)
{
    uint32_t i = rng_below(r, a->n);
    return rng_unit(r) < a->prob[i] ? i : a->other[i];
}

static void alias_free(struct alias *a)
{
    free(a->prob);
    free(a->other);
}

/* Zipf–Mandelbrot weights 1/(rank+q)^s. */
static int alias_zipf(struct alias *a, uint32_t n, double s, double q)
{
    double *w = malloc((n ? n : 1) * sizeof *w);
    int rc;
    if (w == NULL)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        w[i] = 1.0 / pow(i + 1 + q, s);
    rc = alias_build(a, w, n);
    free(w);
    return rc;
}

/* ---- word lists ---------------------------------------------------------- */

struct word {
    char *text;
    uint32_t len;   /* bytes */
    uint32_t chars; /* code points */
};

struct lexicon {
    struct word *words;
    uint32_t n_words;
    struct word *names;
    uint32_t n_names;
    struct alias zipf;      /* over words by rank */
    struct alias name_zipf; /* over names by rank */
    uint32_t topics[GEN_TOPICS][GEN_TOPIC_WORDS];
    bool cjk;   /* no spaces between words */
    bool cased; /* sentences start with a capital */
};

struct gen {
    uint64_t seed;
    const char *data_dir;
    const struct profile *profile;
    struct lexicon lex[L_COUNT];
    struct alias topic_zipf;      /* which topic an article is about */
    struct alias topic_word_zipf; /* a word within a topic */
    /* sources, by rank (0 = busiest) */
    struct src {
        char *id; /* NULL: not in any catalogue */
        char *name;
        char *domain;
        char *country;
        const char *category;
        uint8_t lang;
        bool catalogue;
        double popularity;
    } * src;
    struct alias src_zipf;
    /* time */
    double hour_cum[GEN_HOURS]; /* cumulative weight through each hour */
    int64_t t0;
};

static uint32_t utf8_chars(const char *s, size_t n)
{
    uint32_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Read "text<TAB>count" lines (the count is ignored: rank order is what
 * counts) into *out. */
static int words_load(const char *path, uint32_t max, struct word **out, uint32_t *n_out)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    struct word *w = NULL;
    uint32_t n = 0;
    int rc = -1;

    if (f == NULL) {
        fprintf(stderr, "gen: %s: %s\n", path, strerror(errno));
        return -1;
    }
    w = calloc(max, sizeof *w);
    if (w == NULL)
        goto out;
    while (n < max && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        size_t len = tab ? (size_t)(tab - line) : strcspn(line, "\r\n");
        if (len == 0 || line[0] == '#')
            continue;
        w[n].text = malloc(len + 1);
        if (w[n].text == NULL)
            goto out;
        memcpy(w[n].text, line, len);
        w[n].text[len] = '\0';
        w[n].len = (uint32_t)len;
        w[n].chars = utf8_chars(line, len);
        n++;
    }
    *out = w;
    *n_out = n;
    w = NULL;
    rc = 0;
out:
    if (w) {
        for (uint32_t i = 0; i < n; i++)
            free(w[i].text);
        free(w);
    }
    fclose(f);
    return rc;
}

static int lexicon_load(struct gen *g, enum lang l)
{
    struct lexicon *lx = &g->lex[l];
    char path[4096];
    struct rng r;

    snprintf(path, sizeof path, "%s/words-%s.txt", g->data_dir, lang_code[l]);
    if (words_load(path, GEN_WORDS_MAX, &lx->words, &lx->n_words) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/names-%s.txt", g->data_dir, lang_code[l]);
    if (words_load(path, GEN_NAMES_MAX, &lx->names, &lx->n_names) < 0)
        return -1;
    if (lx->n_words < 500 || lx->n_names < 10) {
        fprintf(stderr, "gen: too few words or names for %s\n", lang_code[l]);
        return -1;
    }
    lx->cjk = l == L_ZH;
    lx->cased = !(l == L_AR || l == L_HE || l == L_UD || l == L_ZH);
    /* Natural text is close to Zipf's law with exponent 1 (q flattens the
     * head a little, as function words are less dominant than 1/r). */
    if (alias_zipf(&lx->zipf, lx->n_words, 1.0, 2.7) < 0)
        return -1;
    if (alias_zipf(&lx->name_zipf, lx->n_names, 0.9, 5.0) < 0)
        return -1;
    /* A topic: words of middle rank (content words) that come together. */
    rng_seed(&r, g->seed, 1000 + (uint64_t)l);
    uint32_t lo = 80, hi = lx->n_words < 8000 ? lx->n_words : 8000;
    for (int t = 0; t < GEN_TOPICS; t++)
        for (int k = 0; k < GEN_TOPIC_WORDS; k++)
            lx->topics[t][k] = lo + rng_below(&r, hi - lo);
    return 0;
}

/* ---- sources --------------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int lang_index(const char *code)
{
    if (strcmp(code, "se") == 0)
        code = "sv";
    for (int i = 0; i < L_COUNT; i++)
        if (strcmp(code, lang_code[i]) == 0)
            return i;
    return -1;
}

/* Lower-case ASCII letters of s, at most cap-1 of them. */
static void ascii_slug(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c >= 'a' && c <= 'z')
            out[n++] = c;
    }
    out[n] = '\0';
}

static void base36(char *out, size_t cap, uint64_t v)
{
    char tmp[16];
    size_t n = 0, k = 0;
    do {
        tmp[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
        v /= 36;
    } while (v && n < sizeof tmp);
    while (n > 0 && k + 1 < cap)
        out[k++] = tmp[--n];
    out[k] = '\0';
}

/* The catalogue goes to random ranks among the busiest; every other rank is
 * a generated publisher whose language is chosen so that the volume of each
 * language approaches its share (largest deficit first). */
static int sources_build(struct gen *g)
{
    char path[4096], line[2048];
    FILE *f = NULL;
    struct rng r;
    double *w = NULL, have[L_COUNT] = {0}, total = 0, share_sum = 0;
    int *slot = NULL, rc = -1;
    uint32_t n_cat = 0;

    g->src = calloc(GEN_SOURCES, sizeof *g->src);
    w = malloc(GEN_SOURCES * sizeof *w);
    slot = malloc(GEN_CATALOGUE_SPREAD * sizeof *slot);
    if (!g->src || !w || !slot)
        goto out;
    for (int i = 0; i < L_COUNT; i++)
        share_sum += lang_shares[i];
    /* Publisher volume: Zipf with s = 1 and a flat head of ~10 giants. */
    for (uint32_t i = 0; i < GEN_SOURCES; i++)
        w[i] = 1.0 / (i + 10.0);

    rng_seed(&r, g->seed, 1);
    int n_slots = 0;
    for (int i = 0; i < GEN_CATALOGUE_SPREAD; i++) {
        bool reserved = false;
        for (size_t k = 0; k < N_BIG; k++)
            reserved |= i == 2 + 5 * (int)k;
        if (!reserved)
            slot[n_slots++] = i;
    }
    for (int i = n_slots - 1; i > 0; i--) {
        int j = (int)rng_below(&r, (uint32_t)i + 1), t = slot[i];
        slot[i] = slot[j];
        slot[j] = t;
    }
    int next_slot = 0;
    snprintf(path, sizeof path, "%s/catalogue.tsv", g->data_dir);
    if ((f = fopen(path, "r")) == NULL) {
        fprintf(stderr, "gen: %s: %s\n", path, strerror(errno));
        goto out;
    }
    while (fgets(line, sizeof line, f) && next_slot < n_slots) {
        char *field[6] = {0}, *p = line;
        line[strcspn(line, "\r\n")] = '\0';
        for (int k = 0; k < 6; k++) {
            field[k] = p;
            p = p ? strchr(p, '\t') : NULL;
            if (p)
                *p++ = '\0';
        }
        if (field[5] == NULL || lang_index(field[3]) < 0)
            continue;
        int rank = -1;
        for (size_t k = 0; k < N_BIG; k++)
            if (strcmp(field[0], big_sources[k]) == 0)
                rank = 2 + 5 * (int)k;
        if (rank < 0)
            rank = slot[next_slot++];
        if (g->src[rank].id != NULL)
            continue; /* a duplicate id in the file */
        n_cat++;
        struct src *s = &g->src[rank];
        s->id = xstrdup(field[0]);
        s->name = xstrdup(field[1]);
        s->domain = xstrdup(field[2]);
        s->country = xstrdup(field[4]);
        s->category = NULL;
        for (int k = 0; k < 7; k++)
            if (strcmp(field[5], categories[k]) == 0)
                s->category = categories[k];
        s->lang = (uint8_t)lang_index(field[3]);
        s->catalogue = true;
        if (!s->id || !s->name || !s->domain || !s->country)
            goto out;
    }
    fclose(f);
    f = NULL;

    uint32_t with_id = 0;
    for (uint32_t i = 0; i < GEN_SOURCES; i++) {
        struct src *s = &g->src[i];
        total += w[i];
        if (s->catalogue) {
            have[s->lang] += w[i];
            s->popularity = floor(1e6 * w[i] / w[0] * (0.5 + rng_unit(&r)));
            continue;
        }
        int best = 0;
        double best_def = -1e300;
        for (int l = 0; l < L_COUNT; l++) {
            double def = lang_shares[l] / share_sum * total - have[l];
            if (def > best_def) {
                best_def = def;
                best = l;
            }
        }
        have[best] += w[i];
        s->lang = (uint8_t)best;
        const struct lexicon *lx = &g->lex[best];
        const char *word = lx->words[50 + rng_below(&r, lx->n_words / 4)].text;
        const char *suffix;
        int n_suffix = 0;
        while (n_suffix < 6 && name_suffix[best][n_suffix])
            n_suffix++;
        suffix = name_suffix[best][rng_below(&r, (uint32_t)n_suffix)];
        char name[256], slug[32], tag[16], domain[128];
        if (lx->cjk)
            snprintf(name, sizeof name, "%s%s", word, suffix);
        else if (lx->cased && word[0] >= 'a' && word[0] <= 'z')
            snprintf(name, sizeof name, "%c%s %s", word[0] - 'a' + 'A', word + 1, suffix);
        else
            snprintf(name, sizeof name, "%s %s", word, suffix);
        int n_tld = 0;
        while (n_tld < 6 && tlds[best][n_tld].suffix)
            n_tld++;
        const struct tld *t = &tlds[best][rng_below(&r, (uint32_t)n_tld)];
        ascii_slug(slug, sizeof slug, name);
        if (strlen(slug) < 3)
            snprintf(slug, sizeof slug, "%s", best == L_ZH ? "xinwen" : "akhbar");
        base36(tag, sizeof tag, i);
        snprintf(domain, sizeof domain, "%s%s.%s", slug, tag, t->suffix);
        s->name = xstrdup(name);
        s->domain = xstrdup(domain);
        s->country = xstrdup(t->country);
        s->category = rng_chance(&r, 0.6) ? categories[2] : categories[rng_below(&r, 7)];
        s->popularity = floor(1e4 * w[i] / w[0] * (0.5 + rng_unit(&r)));
        /* The busiest long-tail publishers have ids of their own. */
        if (with_id < GEN_SOURCES_WITH_ID) {
            char id[160];
            snprintf(id, sizeof id, "%s-%s", slug, tag);
            s->id = xstrdup(id);
            with_id++;
            if (!s->id)
                goto out;
        }
        if (!s->name || !s->domain || !s->country)
            goto out;
    }
    rc = alias_build(&g->src_zipf, w, GEN_SOURCES);
out:
    if (f)
        fclose(f);
    free(w);
    free(slot);
    return rc;
}

/* ---- time -------------------------------------------------------------------- */

/* Articles per UTC hour relative to the mean (Europe's day and the American
 * morning are busiest, 01:00-04:00 UTC is quiet). */
static const double hour_weight[24] = {0.45, 0.35, 0.30, 0.30, 0.35, 0.50, 0.70, 0.90,
                                       1.10, 1.25, 1.30, 1.30, 1.30, 1.35, 1.35, 1.30,
                                       1.25, 1.15, 1.05, 0.95, 0.85, 0.75, 0.65, 0.55};

static void time_build(struct gen *g)
{
    struct rng r;
    double cum = 0;

    g->t0 = timefmt_days_from_civil(2023, 7, 1) * 86400;
    rng_seed(&r, g->seed, 2);
    for (int d = 0; d < GEN_DAYS; d++) {
        int64_t day = g->t0 / 86400 + d;
        int weekday = (int)((day + 4) % 7); /* 0 = Sunday (1970-01-01 was a Thursday) */
        double wd = weekday == 0 ? 0.60 : weekday == 6 ? 0.65 : 1.0;
        double trend = 0.8 + 0.4 * d / GEN_DAYS;
        /* Some days carry big news: a log-normal-ish day factor. */
        double news = exp(0.18 * (rng_unit(&r) + rng_unit(&r) + rng_unit(&r) - 1.5) * 2.0);
        for (int h = 0; h < 24; h++) {
            cum += wd * trend * news * hour_weight[h];
            g->hour_cum[d * 24 + h] = cum;
        }
    }
}

/* ---- text ---------------------------------------------------------------------- */

/* Append s as the inside of a JSON string. */
static void json_escape(struct buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf_putc(b, '\\');
            buf_putc(b, (char)c);
        } else if (c < 0x20) {
            buf_printf(b, "\\u%04x", c);
        } else {
            buf_putc(b, (char)c);
        }
    }
}

static void json_str(struct buf *b, const char *s)
{
    if (s == NULL) {
        buf_puts(b, "null");
        return;
    }
    buf_putc(b, '"');
    json_escape(b, s, strlen(s));
    buf_putc(b, '"');
}

/* Append a word with its first letter upper-cased when it is a lower-case
 * Latin-1 or Cyrillic letter (enough for the sentence starts of our
 * languages). */
static void put_capital(struct buf *b, const struct word *w)
{
    const unsigned char *s = (const unsigned char *)w->text;
    if (s[0] >= 'a' && s[0] <= 'z') {
        buf_putc(b, (char)(s[0] - 'a' + 'A'));
        buf_append(b, s + 1, w->len - 1);
    } else if (w->len >= 2 && s[0] == 0xC3 && s[1] >= 0xA0 && s[1] <= 0xBE && s[1] != 0xB7) {
        buf_putc(b, (char)0xC3);
        buf_putc(b, (char)(s[1] - 0x20)); /* à..þ → À..Þ */
        buf_append(b, s + 2, w->len - 2);
    } else if (w->len >= 2 && s[0] == 0xD0 && s[1] >= 0xB0 && s[1] <= 0xBF) {
        buf_putc(b, (char)0xD0);
        buf_putc(b, (char)(s[1] - 0x20)); /* а..п → А..П */
        buf_append(b, s + 2, w->len - 2);
    } else if (w->len >= 2 && s[0] == 0xD1 && s[1] >= 0x80 && s[1] <= 0x8F) {
        buf_putc(b, (char)0xD0);
        buf_putc(b, (char)(s[1] + 0x20)); /* р..я → Р..Я */
        buf_append(b, s + 2, w->len - 2);
    } else {
        buf_append(b, w->text, w->len);
    }
}

/* Text state of one article. */
struct art {
    struct rng r;
    const struct lexicon *lx;
    int topic;
    const struct alias *topic_words; /* rank within a topic */
    const struct word *name, *name2; /* the story's main and second name */
};

/* A word of the article's topic (with probability p_topic) or of the whole
 * language. Headlines drop most function words: with `headline`, a word of
 * the 30 most frequent is usually drawn again. */
static const struct word *draw_word(struct art *a, double p_topic, bool headline)
{
    const struct lexicon *lx = a->lx;
    uint32_t k;
    if (rng_chance(&a->r, p_topic))
        return &lx->words[lx->topics[a->topic][alias_draw(a->topic_words, &a->r)]];
    k = alias_draw(&lx->zipf, &a->r);
    if (headline && k < 30 && rng_chance(&a->r, 0.75))
        k = alias_draw(&lx->zipf, &a->r);
    return &lx->words[k];
}

/* Numbers as news writes them: years, small counts, amounts, percentages. */
static void put_number(struct buf *b, struct rng *r)
{
    switch (rng_below(r, 5)) {
    case 0:
        buf_printf(b, "%d", rng_range(r, 2015, 2025));
        break;
    case 1:
        buf_printf(b, "%d", rng_range(r, 2, 12));
        break;
    case 2:
        buf_printf(b, "%d", rng_range(r, 13, 999));
        break;
    case 3:
        buf_printf(b, "%d.%d", rng_range(r, 1, 99), rng_range(r, 1, 9));
        break;
    default:
        buf_printf(b, "%d%%", rng_range(r, 1, 99));
        break;
    }
}

/* A run of words: with a space between them (none for Chinese), the story's
 * names at chosen places, the first word capitalised. Returns code points
 * written (approximately: numbers count as 3). */
static size_t put_words(struct buf *b, struct art *a, int n_words, double p_topic, int name_at,
                        int name2_at, bool capital)
{
    const struct lexicon *lx = a->lx;
    size_t chars = 0;
    for (int i = 0; i < n_words; i++) {
        const struct word *w;
        if (i > 0 && !lx->cjk) {
            buf_putc(b, ' ');
            chars++;
        }
        if (i == name_at || i == name2_at) {
            w = i == name_at ? a->name : a->name2;
            buf_append(b, w->text, w->len);
            chars += w->chars;
            continue;
        }
        if (!lx->cjk && i > 0 && rng_chance(&a->r, 0.03)) {
            put_number(b, &a->r);
            chars += 3;
            continue;
        }
        w = draw_word(a, p_topic, p_topic >= 0.35);
        if (i == 0 && capital && lx->cased)
            put_capital(b, w);
        else
            buf_append(b, w->text, w->len);
        chars += w->chars;
    }
    return chars;
}

static size_t put_stop(struct buf *b, const struct art *a)
{
    if (a->lx->cjk) {
        buf_puts(b, "。");
        return 1;
    }
    buf_putc(b, '.');
    return 1;
}

/* Sentences until about `target` code points. */
static void put_text(struct buf *b, struct art *a, size_t target, int name_times, int name2_times)
{
    size_t chars = 0;
    int sentence = 0;
    while (chars < target) {
        int n = rng_range(&a->r, 8, 24), name_at = -1, name2_at = -1;
        if (a->lx->cjk)
            n = rng_range(&a->r, 6, 16);
        if (name_times > 0 && rng_chance(&a->r, 0.5)) {
            name_at = (int)rng_below(&a->r, (uint32_t)n);
            name_times--;
        } else if (name2_times > 0 && rng_chance(&a->r, 0.3)) {
            name2_at = (int)rng_below(&a->r, (uint32_t)n);
            name2_times--;
        }
        if (sentence > 0) {
            /* Paragraphs as in real content: "\r\n" every few sentences. */
            if (sentence % 4 == 0) {
                buf_puts(b, "\\r\\n");
            } else if (!a->lx->cjk) {
                buf_putc(b, ' ');
            }
            chars++;
        }
        chars += put_words(b, a, n, 0.2, name_at, name2_at, true);
        chars += put_stop(b, a);
        sentence++;
    }
}

/* Bytes of JSON string text s[0..n) that hold at most max_chars characters,
 * an escape (\r) counting as the one character it stands for; never cuts
 * a UTF-8 sequence or an escape. */
static size_t json_prefix(const char *s, size_t n, uint32_t max_chars)
{
    size_t i = 0;
    for (uint32_t c = 0; i < n && c < max_chars; c++) {
        size_t len = 1;
        if (s[i] == '\\')
            len = 2;
        else
            while (i + len < n && ((unsigned char)s[i + len] & 0xC0) == 0x80)
                len++;
        i += len;
    }
    return i < n ? i : n;
}

/* A standard normal deviate (Box-Muller). */
static double rng_gauss(struct rng *r)
{
    double u = 1.0 - rng_unit(r), v = rng_unit(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* A description of the profile's length, cut at its character cap. */
static void put_description(struct buf *b, struct art *a, const struct profile *p)
{
    const int *range = a->lx->cjk ? p->desc_words_cjk : p->desc_words;
    int dw = rng_range(&a->r, range[0], range[1]);
    /* The second name is drawn first: the order the corpora of the earlier
     * runs were made in (the same seed gives the same full corpus). */
    int name2_at = rng_chance(&a->r, 0.2) ? 6 + (int)rng_below(&a->r, 6) : -1;
    int name_at = rng_chance(&a->r, 0.6) ? (int)rng_below(&a->r, 6) : -1;
    if (p->desc_max_chars == 0) {
        put_words(b, a, dw, 0.25, name_at, name2_at, true);
        put_stop(b, a);
        return;
    }
    struct buf d = BUF_INIT;
    buf_init(&d, GEN_LINE_MAX);
    put_words(&d, a, dw, 0.25, name_at, name2_at, true);
    put_stop(&d, a);
    size_t keep = d.data ? json_prefix(d.data, d.len, p->desc_max_chars) : 0;
    buf_append(b, d.data ? d.data : "", keep);
    buf_release(&d);
}

/* NewsAPI's content: its first 199 characters and "… [+N chars]" for the
 * N not shown, or a short text shown whole, or "". */
static void put_newsapi_content(struct buf *b, struct art *a, const struct profile *p)
{
    if (rng_chance(&a->r, p->content_empty))
        return;
    bool whole = rng_chance(&a->r, p->content_short);
    uint32_t shown = whole ? (uint32_t)rng_range(&a->r, 30, 199) : 199;
    struct buf text = BUF_INIT;
    buf_init(&text, GEN_LINE_MAX);
    /* Enough sentences to cut from (put_text counts numbers roughly). */
    put_text(&text, a, shown + 24, 1, rng_range(&a->r, 0, 1));
    size_t keep = text.data ? json_prefix(text.data, text.len, shown) : 0;
    buf_append(b, text.data ? text.data : "", keep);
    buf_release(&text);
    if (!whole) {
        double rest = p->content_rest_median * exp(p->content_rest_sigma * rng_gauss(&a->r));
        buf_printf(b, "… [+%.0f chars]", rest < 1 ? 1 : rest);
    }
}

/* ---- one article ------------------------------------------------------------------ */

static void article_write(struct gen *g, struct buf *b, uint64_t i, uint64_t n, uint32_t *hour)
{
    const struct profile *p = g->profile;
    struct art a;
    char ts[TIMEFMT_ISO_LEN], date[11], tag[16];
    struct buf title = BUF_INIT;

    rng_seed(&a.r, g->seed, 1000000 + i);
    /* Time: the i-th of n quantiles of the two years' weight, so the stream
     * is in time order and follows the daily and weekly rhythm. */
    double target = (i + rng_unit(&a.r)) / (double)n * g->hour_cum[GEN_HOURS - 1];
    while (*hour + 1 < GEN_HOURS && g->hour_cum[*hour] < target)
        (*hour)++;
    double before = *hour ? g->hour_cum[*hour - 1] : 0, span = g->hour_cum[*hour] - before;
    double frac = span > 0 ? (target - before) / span : 0;
    if (frac < 0)
        frac = 0;
    if (frac >= 1)
        frac = 0.9999;
    int64_t t = g->t0 + (int64_t)*hour * 3600 + (int64_t)(frac * 3600);

    const struct src *s = &g->src[alias_draw(&g->src_zipf, &a.r)];
    a.lx = &g->lex[s->lang];
    a.topic = (int)alias_draw(&g->topic_zipf, &a.r);
    a.topic_words = &g->topic_word_zipf;
    a.name = &a.lx->names[alias_draw(&a.lx->name_zipf, &a.r)];
    a.name2 = &a.lx->names[alias_draw(&a.lx->name_zipf, &a.r)];

    /* Title first (the url's slug is made of it). */
    const int *twr = a.lx->cjk ? p->title_words_cjk : p->title_words;
    int tw = rng_range(&a.r, twr[0], twr[1]);
    int name_at = rng_chance(&a.r, 0.45) ? (int)rng_below(&a.r, (uint32_t)tw) : -1;
    buf_init(&title, GEN_LINE_MAX);
    put_words(&title, &a, tw, 0.35, name_at, -1, true);
    if (rng_chance(&a.r, p->title_publisher)) {
        buf_puts(&title, " - ");
        buf_puts(&title, s->name);
    }

    buf_puts(b, "{\"source\":{\"id\":");
    json_str(b, s->id);
    buf_puts(b, ",\"name\":");
    json_str(b, s->name);
    buf_puts(b, "},\"author\":");
    if (rng_chance(&a.r, p->author_null)) {
        buf_puts(b, "null");
    } else if (rng_chance(&a.r, 0.2)) {
        json_str(b, s->name);
    } else {
        /* A person's name: one of the language's names stands in. */
        const struct word *au = &a.lx->names[alias_draw(&a.lx->name_zipf, &a.r)];
        json_str(b, au->text);
    }
    buf_puts(b, ",\"title\":\"");
    json_escape(b, title.data ? title.data : "", title.len);
    buf_puts(b, "\",\"description\":");
    if (rng_chance(&a.r, p->desc_null)) {
        buf_puts(b, "null");
    } else if (p->desc_empty > 0 && rng_chance(&a.r, p->desc_empty)) {
        buf_puts(b, "\"\"");
    } else {
        buf_putc(b, '"');
        put_description(b, &a, p);
        buf_putc(b, '"');
    }

    timefmt_date(t, date);
    base36(tag, sizeof tag, i);
    buf_puts(b, ",\"url\":\"https://");
    json_escape(b, s->domain, strlen(s->domain));
    buf_printf(b, "/%.4s/%.2s/%.2s/", date, date + 5, date + 8);
    /* Slug of the title's ASCII letters, as CMSs make them. */
    char slug[64];
    size_t k = 0;
    for (size_t j = 0; title.data && j < title.len && k + 1 < sizeof slug; j++) {
        char c = title.data[j];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            slug[k++] = c;
        else if (c == ' ' && k > 0 && slug[k - 1] != '-')
            slug[k++] = '-';
    }
    slug[k] = '\0';
    buf_printf(b, "%s%sa%s\"", slug, k ? "-" : "", tag);
    buf_puts(b, ",\"urlToImage\":");
    if (rng_chance(&a.r, p->image_null))
        buf_puts(b, "null");
    else if (p->content_truncated) /* newsapi: CDN paths, about 100 characters */
        buf_printf(b, "\"https://media.%s/images/%.4s/%.2s/%s%sa%s.jpg\"", s->domain, date,
                   date + 5, slug, k ? "-" : "", tag);
    else
        buf_printf(b, "\"https://img.%s/%s/%s.jpg\"", s->domain, date, tag);
    timefmt_iso8601(t, ts);
    buf_printf(b, ",\"publishedAt\":\"%s\",\"content\":", ts);
    if (rng_chance(&a.r, p->content_null)) {
        buf_puts(b, "null");
    } else {
        buf_putc(b, '"');
        if (p->content_truncated)
            put_newsapi_content(b, &a, p);
        else
            put_text(b, &a, (size_t)rng_range(&a.r, p->content_chars[0], p->content_chars[1]),
                     rng_range(&a.r, 1, 3), rng_range(&a.r, 0, 2));
        buf_putc(b, '"');
    }
    buf_printf(b, ",\"language\":\"%s\"", lang_code[s->lang]);
    if (s->country[0])
        buf_printf(b, ",\"country\":\"%s\"", s->country);
    if (s->category)
        buf_printf(b, ",\"category\":\"%s\"", s->category);
    if (s->catalogue && rng_chance(&a.r, 0.2))
        buf_puts(b, ",\"headline\":true");
    buf_puts(b, "}\n");
    buf_release(&title);
}

/* ---- main ---------------------------------------------------------------------------- */

static int gen_init(struct gen *g)
{
    double w[GEN_TOPICS];
    for (int l = 0; l < L_COUNT; l++)
        if (lexicon_load(g, (enum lang)l) < 0)
            return -1;
    for (int t = 0; t < GEN_TOPICS; t++)
        w[t] = 1.0 / (t + 3.0);
    if (alias_build(&g->topic_zipf, w, GEN_TOPICS) < 0)
        return -1;
    if (alias_zipf(&g->topic_word_zipf, GEN_TOPIC_WORDS, 1.0, 1.0) < 0)
        return -1;
    if (sources_build(g) < 0)
        return -1;
    time_build(g);
    return 0;
}

static void gen_free(struct gen *g)
{
    for (int l = 0; l < L_COUNT; l++) {
        struct lexicon *lx = &g->lex[l];
        for (uint32_t i = 0; i < lx->n_words; i++)
            free(lx->words[i].text);
        for (uint32_t i = 0; i < lx->n_names; i++)
            free(lx->names[i].text);
        free(lx->words);
        free(lx->names);
        alias_free(&lx->zipf);
        alias_free(&lx->name_zipf);
    }
    if (g->src) {
        for (uint32_t i = 0; i < GEN_SOURCES; i++) {
            free(g->src[i].id);
            free(g->src[i].name);
            free(g->src[i].domain);
            free(g->src[i].country);
        }
    }
    free(g->src);
    alias_free(&g->src_zipf);
    alias_free(&g->topic_zipf);
    alias_free(&g->topic_word_zipf);
}

/* Every source that has an id, as `newsd sources import` JSONL: the
 * catalogue (headline sources) and the busiest long-tail publishers (not
 * headline sources), each with a popularity. */
static int sources_write(struct gen *g, FILE *out)
{
    struct buf b = BUF_INIT;
    int rc = 0;
    for (uint32_t i = 0; i < GEN_SOURCES && rc == 0; i++) {
        const struct src *s = &g->src[i];
        if (s->id == NULL)
            continue;
        buf_reset(&b);
        buf_puts(&b, "{\"id\":");
        json_str(&b, s->id);
        buf_puts(&b, ",\"name\":");
        json_str(&b, s->name);
        buf_puts(&b, ",\"description\":");
        json_str(&b, s->name);
        buf_printf(&b, ",\"url\":\"https://%s\",\"category\":", s->domain);
        json_str(&b, s->category ? s->category : "general");
        buf_printf(&b,
                   ",\"language\":\"%s\",\"country\":\"%s\",\"popularity\":%.0f,"
                   "\"headlines\":%s}\n",
                   lang_code[s->lang], s->country, s->popularity, s->catalogue ? "true" : "false");
        if (buf_error(&b) || fwrite(b.data, 1, b.len, out) != b.len)
            rc = -1;
    }
    buf_release(&b);
    return rc;
}

static int articles_write(struct gen *g, uint64_t n, bool stats, FILE *out)
{
    struct buf b = BUF_INIT;
    uint32_t hour = 0;
    uint64_t per_lang[L_COUNT] = {0}, bytes = 0, api_bytes = 0, catalogue = 0, with_id = 0;
    int rc = 0;

    buf_init(&b, GEN_LINE_MAX * 4);
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        buf_reset(&b);
        article_write(g, &b, i, n, &hour);
        if (buf_error(&b) || fwrite(b.data, 1, b.len, out) != b.len) {
            rc = -1;
            break;
        }
        if (stats) {
            /* The language is the last-but-few key; find it cheaply. */
            const char *p = strstr(b.data, ",\"language\":\"");
            for (int l = 0; p && l < L_COUNT; l++)
                if (strncmp(p + 13, lang_code[l], 2) == 0)
                    per_lang[l]++;
            bytes += b.len;
            /* The article as NewsAPI serves it: the line up to the
             * metadata keys, closed. */
            api_bytes += p ? (uint64_t)(p - b.data) + 1 : b.len;
            catalogue += strncmp(b.data, "{\"source\":{\"id\":null", 20) != 0;
        }
    }
    if (stats && n > 0) {
        for (uint32_t i = 0; i < GEN_SOURCES; i++)
            with_id += g->src[i].id != NULL;
        fprintf(stderr,
                "gen: %" PRIu64 " articles (profile %s), %.0f bytes each on average"
                " (%.0f without the metadata keys), %.1f%% with a source id (%" PRIu64
                " sources have one)\n",
                n, g->profile->name, (double)bytes / n, (double)api_bytes / n,
                100.0 * catalogue / n, with_id);
        for (int l = 0; l < L_COUNT; l++)
            fprintf(stderr, "gen:   %s %5.1f%%\n", lang_code[l], 100.0 * per_lang[l] / n);
    }
    buf_release(&b);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gen [--seed S] [--data DIR] [--profile full|newsapi|page] [--stats] N\n"
               "                                                  (N articles, JSONL)\n"
               "       gen [--seed S] [--data DIR] --sources     (sources, JSONL)\n");
}

int main(int argc, char **argv)
{
    struct gen g;
    bool sources = false, stats = false;
    uint64_t n = 0;
    bool have_n = false;
    int rc;

    memset(&g, 0, sizeof g);
    g.seed = 42;
    g.data_dir = "bench/data";
    g.profile = &profiles[0];
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            errno = 0;
            g.seed = strtoull(argv[++i], &end, 10);
            if (errno || *end) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            g.data_dir = argv[++i];
        } else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            g.profile = NULL;
            for (size_t k = 0; k < sizeof profiles / sizeof profiles[0]; k++)
                if (strcmp(name, profiles[k].name) == 0)
                    g.profile = &profiles[k];
            if (g.profile == NULL) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--sources") == 0) {
            sources = true;
        } else if (strcmp(argv[i], "--stats") == 0) {
            stats = true;
        } else if (argv[i][0] >= '0' && argv[i][0] <= '9' && !have_n) {
            errno = 0;
            n = strtoull(argv[i], &end, 10);
            if (errno || *end) {
                usage(stderr);
                return 2;
            }
            have_n = true;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (sources == have_n) {
        usage(stderr);
        return 2;
    }
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    rc = gen_init(&g);
    if (rc == 0)
        rc = sources ? sources_write(&g, stdout) : articles_write(&g, n, stats, stdout);
    if (fflush(stdout) != 0)
        rc = -1;
    if (rc < 0)
        fprintf(stderr, "gen: failed (out of memory, bad data files, or a closed output)\n");
    gen_free(&g);
    return rc < 0 ? 1 : 0;
}
