/* Private to src/query/: the lexer (lexer.c) and the normal-form builders
 * (ast.c) that the parser (parser.c) drives. Nothing outside src/query/
 * includes it.
 * Positions are 1-based code point indexes into the query, an invalid UTF-8
 * byte counting as one character (the rule of util/utf8.c). */
#ifndef NEWSD_QUERY_INTERNAL_H
#define NEWSD_QUERY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/query.h"

enum query_tok {
    QUERY_TOK_EOF,
    QUERY_TOK_WORD,   /* bare word; text is q[start..end) */
    QUERY_TOK_PHRASE, /* quoted; text is the content between the quotes */
    QUERY_TOK_LPAREN,
    QUERY_TOK_RPAREN,
    QUERY_TOK_AND,
    QUERY_TOK_OR,
    QUERY_TOK_NOT,
    QUERY_TOK_PLUS,  /* '+' at the start of a word */
    QUERY_TOK_MINUS, /* '-' at the start of a word */
};

struct query_token {
    enum query_tok kind;
    size_t start, end; /* byte range of the word or phrase text */
    size_t pos;        /* 1-based code point position of the token */
    bool near;         /* PHRASE closed by ~N: a proximity of distance */
    unsigned distance;
};

struct query_lexer {
    const char *q;
    size_t len;
    size_t off;        /* next byte to read */
    size_t chars;      /* code points before off */
    bool after_prefix; /* previous token was '+' or '-': the next word is plain text */
};

void query_lexer_init(struct query_lexer *lx, const char *q, size_t len);

/* Next token into out. ERR_PARSE (message with its position) for an
 * unbalanced quote, an empty phrase, or a '+'/'-' followed by nothing;
 * ERR_TOO_LARGE for a proximity distance past LIMIT_NEAR_DISTANCE. */
int query_lexer_next(struct query_lexer *lx, struct query_token *out, struct err *err);

/* How a token is named in error messages: "AND", "'+'", "end of query". */
const char *query_tok_name(enum query_tok kind);

/* Children being collected for an AND or OR node: children of the same kind
 * are spliced in (flattening) and duplicates skipped as they are added. A
 * short list is scanned for a duplicate; past QUERY_KIDS_SCAN children a
 * hash table over the nodes' hashes finds one, so that a list of n children
 * costs O(n) however long it grows (q=a&q=b&... 1,500 times was cubic). */
#define QUERY_KIDS_SCAN 8

struct query_kids {
    struct query_node **v;
    size_t n, cap;
    uint32_t *slot; /* open addressing: index in v + 1, 0 empty; NULL while short */
    size_t n_slot;  /* a power of two, at least twice n; 0 while short */
};

/* The node's hash of its canonical text (cached in n->hash): equal trees
 * (query_node_equal) have equal hashes. */
uint64_t query_node_hash(struct query_node *n);

/* New node of kind, zero-filled but for kind and pos; NULL when out of memory. */
struct query_node *query_node_new(struct arena *a, enum query_kind kind, size_t pos);

/* True when two trees have the same canonical text. */
bool query_node_equal(const struct query_node *x, const struct query_node *y);

/* True for a NOT, or an AND all of whose children are NOT: a subtree that
 * only excludes and must end up inside an AND with something positive. */
bool query_node_negative(const struct query_node *n);

/* Add x (NULL: nothing) to an AND/OR list of kind. 0 or ERR_NOMEM. */
int query_kids_add(struct arena *a, struct query_kids *k, enum query_kind kind,
                   struct query_node *x);

/* The node for a list: NULL when empty, its only child, or a new node of
 * kind. 0 or ERR_NOMEM. */
int query_kids_finish(struct arena *a, struct query_kids *k, enum query_kind kind, size_t pos,
                      struct query_node **out);

/* NOT x in normal form: NULL for NULL, NOT(NOT y) = y, and an AND of
 * exclusions NOT(AND (NOT y) (NOT z)) = (OR y z). 0 or ERR_NOMEM. */
int query_node_negate(struct arena *a, struct query_node *x, size_t pos, struct query_node **out);

#endif
