/* libFuzzer harness: the query language parser (query/query.h).
 * For any input: a clean answer (never a crash), an ERR_PARSE message that
 * ends with "at character N" inside the query, and on success a tree in
 * normal form that survives a round trip: written back in the query language
 * (minimal parentheses, NOT for exclusions, quotes for exact words and
 * phrases, ~N after a proximity) and parsed again it gives the same canonical text. query_and of a
 * tree with itself is the tree. The input cut at each newline is also a
 * repeated parameter (q=..&q=..): query_parse_all either fails on one value
 * or gives, in normal form, the tree of query_and over each value's. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/utf8.h"
#include "check.h"

static bool same_text(const struct query_node *x, const struct query_node *y)
{
    struct buf a = BUF_INIT, b = BUF_INIT;
    query_format(&a, x);
    query_format(&b, y);
    CHECK(!buf_error(&a) && !buf_error(&b));
    bool same = a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
    buf_release(&a);
    buf_release(&b);
    return same;
}

/* The invariants of query.h; returns the number of words and phrases. */
static size_t walk(const struct query_node *n, const struct query_node *parent, unsigned depth)
{
    CHECK(n && depth < 4 * LIMIT_QUERY_DEPTH + 4);
    switch (n->kind) {
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR:
        CHECK(n->kind == QUERY_WORD ? n->n == 1 : (n->n >= 2 && n->exact));
        CHECK(n->n <= LIMIT_PHRASE_TOKENS);
        CHECK(n->kind == QUERY_NEAR ? n->n <= LIMIT_NEAR_WORDS && n->distance <= LIMIT_NEAR_DISTANCE
                                    : n->distance == 0);
        for (size_t i = 0; n->kind == QUERY_NEAR && i < n->n; i++)
            for (size_t j = 0; j < i; j++)
                CHECK(strcmp(n->tokens[i], n->tokens[j]) != 0); /* distinct words */
        for (size_t i = 0; i < n->n; i++) {
            CHECK(n->tokens[i] && n->tokens[i][0]);
            CHECK(!strpbrk(n->tokens[i], " \"()"));
            CHECK(utf8_valid(n->tokens[i], strlen(n->tokens[i])));
        }
        CHECK(n->field == QUERY_FIELD_ANY || n->field == QUERY_FIELD_TITLE);
        CHECK(!n->prefix || (n->kind == QUERY_WORD && !n->exact));
        return 1;
    case QUERY_META: /* source:/domain: values are bytes, whole, without space or quote; */
        /* author: a name's folded words joined by single spaces */
        CHECK(n->n == 1 && n->tokens[0] && n->tokens[0][0]);
        CHECK(n->field == QUERY_FIELD_SOURCE || n->field == QUERY_FIELD_DOMAIN ||
              n->field == QUERY_FIELD_AUTHOR);
        if (n->field == QUERY_FIELD_AUTHOR) {
            const char *v = n->tokens[0];
            size_t len = strlen(v);
            CHECK(!strchr(v, '"') && v[0] != ' ' && v[len - 1] != ' ' && !strstr(v, "  "));
        } else {
            CHECK(!strpbrk(n->tokens[0], " \""));
        }
        return 1;
    case QUERY_NOT:
        CHECK(n->n == 1 && parent && parent->kind == QUERY_AND);
        CHECK(n->kids[0]->kind != QUERY_NOT);
        return walk(n->kids[0], n, depth + 1);
    case QUERY_AND:
    case QUERY_OR: {
        size_t terms = 0;
        bool positive = false;
        CHECK(n->n >= 2);
        for (size_t i = 0; i < n->n; i++) {
            CHECK(n->kids[i]->kind != n->kind);
            positive |= n->kids[i]->kind != QUERY_NOT;
            for (size_t j = 0; j < i; j++)
                CHECK(!same_text(n->kids[i], n->kids[j]));
            terms += walk(n->kids[i], n, depth + 1);
        }
        CHECK(positive);
        return terms;
    }
    }
    CHECK(!"unknown kind");
    return 0;
}

static void to_query(struct buf *b, const struct query_node *n, const struct query_node *parent)
{
    switch (n->kind) {
    case QUERY_META:
        buf_printf(b, "%s\"%s\"", query_field_name(n->field), n->tokens[0]);
        return;
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR: {
        bool quote = n->kind != QUERY_WORD || n->exact;
        if (n->field == QUERY_FIELD_TITLE)
            buf_puts(b, "title:");
        if (quote)
            buf_putc(b, '"');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                buf_putc(b, ' ');
            buf_puts(b, n->tokens[i]);
        }
        if (quote)
            buf_putc(b, '"');
        if (n->kind == QUERY_NEAR)
            buf_printf(b, "~%u", n->distance);
        if (n->prefix)
            buf_putc(b, '*');
        return;
    }
    case QUERY_NOT:
        buf_puts(b, "NOT ");
        to_query(b, n->kids[0], n);
        return;
    case QUERY_AND:
    case QUERY_OR: {
        bool paren = parent && (parent->kind == QUERY_NOT ||
                                (n->kind == QUERY_OR && parent->kind == QUERY_AND));
        if (paren)
            buf_putc(b, '(');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                buf_puts(b, n->kind == QUERY_AND ? " AND " : " OR ");
            to_query(b, n->kids[i], n);
        }
        if (paren)
            buf_putc(b, ')');
        return;
    }
    }
}

static void check_position(const char *msg, const uint8_t *data, size_t size)
{
    const char *at = strstr(msg, " at character ");
    CHECK(at);
    at += strlen(" at character ");
    char *end;
    unsigned long pos = strtoul(at, &end, 10);
    CHECK(*end == '\0' && pos >= 1);
    CHECK(pos <= utf8_count((const char *)data, size) + 1);
}

#define MAX_VALUES 64

static void check_values(const uint8_t *data, size_t size)
{
    const char *v[MAX_VALUES];
    size_t lens[MAX_VALUES], n = 0, bad = 0;
    const char *p = (const char *)data, *end = p + size;
    while (n < MAX_VALUES) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        v[n] = p;
        lens[n++] = (size_t)((nl ? nl : end) - p);
        if (!nl)
            break;
        p = nl + 1;
    }
    struct arena a;
    struct err err;
    struct query_node *all = NULL, *folded = NULL;
    arena_init(&a, 1 << 24);
    err_clear(&err);
    int rc = query_parse_all(&a, v, lens, n, &all, &bad, &err);
    if (rc < 0) {
        CHECK(!all && bad < n && err.code == rc && err.msg[0]);
        CHECK(rc == ERR_PARSE || rc == ERR_INVALID || rc == ERR_TOO_LARGE);
        goto out;
    }
    CHECK(all && all->kind != QUERY_NOT);
    walk(all, NULL, 0);
    for (size_t i = 0; i < n; i++) {
        struct query_node *one = NULL;
        CHECK(query_parse(&a, v[i], lens[i], &one, &err) == 0);
        folded = query_and(&a, folded, one);
        CHECK(folded);
    }
    CHECK(same_text(all, folded));
out:
    arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    struct err err;
    struct query_node *root = NULL, *again = NULL;
    struct buf text = BUF_INIT;

    arena_init(&a, 1 << 24);
    err_clear(&err);
    int rc = query_parse(&a, (const char *)data, size, &root, &err);
    if (rc < 0) {
        CHECK(!root && err.code == rc && err.msg[0]);
        CHECK(rc == ERR_PARSE || rc == ERR_INVALID || rc == ERR_TOO_LARGE);
        if (rc == ERR_PARSE)
            check_position(err.msg, data, size);
        goto out;
    }
    CHECK(root && root->kind != QUERY_NOT);
    walk(root, NULL, 0);

    to_query(&text, root, NULL);
    CHECK(!buf_error(&text));
    err_clear(&err);
    rc = query_parse(&a, text.data, text.len, &again, &err);
    if (rc != 0) {
        fprintf(stderr, "reparse of [%s] failed: %s\n", text.data, err.msg);
        abort();
    }
    CHECK(same_text(root, again));
    CHECK(same_text(query_and(&a, root, again), root));
out:
    check_values(data, size);
    buf_release(&text);
    arena_release(&a);
    return 0;
}
