/* Postings codec and cursor.
 *
 * Postings of a term: skip table (one struct eng_skip per block of
 * ENG_BLOCK docs; none for a list of one block: its maxima are in its
 * dictionary entry, tdict.h), then the docid stream, then the
 * data stream. Docids, per block: one byte w (0..32), then the block's gaps minus one (the first
 * from the previous block's last docid, or from "before 0") bit-packed w bits each, least
 * significant bit first (eng_pack); unpacking has no dependency from one gap to the next,
 * where a varint's length was known only once its bytes were read. Data, text terms only, per
 * block: its postings' heads (field masks and tfs, heads.h: bit-packed in runs of one width a
 * field, a varint a field in a block of fewer than 8), then, for an exact term, the positions
 * (per posting, per field, tf deltas as varints), so that relevancy reads the heads without
 * walking any position. Meta terms have no data.
 *
 * Docids are bit-packed gaps in blocks of ENG_BLOCK (FOR-128) with a skip
 * table of the last docid per block, so a seek binary-searches the skip
 * table and decodes one block; counting a docid range decodes at most the
 * two boundary blocks. Varint gaps were read one byte at a time, each
 * gap's place known only once the one before was read: the profile of an
 * AND of three words had eng_postings_fill at 42 % (docs/engine.md). */
#include "index/engine/internal.h"

#include "index/engine/heads.h"
#include "index/engine/tiers.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/bits.h"
#include "util/sort.h"

#include "util/banned.h"

/* The gaps of a docid block of width w from gap i on, each after x:
 * emit(ctx, i, docid i) in order. A gap is read where the packing put it
 * (eng_unpack_from: one unaligned load, a shift and a mask at a place known
 * beforehand; no gap waits for the one before it but through the running
 * sum), the last eight bytes from a copy padded with zeros. */
static inline __attribute__((always_inline)) void
gaps_each(const uint8_t *p, uint32_t i, uint32_t n, uint32_t x, unsigned w,
          void (*emit)(void *ctx, uint32_t i, uint32_t docid), void *ctx)
{
    uint32_t gaps[ENG_BLOCK];
    eng_unpack_from(p, eng_packed_bytes(n, w), i, n, w, gaps);
    for (; i < n; i++) {
        x += gaps[i] + 1;
        emit(ctx, i, x);
    }
}

/* gaps_each with w a constant: eight gaps take w bytes, so each group of
 * eight starts on a byte and every load's place and shift inside it is a
 * constant (a shift by a register is three micro-ops on x86, by a constant
 * one; the profile of the 10 M mix over 16 clients had eng_postings_fill,
 * this loop and a bit set per posting, at 23 %). The groups whose last
 * load stays inside the block go here, the rest to gaps_each. */
static inline __attribute__((always_inline)) void
block_each_w(const uint8_t *p, uint32_t n, uint32_t x, unsigned w,
             void (*emit)(void *ctx, uint32_t i, uint32_t docid), void *ctx)
{
    uint64_t mask = ((uint64_t)1 << w) - 1;
    size_t len = eng_packed_bytes(n, w);
    uint32_t i = 0;
    for (; i + 8 <= n && (size_t)(i / 8) * w + (7 * w >> 3) + 8 <= len; i += 8) {
        const uint8_t *g = p + (size_t)(i / 8) * w;
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            x += (uint32_t)(bits_le64(g + (j * w >> 3)) >> (j * w & 7) & mask) + 1;
            emit(ctx, i + j, x);
        }
    }
    gaps_each(p, i, n, x, w, emit, ctx);
}

/* A docid block's docids, each after x: emit(ctx, i, docid i) in order,
 * by the loop of its width. Inline with emit known at each call, so that
 * each caller's loops are its own. */
static inline __attribute__((always_inline)) void
block_each(const uint8_t *block, uint32_t n, uint32_t x,
           void (*emit)(void *ctx, uint32_t i, uint32_t docid), void *ctx)
{
    const uint8_t *p = block + 1;
    switch (*block & 63u) { /* <= 32 in any checked segment */
#define EACH_W(w)                                                                                  \
    case w:                                                                                        \
        block_each_w(p, n, x, w, emit, ctx);                                                       \
        return;
        /* clang-format off */
        EACH_W(0) EACH_W(1) EACH_W(2) EACH_W(3) EACH_W(4) EACH_W(5) EACH_W(6) EACH_W(7) EACH_W(8)
        EACH_W(9) EACH_W(10) EACH_W(11) EACH_W(12) EACH_W(13) EACH_W(14) EACH_W(15) EACH_W(16)
        EACH_W(17) EACH_W(18) EACH_W(19) EACH_W(20) EACH_W(21) EACH_W(22) EACH_W(23) EACH_W(24)
        EACH_W(25) EACH_W(26) EACH_W(27) EACH_W(28) EACH_W(29) EACH_W(30) EACH_W(31) EACH_W(32)
#undef EACH_W
    default:
        gaps_each(p, 0, n, x, *block & 63u, emit, ctx);
    }
    /* clang-format on */
}

static inline __attribute__((always_inline)) void emit_id(void *ctx, uint32_t i, uint32_t docid)
{
    ((uint32_t *)ctx)[i] = docid;
}

void eng_block_decode(const uint8_t *p, uint32_t n, uint32_t prev, uint32_t *ids)
{
    block_each(p, n, prev, emit_id, ids);
}

/* Sets bit x (a docid minus the set's base): block_fill's emit. */
static inline __attribute__((always_inline)) void emit_bit(void *ctx, uint32_t i, uint32_t x)
{
    (void)i;
    ((uint64_t *)ctx)[x >> 6] |= (uint64_t)1 << (x & 63);
}

/* eng_block_decode's docids straight into a set (bit docid - base), for
 * a block inside the window: no array between the two (measured on a
 * language filter's list, 85 % of the documents: the array cost 20 %). */
static void block_fill(const uint8_t *p, uint32_t n, uint32_t prev, uint64_t *bits, uint32_t base)
{
    block_each(p, n, prev - base, emit_bit, bits);
}

/* Postings in block b of t. */
static inline uint32_t block_len(const struct eng_term *t, uint32_t b)
{
    uint32_t n = t->df - b * ENG_BLOCK;
    return n > ENG_BLOCK ? ENG_BLOCK : n;
}

/* The docid before block b (UINT32_MAX before the first). */
static inline uint32_t block_prev(const struct eng_skip *skip, uint32_t b)
{
    return b == 0 ? UINT32_MAX : skip[b - 1].last;
}

/* Makes block b current, all its docids decoded. */
static void block_load(struct eng_cursor *c, uint32_t b)
{
    const struct eng_term *t = c->t;
    uint32_t n = block_len(t, b);

    c->blk = b;
    c->nin = n;
    c->i = 0;
    eng_block_decode(c->docs + c->skip[b].doc_off, n, block_prev(c->skip, b), c->ids);
    c->doc = c->ids[0];
    c->di = 0;
    c->hp = c->data ? c->data + c->skip[b].data_off : NULL;
    c->decoded = false;
}

/* The skip table of t; for a one-block list, *one filled with its maxima,
 * offsets 0 and a last docid past every window (until the block is
 * decoded). */
static const struct eng_skip *term_skip(const struct eng_segment *s, const struct eng_term *t,
                                        struct eng_skip *one)
{
    if (eng_term_nblocks(t) != 1)
        return (const struct eng_skip *)(uintptr_t)(s->post + t->off);
    *one = (struct eng_skip){.last = ENG_END - 1, .wf2_max = t->wf2_max, .dl_min = t->dl_min};
    return one;
}

/* The first block in [lo, hi) whose last docid reaches x; hi if none. */
static int skip_before(const void *element, const void *key)
{
    return ((const struct eng_skip *)element)->last < *(const uint32_t *)key ? -1 : 0;
}

static uint32_t block_reaching(const struct eng_skip *skip, uint32_t lo, uint32_t hi, uint32_t x)
{
    return lo + (uint32_t)sort_lower_bound(skip + lo, hi - lo, sizeof *skip, &x, skip_before);
}

void eng_cursor_init(struct eng_cursor *c, const struct eng_segment *s, const struct eng_term *t)
{
    c->t = t;
    c->skip = term_skip(s, t, &c->one);
    c->docs = s->post + t->off + eng_term_skip_bytes(t);
    c->data = eng_kind(t->kind) == ENG_TERM_META ? NULL : c->docs + t->docs_len;
    c->blk = 0;
    c->nin = 0;
    c->i = 0;
    c->doc = ENG_END;
    c->hp = NULL;
    c->decoded = false;
    if (t->df > 0) {
        block_load(c, 0);
        if (c->skip == &c->one) /* its last docid bounds every seek */
            c->one.last = c->ids[c->nin - 1];
    }
}

uint32_t eng_cursor_seek(struct eng_cursor *c, uint32_t target)
{
    if (c->doc >= target)
        return c->doc;
    if (c->skip[c->blk].last < target) {
        uint32_t lo = block_reaching(c->skip, c->blk + 1, eng_term_nblocks(c->t), target);
        if (lo == eng_term_nblocks(c->t)) {
            c->doc = ENG_END;
            return ENG_END;
        }
        block_load(c, lo);
    }
    /* the block's last docid reaches target: the loop ends inside it */
    while (c->ids[c->i] < target)
        c->i++;
    c->doc = c->ids[c->i];
    return c->doc;
}

void eng_cursor_data(struct eng_cursor *c, unsigned *mask, uint32_t tf[ENG_FIELDS],
                     uint32_t (*pos)[ENG_POS_MAX])
{
    if (c->data == NULL) {
        memset(tf, 0, ENG_FIELDS * sizeof *tf);
        *mask = 0;
        return;
    }
    if (!c->decoded) { /* an exact term's positions follow the heads */
        c->pp = eng_heads_decode(c->hp, c->nin, &c->h);
        c->di = 0;
        c->decoded = true;
    }
    *mask = eng_heads_mask(&c->h, c->i);
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        tf[f] = c->h.tf[f][c->i];
    if (eng_kind(c->t->kind) != ENG_TERM_EXACT || pos == NULL)
        return;
    /* this posting's positions: pp stays at their start, as di stays at
     * this posting (a later posting's read skips them) */
    uint32_t skip = 0;
    for (; c->di < c->i; c->di++)
        skip += eng_heads_tfs(&c->h, c->di);
    c->pp = eng_varints_skip(c->pp, skip);
    const uint8_t *p = c->pp;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t at = 0;
        for (uint32_t k = 0; k < tf[f]; k++) {
            uint32_t d;
            p = eng_varint_get1(p, &d);
            at = k == 0 ? d : at + d;
            if (k < ENG_POS_MAX)
                pos[f][k] = at;
        }
        if (tf[f] > ENG_POS_MAX)
            tf[f] = ENG_POS_MAX; /* a phrase then sees the first ENG_POS_MAX only */
    }
}

/* Postings with docid < x. */
static uint32_t count_below(struct eng_cursor *c, uint32_t x)
{
    uint32_t nb = eng_term_nblocks(c->t);
    uint32_t lo = block_reaching(c->skip, 0, nb, x);
    if (lo == nb)
        return c->t->df;
    block_load(c, lo);
    /* the first of the block's ids reaching x */
    uint32_t a = (uint32_t)sort_lower_bound(c->ids, c->nin, sizeof c->ids[0], &x, sort_u32_before);
    return lo * ENG_BLOCK + a;
}

uint32_t eng_cursor_count_range(struct eng_cursor *c, uint32_t lo, uint32_t hi)
{
    if (c->t->df == 0 || lo >= hi)
        return 0;
    uint32_t a = count_below(c, lo), b = count_below(c, hi);
    c->doc = ENG_END; /* the cursor is spent */
    c->blk = eng_term_nblocks(c->t) - 1;
    return b - a;
}

uint32_t eng_postings_fill(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                           uint32_t hi, uint64_t *bits, uint32_t base)
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    const uint8_t *docs = s->post + t->off + eng_term_skip_bytes(t);
    uint32_t nb = eng_term_nblocks(t), set = 0;
    uint32_t ids[ENG_BLOCK];

    if (t->df == 0 || lo >= hi)
        return 0;
    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        uint32_t prev = block_prev(skip, b);
        uint32_t n = block_len(t, b);
        if (b > 0 && prev + 1 >= hi)
            break;
        if ((b == 0 ? 0 : prev + 1) >= lo && skip[b].last < hi && nb > 1) {
            /* inside the window (a one-block list's last docid is a
             * stand-in, so it is decoded below) */
            block_fill(docs + skip[b].doc_off, n, prev, bits, base);
            set += n;
            continue;
        }
        eng_block_decode(docs + skip[b].doc_off, n, prev, ids);
        uint32_t k = 0, e = n;
        if ((b == 0 ? 0 : prev + 1) < lo) {
            while (k < n && ids[k] < lo)
                k++;
        }
        if (ids[n - 1] >= hi) {
            while (e > k && ids[e - 1] >= hi)
                e--;
        }
        for (uint32_t j = k; j < e; j++)
            bits[(ids[j] - base) >> 6] |= (uint64_t)1 << ((ids[j] - base) & 63);
        set += e - k;
        if (e < n)
            break;
    }
    return set;
}

/* Whether v has a bit for a docid in [a, b] (a <= b). */
static bool any_bit(const uint64_t *v, uint32_t base, uint32_t a, uint32_t b)
{
    uint32_t wa = (a - base) >> 6, wb = (b - base) >> 6;
    uint64_t lo = ~(uint64_t)0 << ((a - base) & 63), hi = ~(uint64_t)0 >> (63 - ((b - base) & 63));
    if (wa == wb)
        return (v[wa] & lo & hi) != 0;
    if (v[wa] & lo)
        return true;
    for (uint32_t w = wa + 1; w < wb; w++) {
        if (v[w])
            return true;
    }
    return (v[wb] & hi) != 0;
}

/* Whether block b of a list of nb, its first docid first, may hold a docid
 * of [lo, hi) set in v: a block without one is skipped whole, its data
 * having its own offset (a one-block list is decoded: its last docid is a
 * stand-in). */
static bool block_has_match(const struct eng_skip *skip, uint32_t nb, uint32_t b, uint32_t first,
                            uint32_t lo, uint32_t hi, const uint64_t *v, uint32_t base)
{
    if (nb == 1)
        return true;
    uint32_t a = first < lo ? lo : first, z = skip[b].last < hi ? skip[b].last : hi - 1;
    return any_bit(v, base, a, z);
}

/* Block b of text term t: its docids into ids, the indexes of those in [lo, hi) set in v into js
 * (ascending); how many. *past: the block reaches hi (no later block can hold a match). */
static uint32_t block_matches(const struct eng_segment *s, const struct eng_term *t,
                              const struct eng_skip *skip, uint32_t b, uint32_t lo, uint32_t hi,
                              const uint64_t *v, uint32_t base, uint32_t ids[ENG_BLOCK],
                              uint8_t js[ENG_BLOCK], bool *past)
{
    const uint8_t *docs = s->post + t->off + eng_term_skip_bytes(t);
    uint32_t n = block_len(t, b), k = 0, e = n, nj = 0;
    eng_block_decode(docs + skip[b].doc_off, n, block_prev(skip, b), ids);
    while (k < e && ids[k] < lo)
        k++;
    while (e > k && ids[e - 1] >= hi)
        e--;
    /* no branch on each posting's bit: an OR's word holds about every third posting of its
     * block, as often mispredicted */
    for (uint32_t j = k; j < e; j++) {
        uint32_t x = ids[j] - base;
        js[nj] = (uint8_t)j;
        nj += (uint32_t)(v[x >> 6] >> (x & 63) & 1);
    }
    *past = e < n;
    return nj;
}

/* The heads of block b's postings js[0..nj-1] into h: those alone when they are few
 * (eng_heads_pick), else the block's. */
static void block_heads(const struct eng_segment *s, const struct eng_term *t,
                        const struct eng_skip *skip, uint32_t b, const uint8_t *js, uint32_t nj,
                        struct eng_heads *h)
{
    const uint8_t *docs = s->post + t->off + eng_term_skip_bytes(t);
    const uint8_t *heads = docs + t->docs_len + skip[b].data_off;
    uint32_t n = block_len(t, b);
    if (nj * ENG_HEADS_PICK_RATIO < n)
        eng_heads_pick(heads, n, js, nj, h);
    else if (nj > 0)
        eng_heads_decode(heads, n, h);
}

uint32_t eng_postings_fill_in(const struct eng_segment *s, const struct eng_term *t, unsigned cols,
                              uint32_t lo, uint32_t hi, uint64_t *bits, uint32_t base)
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    uint32_t nb = eng_term_nblocks(t), set = 0;
    uint32_t ids[ENG_BLOCK];

    if (t->df == 0 || lo >= hi)
        return 0;
    if (eng_kind(t->kind) == ENG_TERM_META || (cols & INDEX_FIELD_ALL) == INDEX_FIELD_ALL)
        return eng_postings_fill(s, t, lo, hi, bits, base); /* no heads, or every field */
    const uint8_t *docs = s->post + t->off + eng_term_skip_bytes(t);
    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        if (b > 0 && block_prev(skip, b) + 1 >= hi)
            break;
        uint64_t in[ENG_BLOCK / 64];
        uint32_t n = block_len(t, b);
        eng_block_decode(docs + skip[b].doc_off, n, block_prev(skip, b), ids);
        /* which postings are in the fields, word-wide (each posting's mask made from its block's
         * bitmaps was 31 % of a qInTitle newest-first page, the tfs never read) */
        eng_heads_in_fields(docs + t->docs_len + skip[b].data_off, n, cols, in);
        for (uint32_t j = 0; j < ENG_BLOCK / 64; j++) {
            for (uint64_t w = in[j]; w; w &= w - 1) {
                uint32_t d = ids[64 * j + bits_low(w)];
                if (d >= hi)
                    return set;
                if (d >= lo) {
                    bits[(d - base) >> 6] |= (uint64_t)1 << ((d - base) & 63);
                    set++;
                }
            }
        }
    }
    return set;
}

/* eng_postings_weigh's walk. A match's slot is its rank in v: the words'
 * ranks before it plus the bits below it in its word, counted by the
 * popcnt instruction where hw (the SWAR count was 20 % of the walk on the
 * nested shape's relevancy page at 10 M). */
static inline __attribute__((always_inline)) void
weigh_walk(const struct eng_segment *s, const struct eng_term *t, uint32_t lo, uint32_t hi,
           const uint64_t *v, uint32_t base, const uint32_t *rank, uint32_t *wf2,
           uint32_t *dl_floor, unsigned cols, bool hw)
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    uint32_t nb = eng_term_nblocks(t);
    uint32_t ids[ENG_BLOCK];
    struct eng_heads h;

    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        uint32_t first = b == 0 ? 0 : block_prev(skip, b) + 1;
        if (first >= hi)
            break;
        if (!block_has_match(skip, nb, b, first, lo, hi, v, base))
            continue;
        uint8_t js[ENG_BLOCK];
        bool past;
        uint32_t nj = block_matches(s, t, skip, b, lo, hi, v, base, ids, js, &past);
        block_heads(s, t, skip, b, js, nj, &h);
        for (uint32_t k = 0; k < nj; k++) {
            uint32_t x = ids[js[k]] - base;
            uint64_t below = v[x >> 6] & (((uint64_t)1 << (x & 63)) - 1);
            uint32_t m =
                rank[x >> 6] + (hw ? (uint32_t)__builtin_popcountll(below) : bits_pop(below));
            wf2[m] = cols == ENG_WEIGH_PACKED ? eng_heads_pack(&h, js[k])
                                              : eng_heads_wf2(&h, js[k], cols);
            if (dl_floor[m] < skip[b].dl_min)
                dl_floor[m] = skip[b].dl_min;
        }
        if (past)
            return;
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("popcnt"))) static void
weigh_popcnt(const struct eng_segment *s, const struct eng_term *t, uint32_t lo, uint32_t hi,
             const uint64_t *v, uint32_t base, const uint32_t *rank, uint32_t *wf2,
             uint32_t *dl_floor, unsigned cols)
{
    weigh_walk(s, t, lo, hi, v, base, rank, wf2, dl_floor, cols, true);
}
#endif

void eng_postings_weigh(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                        uint32_t hi, const uint64_t *v, uint32_t base, const uint32_t *rank,
                        uint32_t *wf2, uint32_t *dl_floor, unsigned cols)
{
    if (t->df == 0 || lo >= hi || eng_kind(t->kind) == ENG_TERM_META)
        return;
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("popcnt")) {
        weigh_popcnt(s, t, lo, hi, v, base, rank, wf2, dl_floor, cols);
        return;
    }
#endif
    weigh_walk(s, t, lo, hi, v, base, rank, wf2, dl_floor, cols, false);
}

uint32_t eng_postings_blocks(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                             uint32_t hi, const uint64_t *v, uint32_t base,
                             struct eng_block_bound *out)
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    uint32_t nb = eng_term_nblocks(t), m = 0;

    if (t->df == 0 || lo >= hi || eng_kind(t->kind) == ENG_TERM_META)
        return 0;
    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        uint32_t first = b == 0 ? 0 : block_prev(skip, b) + 1;
        if (first >= hi)
            break;
        if (block_has_match(skip, nb, b, first, lo, hi, v, base))
            out[m++] = (struct eng_block_bound){
                .b = b, .wf2_max = skip[b].wf2_max, .dl_min = skip[b].dl_min};
    }
    return m;
}

uint32_t eng_postings_block(const struct eng_segment *s, const struct eng_term *t, uint32_t b,
                            uint32_t lo, uint32_t hi, const uint64_t *v, uint32_t base,
                            uint32_t ids[ENG_BLOCK], uint32_t wf2[ENG_BLOCK])
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    struct eng_heads h;
    uint8_t js[ENG_BLOCK];
    bool past;
    uint32_t nj = block_matches(s, t, skip, b, lo, hi, v, base, ids, js, &past);
    block_heads(s, t, skip, b, js, nj, &h);
    for (uint32_t k = 0; k < nj; k++) { /* (js[k] >= k: ids compacts in place) */
        ids[k] = ids[js[k]];
        wf2[k] = eng_heads_wf2(&h, js[k], INDEX_FIELD_ALL);
    }
    return nj;
}

/* --- the encoder: a term's postings as the builder (segbuild.c) and the
 * merge (eng_segw) hand them over, into the layout above ------------------ */

int eng_grow(void **p, size_t *cap, size_t need, size_t size)
{
    /* (the check first: the builder asks for every occurrence) */
    return need <= *cap ? 0 : array_reserve(p, cap, need, 0, size);
}

int eng_obuf_put(struct eng_obuf *o, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (eng_grow((void **)&o->p, &o->cap, o->n + n, 1) < 0)
        return ERR_NOMEM;
    memcpy(o->p + o->n, p, n);
    o->n += n;
    return 0;
}

void eng_enc_bufs_free(struct eng_enc_bufs *e)
{
    free(e->tier_wf2);
    free(e->docs.p);
    free(e->data.p);
    free(e->pos.p);
    free(e->skip);
}

static int pack_block(struct eng_obuf *docs, const uint32_t *gaps, uint32_t n)
{
    uint8_t out[ENG_BLOCK_MAX_BYTES];
    return eng_obuf_put(docs, out, eng_pack(out, gaps, n));
}

/* A posting's builder data (flush_doc: per field its tf, then for exact
 * terms its positions) split: its mask and tfs to e->h at j, its positions
 * to pos; twice its weighted frequency (eng_wf2 per field times tf) into *wf2. */
static int split_posting(struct eng_enc_bufs *e, uint32_t j, const uint8_t *p, const uint8_t *end,
                         bool exact, uint32_t *wf2)
{
    unsigned mask;
    uint32_t tf;
    int rc = 0;
    p = eng_posting_head(p, &mask, &tf);
    for (unsigned f = 0, first = 1; f < ENG_FIELDS && rc == 0; f++) {
        e->h.tf[f][j] = 0;
        if (!(mask & (1u << f)))
            continue;
        if (!first)
            p = eng_posting_tf_next(p, &tf);
        first = 0;
        e->h.tf[f][j] = tf;
        if (exact) {
            const uint8_t *q = p;
            p = eng_varints_skip(p, tf);
            rc = eng_obuf_put(&e->pos, q, (size_t)(p - q));
        }
    }
    *wf2 = eng_heads_wf2(&e->h, j, INDEX_FIELD_ALL);
    return rc == 0 && p != end ? ERR_PARSE : rc;
}

/* Encode term t (postings remapped by newdoc, NULL: not; dl by new
 * docid) into post: docids as bit-packed blocks; data per block, its
 * heads (heads.h), an exact term's positions after them. */
int eng_postings_encode(struct eng_obuf *post, struct eng_enc_bufs *e, const struct eng_bterm *t,
                        const uint32_t *newdoc, const uint32_t *dl, uint64_t *keys,
                        const struct eng_tdict_w *dict, struct eng_term *out)
{
    static const uint8_t zero[4];
    uint32_t n = t->n, nblocks = (n + ENG_BLOCK - 1) / ENG_BLOCK;
    uint32_t gaps[ENG_BLOCK];
    uint32_t prev = UINT32_MAX;
    bool exact = eng_kind(t->kind) == ENG_TERM_EXACT;
    int rc = 0;

    /* (reused from term to term: a calloc() per term, most of them of one
     * block, showed in a first build's profile) */
    if (eng_grow((void **)&e->skip, &e->skipcap, nblocks ? nblocks : 1, sizeof *e->skip) < 0)
        return ERR_NOMEM;
    struct eng_skip *skip = e->skip;
    memset(skip, 0, (nblocks ? nblocks : 1) * sizeof *skip);
    for (uint32_t i = 0; i < n; i++) {
        if (newdoc && i + ENG_AHEAD < n)
            __builtin_prefetch(&newdoc[t->pst[i + ENG_AHEAD].doc]);
        keys[i] = (uint64_t)(newdoc ? newdoc[t->pst[i].doc] : t->pst[i].doc) << 32 | i;
    }
    /* Ingest order is mostly oldest first, i.e. the reverse of docid order;
     * a merge (eng_segw) gives docid order. */
    bool desc = true, asc = true;
    for (uint32_t i = 1; i < n && desc; i++)
        desc = keys[i] < keys[i - 1];
    for (uint32_t i = 1; i < n && asc && !desc; i++)
        asc = keys[i] > keys[i - 1];
    if (asc && !desc) {
        /* already in order */
    } else if (desc) {
        for (uint32_t i = 0; i < n / 2; i++) {
            uint64_t x = keys[i];
            keys[i] = keys[n - 1 - i];
            keys[n - 1 - i] = x;
        }
    } else {
        qsort(keys, n, sizeof *keys, sort_cmp_u64);
    }
    e->docs.n = 0;
    e->data.n = 0;
    uint32_t tier = eng_tier_kind(eng_kind(t->kind)) ? eng_tier_size(n, e->tier_min_df) : 0;
    if (tier && eng_grow((void **)&e->tier_wf2, &e->tier_wf2_cap, n, sizeof *e->tier_wf2) < 0)
        return ERR_NOMEM;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t d = (uint32_t)(keys[i] >> 32), k = (uint32_t)keys[i];
        struct eng_skip *sk = &skip[i / ENG_BLOCK];
        if (i + ENG_AHEAD < n) /* as eng_prefetch_ahead (internal.h) */
            __builtin_prefetch(&dl[keys[i + ENG_AHEAD] >> 32]);
        if (i % ENG_BLOCK == 0) {
            sk->doc_off = (uint32_t)e->docs.n;
            sk->data_off = (uint32_t)e->data.n;
            sk->dl_min = UINT32_MAX;
            e->pos.n = 0;
        }
        if (dl[d] < sk->dl_min)
            sk->dl_min = dl[d];
        gaps[i % ENG_BLOCK] = d - prev - 1;
        prev = d;
        if (eng_kind(t->kind) != ENG_TERM_META) {
            const uint8_t *at = t->data + t->pst[k].off,
                          *end = t->data + (k + 1 < n ? t->pst[k + 1].off : t->dlen);
            uint32_t wf2;
            rc = split_posting(e, i % ENG_BLOCK, at, end, exact, &wf2);
            if (wf2 > sk->wf2_max)
                sk->wf2_max = wf2;
            if (tier)
                e->tier_wf2[i] = wf2;
        }
        if (rc == 0 && (i % ENG_BLOCK == ENG_BLOCK - 1 || i == n - 1)) {
            sk->last = d;
            rc = pack_block(&e->docs, gaps, i % ENG_BLOCK + 1);
            if (rc == 0 && eng_kind(t->kind) != ENG_TERM_META) {
                uint8_t heads[ENG_HEADS_MAX_BYTES];
                rc = eng_obuf_put(&e->data, heads, eng_heads_encode(heads, &e->h, i % ENG_BLOCK + 1));
            }
            if (rc == 0 && exact)
                rc = eng_obuf_put(&e->data, e->pos.p, e->pos.n);
        }
    }
    /* A list of several blocks begins 4-byte aligned: its skip table is
     * read in place (struct eng_skip holds only uint32_t). A list of one
     * block has its maxima in its dictionary entry (tdict.h). */
    uint64_t off = eng_tdict_off(dict->post, nblocks > 1);
    if (rc == 0 && (post->n != dict->post || off - post->n > sizeof zero))
        rc = ERR_INVALID; /* the postings and the dictionary out of step */
    if (rc == 0)
        rc = eng_obuf_put(post, zero, (size_t)(off - post->n));
    out->off = off;
    out->str = dict->str;
    out->len = t->len;
    out->df = n;
    out->docs_len = (uint32_t)e->docs.n;
    out->kind = t->kind;
    if (rc == 0 && nblocks == 1) {
        out->wf2_max = skip[0].wf2_max;
        out->dl_min = skip[0].dl_min;
    } else if (rc == 0) {
        rc = eng_obuf_put(post, skip, nblocks * sizeof *skip);
    }
    if (rc == 0)
        rc = eng_obuf_put(post, e->docs.p, e->docs.n);
    if (rc == 0)
        rc = eng_obuf_put(post, e->data.p, e->data.n);
    if (rc == 0 && post->n - off > UINT32_MAX)
        rc = ERR_TOO_LARGE;
    out->bytes = (uint32_t)(post->n - off);
    out->tier_bytes = 0;
    if (rc == 0 && tier) { /* written in place after the postings */
        size_t len = 0;
        if (eng_grow((void **)&post->p, &post->cap, post->n + eng_tier_encode_max(tier), 1) < 0)
            rc = ERR_NOMEM;
        if (rc == 0)
            rc = eng_tier_encode(post->p + post->n, &len, keys, e->tier_wf2, n, dl, e->avgdl, tier);
        post->n += len;
        out->kind |= ENG_TERM_TIERED;
        out->tier_bytes = (uint32_t)len;
    }
    return rc;
}
