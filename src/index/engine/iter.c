/* The document-at-a-time iterators of a search (search.h): a plan's node
 * per segment over its postings cursors: AND leapfrogs on skip tables, OR
 * merges, NOT subtracts, phrases check positions; and a scored leaf's
 * weighted frequency at its document, as FTS5 counts instances. */
#include "index/engine/search.h"
#include "index/engine/columns.h"

#include <string.h>

#include "index/near.h"
#include "util/limits.h"
#include "util/banned.h"

/* A language or source term whose postings cover more than one document in
 * this many is checked from its facet column at an AND's candidate: its
 * cursor's seek decodes a block for nearly every candidate of a rare word
 * (block_load 16 % of the rare word's language-filtered page at 10 M). */
#define COLUMN_DENSE 8

static struct node *node_alloc(struct ev *ev, const struct plan *p)
{
    struct node *n = arena_calloc(ev->a, 1, sizeof *n);
    if (n == NULL) {
        ev->nomem = true;
        return NULL;
    }
    n->kind = p->kind;
    n->colset = p->colset;
    n->plan = p;
    return n;
}

/* The pair term of words i and i + 1 of phrase p into str (room for
 * 2 * LIMIT_TOKEN_BYTES + 2); its length, 0 when longer. */
static size_t pair_string(const struct plan *p, size_t i, char *str)
{
    if (p->lens[i] + p->lens[i + 1] + 2 > 2 * LIMIT_TOKEN_BYTES + 2)
        return 0;
    return eng_pair_str(str, p->terms[i], p->lens[i], p->terms[i + 1], p->lens[i + 1]);
}

bool eng_iter_phrase_pair(const struct eng_segment *seg, const struct plan *p, struct eng_term *out)
{
    char str[2 * LIMIT_TOKEN_BYTES + 2];
    struct eng_term a, b;
    if (p->kind != PLAN_PHRASE || p->n != 2 ||
        !eng_segment_term(seg, p->terms[0], p->lens[0], &a) ||
        !eng_segment_term(seg, p->terms[1], p->lens[1], &b) || !(a.kind & b.kind & ENG_TERM_PAIRED))
        return false;
    size_t len = pair_string(p, 0, str);
    return len && eng_segment_term(seg, str, len, out);
}

/* Term str of this segment opened into the search's arena (*out NULL when
 * absent); -1 when the segment is damaged or memory ran out. */
static int term_open(struct ev *ev, const char *str, size_t len, const struct eng_term **out)
{
    struct eng_term *t = arena_alloc(ev->a, sizeof *t);
    int found = t ? eng_segment_term_open(ev->seg, str, len, t) : 0;
    *out = found > 0 ? t : NULL;
    if (t == NULL)
        ev->nomem = true;
    return t == NULL || found < 0 ? -1 : 0;
}

/* The rarest pair term (pairs.h) of phrase p's consecutive words t[] that
 * this segment pairs, into *out (NULL: none paired). -1 when one such pair
 * is absent (the phrase cannot match here) or the segment is damaged. */
static int rarest_pair(struct ev *ev, const struct plan *p, const struct eng_term *const *t,
                       const struct eng_term **out)
{
    char str[2 * LIMIT_TOKEN_BYTES + 2];
    *out = NULL;
    for (size_t i = 0; i + 1 < p->n; i++) {
        const struct eng_term *pt;
        size_t len;
        if (!(t[i]->kind & t[i + 1]->kind & ENG_TERM_PAIRED) || (len = pair_string(p, i, str)) == 0)
            continue;
        if (term_open(ev, str, len, &pt) < 0 || pt == NULL)
            return -1;
        if (*out == NULL || pt->df < (*out)->df)
            *out = pt;
    }
    return 0;
}

/* A proximity of two distinct words paired here: the cursors of their
 * pairs both ways (a term left NULL when absent). Adjacent, the two words
 * are a window of any "a b"~N (index_near_span(N, 2) >= 1), and within
 * the positions near_count reads (pairs.h): a document holding either pair
 * in the node's columns matches without its positions decoded. */
static int near_pairs(struct ev *ev, struct node *n, const struct eng_term *const *t)
{
    const struct plan *p = n->plan;
    char str[2 * LIMIT_TOKEN_BYTES + 2];
    if (p->n != 2 || !(t[0]->kind & t[1]->kind & ENG_TERM_PAIRED) || t[0]->idx == t[1]->idx)
        return 0;
    if ((n->near_pairs = arena_calloc(ev->a, 2, sizeof *n->near_pairs)) == NULL) {
        ev->nomem = true;
        return -1;
    }
    struct plan back = *p; /* the words the other way round */
    const char *terms[2] = {p->terms[1], p->terms[0]};
    size_t lens[2] = {p->lens[1], p->lens[0]};
    back.terms = terms;
    back.lens = lens;
    for (int k = 0; k < 2; k++) {
        const struct eng_term *pt = NULL;
        size_t len = pair_string(k ? &back : p, 0, str);
        if (len && term_open(ev, str, len, &pt) < 0)
            return -1;
        if (pt)
            eng_cursor_init(&n->near_pairs[k], ev->seg, pt);
    }
    return 0;
}

/* Whether a pair of proximity n holds doc in n's columns. */
static bool near_paired(struct node *n, uint32_t doc)
{
    for (int k = 0; n->near_pairs && k < 2; k++) {
        struct eng_cursor *c = &n->near_pairs[k];
        uint32_t tf[ENG_FIELDS];
        unsigned mask;
        if (c->t == NULL || eng_cursor_seek(c, doc) != doc)
            continue;
        if ((n->colset & INDEX_FIELD_ALL) == INDEX_FIELD_ALL)
            return true; /* in some column: no need to read which */
        eng_cursor_data(c, &mask, tf, NULL);
        if (mask & n->colset)
            return true;
    }
    return false;
}

/* A phrase of two paired words as its pair's list: a term of the phrase's
 * columns, its tfs the phrase's instances per field. */
static struct node *pair_node(struct ev *ev, struct node *n, const struct eng_term *pair)
{
    const struct plan *p = n->plan;
    n->kind = PLAN_TERM;
    n->n = 1;
    if ((n->cur = arena_alloc(ev->a, sizeof *n->cur)) == NULL) {
        ev->nomem = true;
        return NULL;
    }
    eng_cursor_init(n->cur, ev->seg, pair);
    n->filter = (p->colset & INDEX_FIELD_ALL) != INDEX_FIELD_ALL;
    if (p->leaf >= 0)
        ev->leaf_nodes[p->leaf] = n;
    return n;
}

/* Whether seg keeps the residual of word p, a TERM (resid.h; absent: empty). */
static bool resid_kept(const struct eng_segment *seg, const struct plan *p)
{
    struct eng_term t;
    return eng_segment_term(seg, p->terms[0], p->lens[0], &t) && (t.kind & ENG_TERM_RESID);
}

/* The node of p in this segment; NULL when it cannot match here. */
struct node *eng_iter_new(struct ev *ev, const struct plan *p)
{
    struct node *n;
    switch (p->kind) {
    case PLAN_TERM:
    case PLAN_PHRASE:
    case PLAN_NEAR: {
        const struct eng_term **t = arena_calloc(ev->a, p->n, sizeof *t);
        if (t == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->n; i++) {
            /* a damaged segment's term is left out here; the search
             * fails once it ends (engine.c) */
            if (term_open(ev, p->terms[i], p->lens[i], &t[i]) < 0 || t[i] == NULL)
                return NULL;
            /* Phrases need positions: only exact terms have them. */
            if (p->kind != PLAN_TERM && eng_kind(t[i]->kind) != ENG_TERM_EXACT)
                return NULL;
        }
        const struct eng_term *pair = NULL;
        if (p->kind == PLAN_PHRASE && !ev->positions && rarest_pair(ev, p, t, &pair) < 0)
            return NULL; /* a pair of paired words absent: no match here */
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        if (pair && p->n == 2)
            return pair_node(ev, n, pair);
        if (pair) {
            if ((n->lead = arena_alloc(ev->a, sizeof *n->lead)) == NULL) {
                ev->nomem = true;
                return NULL;
            }
            eng_cursor_init(n->lead, ev->seg, pair);
        }
        n->n = p->n;
        n->cur = arena_alloc(ev->a, p->n * sizeof *n->cur);
        if (n->cur == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->n; i++)
            eng_cursor_init(&n->cur[i], ev->seg, t[i]);
        if (p->kind == PLAN_NEAR && !ev->positions && near_pairs(ev, n, t) < 0)
            return NULL;
        n->filter = p->kind == PLAN_TERM && eng_kind(t[0]->kind) != ENG_TERM_META &&
                    (p->colset & INDEX_FIELD_ALL) != INDEX_FIELD_ALL;
        if (p->kind == PLAN_TERM && eng_kind(t[0]->kind) == ENG_TERM_META &&
            t[0]->df > ev->seg->n / COLUMN_DENSE) {
            int rc = eng_facet_term_column((struct eng_segment *)(uintptr_t)ev->seg, t[0], &n->col,
                                           &n->col_want);
            if (rc < 0) {
                ev->nomem = true;
                return NULL;
            }
            n->col_n = rc > 0 ? ev->seg->n : 0;
        }
        if (p->leaf >= 0)
            ev->leaf_nodes[p->leaf] = n;
        return n;
    }
    case PLAN_AND:
    case PLAN_OR: {
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        n->kids = arena_calloc(ev->a, p->nkids, sizeof *n->kids);
        if (n->kids == NULL) {
            ev->nomem = true;
            return NULL;
        }
        for (size_t i = 0; i < p->nkids; i++) {
            /* the word inside a language filter whose stem of it is a form
             * too (plan.h): its list adds no match, so only the stems' are
             * read (`people` and `~peopl` are about as long) */
            if (i == 0 && p->stems_cover && ev->match_only)
                continue;
            /* the word outside a language filter: only its occurrences no
             * stem stands beside, where the segment keeps them (plan.h resid) */
            const struct plan *kid = p->kids[i];
            if (i == 0 && p->resid && ev->match_only && resid_kept(ev->seg, kid))
                kid = p->resid;
            struct node *k = eng_iter_new(ev, kid);
            if (k == NULL && p->kind == PLAN_AND)
                return NULL; /* leaves of the other kids stay unscored: it cannot match */
            if (k)
                n->kids[n->nkids++] = k;
        }
        if (n->nkids == 0)
            return NULL;
        return n->nkids == 1 ? n->kids[0] : n;
    }
    case PLAN_ANDNOT: {
        struct node *pos = eng_iter_new(ev, p->kids[0]), *neg;
        if (pos == NULL)
            return NULL;
        neg = eng_iter_new(ev, p->kids[1]);
        if (neg == NULL)
            return pos;
        if ((n = node_alloc(ev, p)) == NULL)
            return NULL;
        n->kids = arena_calloc(ev->a, 2, sizeof *n->kids);
        if (n->kids == NULL) {
            ev->nomem = true;
            return NULL;
        }
        n->kids[0] = pos;
        n->kids[1] = neg;
        n->nkids = 2;
        return n;
    }
    }
    return NULL;
}

/* Phrase instances of n at its current doc per field of colset, into
 * out[ENG_FIELDS]; returns their sum. */
static uint32_t phrase_count(struct ev *ev, struct node *n, uint32_t out[ENG_FIELDS])
{
    uint32_t ns[ENG_FIELDS] = {0}, tf[ENG_FIELDS], total = 0;
    unsigned mask;

    eng_cursor_data(&n->cur[0], &mask, tf, ev->pa);
    mask &= n->colset;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f)) {
            memcpy(ev->st[f], ev->pa[f], tf[f] * sizeof **ev->pa);
            ns[f] = tf[f];
        }
    }
    for (size_t k = 1; k < n->n && mask; k++) {
        unsigned m2;
        eng_cursor_data(&n->cur[k], &m2, tf, ev->pa);
        mask &= m2;
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            if (!(mask & (1u << f)))
                continue;
            /* keep starts s with s + k among this token's positions */
            uint32_t w = 0, j = 0;
            for (uint32_t i = 0; i < ns[f]; i++) {
                uint32_t want = ev->st[f][i] + (uint32_t)k;
                while (j < tf[f] && ev->pa[f][j] < want)
                    j++;
                if (j < tf[f] && ev->pa[f][j] == want)
                    ev->st[f][w++] = ev->st[f][i];
            }
            ns[f] = w;
            if (w == 0)
                mask &= ~(1u << f);
        }
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        uint32_t c = (mask & (1u << f)) ? ns[f] : 0;
        if (out)
            out[f] = c;
        total += c;
    }
    return total;
}

/* Proximity windows of n at its current doc per field of colset (near.h),
 * into out[ENG_FIELDS]; returns their sum. Each word's cursor decodes its
 * positions into ev->pa, copied into the node's buffer: all k lists must
 * be held at once. 0 with ev->nomem set when the buffer cannot grow. */
static uint32_t near_count(struct ev *ev, struct node *n, uint32_t out[ENG_FIELDS])
{
    const uint32_t *lists[LIMIT_NEAR_WORDS];
    size_t offs[ENG_FIELDS][LIMIT_NEAR_WORDS];
    uint32_t lens[ENG_FIELDS][LIMIT_NEAR_WORDS], tf[ENG_FIELDS], total = 0;
    unsigned mask = n->colset & ((1u << ENG_FIELDS) - 1);
    size_t used = 0;

    memset(out, 0, ENG_FIELDS * sizeof *out);
    if (n->n > LIMIT_NEAR_WORDS)
        return 0;
    for (size_t k = 0; k < n->n && mask; k++) {
        unsigned m;
        eng_cursor_data(&n->cur[k], &m, tf, ev->pa);
        mask &= m;
        size_t need = used;
        for (unsigned f = 0; f < ENG_FIELDS; f++)
            need += (mask & (1u << f)) ? tf[f] : 0;
        if (need > n->near_cap) {
            /* Lists already copied move with the buffer: they are
             * kept as offsets until the last word is in. */
            size_t cap = need * 2 > 64 ? need * 2 : 64;
            uint32_t *b = arena_alloc(ev->a, cap * sizeof *b);
            if (b == NULL) {
                ev->nomem = true;
                return 0;
            }
            if (used)
                memcpy(b, n->near_pos, used * sizeof *b);
            n->near_pos = b;
            n->near_cap = cap;
        }
        for (unsigned f = 0; f < ENG_FIELDS; f++) {
            if (!(mask & (1u << f)))
                continue;
            memcpy(n->near_pos + used, ev->pa[f], tf[f] * sizeof *n->near_pos);
            offs[f][k] = used;
            lens[f][k] = tf[f];
            used += tf[f];
        }
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (!(mask & (1u << f)))
            continue;
        for (size_t k = 0; k < n->n; k++)
            lists[k] = n->near_pos + offs[f][k];
        out[f] = index_near_windows(lists, lens[f], n->n, index_near_span(n->plan->distance, n->n));
        total += out[f];
    }
    return total;
}

static uint32_t seek_term(struct node *n, uint32_t target)
{
    struct eng_cursor *c = &n->cur[0];
    /* the column holds the term's value exactly at its postings: a yes
     * there needs no cursor (which stays behind, and moves only forward) */
    if (target < n->col_n && n->col[target] == n->col_want)
        return target;
    uint32_t d = eng_cursor_seek(c, target), tf[ENG_FIELDS];
    unsigned mask;
    while (n->filter && d != ENG_END) {
        eng_cursor_data(c, &mask, tf, NULL);
        if (mask & n->colset)
            break;
        d = eng_cursor_seek(c, d + 1);
    }
    return d;
}

/* All cursors of a phrase on one doc >= target, its rarest pair's first
 * when it has one. */
static uint32_t leapfrog_cursors(struct node *n, uint32_t target)
{
    struct eng_cursor *lead = n->lead ? n->lead : &n->cur[0];
    size_t first = n->lead ? 0 : 1;
    uint32_t d = eng_cursor_seek(lead, target);
    for (size_t i = first; i < n->n && d != ENG_END;) {
        uint32_t e = eng_cursor_seek(&n->cur[i], d);
        if (e != d) {
            d = e == ENG_END ? ENG_END : eng_cursor_seek(lead, e);
            i = first;
            continue;
        }
        i++;
    }
    return d;
}

/* An exhausted AND / NOT takes its whole subtree with it, as FTS5's
 * fts5ExprSetEof() does: a leaf left on the current doc under it must not
 * count for bm25 (FTS5 reports no instances for an EOF node). */
static void set_end(struct node *n)
{
    n->started = true;
    n->doc = ENG_END;
    for (size_t i = 0; i < n->nkids; i++)
        set_end(n->kids[i]);
}

uint32_t eng_iter_seek(struct ev *ev, struct node *n, uint32_t target)
{
    uint32_t d;
    if (n->started && n->doc >= target)
        return n->doc;
    n->started = true;
    switch (n->kind) {
    case PLAN_TERM:
        d = seek_term(n, target);
        break;
    case PLAN_PHRASE:
        for (;;) {
            d = leapfrog_cursors(n, target);
            if (d == ENG_END || phrase_count(ev, n, n->pf) > 0)
                break;
            target = d + 1;
        }
        break;
    case PLAN_NEAR:
        for (;;) {
            d = leapfrog_cursors(n, target);
            if (d != ENG_END && near_paired(n, d)) {
                n->pf_due = true; /* counted if its score is asked for */
                break;
            }
            n->pf_due = false;
            if (d == ENG_END || near_count(ev, n, n->pf) > 0)
                break;
            if (ev->nomem) { /* the search fails once it ends (run.c) */
                d = ENG_END;
                break;
            }
            target = d + 1;
        }
        break;
    case PLAN_AND:
        d = eng_iter_seek(ev, n->kids[0], target);
        for (size_t i = 1; i < n->nkids && d != ENG_END;) {
            uint32_t e = eng_iter_seek(ev, n->kids[i], d);
            if (e != d) {
                d = e == ENG_END ? ENG_END : eng_iter_seek(ev, n->kids[0], e);
                i = 1;
                continue;
            }
            i++;
        }
        break;
    case PLAN_OR:
        d = ENG_END;
        for (size_t i = 0; i < n->nkids; i++) {
            uint32_t e = eng_iter_seek(ev, n->kids[i], target);
            if (e < d)
                d = e;
        }
        break;
    case PLAN_ANDNOT:
        d = eng_iter_seek(ev, n->kids[0], target);
        while (d != ENG_END && eng_iter_seek(ev, n->kids[1], d) == d)
            d = eng_iter_seek(ev, n->kids[0], d + 1);
        break;
    default:
        d = ENG_END;
    }
    if (d == ENG_END && (n->kind == PLAN_AND || n->kind == PLAN_ANDNOT))
        set_end(n);
    n->doc = d;
    return d;
}

bool eng_iter_near_at(struct ev *ev, struct node *n, uint32_t d)
{
    for (size_t k = 0; k < n->n; k++) {
        if (eng_cursor_seek(&n->cur[k], d) != d)
            return false;
    }
    n->pf_due = false;
    bool near = near_count(ev, n, n->pf) > 0;
    n->started = near; /* else the next seek looks again */
    n->doc = d;
    return near;
}

/* The sweep of near.h ends when one word runs out, every other still on
 * one of its positions, and counts at most one window a step: a field's
 * windows are at most the words' frequencies there less k - 1. Those from
 * the heads (uncapped: at least the ENG_POS_MAX the count reads). */
double eng_iter_near_bound(struct node *n)
{
    uint32_t tf[ENG_FIELDS], sum[ENG_FIELDS] = {0};
    unsigned mask = n->colset & ((1u << ENG_FIELDS) - 1);
    double w = 0.0;
    for (size_t k = 0; k < n->n && mask; k++) {
        unsigned m;
        eng_cursor_data(&n->cur[k], &m, tf, NULL);
        mask &= m;
        for (unsigned f = 0; f < ENG_FIELDS; f++)
            sum[f] += tf[f];
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f))
            w += eng_wf2[f] * 0.5 * (sum[f] - (n->n - 1)); /* as eng_iter_leaf_freq */
    }
    return w;
}

/* FTS5's weighted instance count of a scored leaf at doc. */
double eng_iter_leaf_freq(struct ev *ev, struct node *n, uint32_t doc)
{
    uint32_t tf[ENG_FIELDS];
    unsigned mask;
    double w = 0.0;

    if (n == NULL || !n->started || n->doc != doc)
        return 0.0;
    if (n->pf_due) { /* its cursors still sit on doc */
        near_count(ev, n, n->pf);
        n->pf_due = false;
    }
    if (n->kind == PLAN_PHRASE || n->kind == PLAN_NEAR) {
        memcpy(tf, n->pf, sizeof tf); /* counted when eng_iter_seek() matched doc */
        mask = n->colset;
    } else {
        eng_cursor_data(&n->cur[0], &mask, tf, NULL);
        mask &= n->colset;
    }
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f))
            w += eng_wf2[f] * 0.5 * tf[f]; /* bm25(articles_fts, 3.0, 1.5, 1.0, 0.0) */
    }
    return w;
}
