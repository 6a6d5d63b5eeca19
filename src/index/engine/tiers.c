/* Tiers of frequent terms (tiers.h): chosen when a segment's postings are
 * encoded (postings.c), read by relevancy (tierpage.c), checked against their
 * list the first time a file's term is opened (segcheck.c).
 *
 * A tier's bytes, after its term's postings:
 *   varint n, varint nfront
 *   nfront × (varint wf2, varint dl)   the rest's front, wf2 descending
 *   n × varint                         docids: the first, then each gap - 1
 *   n × varint                         their wf2 */
#include "index/engine/tiers.h"

#include "index/engine/internal.h"

#include <stdlib.h>

#include "util/sort.h"
#include "util/banned.h"

/* --- choosing ---------------------------------------------------------- */

/* A posting's place in the choice: its bm25 term at the segment's average
 * length, idf left out (one term: the same factor for every posting). */
struct ranked {
    double key;
    uint32_t i; /* its index in docid order */
};

/* Whether x ranks below y: a smaller key, or an equal one later in docid
 * order (so that the choice is the same whatever the order of the walk). */
static bool below(const struct ranked *x, const struct ranked *y)
{
    return x->key < y->key || (x->key == y->key && x->i > y->i);
}

/* Min-heap by below(): h[0] the worst kept. */
static void sift_down(struct ranked *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && below(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && below(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct ranked x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

static int by_index(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The front's bucket of a wf2: half-octaves, so that a pair's wf2 is at
 * most 1.5 times the least of its bucket (wf2 >= 2: the least weight). */
static unsigned front_bucket(uint32_t wf2)
{
    if (wf2 < 2)
        return 0;
    unsigned hi = bits_high(wf2);
    unsigned b = 2 * hi + ((wf2 >> (hi - 1)) & 1);
    return b < ENG_TIER_FRONT ? b : ENG_TIER_FRONT - 1;
}

/* Posting i's docid (keys: the encoder's, docid << 32 | its place). */
static uint32_t key_doc(const uint64_t *keys, uint32_t i)
{
    return (uint32_t)(keys[i] >> 32);
}

int eng_tier_encode(uint8_t *out, size_t *len, const uint64_t *keys, const uint32_t *wf2,
                    uint32_t n, const uint32_t *dl, double avgdl, uint32_t size)
{
    const double k1 = ENG_BM25_K1, b = ENG_BM25_B; /* as eng_bm25_term */
    struct ranked *h = malloc((size_t)size * sizeof *h);
    uint32_t fw[ENG_TIER_FRONT] = {0}, fd[ENG_TIER_FRONT];
    bool used[ENG_TIER_FRONT] = {false};
    size_t at = 0;

    if (h == NULL)
        return ERR_NOMEM;
    if (!(avgdl > 0.0))
        avgdl = 1.0;
    for (uint32_t i = 0; i < n; i++) {
        double f = wf2[i] * 0.5;
        struct ranked x = {f / (f + k1 * (1 - b + b * dl[key_doc(keys, i)] / avgdl)), i};
        if (i < size) {
            h[i] = x;
            if (i == size - 1)
                for (uint32_t j = size / 2; j-- > 0;)
                    sift_down(h, size, j);
        } else if (below(&h[0], &x)) {
            h[0] = x;
            sift_down(h, size, 0);
        }
    }
    qsort(h, size, sizeof *h, by_index);
    /* the rest's front: per bucket its largest wf2 and least length */
    for (uint32_t i = 0, j = 0; i < n; i++) {
        if (j < size && h[j].i == i) {
            j++;
            continue;
        }
        unsigned k = front_bucket(wf2[i]);
        uint32_t d = dl[key_doc(keys, i)];
        if (!used[k] || wf2[i] > fw[k])
            fw[k] = wf2[i];
        if (!used[k] || d < fd[k])
            fd[k] = d;
        used[k] = true;
    }
    /* a pair another one dominates (as large a wf2, as short a length) is left out */
    uint32_t nfront = 0, least = UINT32_MAX;
    for (unsigned k = ENG_TIER_FRONT; k-- > 0;) {
        if (!used[k] || fd[k] >= least)
            used[k] = false;
        else
            least = fd[k], nfront++;
    }
    at += eng_varint_put(out + at, size);
    at += eng_varint_put(out + at, nfront);
    for (unsigned k = ENG_TIER_FRONT; k-- > 0;) {
        if (used[k]) {
            at += eng_varint_put(out + at, fw[k]);
            at += eng_varint_put(out + at, fd[k]);
        }
    }
    for (uint32_t j = 0, prev = 0; j < size; j++) {
        uint32_t d = key_doc(keys, h[j].i);
        at += eng_varint_put(out + at, j == 0 ? d : d - prev - 1);
        prev = d;
    }
    for (uint32_t j = 0; j < size; j++)
        at += eng_varint_put(out + at, wf2[h[j].i]);
    free(h);
    *len = at;
    return 0;
}

/* --- reading ----------------------------------------------------------- */

int eng_tier_read(const struct eng_segment *s, const struct eng_term *t, struct eng_tier *out)
{
    const uint8_t *p = s->post + t->off + t->bytes, *end = p + t->tier_bytes;
    uint32_t n, nfront;

    if ((p = eng_varint_in(p, end, &n)) == NULL || (p = eng_varint_in(p, end, &nfront)) == NULL ||
        n == 0 || n > ENG_TIER_MAX || n > t->df || nfront > ENG_TIER_FRONT)
        return ERR_PARSE;
    for (uint32_t k = 0; k < nfront; k++) {
        if ((p = eng_varint_in(p, end, &out->front_wf2[k])) == NULL ||
            (p = eng_varint_in(p, end, &out->front_dl[k])) == NULL)
            return ERR_PARSE;
    }
    uint64_t d = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t gap;
        if ((p = eng_varint_in(p, end, &gap)) == NULL)
            return ERR_PARSE;
        d = j == 0 ? gap : d + gap + 1;
        if (d >= s->n)
            return ERR_PARSE;
        out->doc[j] = (uint32_t)d;
    }
    for (uint32_t j = 0; j < n; j++) {
        if ((p = eng_varint_in(p, end, &out->wf2[j])) == NULL)
            return ERR_PARSE;
    }
    out->n = n;
    out->nfront = nfront;
    return p == end ? 0 : ERR_PARSE;
}

/* --- checking ---------------------------------------------------------- */

bool eng_tier_check_posting(struct eng_tier_check *c, uint32_t doc, uint32_t wf2, uint32_t dl)
{
    const struct eng_tier *t = &c->t;
    if (c->next < t->n && t->doc[c->next] < doc)
        return false; /* a tier docid the list does not hold */
    if (c->next < t->n && t->doc[c->next] == doc)
        return t->wf2[c->next++] == wf2;
    for (uint32_t k = 0; k < t->nfront; k++) {
        if (wf2 <= t->front_wf2[k] && dl >= t->front_dl[k])
            return true;
    }
    return false;
}

bool eng_tier_check_end(const struct eng_tier_check *c)
{
    return c->next == c->t.n;
}
