/* The NewsAPI query language (API.md §4, §8) parsed into a backend-neutral
 * AST. Grammar (precedence NOT > AND > OR, implicit AND between operands):
 *   query   := or EOF
 *   or      := and ('OR' and)*
 *   and     := unary (['AND'] unary)*
 *   unary   := 'NOT' unary | '+' primary | '-' primary | primary
 *   primary := field | WORD | '"' phrase '"' ['~' DIGITS] | '(' or ')'
 *   field   := ('title:' | 'source:' | 'domain:' | 'author:') (WORD-text | '"' phrase '"')
 * A bare word ending in '*' whose text before the star is one token is a
 * prefix (WORD with prefix set): the index expands it (index/prefix.c).
 * Operators are upper case only. Words are tokenized with text/: a word
 * giving one token is a WORD, several tokens (covid-19, Trump's, CJK) a
 * PHRASE. Quoted text is exact (no stemming). A quote closed at once by
 * '~' and digits (then a delimiter or the end) is a proximity: NEAR of its
 * distinct tokens, one distinct token being that exact WORD.
 *
 * Invariants of a parsed tree (normal form):
 *  - AND and OR have ≥ 2 children and no child of their own kind (flattened);
 *  - NOT has one child and appears only as a child of AND, never at the root
 *    or under OR, and every AND has at least one child that is not NOT;
 *  - duplicate children of AND/OR are removed; the order is the query's.
 * All nodes live in the arena given to query_parse. */
#ifndef NEWSD_QUERY_QUERY_H
#define NEWSD_QUERY_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

enum query_kind {
    QUERY_WORD,   /* one token */
    QUERY_PHRASE, /* ≥ 2 tokens, in order, adjacent */
    QUERY_AND,
    QUERY_OR,
    QUERY_NOT,
    QUERY_META, /* source:ID, domain:D or author:N: a filter inside the tree (field says which) */
    QUERY_NEAR, /* "a b"~N: ≥ 2 distinct exact tokens, in one window of one field with at
                 * most `distance` other tokens among them, in any order */
};

/* Field terms (docs/query-language.md), an extension of NewsAPI's language:
 * title:word / title:"a phrase" is a WORD/PHRASE searched in titles only
 * (as qInTitle), source:ID and domain:D are META nodes that mean what
 * sources=ID and domains=D mean, author:N a META node matching the
 * articles whose author field names N (store/meta.h). */
enum query_field {
    QUERY_FIELD_ANY,    /* WORD/PHRASE: the fields of the request (searchIn) */
    QUERY_FIELD_TITLE,  /* WORD/PHRASE: titles only */
    QUERY_FIELD_SOURCE, /* META: tokens[0] is the source id */
    QUERY_FIELD_DOMAIN, /* META: tokens[0] is the domain, normalized as domains= */
    QUERY_FIELD_AUTHOR, /* META: tokens[0] is the name's words, folded, joined by spaces */
};

struct query_node {
    enum query_kind kind;
    bool exact;             /* WORD: quoted; match the exact form only */
    enum query_field field; /* WORD/PHRASE: ANY or TITLE; META: SOURCE, DOMAIN or AUTHOR */
    bool prefix;            /* WORD: word* — the exact words that start with tokens[0] */
    unsigned distance;      /* NEAR: other tokens allowed in the window, ≤ LIMIT_NEAR_DISTANCE */
    size_t n;               /* WORD/PHRASE/NEAR: tokens; AND/OR/NOT: children */
    char **tokens;          /* folded tokens, NUL-terminated */
    struct query_node **kids; /* children */
    size_t pos;               /* 1-based code point position in the query */
    uint64_t hash;            /* of the canonical text, for deduplication; 0 until needed */
};

/* Parse q[0..len). On a malformed query returns ERR_PARSE with err->msg
 * naming the problem and its position, e.g. "unbalanced parenthesis at
 * character 7"; ERR_INVALID for a query that only excludes, an exclusion
 * inside OR, or a query with no searchable word; ERR_TOO_LARGE beyond
 * LIMIT_QUERY_DEPTH / LIMIT_QUERY_TERMS; ERR_NOMEM. The length limit of q
 * (500 characters) is the caller's to check. */
int query_parse(struct arena *a, const char *q, size_t len, struct query_node **out,
                struct err *err);

/* The values of a repeated parameter (q=a&q=b, or an alert's list) parsed
 * as one query: the AND of every value's tree, in normal form, built in one
 * pass whose time grows linearly with the number of words. The limits hold
 * for the whole: LIMIT_QUERY_TERMS counts the words and phrases of all the
 * values together (so splitting a query cannot lift it), LIMIT_QUERY_DEPTH
 * holds in each value (joining with AND adds no level). Errors as
 * query_parse, positions inside the value at fault, whose index goes to
 * *bad. n == 0 gives 0 and *out NULL. The length limit is the caller's. */
int query_parse_all(struct arena *a, const char *const *values, const size_t *lens, size_t n,
                    struct query_node **out, size_t *bad, struct err *err);

/* A field term's name as q writes it ("title:", "source:", "domain:",
 * "author:"; "" for QUERY_FIELD_ANY). */
const char *query_field_name(enum query_field f);

/* Canonical text of a tree, for tests and logs: words bare, exact words and
 * phrases quoted, operators as S-expressions, field terms with their field,
 * a proximity with its distance:
 * (AND a "b c" (NOT d) title:e source:bbc-news author:"jane doe" "f g"~3). */
void query_format(struct buf *out, const struct query_node *n);

/* AND of two trees, in normal form; either may be NULL. Many values are
 * joined by query_parse_all, in one pass. */
struct query_node *query_and(struct arena *a, struct query_node *x, struct query_node *y);

/* Node q, at nesting depth `depth` of a tree a backend is turning into its
 * own form, checked for the shape that backend relies on: the tree comes
 * from outside the parser too (a stored alert, a test). Its own shape only;
 * the backend checks each child as it reaches it. ERR_INVALID with err->msg
 * "malformed query tree", "malformed query word", "malformed query phrase"
 * (also a NEAR of fewer than 2 tokens, or of a distance past the limit),
 * "an exclusion cannot be inside OR" or "a query cannot only exclude" (a
 * NOT met outside an AND); ERR_TOO_LARGE "query nested too deeply" past
 * four times LIMIT_QUERY_DEPTH (the parser's normal form adds levels); or 0. */
int query_node_check(const struct query_node *q, int depth, struct err *err);

/* An AND node's children as a backend plans them: the ones it requires
 * (pos) and the operands of its NOT children (neg), in the query's order,
 * the arrays in the arena. */
struct query_and_parts {
    struct query_node **pos, **neg;
    size_t n_pos, n_neg;
};

/* Split q (an AND) into out. The tree comes from outside the parser too
 * (a stored alert, a test), so its shape is checked: ERR_INVALID with
 * err->msg "malformed query tree" for a missing child or a NOT without
 * exactly one, or "a query cannot only exclude"; ERR_NOMEM. */
int query_and_split(struct arena *a, const struct query_node *q, struct query_and_parts *out,
                    struct err *err);

#endif
