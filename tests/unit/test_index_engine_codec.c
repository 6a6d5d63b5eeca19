/* index/engine/: the postings codec, the cursor (seek, range counts over
 * the skip table), segment images and the MANIFEST, on adversarial shapes
 * chosen by hand: empty and single-posting lists, every document, gaps of
 * the whole segment, lists of exactly one block and one more, runs that
 * straddle block edges. Every answer is compared with a brute-force one
 * over the same docid set, on the heap segment and on its file image. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_engine_search.h"
#include "test_tmpdir.h"

#include "index/engine/bdict.h"
#include "index/engine/columns.h"
#include "index/engine/heads.h"
#include "index/engine/internal.h"
#include "index/engine/segw.h"
#include "query/query.h"
#include "text/text.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/metrics.h"

#define NDOCS 70000 /* > 65,536: docids past 16 bits, gaps past 2 varint bytes */

/* The docid sets of the meta terms "t0".."t8" (docid = position newest first). */
static bool in_set(int set, uint32_t d)
{
    switch (set) {
    case 0:
        return true; /* every document: gaps of 0 */
    case 1:
        return d == 0; /* one posting, the first docid */
    case 2:
        return d == NDOCS - 1; /* one posting, the last docid */
    case 3:
        return d == 0 || d == NDOCS - 1; /* one gap the size of the segment */
    case 4:
        return d < ENG_BLOCK; /* exactly one full block */
    case 5:
        return d <= ENG_BLOCK; /* one block and one more */
    case 6:
        return d % 997 == 0; /* medium gaps, many blocks */
    case 7:
        return (d / 300) % 2 == 0 && d % 3 != 1; /* runs straddling block edges */
    default:
        return d >= NDOCS - 2 * ENG_BLOCK - 1; /* the tail: partial last block */
    }
}
#define NSETS 9

/* Document d's stored JSON: mostly shared bytes, as articles' are. */
static int doc_json(uint32_t d, char *out, size_t cap)
{
    return snprintf(out, cap,
                    "{\"source\":{\"id\":null,\"name\":\"Codec\"},\"title\":\"Article %u of %u\","
                    "\"url\":\"https://codec.example/%u\",\"n\":%u}",
                    d, NDOCS, d, d * 2654435761u);
}

/* Every document's JSON comes back as it went in (docs.c). */
static void check_docs(const struct eng_segment *seg, uint32_t ndocs)
{
    struct arena a;
    arena_init(&a, 0);
    for (uint32_t d = 0; d < ndocs; d += 7) {
        char want[160];
        const char *got;
        size_t len;
        int n = doc_json(d, want, sizeof want);
        assert_int_equal(eng_docs_get(seg, d, &a, &got, &len), 0);
        assert_int_equal(len, (size_t)n);
        assert_memory_equal(got, want, len);
    }
    const char *past;
    size_t past_len;
    assert_int_equal(eng_docs_get(seg, ndocs, &a, &past, &past_len), ERR_PARSE);
    arena_release(&a);
}

/* The first ndocs documents of build()'s (ndocs <= NDOCS), with the
 * document dictionary dict[0, dict_len) given to the builder when
 * dict_len > 0. */
static struct eng_segment *build_docs(uint32_t ndocs, const uint8_t *dict, size_t dict_len)
{
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    char meta[NSETS * 4 + 8];
    assert_int_equal(eng_builder_new(&b), 0);
    if (dict_len > 0)
        eng_builder_docs_dict(b, dict, dict_len);
    /* Added oldest first, as imports mostly come. */
    for (uint32_t i = ndocs; i-- > 0;) {
        size_t n = 0;
        meta[0] = '\0';
        for (int s = 0; s < NSETS; s++) {
            if (in_set(s, i))
                n += (size_t)snprintf(meta + n, sizeof meta - n, "%st%d", n ? " " : "", s);
        }
        char url[48], json[160];
        snprintf(url, sizeof url, "https://codec.example/%u", i);
        int jn = doc_json(i, json, sizeof json);
        struct eng_row r = {
            .id = (int64_t)(ndocs - i) << 4, /* descending in i: docid i */
            .seq = (int64_t)(ndocs - i),
            .title = "",
            .description = "",
            .content = "",
            .language = "xx",
            .meta_terms = meta,
            .src = ENG_NO_SOURCE,
            .url_hash = hash_bytes64(url, strlen(url)),
            .json = json,
            .json_len = (size_t)jn,
        };
        assert_int_equal(eng_builder_add(b, &r), 0);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    assert_int_equal(seg->n, ndocs);
    return seg;
}

static struct eng_segment *build(void)
{
    return build_docs(NDOCS, NULL, 0);
}

static const struct eng_term *term_of(const struct eng_segment *seg, int set, struct eng_term *out)
{
    char t[8];
    int n = snprintf(t, sizeof t, "%ct%d", ENG_META_MARK, set);
    return eng_segment_term(seg, t, (size_t)n, out) ? out : NULL;
}

static uint32_t brute_count(int set, uint32_t lo, uint32_t hi)
{
    uint32_t n = 0;
    for (uint32_t d = lo; d < hi && d < NDOCS; d++)
        n += in_set(set, d);
    return n;
}

static uint32_t brute_next(int set, uint32_t from)
{
    for (uint32_t d = from; d < NDOCS; d++) {
        if (in_set(set, d))
            return d;
    }
    return ENG_END;
}

/* Every list walked, seeked at hand-picked and pseudo-random targets, and
 * range-counted, against brute force. */
static void check_lists(const struct eng_segment *seg)
{
    static const uint32_t edges[] = {0,         1,         ENG_BLOCK - 1, ENG_BLOCK, ENG_BLOCK + 1,
                                     997,       998,       65535,         65536,     65537,
                                     NDOCS - 2, NDOCS - 1, NDOCS};
    for (int set = 0; set < NSETS; set++) {
        struct eng_term term;
        const struct eng_term *t = term_of(seg, set, &term);
        assert_non_null(t);
        assert_int_equal(t->df, brute_count(set, 0, NDOCS));
        struct eng_cursor c;
        /* the whole list, one posting at a time */
        eng_cursor_init(&c, seg, t);
        uint32_t want = brute_next(set, 0), got = c.doc, n = 0;
        while (want != ENG_END) {
            assert_int_equal(got, want);
            n++;
            want = brute_next(set, want + 1);
            got = eng_cursor_seek(&c, got + 1);
        }
        assert_int_equal(got, ENG_END);
        assert_int_equal(n, t->df);
        /* seeks to edges, forward only, from a fresh cursor each time */
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
            eng_cursor_init(&c, seg, t);
            assert_int_equal(eng_cursor_seek(&c, edges[i]), brute_next(set, edges[i]));
        }
        /* range counts, including empty and inverted ranges */
        uint32_t x = 12345;
        for (int k = 0; k < 200; k++) {
            x = x * 1103515245u + 12345u;
            uint32_t lo = (x >> 8) % (NDOCS + 2);
            x = x * 1103515245u + 12345u;
            uint32_t hi = k % 3 == 0 ? lo + (x >> 8) % 300 : (x >> 8) % (NDOCS + 2);
            eng_cursor_init(&c, seg, t);
            uint32_t expect = hi > lo ? brute_count(set, lo, hi) : 0;
            assert_int_equal(eng_cursor_count_range(&c, lo, hi), expect);
        }
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
            for (size_t j = 0; j < sizeof edges / sizeof edges[0]; j++) {
                eng_cursor_init(&c, seg, t);
                uint32_t expect = edges[j] > edges[i] ? brute_count(set, edges[i], edges[j]) : 0;
                assert_int_equal(eng_cursor_count_range(&c, edges[i], edges[j]), expect);
            }
        }
    }
}

/* The builder's dictionary keeps every term's postings and data as they
 * were added while their arrays move from its arena to the heap and grow
 * there (room 2, 4, 8 ... postings; 32, 64 ... bytes), across terms whose
 * strings are longer and shorter than a hash slot's eight bytes, a data
 * array whose first need is past the arena's room, and a term without
 * data; then again after the dictionary is cleared and refilled. */
static void builder_terms_keep_their_postings_as_their_arrays_grow(void **state)
{
    (void)state;
    enum { TERMS = 3000 };
    struct eng_bdict d = {0};
    for (int round = 0; round < 2; round++) {
        uint32_t id[TERMS];
        for (int i = 0; i < TERMS; i++) {
            char s[64];
            int n = snprintf(s, sizeof s, i % 2 ? "w%d" : "a-longer-term-%d", i);
            assert_int_equal(eng_bdict_find(&d, s, (size_t)n, hash_bytes64(s, (size_t)n),
                                            i % 7 ? ENG_TERM_EXACT : ENG_TERM_META, &id[i]),
                             0);
            assert_int_equal(id[i], (uint32_t)i);
        }
        /* term i gets i % 300 postings; posting k of it data of (k + i) % 50 + 1
         * bytes, the first of term 5 a 100-byte one (past the arena's room) */
        for (uint32_t k = 0; k < 300; k++) {
            for (int i = 0; i < TERMS; i++) {
                struct eng_bterm *t = &d.terms[id[i]];
                if (k >= (uint32_t)(i % 300))
                    continue;
                bool meta = eng_kind(t->kind) == ENG_TERM_META;
                size_t len = i == 5 && k == 0 ? 100 : (k + (uint32_t)i) % 50 + 1;
                assert_int_equal(eng_bdict_posting_room(&d, t, meta ? 0 : t->dlen + len), 0);
                t->pst[t->n++] = (struct eng_bpost){k, t->dlen};
                if (!meta) {
                    memset(t->data + t->dlen, (int)((k + (uint32_t)i) & 0xff), len);
                    t->dlen += (uint32_t)len;
                }
            }
        }
        for (int i = 0; i < TERMS; i++) {
            const struct eng_bterm *t = &d.terms[id[i]];
            char s[64];
            int n = snprintf(s, sizeof s, i % 2 ? "w%d" : "a-longer-term-%d", i);
            assert_int_equal(t->len, (uint32_t)n);
            assert_memory_equal(t->s, s, (size_t)n);
            uint32_t again;
            assert_int_equal(eng_bdict_find(&d, s, (size_t)n, hash_bytes64(s, (size_t)n),
                                            ENG_TERM_EXACT, &again),
                             0);
            assert_int_equal(again, id[i]);
            assert_int_equal(t->n, (uint32_t)(i % 300));
            bool meta = eng_kind(t->kind) == ENG_TERM_META;
            uint32_t off = 0;
            for (uint32_t k = 0; k < t->n; k++) {
                assert_int_equal(t->pst[k].doc, k);
                assert_int_equal(t->pst[k].off, off);
                if (meta)
                    continue;
                size_t len = i == 5 && k == 0 ? 100 : (k + (uint32_t)i) % 50 + 1;
                for (size_t b = 0; b < len; b++)
                    assert_int_equal(t->data[off + b], (k + (uint32_t)i) & 0xff);
                off += (uint32_t)len;
            }
            assert_int_equal(t->dlen, meta ? 0 : off);
        }
        /* half the terms released one by one, as eng_builder_finish does */
        for (int i = 0; i < TERMS; i += 2)
            eng_bdict_term_release(&d.terms[id[i]]);
        eng_bdict_clear(&d);
        assert_int_equal(d.n, 0);
    }
    eng_bdict_free(&d);
}

static void varints_round_trip_at_every_width(void **state)
{
    (void)state;
    static const uint32_t v[] = {
        0,       1,       127,       128,       16383,          16384,
        2097151, 2097152, 268435455, 268435456, UINT32_MAX - 1, UINT32_MAX};
    uint8_t buf[8];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = eng_varint_put(buf, v[i]);
        uint32_t back = 0;
        assert_true(n >= 1 && n <= 5);
        assert_ptr_equal(eng_varint_get(buf, &back), buf + n);
        assert_int_equal(back, v[i]);
    }
}

/* Docid blocks (FOR-128): every width 0..32 and every block length
 * 1..ENG_BLOCK, random gaps with one at the width's largest value, read
 * back from a buffer cut right after the block (ASan: no read past it),
 * after a previous docid and from "before 0" (UINT32_MAX); the same run read
 * as plain values (eng_unpack, the heads' tfs' reader) too. */
static void docid_blocks_round_trip_at_every_width_and_length(void **state)
{
    (void)state;
    uint32_t gaps[ENG_BLOCK], ids[ENG_BLOCK];
    uint8_t out[ENG_BLOCK_MAX_BYTES];
    uint64_t seed = 12345;
    for (unsigned w = 0; w <= 32; w++) {
        uint32_t top = w == 0 ? 0 : w == 32 ? UINT32_MAX : (1u << w) - 1;
        for (uint32_t n = 1; n <= ENG_BLOCK; n++) {
            for (uint32_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                gaps[i] = w == 0 ? 0 : (uint32_t)(seed >> 32) & top;
            }
            gaps[n / 2] = top; /* the width is the largest gap's */
            size_t len = eng_pack(out, gaps, n);
            assert_int_equal(out[0], w);
            assert_int_equal(len, 1 + eng_packed_bytes(n, out[0]));
            uint8_t *cut = malloc(len);
            assert_non_null(cut);
            memcpy(cut, out, len);
            uint32_t before = n % 2 ? UINT32_MAX : 1000;
            eng_unpack(cut + 1, len - 1, n, cut[0], ids); /* the packed run as plain values */
            assert_memory_equal(ids, gaps, n * sizeof *gaps);
            eng_block_decode(cut, n, before, ids);
            uint32_t want = before; /* wrapping as the decoder's sum does */
            for (uint32_t i = 0; i < n; i++) {
                want += gaps[i] + 1;
                assert_int_equal(ids[i], want);
            }
            free(cut);
        }
    }
}

/* A length's byte (relevancy's bound before dl[d]) never stands for more
 * than the length, is monotone, and is close: exact below 128, within
 * 1/16 below 32 x 1024, the largest byte for anything longer. */
static void length_bytes_are_monotone_lower_bounds(void **state)
{
    (void)state;
    uint8_t last = 0;
    for (uint64_t dl = 0; dl <= UINT32_MAX; dl += dl < 70000 ? 1 : dl / 1000) {
        uint8_t c = eng_norm_of((uint32_t)dl);
        uint32_t least = eng_norm_length(c);
        assert_true(c >= last);
        assert_true(least <= dl);
        if (dl < 128)
            assert_int_equal(least, dl);
        else if (dl < 32 * 1024)
            assert_true(dl - least <= dl / 16);
        else if (dl >= 31744 + 1024)
            assert_int_equal(c, 255);
        if (c > last) /* a new byte starts at its own least length */
            assert_int_equal(least, dl);
        last = c;
    }
    assert_int_equal(eng_norm_of(UINT32_MAX), 255);
    assert_int_equal(eng_norm_length(255), 31744);
}

static void postings_of_every_shape_read_back_in_heap_and_file(void **state)
{
    (void)state;
    struct eng_segment *seg = build(), *img_seg = NULL;
    uint8_t *img = NULL;
    size_t len = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_segment_check(seg, 0, &err), 0);
    check_lists(seg);
    /* 70,000 documents: the store has its own dictionary, and pays. */
    assert_true(seg->dict_len > 0);
    /* (LZ4 alone finds next to nothing to repeat in 120 bytes; with the
     * dictionary the store is 3.0 times smaller than the JSON here: 2.80
     * MB of 8.43. zstd's frames passed dz_len < 40 bytes a document, a
     * hair more than LZ4's 40.04.) */
    size_t json_bytes = 0;
    for (uint32_t d = 0; d < NDOCS; d++) {
        char one[160];
        json_bytes += (size_t)doc_json(d, one, sizeof one);
    }
    assert_true(seg->dz_len * 11 / 4 < json_bytes);
    check_docs(seg, NDOCS);
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &img_seg, &err), 0);
    assert_int_equal(eng_segment_check(img_seg, 0, &err), 0);
    assert_int_equal(img_seg->nterms, seg->nterms);
    check_lists(img_seg);
    check_docs(img_seg, NDOCS);
    /* The URL-hash table finds every document. */
    for (uint32_t d = 0; d < NDOCS; d += 777) {
        char url[48];
        snprintf(url, sizeof url, "https://codec.example/%u", d);
        uint64_t h = hash_bytes64(url, strlen(url));
        uint32_t k = eng_segment_pk_first(img_seg, h);
        assert_true(k < NDOCS && img_seg->pk_hash[k] == h);
        assert_int_equal(img_seg->pk_doc[k], d);
    }
    /* A changed byte anywhere after the header fails the checksum. */
    for (size_t at = 88; at < len; at += len / 50) { /* (the header: 88 bytes) */
        img[at] ^= 0x40;
        assert_int_equal(eng_segment_check(img_seg, 0, &err), ERR_PARSE);
        img[at] ^= 0x40;
    }
    /* A header that disagrees with the length is refused at once. */
    struct eng_segment *bad = NULL;
    assert_int_equal(eng_segment_from_image(img, len - 8, &bad, &err), ERR_PARSE);
    assert_null(bad);
    eng_segment_unref(img_seg);
    eng_segment_unref(seg);
    free(img);
}

/* Text documents whose tf per field and length vary with their number. */
static struct eng_segment *build_text(uint32_t ndocs)
{
    static const char *const filler[] = {"river", "stone", "cloud", "bread"};
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    for (uint32_t i = 0; i < ndocs; i++) {
        char title[256] = "", desc[256] = "", content[512] = "", url[48];
        size_t n = 0;
        for (uint32_t k = 0; k < i % 5; k++)
            n += (size_t)snprintf(title + n, sizeof title - n, "alpha ");
        n = 0;
        for (uint32_t k = 0; k < (i * 7) % 4; k++)
            n += (size_t)snprintf(desc + n, sizeof desc - n, "alphas ");
        n = 0;
        for (uint32_t k = 0; k < (i * 13) % 23; k++)
            n += (size_t)snprintf(content + n, sizeof content - n, "%s ",
                                  k % 7 == 3 ? "alpha" : filler[(i + k) % 4]);
        snprintf(url, sizeof url, "https://text.example/%u", i);
        struct eng_row r = {
            .id = (1600000000 + (int64_t)(ndocs - i)) << 20, /* as store ids: time first */
            .seq = (int64_t)(i + 1),
            .title = title,
            .description = desc,
            .content = content,
            .language = "en",
            .meta_terms = i % 2 ? "lang:en" : "",
            .src = ENG_NO_SOURCE,
            .url_hash = hash_bytes64(url, strlen(url)),
        };
        assert_int_equal(eng_builder_add(b, &r), 0);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    return seg;
}

/* Every block's maximum weighted frequency and minimum length, against
 * what its postings hold; returns the blocks seen. */
static uint32_t check_block_maxima(const struct eng_segment *seg)
{
    uint32_t blocks = 0;
    struct eng_term_iter it;
    struct eng_term term, *t = &term;
    for (bool more = eng_term_iter_at(&it, seg, 0, t); more; more = eng_term_iter_next(&it)) {
        struct eng_cursor c;
        eng_cursor_init(&c, seg, t);
        for (uint32_t b = 0; b < eng_term_nblocks(t); b++, blocks++) {
            uint32_t wf2 = 0, dl = UINT32_MAX, tf[ENG_FIELDS];
            unsigned mask;
            assert_int_equal(c.blk, b);
            for (uint32_t d = c.doc; d != ENG_END && c.blk == b; d = eng_cursor_seek(&c, d + 1)) {
                eng_cursor_data(&c, &mask, tf, NULL);
                uint32_t w = 0;
                for (unsigned f = 0; f < ENG_FIELDS; f++)
                    w += eng_wf2[f] * tf[f];
                wf2 = w > wf2 ? w : wf2;
                dl = seg->dl[d] < dl ? seg->dl[d] : dl;
            }
            const struct eng_skip *sk = &c.skip[b];
            assert_int_equal(sk->wf2_max, wf2);
            assert_int_equal(sk->dl_min, dl);
            if (eng_kind(t->kind) == ENG_TERM_META)
                assert_int_equal(sk->wf2_max, 0);
        }
    }
    return blocks;
}

/* A block maximum one too low (pruning would drop a match) or a length
 * one too high, at *wf2_max / *dl_min inside img, is refused by the check
 * `newsd index verify` runs; put back, the image passes again. */
/* The maxima *wf2_max and *dl_min of a skip table, or of a one-block
 * list's dictionary entry, where they are the varints whose first bytes
 * are wf2_max and dl_min (their low 7 bits the values' low 7, neither 0
 * nor 127 here): either one wrong is refused. */
static void wrong_maxima_are_refused(uint8_t *img, size_t len, const struct eng_segment *seg,
                                     uint32_t *wf2_max, uint32_t *dl_min)
{
    struct err err;
    err_clear(&err);
    (*wf2_max)--;
    eng_segment_seal(img, len);
    assert_int_equal(eng_segment_check(seg, 0, &err), ERR_PARSE);
    (*wf2_max)++;
    (*dl_min)++;
    eng_segment_seal(img, len);
    assert_int_equal(eng_segment_check(seg, 0, &err), ERR_PARSE);
    (*dl_min)--;
    eng_segment_seal(img, len);
    assert_int_equal(eng_segment_check(seg, 0, &err), 0);
}

static void wrong_entry_maxima_are_refused(uint8_t *img, size_t len, const struct eng_segment *seg,
                                           uint8_t *wf2_max, uint8_t *dl_min)
{
    struct err err;
    err_clear(&err);
    assert_true((*wf2_max & 0x7f) > 0 && (*dl_min & 0x7f) < 0x7f);
    for (int k = 0; k < 3; k++) {
        *wf2_max = (uint8_t)(*wf2_max - (k == 0));
        *dl_min = (uint8_t)(*dl_min + (k == 1));
        eng_segment_seal(img, len);
        assert_int_equal(eng_segment_check(seg, 0, &err), k < 2 ? ERR_PARSE : 0);
        *wf2_max = (uint8_t)(*wf2_max + (k == 0));
        *dl_min = (uint8_t)(*dl_min - (k == 1));
    }
}

/* Format 4 folds the field mask into the first field's tf: every mask at
 * tfs around each varint width comes back, as the first field and as a
 * later one. */
static void field_masks_and_term_frequencies_round_trip_at_every_width(void **state)
{
    (void)state;
    static const uint32_t tfs[] = {1, 2, 16, 17, 2048, 2049, 262144, 262145, (1u << 29) - 1};
    uint8_t buf[16];
    for (unsigned mask = 1; mask < 8; mask++) {
        for (size_t i = 0; i < sizeof tfs / sizeof tfs[0]; i++) {
            size_t n = 0;
            for (unsigned f = 0; f < ENG_FIELDS; f++)
                if (mask & (1u << f))
                    n += eng_posting_tf_put(buf + n, mask, f, tfs[i]);
            const uint8_t *p = buf;
            unsigned back;
            uint32_t tf;
            p = eng_posting_head(p, &back, &tf);
            assert_int_equal(back, mask);
            assert_int_equal(tf, tfs[i]);
            for (unsigned f = (unsigned)__builtin_ctz(mask) + 1; f < ENG_FIELDS; f++) {
                if (!(mask & (1u << f)))
                    continue;
                p = eng_posting_tf_next(p, &tf);
                assert_int_equal(tf, tfs[i]);
            }
            assert_ptr_equal(p, buf + n);
            /* One byte for the usual posting: one field, tf <= 16. */
            if (tfs[i] <= 16 && (mask & (mask - 1)) == 0)
                assert_int_equal(n, 1);
        }
    }
}

/* Random heads of n postings: mask 1 << field alone where one_field, else any nonzero mask
 * (some blocks one mask throughout); tfs small, now and then up to the largest (2^29). */
static void random_heads(struct eng_heads *h, uint32_t n, uint64_t *seed, int one_field)
{
    unsigned uniform = 0; /* a mask for the whole block, or 0: one a posting */
    for (uint32_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005u + 1442695040888963407u;
        uint32_t r = (uint32_t)(*seed >> 33);
        if (i == 0 && (r >> 20 & 1))
            uniform = r % 7 + 1;
        unsigned mask = one_field >= 0 ? 1u << one_field : uniform ? uniform : r % 7 + 1;
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            uint32_t tf = (r >> (4 + 3 * f)) & 3;
            if ((r >> 8 & 63) == 0)
                tf = (r & 1) ? (1u << 29) - 1 : 1u << 20;
            h->tf[f][i] = mask >> f & 1 ? tf + 1 : 0;
        }
    }
}

/* The next of the seed's LCG draws (random_heads' generator), its high bits. */
static uint64_t lcg_next(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005u + 1442695040888963407u;
    return *seed >> 33;
}

static void assert_heads_equal(const struct eng_heads *a, const struct eng_heads *b, uint32_t n)
{
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        assert_memory_equal(a->tf[f], b->tf[f], n * sizeof a->tf[f][0]);
}

/* Format 10: a block's heads come back in both forms (varint under ENG_HEADS_PACKED_MIN
 * postings, bit-packed from it on) at every length, from a buffer cut right after them, through
 * the decoder and the checked decoder alike, any subset of them picked alone (eng_heads_pick),
 * which are in each set of fields through the bitmaps alone too; a one-field block of small tfs
 * takes its run's bits and a byte of states and one of width, where varints took a byte a posting.
 */
static void block_heads_round_trip_in_both_forms(void **state)
{
    (void)state;
    static struct eng_heads h, back, checked;
    uint8_t out[ENG_HEADS_MAX_BYTES];
    uint64_t seed = 7;
    for (uint32_t n = 1; n <= ENG_BLOCK; n++) {
        for (int one = -1; one < ENG_FIELDS; one++) {
            for (int rep = 0; rep < 4; rep++) {
                random_heads(&h, n, &seed, one);
                size_t len = eng_heads_encode(out, &h, n);
                assert_true(len <= ENG_HEADS_MAX_BYTES);
                uint8_t *cut = malloc(len);
                assert_non_null(cut);
                memcpy(cut, out, len);
                memset(&back, 0xff, sizeof back);
                assert_ptr_equal(eng_heads_decode(cut, n, &back), cut + len);
                assert_heads_equal(&h, &back, n);
                const char *why = NULL;
                assert_ptr_equal(eng_heads_check(cut, cut + len, n, &checked, &why), cut + len);
                assert_heads_equal(&h, &checked, n);
                /* picked: a random ascending subset, each slot as decoded, the rest untouched */
                uint8_t js[ENG_BLOCK];
                uint32_t nj = 0;
                uint64_t every = 1 + lcg_next(&seed) % 8;
                for (uint32_t i = 0; i < n; i++) {
                    if (lcg_next(&seed) % every == 0)
                        js[nj++] = (uint8_t)i;
                }
                static struct eng_heads picked;
                memset(&picked, 0xff, sizeof picked);
                eng_heads_pick(cut, n, js, nj, &picked);
                for (uint32_t k = 0, i = 0; i < n; i++) {
                    bool in = k < nj && js[k] == i;
                    k += in;
                    for (unsigned f = 0; f < ENG_FIELDS; f++)
                        assert_int_equal(picked.tf[f][i],
                                         in || n < ENG_HEADS_PACKED_MIN ? h.tf[f][i] : UINT32_MAX);
                }
                for (unsigned cols = 1; cols < 8; cols++) {
                    uint64_t in[ENG_BLOCK / 64];
                    eng_heads_in_fields(cut, n, cols, in);
                    for (uint32_t i = 0; i < ENG_BLOCK; i++)
                        assert_int_equal(in[i / 64] >> (i % 64) & 1,
                                         i < n && (eng_heads_mask(&h, i) & cols) != 0);
                }
                free(cut);
            }
        }
        /* content only, tfs 1..4: 2 bits a posting */
        for (uint32_t i = 0; i < n; i++) {
            h.tf[0][i] = h.tf[1][i] = 0;
            h.tf[2][i] = i % 4 + 1;
        }
        size_t len = eng_heads_encode(out, &h, n);
        if (n >= ENG_HEADS_PACKED_MIN)
            assert_int_equal(len, 2 + eng_packed_bytes(n, 2));
        else
            assert_int_equal(len, n);
    }
}

/* Damaged heads are refused by the checked decoder, never read past their bytes (ASan: each
 * copy cut to its length): a field state of 3, state bits past the fields, a bitmap's spare bit,
 * an empty or full "some" bitmap, a width past 29, every truncation, a posting in no field. */
static void damaged_block_heads_are_refused(void **state)
{
    (void)state;
    static struct eng_heads h, back;
    uint8_t out[ENG_HEADS_MAX_BYTES];
    const uint32_t n = 20; /* bitmaps of 3 bytes, 4 spare bits */
    for (uint32_t i = 0; i < n; i++) {
        /* title in some, content in all */
        h.tf[0][i] = i % 3 == 0 ? i + 1 : 0;
        h.tf[1][i] = 0;
        h.tf[2][i] = i % 5 + 1;
    }
    size_t len = eng_heads_encode(out, &h, n);
    assert_int_equal(out[0], 2 | 1 << 4);
    const char *why = NULL;
    struct {
        size_t at;
        uint8_t value;
    } edits[] = {
        {0, 3 | 1 << 4},        /* title's state 3 */
        {0, 2 | 1 << 4 | 1 << 6}, /* a state past the three fields */
        {3, 0x10},              /* a spare bit of the bitmap (bits 4-7 of its third byte) */
        {4, 30},                /* title's width past 29 */
        {0, 0},                 /* no field at all: every posting in none */
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        uint8_t *cut = malloc(len);
        assert_non_null(cut);
        memcpy(cut, out, len);
        cut[edits[e].at] = edits[e].value;
        if (e == 2)
            cut[3] |= out[3];
        why = NULL;
        assert_null(eng_heads_check(cut, cut + len, n, &back, &why));
        assert_non_null(why);
        free(cut);
    }
    /* an empty and a full bitmap for title */
    for (int full = 0; full < 2; full++) {
        uint8_t *cut = malloc(len);
        assert_non_null(cut);
        memcpy(cut, out, len);
        memset(cut + 1, full ? 0xff : 0, 3);
        cut[3] &= 0x0f;
        assert_null(eng_heads_check(cut, cut + len, n, &back, &why));
        free(cut);
    }
    for (size_t cutlen = 0; cutlen < len; cutlen++) {
        uint8_t *cut = malloc(cutlen ? cutlen : 1);
        assert_non_null(cut);
        memcpy(cut, out, cutlen);
        uint8_t *at = cutlen ? cut : cut + 1; /* none: no byte to read at all */
        assert_null(eng_heads_check(at, at + cutlen, n, &back, &why));
        free(cut);
    }
    /* the short form: a mask of no field, a head cut short, a second field's tf cut short */
    static const uint8_t shorts[][2] = {{0x00, 0}, {0x86, 0x80}, {0x05, 0x80}};
    for (size_t k = 0; k < sizeof shorts / sizeof shorts[0]; k++) {
        uint8_t *cut = malloc(2);
        assert_non_null(cut);
        memcpy(cut, shorts[k], 2);
        assert_null(eng_heads_check(cut, cut + 2, 1, &back, &why));
        free(cut);
    }
}

/* Postings written through the merge's writer with large and mixed tfs
 * (positions for the exact term) read back exactly, pass the full check
 * and give the block maxima the check recomputes, heap and file alike. */
static void large_term_frequencies_read_back_through_the_writer(void **state)
{
    (void)state;
    enum { N = 300 };
    static uint32_t pos[ENG_FIELDS][ENG_POS_MAX];
    struct eng_segw *w = NULL;
    struct eng_segment *seg = NULL, *img_seg = NULL;
    uint8_t *img = NULL;
    size_t len = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_segw_new(&w, N), 0);
    for (uint32_t d = 0; d < N; d++) {
        char url[48], json[48];
        snprintf(url, sizeof url, "https://tf.example/%u", d);
        int jn = snprintf(json, sizeof json, "{\"d\":%u}", d);
        struct eng_segw_doc doc = {
            .id = (int64_t)(N - d) << 20,
            .dl = 5000 + d,
            .src = ENG_NO_SOURCE,
            .url_hash = hash_bytes64(url, strlen(url)),
        };
        assert_int_equal(eng_segw_doc(w, d, &doc), 0);
        assert_int_equal(eng_segw_json(w, d, json, (size_t)jn), 0);
    }
    /* tf of document d in field f; 0: not in it. */
#define TF_OF(d, f, big) (((d) + (f)) % 3 == 0 ? 0 : ((d)*37 + (f)*11) % (big) + 1)
    const char *names[2] = {"exact", "~stem"};
    const uint32_t big[2] = {ENG_POS_MAX, 1u << 24};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(
            eng_segw_term(w, names[k], strlen(names[k]), k == 0 ? ENG_TERM_EXACT : ENG_TERM_STEM),
            0);
        for (uint32_t d = 0; d < N; d++) {
            uint32_t tf[ENG_FIELDS];
            unsigned mask = 0;
            for (unsigned f = 0; f < ENG_FIELDS; f++) {
                tf[f] = TF_OF(d, f, big[k]);
                mask |= tf[f] ? 1u << f : 0;
                for (uint32_t i = 0; k == 0 && i < tf[f]; i++)
                    pos[f][i] = 3 * i + d % 5;
            }
            if (mask == 0)
                continue;
            assert_int_equal(eng_segw_posting(w, d, mask, tf, (const uint32_t(*)[ENG_POS_MAX])pos),
                             0);
        }
        assert_int_equal(eng_segw_term_end(w), 0);
        if (k == 0) { /* a list of one block between them: its skip table is its maxima */
            assert_int_equal(eng_segw_term(w, "~rare", 5, ENG_TERM_STEM), 0);
            for (uint32_t d = 5; d < N; d += 120) {
                uint32_t tf[ENG_FIELDS] = {0, d % 7 + 1, 0};
                assert_int_equal(eng_segw_posting(w, d, 2, tf, NULL), 0);
            }
            assert_int_equal(eng_segw_term_end(w), 0);
        }
    }
    assert_int_equal(eng_segw_finish(w, &seg), 0);
    eng_segw_free(w);
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &img_seg, &err), 0);
    struct eng_segment *both[2] = {seg, img_seg};
    for (int s = 0; s < 2; s++) {
        assert_int_equal(eng_segment_check(both[s], 0, &err), 0);
        check_block_maxima(both[s]);
        for (int k = 0; k < 2; k++) {
            struct eng_term t;
            assert_true(eng_segment_term(both[s], names[k], strlen(names[k]), &t));
            struct eng_cursor c;
            eng_cursor_init(&c, both[s], &t);
            for (uint32_t d = 0; d < N; d++) {
                uint32_t tf[ENG_FIELDS];
                unsigned mask, expect = 0;
                for (unsigned f = 0; f < ENG_FIELDS; f++)
                    expect |= TF_OF(d, f, big[k]) ? 1u << f : 0;
                if (expect == 0)
                    continue;
                assert_int_equal(eng_cursor_seek(&c, d), d);
                eng_cursor_data(&c, &mask, tf, k == 0 ? pos : NULL);
                assert_int_equal(mask, expect);
                for (unsigned f = 0; f < ENG_FIELDS; f++) {
                    assert_int_equal(tf[f], TF_OF(d, f, big[k]));
                    for (uint32_t i = 0; k == 0 && i < tf[f]; i++)
                        assert_int_equal(pos[f][i], 3 * i + d % 5);
                }
            }
        }
    }
#undef TF_OF
    /* The one-block list: three postings found by a cursor and by the set
     * fill, its maxima checked by `newsd index verify` like any other. */
    struct eng_term rare_term, *rare = &rare_term;
    assert_true(eng_segment_term(img_seg, "~rare", 5, rare));
    assert_int_equal(eng_term_nblocks(rare), 1);
    assert_int_equal(eng_term_skip_bytes(rare), 0); /* its maxima are in its entry */
    struct eng_cursor c;
    eng_cursor_init(&c, img_seg, rare);
    assert_int_equal(eng_cursor_block(&c)->last, 245);
    assert_int_equal(eng_cursor_block(&c)->wf2_max, 3 * 7); /* d = 125: tf 7 in the description */
    assert_int_equal(eng_cursor_seek(&c, 6), 125);
    assert_int_equal(eng_cursor_seek(&c, 246), ENG_END);
    eng_cursor_init(&c, img_seg, rare);
    assert_int_equal(eng_cursor_count_range(&c, 5, 246), 3);
    eng_cursor_init(&c, img_seg, rare);
    assert_int_equal(eng_cursor_count_range(&c, 6, 245), 1);
    uint64_t bits[(N + 63) / 64] = {0};
    assert_int_equal(eng_postings_fill(img_seg, rare, 0, N, bits, 0), 3);
    assert_true(bits[5 / 64] >> 5 & 1 && bits[125 / 64] >> (125 % 64) & 1 &&
                bits[245 / 64] >> (245 % 64) & 1);
    /* its entry ends with its maxima */
    struct eng_term_iter it;
    struct eng_term at;
    uint8_t v[5];
    assert_true(eng_term_iter_at(&it, img_seg, rare->idx, &at));
    uint8_t *dl_at = (uint8_t *)(uintptr_t)it.p - eng_varint_put(v, rare->dl_min);
    uint8_t *wf2_at = dl_at - eng_varint_put(v, rare->wf2_max);
    assert_int_equal(*wf2_at & 0x7f, rare->wf2_max & 0x7f);
    assert_int_equal(*dl_at & 0x7f, rare->dl_min & 0x7f);
    wrong_entry_maxima_are_refused(img, len, img_seg, wf2_at, dl_at);
    eng_segment_unref(img_seg);
    eng_segment_unref(seg);
    free(img);
}

/* A poll's segment takes the document dictionary it is given rather than
 * train one (eng_builder_docs_dict), and its documents read back through
 * it, in heap and file; one too small for a dictionary goes without, one
 * large enough trains its own. */
static void a_segment_takes_the_document_dictionary_it_is_given(void **state)
{
    (void)state;
    struct eng_segment *big = build(); /* its own, trained */
    struct err err;
    err_clear(&err);
    assert_true(big->dict_len > 0);
    const struct {
        uint32_t n;
        int takes; /* 1: the given one; 0: none; -1: its own */
    } cases[] = {
        {300, 0}, {1500, 1}, {ENG_DOCS_OWN_DICT_DOCS - 1, 1}, {ENG_DOCS_OWN_DICT_DOCS, -1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct eng_segment *seg = build_docs(cases[c].n, big->dict, big->dict_len), *img_seg = NULL;
        uint8_t *img = NULL;
        size_t len = 0;
        if (cases[c].takes == 0) {
            assert_int_equal(seg->dict_len, 0);
        } else {
            bool same =
                seg->dict_len == big->dict_len && memcmp(seg->dict, big->dict, big->dict_len) == 0;
            assert_true(seg->dict_len > 0);
            assert_int_equal(same, cases[c].takes == 1);
        }
        check_docs(seg, cases[c].n);
        assert_int_equal(eng_segment_image(seg, &img, &len), 0);
        assert_int_equal(eng_segment_from_image(img, len, &img_seg, &err), 0);
        assert_int_equal(eng_segment_check(img_seg, 0, &err), 0);
        assert_int_equal(img_seg->dict_len, seg->dict_len);
        check_docs(img_seg, cases[c].n);
        eng_segment_unref(img_seg);
        free(img);
        eng_segment_unref(seg);
    }
    eng_segment_unref(big);
}

static void block_maxima_bound_every_posting_and_a_wrong_one_is_refused(void **state)
{
    (void)state;
    struct eng_segment *seg = build_text(3 * ENG_BLOCK + 17), *img_seg = NULL;
    uint8_t *img = NULL;
    size_t len = 0;
    struct err err;
    err_clear(&err);
    assert_true(check_block_maxima(seg) > 8);
    struct eng_term alpha_term, *alpha = &alpha_term;
    assert_true(eng_segment_term(seg, "alpha", 5, alpha));
    assert_true(eng_term_nblocks(alpha) >= 2 && eng_kind(alpha->kind) == ENG_TERM_EXACT);
    assert_true(((const struct eng_skip *)(seg->post + alpha->off))[1].wf2_max > 6);
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &img_seg, &err), 0);
    assert_int_equal(eng_segment_check(img_seg, 0, &err), 0);
    check_block_maxima(img_seg);
    /* A maximum one too low (pruning would drop a match) or a length one
     * too high is refused by the check `newsd index verify` runs. */
    struct eng_term t;
    assert_true(eng_segment_term(img_seg, "alpha", 5, &t));
    struct eng_skip *sk = (struct eng_skip *)(uintptr_t)(img_seg->post + t.off) + 1;
    wrong_maxima_are_refused(img, len, img_seg, &sk->wf2_max, &sk->dl_min);
    eng_segment_unref(img_seg);
    eng_segment_unref(seg);
    free(img);
}

/* Document i of n into b: a title and a content, its id and time
 * falling with i (as store ids: time first), no description or meta
 * terms. */
static void add_doc(struct eng_builder *b, uint32_t i, uint32_t n, const char *title,
                    const char *content, const char *language, const char *url)
{
    struct eng_row r = {
        .id = (1600000000 + (int64_t)(n - i)) << 20,
        .seq = (int64_t)(i + 1),
        .title = title,
        .description = "",
        .content = content,
        .language = language,
        .meta_terms = "",
        .src = ENG_NO_SOURCE,
        .url_hash = hash_bytes64(url, strlen(url)),
    };
    assert_int_equal(eng_builder_add(b, &r), 0);
}

/* Format 9's dictionary (tdict.h): words around every block boundary,
 * each found at its index by a lookup, a string between two words finding
 * the next one, before the first and after the last; the walk in order
 * gives every term once, as the lookups do; a lookup of each in the file
 * image too; and its lists of one block carry their maxima in their entry. */
static void the_term_dictionary_finds_every_term_across_its_blocks(void **state)
{
    (void)state;
    enum { NW = 5 * ENG_TDICT_BLOCK + 3, NDOC = 400 };
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL, *img_seg = NULL;
    uint8_t *img = NULL;
    size_t len = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(eng_builder_new(&b), 0);
    for (uint32_t i = 0; i < NDOC; i++) {
        char title[64], url[48];
        /* word k in documents k, k + NW, ...: some in one block, "qq000" in
         * every document (several blocks) */
        snprintf(title, sizeof title, "qq%03u qq000", i % NW);
        snprintf(url, sizeof url, "https://tdict.example/%u", i);
        add_doc(b, i, NDOC, title, "", "", url);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    assert_int_equal(eng_segment_check(seg, 0, &err), 0);
    assert_true(seg->nterms >= NW && eng_tdict_blocks(seg->nterms) >= 5);
    assert_int_equal(eng_segment_image(seg, &img, &len), 0);
    assert_int_equal(eng_segment_from_image(img, len, &img_seg, &err), 0);
    assert_int_equal(eng_segment_check(img_seg, 0, &err), 0);

    struct eng_term t, u;
    struct eng_term_iter it;
    size_t i = 0;
    char prev[64] = "";
    size_t prevlen = 0;
    for (bool more = eng_term_iter_at(&it, seg, 0, &t); more; more = eng_term_iter_next(&it), i++) {
        const char *str = seg->strs + t.str;
        assert_int_equal(it.i, i);
        assert_int_equal(t.idx, i);
        assert_true(t.len < sizeof prev);
        /* ascending, and found where it is, here and in the file */
        assert_true(i == 0 || sort_order_bytes(prev, prevlen, str, t.len) < 0);
        assert_int_equal(eng_tdict_lower(seg, str, t.len, &u), i);
        assert_int_equal(u.off, t.off);
        assert_true(eng_tdict_at(seg, i, &u) && u.df == t.df && u.str == t.str);
        assert_true(eng_segment_term(img_seg, str, t.len, &u) && u.idx == i && u.df == t.df);
        /* a string just past it (its bytes and one more) finds the next */
        char past[65];
        memcpy(past, str, t.len);
        past[t.len] = '\0';
        assert_int_equal(eng_tdict_lower(seg, past, t.len + 1, &u), i + 1);
        if (eng_term_nblocks(&t) == 1)
            assert_int_equal(eng_term_skip_bytes(&t), 0);
        else
            assert_int_equal(t.off % 4, 0);
        memcpy(prev, str, t.len);
        prevlen = t.len;
    }
    assert_int_equal(i, seg->nterms);
    assert_false(eng_segment_damaged(seg));
    /* before the first term, after the last, and not a term */
    assert_int_equal(eng_tdict_lower(seg, "", 0, &u), 0);
    assert_int_equal(eng_tdict_lower(seg, "\xff\xff", 2, &u), seg->nterms);
    assert_false(eng_segment_term(seg, "qq0005", 6, &u));
    assert_false(eng_tdict_at(seg, seg->nterms, &u));
    /* the word of several blocks and one of one block, by their lookups */
    assert_true(eng_segment_term(img_seg, "qq000", 5, &t));
    assert_int_equal(t.df, NDOC);
    assert_true(eng_term_nblocks(&t) > 1);
    assert_true(eng_segment_term(img_seg, "qq077", 5, &t));
    assert_int_equal(t.df, (NDOC - 77 + NW - 1) / NW);
    assert_int_equal(eng_term_nblocks(&t), 1);
    assert_true(t.wf2_max > 0 && t.dl_min > 0);
    /* A block index at odds with its entries (block 3 said to begin with
     * the last term): a lookup of a term of block 3 walks block 2 and stops
     * at block 3's first term (read where the index says: the last term's
     * string), not found, no read outside the parts (ASan). */
    struct eng_term last, in3;
    assert_true(eng_tdict_blocks(img_seg->nterms) == 6);
    assert_true(eng_tdict_at(img_seg, img_seg->nterms - 1, &last));
    assert_true(eng_tdict_at(img_seg, 3 * ENG_TDICT_BLOCK + 2, &in3));
    char want[64];
    memcpy(want, img_seg->strs + in3.str, in3.len);
    uint8_t *copy = NULL;
    struct eng_segment *odd = NULL;
    assert_int_equal(posix_memalign((void **)&copy, 8, len), 0);
    memcpy(copy, img, len);
    assert_int_equal(eng_segment_from_image(copy, len, &odd, &err), 0);
    struct eng_tblock *k = (struct eng_tblock *)(uintptr_t)&odd->tidx[3];
    k->str = last.str;
    k->post_len = eng_tblock_post(k) << 24 | last.len;
    assert_false(eng_segment_term(odd, want, in3.len, &u));
    eng_segment_unref(odd);
    free(copy);
    eng_segment_unref(img_seg);
    eng_segment_unref(seg);
    free(img);
}

/* The relevancy page of q over seg, offset 0, limit k, ids[0, date
 * window) only; every match scored when score_all. */
static size_t relevancy_page(struct eng_segment *seg, const char *q, unsigned fields, size_t k,
                             int64_t to, bool score_all, int64_t *out, uint64_t *total)
{
    struct test_engine_search s = {.q = q,
                                   .fields = fields,
                                   .sort = INDEX_SORT_RELEVANCY,
                                   .k = k,
                                   .to = to,
                                   .score_all = score_all};
    return test_engine_search(seg, &s, out, total);
}

/* Block-max pruning (a match whose bound cannot enter the page is not
 * scored) gives the page that scoring every match gives, for pages small
 * and large, date windows cutting blocks and a column filter. */
static void pruned_relevancy_pages_are_those_of_scoring_every_match(void **state)
{
    (void)state;
    struct eng_segment *seg = build_text(6 * ENG_BLOCK + 17);
    static const char *const queries[] = {"alpha",          "alphas",          "river",
                                          "alpha OR stone", "alpha AND cloud", "\"alpha alpha\"",
                                          "alpha -stone"};
    static const size_t ks[] = {1, 5, 40, 200, 2000};
    int64_t want[2000], got[2000];
    for (size_t q = 0; q < 2 * sizeof queries / sizeof *queries; q++) {
        /* every query over all fields, then over titles only (searchIn) */
        unsigned fields = q % 2 ? INDEX_FIELD_TITLE : INDEX_FIELD_ALL;
        const char *query = queries[q / 2];
        for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
            for (uint32_t cut = 0; cut < seg->n; cut += 131) {
                uint64_t tw = 0, tg = 0;
                int64_t to = INT64_MAX;
                if (cut > 0) /* the window is docids [cut, n) */
                    to = store_id_time(seg->ids[cut]);
                size_t nw = relevancy_page(seg, query, fields, ks[i], to, true, want, &tw);
                size_t ng = relevancy_page(seg, query, fields, ks[i], to, false, got, &tg);
                assert_true(tw > 0 || fields != INDEX_FIELD_ALL); /* titles lack some words */
                assert_int_equal(tg, tw);
                assert_int_equal(ng, nw);
                assert_memory_equal(got, want, nw * sizeof *want);
            }
        }
    }
    eng_segment_unref(seg);
}

/* A proximity's instances are the positions that start a window (near.h),
 * which can outnumber either word's: "kiwi mango kiwi" holds two windows
 * of "kiwi mango"~1 and one mango. Its block bound must allow for that:
 * here the one document with two windows, among longer documents in its
 * blocks, is the best match, and a bound taken as the rarer word's
 * maximum (one instance) left it out of the page. */
static void a_proximity_with_more_windows_than_one_word_is_not_pruned(void **state)
{
    (void)state;
    enum { SHORT = 200, LONG = 255 };
    struct eng_builder *b = NULL;
    struct eng_segment *seg = NULL;
    assert_int_equal(eng_builder_new(&b), 0);
    for (uint32_t i = 0; i <= SHORT + LONG; i++) {
        char url[48];
        const char *content = i < SHORT          ? "kiwi mango"
                              : i < SHORT + LONG ? "kiwi mango stone stone"
                                                 : "kiwi mango kiwi stone";
        snprintf(url, sizeof url, "https://near.example/%u", i);
        add_doc(b, i, SHORT + LONG + 1, "", content, "en", url);
    }
    assert_int_equal(eng_builder_finish(b, &seg), 0);
    eng_builder_free(b);
    int64_t want[8], got[8];
    static const char *const queries[] = {"\"kiwi mango\"~1", "\"mango kiwi\"~1"};
    for (size_t q = 0; q < 2; q++) {
        for (int positions = 0; positions < 2; positions++) {
            uint64_t tw = 0, tg = 0;
            struct test_engine_search s = {.q = queries[q],
                                           .fields = INDEX_FIELD_ALL,
                                           .sort = INDEX_SORT_RELEVANCY,
                                           .k = 8,
                                           .score_all = true,
                                           .positions = positions};
            size_t nw = test_engine_search(seg, &s, want, &tw);
            s.score_all = false;
            size_t ng = test_engine_search(seg, &s, got, &tg);
            assert_int_equal(tw, SHORT + LONG + 1);
            assert_int_equal(tg, tw);
            assert_int_equal(nw, 8);
            assert_int_equal(ng, nw);
            /* the two-window document first */
            assert_int_equal(want[0], (int64_t)1600000001 << 20);
            assert_memory_equal(got, want, nw * sizeof *want);
        }
    }
    eng_segment_unref(seg);
}

static void the_manifest_round_trips_and_refuses_every_cut(void **state)
{
    (void)state;
    char s0[] = "bbc-news", s1n[] = "cnn", s2n[] = "the-verge";
    char *srcs[] = {s0, s1n, s2n};
    uint32_t del0[] = {1, 5, 99};
    struct eng_manifest_seg segs[] = {{.file_id = 3, .n = 100, .ndel = 3, .del = del0},
                                      {.file_id = 7, .n = 37, .ndel = 0, .del = NULL}};
    struct eng_manifest m = {.applied_seq = 4242,
                             .covered = 4250,
                             .next_file = 8,
                             .nsrc = 3,
                             .srcs = srcs,
                             .nseg = 2,
                             .segs = segs};
    snprintf(m.epoch, sizeof m.epoch, "0123456789abcdef0123456789abcdef");
    uint8_t *img = NULL;
    size_t len = 0;
    struct err err;
    struct eng_manifest back;
    err_clear(&err);
    assert_int_equal(eng_manifest_image(&m, &img, &len), 0);
    assert_int_equal(eng_manifest_parse(img, len, &back, &err), 0);
    assert_int_equal(back.applied_seq, 4242);
    assert_int_equal(back.covered, 4250);
    assert_int_equal(back.next_file, 8);
    assert_string_equal(back.epoch, m.epoch);
    assert_int_equal(back.nsrc, 3);
    assert_string_equal(back.srcs[2], "the-verge");
    assert_int_equal(back.nseg, 2);
    assert_int_equal(back.segs[0].ndel, 3);
    assert_int_equal(back.segs[0].del[2], 99);
    assert_int_equal(back.segs[1].file_id, 7);
    eng_manifest_clear(&back);
    /* Every proper prefix is refused, resealed or not. */
    uint8_t *cut = malloc(len);
    assert_non_null(cut);
    for (size_t n = 0; n < len; n++) {
        memcpy(cut, img, n);
        assert_true(eng_manifest_parse(cut, n, &back, &err) < 0);
        eng_manifest_seal(cut, n);
        assert_true(eng_manifest_parse(cut, n, &back, &err) < 0);
    }
    /* A flipped byte fails the checksum. */
    for (size_t at = 16; at < len; at++) {
        memcpy(cut, img, len);
        cut[at] ^= 1;
        assert_int_equal(eng_manifest_parse(cut, len, &back, &err), ERR_PARSE);
    }
    /* Resealed damage that breaks the protocol: a deletion past the segment,
     * deletions out of order, a file id not below next_file. */
    uint32_t past[] = {1, 100}, order[] = {5, 1};
    struct eng_manifest_seg s1[] = {{.file_id = 3, .n = 100, .ndel = 2, .del = past}};
    struct eng_manifest_seg s2[] = {{.file_id = 3, .n = 100, .ndel = 2, .del = order}};
    struct eng_manifest_seg s3[] = {{.file_id = 8, .n = 100, .ndel = 0, .del = NULL}};
    struct eng_manifest_seg *cases[] = {s1, s2, s3};
    for (size_t i = 0; i < 3; i++) {
        struct eng_manifest x = m;
        uint8_t *xi = NULL;
        size_t xl = 0;
        x.nseg = 1;
        x.segs = cases[i];
        assert_int_equal(eng_manifest_image(&x, &xi, &xl), 0);
        assert_int_equal(eng_manifest_parse(xi, xl, &back, &err), ERR_PARSE);
        free(xi);
    }
    /* Written and read back through a directory, replaced atomically. */
    char dir[] = "/tmp/newsd-manifest-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(eng_manifest_read(dir, &back, &err), ERR_NOTFOUND);
    assert_int_equal(eng_manifest_write(dir, &m, &err), 0);
    m.applied_seq = 5000;
    assert_int_equal(eng_manifest_write(dir, &m, &err), 0);
    assert_int_equal(eng_manifest_read(dir, &back, &err), 0);
    assert_int_equal(back.applied_seq, 5000);
    eng_manifest_clear(&back);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s/MANIFEST.tmp", dir);
    assert_int_not_equal(access(tmp, F_OK), 0); /* no leftover */
    remove_tree(dir);
    free(cut);
    free(img);
}

/* A copy of img read as serve reads a file (arrays pointing into it). */
static struct eng_segment *image_copy(const uint8_t *img, size_t len, uint8_t **copy)
{
    struct eng_segment *seg = NULL;
    struct err err;
    err_clear(&err);
    assert_int_equal(posix_memalign((void **)copy, 8, len), 0);
    memcpy(*copy, img, len);
    assert_int_equal(eng_segment_from_image(*copy, len, &seg, &err), 0);
    assert_int_equal(eng_segment_check_columns(seg, 0, &err), 0);
    return seg;
}

static int64_t corrupt_total(void)
{
    return metrics_value(metrics_counter("newsd_index_corrupt_total", NULL));
}

/* Issue 23: four bytes of a term's df crashed the first search of it
 * (block_each), eight bytes of the dictionary changed articles' text.
 * Both are found where a search first reads them: the term when opened,
 * the document when decoded; the segment is marked damaged, counted once. */
static void damaged_bytes_are_found_where_a_search_reads_them(void **state)
{
    (void)state;
    struct eng_segment *heap = build(), *seg;
    uint8_t *img = NULL, *copy = NULL;
    size_t len = 0;
    struct eng_term t, u;
    struct eng_term_iter it;
    assert_int_equal(eng_segment_image(heap, &img, &len), 0);
    eng_segment_damage_init();

    /* an intact copy: every term opens, twice (the second from its bit) */
    seg = image_copy(img, len, &copy);
    for (size_t i = 0; i < seg->nterms; i += 97) {
        assert_true(eng_tdict_at(seg, i, &u));
        for (int k = 0; k < 2; k++) {
            assert_int_equal(eng_segment_term_open(seg, seg->strs + u.str, u.len, &t), 1);
            assert_int_equal(t.idx, i);
            assert_int_equal(t.off, u.off);
        }
    }
    assert_false(eng_segment_damaged(seg));
    eng_segment_unref(seg);
    free(copy);

    /* a term of several blocks with its df (its entry's third field, a
     * varint of two bytes) changed by 64 */
    seg = image_copy(img, len, &copy);
    bool more = eng_term_iter_at(&it, seg, 0, &u);
    while (more && (eng_term_nblocks(&u) < 3 || u.df >= 16384 || u.len >= 128))
        more = eng_term_iter_next(&it);
    assert_true(more);
    uint8_t *entry = (uint8_t *)(uintptr_t)(it.p - it.entry_bytes);
    assert_int_equal(entry[0], u.len); /* then the kind byte, then df */
    assert_int_equal(entry[2], 0x80 | (u.df & 0x7f));
    int64_t before = corrupt_total();
    entry[2] ^= 0x40;
    assert_int_equal(eng_segment_term_open(seg, seg->strs + u.str, u.len, &t), ERR_PARSE);
    assert_true(eng_segment_damaged(seg));
    assert_int_equal(corrupt_total(), before + 1);
    /* every term of a damaged segment is refused; counted once */
    assert_true(eng_tdict_at(seg, 0, &u));
    assert_int_equal(eng_segment_term_open(seg, seg->strs + u.str, u.len, &t), ERR_PARSE);
    eng_segment_damage(seg, "again");
    assert_int_equal(corrupt_total(), before + 1);
    eng_segment_unref(seg);
    free(copy);

    /* a block index entry whose string runs past the strings: found by
     * the first read of its block (lookup or walk), not read past them */
    seg = image_copy(img, len, &copy);
    assert_true(eng_tdict_at(seg, 0, &u) && seg->strs_len > u.len && u.len < 64);
    char first[64];
    memcpy(first, seg->strs + u.str, u.len);
    ((struct eng_tblock *)(uintptr_t)seg->tidx)[0].str = (uint32_t)seg->strs_len - 1;
    assert_int_equal(eng_segment_term_open(seg, first, u.len, &t), ERR_PARSE);
    assert_true(eng_segment_damaged(seg));
    assert_false(eng_term_iter_at(&it, seg, 0, &u));
    eng_segment_unref(seg);
    free(copy);

    /* eight bytes of the dictionary: no document decodes into other text */
    seg = image_copy(img, len, &copy);
    assert_true(seg->dict_len > 64);
    memcpy((uint8_t *)(uintptr_t)seg->dict + seg->dict_len - 8,
           "\x00\xff"
           "DAMAG",
           8);
    struct arena a;
    uint32_t refused = 0;
    arena_init(&a, 0);
    for (uint32_t d = 0; d < NDOCS; d += 7) {
        char want[160];
        const char *got;
        size_t jlen;
        int n = doc_json(d, want, sizeof want);
        if (eng_docs_get(seg, d, &a, &got, &jlen) != 0) {
            refused++;
            continue;
        }
        assert_int_equal(jlen, (size_t)n);
        assert_memory_equal(got, want, jlen);
    }
    assert_true(refused > 0);
    arena_release(&a);
    eng_segment_unref(seg);
    free(copy);
    free(img);
    eng_segment_unref(heap);
}

/* eng_segment_term_docids' collector: every docid, in order. */
struct docids {
    uint32_t *ids;
    size_t n;
};

static void collect_docids(void *ctx, const uint32_t *ids, uint32_t n)
{
    struct docids *c = ctx;
    assert_true(n >= 1 && n <= ENG_BLOCK);
    memcpy(c->ids + c->n, ids, n * sizeof *ids);
    c->n += n;
}

/* A facet column reads a meta term's docids a block at a time, each block
 * checked as it is read (eng_segment_term_docids): every set's docids
 * exactly, the term left unchecked for the cursors (its skip table and
 * maxima are theirs to check); a block's width past 32 or a gap past the
 * segment is damage, counted once, never a docid out of the segment. */
static void a_meta_terms_docids_are_read_a_block_at_a_time_and_checked(void **state)
{
    (void)state;
    struct eng_segment *heap = build(), *seg;
    uint8_t *img = NULL, *copy = NULL;
    size_t len = 0;
    struct eng_term t;
    struct docids got = {calloc(NDOCS, sizeof *got.ids), 0};
    assert_non_null(got.ids);
    assert_int_equal(eng_segment_image(heap, &img, &len), 0);
    eng_segment_damage_init();

    seg = image_copy(img, len, &copy);
    for (int set = 0; set < NSETS; set++) {
        assert_non_null(term_of(seg, set, &t));
        got.n = 0;
        assert_int_equal(eng_segment_term_docids(seg, &t, collect_docids, &got), 0);
        assert_int_equal(got.n, brute_count(set, 0, NDOCS));
        for (size_t i = 0, d = brute_next(set, 0); i < got.n;
             i++, d = brute_next(set, (uint32_t)d + 1))
            assert_int_equal(got.ids[i], d);
        assert_false(atomic_load(&seg->term_ok[t.idx / 64]) >> (t.idx % 64) & 1);
    }
    assert_false(eng_segment_damaged(seg));
    eng_segment_unref(seg);
    free(copy);

    /* a width byte past 32 in a list of many blocks */
    seg = image_copy(img, len, &copy);
    assert_non_null(term_of(seg, 7, &t));
    assert_true(eng_term_nblocks(&t) > 2);
    uint8_t *docs = (uint8_t *)(uintptr_t)(seg->post + t.off + eng_term_skip_bytes(&t));
    int64_t before = corrupt_total();
    docs[0] = 33;
    got.n = 0;
    assert_int_equal(eng_segment_term_docids(seg, &t, collect_docids, &got), ERR_PARSE);
    assert_int_equal(got.n, 0);
    assert_true(eng_segment_damaged(seg));
    assert_int_equal(corrupt_total(), before + 1);
    eng_segment_unref(seg);
    free(copy);

    /* set 3's one block (docids 0 and NDOCS - 1): its gaps made the
     * largest its width holds, which puts both docids past the segment */
    seg = image_copy(img, len, &copy);
    assert_non_null(term_of(seg, 3, &t));
    assert_int_equal(eng_term_nblocks(&t), 1);
    docs = (uint8_t *)(uintptr_t)(seg->post + t.off + eng_term_skip_bytes(&t));
    assert_true(docs[0] > 0 && docs[0] <= 32);
    memset(docs + 1, 0xff, eng_packed_bytes(2, docs[0]));
    got.n = 0;
    assert_int_equal(eng_segment_term_docids(seg, &t, collect_docids, &got), ERR_PARSE);
    assert_int_equal(got.n, 0);
    assert_true(eng_segment_damaged(seg));
    /* a damaged segment is read no further */
    assert_non_null(term_of(seg, 0, &t));
    assert_int_equal(eng_segment_term_docids(seg, &t, collect_docids, &got), ERR_PARSE);
    assert_int_equal(got.n, 0);
    eng_segment_unref(seg);
    free(copy);
    free(img);
    free(got.ids);
    eng_segment_unref(heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varints_round_trip_at_every_width),
        cmocka_unit_test(builder_terms_keep_their_postings_as_their_arrays_grow),
        cmocka_unit_test(docid_blocks_round_trip_at_every_width_and_length),
        cmocka_unit_test(length_bytes_are_monotone_lower_bounds),
        cmocka_unit_test(field_masks_and_term_frequencies_round_trip_at_every_width),
        cmocka_unit_test(block_heads_round_trip_in_both_forms),
        cmocka_unit_test(damaged_block_heads_are_refused),
        cmocka_unit_test(large_term_frequencies_read_back_through_the_writer),
        cmocka_unit_test(postings_of_every_shape_read_back_in_heap_and_file),
        cmocka_unit_test(a_segment_takes_the_document_dictionary_it_is_given),
        cmocka_unit_test(block_maxima_bound_every_posting_and_a_wrong_one_is_refused),
        cmocka_unit_test(pruned_relevancy_pages_are_those_of_scoring_every_match),
        cmocka_unit_test(a_proximity_with_more_windows_than_one_word_is_not_pruned),
        cmocka_unit_test(the_manifest_round_trips_and_refuses_every_cut),
        cmocka_unit_test(damaged_bytes_are_found_where_a_search_reads_them),
        cmocka_unit_test(a_meta_terms_docids_are_read_a_block_at_a_time_and_checked),
        cmocka_unit_test(the_term_dictionary_finds_every_term_across_its_blocks),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    text_thread_release();
    return failed;
}
