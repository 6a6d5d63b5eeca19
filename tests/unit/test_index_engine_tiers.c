/* Tiers (src/index/engine/tiers.h): a relevancy page decided from the
 * frequent terms' tiers is the page of every match scored (the reference,
 * eng_snap.score_all), for single words, ORs and ANDs of them, with
 * deletions, in built and merged segments and from a file; the tier
 * really decides (a tier changed by hand changes the page), and the check
 * of a file's term refuses a tier that disagrees with its list. */
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
#include "index/engine/tiers.h"
#include "index/engine/writer.h"
#include "test_engine_search.h"

#define NDOC 3000
#define PAGE 50
#define SMALL_PAGE 10 /* a page the tiers of this corpus decide alone */
#define MIN_DF 200    /* tiers in a small segment */

struct doc {
    int64_t id, pub;
    char title[80], content[1200];
};

static struct doc docs[NDOC];
static unsigned rng;

static unsigned next(void)
{
    return test_engine_rand(&rng);
}

/* "fN" of 8 frequent words, "mN" of 30 middling ones, "rN" of 5,000 rare. */
static int word(char *out, size_t size)
{
    unsigned x = next() % 100;
    if (x < 40)
        return snprintf(out, size, "f%u", next() % 8);
    if (x < 70)
        return snprintf(out, size, "m%u", next() % 30);
    return snprintf(out, size, "r%u", next() % 5000);
}

/* Documents of 4 to 150 words: the lengths bm25 weighs vary. */
static void make_docs(unsigned seed)
{
    rng = seed;
    for (size_t i = 0; i < NDOC; i++) {
        struct doc *d = &docs[i];
        d->pub = 1700000000 + (int64_t)(next() % 86400);
        d->id = d->pub << 20 | (int64_t)i;
        size_t t = 0, c = 0, nt = 1 + next() % 6, nc = 3 + next() % 145;
        for (size_t k = 0; k < nt; k++)
            t += (size_t)word(d->title + t, sizeof d->title - t - 1), d->title[t++] = ' ';
        d->title[t] = '\0';
        for (size_t k = 0; k < nc && c + 16 < sizeof d->content; k++)
            c += (size_t)word(d->content + c, sizeof d->content - c - 1), d->content[c++] = ' ';
        d->content[c] = '\0';
    }
}

static struct eng_segment *build(size_t from, size_t to, uint32_t min_df)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    eng_builder_tiers(b, min_df);
    for (size_t i = from; i < to; i++)
        test_engine_add(b, docs[i].id, (int64_t)i + 1, docs[i].title, "", docs[i].content);
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    return seg;
}

static size_t page(struct eng_segment *seg, struct eng_deletions *del, const char *q, size_t k,
                   bool score_all, int64_t *out, uint64_t *total)
{
    struct test_engine_search s = {.q = q,
                                   .fields = INDEX_FIELD_ALL,
                                   .sort = INDEX_SORT_RELEVANCY,
                                   .k = k,
                                   .score_all = score_all,
                                   .deletions = del};
    return test_engine_search(seg, &s, out, total);
}

static const char *const queries[] = {
    "f1",
    "f7",
    "m3",
    "f1 OR f2",
    "f1 OR m4",
    "f2 OR f3 OR f4",
    "f1 f2",
    "f3 AND m1",
    "f5 -m2",
    "f1 OR r7",
    "m1 OR m2 OR m3",
    "(f1 OR f2) AND f3",
    "f6 OR \"f1 f2\"",
};

/* Every query at two page sizes: the page and total as when every match
 * is scored. */
static void same_as_scoring_all(struct eng_segment *seg, struct eng_deletions *del)
{
    static const size_t ks[] = {SMALL_PAGE, PAGE, 5 * PAGE};
    static int64_t want[5 * PAGE], got[5 * PAGE];
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
        for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
            uint64_t tw = 0, tg = 0;
            size_t nw = page(seg, del, queries[q], ks[i], true, want, &tw);
            size_t ng = page(seg, del, queries[q], ks[i], false, got, &tg);
            if (tg != tw || ng != nw || memcmp(got, want, nw * sizeof *want) != 0)
                fail_msg("%s (k %zu): %llu matches, %zu on the page; every match scored: %llu, "
                         "%zu",
                         queries[q], ks[i], (unsigned long long)tg, ng, (unsigned long long)tw, nw);
        }
    }
}

static bool tiered(const struct eng_segment *seg, const char *w, struct eng_term *t)
{
    return eng_segment_term(seg, w, strlen(w), t) && (t->kind & ENG_TERM_TIERED);
}

static void a_built_segment_ranks_from_tiers_as_from_every_match(void **state)
{
    (void)state;
    make_docs(3);
    struct eng_segment *seg = build(0, NDOC, MIN_DF);
    struct eng_term t;
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_segment_check(seg, 1, &err), 0);
    /* the frequent words have tiers, the rare ones none */
    assert_true(tiered(seg, "f1", &t) && tiered(seg, "m3", &t));
    assert_false(tiered(seg, "r7", &t));
    struct eng_tier *tier = malloc(sizeof *tier);
    assert_non_null(tier);
    assert_true(tiered(seg, "f1", &t));
    assert_int_equal(eng_tier_read(seg, &t, tier), 0);
    assert_int_equal(tier->n, eng_tier_size(t.df, MIN_DF));
    assert_true(tier->nfront > 0);
    free(tier);
    same_as_scoring_all(seg, NULL);

    /* a quarter of the documents deleted, among them tier documents */
    struct eng_deletions *del = eng_deletions_new(seg->n);
    assert_non_null(del);
    for (uint32_t d = 0; d < seg->n; d += 4) {
        del->bits[d >> 6] |= (uint64_t)1 << (d & 63);
        del->n++;
        del->ntoken += seg->dl[d];
    }
    same_as_scoring_all(seg, del);

    /* from a file, as a server maps it */
    uint8_t *img = NULL;
    size_t len = 0;
    struct eng_segment *mapped = NULL;
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &mapped, &err), 0);
    assert_int_equal(eng_segment_check(mapped, 1, &err), 0);
    same_as_scoring_all(mapped, del);
    eng_segment_unref(mapped);
    free(img);
    eng_deletions_unref(del);
    eng_segment_unref(seg);
}

/* A tier ends with its documents' wf2, a varint each (one byte below
 * 128): one of a document off the page made 127, its score from the tier
 * is far above its own. When the tier decides, the page holds it; the
 * check of the term finds the tier and its list at odds. */
static void a_changed_tier_changes_the_page_and_fails_the_check(void **state)
{
    (void)state;
    make_docs(5);
    struct eng_segment *seg = build(0, NDOC, MIN_DF);
    struct eng_term t;
    struct eng_tier *tier = malloc(sizeof *tier);
    assert_non_null(tier);
    assert_true(tiered(seg, "f1", &t));
    assert_int_equal(eng_tier_read(seg, &t, tier), 0);
    int64_t ids[SMALL_PAGE];
    uint64_t total = 0;
    size_t n = page(seg, NULL, "f1", SMALL_PAGE, false, ids, &total);
    assert_int_equal(n, SMALL_PAGE);
    /* the last tier document off the page, and where its wf2 is */
    uint64_t at = t.off + t.bytes + t.tier_bytes;
    uint32_t last = ENG_END;
    for (uint32_t j = tier->n; j-- > 0 && last == ENG_END;) {
        assert_true(tier->wf2[j] < 100);
        at--;
        bool on = false;
        for (size_t i = 0; i < n; i++)
            on |= ids[i] == seg->ids[tier->doc[j]];
        if (!on)
            last = tier->doc[j];
    }
    assert_true(last != ENG_END);
    seg->post[at] = 127;
    uint64_t total2 = 0;
    n = page(seg, NULL, "f1", SMALL_PAGE, false, ids, &total2);
    bool after = false;
    for (size_t i = 0; i < n; i++)
        after |= ids[i] == seg->ids[last];
    assert_true(after); /* the tier decided the page */
    assert_int_equal(total2, total);
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_segment_check_term(seg, &t, &err), ERR_PARSE);
    free(tier);
    eng_segment_unref(seg);
}

/* Merged segments choose their tiers again (the inputs' are not merged):
 * the merge of two built halves is the build of the whole, tiers and all. */
static void a_merge_chooses_tiers_again(void **state)
{
    (void)state;
    make_docs(9);
    struct eng_segment *in[2] = {build(0, NDOC / 2, MIN_DF), build(NDOC / 2, NDOC, MIN_DF)};
    struct eng_segment *whole = build(0, NDOC, MIN_DF);
    struct eng_deletions *deletions[2] = {NULL, NULL};
    struct eng_segment *merged = NULL, *plain = NULL;
    struct err err;
    err_clear(&err);
    assert_int_equal(
        eng_merge_segments_tiered(in, deletions, 2, MIN_DF, ENG_RESID_MIN_DF, &merged, &err), 0);
    struct eng_term t, tw;
    assert_true(tiered(merged, "f1", &t) && tiered(whole, "f1", &tw));
    assert_true(t.df > tw.df / 2 && t.df == tw.df);
    test_engine_same_segment(merged, whole);
    same_as_scoring_all(merged, NULL);
    /* at the default threshold, none of this size has one */
    assert_int_equal(eng_merge_segments(in, deletions, 2, &plain, &err), 0);
    assert_false(tiered(plain, "f1", &t));
    eng_segment_unref(plain);
    eng_segment_unref(merged);
    eng_segment_unref(whole);
    eng_segment_unref(in[0]);
    eng_segment_unref(in[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_built_segment_ranks_from_tiers_as_from_every_match),
        cmocka_unit_test(a_changed_tier_changes_the_page_and_fails_the_check),
        cmocka_unit_test(a_merge_chooses_tiers_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
