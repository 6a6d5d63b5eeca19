/* Postings codec and cursor (index/engine/internal.h has the layout).
 * Docids are varint gaps in blocks of ENG_BLOCK with a skip table of the
 * last docid per block, so a seek binary-searches the skip table and
 * decodes one block up to its target; counting a docid range decodes at most the two
 * boundary blocks. Varint rather than FOR-128: news postings are short
 * and varint decoding of one block is not what dominates (docs/engine.md). */
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

/* Decodes the next docid of the current block into ids[ndec]. Gaps are
 * stored minus one, from the previous block's last docid. */
static inline uint32_t block_next(struct eng_cursor *c)
{
    uint32_t g;
    if (*c->bp < 0x80) /* one byte: nearly every gap of a list that matters */
        g = *c->bp++;
    else
        c->bp = eng_varint_get(c->bp, &g);
    uint32_t prev = c->ndec > 0 ? c->ids[c->ndec - 1]
                    : c->blk == 0 ? UINT32_MAX
                                  : c->skip[c->blk - 1].last;
    c->ids[c->ndec] = prev + g + 1;
    return c->ids[c->ndec++];
}

/* Makes block b current with only its first docid decoded: a seek into a
 * block decodes up to its target, half a block on average (the profile of
 * a rare word under a sources filter: a third of its time decoding the
 * filter terms' blocks in full). */
static void block_load(struct eng_cursor *c, uint32_t b)
{
    const struct eng_term *t = c->t;
    uint32_t n = t->df - b * ENG_BLOCK;

    if (n > ENG_BLOCK)
        n = ENG_BLOCK;
    c->blk = b;
    c->nin = n;
    c->i = 0;
    c->ndec = 0;
    c->bp = c->docs + c->skip[b].doc_off;
    c->doc = block_next(c);
    c->dp = c->data ? c->data + c->skip[b].data_off : NULL;
    c->di = 0;
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
        if (c->skip == &c->one) { /* its last docid bounds every seek */
            while (c->ndec < c->nin)
                block_next(c);
            c->one.last = c->ids[c->nin - 1];
        }
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
    while (c->ids[c->i] < target) {
        if (++c->i == c->ndec)
            block_next(c);
    }
    c->doc = c->ids[c->i];
    return c->doc;
}

/* Skip posting data up to the current posting. */
static void data_advance(struct eng_cursor *c)
{
    bool exact = c->t->kind == ENG_TERM_EXACT;
    while (c->di < c->i) {
        unsigned mask;
        uint32_t tf;
        c->dp = eng_posting_head(c->dp, &mask, &tf);
        for (unsigned f = 0, first = 1; f < ENG_FIELDS; f++) {
            if (!(mask & (1u << f)))
                continue;
            if (!first)
                c->dp = eng_posting_tf_next(c->dp, &tf);
            first = 0;
            if (exact) {
                for (uint32_t k = 0; k < tf; k++) {
                    while (*c->dp & 0x80)
                        c->dp++;
                    c->dp++;
                }
            }
        }
        c->di++;
    }
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
        if (!exact)
            continue;
        uint32_t at = 0;
        for (uint32_t k = 0; k < tf[f]; k++) {
            uint32_t d;
            p = eng_varint_get(p, &d);
            at = k == 0 ? d : at + d;
            if (pos && k < ENG_POS_MAX)
                pos[f][k] = at;
        }
        if (pos && tf[f] > ENG_POS_MAX)
            tf[f] = ENG_POS_MAX; /* a phrase then sees the first ENG_POS_MAX only */
    }
}

/* Postings of block b with docid < x. */
static uint32_t block_below(struct eng_cursor *c, uint32_t b, uint32_t x)
{
    uint32_t k = 0;
    block_load(c, b);
    while (c->ids[k] < x && ++k < c->nin) {
        if (k == c->ndec)
            block_next(c);
    }
    return k;
}

/* Postings with docid < x. */
static uint32_t count_below(struct eng_cursor *c, uint32_t x)
{
    uint32_t lo = block_reaching(c->skip, 0, eng_term_nblocks(c->t), x);
    if (lo == eng_term_nblocks(c->t))
        return c->t->df;
    return lo * ENG_BLOCK + block_below(c, lo, x);
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

    if (t->df == 0 || lo >= hi)
        return 0;
    for (uint32_t b = block_reaching(skip, 0, nb, lo); b < nb; b++) {
        uint32_t prev = b == 0 ? UINT32_MAX : skip[b - 1].last;
        uint32_t n = t->df - b * ENG_BLOCK;
        const uint8_t *p = docs + skip[b].doc_off;
        if (n > ENG_BLOCK)
            n = ENG_BLOCK;
        if (b > 0 && prev + 1 >= hi)
            break;
        if ((b == 0 ? 0 : prev + 1) >= lo && skip[b].last < hi) {
            /* the whole block inside the window: no bound checks */
            uint32_t d = prev;
            for (uint32_t k = 0; k < n; k++) {
                uint32_t g;
                if (*p < 0x80)
                    g = *p++;
                else
                    p = eng_varint_get(p, &g);
                d = d + g + 1;
                bits[(d - base) >> 6] |= (uint64_t)1 << ((d - base) & 63);
            }
            set += n;
            continue;
        }
        for (uint32_t k = 0; k < n; k++) {
            uint32_t g;
            if (*p < 0x80) /* one byte: nearly every gap of a list that matters */
                g = *p++;
            else
                p = eng_varint_get(p, &g);
            prev = prev + g + 1;
            if (prev >= hi)
                return set;
            if (prev >= lo) {
                bits[(prev - base) >> 6] |= (uint64_t)1 << ((prev - base) & 63);
                set++;
            }
        }
    }
    return set;
}

uint32_t eng_posting_wf2(const uint8_t *p, bool exact)
{
    unsigned mask;
    uint32_t w = 0, tf;
    p = eng_posting_head(p, &mask, &tf);
    for (unsigned f = 0, first = 1; f < ENG_FIELDS; f++) {
        if (!(mask & (1u << f)))
            continue;
        if (!first)
            p = eng_posting_tf_next(p, &tf);
        first = 0;
        w += eng_wf2[f] * tf;
        for (uint32_t k = 0; exact && k < tf; k++) { /* the field's positions */
            while (*p & 0x80)
                p++;
            p++;
        }
    }
    return w;
}
