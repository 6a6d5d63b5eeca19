/* Query trees in normal form (query/query.h invariants): the builders that
 * flatten, deduplicate and collapse AND/OR lists and simplify NOT, plus
 * query_format and query_and. Every node lives in the caller's arena.
 * Recursion follows the tree, whose depth the parser bounds (about three
 * levels per LIMIT_QUERY_DEPTH nesting level). */
#include "query/internal.h"

#include <string.h>

#include "util/hash.h"
#include "util/limits.h"

#include "util/banned.h"

struct query_node *query_node_new(struct arena *a, enum query_kind kind, size_t pos)
{
    struct query_node *n = arena_calloc(a, 1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->pos = pos;
    }
    return n;
}

bool query_node_equal(const struct query_node *x, const struct query_node *y)
{
    if (x == y)
        return true;
    if (!x || !y || x->kind != y->kind || x->n != y->n || x->field != y->field ||
        x->prefix != y->prefix || x->distance != y->distance)
        return false;
    switch (x->kind) {
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR:
    case QUERY_META:
        if (x->exact != y->exact)
            return false;
        for (size_t i = 0; i < x->n; i++)
            if (strcmp(x->tokens[i], y->tokens[i]))
                return false;
        return true;
    case QUERY_AND:
    case QUERY_OR:
    case QUERY_NOT:
        for (size_t i = 0; i < x->n; i++)
            if (!query_node_equal(x->kids[i], y->kids[i]))
                return false;
        return true;
    }
    return false;
}

bool query_node_negative(const struct query_node *n)
{
    if (!n)
        return false;
    if (n->kind == QUERY_NOT)
        return true;
    if (n->kind != QUERY_AND)
        return false;
    for (size_t i = 0; i < n->n; i++)
        if (n->kids[i]->kind != QUERY_NOT)
            return false;
    return true;
}

uint64_t query_node_hash(struct query_node *n)
{
    if (n->hash)
        return n->hash;
    unsigned char head[5] = {(unsigned char)n->kind, (unsigned char)n->exact,
                             (unsigned char)n->field, (unsigned char)n->prefix,
                             (unsigned char)n->distance};
    uint64_t h = hash_fnv1a64(head, sizeof head);
    if (n->kind == QUERY_WORD || n->kind == QUERY_PHRASE || n->kind == QUERY_META ||
        n->kind == QUERY_NEAR) {
        /* With each NUL: ("ab") and ("a", "b") differ. */
        for (size_t i = 0; i < n->n; i++)
            h = hash_fnv1a64_update(h, n->tokens[i], strlen(n->tokens[i]) + 1);
    } else {
        for (size_t i = 0; i < n->n; i++) {
            uint64_t kh = query_node_hash(n->kids[i]);
            h = hash_fnv1a64_update(h, &kh, sizeof kh);
        }
    }
    h = hash_mix64(h);
    n->hash = h ? h : 1; /* 0 means "not yet" */
    return n->hash;
}

/* Slot of x's equal in k's table, or of the empty slot where x goes. */
static size_t kids_probe(const struct query_kids *k, struct query_node *x)
{
    size_t mask = k->n_slot - 1;
    size_t i = (size_t)query_node_hash(x) & mask;
    while (k->slot[i]) {
        struct query_node *y = k->v[k->slot[i] - 1];
        if (y->hash == x->hash && query_node_equal(y, x))
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* A table of at least four slots per child, rebuilt as the list doubles:
 * probes stay short and the rebuilds cost O(n) in all. */
static int kids_index(struct arena *a, struct query_kids *k)
{
    if (k->n_slot >= 2 * k->n)
        return 0;
    size_t want = 16;
    while (want < 4 * k->n)
        want *= 2;
    uint32_t *slot = arena_calloc(a, want, sizeof *slot);
    if (!slot)
        return ERR_NOMEM;
    k->slot = slot;
    k->n_slot = want;
    for (size_t j = 0; j < k->n; j++)
        k->slot[kids_probe(k, k->v[j])] = (uint32_t)(j + 1);
    return 0;
}

static bool kids_has(const struct query_kids *k, struct query_node *x)
{
    if (k->slot)
        return k->slot[kids_probe(k, x)] != 0;
    for (size_t i = 0; i < k->n; i++)
        if (query_node_equal(k->v[i], x))
            return true;
    return false;
}

static int kids_push(struct arena *a, struct query_kids *k, struct query_node *x)
{
    if (kids_has(k, x))
        return 0;
    if (arena_grow(a, &k->v, &k->cap, k->n, 4, sizeof *k->v) < 0)
        return ERR_NOMEM;
    k->v[k->n++] = x;
    if (k->n <= QUERY_KIDS_SCAN)
        return 0;
    if (k->slot && k->n_slot >= 2 * k->n) {
        k->slot[kids_probe(k, x)] = (uint32_t)k->n;
        return 0;
    }
    return kids_index(a, k);
}

int query_kids_add(struct arena *a, struct query_kids *k, enum query_kind kind,
                   struct query_node *x)
{
    if (!x)
        return 0;
    if (x->kind != kind)
        return kids_push(a, k, x);
    /* x is in normal form: its children are not of its kind, no deeper splice. */
    for (size_t i = 0; i < x->n; i++) {
        int rc = kids_push(a, k, x->kids[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int query_kids_finish(struct arena *a, struct query_kids *k, enum query_kind kind, size_t pos,
                      struct query_node **out)
{
    *out = NULL;
    if (k->n == 0)
        return 0;
    if (k->n == 1) {
        *out = k->v[0];
        return 0;
    }
    struct query_node *n = query_node_new(a, kind, pos);
    if (!n)
        return ERR_NOMEM;
    n->kids = k->v;
    n->n = k->n;
    *out = n;
    return 0;
}

int query_node_negate(struct arena *a, struct query_node *x, size_t pos, struct query_node **out)
{
    *out = NULL;
    if (!x)
        return 0;
    if (x->kind == QUERY_NOT) {
        *out = x->kids[0];
        return 0;
    }
    if (query_node_negative(x)) {
        /* NOT(AND (NOT y) (NOT z)) = (OR y z): positive, so it may stand
         * anywhere. y and z are NOT children, hence never NOT themselves. */
        struct query_kids k = {0};
        for (size_t i = 0; i < x->n; i++) {
            int rc = query_kids_add(a, &k, QUERY_OR, x->kids[i]->kids[0]);
            if (rc < 0)
                return rc;
        }
        return query_kids_finish(a, &k, QUERY_OR, x->pos, out);
    }
    struct query_node *n = query_node_new(a, QUERY_NOT, pos);
    struct query_node **kids = arena_calloc(a, 1, sizeof *kids);
    if (!n || !kids)
        return ERR_NOMEM;
    kids[0] = x;
    n->kids = kids;
    n->n = 1;
    *out = n;
    return 0;
}

const char *query_field_name(enum query_field f)
{
    switch (f) {
    case QUERY_FIELD_ANY:
        break;
    case QUERY_FIELD_TITLE:
        return "title:";
    case QUERY_FIELD_SOURCE:
        return "source:";
    case QUERY_FIELD_DOMAIN:
        return "domain:";
    case QUERY_FIELD_AUTHOR:
        return "author:";
    }
    return "";
}

void query_format(struct buf *out, const struct query_node *n)
{
    if (!n)
        return;
    switch (n->kind) {
    case QUERY_META: /* a name has spaces: quoted, as q writes it */
        buf_puts(out, query_field_name(n->field));
        if (n->field == QUERY_FIELD_AUTHOR)
            buf_putc(out, '"');
        buf_puts(out, n->tokens[0]);
        if (n->field == QUERY_FIELD_AUTHOR)
            buf_putc(out, '"');
        return;
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR:
        buf_puts(out, query_field_name(n->field));
        if (n->kind != QUERY_WORD || n->exact)
            buf_putc(out, '"');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                buf_putc(out, ' ');
            buf_puts(out, n->tokens[i]);
        }
        if (n->kind != QUERY_WORD || n->exact)
            buf_putc(out, '"');
        if (n->kind == QUERY_NEAR)
            buf_printf(out, "~%u", n->distance);
        if (n->prefix)
            buf_putc(out, '*');
        return;
    case QUERY_AND:
    case QUERY_OR:
    case QUERY_NOT:
        buf_puts(out, n->kind == QUERY_AND ? "(AND" : n->kind == QUERY_OR ? "(OR" : "(NOT");
        for (size_t i = 0; i < n->n; i++) {
            buf_putc(out, ' ');
            query_format(out, n->kids[i]);
        }
        buf_putc(out, ')');
        return;
    }
}

struct query_node *query_and(struct arena *a, struct query_node *x, struct query_node *y)
{
    if (!x)
        return y;
    if (!y)
        return x;
    struct query_kids k = {0};
    struct query_node *out = NULL;
    if (query_kids_add(a, &k, QUERY_AND, x) < 0 || query_kids_add(a, &k, QUERY_AND, y) < 0 ||
        query_kids_finish(a, &k, QUERY_AND, x->pos, &out) < 0)
        return NULL;
    return out;
}

int query_and_split(struct arena *a, const struct query_node *q, struct query_and_parts *out,
                    struct err *err)
{
    memset(out, 0, sizeof *out);
    out->pos = arena_calloc(a, q->n, sizeof *out->pos);
    out->neg = arena_calloc(a, q->n, sizeof *out->neg);
    if (out->pos == NULL || out->neg == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < q->n; i++) {
        struct query_node *k = q->kids[i];
        if (k == NULL)
            return err_set(err, ERR_INVALID, "malformed query tree");
        if (k->kind == QUERY_NOT) {
            if (k->n != 1 || k->kids == NULL || k->kids[0] == NULL)
                return err_set(err, ERR_INVALID, "malformed query tree");
            out->neg[out->n_neg++] = k->kids[0];
        } else {
            out->pos[out->n_pos++] = k;
        }
    }
    if (out->n_pos == 0)
        return err_set(err, ERR_INVALID, "a query cannot only exclude");
    return 0;
}

/* Deeper than any parsed tree (LIMIT_QUERY_DEPTH) plus AND/OR/NOT levels. */
#define QUERY_CHECK_DEPTH (4 * LIMIT_QUERY_DEPTH)

int query_node_check(const struct query_node *q, int depth, struct err *err)
{
    if (q == NULL)
        return err_set(err, ERR_INVALID, "malformed query tree");
    if (depth > QUERY_CHECK_DEPTH)
        return err_set(err, ERR_TOO_LARGE, "query nested too deeply");
    switch (q->kind) {
    case QUERY_WORD:
        if (q->n != 1 || q->tokens == NULL || q->tokens[0] == NULL || q->tokens[0][0] == '\0')
            return err_set(err, ERR_INVALID, "malformed query word");
        return 0;
    case QUERY_PHRASE:
    case QUERY_NEAR:
        if (q->n == 0 || q->tokens == NULL ||
            (q->kind == QUERY_NEAR &&
             (q->n < 2 || q->n > LIMIT_NEAR_WORDS || q->distance > LIMIT_NEAR_DISTANCE)))
            return err_set(err, ERR_INVALID, "malformed query phrase");
        for (size_t i = 0; i < q->n; i++) {
            if (q->tokens[i] == NULL || q->tokens[i][0] == '\0')
                return err_set(err, ERR_INVALID, "malformed query phrase");
        }
        return 0;
    case QUERY_AND:
    case QUERY_OR:
        if (q->n == 0 || q->kids == NULL)
            return err_set(err, ERR_INVALID, "malformed query tree");
        for (size_t i = 0; i < q->n && q->kind == QUERY_OR; i++) {
            if (q->kids[i] == NULL || q->kids[i]->kind == QUERY_NOT)
                return err_set(err, ERR_INVALID, "an exclusion cannot be inside OR");
        }
        return 0;
    case QUERY_NOT:
        return err_set(err, ERR_INVALID, "a query cannot only exclude");
    case QUERY_META: /* source:/domain:/author: (query.h) */
        if (q->n != 1 || q->tokens == NULL || q->tokens[0] == NULL || q->tokens[0][0] == '\0')
            return err_set(err, ERR_INVALID, "malformed query field term");
        return 0;
    }
    return err_set(err, ERR_INVALID, "malformed query tree");
}
