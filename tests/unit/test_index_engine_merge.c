/* Merges of encoded postings (src/index/engine/merge.c): the merge of
 * segments, with deletions, is byte for byte the segment a build of the
 * live documents gives - over postings lists of many blocks, inputs that
 * interleave in time and inputs that follow one another (renumbered by an
 * offset when none of their documents is deleted) - and a field with
 * more occurrences of a word than a cursor hands out is refused, not
 * truncated. (fuzz/fuzz_engine.c check 3 does the same on small inputs.) */
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
#include "index/engine/writer.h"
#include "test_engine_search.h"
#include "text/text.h"
#include "util/hash.h"

#define NDOC 3000
#define VOCAB 300

struct doc {
    int64_t id, pub;
    char title[64], content[600];
    bool deleted;
};

static struct doc docs[NDOC];

/* Deterministic documents: words of a small vocabulary, so that common
 * words have postings lists of many 128-document blocks. */
static void make_docs(unsigned seed)
{
    for (int i = 0; i < NDOC; i++) {
        struct doc *d = &docs[i];
        seed = seed * 1103515245u + 12345u;
        d->pub = 1600000000 + (int64_t)(seed >> 8) % 86400;
        d->id = d->pub << 20 | i;
        d->deleted = seed % 7 == 0;
        size_t used = 0;
        d->title[0] = d->content[0] = '\0';
        snprintf(d->title, sizeof d->title, "w%u w%u", seed % VOCAB, (seed >> 5) % 17);
        for (int k = 0; k < 40; k++) {
            seed = seed * 1103515245u + 12345u;
            unsigned w = (seed >> 16) % VOCAB;
            w = w * w / VOCAB; /* skewed: low numbers common */
            used += (size_t)snprintf(d->content + used, sizeof d->content - used, "%sw%u",
                                     used ? " " : "", w);
        }
    }
}

static struct eng_segment *build(const struct doc *const *ds, size_t n, const char *content)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    for (size_t i = 0; i < n; i++) {
        char url[64], json[160];
        snprintf(url, sizeof url, "https://merge.example/%lld", (long long)ds[i]->id);
        int jn =
            snprintf(json, sizeof json, "{\"url\":\"%s\",\"title\":\"%s\"}", url, ds[i]->title);
        struct eng_row r = {
            .id = ds[i]->id,
            .seq = (int64_t)i + 1,
            .title = ds[i]->title,
            .description = "merged postings",
            .content = content ? content : ds[i]->content,
            .language = "en",
            .meta_terms = "lang:en",
            .src = (uint32_t)(ds[i]->id % 3),
            .url_hash = hash_bytes64(url, strlen(url)),
            .json = json,
            .json_len = (size_t)jn,
        };
        assert_int_equal(eng_builder_add(b, &r), 0);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    return seg;
}

/* k inputs: documents dealt round robin (interleaved in time) or in runs
 * of time (a concatenation); the deleted ones marked in each input. */
static void merge_matches_build(unsigned k, bool runs)
{
    static const struct doc *part[NDOC], *live[NDOC];
    struct eng_segment *in[4], *merged = NULL, *whole;
    struct eng_deletions *deletions[4] = {NULL};
    size_t nlive = 0;
    struct err err;

    for (unsigned j = 0; j < k; j++) {
        size_t np = 0;
        for (int i = 0; i < NDOC; i++) {
            /* runs: by publication time, so the inputs do not overlap */
            unsigned owner = runs ? (unsigned)((docs[i].pub - 1600000000) * k / 86400) : i % k;
            if (owner == j)
                part[np++] = &docs[i];
        }
        in[j] = build(part, np, NULL);
        for (size_t i = 0; i < np; i++) {
            if (!part[i]->deleted)
                continue;
            uint32_t d = eng_segment_find(in[j], part[i]->id);
            assert_true(d != ENG_END);
            if (deletions[j] == NULL)
                assert_non_null(deletions[j] = eng_deletions_new(in[j]->n));
            deletions[j]->bits[d >> 6] |= (uint64_t)1 << (d & 63);
            deletions[j]->n++;
        }
    }
    for (int i = 0; i < NDOC; i++) {
        if (!docs[i].deleted)
            live[nlive++] = &docs[i];
    }
    err_clear(&err);
    assert_int_equal(eng_merge_segments(in, deletions, k, &merged, &err), 0);
    whole = build(live, nlive, NULL);
    assert_int_equal(merged->n, nlive);
    assert_int_equal(eng_segment_check(merged, 3, &err), 0);
    test_engine_same_segment(merged, whole);
    /* a term of many blocks made it across whole */
    struct eng_term t;
    assert_true(eng_segment_term(merged, "w0", 2, &t));
    assert_true(eng_term_nblocks(&t) > 2);
    for (unsigned j = 0; j < k; j++) {
        eng_segment_unref(in[j]);
        eng_deletions_unref(deletions[j]);
    }
    eng_segment_unref(merged);
    eng_segment_unref(whole);
}

static void interleaved_inputs_merge_into_the_built_segment(void **state)
{
    (void)state;
    make_docs(11);
    merge_matches_build(3, false);
    merge_matches_build(4, false);
}

static void time_adjacent_inputs_merge_into_the_built_segment(void **state)
{
    (void)state;
    make_docs(29);
    merge_matches_build(2, true);
    merge_matches_build(4, true);
}

/* Inputs that follow one another in time with none of their documents
 * deleted are renumbered by an offset each (merge.c, map_shift), not
 * through their docid maps: the same bytes; and so beside an input with
 * deletions, which is renumbered through its map. */
static void time_adjacent_inputs_without_deletions_merge_by_an_offset(void **state)
{
    (void)state;
    make_docs(31);
    for (int i = 0; i < NDOC; i++)
        docs[i].deleted = false;
    merge_matches_build(3, true);
    for (int i = 0; i < NDOC; i++) /* deletions in the earliest input's time alone */
        docs[i].deleted = i % 5 == 0 && docs[i].pub - 1600000000 < 86400 / 3;
    merge_matches_build(3, true);
}

/* An input whose stored article is damaged (its compressed frame changed)
 * fails the merge as damaged and is marked so (the writer rebuilds it from
 * the table); the other input is not marked. The articles are read on the
 * thread that compresses the output's store, beside the terms. */
static void a_damaged_stored_article_fails_the_merge_and_marks_its_input(void **state)
{
    (void)state;
    static const struct doc *part[2][NDOC];
    size_t np[2] = {0, 0};
    struct eng_segment *in[2], *merged = NULL;
    struct eng_deletions *deletions[2] = {NULL, NULL};
    struct err err;

    make_docs(41);
    for (int i = 0; i < NDOC; i++)
        part[i % 2][np[i % 2]++] = &docs[i];
    for (int j = 0; j < 2; j++)
        in[j] = build(part[j], np[j], NULL);
    uint32_t d = in[1]->n / 2; /* the middle of one article's frame */
    uint64_t at = (in[1]->doc_off[d] + in[1]->doc_off[d + 1]) / 2;
    assert_true(at < in[1]->dz_len);
    in[1]->dz[at] ^= 0x5a;
    err_clear(&err);
    assert_int_equal(eng_merge_segments(in, deletions, 2, &merged, &err), ERR_PARSE);
    assert_null(merged);
    assert_true(eng_segment_damaged(in[1]));
    assert_false(eng_segment_damaged(in[0]));
    for (int j = 0; j < 2; j++)
        eng_segment_unref(in[j]);
}

/* A content of n times the same word. */
static char *repeated(size_t n)
{
    char *s = malloc(n * 3 + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * 3, "zq ", 3);
    s[n * 3] = '\0';
    return s;
}

static void a_field_past_the_cursors_positions_is_refused_not_cut(void **state)
{
    (void)state;
    make_docs(5);
    const struct doc *one[1] = {&docs[0]}, *two[1] = {&docs[1]}, *both[2];
    struct eng_segment *in[2], *merged = NULL, *whole;
    struct eng_deletions *deletions[2] = {NULL, NULL};
    struct err err;
    both[0] = docs[0].id > docs[1].id ? &docs[0] : &docs[1];
    both[1] = both[0] == &docs[0] ? &docs[1] : &docs[0];

    /* exactly ENG_POS_MAX occurrences: every position read back */
    char *at_cap = repeated(ENG_POS_MAX);
    in[0] = build(one, 1, at_cap);
    in[1] = build(two, 1, at_cap);
    err_clear(&err);
    assert_int_equal(eng_merge_segments(in, deletions, 2, &merged, &err), 0);
    whole = build(both, 2, at_cap);
    test_engine_same_segment(merged, whole);
    eng_segment_unref(merged);
    eng_segment_unref(whole);
    eng_segment_unref(in[0]);
    eng_segment_unref(in[1]);
    free(at_cap);

    /* one more: the merge refuses */
    char *past = repeated(ENG_POS_MAX + 1);
    in[0] = build(one, 1, past);
    in[1] = build(two, 1, NULL);
    merged = NULL;
    assert_int_equal(eng_merge_segments(in, deletions, 2, &merged, &err), ERR_UNSUPPORTED);
    assert_null(merged);
    eng_segment_unref(in[0]);
    eng_segment_unref(in[1]);
    free(past);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interleaved_inputs_merge_into_the_built_segment),
        cmocka_unit_test(time_adjacent_inputs_merge_into_the_built_segment),
        cmocka_unit_test(time_adjacent_inputs_without_deletions_merge_by_an_offset),
        cmocka_unit_test(a_damaged_stored_article_fails_the_merge_and_marks_its_input),
        cmocka_unit_test(a_field_past_the_cursors_positions_is_refused_not_cut),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    text_thread_release();
    return failed;
}
