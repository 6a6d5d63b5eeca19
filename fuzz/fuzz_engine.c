/* libFuzzer harness: the engine's segments and manifest (index/engine/,
 * docs/engine.md "Persistence"). The first byte picks the check:
 *
 *  0  build: the rest is read as small documents (words of a 12-word
 *     vocabulary in title, description or content; a publication time).
 *     A segment is built from them, written to its file image and read
 *     back (eng_segment_from_image, eng_segment_check must pass), and
 *     every one-word query, every two-word AND, OR and AND NOT, and a date
 *     window are answered by eng_search_ids over the image and compared
 *     with a brute-force scan of the documents: the exact total and the
 *     newest-first page; every document's stored JSON (docs.c) comes
 *     back byte for byte from the heap segment and from the image; the
 *     relevancy page with block-max pruning and the tiers of the words of 8
 *     documents or more (tiers.h) is compared with the one that scores every
 *     match; every proximity "a b"~d of two words against a
 *     brute force of positions; every answer (four sorts, nested AND / OR / NOT,
 *     phrase and proximity shapes too) is the same through the set evaluator and
 *     through the document-at-a-time walk (eng_snap.doc_at_a_time).
 *  1  segment: the rest edits a valid segment image ((offset, byte) pairs)
 *     and the checksum is recomputed, so the structure checks are what
 *     stands between the bytes and a search: the reader refuses the image,
 *     or searches over it and reads of its stored documents stay inside
 *     it (ASan) and every document decodes. Then the same image as serve
 *     reads a file (issue 23): no whole check, the columns checked at
 *     open, each term when a search first opens it, each document's CRC
 *     when it is decoded: every search of every sort and shape stays
 *     inside the image (ASan) and a document that decodes is byte for
 *     byte the one built, whatever the edits.
 *  2  manifest: the rest is a manifest image (checksum recomputed):
 *     eng_manifest_parse refuses it, or its image round-trips byte for
 *     byte. The same bytes are then a block's heads (heads.h) of n
 *     postings, n from their first byte: eng_heads_check refuses them, or
 *     the unchecked decoder reads the same heads to the same end, and
 *     their encoding (no longer) decodes to them again.
 *  3  merge: documents as in 0 dealt to up to four segments, some deleted;
 *     a search over those segments answers the same (total, page, every
 *     sort) on one thread and split over two (eng_split); their merge must
 *     equal, byte for byte, the segment built from the live documents and
 *     answer every query of 0 as brute force does.
 * In 0, 1 and the served image of 1, every search is also counted per
 * time bucket and faceted (issue 26: counts.c, facets.c): the buckets sum
 * to the total, and on an edited image both stay inside it (ASan). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/engine/heads.h"
#include "index/engine/internal.h"
#include "index/engine/resid.h"
#include "index/engine/writer.h"
#include "query/query.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/hash.h"
#include "check.h"

/* Words none a prefix of another, which no Snowball stemmer changes but
 * "zqfly": English stems it to "zqfli" (a form no document holds), Russian
 * keeps it, so a search of it outside a language filter reads its stem and
 * its residual (index/engine/resid.h) where nothing is scored: the
 * documents in Russian (one in four) hold the residual. */
static const char *const vocab[] = {"zqk", "zqm", "zqp", "zqx", "zqw", "zqfly",
                                    "zqg", "zqh", "zqj", "zqb", "zqv", "zqz"};
#define NV 12
/* Tiers (tiers.h) from 8 documents: the relevancy pages below are decided
 * by them where they can, the damaged images hold them, merges choose them
 * again. */
#define FUZZ_TIER_MIN_DF 8
#define MAX_DOCS 200
#define NSRC 4

/* The sources' popularity, two equal and one below the unlisted's -1 (a
 * popularity page walks the listed ones, most popular first: sets.c),
 * and that order as a snapshot lists it (state.c). */
static double pop[NSRC] = {0.5, -3.0, -1.0, 0.5};
static uint32_t listed[] = {0, 3, 1};
#define NLISTED (sizeof listed / sizeof *listed)

struct doc {
    int64_t id, pub;
    bool ru;      /* in Russian, else English */
    uint16_t has; /* bit w: vocab[w] occurs */
    char text[3][64];
};

/* --- searching a segment ------------------------------------------------------ */

/* Issue 26 on the same snapshot (counts.c, facets.c): the counts of three
 * buckets spanning the request's window, and (exact: a segment built
 * here) they sum to its total; the facets' columns and counts stay inside
 * the segment, each facet's values at most its matches. */
static void aggregate(struct eng_snap *snap, struct arena *a, const struct index_request *req,
                      uint64_t total, bool exact)
{
    int64_t lo = req->from < STORE_ID_TIME_MIN ? STORE_ID_TIME_MIN : req->from;
    int64_t hi = req->to > STORE_ID_TIME_MAX ? STORE_ID_TIME_MAX : req->to;
    if (lo > hi)
        return;
    int64_t step = (hi - lo) / 3;
    int64_t b[4] = {lo, lo + step, lo + 2 * step, hi + 1};
    size_t nb = step > 0 ? 3 : 1;
    if (nb == 1)
        b[1] = hi + 1;
    uint64_t c[3] = {0, 0, 0};
    struct index_facet_top top[INDEX_FACET_N];
    struct err err;
    err_clear(&err);
    int rc = eng_counts_run(snap, a, req, b, nb, c, &err);
    if (exact)
        CHECK(rc == 0 && c[0] + c[1] + c[2] == total);
    memset(top, 0, sizeof top);
    rc = eng_facets_run(snap, a, req, (1u << INDEX_FACET_N) - 1, 5, top, &err);
    if (exact)
        CHECK(rc == 0);
    for (int f = 0; rc == 0 && f < INDEX_FACET_N; f++) {
        uint64_t sum = 0;
        CHECK(top[f].n <= 5);
        for (size_t i = 0; i < top[f].n; i++)
            sum += top[f].v[i].count;
        CHECK(!exact || sum <= total);
    }
}

/* total and newest-first page of q over seg (NULL q: every document). */
static int search(struct eng_segment *seg, const char *q, int64_t from, int64_t to, uint64_t *total,
                  int64_t *page, size_t *n)
{
    struct eng_snap snap = {0};
    struct eng_segment *segs[1] = {seg};
    struct eng_deletions *deletions[1] = {NULL};
    struct index_request req = {.from = from, .to = to, .limit = 10};
    struct arena a;
    struct err err;
    int64_t *ids = NULL;
    int rc;

    snap.nseg = 1;
    snap.segs = segs;
    snap.deletions = deletions;
    snap.pop = pop;
    snap.npop = NSRC;
    snap.listed = listed;
    snap.nlisted = NLISTED;
    snap.nrow = seg->n;
    snap.ntoken = seg->ntoken;
    arena_init(&a, 0);
    err_clear(&err);
    if (q && query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err) < 0) {
        arena_release(&a);
        return -1;
    }
    for (int sort = 0; sort < 4; sort++) {
        req.sort = (enum index_sort)sort;
        rc = eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, total, &ids, NULL, n, &err);
        CHECK(rc == 0);
        CHECK(*n <= 10 && *n <= *total);
        /* The set evaluator (AND / OR / NOT roots) against the walk of the
         * plan document at a time: the same total, the same page in the
         * same order, relevancy and its pruning included. */
        uint64_t ref_total = 0;
        int64_t *ref = NULL;
        size_t nref = 0;
        snap.doc_at_a_time = true;
        CHECK(eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, &ref_total, &ref, NULL, &nref,
                             &err) == 0);
        snap.doc_at_a_time = false;
        CHECK(ref_total == *total && nref == *n);
        CHECK(nref == 0 || memcmp(ref, ids, nref * sizeof *ref) == 0);
    }
    aggregate(&snap, &a, &req, *total, true);
    /* Block-max pruning against scoring every match: the same total and
     * the same page, in the same order; a page of 2 as well, whose heap is
     * full after two matches of a small segment (the bounds then prune). */
    static const size_t limits[] = {10, 2};
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
        uint64_t pruned_total = 0, all_total = 0;
        int64_t *pruned = NULL, *all = NULL;
        size_t npruned = 0, nall = 0;
        req.sort = INDEX_SORT_RELEVANCY;
        req.limit = limits[li];
        CHECK(eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, &pruned_total, &pruned, NULL,
                             &npruned, &err) == 0);
        snap.score_all = true;
        CHECK(eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, &all_total, &all, NULL, &nall,
                             &err) == 0);
        snap.score_all = false;
        CHECK(pruned_total == all_total && npruned == nall);
        CHECK(nall == 0 || memcmp(pruned, all, nall * sizeof *all) == 0);
    }
    req.limit = 10;
    req.sort = INDEX_SORT_PUBLISHED_DESC;
    rc = eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, total, &ids, NULL, n, &err);
    CHECK(rc == 0);
    if (*n > 0)
        memcpy(page, ids, *n * sizeof *ids);
    arena_release(&a);
    return 0;
}

/* --- 0: built from documents, against brute force ---------------------------- */

static size_t read_docs(const uint8_t *p, size_t len, struct doc *docs)
{
    size_t n = 0, i = 0;
    while (i + 3 <= len && n < MAX_DOCS) {
        struct doc *d = &docs[n];
        memset(d, 0, sizeof *d);
        d->pub = 1600000000 + (int64_t)(p[i] % 16) * 3600;
        d->id = d->pub << 20 | (int64_t)n;
        d->ru = (p[i] >> 4) % 4 == 0;
        unsigned words = 1 + p[i + 1] % 4;
        i += 2;
        for (unsigned k = 0; k < words && i < len; k++, i++) {
            unsigned w = p[i] % NV, field = (p[i] / NV) % 3;
            size_t used = strlen(d->text[field]);
            if (used + strlen(vocab[w]) + 2 < sizeof d->text[field])
                snprintf(d->text[field] + used, sizeof d->text[field] - used, "%s%s",
                         used ? " " : "", vocab[w]);
            d->has |= (uint16_t)(1u << w);
        }
        n++;
    }
    return n;
}

/* What the document store keeps of a doc (any bytes do: it is opaque). */
static int doc_json(const struct doc *d, char *out, size_t cap)
{
    return snprintf(out, cap, "{\"id\":%lld,\"t\":\"%s|%s|%s\"}", (long long)d->id, d->text[0],
                    d->text[1], d->text[2]);
}

/* Every doc's stored JSON comes back from seg (docs.c). */
static void check_docs(const struct doc *docs, size_t n, const struct eng_segment *seg)
{
    struct arena a;
    arena_init(&a, 0);
    for (size_t i = 0; i < n; i++) {
        char want[sizeof docs[i].text + 64];
        const char *got;
        size_t len;
        int wn = doc_json(&docs[i], want, sizeof want);
        uint32_t d = eng_segment_find(seg, docs[i].id);
        CHECK(d != ENG_END);
        CHECK(eng_docs_get(seg, d, &a, &got, &len) == 0);
        CHECK(len == (size_t)wn && memcmp(got, want, len) == 0);
    }
    arena_release(&a);
}

/* The residuals a build keeps (resid.h): a merge against one build keeps
 * every one (UINT32_MAX), since an input that left one out cannot give it
 * back while a build of all the documents may keep it. */
static uint32_t resid_min_df = ENG_RESID_MIN_DF;

static struct eng_segment *build(const struct doc *docs, size_t n)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    CHECK(eng_builder_new(&b) == 0);
    eng_builder_tiers(b, FUZZ_TIER_MIN_DF);
    eng_builder_resid(b, resid_min_df);
    for (size_t i = 0; i < n; i++) {
        char url[64], json[sizeof docs[i].text + 64];
        /* (of the document, not of its place: a merge must find the same) */
        snprintf(url, sizeof url, "https://fuzz.example/%lld", (long long)docs[i].id);
        int jn = doc_json(&docs[i], json, sizeof json);
        struct eng_row r = {
            .id = docs[i].id,
            .seq = (int64_t)i + 1,
            .title = docs[i].text[0],
            .description = docs[i].text[1],
            .content = docs[i].text[2],
            .language = docs[i].ru ? "ru" : "en",
            .meta_terms = docs[i].ru ? "lang:ru" : "lang:en",
            .src = docs[i].id % (NSRC + 1) == NSRC ? ENG_NO_SOURCE : (uint32_t)(docs[i].id % NSRC),
            .url_hash = hash_bytes64(url, strlen(url)),
            .json = json,
            .json_len = (size_t)jn,
        };
        CHECK(eng_builder_add(b, &r) == 0);
    }
    CHECK(eng_builder_finish(b, &seg) == 0);
    eng_builder_free(b);
    return seg;
}

static int cmp_desc(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a > b ? -1 : a < b;
}

/* The positions of word w in field f of d, at most 16, into pos; how many. */
static size_t positions(const struct doc *d, int f, unsigned w, int pos[16])
{
    char copy[64], *save = NULL;
    size_t n = 0, at = 0;
    snprintf(copy, sizeof copy, "%s", d->text[f]);
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save), at++) {
        if (strcmp(t, vocab[w]) == 0 && n < 16)
            pos[n++] = (int)at;
    }
    return n;
}

/* "w1 w2"~d by brute force (docs/query-language.md): in one field, an
 * instance of each at most d + 1 positions apart. Words are one token each. */
static bool near_in(const struct doc *d, unsigned w1, unsigned w2, unsigned dist)
{
    for (int f = 0; f < 3; f++) {
        int pos1[16], pos2[16];
        size_t n1 = positions(d, f, w1, pos1), n2 = positions(d, f, w2, pos2);
        for (size_t i = 0; i < n1; i++)
            for (size_t j = 0; j < n2; j++)
                if (abs(pos1[i] - pos2[j]) <= (int)dist + 1)
                    return true;
    }
    return false;
}

/* Whether word w is in d's title (title:w, docs/query-language.md). */
static bool in_title(const struct doc *d, unsigned w)
{
    int pos[16];
    return positions(d, 0, w, pos) > 0;
}

#define OP_TITLE (-1)    /* title:w1 */
#define OP_TITLE_OR (-2) /* title:w1 OR w2 */

/* The brute-force answer: which documents match, newest first. op 0 w1,
 * 1 AND, 2 OR, 3 AND NOT, 4 + d the proximity "w1 w2"~d, or an OP_TITLE. */
static void expect(const struct doc *docs, size_t n, int op, unsigned w1, unsigned w2, int64_t from,
                   int64_t to, const struct eng_segment *seg, const char *q)
{
    int64_t want[MAX_DOCS], page[10];
    size_t nw = 0, np = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        bool a = docs[i].has >> w1 & 1, b = docs[i].has >> w2 & 1;
        bool m = op >= 4             ? near_in(&docs[i], w1, w2, (unsigned)op - 4)
                 : op == OP_TITLE    ? in_title(&docs[i], w1)
                 : op == OP_TITLE_OR ? in_title(&docs[i], w1) || b
                 : op == 0           ? a
                 : op == 1           ? a && b
                 : op == 2           ? a || b
                                     : a && !b;
        if (m && docs[i].pub >= from && docs[i].pub <= to)
            want[nw++] = docs[i].id;
    }
    qsort(want, nw, sizeof *want, cmp_desc);
    CHECK(search((struct eng_segment *)seg, q, from, to, &total, page, &np) == 0);
    if (total != nw)
        fprintf(stderr, "%s: engine %llu, brute force %zu\n", q, (unsigned long long)total, nw);
    CHECK(total == nw);
    CHECK(np == (nw < 10 ? nw : 10));
    CHECK(memcmp(page, want, np * sizeof *page) == 0);
}

static void check_queries(const struct doc *docs, size_t n, const struct eng_segment *seg,
                          uint8_t salt);

static void check_built(const uint8_t *p, size_t len)
{
    static struct doc docs[MAX_DOCS];
    size_t n = read_docs(p, len, docs);
    if (n == 0)
        return;
    struct eng_segment *heap = build(docs, n), *seg = NULL;
    uint8_t *img = NULL;
    size_t img_len = 0;
    struct err err;
    err_clear(&err);
    if (eng_segment_check(heap, NSRC, &err) != 0)
        fprintf(stderr, "check: %s\n", err.msg);
    CHECK(eng_segment_check(heap, NSRC, &err) == 0);
    CHECK(eng_segment_image(heap, &img, &img_len) == 0);
    CHECK(eng_segment_from_image(img, img_len, &seg, &err) == 0);
    CHECK(eng_segment_check(seg, NSRC, &err) == 0);
    CHECK(seg->n == n && seg->nterms == heap->nterms && seg->ntoken == heap->ntoken);
    check_docs(docs, n, heap);
    check_docs(docs, n, seg);
    check_queries(docs, n, seg, p[0]);
    eng_segment_unref(seg);
    eng_segment_unref(heap);
    free(img);
}

/* Every one-word query, AND / OR / AND NOT with three partners per word
 * (chosen by salt) and a date window over seg, against brute force. */
static void check_queries(const struct doc *docs, size_t n, const struct eng_segment *seg,
                          uint8_t salt)
{
    char q[64];
    for (unsigned w1 = 0; w1 < NV; w1++) {
        snprintf(q, sizeof q, "%s", vocab[w1]);
        expect(docs, n, 0, w1, w1, INT64_MIN, INT64_MAX, seg, q);
        /* a column-restricted term: its set from its heads, its relevancy
         * page weighed in its column (rank.c) */
        snprintf(q, sizeof q, "title:%s", vocab[w1]);
        expect(docs, n, OP_TITLE, w1, w1, INT64_MIN, INT64_MAX, seg, q);
        for (unsigned k = 1; k <= 3; k++) { /* three partners per word, chosen by the input */
            unsigned w2 = (w1 + k * (1 + salt % 5)) % NV;
            if (w2 == w1)
                continue;
            snprintf(q, sizeof q, "%s AND %s", vocab[w1], vocab[w2]);
            expect(docs, n, 1, w1, w2, INT64_MIN, INT64_MAX, seg, q);
            snprintf(q, sizeof q, "%s OR %s", vocab[w1], vocab[w2]);
            expect(docs, n, 2, w1, w2, INT64_MIN, INT64_MAX, seg, q);
            snprintf(q, sizeof q, "%s NOT %s", vocab[w1], vocab[w2]);
            expect(docs, n, 3, w1, w2, INT64_MIN, INT64_MAX, seg, q);
            snprintf(q, sizeof q, "title:%s OR %s", vocab[w1], vocab[w2]);
            expect(docs, n, OP_TITLE_OR, w1, w2, INT64_MIN, INT64_MAX, seg, q);
            unsigned dist = (k + salt) % 3; /* a proximity, either order */
            snprintf(q, sizeof q, "\"%s %s\"~%u", vocab[k & 1 ? w2 : w1], vocab[k & 1 ? w1 : w2],
                     dist);
            expect(docs, n, 4 + (int)dist, w1, w2, INT64_MIN, INT64_MAX, seg, q);
            /* A phrase: no brute force of positions here, but search()
             * compares its pruned relevancy page with the exhaustive one. */
            uint64_t total;
            int64_t page[10];
            size_t np;
            snprintf(q, sizeof q, "\"%s %s\" OR %s", vocab[w1], vocab[w2], vocab[w2]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            /* Nested shapes: search() compares the set evaluator with the
             * document-at-a-time walk in every sort. */
            unsigned w3 = (w2 + 1 + salt % 3) % NV, w4 = (w1 + 5) % NV;
            snprintf(q, sizeof q, "(%s OR %s) AND (%s OR %s) NOT %s", vocab[w1], vocab[w2],
                     vocab[w3], vocab[w1], vocab[w4]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            snprintf(q, sizeof q, "%s %s %s", vocab[w1], vocab[w2], vocab[w3]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            /* restricted terms in a plain plan and in one that is not */
            snprintf(q, sizeof q, "title:%s AND (%s OR title:%s)", vocab[w1], vocab[w2], vocab[w3]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            snprintf(q, sizeof q, "(title:%s AND %s) OR title:\"%s %s\"", vocab[w3], vocab[w1],
                     vocab[w1], vocab[w2]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            snprintf(q, sizeof q, "%s OR (%s AND \"%s %s\")", vocab[w3], vocab[w1], vocab[w1],
                     vocab[w2]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            snprintf(q, sizeof q, "(\"%s %s %s\"~1 OR %s) NOT \"%s %s\"~0", vocab[w1], vocab[w2],
                     vocab[w3], vocab[w4], vocab[w2], vocab[w4]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            /* A scored proximity beside a term, under an AND and an OR: the
             * page bounded from their words weighed (bounds.c). */
            snprintf(q, sizeof q, "\"%s %s\"~%u AND (%s OR %s)", vocab[w1], vocab[w2], dist,
                     vocab[w3], vocab[w4]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
            snprintf(q, sizeof q, "\"%s %s\"~%u OR %s", vocab[w2], vocab[w1], dist + 1, vocab[w3]);
            CHECK(search((struct eng_segment *)seg, q, INT64_MIN, INT64_MAX, &total, page, &np) ==
                  0);
        }
        int64_t from = 1600000000 + (int64_t)(w1 % 8) * 3600;
        snprintf(q, sizeof q, "%s", vocab[w1]);
        expect(docs, n, 0, w1, w1, from, from + 4 * 3600, seg, q);
    }
}

/* --- split: one search over two threads against one ---------------------------- */

/* Every sort of q over the k segments in (some documents deleted) gives the
 * same total and page on one thread as split over two (eng_split). */
static void check_split_query(struct eng_snap *snap, const char *q, int64_t from, int64_t to)
{
    struct index_request req = {.from = from, .to = to, .limit = 7, .offset = 3};
    struct arena a;
    struct err err;
    arena_init(&a, 0);
    err_clear(&err);
    if (query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err) < 0) {
        arena_release(&a);
        return;
    }
    for (int sort = 0; sort < 4; sort++) {
        uint64_t t1 = 0, t2 = 0;
        int64_t *p1 = NULL, *p2 = NULL;
        struct eng_doc_ref *r1 = NULL, *r2 = NULL;
        size_t n1 = 0, n2 = 0;
        req.sort = (enum index_sort)sort;
        CHECK(eng_search_ids(snap, &a, &req, ENG_SPLIT_NEVER, &t1, &p1, &r1, &n1, &err) == 0);
        CHECK(eng_search_ids(snap, &a, &req, ENG_SPLIT_ALWAYS, &t2, &p2, &r2, &n2, &err) == 0);
        CHECK(t1 == t2 && n1 == n2);
        CHECK(n1 == 0 || memcmp(p1, p2, n1 * sizeof *p1) == 0);
        /* each hit's reference is its live document (what the page reads) */
        for (size_t i = 0; i < n1; i++) {
            CHECK(r1[i].seg == r2[i].seg && r1[i].doc == r2[i].doc);
            CHECK(r1[i].seg < snap->nseg && r1[i].doc < snap->segs[r1[i].seg]->n);
            CHECK(snap->segs[r1[i].seg]->ids[r1[i].doc] == p1[i]);
            CHECK(!eng_deletions_has(snap->deletions[r1[i].seg], r1[i].doc));
        }
    }
    arena_release(&a);
}

static void check_split(struct eng_segment **in, struct eng_deletions **deletions, unsigned k,
                        uint8_t salt)
{
    struct eng_snap snap = {0};
    char q[64];
    snap.nseg = k;
    snap.segs = in;
    snap.deletions = deletions;
    snap.pop = pop;
    snap.npop = NSRC;
    snap.listed = listed;
    snap.nlisted = NLISTED;
    for (unsigned j = 0; j < k; j++) {
        snap.nrow += in[j]->n - (deletions[j] ? deletions[j]->n : 0);
        snap.ntoken += in[j]->ntoken;
    }
    if (snap.nrow == 0)
        return;
    for (unsigned w1 = 0; w1 < NV; w1++) {
        unsigned w2 = (w1 + 1 + salt % 5) % NV, w3 = (w2 + 1 + salt % 3) % NV;
        snprintf(q, sizeof q, "%s", vocab[w1]);
        check_split_query(&snap, q, INT64_MIN, INT64_MAX);
        check_split_query(&snap, q, 1600000000 + (int64_t)(w1 % 8) * 3600,
                          1600000000 + (int64_t)(w1 % 8 + 4) * 3600);
        snprintf(q, sizeof q, "%s %s", vocab[w1], vocab[w2]);
        check_split_query(&snap, q, INT64_MIN, INT64_MAX);
        snprintf(q, sizeof q, "%s OR %s NOT %s", vocab[w1], vocab[w2], vocab[w3]);
        check_split_query(&snap, q, INT64_MIN, INT64_MAX);
        snprintf(q, sizeof q, "\"%s %s\" OR %s", vocab[w1], vocab[w2], vocab[w3]);
        check_split_query(&snap, q, INT64_MIN, INT64_MAX);
    }
}

/* --- 3: merged segments against one build --------------------------------------- */

#define MERGE_K 4

/* The documents are dealt to up to MERGE_K segments (interleaved in time, so
 * the merge interleaves by id, or in runs, so it concatenates), some deleted;
 * the merge of those segments (index/engine/merge.c) must be byte for byte
 * the segment built from the live documents, and answer as brute force. */
static void check_merged(const uint8_t *p, size_t len)
{
    static struct doc docs[MAX_DOCS], part[MAX_DOCS], live[MAX_DOCS];
    struct eng_segment *in[MERGE_K] = {NULL}, *merged = NULL, *whole;
    struct eng_deletions *deletions[MERGE_K] = {NULL};
    uint8_t piece[MAX_DOCS], *img1 = NULL, *img2 = NULL;
    size_t n = read_docs(p, len, docs), nlive = 0, len1 = 0, len2 = 0;
    struct err err;

    if (n == 0) /* (len == 0 among them: p[0] is read below) */
        return;
    unsigned k = 1 + p[0] % MERGE_K;
    bool runs = p[0] & 0x10;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[(i * 7 + 1) % len];
        piece[i] = (uint8_t)(runs ? i * k / n : b % k);
        if (b & 0x80)
            piece[i] |= 0x80; /* deleted */
        else
            live[nlive++] = docs[i];
    }
    resid_min_df = UINT32_MAX; /* (every build of this check) */
    for (unsigned j = 0; j < k; j++) {
        size_t np = 0;
        for (size_t i = 0; i < n; i++) {
            if ((piece[i] & 0x7f) == j)
                part[np++] = docs[i];
        }
        in[j] = build(part, np);
        for (size_t i = 0; i < n; i++) {
            if ((piece[i] & 0x7f) != j || !(piece[i] & 0x80))
                continue;
            uint32_t d = eng_segment_find(in[j], docs[i].id);
            CHECK(d != ENG_END);
            if (deletions[j] == NULL)
                CHECK((deletions[j] = eng_deletions_new(in[j]->n)) != NULL);
            deletions[j]->bits[d >> 6] |= (uint64_t)1 << (d & 63);
            deletions[j]->n++;
        }
    }
    check_split(in, deletions, k, p[0]);
    err_clear(&err);
    CHECK(eng_merge_segments_tiered(in, deletions, k, FUZZ_TIER_MIN_DF, UINT32_MAX, &merged,
                                    &err) == 0);
    whole = build(live, nlive);
    resid_min_df = ENG_RESID_MIN_DF;
    CHECK(eng_segment_check(merged, NSRC, &err) == 0);
    CHECK(eng_segment_image(merged, &img1, &len1) == 0);
    CHECK(eng_segment_image(whole, &img2, &len2) == 0);
    CHECK(len1 == len2 && memcmp(img1, img2, len1) == 0);
    if (nlive > 0)
        check_queries(live, nlive, merged, p[0]);
    for (unsigned j = 0; j < k; j++) {
        eng_segment_unref(in[j]);
        eng_deletions_unref(deletions[j]);
    }
    eng_segment_unref(merged);
    eng_segment_unref(whole);
    free(img1);
    free(img2);
}

/* --- 1: a damaged segment image ------------------------------------------------ */

static uint8_t *base_img;
static size_t base_len;
static char *base_json[MAX_DOCS]; /* each document's JSON as built */
static size_t base_jlen[MAX_DOCS];

static void base_make(void)
{
    static const uint8_t seed[] = {3, 2, 0,  13, 5,  1, 7, 3, 1,  2, 3, 9, 3,  40,
                                   2, 1, 25, 2,  11, 3, 4, 0, 1,  2, 1, 3, 36, 9,
                                   2, 5, 6,  7,  8,  1, 0, 2, 33, 4, 2, 3, 0};
    static struct doc docs[MAX_DOCS];
    size_t n = read_docs(seed, sizeof seed, docs);
    struct eng_segment *seg = build(docs, n);
    struct arena a;
    CHECK(seg->n <= MAX_DOCS);
    arena_init(&a, 0);
    for (uint32_t d = 0; d < seg->n; d++) {
        const char *json;
        CHECK(eng_docs_get(seg, d, &a, &json, &base_jlen[d]) == 0);
        CHECK((base_json[d] = malloc(base_jlen[d] + 1)) != NULL);
        memcpy(base_json[d], json, base_jlen[d]);
    }
    arena_release(&a);
    CHECK(eng_segment_image(seg, &base_img, &base_len) == 0);
    eng_segment_unref(seg);
}

/* Every sort of q over seg, answers unchecked: a damaged segment answers
 * what its checks let through, or nothing (eng_segment_damaged). */
static void search_any(struct eng_segment *seg, const char *q)
{
    struct eng_segment *segs[1] = {seg};
    struct eng_deletions *deletions[1] = {NULL};
    struct eng_snap snap = {.nseg = 1,
                            .segs = segs,
                            .deletions = deletions,
                            .pop = pop,
                            .npop = NSRC,
                            .listed = listed,
                            .nlisted = NLISTED};
    struct index_request req = {.from = INT64_MIN, .to = INT64_MAX, .limit = 10};
    struct arena a;
    struct err err;

    snap.nrow = seg->n;
    snap.ntoken = seg->ntoken;
    arena_init(&a, 0);
    err_clear(&err);
    if (q == NULL || query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err) == 0) {
        for (int sort = 0; sort < 4; sort++) {
            for (int walk = 0; walk < 2; walk++) {
                uint64_t total = 0;
                int64_t *ids = NULL;
                size_t n = 0;
                req.sort = (enum index_sort)sort;
                snap.doc_at_a_time = walk;
                if (eng_search_ids(&snap, &a, &req, ENG_SPLIT_NEVER, &total, &ids, NULL, &n,
                                   &err) == 0)
                    CHECK(n <= 10 && n <= total);
            }
        }
        aggregate(&snap, &a, &req, 0, false);
    }
    arena_release(&a);
}

/* The image read as serve reads a segment file: the columns checked, then
 * searched; each term is checked when first opened, each document's CRC
 * when it is decoded (docs/engine.md "Damaged files"). */
static void check_served(const uint8_t *img, size_t len)
{
    struct eng_segment *seg = NULL;
    struct err err;
    err_clear(&err);
    if (eng_segment_from_image(img, len, &seg, &err) < 0)
        return;
    if (eng_segment_check_columns(seg, NSRC, &err) == 0) {
        for (unsigned w = 0; w < NV; w++)
            search_any(seg, vocab[w]);
        search_any(seg, "zqk zqm OR zqp NOT zqx");
        search_any(seg, "\"zqk zqm\" OR (zqp AND zqw)");
        search_any(seg, NULL);
        struct arena a;
        arena_init(&a, 0);
        for (uint32_t d = 0; d < seg->n; d++) {
            const char *json;
            size_t jlen;
            /* never another text than the one built: its checksum */
            if (eng_docs_get(seg, d, &a, &json, &jlen) == 0 && d < MAX_DOCS)
                CHECK(jlen == base_jlen[d] && memcmp(json, base_json[d], jlen) == 0);
        }
        arena_release(&a);
    }
    eng_segment_unref(seg);
}

static void check_damaged(const uint8_t *p, size_t len)
{
    if (base_img == NULL)
        base_make();
    uint8_t *img = malloc(base_len);
    struct eng_segment *seg = NULL;
    struct err err;
    CHECK(img != NULL);
    memcpy(img, base_img, base_len);
    for (size_t i = 0; i + 3 <= len; i += 3) {
        size_t at = ((size_t)p[i] << 8 | p[i + 1]) % base_len;
        img[at] = p[i + 2];
    }
    eng_segment_seal(img, base_len);
    err_clear(&err);
    if (eng_segment_from_image(img, base_len, &seg, &err) == 0) {
        if (eng_segment_check(seg, NSRC, &err) == 0) {
            int64_t page[10];
            size_t n;
            uint64_t total;
            for (unsigned w = 0; w < NV; w++)
                (void)search(seg, vocab[w], INT64_MIN, INT64_MAX, &total, page, &n);
            (void)search(seg, "zqk zqm OR zqp NOT zqx", INT64_MIN, INT64_MAX, &total, page, &n);
            (void)search(seg, NULL, 1600000000, 1600010000, &total, page, &n);
            /* A checked segment's documents all decode. */
            struct arena a;
            arena_init(&a, 0);
            for (uint32_t d = 0; d < seg->n; d++) {
                const char *json;
                size_t jlen;
                CHECK(eng_docs_get(seg, d, &a, &json, &jlen) == 0);
            }
            arena_release(&a);
        }
        eng_segment_unref(seg);
    }
    check_served(img, base_len);
    free(img);
}

/* --- 2: a manifest image --------------------------------------------------------- */

static void check_manifest(const uint8_t *p, size_t len)
{
    uint8_t *img = malloc(len + 1), *again = NULL;
    struct eng_manifest m, m2;
    struct err err;
    size_t again_len = 0;
    CHECK(img != NULL);
    memcpy(img, p, len);
    eng_manifest_seal(img, len);
    err_clear(&err);
    if (eng_manifest_parse(img, len, &m, &err) == 0) {
        CHECK(eng_manifest_image(&m, &again, &again_len) == 0);
        CHECK(again_len == len && memcmp(again, img, len) == 0);
        CHECK(eng_manifest_parse(again, again_len, &m2, &err) == 0);
        CHECK(m2.nseg == m.nseg && m2.nsrc == m.nsrc && m2.applied_seq == m.applied_seq);
        eng_manifest_clear(&m2);
        eng_manifest_clear(&m);
        free(again);
    }
    free(img);
}

/* --- 2 as well: a block's heads ------------------------------------------------ */

static bool heads_equal(const struct eng_heads *a, const struct eng_heads *b, uint32_t n)
{
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (memcmp(a->tf[f], b->tf[f], n * sizeof a->tf[f][0]) != 0)
            return false;
    }
    return true;
}

static void check_heads(const uint8_t *p, size_t len)
{
    static struct eng_heads h, back, again;
    static uint8_t out[ENG_HEADS_MAX_BYTES];
    const char *why = NULL;
    if (len < 1)
        return;
    uint32_t n = p[0] % ENG_BLOCK + 1;
    uint8_t *img =
        malloc(len > 1 ? len - 1 : 1); /* the heads' bytes alone: ASan sees a read past them */
    CHECK(img != NULL);
    memcpy(img, p + 1, len - 1);
    const uint8_t *end = eng_heads_check(img, img + len - 1, n, &h, &why);
    if (end != NULL) {
        CHECK(eng_heads_decode(img, n, &back) == end && heads_equal(&h, &back, n));
        size_t olen = eng_heads_encode(out, &h, n);
        CHECK(olen <= (size_t)(end - img));
        CHECK(eng_heads_check(out, out + olen, n, &again, &why) == out + olen);
        CHECK(heads_equal(&h, &again, n));
    } else {
        CHECK(why != NULL);
    }
    free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 4) {
    case 0:
        check_built(data + 1, size - 1);
        break;
    case 1:
        check_damaged(data + 1, size - 1);
        break;
    case 3:
        check_merged(data + 1, size - 1);
        break;
    default:
        check_manifest(data + 1, size - 1);
        check_heads(data + 1, size - 1);
        break;
    }
    return 0;
}
