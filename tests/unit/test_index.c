/* index/: both search backends (FTS5 and the engine) over a small
 * hand-made corpus in a real store; every group runs once per backend.
 * Every expected id list below was worked out by hand from the corpus
 * (and, for stems, from what the Snowball stemmers do: en "economies" →
 * "economi", "runs"/"running" → "run", fr "élections" → "elect"). Lists
 * are newest first unless a test says otherwise; corpus index order is time
 * order, with A2 and A3 in the same second (A3 ingested later). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_tmpdir.h"

#include "article/json.h"
#include "index/index.h"
#include "query/query.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

#define T0 ((int64_t)1709251200) /* 2024-03-01T00:00:00Z */
#define DAY 86400
#define N_ARTICLES 15
#define END (-1)

struct spec {
    const char *lang, *country, *category;
    bool headline;
    const char *source_id, *domain;
    int64_t offset; /* seconds after T0 */
    const char *title, *description, *content;
};

static const struct spec corpus[N_ARTICLES] = {
    /* A0 */
    {"en", "gb", "business", true, "bbc-news", "bbc.co.uk", 100,
     "Economy grows faster than expected", "The national economy expanded in the first quarter",
     "Analysts said growth was broad"},
    /* A1 */
    {"en", "us", "business", false, "reuters", "reuters.com", 200, "Emerging markets face storms",
     "Investors in emerging economies wobble", "Investors fled to safety"},
    /* A2 */
    {"en", "gb", "sports", true, "bbc-sport", "news.bbc.co.uk", 300, "Running the city marathon",
     "She runs every day", "Thousands of runners took part"},
    /* A3 */
    {"en", "us", "general", true, "cnn", "edition.cnn.com", 300, "Storm hits the coast",
     "A storm warning was issued", "Heavy rain and wind"},
    /* A4 */
    {"fr", "fr", "general", true, "le-monde", "lemonde.fr", 400, "Les \xc3\xa9lections municipales",
     "Les \xc3\xa9lecteurs votent dimanche", "Le scrutin a commenc\xc3\xa9"},
    /* A5 */
    {"fr", "fr", "business", false, "le-figaro", "lefigaro.fr", 500,
     "\xc3\x89\x63onomie fran\xc3\xa7\x61ise en hausse", "L'\xc3\xa9\x63onomie progresse",
     "Les chiffres sont bons"},
    /* A6 */
    {"de", "de", "general", true, "spiegel", "spiegel.de", 600, "Wahlen in Berlin",
     "Die Wahl findet statt", "Viele Menschen gehen w\xc3\xa4hlen"},
    /* A7 */
    {"de", "de", "business", false, "faz", "faz.net", 700, "M\xc3\xa4rkte im Aufwind",
     "Der Markt steigt", "Anleger freuen sich"},
    /* A8 */
    {"en", "", "technology", false, NULL, "techblog.example.org", 800,
     "Quantum computing breakthrough", "Researchers announce a new processor",
     "The quantum processor works"},
    /* A9 */
    {"en", "gb", "general", true, "bbc-news", "bbc.co.uk", 900, "Election results announced",
     "The election was close", "Turnout was high"},
    /* A10 */
    {"en", "gb", "technology", false, "reuters", "uk.reuters.com", 1000, "Tech stocks rally",
     "Chip markets rose", "Makers led gains"},
    /* A11 */
    {"en", "us", "science", false, "cnn", "cnn.com", DAY, "Green energy investment",
     "Solar and wind", "The economy of renewables"},
    /* A12 */
    {"en", "gb", "sports", true, "bbc-sport", "bbc.co.uk", DAY + 10, "Football final tonight",
     "Fans gather early", "Expect running commentary"},
    /* A13 */
    {"fr", "fr", "business", true, "le-monde", "lemonde.fr", DAY + 20, "Les march\xc3\xa9s chutent",
     "La bourse recule", "Les investisseurs sont inquiets"},
    /* A14 */
    {"en", "us", "general", true, "cnn", "edition.cnn.com", 2 * DAY, "Election night live",
     "Results from every state", "The economy was a key issue"},
};

/* The catalogue: faz is left out (articles of unknown sources rank last by
 * popularity), spiegel is in it with popularity 0. */
static const struct source catalogue[] = {
    {"bbc-news", "BBC News", NULL, NULL, "general", "en", "gb", true, 0.9},
    {"cnn", "CNN", NULL, NULL, "general", "en", "us", true, 0.8},
    {"reuters", "Reuters", NULL, NULL, "business", "en", "us", true, 0.7},
    {"le-monde", "Le Monde", NULL, NULL, "general", "fr", "fr", true, 0.5},
    {"le-figaro", "Le Figaro", NULL, NULL, "general", "fr", "fr", true, 0.4},
    {"bbc-sport", "BBC Sport", NULL, NULL, "sports", "en", "gb", true, 0.3},
    {"spiegel", "Der Spiegel", NULL, NULL, "general", "de", "de", true, 0},
};

struct fixture {
    char dir[64];
    struct store *s;
    struct index *idx;
    struct arena ar;
    int64_t ids[N_ARTICLES];
    char urls[N_ARTICLES][64];
};

static struct article article_of(struct fixture *f, int i)
{
    const struct spec *sp = &corpus[i];
    struct article a;
    memset(&a, 0, sizeof a);
    snprintf(f->urls[i], sizeof f->urls[i], "https://%s/article/%d", sp->domain, i);
    a.url = f->urls[i];
    a.canonical_url = f->urls[i];
    a.source_id = sp->source_id;
    a.source_name = sp->source_id ? sp->source_id : "Tech Blog";
    a.author = "Reporter";
    a.title = sp->title;
    a.description = sp->description;
    a.content = sp->content;
    a.published_at = T0 + sp->offset;
    a.domain = sp->domain;
    snprintf(a.language, sizeof a.language, "%s", sp->lang);
    snprintf(a.country, sizeof a.country, "%s", sp->country);
    a.category = sp->category;
    a.headline = sp->headline;
    a.ingested_at = T0 + 3 * DAY;
    return a;
}

/* The backend the groups run against (main runs them once per kind). */
static const char *kind_under_test = INDEX_KIND_FTS5;

static int setup_store(struct fixture **out)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-index-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    err_clear(&err);
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(index_open_kind(&f->idx, f->s, NULL, kind_under_test, &err), 0);
    arena_init(&f->ar, 0);
    *out = f;
    return 0;
}

static int setup_corpus(void **state)
{
    struct fixture *f;
    struct err err;
    struct article arts[N_ARTICLES];
    struct store_put_stats st;

    setup_store(&f);
    err_clear(&err);
    assert_int_equal(
        store_sources_put(f->s, catalogue, sizeof catalogue / sizeof catalogue[0], &err), 0);
    for (int i = 0; i < N_ARTICLES; i++)
        arts[i] = article_of(f, i);
    /* Two batches, so both paths (new transaction, same second) are used. */
    assert_int_equal(store_articles_put(f->s, arts, 8, &st, &err), 0);
    assert_int_equal(store_articles_put(f->s, arts + 8, N_ARTICLES - 8, &st, &err), 0);
    for (int i = 0; i < N_ARTICLES; i++)
        f->ids[i] = arts[i].id;
    *state = f;
    return 0;
}

static int setup_empty(void **state)
{
    struct fixture *f;
    setup_store(&f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    index_close(f->idx);
    store_close(f->s);
    arena_release(&f->ar);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* --- helpers -------------------------------------------------------------- */

static struct query_node *parse(struct fixture *f, const char *q)
{
    struct query_node *n = NULL;
    struct err err;
    err_clear(&err);
    int rc = query_parse(&f->ar, q, strlen(q), &n, &err);
    if (rc != 0)
        fail_msg("query_parse(%s): %s", q, err.msg);
    return n;
}

static struct index_request request(void)
{
    struct index_request r;
    memset(&r, 0, sizeof r);
    r.q_fields = INDEX_FIELD_ALL;
    r.from = INT64_MIN;
    r.to = INT64_MAX;
    r.sort = INDEX_SORT_PUBLISHED_DESC;
    r.limit = 100;
    return r;
}

/* Run r and compare the page with the corpus indexes in `...` (END-terminated),
 * in order, and the total with `total` (-1: the page's length). */
static void expect_at(struct fixture *f, const struct index_request *r, long total, int line, ...)
{
    struct index_result res;
    struct err err;
    int want[N_ARTICLES + 1], n_want = 0, v;
    va_list ap;

    va_start(ap, line);
    while ((v = va_arg(ap, int)) != END) {
        assert_true(n_want < N_ARTICLES);
        want[n_want++] = v;
    }
    va_end(ap);
    err_clear(&err);
    int rc = index_search(f->idx, &f->ar, r, &res, &err);
    if (rc != 0)
        fail_msg("line %d: index_search failed: %s", line, err.msg);
    if (res.n != (size_t)n_want || res.total != (uint64_t)(total < 0 ? n_want : total)) {
        char got[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < res.n && len < sizeof got - 8; i++) {
            for (int k = 0; k < N_ARTICLES; k++) {
                if (f->ids[k] == res.docs[i].id)
                    len += (size_t)snprintf(got + len, sizeof got - len, "A%d ", k);
            }
        }
        fail_msg("line %d: got %zu articles (%s), total %llu; want %d, total %ld", line, res.n, got,
                 (unsigned long long)res.total, n_want, total < 0 ? (long)n_want : total);
    }
    for (int i = 0; i < n_want; i++) {
        if (res.docs[i].id != f->ids[want[i]])
            fail_msg("line %d: position %d is not A%d", line, i, want[i]);
    }
}

#define EXPECT(f, r, ...) expect_at((f), (r), -1, __LINE__, __VA_ARGS__, END)
#define EXPECT_TOTAL(f, r, total, ...) expect_at((f), (r), (total), __LINE__, __VA_ARGS__, END)

static int search_rc(struct fixture *f, const struct index_request *r)
{
    struct index_result res;
    struct err err;
    err_clear(&err);
    return index_search(f->idx, &f->ar, r, &res, &err);
}

/* --- words, stems, phrases, operators ------------------------------------- */

static void a_plain_word_matches_its_stems_in_the_article_language(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    /* economy, economies (en stem "economi") — not French "économie"
     * (fr stem "econom"): */
    r.q = parse(f, "economy");
    EXPECT(f, &r, 14, 11, 1, 0);
    r.language = "en";
    EXPECT(f, &r, 14, 11, 1, 0);
    /* runs → run: "Running", "runs", "running"; not "runners" (stem runner). */
    r.q = parse(f, "runs");
    EXPECT(f, &r, 12, 2);
    r.q = parse(f, "Running");
    EXPECT(f, &r, 12, 2);
    /* fr: "élections" is indexed with its stem "elect", which an English
     * "election" also stems to, when no language narrows the stemmers. */
    r.language = NULL;
    r.q = parse(f, "election");
    EXPECT(f, &r, 14, 9, 4);
    r.language = "fr";
    r.q = parse(f, "\xc3\xa9lection");
    EXPECT(f, &r, 4);
    /* Accents and case fold away. */
    r.language = "de";
    r.q = parse(f, "MARKTE");
    EXPECT(f, &r, 7);
}

static void a_quoted_word_matches_the_exact_form_only(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.q = parse(f, "\"economy\"");
    EXPECT(f, &r, 14, 11, 0);
    r.q = parse(f, "\"runs\"");
    EXPECT(f, &r, 2);
    r.q = parse(f, "\"economi\""); /* a stem is not a word of the text */
    EXPECT(f, &r, END);
}

static void words_never_match_the_metadata_terms(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    /* "a" is every article's meta term, but only these texts have the word. */
    r.q = parse(f, "a");
    EXPECT(f, &r, 14, 8, 4, 3);
    r.q = parse(f, "len");
    EXPECT(f, &r, END);
    r.q = parse(f, "h");
    EXPECT(f, &r, END);
    r.q = parse(f, "meta");
    EXPECT(f, &r, END);
}

static void phrases_match_adjacent_tokens_in_order(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.q = parse(f, "\"emerging economies\"");
    EXPECT(f, &r, 1);
    r.q = parse(f, "\"economies emerging\"");
    EXPECT(f, &r, END);
    r.q = parse(f, "\"election results\"");
    EXPECT(f, &r, 9);
    /* A hyphenated word is a phrase of its parts. */
    r.q = parse(f, "storm-warning");
    EXPECT(f, &r, 3);
}

static void and_or_not_combine(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.language = "en";
    r.q = parse(f, "economy AND investors");
    EXPECT(f, &r, 1);
    r.q = parse(f, "economy investors"); /* implicit AND */
    EXPECT(f, &r, 1);
    r.q = parse(f, "storm OR quantum");
    EXPECT(f, &r, 8, 3, 1);
    r.q = parse(f, "(storm OR quantum) processor");
    EXPECT(f, &r, 8);
    r.q = parse(f, "economy -\"economy\"");
    EXPECT(f, &r, 1);
    r.language = NULL;
    r.q = parse(f, "election NOT results");
    EXPECT(f, &r, 4);
    r.q = parse(f, "election -results -municipales");
    EXPECT(f, &r, END);
    r.q = parse(f, "+election +\"night live\"");
    EXPECT(f, &r, 14);
}

static void search_in_restricts_q_to_the_chosen_fields(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.language = "en";
    r.q = parse(f, "economy");
    r.q_fields = INDEX_FIELD_TITLE;
    EXPECT(f, &r, 0);
    r.q_fields = INDEX_FIELD_DESCRIPTION;
    EXPECT(f, &r, 1, 0);
    r.q_fields = INDEX_FIELD_CONTENT;
    EXPECT(f, &r, 14, 11);
    r.q_fields = INDEX_FIELD_TITLE | INDEX_FIELD_CONTENT;
    EXPECT(f, &r, 14, 11, 0);
    r.q_fields = 0; /* none given: all */
    EXPECT(f, &r, 14, 11, 1, 0);
    /* Exclusions apply within the same fields. */
    r.q_fields = INDEX_FIELD_TITLE;
    r.q = parse(f, "election -results");
    EXPECT(f, &r, 14);
}

static void q_in_title_searches_titles_and_combines_with_q(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    /* Titles only: A9, A14 and French "élections" (stem elect). */
    r.q_title = parse(f, "election");
    EXPECT(f, &r, 14, 9, 4);
    r.q_title = parse(f, "economy");
    EXPECT(f, &r, 0);
    r.q = parse(f, "economy");
    r.q_title = parse(f, "election");
    EXPECT(f, &r, 14);
    r.q_fields = INDEX_FIELD_TITLE; /* searchIn does not touch qInTitle */
    EXPECT(f, &r, END);
}

/* --- filters -------------------------------------------------------------- */

static void sources_filter_by_exact_id(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    const char *one[] = {"bbc-news"}, *two[] = {"bbc-news", "cnn"}, *none[] = {"bbc"};

    r.sources = one;
    r.n_sources = 1;
    EXPECT(f, &r, 9, 0);
    r.sources = two;
    r.n_sources = 2;
    EXPECT(f, &r, 14, 11, 9, 3, 0);
    r.q = parse(f, "election");
    EXPECT(f, &r, 14, 9);
    r.q = NULL;
    r.sources = none;
    r.n_sources = 1;
    EXPECT(f, &r, END);
}

static void a_domain_matches_itself_and_its_subdomains(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    const char *bbc[] = {"bbc.co.uk"}, *couk[] = {"co.uk"}, *news[] = {"news.bbc.co.uk"},
               *partial[] = {"bc.co.uk"}, *cnn[] = {"cnn.com"},
               *two[] = {"reuters.com", "lemonde.fr"}, *upper[] = {"BBC.co.UK"};

    r.domains = bbc;
    r.n_domains = 1;
    EXPECT(f, &r, 12, 9, 2, 0);
    r.domains = couk;
    EXPECT(f, &r, 12, 9, 2, 0);
    r.domains = upper;
    EXPECT(f, &r, 12, 9, 2, 0);
    r.domains = news;
    EXPECT(f, &r, 2);
    r.domains = partial; /* only whole labels */
    EXPECT(f, &r, END);
    r.domains = cnn;
    EXPECT(f, &r, 14, 11, 3);
    r.domains = two;
    r.n_domains = 2;
    EXPECT(f, &r, 13, 10, 4, 1);
}

static void excluded_domains_remove_their_articles(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    const char *bbc[] = {"bbc-news", "bbc-sport"}, *news[] = {"news.bbc.co.uk"},
               *cnn[] = {"cnn.com"}, *two[] = {"bbc.co.uk", "lemonde.fr"};

    r.sources = bbc;
    r.n_sources = 2;
    r.exclude_domains = news;
    r.n_exclude_domains = 1;
    EXPECT(f, &r, 12, 9, 0);

    r = request();
    r.language = "en";
    r.q = parse(f, "economy");
    r.exclude_domains = cnn;
    r.n_exclude_domains = 1;
    EXPECT(f, &r, 1, 0);

    r = request();
    r.exclude_domains = two;
    r.n_exclude_domains = 2;
    EXPECT(f, &r, 14, 11, 10, 8, 7, 6, 5, 3, 1);
}

static void language_country_category_and_headline_filters(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.language = "fr";
    EXPECT(f, &r, 13, 5, 4);
    r.language = "de";
    EXPECT(f, &r, 7, 6);
    r.language = "zh";
    EXPECT(f, &r, END);

    r = request();
    r.country = "gb";
    EXPECT(f, &r, 12, 10, 9, 2, 0);
    r.headlines_only = true;
    EXPECT(f, &r, 12, 9, 2, 0);
    r.country = "xx";
    EXPECT(f, &r, END);

    r = request();
    r.category = "business";
    EXPECT(f, &r, 13, 7, 5, 1, 0);
    r.headlines_only = true;
    EXPECT(f, &r, 13, 0);

    r = request();
    r.headlines_only = true;
    EXPECT(f, &r, 14, 13, 12, 9, 6, 4, 3, 2, 0);
    r.q = parse(f, "storm");
    EXPECT(f, &r, 3);
}

static void from_and_to_are_inclusive(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.from = T0 + 300;
    r.to = T0 + 400;
    EXPECT(f, &r, 4, 3, 2);
    r.from = T0 + 301;
    EXPECT(f, &r, 4);
    r.from = INT64_MIN;
    r.to = T0 + 299;
    EXPECT(f, &r, 1, 0);
    r.from = T0 + DAY;
    r.to = T0 + DAY;
    EXPECT(f, &r, 11);
    r.to = INT64_MAX;
    EXPECT(f, &r, 14, 13, 12, 11);
    r.from = T0 + 500;
    r.to = T0 + 400;
    EXPECT(f, &r, END);
    r.from = T0 - 1000;
    r.to = T0 + 99;
    EXPECT(f, &r, END);
}

/* --- order and paging ----------------------------------------------------- */

static void results_come_newest_or_oldest_first(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    EXPECT(f, &r, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    r.sort = INDEX_SORT_PUBLISHED_ASC;
    EXPECT(f, &r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    r.language = "en";
    r.q = parse(f, "economy");
    EXPECT(f, &r, 0, 1, 11, 14);
}

static void relevancy_weights_titles_higher(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    struct index_result res;
    struct err err;

    /* "markets": A1 has it once in its title, A10 once in its (shorter)
     * description; newest first would put A10 first. */
    r.language = "en";
    r.q = parse(f, "markets");
    EXPECT(f, &r, 10, 1);
    r.sort = INDEX_SORT_RELEVANCY;
    EXPECT(f, &r, 1, 10);

    /* economy: A0 (title and description) first; the order of the others
     * depends on bm25's length normalisation and on the exact form "economy"
     * scoring as well as its stem, so only their set is fixed. */
    r.q = parse(f, "economy");
    err_clear(&err);
    assert_int_equal(index_search(f->idx, &f->ar, &r, &res, &err), 0);
    assert_int_equal(res.n, 4);
    assert_int_equal(res.docs[0].id, f->ids[0]);
    int seen = 0;
    for (size_t i = 1; i < res.n; i++) {
        for (int k = 0; k < 3; k++) {
            if (res.docs[i].id == f->ids[(int[]){1, 11, 14}[k]])
                seen |= 1 << k;
        }
    }
    assert_int_equal(seen, 7);
}

static void popularity_orders_by_source_then_newest(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.sort = INDEX_SORT_POPULARITY;
    r.language = "en";
    /* bbc-news .9, cnn .8, reuters .7, bbc-sport .3, no source last. */
    EXPECT(f, &r, 9, 0, 14, 11, 3, 10, 1, 12, 2, 8);
    r.offset = 2;
    r.limit = 3;
    EXPECT_TOTAL(f, &r, 10, 14, 11, 3);
    /* spiegel is catalogued with popularity 0; faz is not catalogued. */
    r = request();
    r.sort = INDEX_SORT_POPULARITY;
    r.language = "de";
    EXPECT(f, &r, 6, 7);
}

static void paging_slices_the_results_and_keeps_the_total(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();

    r.limit = 4;
    EXPECT_TOTAL(f, &r, 15, 14, 13, 12, 11);
    r.offset = 4;
    EXPECT_TOTAL(f, &r, 15, 10, 9, 8, 7);
    r.offset = 12;
    EXPECT_TOTAL(f, &r, 15, 2, 1, 0);
    r.offset = 15;
    EXPECT_TOTAL(f, &r, 15, END);
    r.offset = 1000000;
    EXPECT_TOTAL(f, &r, 15, END);
    r.offset = 0;
    r.limit = 0;
    EXPECT_TOTAL(f, &r, 15, END);
    r.sort = INDEX_SORT_PUBLISHED_ASC;
    r.limit = 2;
    r.offset = 2;
    EXPECT_TOTAL(f, &r, 15, 2, 3);
}

/* Cursor paging in a ranked order (index_request.after, .stats): pages of
 * two, each after the last one's (key, id), give the whole order of one
 * search, with every key; and statistics frozen otherwise than the
 * index's still give every match exactly once (scores are a function of
 * the article under them), while statistics of another query's leaves
 * are refused. */
static size_t walk_ranked(struct fixture *f, struct index_request r,
                          const struct index_rank_stats *stats, int64_t *ids, double *keys)
{
    struct index_result res;
    struct err err;
    size_t n = 0;
    r.walk = true;
    r.limit = 2;
    r.stats = stats;
    for (;;) {
        err_clear(&err);
        if (index_search(f->idx, &f->ar, &r, &res, &err) != 0)
            fail_msg("a ranked page failed: %s", err.msg);
        assert_non_null(res.keys);
        if (r.sort == INDEX_SORT_RELEVANCY && !r.stats)
            r.stats = &res.stats; /* the first page's, frozen for the rest */
        for (size_t i = 0; i < res.n; i++) {
            assert_true(n < N_ARTICLES);
            ids[n] = res.docs[i].id;
            keys[n++] = res.keys[i];
        }
        if (res.n < r.limit)
            return n;
        struct index_rank_stats *copy = arena_alloc(&f->ar, sizeof *copy);
        assert_non_null(copy);
        if (r.stats) {
            *copy = *r.stats;
            r.stats = copy;
        }
        r.after = true;
        r.after_key = res.keys[res.n - 1];
        r.after_id = res.docs[res.n - 1].id;
    }
}

static void a_ranked_walk_pages_through_the_whole_order(void **state)
{
    struct fixture *f = *state;
    static const enum index_sort sorts[] = {INDEX_SORT_RELEVANCY, INDEX_SORT_POPULARITY};
    for (size_t k = 0; k < 2; k++) {
        struct index_request r = request();
        struct index_result whole;
        struct err err;
        int64_t ids[N_ARTICLES], other[N_ARTICLES];
        double keys[N_ARTICLES], other_keys[N_ARTICLES];
        r.sort = sorts[k];
        r.language = "en";
        r.q = parse(f, "economy OR markets OR storm OR election");
        err_clear(&err);
        assert_int_equal(index_search(f->idx, &f->ar, &r, &whole, &err), 0);
        assert_true(whole.n >= 4);
        size_t n = walk_ranked(f, r, NULL, ids, keys);
        assert_int_equal(n, whole.n);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(ids[i], whole.docs[i].id);
            if (i > 0)
                assert_true(keys[i] <= keys[i - 1]);
        }
        if (sorts[k] != INDEX_SORT_RELEVANCY)
            continue;
        /* statistics of another collection: every match once all the same */
        struct index_result first;
        r.walk = true;
        assert_int_equal(index_search(f->idx, &f->ar, &r, &first, &err), 0);
        struct index_rank_stats moved = first.stats;
        assert_true(moved.nleaves >= 4);
        moved.nrow *= 3;
        moved.ntoken *= 2;
        moved.hits[0] = moved.nrow / 2;
        assert_int_equal(walk_ranked(f, r, &moved, other, other_keys), n);
        bool scored_otherwise = false; /* the statistics given are the ones ranked with */
        for (size_t i = 0; i < n; i++)
            scored_otherwise |= other_keys[i] != keys[i];
        assert_true(scored_otherwise);
        for (size_t i = 0; i < n; i++) {
            size_t seen = 0;
            for (size_t j = 0; j < n; j++)
                seen += other[j] == ids[i];
            assert_int_equal(seen, 1);
        }
        /* another query's statistics: refused, never misread */
        moved.nleaves--;
        r.stats = &moved;
        assert_int_equal(search_rc(f, &r), ERR_INVALID);
    }
}

/* A page's article is exactly the API's JSON of the article as imported
 * (article/json.h), whichever backend wrote it. */
static void expect_json(struct fixture *f, const struct index_doc *d, int i)
{
    struct article a = article_of(f, i);
    struct buf want;
    buf_init(&want, 0);
    article_json(&want, &a);
    assert_int_equal(d->id, f->ids[i]);
    if (d->len != want.len || memcmp(d->json, want.data, want.len) != 0)
        fail_msg("A%d: got %.*s\nwant %.*s", i, (int)d->len, d->json, (int)want.len, want.data);
    buf_release(&want);
}

static void a_page_carries_every_article_as_the_api_writes_it(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    struct index_result res;
    struct err err;
    const char *src[] = {"bbc-news"};

    r.sources = src;
    r.n_sources = 1;
    r.sort = INDEX_SORT_PUBLISHED_ASC;
    err_clear(&err);
    assert_int_equal(index_search(f->idx, &f->ar, &r, &res, &err), 0);
    assert_int_equal(res.n, 2);
    expect_json(f, &res.docs[0], 0);

    const char *dom[] = {"techblog.example.org"};
    r = request();
    r.domains = dom;
    r.n_domains = 1;
    assert_int_equal(index_search(f->idx, &f->ar, &r, &res, &err), 0);
    assert_int_equal(res.n, 1);
    int k = 0;
    while (strcmp(corpus[k].domain, "techblog.example.org") != 0)
        k++;
    expect_json(f, &res.docs[0], k); /* "source":{"id":null,"name":"Tech Blog"} */
}

static void the_newest_headline_is_found_before_a_time(void **state)
{
    struct fixture *f = *state;
    struct err err;
    int64_t t = 0;

    err_clear(&err);
    assert_int_equal(index_newest_headline(f->idx, INT64_MAX, &t, &err), 0);
    assert_int_equal(t, T0 + 2 * DAY);
    assert_int_equal(index_newest_headline(f->idx, T0 + DAY + 19, &t, &err), 0);
    assert_int_equal(t, T0 + DAY + 10);
    /* A10 (T0+1000) and A11 (T0+DAY) are not headlines. */
    assert_int_equal(index_newest_headline(f->idx, T0 + DAY + 9, &t, &err), 0);
    assert_int_equal(t, T0 + 900);
    assert_int_equal(index_newest_headline(f->idx, T0 + 100, &t, &err), 0);
    assert_int_equal(t, T0 + 100);
    assert_int_equal(index_newest_headline(f->idx, T0 + 99, &t, &err), ERR_NOTFOUND);
    assert_int_equal(index_newest_headline(f->idx, INT64_MIN, &t, &err), ERR_NOTFOUND);
}

/* --- hostile input and malformed trees ------------------------------------ */

static struct query_node *word_node(struct fixture *f, const char *tok, bool exact)
{
    struct query_node *n = arena_calloc(&f->ar, 1, sizeof *n);
    n->kind = QUERY_WORD;
    n->exact = exact;
    n->n = 1;
    n->tokens = arena_calloc(&f->ar, 1, sizeof *n->tokens);
    n->tokens[0] = arena_strdup(&f->ar, tok);
    return n;
}

static struct query_node *op_node(struct fixture *f, enum query_kind kind, size_t n,
                                  struct query_node *a, struct query_node *b)
{
    struct query_node *x = arena_calloc(&f->ar, 1, sizeof *x);
    x->kind = kind;
    x->n = n;
    x->kids = arena_calloc(&f->ar, 2, sizeof *x->kids);
    x->kids[0] = a;
    x->kids[1] = b;
    return x;
}

static void tokens_are_never_read_as_fts5_syntax(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    const char *hostile[] = {"a\"b", "\"",      "AND",     "NOT",    "NEAR",
                             "*",    "econom*", "{title}", "meta:a", "title : storm",
                             "(",    "^storm",  "a OR b",  "\\"};
    const char *dom[] = {"bbc.co.uk\" OR \"x"}, *src[] = {"\") OR (meta : \"a"};

    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        r.q = word_node(f, hostile[i], i % 2 == 0);
        EXPECT(f, &r, END);
    }
    r.q = NULL;
    r.domains = dom;
    r.n_domains = 1;
    EXPECT(f, &r, END);
    r.domains = NULL;
    r.n_domains = 0;
    r.sources = src;
    r.n_sources = 1;
    EXPECT(f, &r, END);
    r.sources = NULL;
    r.n_sources = 0;
    r.language = "e\"n";
    r.country = "g b";
    r.category = "x\") OR (\"a";
    EXPECT(f, &r, END);
}

static void trees_outside_the_normal_form_are_refused(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    struct query_node *storm = word_node(f, "storm", false), *rain = word_node(f, "rain", false);
    struct query_node *empty = word_node(f, "", false);

    r.q = op_node(f, QUERY_NOT, 1, storm, NULL);
    assert_int_equal(search_rc(f, &r), ERR_INVALID);
    r.q = op_node(f, QUERY_OR, 2, storm, op_node(f, QUERY_NOT, 1, rain, NULL));
    assert_int_equal(search_rc(f, &r), ERR_INVALID);
    r.q = op_node(f, QUERY_AND, 2, op_node(f, QUERY_NOT, 1, storm, NULL),
                  op_node(f, QUERY_NOT, 1, rain, NULL));
    assert_int_equal(search_rc(f, &r), ERR_INVALID);
    r.q = empty;
    assert_int_equal(search_rc(f, &r), ERR_INVALID);
    r.q = op_node(f, QUERY_AND, 2, storm, NULL);
    assert_int_equal(search_rc(f, &r), ERR_INVALID);

    /* Deep but well-formed nesting is fine. */
    struct query_node *deep = storm;
    for (int i = 0; i < 30; i++)
        deep = op_node(f, QUERY_OR, 2, deep, word_node(f, "zzz", i % 2 == 0));
    r.q = deep;
    r.language = "en";
    EXPECT(f, &r, 3, 1);
}

/* --- the index follows the store ------------------------------------------ */

static void replacing_an_article_replaces_its_index_entries(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    struct err err;
    struct article a = article_of(f, 3); /* "Storm hits the coast", cnn, headline */

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    f->ids[3] = a.id;
    r.q = parse(f, "storm");
    EXPECT(f, &r, 3);

    /* Same url: new title, another source, no longer a headline, later. */
    a.title = "Calm returns to the coast";
    a.description = "Sunshine";
    a.source_id = "bbc-news";
    a.domain = "bbc.co.uk";
    a.headline = false;
    a.published_at = T0 + 5000;
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    f->ids[3] = a.id;
    EXPECT(f, &r, END);
    r.q = parse(f, "calm");
    EXPECT(f, &r, 3);
    r.q = NULL;
    r.headlines_only = true;
    EXPECT(f, &r, END);
    r.headlines_only = false;
    const char *cnn[] = {"cnn.com"}, *bbc[] = {"bbc-news"};
    r.domains = cnn;
    r.n_domains = 1;
    EXPECT(f, &r, END);
    r.domains = NULL;
    r.n_domains = 0;
    r.sources = bbc;
    r.n_sources = 1;
    EXPECT(f, &r, 3);
    r.sources = NULL;
    r.n_sources = 0;
    r.from = T0 + 5000;
    r.to = T0 + 5000;
    EXPECT(f, &r, 3);
    r.from = T0 + 300;
    r.to = T0 + 300;
    EXPECT(f, &r, END);
    int64_t t;
    assert_int_equal(index_newest_headline(f->idx, INT64_MAX, &t, &err), ERR_NOTFOUND);

    /* Still one article in all. */
    r = request();
    EXPECT_TOTAL(f, &r, 1, 3);
}

static void an_empty_store_finds_nothing(void **state)
{
    struct fixture *f = *state;
    struct index_request r = request();
    int64_t t;
    struct err err;

    EXPECT(f, &r, END);
    r.q = parse(f, "anything");
    r.sort = INDEX_SORT_POPULARITY;
    EXPECT(f, &r, END);
    err_clear(&err);
    assert_int_equal(index_newest_headline(f->idx, INT64_MAX, &t, &err), ERR_NOTFOUND);
}

static uint64_t total_of(struct fixture *f, const char *q)
{
    struct index_request r = request();
    struct index_result res;
    struct err err;
    err_clear(&err);
    r.q = q ? parse(f, q) : NULL;
    if (r.q == NULL) {
        static const char *const every_source[] = {"bbc-news",  "cnn",       "reuters", "le-monde",
                                                   "le-figaro", "bbc-sport", "spiegel"};
        r.sources = every_source;
        r.n_sources = sizeof every_source / sizeof every_source[0];
    }
    if (index_search(f->idx, &f->ar, &r, &res, &err) != 0)
        fail_msg("index_search: %s", err.msg);
    return res.total;
}

/* A store made without its FTS5 side (kept for the engine index) gets it
 * from the fts5 index when that opens, filled from the articles already
 * there and kept in step from then on; dropping it and opening again
 * rebuilds the same index. */
static void the_fts5_index_builds_its_table_in_a_store_without_one(void **state)
{
    (void)state;
    struct fixture f;
    struct err err;
    struct article arts[N_ARTICLES];
    struct store_put_stats st;
    bool on = true;

    memset(&f, 0, sizeof f);
    snprintf(f.dir, sizeof f.dir, "/tmp/newsd-index-XXXXXX");
    assert_non_null(mkdtemp(f.dir));
    arena_init(&f.ar, 0);
    err_clear(&err);
    struct store_options opt = {.fulltext_when_new = false};
    assert_int_equal(store_open_with(&f.s, f.dir, &opt, &err), 0);
    assert_int_equal(store_fulltext_get(f.s, &on, &err), 0);
    assert_false(on);
    assert_int_equal(
        store_sources_put(f.s, catalogue, sizeof catalogue / sizeof catalogue[0], &err), 0);
    for (int i = 0; i < N_ARTICLES; i++)
        arts[i] = article_of(&f, i);
    assert_int_equal(store_articles_put(f.s, arts, 10, &st, &err), 0);

    assert_int_equal(index_open_kind(&f.idx, f.s, NULL, INDEX_KIND_FTS5, &err), 0);
    assert_int_equal(store_fulltext_get(f.s, &on, &err), 0);
    assert_true(on);
    /* Of A0-A9, A7 (faz, not in the list) and A8 (no source) are left out. */
    assert_int_equal(total_of(&f, NULL), 8);
    uint64_t storms = total_of(&f, "storm");
    assert_int_equal(storms, 2); /* A1 "storms", A3 "Storm" */

    /* Kept in step by the triggers now. */
    assert_int_equal(store_articles_put(f.s, arts + 10, N_ARTICLES - 10, &st, &err), 0);
    assert_int_equal(total_of(&f, NULL), 13); /* + A10-A14 */
    uint64_t elections = total_of(&f, "election");

    /* Off, then rebuilt by the next open: the same answers. */
    index_close(f.idx);
    f.idx = NULL;
    assert_int_equal(store_fulltext_set(f.s, false, &err), 0);
    assert_int_equal(store_fulltext_get(f.s, &on, &err), 0);
    assert_false(on);
    assert_int_equal(store_fulltext_set(f.s, false, &err), 0); /* idempotent */
    assert_int_equal(index_open_kind(&f.idx, f.s, NULL, INDEX_KIND_FTS5, &err), 0);
    assert_int_equal(total_of(&f, NULL), 13); /* + A10-A14 */
    assert_int_equal(total_of(&f, "storm"), storms);
    assert_int_equal(total_of(&f, "election"), elections);
    assert_true(elections >= 2);

    index_close(f.idx);
    store_close(f.s);
    arena_release(&f.ar);
    remove_tree(f.dir);
}

int main(void)
{
    const struct CMUnitTest corpus_tests[] = {
        cmocka_unit_test(a_plain_word_matches_its_stems_in_the_article_language),
        cmocka_unit_test(a_quoted_word_matches_the_exact_form_only),
        cmocka_unit_test(words_never_match_the_metadata_terms),
        cmocka_unit_test(phrases_match_adjacent_tokens_in_order),
        cmocka_unit_test(and_or_not_combine),
        cmocka_unit_test(search_in_restricts_q_to_the_chosen_fields),
        cmocka_unit_test(q_in_title_searches_titles_and_combines_with_q),
        cmocka_unit_test(sources_filter_by_exact_id),
        cmocka_unit_test(a_domain_matches_itself_and_its_subdomains),
        cmocka_unit_test(excluded_domains_remove_their_articles),
        cmocka_unit_test(language_country_category_and_headline_filters),
        cmocka_unit_test(from_and_to_are_inclusive),
        cmocka_unit_test(results_come_newest_or_oldest_first),
        cmocka_unit_test(relevancy_weights_titles_higher),
        cmocka_unit_test(popularity_orders_by_source_then_newest),
        cmocka_unit_test(paging_slices_the_results_and_keeps_the_total),
        cmocka_unit_test(a_ranked_walk_pages_through_the_whole_order),
        cmocka_unit_test(a_page_carries_every_article_as_the_api_writes_it),
        cmocka_unit_test(the_newest_headline_is_found_before_a_time),
        cmocka_unit_test(tokens_are_never_read_as_fts5_syntax),
        cmocka_unit_test(trees_outside_the_normal_form_are_refused),
    };
    const struct CMUnitTest store_tests[] = {
        cmocka_unit_test_setup_teardown(replacing_an_article_replaces_its_index_entries,
                                        setup_empty, teardown),
        cmocka_unit_test_setup_teardown(an_empty_store_finds_nothing, setup_empty, teardown),
    };
    const struct CMUnitTest fts5_only_tests[] = {
        cmocka_unit_test(the_fts5_index_builds_its_table_in_a_store_without_one),
    };
    int failed = 0;
    static const char *const kinds[] = {INDEX_KIND_FTS5, INDEX_KIND_ENGINE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        kind_under_test = kinds[k];
        printf("== index kind %s\n", kind_under_test);
        failed += cmocka_run_group_tests(corpus_tests, setup_corpus, teardown);
        failed += cmocka_run_group_tests(store_tests, NULL, NULL);
    }
    failed += cmocka_run_group_tests(fts5_only_tests, NULL, NULL);
    return failed;
}
