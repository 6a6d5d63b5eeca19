/* query_parse of query/query.h: recursive descent over the lexer's tokens,
 *   or := and ('OR' and)*;  and := unary (['AND'] unary)*;
 *   unary := ('NOT' | '+' | '-') unary | primary;
 *   primary := word | phrase ['~' digits] | '(' or ')'
 * where a word that starts with a field name (title: source: domain:
 * author:) and
 * its value written at once after the colon (a word, or a quoted phrase)
 * is a field term;
 * building the normal form as it goes (ast.c). Recursion is bounded: every
 * '(' and every prefix operator adds one level, and more than
 * LIMIT_QUERY_DEPTH levels is ERR_TOO_LARGE before recursing.
 * Syntax errors stop at once. The semantic errors (an exclusion under OR)
 * are remembered and reported only once the whole query has been read, so a
 * malformed query is always reported as malformed, at its first fault. */
#include "query/query.h"

#include <string.h>

#include "query/internal.h"
#include "text/text.h"
#include "util/domain.h"
#include "util/limits.h"
#include "util/banned.h"

struct parser {
    struct arena *a;
    struct query_lexer lx;
    struct query_token tok; /* current token */
    struct err *err;
    size_t terms; /* words and phrases kept so far */
    int sem_rc;   /* first semantic error, reported at the end */
    struct err sem;
};

static int parse_or(struct parser *p, unsigned depth, struct query_node **out);

static int next(struct parser *p)
{
    return query_lexer_next(&p->lx, &p->tok, p->err);
}

static bool starts_operand(enum query_tok kind)
{
    return kind == QUERY_TOK_WORD || kind == QUERY_TOK_PHRASE || kind == QUERY_TOK_LPAREN ||
           kind == QUERY_TOK_NOT || kind == QUERY_TOK_PLUS || kind == QUERY_TOK_MINUS;
}

static int missing_after(struct parser *p, const struct query_token *op)
{
    return err_set(p->err, ERR_PARSE, "missing word after %s at character %zu",
                   query_tok_name(op->kind), op->pos);
}

static int too_deep(struct parser *p, const struct query_token *at)
{
    return err_set(p->err, ERR_TOO_LARGE,
                   "parentheses and operators nested deeper than %d at character %zu",
                   LIMIT_QUERY_DEPTH, at->pos);
}

/* The current token must begin an operand: at the start of the query
 * (open == NULL) or of the group opened by open. */
static int expect_operand(struct parser *p, const struct query_token *open)
{
    const struct query_token *t = &p->tok;
    if (starts_operand(t->kind))
        return 0;
    switch (t->kind) {
    case QUERY_TOK_AND:
    case QUERY_TOK_OR:
        return err_set(p->err, ERR_PARSE, "missing word before %s at character %zu",
                       query_tok_name(t->kind), t->pos);
    case QUERY_TOK_RPAREN:
        if (open)
            return err_set(p->err, ERR_PARSE, "empty group at character %zu", open->pos);
        return err_set(p->err, ERR_PARSE, "unbalanced parenthesis at character %zu", t->pos);
    default: /* EOF */
        if (open)
            return err_set(p->err, ERR_PARSE, "unbalanced parenthesis at character %zu", open->pos);
        return 0; /* empty query: no word, the caller says so */
    }
}

static void defer(struct parser *p, int code, size_t pos)
{
    if (p->sem_rc)
        return;
    p->sem_rc = code;
    err_set(&p->sem, code, "exclusion (NOT or -) inside OR at character %zu", pos);
}

/* Tokens of one word or phrase, copied into the arena. */
struct collect {
    struct arena *a;
    char *tok[LIMIT_PHRASE_TOKENS];
    size_t n;
};

static int collect_token(const struct text_token *t, void *ctx)
{
    struct collect *c = ctx;
    if (c->n == LIMIT_PHRASE_TOKENS)
        return ERR_TOO_LARGE;
    char *s = arena_strndup(c->a, t->text, t->len);
    if (!s)
        return ERR_NOMEM;
    c->tok[c->n++] = s;
    return 0;
}

static int count_term(struct parser *p, size_t pos)
{
    if (++p->terms > LIMIT_QUERY_TERMS)
        return err_set(p->err, ERR_TOO_LARGE, "more than %d words and phrases at character %zu",
                       LIMIT_QUERY_TERMS, pos);
    return 0;
}

/* text[0..len) as a WORD or PHRASE node searched in field; NULL when it has
 * no token at all (pure punctuation such as "&"): such operands are
 * dropped. quoted: it was written between quotes. */
static int make_operand(struct parser *p, const char *text, size_t len, bool quoted,
                        enum query_field field, size_t pos, struct query_node **out)
{
    struct collect c = {.a = p->a, .n = 0};
    int rc;

    *out = NULL;
    rc = text_tokenize(text, len, collect_token, &c);
    if (rc == ERR_TOO_LARGE)
        return err_set(p->err, rc, "phrase longer than %d tokens at character %zu",
                       LIMIT_PHRASE_TOKENS, pos);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return ERR_INTERNAL;
    if (c.n == 0)
        return 0;
    if ((rc = count_term(p, pos)) < 0)
        return rc;
    struct query_node *n = query_node_new(p->a, c.n == 1 ? QUERY_WORD : QUERY_PHRASE, pos);
    char **toks = arena_calloc(p->a, c.n, sizeof *toks);
    if (!n || !toks)
        return ERR_NOMEM;
    for (size_t i = 0; i < c.n; i++)
        toks[i] = c.tok[i];
    /* Quoted text and phrases match exact tokens only (no stemming). */
    n->exact = quoted || c.n > 1;
    n->field = field;
    n->tokens = toks;
    n->n = c.n;
    *out = n;
    return 0;
}

/* "text"~distance as a NEAR of its distinct tokens in query order (a
 * repeated word is one word of the window: FTS5's NEAR lets two phrases
 * share one instance, so repeats could not mean more there); one distinct
 * token is that exact WORD, none is dropped as any punctuation is. */
static int make_near(struct parser *p, const char *text, size_t len, enum query_field field,
                     unsigned distance, size_t pos, struct query_node **out)
{
    int rc = make_operand(p, text, len, true, field, pos, out);
    struct query_node *n = *out;
    if (rc < 0 || n == NULL || n->kind == QUERY_WORD)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < n->n; i++) {
        size_t j = 0;
        while (j < k && strcmp(n->tokens[j], n->tokens[i]) != 0)
            j++;
        if (j == k)
            n->tokens[k++] = n->tokens[i];
    }
    if (k > LIMIT_NEAR_WORDS)
        return err_set(p->err, ERR_TOO_LARGE,
                       "proximity of more than %d distinct words at character %zu",
                       LIMIT_NEAR_WORDS, pos);
    n->n = k;
    n->kind = k == 1 ? QUERY_WORD : QUERY_NEAR;
    n->distance = k == 1 ? 0 : distance;
    return 0;
}

/* The field names of field terms, exactly as written (lower case): any
 * other "name:" is text as it always was. */
static const struct {
    const char *name;
    enum query_field field;
} field_names[] = {
    {"title:", QUERY_FIELD_TITLE},
    {"source:", QUERY_FIELD_SOURCE},
    {"domain:", QUERY_FIELD_DOMAIN},
    {"author:", QUERY_FIELD_AUTHOR},
};

/* Whether the current WORD token starts with a field name; its length in
 * *name_len. */
static bool field_of_word(const struct parser *p, enum query_field *field, size_t *name_len)
{
    const char *w = p->lx.q + p->tok.start;
    size_t len = p->tok.end - p->tok.start;
    for (size_t i = 0; i < sizeof field_names / sizeof field_names[0]; i++) {
        size_t n = strlen(field_names[i].name);
        if (len >= n && memcmp(w, field_names[i].name, n) == 0) {
            *field = field_names[i].field;
            *name_len = n;
            return true;
        }
    }
    return false;
}

/* author:N's value: the name's words (folded, as the index's author terms
 * read them: store/meta.h) joined by single spaces, so that the canonical
 * form and the deduplication see "Jane  DOE" as "jane doe". */
static int author_value(struct parser *p, const char *v, size_t len, size_t pos, char **out)
{
    struct collect c = {.a = p->a, .n = 0};
    int rc = text_tokenize(v, len, collect_token, &c);
    if (rc == ERR_TOO_LARGE || (rc == 0 && c.n > LIMIT_AUTHOR_WORDS))
        return err_set(p->err, ERR_TOO_LARGE,
                       "an author name of more than %d words after author: at character %zu",
                       LIMIT_AUTHOR_WORDS, pos);
    if (rc < 0)
        return rc;
    if (c.n == 0)
        return err_set(p->err, ERR_PARSE, "invalid author after author: at character %zu", pos);
    size_t total = 0;
    for (size_t i = 0; i < c.n; i++)
        total += strlen(c.tok[i]) + 1;
    char *val = arena_alloc(p->a, total);
    if (val == NULL)
        return ERR_NOMEM;
    size_t at = 0;
    for (size_t i = 0; i < c.n; i++) {
        size_t n = strlen(c.tok[i]);
        memcpy(val + at, c.tok[i], n);
        at += n;
        val[at++] = i + 1 < c.n ? ' ' : '\0';
    }
    *out = val;
    return 0;
}

/* source:ID / domain:D / author:N as a META node of value v[0..len). A
 * source or domain is not tokenized: it is compared whole, as the sources
 * and domains parameters compare theirs. */
static int make_meta(struct parser *p, enum query_field field, const char *v, size_t len,
                     size_t pos, struct query_node **out)
{
    const char *name = field == QUERY_FIELD_SOURCE ? "source id" : "domain";
    char *val = arena_strndup(p->a, v, len);
    struct query_node *n = query_node_new(p->a, QUERY_META, pos);
    char **toks = arena_calloc(p->a, 1, sizeof *toks);
    int rc;

    if (!val || !n || !toks)
        return ERR_NOMEM;
    if (field == QUERY_FIELD_AUTHOR && (rc = author_value(p, v, len, pos, &val)) < 0)
        return rc;
    bool ok = field == QUERY_FIELD_AUTHOR || (len > 0 && strlen(val) == len);
    for (size_t i = 0; ok && field != QUERY_FIELD_AUTHOR && i < len; i++)
        ok = (unsigned char)val[i] > ' ' && val[i] != 0x7F;
    /* domains='s reading, to its fixed point ("www.www.x" is "x"), so that
     * the canonical form reads back as the same term. */
    while (ok && field == QUERY_FIELD_DOMAIN) {
        size_t before = strlen(val);
        char *d = domain_normalize(val);
        ok = d != NULL;
        if (!ok || (d == val && strlen(d) == before))
            break;
        val = d;
    }
    if (!ok)
        return err_set(p->err, ERR_PARSE, "invalid %s after %s at character %zu", name,
                       query_field_name(field), pos);
    if ((rc = count_term(p, pos)) < 0)
        return rc;
    toks[0] = val;
    n->tokens = toks;
    n->n = 1;
    n->field = field;
    n->exact = true;
    *out = n;
    return 0;
}

/* Whether text[0..len) is one token that runs to its end ("app" in app*,
 * not "covid-1" nor "app-"): what makes a word ending in '*' a prefix. */
struct one_token {
    size_t n, end;
};

static int count_tokens(const struct text_token *t, void *ctx)
{
    struct one_token *o = ctx;
    o->end = t->end;
    return ++o->n > 1 ? 1 : 0;
}

static bool one_token_to_end(const char *text, size_t len)
{
    struct one_token o = {0, 0};
    return text_tokenize(text, len, count_tokens, &o) == 0 && o.n == 1 && o.end == len;
}

/* word* as a prefix WORD: its one token, which the index expands into the
 * exact words that start with it (index/prefix.c). */
static int make_prefix(struct parser *p, const char *text, size_t len, enum query_field field,
                       size_t pos, struct query_node **out)
{
    int rc = make_operand(p, text, len, true, field, pos, out);
    if (rc == 0 && *out) {
        (*out)->prefix = true;
        (*out)->exact = false;
    }
    return rc;
}

/* The current WORD or PHRASE token as an operand, reading a field term
 * (title:word, title:"a phrase", source:ID, domain:D, author:N) when the word starts
 * with a field name and its value follows at once; then the next token. */
static int parse_operand(struct parser *p, struct query_node **out)
{
    const struct query_token t = p->tok;
    enum query_field field = QUERY_FIELD_ANY;
    size_t skip = 0;
    bool quoted = t.kind == QUERY_TOK_PHRASE;
    int rc;

    if (t.kind == QUERY_TOK_WORD && field_of_word(p, &field, &skip)) {
        if (t.end - t.start == skip) {
            /* "title:" then at once a quote: the value is the phrase. A
             * space, a parenthesis or the end after it: not a field term. */
            if (t.end < p->lx.len && p->lx.q[t.end] == '"') {
                if ((rc = next(p)) < 0)
                    return rc;
                quoted = true;
                skip = 0; /* the phrase token holds the value alone */
            } else {
                field = QUERY_FIELD_ANY;
                skip = 0;
            }
        }
    }
    const char *text = p->lx.q + p->tok.start + skip;
    size_t len = p->tok.end - p->tok.start - skip;
    bool meta =
        field == QUERY_FIELD_SOURCE || field == QUERY_FIELD_DOMAIN || field == QUERY_FIELD_AUTHOR;
    if (p->tok.near && meta)
        return err_set(p->err, ERR_PARSE,
                       "a distance ~N follows words in quotes, not %s, at character %zu",
                       query_field_name(field), t.pos);
    if (p->tok.near)
        rc = make_near(p, text, len, field, p->tok.distance, t.pos, out);
    else if (meta)
        rc = make_meta(p, field, text, len, t.pos, out);
    else if (!quoted && len > 1 && text[len - 1] == '*' && one_token_to_end(text, len - 1))
        rc = make_prefix(p, text, len - 1, field, t.pos, out);
    else
        rc = make_operand(p, text, len, quoted, field, t.pos, out);
    if (rc < 0)
        return rc;
    return next(p);
}

static int parse_primary(struct parser *p, unsigned depth, struct query_node **out)
{
    int rc;
    *out = NULL;
    if (p->tok.kind == QUERY_TOK_WORD || p->tok.kind == QUERY_TOK_PHRASE)
        return parse_operand(p, out);
    /* starts_operand() held: an opening parenthesis */
    struct query_token open = p->tok;
    if (depth >= LIMIT_QUERY_DEPTH)
        return too_deep(p, &open);
    if ((rc = next(p)) < 0 || (rc = expect_operand(p, &open)) < 0 ||
        (rc = parse_or(p, depth + 1, out)) < 0)
        return rc;
    if (p->tok.kind != QUERY_TOK_RPAREN)
        return err_set(p->err, ERR_PARSE, "unbalanced parenthesis at character %zu", open.pos);
    return next(p);
}

static int parse_unary(struct parser *p, unsigned depth, struct query_node **out)
{
    int rc;
    *out = NULL;
    if (p->tok.kind != QUERY_TOK_NOT && p->tok.kind != QUERY_TOK_PLUS &&
        p->tok.kind != QUERY_TOK_MINUS)
        return parse_primary(p, depth, out);
    struct query_token op = p->tok;
    struct query_node *x;
    if (depth >= LIMIT_QUERY_DEPTH)
        return too_deep(p, &op);
    if ((rc = next(p)) < 0)
        return rc;
    if (!starts_operand(p->tok.kind))
        return missing_after(p, &op);
    if ((rc = parse_unary(p, depth + 1, &x)) < 0)
        return rc;
    if (op.kind == QUERY_TOK_PLUS) {
        /* "must appear" is what every operand of AND means already, and
         * inside OR the + is ignored (API.md §8). */
        *out = x;
        return 0;
    }
    return query_node_negate(p->a, x, op.pos, out);
}

static int parse_and(struct parser *p, unsigned depth, struct query_node **out)
{
    struct query_kids k = {0};
    struct query_node *x;
    size_t pos = p->tok.pos;
    int rc;

    *out = NULL;
    if ((rc = parse_unary(p, depth, &x)) < 0 || (rc = query_kids_add(p->a, &k, QUERY_AND, x)) < 0)
        return rc;
    for (;;) {
        if (p->tok.kind == QUERY_TOK_AND) {
            struct query_token op = p->tok;
            if ((rc = next(p)) < 0)
                return rc;
            if (!starts_operand(p->tok.kind))
                return missing_after(p, &op);
        } else if (!starts_operand(p->tok.kind)) {
            break;
        }
        if ((rc = parse_unary(p, depth, &x)) < 0 ||
            (rc = query_kids_add(p->a, &k, QUERY_AND, x)) < 0)
            return rc;
    }
    return query_kids_finish(p->a, &k, QUERY_AND, pos, out);
}

static int parse_or(struct parser *p, unsigned depth, struct query_node **out)
{
    struct query_kids k = {0};
    struct query_node *x;
    size_t pos = p->tok.pos;
    size_t operands = 0, neg_pos = 0;
    int rc;

    *out = NULL;
    for (;;) {
        if ((rc = parse_and(p, depth, &x)) < 0)
            return rc;
        if (x) {
            operands++;
            if (!neg_pos && query_node_negative(x))
                neg_pos = x->pos;
            if ((rc = query_kids_add(p->a, &k, QUERY_OR, x)) < 0)
                return rc;
        }
        if (p->tok.kind != QUERY_TOK_OR)
            break;
        struct query_token op = p->tok;
        if ((rc = next(p)) < 0)
            return rc;
        if (!starts_operand(p->tok.kind))
            return missing_after(p, &op);
    }
    /* An alternative that only excludes would match nearly everything. */
    if (operands >= 2 && neg_pos)
        defer(p, ERR_INVALID, neg_pos);
    return query_kids_finish(p->a, &k, QUERY_OR, pos, out);
}

/* One value into p->a: its tree, or an error in p->err. p->terms carries
 * over from the values before it. */
static int parse_value(struct parser *p, const char *q, size_t len, struct query_node **out)
{
    struct query_node *root = NULL;
    struct err *err = p->err;
    int rc;

    *out = NULL;
    p->sem_rc = 0;
    err_clear(&p->sem);
    query_lexer_init(&p->lx, q, len);
    if ((rc = next(p)) < 0 || (rc = expect_operand(p, NULL)) < 0)
        return rc;
    if (p->tok.kind != QUERY_TOK_EOF && (rc = parse_or(p, 0, &root)) < 0)
        return rc;
    if (p->tok.kind == QUERY_TOK_RPAREN)
        return err_set(err, ERR_PARSE, "unbalanced parenthesis at character %zu", p->tok.pos);
    if (p->sem_rc)
        return err_set(err, p->sem_rc, "%s", p->sem.msg);
    if (!root)
        return err_set(err, ERR_INVALID, "the query contains no searchable words");
    if (query_node_negative(root))
        return err_set(err, ERR_INVALID,
                       "the query only excludes words; add a word that must appear");
    *out = root;
    return 0;
}

int query_parse(struct arena *a, const char *q, size_t len, struct query_node **out,
                struct err *err)
{
    size_t bad;
    return query_parse_all(a, &q, &len, 1, out, &bad, err);
}

int query_parse_all(struct arena *a, const char *const *values, const size_t *lens, size_t n,
                    struct query_node **out, size_t *bad, struct err *err)
{
    struct parser p = {.a = a, .err = err};
    struct query_kids k = {0};
    struct query_node *tree;
    size_t pos = 0;
    int rc = 0;

    *out = NULL;
    *bad = 0;
    /* One list for all the values: each is spliced in once, where folding
     * query_and over them copied the growing list at every value. */
    for (size_t i = 0; i < n; i++) {
        *bad = i;
        if ((rc = parse_value(&p, values[i], lens[i], &tree)) < 0 ||
            (rc = query_kids_add(a, &k, QUERY_AND, tree)) < 0)
            goto out;
        if (i == 0)
            pos = tree->pos;
    }
    *bad = 0;
    rc = query_kids_finish(a, &k, QUERY_AND, pos, out);
out:
    if (rc == ERR_NOMEM)
        err_set(err, rc, "out of memory");
    return rc;
}
