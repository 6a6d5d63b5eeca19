/* Postings codec and cursor (index/engine/internal.h has the layout).
 * Docids are bit-packed gaps in blocks of ENG_BLOCK (FOR-128) with a skip
 * table of the last docid per block, so a seek binary-searches the skip
 * table and decodes one block; counting a docid range decodes at most the
 * two boundary blocks. Varint gaps were read one byte at a time, each
 * gap's place known only once the one before was read: the profile of an
 * AND of three words had eng_postings_fill at 42 % (docs/engine.md). */
#include "index/engine/internal.h"

#include <string.h>

#include "util/banned.h"

size_t eng_varint_put(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

const uint8_t *eng_varint_get(const uint8_t *p, uint32_t *v)
{
    uint32_t x = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        x |= (uint32_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    x |= (uint32_t)*p++ << shift;
    *v = x;
    return p;
}

size_t eng_posting_tf_put(uint8_t *p, unsigned mask, unsigned f, uint32_t tf)
{
    if (f == (unsigned)__builtin_ctz(mask))
        return eng_varint_put(p, (tf - 1) << 3 | mask);
    return eng_varint_put(p, tf - 1);
}

/* Eight bytes at p as a little-endian number (the packing's order). */
static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

size_t eng_block_encode(uint8_t *out, const uint32_t *gaps, uint32_t n)
{
    uint32_t max = 0;
    for (uint32_t i = 0; i < n; i++)
        max |= gaps[i];
    unsigned w = max ? 32u - (unsigned)__builtin_clz(max) : 0;
    size_t len = eng_block_bytes(n, w);
    out[0] = (uint8_t)w;
    memset(out + 1, 0, len);
    for (uint32_t i = 0; i < n; i++) {
        size_t bit = (size_t)i * w;
        uint64_t v = (uint64_t)gaps[i] << (bit & 7);
        for (size_t k = 0; (bit >> 3) + k < len && k < 5; k++) /* 32 + 7 bits: 5 bytes */
            out[1 + (bit >> 3) + k] |= (uint8_t)(v >> (8 * k));
    }
    return 1 + len;
}

/* A docid block's docids, each after x: emit(ctx, i, docid i) in order.
 * A gap is read where the packing put it: one unaligned load, a shift and
 * a mask at a place known beforehand (no gap waits for the one before it
 * but through the running sum). The loads stay inside the block: the gaps
 * of its last eight bytes are read from a copy padded with zeros. Inline
 * with emit known at each call, so that each caller's loop is its own. */
static inline void block_each(const uint8_t *block, uint32_t n, uint32_t x,
                              void (*emit)(void *ctx, uint32_t i, uint32_t docid), void *ctx)
{
    unsigned w = *block & 63u; /* <= 32 in any checked segment */
    const uint8_t *p = block + 1;
    uint64_t mask = ((uint64_t)1 << w) - 1;
    size_t len = eng_block_bytes(n, w);
    uint32_t i = 0;
    for (; i < n && ((size_t)i * w >> 3) + 8 <= len; i++) {
        size_t bit = (size_t)i * w;
        x += (uint32_t)(load_le64(p + (bit >> 3)) >> (bit & 7) & mask) + 1;
        emit(ctx, i, x);
    }
    if (i < n) {
        size_t from = len > 8 ? len - 8 : 0;
        uint8_t tail[16] = {0};
        memcpy(tail, p + from, len - from);
        for (; i < n; i++) {
            size_t bit = (size_t)i * w;
            x += (uint32_t)(load_le64(tail + ((bit >> 3) - from)) >> (bit & 7) & mask) + 1;
            emit(ctx, i, x);
        }
    }
}

static inline void emit_id(void *ctx, uint32_t i, uint32_t docid)
{
    ((uint32_t *)ctx)[i] = docid;
}

void eng_block_decode(const uint8_t *p, uint32_t n, uint32_t prev, uint32_t *ids)
{
    block_each(p, n, prev, emit_id, ids);
}

/* Sets bit x (a docid minus the set's base): block_fill's emit. */
static inline void emit_bit(void *ctx, uint32_t i, uint32_t x)
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

/* The docid before block b (UINT32_MAX before the first). */
static inline uint32_t block_prev(const struct eng_skip *skip, uint32_t b)
{
    return b == 0 ? UINT32_MAX : skip[b - 1].last;
}

/* Makes block b current, all its docids decoded. */
static void block_load(struct eng_cursor *c, uint32_t b)
{
    const struct eng_term *t = c->t;
    uint32_t n = t->df - b * ENG_BLOCK;

    if (n > ENG_BLOCK)
        n = ENG_BLOCK;
    c->blk = b;
    c->nin = n;
    c->i = 0;
    eng_block_decode(c->docs + c->skip[b].doc_off, n, block_prev(c->skip, b), c->ids);
    c->doc = c->ids[0];
    c->di = 0;
    c->dp = c->data ? c->data + c->skip[b].data_off : NULL;
    c->pp = NULL;
    c->pskip = 0;
    if (c->dp && t->kind == ENG_TERM_EXACT) {
        uint32_t heads;
        c->dp = eng_varint_get(c->dp, &heads);
        c->pp = c->dp + heads;
    }
}

/* The skip table of t; for a one-block list, *one filled with its maxima,
 * offsets 0 and a last docid past every window (until the block is
 * decoded). */
static const struct eng_skip *term_skip(const struct eng_segment *s, const struct eng_term *t,
                                        struct eng_skip *one)
{
    const uint8_t *p = s->post + t->off;
    if (eng_term_nblocks(t) != 1)
        return (const struct eng_skip *)(uintptr_t)p;
    const struct eng_skip1 *m = (const struct eng_skip1 *)(uintptr_t)p;
    *one = (struct eng_skip){.last = ENG_END - 1, .wf2_max = m->wf2_max, .dl_min = m->dl_min};
    return one;
}

/* The first block in [lo, hi) whose last docid reaches x; hi if none. */
static uint32_t block_reaching(const struct eng_skip *skip, uint32_t lo, uint32_t hi, uint32_t x)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (skip[mid].last < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void eng_cursor_init(struct eng_cursor *c, const struct eng_segment *s, const struct eng_term *t)
{
    c->t = t;
    c->skip = term_skip(s, t, &c->one);
    c->docs = s->post + t->off + eng_term_skip_bytes(t);
    c->data = t->kind == ENG_TERM_META ? NULL : c->docs + t->docs_len;
    c->blk = 0;
    c->nin = 0;
    c->i = 0;
    c->doc = ENG_END;
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

/* Skip posting heads up to the current posting; an exact term's skipped
 * positions are only counted (pskip), skipped when positions are read. */
static void data_advance(struct eng_cursor *c)
{
    bool exact = c->t->kind == ENG_TERM_EXACT;
    while (c->di < c->i) {
        uint32_t wf2, tfs;
        c->dp = eng_posting_head_read(c->dp, &wf2, &tfs);
        if (exact)
            c->pskip += tfs;
        c->di++;
    }
}

/* A varint ends at a byte below 0x80: while eight or more are due the
 * next eight bytes are theirs, and their ends are counted at once (a
 * varint cut at the eighth byte still ends at its own end byte, counted
 * later). */
const uint8_t *eng_varints_skip(const uint8_t *p, uint32_t n)
{
    while (n >= 8) {
        n -= (uint32_t)__builtin_popcountll(~load_le64(p) & 0x8080808080808080u);
        p += 8;
    }
    while (n > 0) {
        while (*p & 0x80)
            p++;
        p++;
        n--;
    }
    return p;
}

void eng_cursor_data(struct eng_cursor *c, unsigned *mask, uint32_t tf[ENG_FIELDS],
                     uint32_t (*pos)[ENG_POS_MAX])
{
    const uint8_t *p;
    bool exact = c->t->kind == ENG_TERM_EXACT;

    memset(tf, 0, ENG_FIELDS * sizeof *tf);
    if (c->data == NULL) {
        *mask = 0;
        return;
    }
    data_advance(c);
    uint32_t tf0;
    p = eng_posting_head(c->dp, mask, &tf0);
    for (unsigned f = 0, first = 1; f < ENG_FIELDS; f++) {
        if (!(*mask & (1u << f)))
            continue;
        if (first)
            tf[f] = tf0;
        else
            p = eng_posting_tf_next(p, &tf[f]);
        first = 0;
    }
    if (!exact || pos == NULL)
        return;
    /* this posting's positions: pp stays at their start, as di stays at
     * this posting (the next data_advance counts them to skip) */
    c->pp = eng_varints_skip(c->pp, c->pskip);
    c->pskip = 0;
    p = c->pp;
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
    uint32_t a = 0, b = c->nin; /* the first of the block's ids reaching x */
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (c->ids[mid] < x)
            a = mid + 1;
        else
            b = mid;
    }
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
        uint32_t n = t->df - b * ENG_BLOCK;
        if (n > ENG_BLOCK)
            n = ENG_BLOCK;
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

/* Set bits of v below bit i of word w (rank[w] counts the words before). */
static inline uint32_t bit_rank(const uint64_t *v, const uint32_t *rank, uint32_t x)
{
    uint64_t below = v[x >> 6] & (((uint64_t)1 << (x & 63)) - 1);
    return rank[x >> 6] + (uint32_t)__builtin_popcountll(below);
}

void eng_postings_weigh(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                        uint32_t hi, const uint64_t *v, uint32_t base, const uint32_t *rank,
                        uint32_t *wf2)
{
    struct eng_skip one;
    const struct eng_skip *skip = term_skip(s, t, &one);
    const uint8_t *docs = s->post + t->off + eng_term_skip_bytes(t);
    const uint8_t *data = docs + t->docs_len;
    uint32_t nb = eng_term_nblocks(t);
    uint32_t ids[ENG_BLOCK];

    if (t->df == 0 || lo >= hi || t->kind == ENG_TERM_META)
        return;
    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        uint32_t prev = block_prev(skip, b);
        uint32_t n = t->df - b * ENG_BLOCK;
        if (n > ENG_BLOCK)
            n = ENG_BLOCK;
        uint32_t first = b == 0 ? 0 : prev + 1;
        if (first >= hi)
            break;
        /* a block without a match is skipped whole: its data has its own
         * offset (one-block lists are decoded: their last is a stand-in) */
        if (nb > 1) {
            uint32_t a = first < lo ? lo : first, z = skip[b].last < hi ? skip[b].last : hi - 1;
            if (!any_bit(v, base, a, z))
                continue;
        }
        eng_block_decode(docs + skip[b].doc_off, n, prev, ids);
        const uint8_t *p = data + skip[b].data_off;
        if (t->kind == ENG_TERM_EXACT) {
            uint32_t heads;
            p = eng_varint_get(p, &heads);
        }
        for (uint32_t j = 0; j < n; j++) {
            uint32_t d = ids[j], w, tfs;
            p = eng_posting_head_read(p, &w, &tfs);
            if (d >= hi)
                return;
            if (d >= lo && (v[(d - base) >> 6] >> ((d - base) & 63) & 1))
                wf2[bit_rank(v, rank, d - base)] = w;
        }
    }
}
