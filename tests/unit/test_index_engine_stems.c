/* A word inside a language filter whose stem of it differs
 * (src/index/plan.h stems_cover): the documents of that language hold its
 * "~stem" beside every occurrence, so a search that scores no leaf leaves
 * the word itself out of its OR of forms (index/engine/iter.c). These tests
 * check which plans say so, and that over segments of documents in
 * languages that stem a word away, that keep it as it is (Russian keeps a
 * Latin word) and that have no stemmer, before and after a merge with
 * deletions, every search without relevancy matches what relevancy (every
 * form a scored leaf, none left out) matches: the same total and the same
 * documents, with and without language filters, over all fields and over
 * titles. Outside a language filter, such a search reads the word's
 * residual (plan.h resid) in place of its list: the tests check which plans
 * do, which documents a segment's residual holds, and the same sameness
 * with relevancy (which reads the word itself). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "index/engine/internal.h"
#include "index/engine/resid.h"
#include "index/engine/writer.h"
#include "test_engine_search.h"
#include "index/plan.h"
#include "util/arena.h"
#include "text/text.h"
#include "util/hash.h"

#define NDOC 900

/* Words English stems away (people -> peopl, running -> run, elections ->
 * elect, houses -> hous, walked -> walk; German and French only some of
 * them, Russian none), words English keeps (market, quickly -> quick is
 * away, apple -> appl too), and fillers. */
static const char *const vocab[] = {"people", "running", "elections", "houses",
                                    "walked", "market",  "apple",     "quickly"};
#define NVOCAB (sizeof vocab / sizeof *vocab)

struct doc {
    int64_t id, pub;
    const char *language;
    char title[64], content[400];
};

static struct doc docs[NDOC];
static unsigned rng;

static unsigned next(void)
{
    return test_engine_rand(&rng);
}

static size_t put_word(char *out, size_t size)
{
    unsigned x = next() % 10;
    if (x < 6)
        return (size_t)snprintf(out, size, "%s ", vocab[next() % NVOCAB]);
    return (size_t)snprintf(out, size, "x%u ", next() % 60);
}

/* The documents of seed: languages that stem English words away or not
 * (ru keeps them) and, one document in 40, of a language without a stemmer
 * (zh, he) or none, which holds fillers, "people" and now and then
 * "walked". */
static void make_docs(unsigned seed)
{
    static const char *const langs[] = {"en", "de", "fr", "es", "ru"};
    static const char *const bare[] = {"zh", "he", ""};
    rng = seed;
    for (size_t i = 0; i < NDOC; i++) {
        struct doc *d = &docs[i];
        d->pub = 1700000000 + (int64_t)(next() % 86400);
        d->id = d->pub << 20 | (int64_t)(seed % 64) << 12 | (int64_t)i;
        d->language = langs[next() % 5];
        size_t t = 0, c = 0;
        for (int k = 0; k < 4; k++)
            t += put_word(d->title + t, sizeof d->title - t);
        for (int k = 0; k < 30; k++)
            c += put_word(d->content + c, sizeof d->content - c);
        if (i % 40 == 7) {
            d->language = bare[(i / 40) % 3];
            snprintf(d->content, sizeof d->content, "x%u people x%u%s", next() % 60, next() % 60,
                     i % 80 == 7 ? " walked" : "");
            /* in a title alone, now and then */
            snprintf(d->title, sizeof d->title, i % 120 == 7 ? "people x1" : "x2 x3");
        }
    }
}

static struct eng_segment *build(size_t from, size_t to)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    for (size_t i = from; i < to; i++) {
        const struct doc *d = &docs[i];
        char url[64], json[96], meta[16];
        snprintf(url, sizeof url, "https://test.example/%lld", (long long)d->id);
        int jn = snprintf(json, sizeof json, "{\"url\":\"%s\"}", url);
        snprintf(meta, sizeof meta, d->language[0] ? "a l%s" : "a", d->language);
        struct eng_row r = {.id = d->id,
                            .seq = (int64_t)i + 1,
                            .title = d->title,
                            .description = "",
                            .content = d->content,
                            .language = d->language,
                            .meta_terms = meta,
                            .src = 0,
                            .url_hash = hash_bytes64(url, strlen(url)),
                            .json = json,
                            .json_len = (size_t)jn};
        assert_int_equal(eng_builder_add(b, &r), 0);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    return seg;
}

/* Whether the plan of q with language filter lang leaves q's word out of
 * its OR of forms where no leaf is scored. */
static bool leaves_word_out(const char *q, const char *lang)
{
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .language = lang};
    struct plan_tree pt;
    struct arena a;
    struct err err;
    arena_init(&a, 0);
    err_clear(&err);
    assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
    assert_int_equal(index_plan_build(&pt, &a, &req, &err), 0);
    const struct plan *p = pt.root;
    if (p->kind == PLAN_AND) /* the word, then the language's term */
        p = p->kids[0];
    bool out = p->kind == PLAN_OR && p->stems_cover;
    if (out) /* the word itself first, one of its forms "~" its stem */
        assert_string_equal(p->kids[0]->terms[0], q);
    arena_release(&a);
    return out;
}

static int cmp_id(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static const char *const queries[] = {
    "people",
    "running",
    "elections",
    "walked",
    "market",
    "people AND market",
    "people OR walked",
    "running NOT people",
    "(people OR houses) AND NOT walked",
    "apple AND (elections OR running)",
    "\"people walked\"",
    "people AND x1",
};

/* Every query, in every sort but relevancy, matches what relevancy matches
 * (every form scored: no word left out). Returns the matches summed. */
static uint64_t same_as_relevancy(struct eng_segment *seg, struct eng_deletions *del)
{
    static const enum index_sort sorts[] = {INDEX_SORT_PUBLISHED_DESC, INDEX_SORT_PUBLISHED_ASC,
                                            INDEX_SORT_POPULARITY};
    static const char *const langs[] = {NULL, "en", "de", "fr", "es", "ru", "zh", "he"};
    static int64_t want[NDOC], got[NDOC]; /* every match: a page as large */
    uint64_t matched = 0;
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        for (size_t l = 0; l < sizeof langs / sizeof *langs; l++) {
            for (unsigned f = 0; f < 2; f++) {
                struct test_engine_search s = {.q = queries[q],
                                               .fields = f ? INDEX_FIELD_TITLE : INDEX_FIELD_ALL,
                                               .sort = INDEX_SORT_RELEVANCY,
                                               .k = NDOC,
                                               .score_all = true,
                                               .language = langs[l],
                                               .deletions = del};
                uint64_t tw = 0, tg = 0;
                size_t nw = test_engine_search(seg, &s, want, &tw);
                qsort(want, nw, sizeof *want, cmp_id);
                for (size_t k = 0; k < sizeof sorts / sizeof *sorts; k++) {
                    s.sort = sorts[k];
                    size_t ng = test_engine_search(seg, &s, got, &tg);
                    qsort(got, ng, sizeof *got, cmp_id);
                    if (tg != tw || ng != nw || memcmp(got, want, nw * sizeof *want) != 0)
                        fail_msg("%s (language %s, fields %u, sort %zu): %llu matches, %llu by "
                                 "relevancy",
                                 queries[q], langs[l] ? langs[l] : "any", s.fields, k,
                                 (unsigned long long)tg, (unsigned long long)tw);
                }
                matched += tw;
            }
        }
    }
    return matched;
}

static void a_word_is_left_out_only_where_the_filter_stems_it_away(void **state)
{
    (void)state;
    assert_true(leaves_word_out("people", "en"));
    assert_true(leaves_word_out("people", "fr"));
    assert_true(leaves_word_out("running", "en"));
    assert_false(leaves_word_out("running", "de")); /* German keeps it */
    assert_false(leaves_word_out("people", "ru"));  /* Russian keeps a Latin word */
    assert_false(leaves_word_out("market", "en"));  /* its own stem */
    assert_false(leaves_word_out("people", NULL));  /* other languages may keep it */
    assert_false(leaves_word_out("people", "zh"));  /* no stemmer */
    assert_false(leaves_word_out("people", "he"));
    assert_false(leaves_word_out("\"people\"", "en")); /* a quoted word has no forms */
}

/* The residual the plan of q with language filter lang reads in place of
 * q's word where it scores nothing; NULL none. */
static const char *residual_of(struct arena *a, const char *q, const char *lang, size_t *len)
{
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .language = lang};
    struct plan_tree pt;
    struct err err;
    err_clear(&err);
    assert_int_equal(query_parse(a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
    assert_int_equal(index_plan_build(&pt, a, &req, &err), 0);
    const struct plan *p = pt.root;
    if (p->kind == PLAN_AND) /* the word, then the language's term */
        p = p->kids[0];
    if (p->kind != PLAN_OR || p->resid == NULL)
        return NULL;
    assert_string_equal(p->kids[0]->terms[0], q); /* in place of the word itself */
    assert_int_equal(p->resid->leaf, -1);         /* never scored */
    *len = p->resid->lens[0];
    return p->resid->terms[0];
}

static void a_word_outside_a_language_filter_is_read_as_its_residual(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    size_t n;
    assert_memory_equal(residual_of(&a, "people", NULL, &n), "people\0", 7);
    assert_int_equal(n, 7); /* the word, then NUL */
    assert_memory_equal(residual_of(&a, "running", NULL, &n), "running\0", 8);
    assert_int_equal(n, 8);
    assert_memory_equal(residual_of(&a, "people", "zh", &n), "people\0", 7); /* no stemmer */
    assert_memory_equal(residual_of(&a, "people", "he", &n), "people\0", 7);
    assert_null(residual_of(&a, "people", "en", &n));     /* one language: stems_cover's */
    assert_null(residual_of(&a, "people", "ru", &n));     /* one language that keeps it */
    assert_null(residual_of(&a, "\"people\"", NULL, &n)); /* a quoted word has no forms */
    arena_release(&a);

    /* The segment's residual of "people" holds the documents whose language
     * puts no "~stem" beside it: Russian (keeps a Latin word), those
     * without a stemmer, and any that keeps it as it is; a word never with
     * a stem beside it is its own (bare), and the segment reads the word. */
    make_docs(5);
    struct eng_segment *seg = build(0, NDOC);
    uint32_t want = 0, df = 0;
    for (size_t i = 0; i < NDOC; i++) {
        char stem[64];
        int n = text_stem(docs[i].language, "people", 6, stem, sizeof stem);
        bool kept = n <= 0 || (n == 6 && memcmp(stem, "people", 6) == 0);
        bool has = strstr(docs[i].title, "people") || strstr(docs[i].content, "people");
        want += kept && has;
        df += has;
    }
    struct eng_term t;
    assert_true(want > 20 && df >= ENG_RESID_MIN_DF && 2 * want <= df); /* kept: worth it */
    assert_true(eng_segment_term(seg, "people", 6, &t));
    assert_int_equal(t.kind & ENG_TERM_RESID, ENG_TERM_RESID);
    assert_true(eng_segment_term(seg, "people\0", 7, &t));
    assert_int_equal(t.df, want);
    assert_int_equal(eng_kind(t.kind), ENG_TERM_STEM); /* field tfs, no positions */
    assert_true(eng_segment_term(seg, "x17", 3, &t));  /* never a stem beside it */
    assert_int_equal(t.kind & (ENG_TERM_RESID | ENG_TERM_BARE), ENG_TERM_BARE);
    assert_false(eng_segment_term(seg, "x17\0", 4, &t));
    eng_segment_unref(seg);
}

/* The residual flags of "people" in seg (ENG_TERM_RESID, ENG_TERM_BARE). */
static unsigned people_flags(const struct eng_segment *seg)
{
    struct eng_term t;
    assert_true(eng_segment_term(seg, "people", 6, &t));
    return t.kind & (ENG_TERM_RESID | ENG_TERM_BARE);
}

static struct eng_segment *merge2(struct eng_segment *a, struct eng_segment *b)
{
    struct eng_segment *in[2] = {a, b}, *merged = NULL;
    struct eng_deletions *del[2] = {NULL, NULL};
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_merge_segments(in, del, 2, &merged, &err), 0);
    return merged;
}

/* A residual as long as its word is left out, the word read as itself; a
 * word never with a stem beside it is bare; a merge keeps a residual where
 * each input kept it or is bare, a bare input's word its part (resid.h),
 * and where their live parts together are still worth it. */
static void a_residual_is_kept_where_it_is_worth_it(void **state)
{
    (void)state;
    struct eng_term t, r;
    make_docs(9);
    for (size_t i = 0; i < NDOC; i++)
        docs[i].language = i < NDOC / 4 ? "en" : "ru"; /* three in four keep "people" */
    struct eng_segment *seg = build(0, NDOC - 40), *small = build(NDOC - 40, NDOC);
    assert_true(eng_segment_term(seg, "people", 6, &t) && t.df >= ENG_RESID_MIN_DF);
    assert_int_equal(people_flags(seg), 0); /* not worth it */
    assert_false(eng_segment_term(seg, "people\0", 7, &t));
    assert_int_equal(people_flags(small), ENG_TERM_BARE); /* Russian only */
    assert_false(eng_segment_term(small, "people\0", 7, &t));
    assert_true(same_as_relevancy(seg, NULL) > 1000);
    assert_true(same_as_relevancy(small, NULL) > 40);
    struct eng_segment *merged = merge2(seg, small);
    assert_int_equal(people_flags(merged), 0); /* one input left it out */
    assert_true(same_as_relevancy(merged, NULL) > 1000);
    eng_segment_unref(merged);
    eng_segment_unref(seg);

    /* a segment of many languages keeps it; merged with the Russian one,
     * the output's holds both parts */
    make_docs(11);
    for (size_t i = NDOC - 40; i < NDOC; i++)
        docs[i].language = "ru";
    eng_segment_unref(small);
    seg = build(0, NDOC - 40);
    small = build(NDOC - 40, NDOC);
    assert_int_equal(people_flags(seg), ENG_TERM_RESID);
    assert_int_equal(people_flags(small), ENG_TERM_BARE);
    merged = merge2(seg, small);
    assert_int_equal(people_flags(merged), ENG_TERM_RESID);
    assert_true(eng_segment_term(seg, "people\0", 7, &r));
    uint32_t want = r.df;
    assert_true(eng_segment_term(small, "people", 6, &t));
    want += t.df;
    assert_true(eng_segment_term(merged, "people\0", 7, &r));
    assert_int_equal(r.df, want);
    assert_true(same_as_relevancy(merged, NULL) > 1000);
    eng_segment_unref(merged);
    eng_segment_unref(small);
    eng_segment_unref(seg);

    /* a kept residual (two in five Russian) and a bare input that together
     * hold more than half of the word: the merge counts both, leaves it out */
    make_docs(13);
    for (size_t i = 0; i < NDOC; i++) {
        docs[i].language = i >= 600 || i % 5 < 2 ? "ru" : "en";
        if (i >= 600) { /* older than the others: each input's docids shifted, none mapped */
            docs[i].pub -= 100000;
            docs[i].id = docs[i].pub << 20 | (int64_t)i;
        }
    }
    seg = build(0, 600);
    small = build(600, NDOC);
    assert_int_equal(people_flags(seg), ENG_TERM_RESID);
    assert_int_equal(people_flags(small), ENG_TERM_BARE);
    merged = merge2(seg, small);
    assert_int_equal(people_flags(merged), 0);
    assert_false(eng_segment_term(merged, "people\0", 7, &r));
    assert_true(same_as_relevancy(merged, NULL) > 1000);
    eng_segment_unref(merged);
    eng_segment_unref(small);
    eng_segment_unref(seg);
}

static void a_segment_of_many_languages_matches_as_relevancy_does(void **state)
{
    (void)state;
    make_docs(3);
    struct eng_segment *seg = build(0, NDOC);
    assert_true(same_as_relevancy(seg, NULL) > 1000);
    eng_segment_unref(seg);
}

/* The documents docs[from, to) with i % 40 == 7 (the unstemmed ones)
 * deleted from seg. */
static struct eng_deletions *delete_unstemmed(const struct eng_segment *seg, size_t from, size_t to)
{
    struct eng_deletions *del = eng_deletions_new(seg->n);
    assert_non_null(del);
    for (size_t i = from; i < to; i++) {
        if (i % 40 != 7)
            continue;
        uint32_t d = eng_segment_find(seg, docs[i].id);
        assert_true(d != ENG_END);
        del->bits[d >> 6] |= (uint64_t)1 << (d & 63);
        del->n++;
        del->ntoken += seg->dl[d];
    }
    return del;
}

static void a_merge_with_deletions_matches_as_relevancy_does(void **state)
{
    (void)state;
    struct eng_segment *in[2], *merged = NULL;
    struct eng_deletions *del[2] = {NULL, NULL};
    struct err err;
    err_clear(&err);
    make_docs(7);
    in[0] = build(0, NDOC / 2);
    in[1] = build(NDOC / 2, NDOC);
    del[1] = delete_unstemmed(in[1], NDOC / 2, NDOC);
    assert_true(same_as_relevancy(in[1], del[1]) > 500);
    assert_int_equal(eng_merge_segments(in, del, 2, &merged, &err), 0);
    struct eng_term t; /* both inputs kept the residual of "people": so does the output */
    assert_true(eng_segment_term(in[0], "people", 6, &t) && (t.kind & ENG_TERM_RESID));
    assert_true(eng_segment_term(in[1], "people", 6, &t) && (t.kind & ENG_TERM_RESID));
    assert_true(eng_segment_term(merged, "people", 6, &t) && (t.kind & ENG_TERM_RESID));
    assert_true(eng_segment_term(merged, "people\0", 7, &t));
    assert_true(same_as_relevancy(merged, NULL) > 1000);
    eng_segment_unref(merged);
    eng_deletions_unref(del[1]);
    for (unsigned j = 0; j < 2; j++)
        eng_segment_unref(in[j]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_word_is_left_out_only_where_the_filter_stems_it_away),
        cmocka_unit_test(a_word_outside_a_language_filter_is_read_as_its_residual),
        cmocka_unit_test(a_residual_is_kept_where_it_is_worth_it),
        cmocka_unit_test(a_segment_of_many_languages_matches_as_relevancy_does),
        cmocka_unit_test(a_merge_with_deletions_matches_as_relevancy_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
