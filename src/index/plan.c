/* index_plan_build() of plan.h: the request as index/fts5/match.c reads it.
 * A plain word is the OR of its forms (index/expand.h), an exact word or a
 * one-token phrase is one exact term, a phrase its exact tokens; q is
 * restricted to the searchIn fields, qInTitle and title: field terms to
 * titles; filters and source:/domain: field terms are meta terms
 * (store_meta_term, so both backends spell them alike). */
#include "index/plan.h"
#include "index/expand.h"

#include <string.h>

#include "store/meta.h"
#include "text/text.h"
#include "text/text_fts5.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/banned.h"

struct pctx {
    struct arena *a;
    struct err *err;
    const char *const *langs;
    size_t n_langs; /* 1: the request's language filter, which has a stemmer */
    struct plan **leaves;
    size_t nleaves, cap;
    bool has_prefix;
};

static struct plan *node_new(struct pctx *c, enum plan_kind kind, unsigned colset)
{
    struct plan *p = arena_calloc(c->a, 1, sizeof *p);
    if (p) {
        p->kind = kind;
        p->colset = colset;
        p->leaf = -1;
    }
    return p;
}

static int leaf_add(struct pctx *c, struct plan *p, bool scored)
{
    if (!scored)
        return 0;
    if (arena_grow(c->a, &c->leaves, &c->cap, c->nleaves, 16, sizeof *c->leaves) < 0)
        return ERR_NOMEM;
    p->leaf = (int)c->nleaves;
    c->leaves[c->nleaves++] = p;
    return 0;
}

static struct plan *term_new(struct pctx *c, const char *t, size_t len, unsigned colset,
                             bool scored)
{
    struct plan *p = node_new(c, PLAN_TERM, colset);
    if (p == NULL)
        return NULL;
    p->n = 1;
    p->terms = arena_calloc(c->a, 1, sizeof *p->terms);
    p->lens = arena_calloc(c->a, 1, sizeof *p->lens);
    if (p->terms == NULL || p->lens == NULL)
        return NULL;
    p->terms[0] = t;
    p->lens[0] = len;
    if (leaf_add(c, p, scored) < 0)
        return NULL;
    return p;
}

struct stems_away {
    const char *lang, *word;
    size_t len;
    bool away;
};

static int stems_away_token(const struct text_token *tok, void *ctx)
{
    struct stems_away *c = ctx;
    char stem[LIMIT_TOKEN_BYTES + 1];
    c->away = tok->len == c->len && memcmp(tok->text, c->word, c->len) == 0 &&
              text_fts5_token_stem(c->lang, tok, stem) > 0;
    return 1; /* the first token is enough: the word is one or not at all */
}

/* Whether the indexer puts "~s" beside every occurrence of word in a
 * document of language lang: word is one token, no CJK one, that lang
 * stems to another string s (text_fts5_token_stem, which the engine's
 * builder and FTS5's tokenizer both call). */
static bool stems_away(const char *lang, const char *word)
{
    struct stems_away c = {.lang = lang, .word = word, .len = strlen(word)};
    return text_tokenize(word, c.len, stems_away_token, &c) == 1 && c.away;
}

/* The residual of word tok (plan.h resid) on or, the OR of its forms in
 * every stemmed language. */
static int plan_resid(struct pctx *c, const char *tok, unsigned colset, struct plan * or)
{
    size_t len = strlen(tok);
    char *t = arena_alloc(c->a, len + 2);
    if (t == NULL || (or->resid = term_new(c, t, len + 1, colset, false)) == NULL)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    memcpy(t, tok, len + 1); /* its NUL the residual's last byte */
    t[len + 1] = '\0';
    return 0;
}

/* A plain word: the OR of its forms (index/expand.h), as match.c writes it. */
static int plan_word(struct pctx *c, const char *tok, unsigned colset, bool scored,
                     struct plan **out)
{
    const char *forms[INDEX_EXPAND_FORMS_MAX];
    size_t n_forms = 0;
    int rc = index_expand_word(c->a, c->langs, c->n_langs, tok, forms, &n_forms, c->err);
    if (rc < 0)
        return rc;
    if (n_forms == 1) {
        *out = term_new(c, tok, strlen(tok), colset, scored);
        return *out ? 0 : err_set(c->err, ERR_NOMEM, "out of memory");
    }
    struct plan * or = node_new(c, PLAN_OR, colset);
    if (or == NULL || (or->kids = arena_calloc(c->a, n_forms, sizeof * or->kids)) == NULL)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_forms; i++) {
        if ((or->kids[i] = term_new(c, forms[i], strlen(forms[i]), colset, scored)) == NULL)
            return err_set(c->err, ERR_NOMEM, "out of memory");
    }
    or->nkids = n_forms;
    or->stems_cover = c->n_langs == 1 && stems_away(c->langs[0], tok);
    if (c->n_langs == INDEX_EXPAND_LANGS && (rc = plan_resid(c, tok, colset, or)) < 0)
        return rc;
    *out = or ;
    return 0;
}

static int plan_node(struct pctx *c, const struct query_node *q, unsigned colset, bool scored,
                     int depth, struct plan **out);

/* kids as one node: itself when one, else kind over them. */
static int plan_list(struct pctx *c, struct query_node *const *kids, size_t n, enum plan_kind kind,
                     unsigned colset, bool scored, int depth, struct plan **out)
{
    int rc;
    if (n == 1)
        return plan_node(c, kids[0], colset, scored, depth + 1, out);
    struct plan *p = node_new(c, kind, colset);
    if (p == NULL || (p->kids = arena_calloc(c->a, n, sizeof *p->kids)) == NULL)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if ((rc = plan_node(c, kids[i], colset, scored, depth + 1, &p->kids[i])) < 0)
            return rc;
    }
    p->nkids = n;
    *out = p;
    return 0;
}

static struct plan *andnot_new(struct pctx *c, struct plan *pos, struct plan *neg)
{
    struct plan *p = node_new(c, PLAN_ANDNOT, pos->colset);
    if (p == NULL || (p->kids = arena_calloc(c->a, 2, sizeof *p->kids)) == NULL)
        return NULL;
    p->kids[0] = pos;
    p->kids[1] = neg;
    p->nkids = 2;
    return p;
}

/* put_and() of match.c: positives, then (unscored) exclusions. */
static int plan_and(struct pctx *c, const struct query_node *q, unsigned colset, bool scored,
                    int depth, struct plan **out)
{
    struct query_and_parts parts;
    struct plan *pp, *np;
    int rc;

    if ((rc = query_and_split(c->a, q, &parts, c->err)) < 0)
        return rc;
    if ((rc = plan_list(c, parts.pos, parts.n_pos, PLAN_AND, colset, scored, depth, &pp)) < 0)
        return rc;
    if (parts.n_neg == 0) {
        *out = pp;
        return 0;
    }
    if ((rc = plan_list(c, parts.neg, parts.n_neg, PLAN_OR, colset, false, depth, &np)) < 0)
        return rc;
    if ((*out = andnot_new(c, pp, np)) == NULL)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    return 0;
}

/* A PHRASE, or a NEAR (kind): its tokens, exact, one scored leaf (a
 * proximity scores as a phrase does, its windows its instances, where
 * FTS5's NEAR scores each word: relevancy orders may differ there). */
static int plan_phrase(struct pctx *c, const struct query_node *q, enum plan_kind kind,
                       unsigned colset, bool scored, struct plan **out)
{
    if (q->n == 1) { /* FTS5: a one-token phrase is that term */
        *out = term_new(c, q->tokens[0], strlen(q->tokens[0]), colset, scored);
        return *out ? 0 : err_set(c->err, ERR_NOMEM, "out of memory");
    }
    struct plan *p = node_new(c, kind, colset);
    if (p == NULL || (p->terms = arena_calloc(c->a, q->n, sizeof *p->terms)) == NULL ||
        (p->lens = arena_calloc(c->a, q->n, sizeof *p->lens)) == NULL)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    p->n = q->n;
    p->distance = q->distance;
    for (size_t i = 0; i < q->n; i++) {
        p->terms[i] = q->tokens[i];
        p->lens[i] = strlen(q->tokens[i]);
    }
    if (leaf_add(c, p, scored) < 0)
        return err_set(c->err, ERR_NOMEM, "out of memory");
    *out = p;
    return 0;
}

static struct plan *meta_term(struct pctx *c, char kind, const char *v);

static int plan_node(struct pctx *c, const struct query_node *q, unsigned colset, bool scored,
                     int depth, struct plan **out)
{
    /* A field term: title: searches titles whatever searchIn says (as
     * qInTitle does), source:/domain: are the filters' meta terms, which
     * score nothing (as the filters), author: the author's (store/meta.h). */
    int rc = query_node_check(q, depth, c->err);
    if (rc < 0)
        return rc;
    if (q->field == QUERY_FIELD_TITLE)
        colset = INDEX_FIELD_TITLE;
    switch (q->kind) {
    case QUERY_WORD:
        if (q->prefix) { /* unscored: only the matcher reads it */
            if ((*out = term_new(c, q->tokens[0], strlen(q->tokens[0]), colset, false)) == NULL)
                return err_set(c->err, ERR_NOMEM, "out of memory");
            (*out)->prefix = c->has_prefix = true;
            return 0;
        }
        if (q->exact) {
            *out = term_new(c, q->tokens[0], strlen(q->tokens[0]), colset, scored);
            return *out ? 0 : err_set(c->err, ERR_NOMEM, "out of memory");
        }
        return plan_word(c, q->tokens[0], colset, scored, out);
    case QUERY_PHRASE:
        return plan_phrase(c, q, PLAN_PHRASE, colset, scored, out);
    case QUERY_NEAR:
        return plan_phrase(c, q, PLAN_NEAR, colset, scored, out);
    case QUERY_AND:
        return plan_and(c, q, colset, scored, depth, out);
    case QUERY_OR:
        return plan_list(c, q->kids, q->n, PLAN_OR, colset, scored, depth, out);
    case QUERY_NOT:
        break; /* refused by query_node_check */
    case QUERY_META:
        *out = meta_term(c, index_plan_meta_kind(q->field), q->tokens[0]);
        return *out ? 0 : err_set(c->err, ERR_NOMEM, "out of memory");
    }
    return err_set(c->err, ERR_INVALID, "malformed query tree");
}

char index_plan_meta_kind(enum query_field field)
{
    return field == QUERY_FIELD_SOURCE   ? STORE_META_SOURCE
           : field == QUERY_FIELD_AUTHOR ? STORE_META_AUTHOR
                                         : STORE_META_DOMAIN;
}

/* One meta term: PLAN_META_MARK then store_meta_term's spelling. */
static struct plan *meta_term(struct pctx *c, char kind, const char *v)
{
    struct buf b;
    struct plan *p = NULL;
    buf_init(&b, LIMIT_FIELD_BYTES);
    buf_putc(&b, PLAN_META_MARK);
    store_meta_term(&b, kind, v ? v : "", v ? strlen(v) : 0);
    if (buf_error(&b) == 0) {
        char *t = arena_strndup(c->a, b.data, b.len);
        if (t)
            p = term_new(c, t, b.len, 0, false);
    }
    buf_release(&b);
    return p;
}

/* put_meta_any(): OR over the non-NULL values. */
static struct plan *meta_any(struct pctx *c, char kind, const char *const *values, size_t n)
{
    size_t k = 0;
    struct plan * or = node_new(c, PLAN_OR, 0);
    if (or == NULL || (or->kids = arena_calloc(c->a, n, sizeof * or->kids)) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (values[i] == NULL)
            continue;
        if ((or->kids[k++] = meta_term(c, kind, values[i])) == NULL)
            return NULL;
    }
    or->nkids = k;
    return k == 1 ? or->kids[0] : or ;
}

int index_plan_build(struct plan_tree *out, struct arena *a, const struct index_request *req,
                     struct err *err)
{
    struct pctx c = {.a = a, .err = err};
    struct plan *parts[16], *root;
    size_t n = 0;
    int rc;

    memset(out, 0, sizeof *out);
    index_expand_langs(&req->language, &c.langs, &c.n_langs);
    if (req->q) {
        unsigned f = req->q_fields & INDEX_FIELD_ALL;
        if (f == 0)
            f = INDEX_FIELD_ALL;
        if ((rc = plan_node(&c, req->q, f, true, 0, &parts[n++])) < 0)
            return rc;
    }
    if (req->q_title &&
        (rc = plan_node(&c, req->q_title, INDEX_FIELD_TITLE, true, 0, &parts[n++])) < 0)
        return rc;
    if (index_request_names_any(req->sources, req->n_sources))
        parts[n++] = meta_any(&c, STORE_META_SOURCE, req->sources, req->n_sources);
    if (index_request_names_any(req->domains, req->n_domains))
        parts[n++] = meta_any(&c, STORE_META_DOMAIN, req->domains, req->n_domains);
    if (req->language)
        parts[n++] = meta_term(&c, STORE_META_LANGUAGE, req->language);
    if (req->country)
        parts[n++] = meta_term(&c, STORE_META_COUNTRY, req->country);
    if (req->category)
        parts[n++] = meta_term(&c, STORE_META_CATEGORY, req->category);
    if (req->headlines_only)
        parts[n++] = meta_term(&c, STORE_META_HEADLINE, NULL);
    if (n == 0)
        parts[n++] = meta_term(&c, STORE_META_ALL, NULL);
    for (size_t i = 0; i < n; i++) {
        if (parts[i] == NULL)
            return err_set(err, ERR_NOMEM, "out of memory building a search");
    }
    if (n == 1) {
        root = parts[0];
    } else {
        root = node_new(&c, PLAN_AND, 0);
        if (root == NULL || (root->kids = arena_calloc(a, n, sizeof *root->kids)) == NULL)
            return err_set(err, ERR_NOMEM, "out of memory building a search");
        memcpy(root->kids, parts, n * sizeof *parts);
        root->nkids = n;
    }
    if (index_request_names_any(req->exclude_domains, req->n_exclude_domains)) {
        struct plan *neg =
            meta_any(&c, STORE_META_DOMAIN, req->exclude_domains, req->n_exclude_domains);
        if (neg == NULL || (root = andnot_new(&c, root, neg)) == NULL)
            return err_set(err, ERR_NOMEM, "out of memory building a search");
    }
    out->root = root;
    out->leaves = c.leaves;
    out->nleaves = c.nleaves;
    out->has_prefix = c.has_prefix;
    return 0;
}

/* A plan's fingerprint for the count cache: kinds, column sets and term
 * bytes in tree order with every length explicit, so two plans share one
 * only when they are the same tree (and so match the same documents). */
static void plan_key_put(struct buf *b, const struct plan *p)
{
    uint32_t v[6] = {(uint32_t)p->kind,  p->colset,           (uint32_t)p->n,
                     (uint32_t)p->nkids, (uint32_t)p->prefix, p->distance};
    buf_append(b, v, sizeof v);
    for (size_t i = 0; i < p->n; i++) {
        uint32_t len = (uint32_t)p->lens[i];
        buf_append(b, &len, sizeof len);
        buf_append(b, p->terms[i], p->lens[i]);
    }
    for (size_t i = 0; i < p->nkids; i++)
        plan_key_put(b, p->kids[i]);
}

/* The fingerprint in the arena; NULL when out of memory (no caching then). */
const char *index_plan_key(struct arena *a, const struct plan *p, size_t *len)
{
    struct buf b;
    buf_init(&b, 0);
    plan_key_put(&b, p);
    char *out = NULL;
    if (buf_error(&b) == 0 && (out = arena_alloc(a, b.len + 1)) != NULL)
        memcpy(out, b.data ? b.data : "", b.len);
    *len = b.len;
    buf_release(&b);
    return out;
}
