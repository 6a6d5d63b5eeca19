/* A search request as one FTS5 MATCH expression (index/fts5/internal.h).
 *
 * Text (query.h trees), fully parenthesised, every token in double quotes
 * with '"' doubled, so no user text is ever read as FTS5 syntax:
 *   exact WORD  "tok"
 *   WORD        ("tok" OR "s" OR "~s" ...): its forms (index/expand.h)
 *   PHRASE      "t1 t2 t3" (exact tokens, adjacent)
 *   NEAR        NEAR("t1" "t2" "t3", N + 3 - 2): FTS5's N counts the tokens
 *               between the first and last word, the other words among them
 *   AND         (p1 AND p2), with NOT children: ((p1 AND p2) NOT (n1 OR n2))
 *   OR          (a OR b)
 *   title:leaf  ({title} : leaf), source:ID / domain:D their meta terms,
 *               and then every other leaf with q's columns: ({cols} : leaf)
 * q is restricted to its columns ({title description content} : (...)),
 * qInTitle to {title}; filters are meta terms: (meta : ("s.." OR "s..")) for
 * sources, likewise domains, language, country, category, headline; a
 * request with no positive condition uses (meta : "a"); excluded domains
 * become "... NOT (meta : (...))". */
#include "index/fts5/internal.h"
#include "index/plan.h"
#include "index/expand.h"

#include <stdio.h>
#include <string.h>

#include "store/meta.h"
#include "text/text.h"
#include "text/text_fts5.h"
#include "util/limits.h"
#include "util/banned.h"

struct match {
    struct buf *b;
    struct arena *a;
    struct err *err;
    const char *const *langs; /* languages whose stems a plain word matches */
    size_t n_langs;
    const char *leaf_cols; /* non-NULL: each leaf carries its own column filter */
};

/* "prefix s" with '"' doubled. */
static void put_quoted(struct buf *b, const char *prefix, const char *s)
{
    buf_putc(b, '"');
    if (prefix)
        buf_puts(b, prefix);
    for (; *s; s++) {
        if (*s == '"')
            buf_putc(b, '"');
        buf_putc(b, *s);
    }
    buf_putc(b, '"');
}

static int put_word(struct match *m, const char *tok)
{
    const char *forms[INDEX_EXPAND_FORMS_MAX];
    size_t n_forms = 0;
    int rc = index_expand_word(m->a, m->langs, m->n_langs, tok, forms, &n_forms, m->err);
    if (rc < 0)
        return rc;
    if (n_forms == 1) {
        put_quoted(m->b, NULL, tok);
        return 0;
    }
    buf_putc(m->b, '(');
    for (size_t i = 0; i < n_forms; i++) {
        if (i > 0)
            buf_puts(m->b, " OR ");
        put_quoted(m->b, NULL, forms[i]);
    }
    buf_putc(m->b, ')');
    return 0;
}

static int put_node(struct match *m, const struct query_node *q, int depth);

/* kids joined by op, parenthesised when more than one. */
static int put_list(struct match *m, struct query_node *const *kids, size_t n, const char *op,
                    int depth)
{
    int rc = 0;
    if (n > 1)
        buf_putc(m->b, '(');
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i > 0)
            buf_puts(m->b, op);
        rc = put_node(m, kids[i], depth + 1);
    }
    if (n > 1)
        buf_putc(m->b, ')');
    return rc;
}

static int put_and(struct match *m, const struct query_node *q, int depth)
{
    struct query_and_parts parts;
    int rc;

    if ((rc = query_and_split(m->a, q, &parts, m->err)) < 0)
        return rc;
    if (parts.n_neg > 0)
        buf_putc(m->b, '(');
    if ((rc = put_list(m, parts.pos, parts.n_pos, " AND ", depth)) < 0)
        return rc;
    if (parts.n_neg > 0) {
        buf_puts(m->b, " NOT ");
        if ((rc = put_list(m, parts.neg, parts.n_neg, " OR ", depth)) < 0)
            return rc;
        buf_putc(m->b, ')');
    }
    return 0;
}

static int put_node_bare(struct match *m, const struct query_node *q, int depth);
static void put_meta_any(struct match *m, char kind, const char *const *values, size_t n);

/* A query with field terms: FTS5 intersects nested column filters, so a
 * title: or meta leaf cannot sit under the q's {columns} : (...). Each leaf
 * gets its own filter instead: ({cols} : leaf), ({title} : leaf), or the
 * meta term's (meta : ...), which means the same per leaf. A query without
 * field terms keeps its one outer filter, written exactly as before. */
static int put_node(struct match *m, const struct query_node *q, int depth)
{
    int rc = query_node_check(q, depth, m->err);
    if (rc < 0)
        return rc;
    if (q->kind == QUERY_META) {
        const char *values[1] = {q->tokens[0]};
        put_meta_any(m, index_plan_meta_kind(q->field), values, 1);
        return 0;
    }
    if (m->leaf_cols == NULL ||
        (q->kind != QUERY_WORD && q->kind != QUERY_PHRASE && q->kind != QUERY_NEAR))
        return put_node_bare(m, q, depth);
    buf_printf(m->b, "({%s} : ", q->field == QUERY_FIELD_TITLE ? "title" : m->leaf_cols);
    rc = put_node_bare(m, q, depth);
    buf_putc(m->b, ')');
    return rc;
}

/* q, checked by put_node, without a column filter of its own. */
static int put_node_bare(struct match *m, const struct query_node *q, int depth)
{
    switch (q->kind) {
    case QUERY_WORD:
        if (q->prefix) /* index.c expands word* before a backend sees it */
            return err_set(m->err, ERR_INVALID, "a prefix reached FTS5 unexpanded");
        if (q->exact) {
            put_quoted(m->b, NULL, q->tokens[0]);
            return 0;
        }
        return put_word(m, q->tokens[0]);
    case QUERY_PHRASE:
        buf_putc(m->b, '"');
        for (size_t i = 0; i < q->n; i++) {
            const char *t = q->tokens[i];
            if (i > 0)
                buf_putc(m->b, ' ');
            for (; *t; t++) {
                if (*t == '"')
                    buf_putc(m->b, '"');
                buf_putc(m->b, *t);
            }
        }
        buf_putc(m->b, '"');
        return 0;
    case QUERY_NEAR:
        /* Ours: at most distance other tokens in the window (last − first
         * ≤ distance + k − 1); FTS5's NEAR(…, M): last − first ≤ M + 1. */
        buf_puts(m->b, "NEAR(");
        for (size_t i = 0; i < q->n; i++) {
            if (i > 0)
                buf_putc(m->b, ' ');
            put_quoted(m->b, NULL, q->tokens[i]);
        }
        buf_printf(m->b, ", %zu)", (size_t)q->distance + q->n - 2);
        return 0;
    case QUERY_AND:
        return put_and(m, q, depth);
    case QUERY_OR:
        return put_list(m, q->kids, q->n, " OR ", depth);
    case QUERY_NOT:
        break;       /* refused by query_node_check */
    case QUERY_META: /* put_node's */
        break;
    }
    return err_set(m->err, ERR_INVALID, "malformed query tree");
}

/* " AND " between the positive conditions of the request. */
static void put_sep(struct match *m, size_t *n_pos)
{
    if ((*n_pos)++ > 0)
        buf_puts(m->b, " AND ");
}

/* Whether q holds a field term (depth is bounded by the parser's limits). */
static bool has_field_term(const struct query_node *q, int depth)
{
    if (q == NULL || depth > 4 * LIMIT_QUERY_DEPTH) /* query_node_check refuses deeper */
        return false;
    if (q->kind == QUERY_META || q->field != QUERY_FIELD_ANY)
        return true;
    if (q->kind == QUERY_WORD || q->kind == QUERY_PHRASE || q->kind == QUERY_NEAR ||
        q->kids == NULL)
        return false;
    for (size_t i = 0; i < q->n; i++)
        if (has_field_term(q->kids[i], depth + 1))
            return true;
    return false;
}

static int put_text(struct match *m, const char *columns, const struct query_node *q, size_t *n_pos)
{
    int rc;
    put_sep(m, n_pos);
    if (has_field_term(q, 0)) {
        m->leaf_cols = columns;
        buf_putc(m->b, '(');
        rc = put_node(m, q, 0);
        buf_putc(m->b, ')');
        m->leaf_cols = NULL;
        return rc;
    }
    buf_printf(m->b, "({%s} : ", columns);
    rc = put_node(m, q, 0);
    buf_putc(m->b, ')');
    return rc;
}

/* (meta : ("<kind>v1" OR "<kind>v2" ...)) */
static void put_meta_any(struct match *m, char kind, const char *const *values, size_t n)
{
    struct buf term = BUF_INIT;
    size_t written = 0;

    buf_init(&term, LIMIT_FIELD_BYTES);
    buf_puts(m->b, "(meta : (");
    for (size_t i = 0; i < n; i++) {
        if (values[i] == NULL)
            continue;
        buf_reset(&term);
        store_meta_term(&term, kind, values[i], strlen(values[i]));
        if (buf_error(&term)) {
            m->b->err = buf_error(&term); /* sticky, reported by the caller */
            break;
        }
        if (written++ > 0)
            buf_puts(m->b, " OR ");
        put_quoted(m->b, NULL, term.data);
    }
    if (written == 0)
        buf_puts(m->b, "\"\""); /* unreachable for callers that pass values */
    buf_puts(m->b, "))");
    buf_release(&term);
}

static void put_meta_one(struct match *m, char kind, const char *value, size_t *n_pos)
{
    const char *values[1] = {value};
    put_sep(m, n_pos);
    put_meta_any(m, kind, values, 1);
}

int index_fts5_match_build(struct buf *b, struct arena *a, const struct index_request *req,
                           struct err *err)
{
    struct match m = {.b = b, .a = a, .err = err};
    size_t n_pos = 0;
    bool exclude;
    int rc = 0;

    index_expand_langs(&req->language, &m.langs, &m.n_langs);
    exclude = index_request_names_any(req->exclude_domains, req->n_exclude_domains);
    if (exclude)
        buf_puts(b, "((");

    if (req->q) {
        unsigned f = req->q_fields & INDEX_FIELD_ALL;
        char cols[64] = "";
        if (f == 0) /* searchIn not given */
            f = INDEX_FIELD_ALL;
        /* The meta column is never searched by words: "a" would match all. */
        snprintf(cols, sizeof cols, "%s%s%s", (f & INDEX_FIELD_TITLE) ? "title " : "",
                 (f & INDEX_FIELD_DESCRIPTION) ? "description " : "",
                 (f & INDEX_FIELD_CONTENT) ? "content " : "");
        cols[strlen(cols) - 1] = '\0';
        if ((rc = put_text(&m, cols, req->q, &n_pos)) < 0)
            return rc;
    }
    if (req->q_title && (rc = put_text(&m, "title", req->q_title, &n_pos)) < 0)
        return rc;
    if (index_request_names_any(req->sources, req->n_sources)) {
        put_sep(&m, &n_pos);
        put_meta_any(&m, STORE_META_SOURCE, req->sources, req->n_sources);
    }
    if (index_request_names_any(req->domains, req->n_domains)) {
        put_sep(&m, &n_pos);
        put_meta_any(&m, STORE_META_DOMAIN, req->domains, req->n_domains);
    }
    if (req->language)
        put_meta_one(&m, STORE_META_LANGUAGE, req->language, &n_pos);
    if (req->country)
        put_meta_one(&m, STORE_META_COUNTRY, req->country, &n_pos);
    if (req->category)
        put_meta_one(&m, STORE_META_CATEGORY, req->category, &n_pos);
    if (req->headlines_only)
        put_meta_one(&m, STORE_META_HEADLINE, "", &n_pos);
    if (n_pos == 0)
        put_meta_one(&m, STORE_META_ALL, "", &n_pos);

    if (exclude) {
        buf_puts(b, ") NOT ");
        put_meta_any(&m, STORE_META_DOMAIN, req->exclude_domains, req->n_exclude_domains);
        buf_putc(b, ')');
    }
    if ((rc = buf_error(b)) < 0)
        return err_set(err, rc,
                       rc == ERR_TOO_LARGE ? "search request too large"
                                           : "out of memory building a search");
    return 0;
}
