/* index/match.h: one article against one request, held to the search
 * backends' answers. A real SQLite store is built from the real-article
 * fixtures of tests/data/api (and the hand-made articles beside them); both
 * backends (the engine and FTS5) open it, and every article of it is
 * prepared for matching from its row in the log. For each request (hand
 * picked cases of every feature, the bench query mix, a thousand random
 * requests) the ids the matcher accepts must be exactly the ids both
 * backends find, its error the same as theirs, and every accepted article
 * must hold one of the matcher's keys. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_articles.h"

#include "../../bench/common.h" /* the bench query mix */
#include "index/backend.h"
#include "index/match.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "store/journal.h"
#include "store/meta.h"
#include "store/store.h"
#include "store/sqlite/db.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

#define RANDOM_REQUESTS 1000

struct fixture {
    struct test_articles t; /* the store, its articles prepared, the corpus */
    struct index_backend *fts, *eng;
    /* what the checks saw, for the summary lines */
    size_t checked, with_matches, keyless;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    assert_non_null(f);
    err_clear(&err);
    test_articles_open(&f->t);
    assert_int_equal(index_fts5_new(&f->fts, store_sqlite_path(f->t.s), &err), 0);
    assert_int_equal(index_engine_new(&f->eng, store_sqlite_path(f->t.s), NULL, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    print_message("%zu requests checked, %zu with matches, %zu without keys\n", f->checked,
                  f->with_matches, f->keyless);
    f->eng->free(f->eng);
    f->fts->free(f->fts);
    test_articles_close(&f->t);
    free(f);
    return 0;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Every id a backend finds for req, ascending; the rc of the search. */
static int backend_ids(struct fixture *f, struct index_backend *b, struct arena *a,
                       const struct index_request *req, int64_t **ids, size_t *n)
{
    struct index_request all = *req;
    struct index_result r;
    struct err err;
    err_clear(&err);
    all.sort = INDEX_SORT_PUBLISHED_DESC;
    all.offset = 0;
    all.limit = f->t.n + 1;
    all.deadline_ms = 0;
    int rc = search_expanded(b, a, &all, &r, &err);
    if (rc < 0)
        return rc;
    assert_int_equal(r.total, r.n);
    *ids = arena_calloc(a, r.n + 1, sizeof **ids);
    assert_non_null(*ids);
    for (size_t i = 0; i < r.n; i++)
        (*ids)[i] = r.docs[i].id;
    qsort(*ids, r.n, sizeof **ids, cmp_i64);
    *n = r.n;
    return 0;
}

/* Whether doc d holds one of keys[0..n). */
static bool holds_a_key(const struct index_match_doc *d, const char *const *keys, size_t n)
{
    const char *const *terms;
    size_t nt;
    index_match_doc_terms(d, &terms, &nt);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < nt; j++) {
            if (strcmp(keys[i], terms[j]) == 0)
                return true;
        }
    }
    return false;
}

/* The matcher's answer for req over every article against both backends';
 * returns the number of matches (0 too when all three refuse req alike). */
static size_t same_answer(struct fixture *f, const struct index_request *req, const char *what)
{
    struct arena a;
    struct index_matcher *m = NULL;
    struct err err;
    int64_t *want = NULL, *eng = NULL, *got;
    size_t n_want = 0, n_eng = 0, n_got = 0;
    int rc_fts, rc_eng, rc;

    arena_init(&a, 0);
    err_clear(&err);
    rc_fts = backend_ids(f, f->fts, &a, req, &want, &n_want);
    rc_eng = backend_ids(f, f->eng, &a, req, &eng, &n_eng);
    if (rc_fts == ERR_REFUSED && rc_eng == ERR_REFUSED) { /* a prefix of too many words */
        arena_release(&a);
        return 0;
    }
    rc = index_matcher_new(&m, req, &err);
    if (rc != rc_fts || rc != rc_eng)
        print_message("%s: matcher rc %d (%s), fts5 %d, engine %d\n", what, rc, err.msg, rc_fts,
                      rc_eng);
    assert_int_equal(rc_fts, rc_eng);
    assert_int_equal(rc, rc_fts);
    f->checked++;
    if (rc < 0) {
        assert_null(m);
        arena_release(&a);
        return 0;
    }
    assert_int_equal(n_want, n_eng);
    assert_memory_equal(want, eng, n_want * sizeof *want);

    const char *const *keys;
    size_t n_keys;
    index_matcher_keys(m, &keys, &n_keys);
    f->keyless += n_keys == 0;
    got = arena_calloc(&a, f->t.n + 1, sizeof *got);
    assert_non_null(got);
    for (size_t i = 0; i < f->t.n; i++) {
        if (!index_matcher_test(m, f->t.docs[i]))
            continue;
        got[n_got++] = f->t.ids[i];
        if (n_keys > 0 && !holds_a_key(f->t.docs[i], keys, n_keys)) {
            print_message("%s: article %lld matches but holds none of the %zu keys\n", what,
                          (long long)f->t.ids[i], n_keys);
            fail();
        }
    }
    qsort(got, n_got, sizeof *got, cmp_i64);
    if (n_got != n_want || memcmp(got, want, n_got * sizeof *got) != 0) {
        size_t i = 0;
        while (i < n_got && i < n_want && got[i] == want[i])
            i++;
        print_message("%s: the matcher accepts %zu articles, the backends find %zu; first "
                      "difference at %zu: matcher %lld, backends %lld\n",
                      what, n_got, n_want, i, i < n_got ? (long long)got[i] : -1LL,
                      i < n_want ? (long long)want[i] : -1LL);
        fail();
    }
    f->with_matches += n_got > 0;
    index_matcher_free(m);
    arena_release(&a);
    return n_got;
}

/* --- hand-picked requests ------------------------------------------------------ */

struct hand {
    const char *q, *q_title;
    unsigned fields;
    const char *sources, *domains, *exclude; /* comma-separated */
    const char *language;
    int64_t from, to; /* 0: open */
    size_t at_least;  /* matches the case must have (the case means something) */
};

static const char *const *list(struct arena *a, const char *csv, size_t *n)
{
    *n = 0;
    if (csv == NULL)
        return NULL;
    const char **v = arena_calloc(a, 8, sizeof *v);
    char *copy = arena_strdup(a, csv);
    assert_non_null(v);
    assert_non_null(copy);
    for (char *t = strtok(copy, ","); t && *n < 8; t = strtok(NULL, ","))
        v[(*n)++] = t;
    return v;
}

static const struct hand hands[] = {
    /* words, stems, exact words */
    {.q = "councils", .at_least = 1},
    {.q = "council", .at_least = 1},
    {.q = "budget", .language = "en", .at_least = 1},
    {.q = "\"budget\""},
    {.q = "\"budgets\"", .at_least = 1},
    {.q = "elections", .at_least = 1},
    {.q = "election", .language = "en", .at_least = 1},
    {.q = "approving", .language = "en", .at_least = 1},
    {.q = "straße", .at_least = 1},
    {.q = "strasse"},
    {.q = "zurich", .at_least = 1},
    {.q = "zürich", .language = "de", .at_least = 1},
    {.q = "cafe", .at_least = 1},
    {.q = "montréal", .language = "fr", .at_least = 1},
    {.q = "nouvelle", .language = "fr"},
    {.q = "nouvelles", .at_least = 1},
    {.q = "москва", .at_least = 1},
    {.q = "новость", .language = "ru", .at_least = 1},
    {.q = "новости", .at_least = 1},
    {.q = "svenska", .language = "sv", .at_least = 1},
    {.q = "nyhet", .language = "sv"},
    {.q = "president", .at_least = 5},
    {.q = "presidents", .language = "en", .at_least = 5},
    /* CJK and split words: phrases */
    {.q = "人工智能", .at_least = 1},
    {.q = "智能发展", .at_least = 1},
    {.q = "发展 人工", .at_least = 1},
    {.q = "zyxtro-42", .at_least = 1},
    {.q = "\"zyxtro 42\"", .at_least = 1},
    {.q = "\"42 zyxtro\"", .at_least = 1},
    {.q = "flurbonia's", .at_least = 1},
    {.q = "covid-19", .at_least = 1},
    /* phrases and operators */
    {.q = "\"rock and roll\"", .at_least = 1},
    {.q = "\"rock roll\"", .at_least = 1},
    {.q = "rock AND roll", .at_least = 2},
    {.q = "rock NOT festival", .at_least = 1},
    {.q = "grimbly -festival", .at_least = 1},
    {.q = "+plinthor quorvax", .at_least = 1},
    {.q = "plinthor OR zebulox", .at_least = 4},
    {.q = "(plinthor OR zebulox) AND NOT quorvax", .at_least = 2},
    {.q = "((plinthor OR zebulox) AND report) OR (vorpalix AND blade)", .at_least = 6},
    {.q = "\"vorpalix snickersnee\" OR \"snickersnee vorpalix\"", .at_least = 2},
    {.q = "wubbleton or not and", .at_least = 1},
    {.q = "\"or\" AND \"not\"", .at_least = 1},
    /* fields */
    {.q = "report", .fields = INDEX_FIELD_TITLE, .at_least = 5},
    {.q = "report", .fields = INDEX_FIELD_DESCRIPTION},
    {.q = "report", .fields = INDEX_FIELD_CONTENT},
    {.q = "report", .fields = INDEX_FIELD_TITLE | INDEX_FIELD_CONTENT, .at_least = 5},
    {.q = "covid", .fields = INDEX_FIELD_DESCRIPTION | INDEX_FIELD_CONTENT, .at_least = 1},
    {.q_title = "report", .at_least = 5},
    {.q = "the", .q_title = "covid", .at_least = 1},
    {.q_title = "\"rock and roll\"", .at_least = 1},
    /* filters */
    {.sources = "bbc-news", .at_least = 1},
    {.q = "quibbleflux", .sources = "bbc-news,cnn", .at_least = 2},
    {.q = "quibbleflux", .exclude = "newsd.test"},
    {.domains = "newsd.test", .at_least = 10},
    {.domains = "co.uk", .at_least = 2},
    {.domains = "example.co.uk", .exclude = "shop.example.co.uk", .at_least = 1},
    {.q = "domaincheck", .exclude = "newsd.test", .at_least = 2},
    {.language = "fr", .at_least = 5},
    {.language = "zh", .at_least = 1},
    {.q = "langcheck", .language = "sv", .at_least = 1},
    {.q = "the", .language = "en", .sources = "abc-news", .at_least = 1},
    /* author: a whole field, one of a list, another script, with words */
    {.q = "author:\"the associated press\"", .at_least = 1},
    {.q = "author:\"Asif  Iqbal Shaik\"", .at_least = 1},
    {.q = "author:sammobile OR author:\"callum marius\"", .at_least = 2},
    {.q = "the -author:\"the associated press\"", .at_least = 5},
    {.q = "author:\"Алексей Олефиренко\" OR president", .at_least = 6},
    {.q = "author:\"no such writer\""},
    /* dates: 2019-03-10, the whole day and a second of it */
    {.q = "datecheck", .from = 1552176000, .to = 1552262399, .at_least = 3},
    {.q = "datecheck", .from = 1552176000, .to = 1552176000, .at_least = 1},
    {.q = "datecheck", .from = 1552262400, .at_least = 3},
    {.q = "datecheck", .to = 1552175999, .at_least = 1},
    {.q = "datecheck", .from = 1552262400, .to = 1552176000},
    {.from = 1552176000, .to = 1552262399, .at_least = 3},
};

static void hand_picked_requests_give_the_backends_answers(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < sizeof hands / sizeof hands[0]; i++) {
        const struct hand *h = &hands[i];
        struct arena a;
        struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 10};
        struct err err;
        char what[256];
        arena_init(&a, 0);
        err_clear(&err);
        if (h->q)
            assert_int_equal(
                query_parse(&a, h->q, strlen(h->q), (struct query_node **)&req.q, &err), 0);
        if (h->q_title)
            assert_int_equal(query_parse(&a, h->q_title, strlen(h->q_title),
                                         (struct query_node **)&req.q_title, &err),
                             0);
        req.q_fields = h->fields;
        req.sources = list(&a, h->sources, &req.n_sources);
        req.domains = list(&a, h->domains, &req.n_domains);
        req.exclude_domains = list(&a, h->exclude, &req.n_exclude_domains);
        req.language = h->language;
        if (h->from)
            req.from = h->from;
        if (h->to)
            req.to = h->to;
        snprintf(what, sizeof what, "case %zu q=[%s] qInTitle=[%s]", i, h->q ? h->q : "",
                 h->q_title ? h->q_title : "");
        size_t got = same_answer(f, &req, what);
        if (got < h->at_least)
            print_message("%s: %zu matches, expected at least %zu\n", what, got, h->at_least);
        assert_true(got >= h->at_least);
        arena_release(&a);
    }
}

static void the_bench_query_mix_gives_the_backends_answers(void **state)
{
    struct fixture *f = *state;
    struct mix m = {0};
    size_t with_matches = 0;

    assert_int_equal(mix_load(&m, "../../bench/querymix.tsv"), 0);
    assert_true(m.n > 100);
    for (size_t i = 0; i < m.n; i++) {
        struct arena a;
        struct index_request req;
        struct err err;
        arena_init(&a, 0);
        err_clear(&err);
        assert_int_equal(bench_request_build(&a, m.q[i].params, &req, &err), 0);
        with_matches += same_answer(f, &req, m.q[i].id) > 0;
        arena_release(&a);
    }
    print_message("query mix: %zu requests, %zu with matches\n", m.n, with_matches);
    assert_true(with_matches > m.n / 10);
    mix_free(&m);
}

static void random_requests_give_the_backends_answers(void **state)
{
    struct fixture *f = *state;
    size_t run = 0, with_matches = 0;

    srand(20261126);
    for (int i = 0; run < RANDOM_REQUESTS && i < 20 * RANDOM_REQUESTS; i++) {
        struct arena a;
        struct index_request req;
        char desc[1500];
        arena_init(&a, 0);
        if (random_request(&f->t.c, &a, &req, desc, sizeof desc)) {
            with_matches += same_answer(f, &req, desc) > 0;
            run++;
        }
        arena_release(&a);
    }
    print_message("random: %zu requests, %zu with matches\n", run, with_matches);
    assert_int_equal(run, RANDOM_REQUESTS);
    assert_true(with_matches > RANDOM_REQUESTS / 4);
}

/* --- trees outside the normal form ---------------------------------------------- */

static struct query_node *node(struct arena *a, enum query_kind kind, const char *tok,
                               struct query_node *x, struct query_node *y)
{
    struct query_node *n = arena_calloc(a, 1, sizeof *n);
    assert_non_null(n);
    n->kind = kind;
    if (tok) {
        n->n = 1;
        n->tokens = arena_calloc(a, 1, sizeof *n->tokens);
        n->tokens[0] = arena_strdup(a, tok);
        return n;
    }
    n->n = y ? 2 : 1;
    n->kids = arena_calloc(a, 2, sizeof *n->kids);
    n->kids[0] = x;
    n->kids[1] = y;
    return n;
}

static void malformed_trees_are_refused_as_the_backends_refuse_them(void **state)
{
    struct fixture *f = *state;
    struct arena a;
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 10};
    arena_init(&a, 0);
    struct query_node *storm = node(&a, QUERY_WORD, "storm", NULL, NULL);
    struct query_node *rain = node(&a, QUERY_WORD, "rain", NULL, NULL);
    const struct query_node *bad[] = {
        node(&a, QUERY_NOT, NULL, storm, NULL),
        node(&a, QUERY_OR, NULL, storm, node(&a, QUERY_NOT, NULL, rain, NULL)),
        node(&a, QUERY_AND, NULL, node(&a, QUERY_NOT, NULL, storm, NULL),
             node(&a, QUERY_NOT, NULL, rain, NULL)),
        node(&a, QUERY_WORD, "", NULL, NULL),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct index_matcher *m = (struct index_matcher *)&a; /* must be reset */
        struct err err;
        err_clear(&err);
        req.q = bad[i];
        assert_int_equal(index_matcher_new(&m, &req, &err), ERR_INVALID);
        assert_null(m);
        assert_true(err.msg[0] != '\0');
        same_answer(f, &req, "malformed");
    }
    arena_release(&a);
}

/* --- the article's terms --------------------------------------------------------- */

static bool has_term(const struct index_match_doc *d, const char *t, size_t len)
{
    const char *const *terms;
    size_t n;
    index_match_doc_terms(d, &terms, &n);
    for (size_t i = 0; i < n; i++) {
        if (strlen(terms[i]) == len && memcmp(terms[i], t, len) == 0)
            return true;
    }
    return false;
}

static void an_articles_terms_are_its_tokens_stems_and_meta_terms_once_each(void **state)
{
    (void)state;
    struct store_row row = {
        .id = STORE_ID_MIN_FOR_TIME(1700000000) + 1,
        .published_at = 1700000000,
        .title = "Councils approve budgets",
        .description = "The council approved it",
        .content = NULL,
        .language = "EN", /* compared case-insensitively, as the tokenizer does */
        .meta_terms = "a len sbbc  h",
        .author = "By Jane Doe, John Roe",
    };
    struct index_match_doc *d = NULL;
    struct err err;
    const char *const *terms;
    size_t n;
    err_clear(&err);
    assert_int_equal(index_match_doc_new(&d, &row, &err), 0);
    index_match_doc_terms(d, &terms, &n);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++)
            assert_string_not_equal(terms[i], terms[j]);
    }
    assert_true(has_term(d, "councils", 8));
    assert_true(has_term(d, "~council", 8));
    assert_true(has_term(d, "council", 7));
    assert_true(has_term(d, "~approv", 7));
    assert_true(has_term(d, "the", 3));
    assert_true(has_term(d,
                         "\x1E"
                         "a",
                         2));
    assert_true(has_term(d,
                         "\x1E"
                         "len",
                         4));
    assert_true(has_term(d,
                         "\x1E"
                         "sbbc",
                         5));
    assert_true(has_term(d,
                         "\x1E"
                         "h",
                         2));
    assert_false(has_term(d, "a", 1)); /* meta terms are marked, never words */
    /* the author's: the whole field, each of its two names, and the first of
     * each without its "by" */
    const char *names[] = {"by jane doe john roe", "Jane Doe John Roe", "by jane doe", "jane doe",
                           "JOHN ROE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct buf t = BUF_INIT;
        buf_putc(&t, '\x1E');
        store_meta_term(&t, STORE_META_AUTHOR, names[i], strlen(names[i]));
        assert_true(has_term(d, t.data, t.len));
        buf_release(&t);
    }
    /* 7 words, 3 stems that differ from their word, 4 meta terms, 5 of the author */
    assert_int_equal(n, 7 + 3 + 4 + 5);
    index_match_doc_free(d);
}

/* The keys: as rare as the request allows, every form of a word, none for a
 * request that holds no required term. */
static void keys_are_the_rarest_required_terms(void **state)
{
    (void)state;
    struct arena a;
    struct err err;
    arena_init(&a, 0);
    struct {
        const char *q, *source, *language;
        const char *want[4]; /* keys expected among them (all of them for n_want) */
        size_t n_keys;       /* 0: no keys */
    } cases[] = {
        {"the vorpalix", NULL, "en", {"vorpalix", "~vorpalix"}, 2},
        {"vorpalix OR zebulox", NULL, "en", {"vorpalix", "zebulox"}, 4},
        {"\"rock and roll\"", NULL, NULL, {"rock"}, 1},
        {"running", NULL, "en", {"running", "run", "~run"}, 3},
        {"it",
         "bbc-news",
         NULL,
         {"\x1E"
          "s6262632d6e657773"},
         1},
        {"it OR xylophone",
         "bbc-news",
         NULL,
         {"\x1E"
          "s6262632d6e657773"},
         1},
        {NULL,
         NULL,
         "en",
         {"\x1E"
          "len"},
         1},
        {NULL, NULL, NULL, {NULL}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct index_request req = {.from = INT64_MIN, .to = INT64_MAX};
        struct index_matcher *m = NULL;
        const char *const *keys;
        size_t n;
        err_clear(&err);
        if (cases[i].q)
            assert_int_equal(
                query_parse(&a, cases[i].q, strlen(cases[i].q), (struct query_node **)&req.q, &err),
                0);
        if (cases[i].source) {
            req.sources = &cases[i].source;
            req.n_sources = 1;
        }
        req.language = cases[i].language;
        assert_int_equal(index_matcher_new(&m, &req, &err), 0);
        index_matcher_keys(m, &keys, &n);
        if (n != cases[i].n_keys) {
            for (size_t k = 0; k < n; k++)
                print_message("case %zu: key %s\n", i, keys[k]);
        }
        assert_int_equal(n, cases[i].n_keys);
        for (size_t j = 0; j < 4 && cases[i].want[j]; j++) {
            bool found = false;
            for (size_t k = 0; k < n; k++)
                found |= strcmp(keys[k], cases[i].want[j]) == 0;
            if (!found)
                print_message("case %zu: key %s missing\n", i, cases[i].want[j]);
            assert_true(found);
        }
        index_matcher_free(m);
    }
    arena_release(&a);
}

int main(void)
{
    const struct CMUnitTest corpus_tests[] = {
        cmocka_unit_test(hand_picked_requests_give_the_backends_answers),
        cmocka_unit_test(the_bench_query_mix_gives_the_backends_answers),
        cmocka_unit_test(random_requests_give_the_backends_answers),
        cmocka_unit_test(malformed_trees_are_refused_as_the_backends_refuse_them),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_articles_terms_are_its_tokens_stems_and_meta_terms_once_each),
        cmocka_unit_test(keys_are_the_rarest_required_terms),
    };
    int rc = cmocka_run_group_tests_name("match over the corpus", corpus_tests, setup, teardown);
    return rc | cmocka_run_group_tests_name("match", tests, NULL, NULL);
}
