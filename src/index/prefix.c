/* index_prefix_expand() of index/prefix.h: the query trees copied on the
 * path to each prefix, the prefix replaced by its words as exact WORDs of
 * its field (one word: that WORD; none: the prefix itself as an exact
 * word, which no document holds, or it would have been found). */
#include "index/prefix.h"

#include <string.h>

#include "util/limits.h"
#include "util/banned.h"

struct expand {
    struct index_backend *b;
    struct arena *a;
    struct err *err;
    size_t words; /* of all the prefixes so far */
};

static bool has_prefix(const struct query_node *q)
{
    if (q == NULL)
        return false;
    if (q->kind == QUERY_WORD)
        return q->prefix;
    if (q->kind != QUERY_AND && q->kind != QUERY_OR && q->kind != QUERY_NOT)
        return false;
    for (size_t i = 0; i < q->n; i++)
        if (has_prefix(q->kids[i]))
            return true;
    return false;
}

static struct query_node *word_new(struct arena *a, const struct query_node *q, const char *w)
{
    struct query_node *n = arena_calloc(a, 1, sizeof *n);
    char **tok = arena_calloc(a, 1, sizeof *tok);
    if (n == NULL || tok == NULL)
        return NULL;
    tok[0] = (char *)w;
    *n = (struct query_node){
        .kind = QUERY_WORD, .exact = true, .field = q->field, .n = 1, .tokens = tok, .pos = q->pos};
    return n;
}

static int expand_word(struct expand *x, const struct query_node *q, struct query_node **out)
{
    const char *p = q->tokens[0];
    const char **words;
    size_t n;
    int rc =
        x->b->prefix_terms(x->b, x->a, p, strlen(p), LIMIT_PREFIX_WORDS + 1, &words, &n, x->err);
    if (rc < 0)
        return rc;
    if (n > LIMIT_PREFIX_WORDS)
        return err_set(x->err, ERR_REFUSED,
                       "the prefix %.64s* matches more than %d words; make it longer", p,
                       LIMIT_PREFIX_WORDS);
    if ((x->words += n) > LIMIT_QUERY_TERMS)
        return err_set(x->err, ERR_REFUSED,
                       "the prefixes of the query match more than %d words together",
                       LIMIT_QUERY_TERMS);
    if (n <= 1) {
        *out = word_new(x->a, q, n ? words[0] : p);
        return *out ? 0 : err_set(x->err, ERR_NOMEM, "out of memory");
    }
    struct query_node * or = arena_calloc(x->a, 1, sizeof * or);
    struct query_node **kids = arena_calloc(x->a, n, sizeof *kids);
    if (or == NULL || kids == NULL)
        return err_set(x->err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if ((kids[i] = word_new(x->a, q, words[i])) == NULL)
            return err_set(x->err, ERR_NOMEM, "out of memory");
    * or = (struct query_node){.kind = QUERY_OR, .n = n, .kids = kids, .pos = q->pos};
    *out = or ;
    return 0;
}

/* q with its prefixes expanded: q itself when it has none. */
static int expand_node(struct expand *x, const struct query_node *q, struct query_node **out)
{
    *out = (struct query_node *)q;
    if (!has_prefix(q))
        return 0;
    if (q->kind == QUERY_WORD)
        return expand_word(x, q, out);
    struct query_node *c = arena_calloc(x->a, 1, sizeof *c);
    struct query_node **kids = arena_calloc(x->a, q->n, sizeof *kids);
    if (c == NULL || kids == NULL)
        return err_set(x->err, ERR_NOMEM, "out of memory");
    *c = *q;
    c->hash = 0;
    c->kids = kids;
    for (size_t i = 0; i < q->n; i++) {
        int rc = expand_node(x, q->kids[i], &kids[i]);
        if (rc < 0)
            return rc;
    }
    *out = c;
    return 0;
}

int index_prefix_expand(struct index_backend *b, struct arena *a, const struct index_request *req,
                        const struct index_request **out, struct err *err)
{
    struct expand x = {.b = b, .a = a, .err = err};
    struct query_node *q, *qt;
    int rc;

    *out = req;
    if (!has_prefix(req->q) && !has_prefix(req->q_title))
        return 0;
    if (b->prefix_terms == NULL)
        return err_set(err, ERR_UNSUPPORTED, "the %s index cannot expand word*", b->kind);
    struct index_request *copy = arena_alloc(a, sizeof *copy);
    if (copy == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    *copy = *req;
    if ((rc = expand_node(&x, req->q, &q)) < 0 || (rc = expand_node(&x, req->q_title, &qt)) < 0)
        return rc;
    copy->q = q;
    copy->q_title = qt;
    *out = copy;
    return 0;
}
