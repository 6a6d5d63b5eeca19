/* One article against one request (index/match.h). The request becomes
 * the engine's own plan (index/plan.h: the expansion, the column
 * restrictions, the meta terms of the filters, the errors), evaluated here
 * over the terms of one article, which are those the engine and FTS5 index
 * for its row (text_fts5_column_tokenize; meta terms split on spaces and
 * marked with PLAN_META_MARK as in the engine's dictionary). The date window
 * is the backends' id range (store_id_lo / store_id_hi). */
#include "index/match.h"

#include <stdlib.h>
#include <string.h>

#include "index/near.h"
#include "index/plan.h"
#include "store/meta.h"
#include "store/store.h"
#include "text/text_fts5.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/sort.h"
#include "util/strtab.h"
#include "util/banned.h"

#define DOC_META (1u << PLAN_FIELDS) /* mask bit of a meta term */

struct index_matcher {
    struct arena a; /* the plan, its strings, the keys */
    struct plan *root;
    bool never; /* an empty date window */
    int64_t id_lo, id_hi;
    const char **keys;
    size_t n_keys;
};

/* One occurrence of an exact token, where phrases look, as one number
 * that sorts by term, then field, then position. */
#define OCC_TERM_SHIFT 34
#define OCC_FIELD_SHIFT 32
#define OCC_TERMS_MAX ((size_t)1 << (64 - OCC_TERM_SHIFT))

static uint64_t occ_of(uint32_t term, uint32_t field, uint32_t pos)
{
    return (uint64_t)term << OCC_TERM_SHIFT | (uint64_t)field << OCC_FIELD_SHIFT | pos;
}

struct doc_term {
    uint8_t mask;    /* the fields holding it (1 << field), DOC_META */
    uint32_t occ_at; /* its first occurrence in occ */
    uint32_t occ_n;  /* its occurrences */
};

struct index_match_doc {
    int64_t id;
    struct strtab terms; /* exact tokens, "~stem" forms, meta terms (marked) */
    struct doc_term *t;  /* per term */
    size_t cap;
    uint64_t *occ; /* occ_of(), ascending */
    size_t n_occ, occ_cap;
    const char **list; /* the terms, for index_match_doc_terms */
};

/* --- the matcher ----------------------------------------------------------------- */

/* The plan's strings point into the request (its query tree): copy them. */
static int plan_own(struct arena *a, struct plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        char *t = arena_strndup(a, p->terms[i], p->lens[i]);
        if (t == NULL)
            return ERR_NOMEM;
        p->terms[i] = t;
    }
    for (size_t i = 0; i < p->nkids; i++) {
        if (plan_own(a, p->kids[i]) < 0)
            return ERR_NOMEM;
    }
    return 0;
}

/* A set of keys and how often one expects an article to hold one of them
 * (a guess without the corpus' statistics: meta terms of languages,
 * countries, categories and headlines are common; a source or a domain is
 * rare; a short word is more common than a long one). none: no set (the
 * matcher has to be tried on every article). */
struct keyset {
    const char **v;
    size_t n;
    double cost;
    bool none;
};

static double term_cost(const char *t, size_t len)
{
    if (t[0] == PLAN_META_MARK) {
        switch (len > 1 ? t[1] : 0) {
        case STORE_META_SOURCE:
        case STORE_META_DOMAIN:
            return 8;
        default:
            return 1000;
        }
    }
    if (t[0] == TEXT_FTS5_STEM_PREFIX[0]) /* a stem stands for several words */
        len = len > 0 ? len - 1 : 0;
    static const double by_len[] = {512, 512, 512, 128, 64, 32, 16};
    return len < sizeof by_len / sizeof by_len[0] ? by_len[len] : 8;
}

static bool is_all_term(const char *t, size_t len)
{
    return len == 2 && t[0] == PLAN_META_MARK && t[1] == STORE_META_ALL;
}

static int keys_of(struct arena *a, const struct plan *p, struct keyset *out);

static int keys_term(struct arena *a, const char *t, size_t len, struct keyset *out)
{
    memset(out, 0, sizeof *out);
    if (is_all_term(t, len)) { /* every article has it: no better than no key */
        out->none = true;
        return 0;
    }
    if ((out->v = arena_calloc(a, 1, sizeof *out->v)) == NULL)
        return ERR_NOMEM;
    out->v[0] = t;
    out->n = 1;
    out->cost = term_cost(t, len);
    return 0;
}

static bool key_in(const struct keyset *s, const char *t)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i], t) == 0)
            return true;
    }
    return false;
}

static int keys_of(struct arena *a, const struct plan *p, struct keyset *out)
{
    struct keyset k;
    int rc;

    memset(out, 0, sizeof *out);
    switch (p->kind) {
    case PLAN_TERM:
        if (p->prefix) { /* any word that starts with it: no key to look up */
            out->none = true;
            return 0;
        }
        return keys_term(a, p->terms[0], p->lens[0], out);
    case PLAN_PHRASE: /* every token is required: the rarest */
    case PLAN_NEAR: {
        size_t best = 0;
        for (size_t i = 1; i < p->n; i++) {
            if (term_cost(p->terms[i], p->lens[i]) < term_cost(p->terms[best], p->lens[best]))
                best = i;
        }
        return keys_term(a, p->terms[best], p->lens[best], out);
    }
    case PLAN_ANDNOT: /* an exclusion requires nothing */
        return keys_of(a, p->kids[0], out);
    case PLAN_AND: /* every child is required: the cheapest of them */
        out->none = true;
        for (size_t i = 0; i < p->nkids; i++) {
            if ((rc = keys_of(a, p->kids[i], &k)) < 0)
                return rc;
            if (!k.none && (out->none || k.cost < out->cost))
                *out = k;
        }
        return 0;
    case PLAN_OR: { /* any child will do: all of theirs */
        struct keyset *kids = arena_calloc(a, p->nkids ? p->nkids : 1, sizeof *kids);
        size_t total = 0;
        if (kids == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < p->nkids; i++) {
            if ((rc = keys_of(a, p->kids[i], &kids[i])) < 0)
                return rc;
            if (kids[i].none) {
                out->none = true;
                return 0;
            }
            total += kids[i].n;
        }
        if ((out->v = arena_calloc(a, total ? total : 1, sizeof *out->v)) == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < p->nkids; i++) {
            for (size_t j = 0; j < kids[i].n; j++) {
                if (!key_in(out, kids[i].v[j])) {
                    out->v[out->n++] = kids[i].v[j];
                    out->cost += term_cost(kids[i].v[j], strlen(kids[i].v[j]));
                }
            }
        }
        out->none = out->n == 0;
        return 0;
    }
    }
    out->none = true;
    return 0;
}

int index_matcher_new(struct index_matcher **out, const struct index_request *req, struct err *err)
{
    struct index_matcher *m = calloc(1, sizeof *m);
    struct plan_tree plan;
    struct keyset keys;
    int rc;

    *out = NULL;
    if (m == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    arena_init(&m->a, 0);
    if ((rc = index_plan_build(&plan, &m->a, req, err)) < 0)
        goto fail;
    if (plan_own(&m->a, plan.root) < 0 || keys_of(&m->a, plan.root, &keys) < 0) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto fail;
    }
    m->root = plan.root;
    m->id_lo = store_id_lo(req->from);
    m->id_hi = index_request_id_hi(req);
    m->never = req->from > req->to || m->id_lo > m->id_hi;
    if (!keys.none) {
        m->keys = keys.v;
        m->n_keys = keys.n;
    }
    *out = m;
    return 0;
fail:
    index_matcher_free(m);
    return rc;
}

void index_matcher_free(struct index_matcher *m)
{
    if (m == NULL)
        return;
    arena_release(&m->a);
    free(m);
}

void index_matcher_keys(const struct index_matcher *m, const char *const **keys, size_t *n)
{
    *keys = m->keys;
    *n = m->n_keys;
}

/* --- the article --------------------------------------------------------------- */

static int term_add(struct index_match_doc *d, const char *s, size_t len, unsigned bit,
                    uint32_t *num)
{
    size_t k;
    int added;
    if (strtab_add(&d->terms, s, len, &k, &added) < 0)
        return ERR_NOMEM;
    if (added && array_reserve(&d->t, &d->cap, k, 1, sizeof *d->t) < 0)
        return ERR_NOMEM;
    if (added)
        d->t[k] = (struct doc_term){0, 0, 0};
    d->t[k].mask |= (uint8_t)bit;
    *num = (uint32_t)k;
    return 0;
}

struct doc_field {
    struct index_match_doc *d;
    uint32_t field, ntok;
};

/* What the engine's builder does with a token (index/engine/segment.c). */
static int doc_token(const struct text_token *tok, const char *stem, size_t stem_len, void *arg)
{
    struct doc_field *f = arg;
    struct index_match_doc *d = f->d;
    char tilde[LIMIT_TOKEN_BYTES + 2];
    uint32_t pos = f->ntok++, k;
    size_t len = tok->len < LIMIT_TOKEN_BYTES ? tok->len : LIMIT_TOKEN_BYTES;

    if (term_add(d, tok->text, len, 1u << f->field, &k) < 0 || k >= OCC_TERMS_MAX)
        return ERR_NOMEM;
    if (d->n_occ == d->occ_cap) {
        size_t cap = d->occ_cap ? d->occ_cap * 2 : 256;
        uint64_t *o = realloc(d->occ, cap * sizeof *o);
        if (o == NULL)
            return ERR_NOMEM;
        d->occ = o;
        d->occ_cap = cap;
    }
    d->occ[d->n_occ++] = occ_of(k, f->field, pos);
    if (stem) {
        size_t n = stem_len < LIMIT_TOKEN_BYTES ? stem_len : LIMIT_TOKEN_BYTES;
        tilde[0] = TEXT_FTS5_STEM_PREFIX[0];
        memcpy(tilde + 1, stem, n);
        if (term_add(d, tilde, n + 1, 1u << f->field, &k) < 0)
            return ERR_NOMEM;
    }
    return 0;
}

static int doc_meta(struct index_match_doc *d, const char *s)
{
    char small[256];
    while (s && *s) {
        while (*s == ' ')
            s++;
        const char *e = s;
        while (*e && *e != ' ')
            e++;
        size_t n = (size_t)(e - s);
        if (n > 0) {
            char *t = n + 1 <= sizeof small ? small : malloc(n + 1);
            uint32_t k;
            int rc;
            if (t == NULL)
                return ERR_NOMEM;
            t[0] = PLAN_META_MARK;
            memcpy(t + 1, s, n);
            rc = term_add(d, t, n + 1, DOC_META, &k);
            if (t != small)
                free(t);
            if (rc < 0)
                return rc;
        }
        s = e;
    }
    return 0;
}

int index_match_doc_new(struct index_match_doc **out, const struct store_row *row, struct err *err)
{
    struct index_match_doc *d = calloc(1, sizeof *d);
    const char *texts[PLAN_FIELDS] = {row->title, row->description, row->content};
    const char *lang = row->language ? row->language : "";
    int rc = ERR_NOMEM;

    *out = NULL;
    if (d == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    strtab_init(&d->terms);
    d->id = row->id;
    for (uint32_t f = 0; f < PLAN_FIELDS; f++) {
        struct doc_field df = {.d = d, .field = f};
        if (text_fts5_column_tokenize(lang, texts[f], doc_token, &df) != 0)
            goto fail;
    }
    /* the author's meta terms as every index makes them (store/meta.h) */
    struct buf authors;
    buf_init(&authors, 0);
    bool terms_ok = store_meta_author_terms(&authors, row->author) >= 0 &&
                    doc_meta(d, row->meta_terms) == 0 && doc_meta(d, authors.data) == 0;
    buf_release(&authors);
    if (!terms_ok)
        goto fail;
    if (d->n_occ > 1)
        qsort(d->occ, d->n_occ, sizeof *d->occ, sort_cmp_u64);
    for (size_t i = 0; i < d->n_occ; i++) {
        uint32_t k = (uint32_t)(d->occ[i] >> OCC_TERM_SHIFT);
        if (d->t[k].occ_n++ == 0)
            d->t[k].occ_at = (uint32_t)i;
    }
    if ((d->list = calloc(d->terms.n ? d->terms.n : 1, sizeof *d->list)) == NULL)
        goto fail;
    for (size_t i = 0; i < d->terms.n; i++)
        d->list[i] = strtab_str(&d->terms, i);
    *out = d;
    return 0;
fail:
    index_match_doc_free(d);
    return err_set(err, rc, "out of memory preparing an article");
}

void index_match_doc_free(struct index_match_doc *d)
{
    if (d == NULL)
        return;
    strtab_release(&d->terms);
    free(d->t);
    free(d->occ);
    free(d->list);
    free(d);
}

void index_match_doc_terms(const struct index_match_doc *d, const char *const **terms, size_t *n)
{
    *terms = d->list;
    *n = d->terms.n;
}

/* --- evaluation ------------------------------------------------------------------ */

/* Two occurrence keys, ascending (static, so the search inlines it). */
static int cmp_occ(const void *element, const void *key)
{
    return sort_order_u64(*(const uint64_t *)element, *(const uint64_t *)key);
}

/* Whether term k occurs in field f at position pos. */
static bool occurs_at(const struct index_match_doc *d, uint32_t k, uint32_t f, uint32_t pos)
{
    const uint64_t *o = d->occ + d->t[k].occ_at;
    size_t n = d->t[k].occ_n;
    uint64_t key = occ_of(k, f, pos);
    size_t i = sort_lower_bound(o, n, sizeof *o, &key, cmp_occ);
    return i < n && o[i] == key;
}

#define PHRASE_KNOWN 64 /* tokens of a phrase whose term numbers are kept */

static bool eval_phrase(const struct plan *p, const struct index_match_doc *d)
{
    int64_t k[PHRASE_KNOWN], first = -1;
    unsigned fields = p->colset;
    for (size_t i = 0; i < p->n; i++) {
        int64_t t = strtab_find(&d->terms, p->terms[i], p->lens[i]);
        if (t < 0)
            return false;
        fields &= d->t[t].mask;
        if (i < PHRASE_KNOWN)
            k[i] = t;
        if (i == 0)
            first = t;
    }
    for (uint32_t f = 0; f < PLAN_FIELDS; f++) {
        if (!(fields & (1u << f)))
            continue;
        const uint64_t *o = d->occ + d->t[first].occ_at;
        for (uint32_t j = 0; j < d->t[first].occ_n; j++) {
            if (((o[j] >> OCC_FIELD_SHIFT) & 3) != f)
                continue;
            size_t i = 1;
            for (; i < p->n; i++) {
                int64_t t =
                    i < PHRASE_KNOWN ? k[i] : strtab_find(&d->terms, p->terms[i], p->lens[i]);
                if (!occurs_at(d, (uint32_t)t, f, (uint32_t)o[j] + (uint32_t)i))
                    break;
            }
            if (i == p->n)
                return true;
        }
    }
    return false;
}

/* The occurrences of term k in field f: a run of d->occ, which sorts by
 * term, then field. */
static const uint64_t *occ_field(const struct index_match_doc *d, uint32_t k, uint32_t f,
                                 uint32_t *n)
{
    const uint64_t *o = d->occ + d->t[k].occ_at;
    size_t all = d->t[k].occ_n;
    uint64_t key = occ_of(k, f, 0);
    size_t i = sort_lower_bound(o, all, sizeof *o, &key, cmp_occ), j = i;
    while (j < all && ((o[j] >> OCC_FIELD_SHIFT) & 3) == f)
        j++;
    *n = (uint32_t)(j - i);
    return o + i;
}

#define NEAR_STACK 1024 /* positions of one field's words held without malloc */

/* One field's windows of p (near.h) from the words' occurrences k[]. The
 * positions are the low bits of the occurrence keys, copied out: on the
 * stack for an article of ordinary length. false also when out of memory
 * (the article is then not matched, as a search that failed finds nothing). */
static bool near_field(const struct plan *p, const struct index_match_doc *d, const int64_t *k,
                       uint32_t f)
{
    const uint64_t *occ[LIMIT_NEAR_WORDS];
    const uint32_t *lists[LIMIT_NEAR_WORDS] = {0};
    uint32_t lens[LIMIT_NEAR_WORDS] = {0}, stack[NEAR_STACK], *buf = stack;
    size_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        occ[i] = occ_field(d, (uint32_t)k[i], f, &lens[i]);
        total += lens[i];
    }
    if (total > NEAR_STACK && (buf = malloc(total * sizeof *buf)) == NULL)
        return false;
    for (size_t i = 0, at = 0; i < p->n; at += lens[i], i++) {
        for (uint32_t j = 0; j < lens[i]; j++)
            buf[at + j] = (uint32_t)occ[i][j];
        lists[i] = buf + at;
    }
    bool found = index_near_windows(lists, lens, p->n, index_near_span(p->distance, p->n)) > 0;
    if (buf != stack)
        free(buf);
    return found;
}

/* "a b"~N: the windows of near.h over the article's positions, field by
 * field, as the engine counts them. */
static bool eval_near(const struct plan *p, const struct index_match_doc *d)
{
    int64_t k[LIMIT_NEAR_WORDS];
    unsigned fields = p->colset;
    if (p->n < 2 || p->n > LIMIT_NEAR_WORDS)
        return false;
    for (size_t i = 0; i < p->n; i++) {
        if ((k[i] = strtab_find(&d->terms, p->terms[i], p->lens[i])) < 0)
            return false;
        fields &= d->t[k[i]].mask;
    }
    for (uint32_t f = 0; f < PLAN_FIELDS; f++) {
        if ((fields & (1u << f)) && near_field(p, d, k, f))
            return true;
    }
    return false;
}

/* word*: any exact word of the article's fields in colset that starts with
 * it (the backends' expansion over the whole index, bounded, means the same
 * whenever it is not refused). */
static bool eval_prefix(const struct plan *p, const struct index_match_doc *d)
{
    for (size_t i = 0; i < d->terms.n; i++) {
        const char *t = d->list[i];
        if ((d->t[i].mask & p->colset) != 0 && strncmp(t, p->terms[0], p->lens[0]) == 0)
            return true; /* a prefix starts with a letter or digit: never a stem or meta */
    }
    return false;
}

static bool eval(const struct plan *p, const struct index_match_doc *d)
{
    switch (p->kind) {
    case PLAN_TERM: {
        if (p->prefix)
            return eval_prefix(p, d);
        int64_t k = strtab_find(&d->terms, p->terms[0], p->lens[0]);
        if (k < 0)
            return false;
        return (d->t[k].mask & (p->colset ? p->colset : DOC_META)) != 0;
    }
    case PLAN_PHRASE:
        return eval_phrase(p, d);
    case PLAN_NEAR:
        return eval_near(p, d);
    case PLAN_AND:
        for (size_t i = 0; i < p->nkids; i++) {
            if (!eval(p->kids[i], d))
                return false;
        }
        return true;
    case PLAN_OR:
        for (size_t i = 0; i < p->nkids; i++) {
            if (eval(p->kids[i], d))
                return true;
        }
        return false;
    case PLAN_ANDNOT:
        return eval(p->kids[0], d) && !eval(p->kids[1], d);
    }
    return false;
}

bool index_matcher_test(const struct index_matcher *m, const struct index_match_doc *d)
{
    if (m->never || d->id < m->id_lo || d->id > m->id_hi)
        return false;
    return eval(m->root, d);
}
