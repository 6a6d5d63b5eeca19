/* Pairs, the engine's next-word index (src/index/engine/pairs.h): a
 * phrase answered from its pair's postings (or driven by its rarest pair)
 * has the same matches, total, instances per field and so relevancy order
 * as the phrase checked by positions alone (eng_snap.doc_at_a_time, the
 * reference), in a built segment where some words are paired and some
 * not, in a field longer than the positions a phrase reads, and in merges
 * whose inputs pair different words and delete documents. */
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
#include "query/query.h"
#include "util/arena.h"
#include "util/hash.h"

#define NDOC 2400
#define PAGE 60

struct doc {
    int64_t id, pub;
    char title[96], content[900];
    bool deleted;
};

static struct doc docs[NDOC];
static unsigned rng;

static unsigned next(void)
{
    return test_engine_rand(&rng);
}

/* A word: "fN" of 12 frequent words (paired), "mN" of 40 middling ones,
 * "rN" of 20,000 rare ones (unpaired at this size), or "lumpy" in the first
 * third of the documents (and make_docs puts it in the last one). */
static int word(char *out, size_t size, size_t i)
{
    unsigned x = next() % 100;
    if (x < 55)
        return snprintf(out, size, "f%u", next() % 12);
    if (x < 80)
        return snprintf(out, size, "m%u", next() % 40);
    if (x < 83 && i < NDOC / 3)
        return snprintf(out, size, "lumpy");
    return snprintf(out, size, "r%u", next() % 20000);
}

static void make_docs(unsigned seed)
{
    rng = seed;
    for (size_t i = 0; i < NDOC; i++) {
        struct doc *d = &docs[i];
        d->pub = 1700000000 + (int64_t)(next() % 86400);
        d->id = d->pub << 20 | (int64_t)i;
        d->deleted = next() % 5 == 0;
        size_t t = 0, c = 0;
        for (int k = 0; k < 6; k++)
            t += (size_t)word(d->title + t, sizeof d->title - t - 1, i), d->title[t++] = ' ';
        d->title[t] = '\0';
        for (int k = 0; k < 80 && c + 16 < sizeof d->content; k++) {
            /* a run of the same word now and then: "f1 f1 f1" */
            if (k > 0 && next() % 9 == 0) {
                size_t e = c - 1, s = e;
                while (s > 0 && d->content[s - 1] != ' ')
                    s--;
                memmove(d->content + c, d->content + s, e - s), c += e - s;
                d->content[c++] = ' ';
                continue;
            }
            c += (size_t)word(d->content + c, sizeof d->content - c - 1, i);
            d->content[c++] = ' ';
        }
        d->content[c] = '\0';
    }
    /* "mid" in 1 document of 97, unpaired: its phrases are checked by positions */
    for (size_t i = 0; i < NDOC; i += 97) {
        struct doc *d = &docs[i];
        memmove(d->content + 14, d->content, strlen(d->content) + 1);
        memcpy(d->content, "mid f1 mid f2 ", 14);
    }
    struct doc *last = &docs[NDOC - 1]; /* "lumpy" once after the first third */
    memmove(last->content + 9, last->content, strlen(last->content) + 1);
    memcpy(last->content, "lumpy f1 ", 9);
}

static struct eng_segment *build(const struct doc *const *ds, size_t n, const char *content)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    for (size_t i = 0; i < n; i++)
        test_engine_add(b, ds[i]->id, (int64_t)i + 1, content && i == 0 ? "long" : ds[i]->title,
                        "f1 f2 pairs", content && i == 0 ? content : ds[i]->content);
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    return seg;
}

/* q over the segment, by pairs (positions false) or by positions alone:
 * its total and a page in sort, ids into out. */
static size_t page(struct eng_segment *seg, struct eng_deletions *del, const char *q,
                   unsigned fields, enum index_sort sort, bool positions, int64_t *out,
                   uint64_t *total)
{
    struct test_engine_search s = {.q = q,
                                   .fields = fields,
                                   .sort = sort,
                                   .k = PAGE,
                                   .positions = positions,
                                   .deletions = del};
    return test_engine_search(seg, &s, out, total);
}

static const char *const queries[] = {
    "\"f1 f2\"",
    "\"f1 f1\"",
    "\"f2 f1 f2\"",
    "\"f1 f2 f3\"",
    "\"f1 r7\"",
    "\"r7 f1\"",
    "\"m3 f1\"",
    "\"f3 m5 f4\"",
    "\"lumpy f1\"",
    "\"f1 lumpy\"",
    "\"f5 f6\" AND m2",
    "\"f1 f2\" OR r3",
    "f4 -\"f1 f2\"",
    "\"f9 f9 f9\"",
    "\"r1 r2\"",
    "\"f1 f2\" AND \"f2 f3\"",
    "\"f10 f11\" AND NOT \"f11 f10\"",
    "\"m7 f1\"",
    "\"f2 m7 m7\"",
    /* relevancy over ORs of phrases, some answered by pairs, some not */
    "\"mid f1\" OR \"f2 f3\"",
    "\"mid f2\" OR f5 OR \"f6 f7\"",
    /* proximity: a pair either way is a window; else positions */
    "\"f1 f2\"~0",
    "\"f2 f1\"~3",
    "\"f1 m3\"~2 OR f9",
    "\"mid f2\"~1",
    "\"f1 f1\"~2",
    "\"f3 lumpy\"~4",
};

/* Every query, over all fields and over titles, in three sorts: pairs give
 * what positions give. Returns how many matched at all. */
static size_t same_as_positions(struct eng_segment *seg, struct eng_deletions *del)
{
    static const enum index_sort sorts[] = {INDEX_SORT_PUBLISHED_DESC, INDEX_SORT_PUBLISHED_ASC,
                                            INDEX_SORT_RELEVANCY};
    static int64_t want[PAGE], got[PAGE];
    size_t matched = 0;
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        for (unsigned f = 0; f < 2; f++) {
            unsigned fields = f ? INDEX_FIELD_TITLE : INDEX_FIELD_ALL;
            for (size_t s = 0; s < sizeof sorts / sizeof *sorts; s++) {
                uint64_t tw = 0, tg = 0;
                size_t nw = page(seg, del, queries[q], fields, sorts[s], true, want, &tw);
                size_t ng = page(seg, del, queries[q], fields, sorts[s], false, got, &tg);
                if (tg != tw || ng != nw || memcmp(got, want, nw * sizeof *want) != 0)
                    fail_msg("%s (fields %u, sort %zu): %llu by pairs, %llu by positions",
                             queries[q], fields, s, (unsigned long long)tg, (unsigned long long)tw);
                matched += tw > 0;
            }
        }
    }
    return matched;
}

static bool paired(const struct eng_segment *seg, const char *w)
{
    struct eng_term t;
    return eng_segment_term(seg, w, strlen(w), &t) && (t.kind & ENG_TERM_PAIRED);
}

static bool has_word(const struct eng_segment *seg, const char *w)
{
    struct eng_term t;
    return eng_segment_term(seg, w, strlen(w), &t);
}

/* The pair term of words a and b into *out; false when seg has none. */
static bool pair_of(const struct eng_segment *seg, const char *a, const char *b,
                    struct eng_term *out)
{
    char s[64];
    size_t n = eng_pair_str(s, a, strlen(a), b, strlen(b));
    return eng_segment_term(seg, s, n, out);
}

static void a_built_segment_answers_phrases_by_pairs_as_by_positions(void **state)
{
    (void)state;
    static const struct doc *all[NDOC];
    make_docs(7);
    for (size_t i = 0; i < NDOC; i++)
        all[i] = &docs[i];
    struct eng_segment *seg = build(all, NDOC, NULL);
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_segment_check(seg, 1, &err), 0);
    /* the frequent words are paired, the rare ones are not */
    assert_true(paired(seg, "f1") && paired(seg, "m3"));
    assert_false(paired(seg, "r7"));
    assert_false(paired(seg, "mid"));
    struct eng_term f1f2;
    assert_true(pair_of(seg, "f1", "f2", &f1f2));
    assert_int_equal(eng_kind(f1f2.kind), ENG_TERM_PAIR);
    assert_false(pair_of(seg, "f1", "r7", &f1f2));
    assert_true(same_as_positions(seg, NULL) > 40);
    /* a file's pairs read back as built (what a server maps) */
    uint8_t *img = NULL;
    size_t len = 0;
    struct eng_segment *mapped = NULL;
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &mapped, &err), 0);
    assert_int_equal(eng_segment_check(mapped, 1, &err), 0);
    same_as_positions(mapped, NULL);
    eng_segment_unref(mapped);
    free(img);
    eng_segment_unref(seg);
}

/* A content of ENG_POS_MAX + 100 times "f1", then "f1 f4 f1 f2": a
 * phrase reads a word's first ENG_POS_MAX positions in a field, so "f1 f4"
 * does not match there (f1's occurrence is past them) and its pair must
 * not either; "f2 f1" and "f1 f1" count the instances within them. */
static void a_field_longer_than_a_phrase_reads_pairs_the_same_instances(void **state)
{
    (void)state;
    static const struct doc *all[NDOC];
    size_t reps = ENG_POS_MAX + 100;
    char *content = malloc(reps * 3 + 32);
    assert_non_null(content);
    for (size_t i = 0; i < reps; i++)
        memcpy(content + i * 3, "f1 ", 3);
    strcpy(content + reps * 3, "f1 f4 f1 f2");
    make_docs(13);
    for (size_t i = 0; i < NDOC; i++)
        all[i] = &docs[i];
    struct eng_segment *seg = build(all, 600, content);
    assert_true(paired(seg, "f1") && paired(seg, "f4"));
    int64_t with[PAGE], without[PAGE];
    uint64_t tw = 0, tn = 0;
    size_t nw = page(seg, NULL, "\"f1 f4\"", INDEX_FIELD_CONTENT, INDEX_SORT_PUBLISHED_DESC, true,
                     with, &tw);
    size_t nn = page(seg, NULL, "\"f1 f4\"", INDEX_FIELD_CONTENT, INDEX_SORT_PUBLISHED_DESC, false,
                     without, &tn);
    assert_int_equal(tn, tw);
    for (size_t i = 0; i < nw; i++)
        assert_true(with[i] != docs[0].id); /* the long field is not a match */
    (void)nn;
    same_as_positions(seg, NULL);
    eng_segment_unref(seg);
    free(content);
}

/* Deletes the documents of in that hold w, but the first when keep. */
static struct eng_deletions *delete_holding(struct eng_segment *in, const struct doc *const *ds,
                                            size_t n, const char *w, bool keep)
{
    struct eng_deletions *del = eng_deletions_new(in->n);
    bool kept = !keep;
    assert_non_null(del);
    for (size_t i = 0; i < n; i++) {
        if (strstr(ds[i]->content, w) == NULL && strstr(ds[i]->title, w) == NULL)
            continue;
        if (!kept) {
            kept = true;
            continue;
        }
        uint32_t d = eng_segment_find(in, ds[i]->id);
        assert_true(d != ENG_END);
        del->bits[d >> 6] |= (uint64_t)1 << (d & 63);
        del->n++;
        del->ntoken += in->dl[d];
    }
    return del;
}

/* Inputs that pair different words ("lumpy" is frequent in the first
 * input, absent from the second and in one document of the third), with
 * deletions; the merge keeps a pair only where both words stay paired,
 * and answers as positions do. */
static void merges_keep_pairs_only_where_every_input_paired_both_words(void **state)
{
    (void)state;
    static const struct doc *part[3][NDOC];
    struct eng_segment *in[3], *merged = NULL, *alone = NULL;
    struct eng_deletions *deletions[3] = {NULL}, *most[3] = {NULL};
    const size_t cut[4] = {0, NDOC / 3, NDOC * 2 / 3, NDOC};
    size_t np[3] = {0};
    struct err err;

    make_docs(21);
    for (unsigned j = 0; j < 3; j++) {
        for (size_t i = cut[j]; i < cut[j + 1]; i++)
            part[j][np[j]++] = &docs[i];
        in[j] = build(part[j], np[j], NULL);
        for (size_t i = 0; i < np[j]; i++) {
            if (!part[j][i]->deleted)
                continue;
            uint32_t d = eng_segment_find(in[j], part[j][i]->id);
            assert_true(d != ENG_END);
            if (deletions[j] == NULL)
                assert_non_null(deletions[j] = eng_deletions_new(in[j]->n));
            deletions[j]->bits[d >> 6] |= (uint64_t)1 << (d & 63);
            deletions[j]->n++;
            deletions[j]->ntoken += in[j]->dl[d];
        }
        same_as_positions(in[j], deletions[j]);
    }
    assert_true(paired(in[0], "lumpy"));
    assert_false(has_word(in[1], "lumpy"));
    assert_true(has_word(in[2], "lumpy"));
    assert_false(paired(in[2], "lumpy"));
    err_clear(&err);
    assert_int_equal(eng_merge_segments(in, deletions, 3, &merged, &err), 0);
    assert_int_equal(eng_segment_check(merged, 1, &err), 0);
    assert_true(paired(merged, "f1") && paired(merged, "m3"));
    struct eng_term pt;
    assert_true(pair_of(merged, "f1", "f2", &pt));
    /* the third input did not pair it: neither does the merge */
    assert_false(paired(merged, "lumpy"));
    assert_false(pair_of(merged, "lumpy", "f1", &pt));
    assert_true(same_as_positions(merged, NULL) > 40);

    /* paired in every input, but one document of it left: rare in the merge */
    for (unsigned j = 0; j < 3; j++) {
        assert_true(paired(in[j], "m7"));
        most[j] = delete_holding(in[j], part[j], np[j], "m7 ", j == 0);
    }
    assert_int_equal(eng_merge_segments(in, most, 3, &alone, &err), 0);
    assert_true(alone->n >= 2 * ENG_PAIR_RATIO);
    assert_true(has_word(alone, "m7"));
    assert_false(paired(alone, "m7"));
    assert_true(paired(alone, "f1"));
    same_as_positions(alone, NULL);
    eng_segment_unref(alone);
    for (unsigned j = 0; j < 3; j++)
        eng_deletions_unref(most[j]);
    for (unsigned j = 0; j < 3; j++) {
        eng_segment_unref(in[j]);
        eng_deletions_unref(deletions[j]);
    }
    eng_segment_unref(merged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_built_segment_answers_phrases_by_pairs_as_by_positions),
        cmocka_unit_test(a_field_longer_than_a_phrase_reads_pairs_the_same_instances),
        cmocka_unit_test(merges_keep_pairs_only_where_every_input_paired_both_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
