/* query/: the NewsAPI query language (API.md §4, §8) — a conformance table
 * of queries and their canonical trees or errors, the limits, query_and and
 * query_parse_all (repeated values: one query, one set of limits),
 * the normal-form invariants, a print-and-reparse round trip, every prefix
 * and suffix of a set of queries, and allocation failure at every point. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "query/query.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/limits.h"

/* ---- helpers ----------------------------------------------------------- */

/* Normal-form invariants of query.h, checked on every tree a test sees. */
static size_t check_node(const struct query_node *n, const struct query_node *parent,
                         unsigned depth)
{
    size_t terms = 0;
    assert_non_null(n);
    assert_true(depth < 4 * LIMIT_QUERY_DEPTH);
    assert_true(n->pos >= 1);
    switch (n->kind) {
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR:
        assert_true(n->kind == QUERY_WORD ? n->n == 1 : n->n >= 2);
        assert_true(n->n <= LIMIT_PHRASE_TOKENS);
        if (n->kind != QUERY_WORD)
            assert_true(n->exact);
        if (n->kind == QUERY_NEAR) {
            assert_true(n->n <= LIMIT_NEAR_WORDS && n->distance <= LIMIT_NEAR_DISTANCE);
            for (size_t i = 0; i < n->n; i++)
                for (size_t j = 0; j < i; j++)
                    assert_string_not_equal(n->tokens[i], n->tokens[j]);
        } else {
            assert_int_equal(n->distance, 0);
        }
        for (size_t i = 0; i < n->n; i++) {
            assert_non_null(n->tokens[i]);
            assert_true(n->tokens[i][0] != '\0');
            assert_null(strpbrk(n->tokens[i], " \"()"));
        }
        assert_true(n->field == QUERY_FIELD_ANY || n->field == QUERY_FIELD_TITLE);
        if (n->prefix)
            assert_true(n->kind == QUERY_WORD && !n->exact);
        return 1;
    case QUERY_META:
        assert_int_equal(n->n, 1);
        assert_true(n->field == QUERY_FIELD_SOURCE || n->field == QUERY_FIELD_DOMAIN ||
                    n->field == QUERY_FIELD_AUTHOR);
        assert_true(n->tokens[0][0] != '\0');
        /* an author's name has its words' spaces, one between two */
        assert_null(strpbrk(n->tokens[0], n->field == QUERY_FIELD_AUTHOR ? "\"" : " \""));
        if (n->field == QUERY_FIELD_AUTHOR)
            assert_null(strstr(n->tokens[0], "  "));
        return 1;
    case QUERY_NOT:
        assert_int_equal(n->n, 1);
        assert_non_null(parent);
        assert_int_equal(parent->kind, QUERY_AND);
        assert_int_not_equal(n->kids[0]->kind, QUERY_NOT);
        return check_node(n->kids[0], n, depth + 1);
    case QUERY_AND:
    case QUERY_OR: {
        bool positive = false;
        assert_true(n->n >= 2);
        for (size_t i = 0; i < n->n; i++) {
            const struct query_node *k = n->kids[i];
            assert_int_not_equal(k->kind, n->kind);
            if (k->kind != QUERY_NOT)
                positive = true;
            /* no duplicates: canonical texts differ */
            for (size_t j = 0; j < i; j++) {
                struct buf a = BUF_INIT, b = BUF_INIT;
                query_format(&a, k);
                query_format(&b, n->kids[j]);
                assert_string_not_equal(a.data, b.data);
                buf_release(&a);
                buf_release(&b);
            }
            terms += check_node(k, n, depth + 1);
        }
        assert_true(positive);
        return terms;
    }
    }
    fail_msg("unknown node kind %d", (int)n->kind);
    return 0;
}

static void check_tree(const struct query_node *root)
{
    assert_non_null(root);
    assert_int_not_equal(root->kind, QUERY_NOT);
    assert_true(check_node(root, NULL, 0) <= 2 * LIMIT_QUERY_TERMS);
}

/* The tree written back in the query language, minimal parentheses. */
static void to_query(struct buf *b, const struct query_node *n, const struct query_node *parent)
{
    switch (n->kind) {
    case QUERY_META:
        buf_printf(b, "%s\"%s\"", query_field_name(n->field), n->tokens[0]);
        return;
    case QUERY_WORD:
    case QUERY_PHRASE:
    case QUERY_NEAR:
        if (n->field == QUERY_FIELD_TITLE)
            buf_puts(b, "title:");
        if (n->kind != QUERY_WORD || n->exact)
            buf_putc(b, '"');
        for (size_t i = 0; i < n->n; i++)
            buf_printf(b, "%s%s", i ? " " : "", n->tokens[i]);
        if (n->kind != QUERY_WORD || n->exact)
            buf_putc(b, '"');
        if (n->kind == QUERY_NEAR)
            buf_printf(b, "~%u", n->distance);
        if (n->prefix)
            buf_putc(b, '*');
        return;
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

/* Parse q[0..len); on success *text is the canonical form (caller frees). */
static int parse(const char *q, size_t len, char **text, struct err *err)
{
    struct arena a;
    struct query_node *root = (struct query_node *)1;
    arena_init(&a, 0);
    err_clear(err);
    *text = NULL;
    int rc = query_parse(&a, q, len, &root, err);
    if (rc == 0) {
        check_tree(root);
        struct buf b = BUF_INIT;
        query_format(&b, root);
        assert_int_equal(buf_error(&b), 0);
        *text = buf_detach(&b, NULL);
    } else {
        assert_null(root);
        assert_int_equal(err->code, rc);
        assert_true(err->msg[0] != '\0');
    }
    arena_release(&a);
    return rc;
}

/* Printing a tree back as a query and parsing it again gives the same tree. */
static void check_round_trip(const char *q, size_t len)
{
    struct arena a;
    struct err err;
    struct query_node *root;
    arena_init(&a, 0);
    assert_int_equal(query_parse(&a, q, len, &root, &err), 0);
    struct buf again = BUF_INIT, canon = BUF_INIT;
    to_query(&again, root, NULL);
    query_format(&canon, root);
    char *text2 = NULL;
    int rc = parse(again.data, again.len, &text2, &err);
    if (rc != 0)
        fail_msg("reparse of '%s' failed: %s", again.data, err.msg);
    assert_string_equal(text2, canon.data);
    free(text2);
    buf_release(&again);
    buf_release(&canon);
    arena_release(&a);
}

/* ---- the conformance table --------------------------------------------- */

struct qcase {
    const char *q;
    size_t len;       /* 0: strlen(q) */
    const char *want; /* canonical text, or NULL when an error is expected */
    int rc;
    const char *msg; /* the message ends with this (ERR_INVALID: contains it) */
};

/* clang-format off */
#define OK(q, w) {q, 0, w, 0, NULL}
#define BAD(q, code, m) {q, 0, NULL, code, m}
/* clang-format on */

static const struct qcase cases[] = {
    /* words: folded, whole tokens, implicit AND, duplicates removed */
    OK("apple", "apple"),
    OK("Apple", "apple"),
    OK("APPLE", "apple"),
    OK("Café", "cafe"),
    OK("ÉCOLE école ecole", "ecole"),
    OK("naïve", "naive"),
    OK("apple banana", "(AND apple banana)"),
    OK("  apple   banana  ", "(AND apple banana)"),
    OK("apple\tbanana\ncherry\r\n", "(AND apple banana cherry)"),
    OK("apple\u3000banana", "(AND apple banana)"), /* U+3000 ideographic space */
    OK("apple\u00a0banana", "(AND apple banana)"), /* U+00A0 no-break space */
    OK("apple apple", "apple"),
    OK("Apple APPLE apple", "apple"),
    OK("a b a", "(AND a b)"),
    OK("5G covid19", "(AND 5g covid19)"),
    /* quoted: exact words and phrases */
    OK("\"big deal\"", "\"big deal\""),
    OK("\"Big   Deal\"", "\"big deal\""),
    OK("\"apple\"", "\"apple\""),
    OK("\"Café\"", "\"cafe\""),
    OK("\"apple\" apple", "(AND \"apple\" apple)"),
    OK("\"a b\" c", "(AND \"a b\" c)"),
    OK("\"a b\" \"A B\"", "\"a b\""),
    OK("\"a AND b\"", "\"a and b\""),
    OK("\"(a) OR -b\"", "\"a or b\""),
    OK("x\"a b\"y", "(AND x \"a b\" y)"),
    /* + and - */
    OK("+apple", "apple"),
    OK("+\"big deal\"", "\"big deal\""),
    OK("apple -banana", "(AND apple (NOT banana))"),
    OK("apple -\"big deal\"", "(AND apple (NOT \"big deal\"))"),
    OK("-banana apple", "(AND (NOT banana) apple)"),
    OK("+a -b +c", "(AND a (NOT b) c)"),
    OK("a -b -b", "(AND a (NOT b))"),
    OK("a -a", "(AND a (NOT a))"),
    OK("a -(b OR c)", "(AND a (NOT (OR b c)))"),
    OK("a +(b OR c)", "(AND a (OR b c))"),
    OK("a -(-b)", "(AND a b)"),
    OK("--a b", "(AND (NOT a) b)"), /* only the first '-' is an operator */
    OK("+-a b", "(AND a b)"),
    OK("a -OR", "(AND a (NOT or))"), /* after a prefix, OR is a word */
    /* a +/- inside a word is not an operator: the word is a phrase */
    OK("a-b", "\"a b\""),
    OK("a+b", "\"a b\""),
    OK("C++", "c"),
    OK("-a-b c", "(AND (NOT \"a b\") c)"),
    /* operators: upper case only */
    OK("a AND b", "(AND a b)"),
    OK("a OR b", "(OR a b)"),
    OK("a and b", "(AND a and b)"),
    OK("a or b", "(AND a or b)"),
    OK("not a", "(AND not a)"),
    OK("a Or b", "(AND a or b)"),
    OK("a AND b AND c", "(AND a b c)"),
    OK("a OR b OR c", "(OR a b c)"),
    OK("AND-b a", "(AND \"and b\" a)"),
    OK("a NOT(b)", "(AND a (NOT b))"),
    OK("a OR(b)c", "(OR a (AND b c))"),
    /* precedence NOT > AND > OR */
    OK("a OR b c", "(OR a (AND b c))"),
    OK("a b OR c", "(OR (AND a b) c)"),
    OK("a OR b AND c", "(OR a (AND b c))"),
    OK("a OR b NOT c", "(OR a (AND b (NOT c)))"),
    OK("a NOT b", "(AND a (NOT b))"),
    OK("a AND NOT b", "(AND a (NOT b))"),
    OK("NOT a b", "(AND (NOT a) b)"),
    OK("NOT a AND b", "(AND (NOT a) b)"),
    OK("a OR b OR NOT c d", "(OR a b (AND (NOT c) d))"),
    OK("a +b OR c", "(OR (AND a b) c)"),
    OK("a OR +b", "(OR a b)"),
    /* field terms (an extension): title:, source:, domain:, author: with the value at once */
    OK("title:apple", "title:apple"),
    OK("title:Apple banana", "(AND title:apple banana)"),
    OK("title:\"Big Deal\"", "title:\"big deal\""),
    OK("title:\"apple\"", "title:\"apple\""),
    OK("title:covid-19", "title:\"covid 19\""),
    OK("title:apple apple", "(AND title:apple apple)"),
    OK("title:apple title:apple", "title:apple"),
    OK("-title:a b", "(AND (NOT title:a) b)"),
    OK("(title:a OR b) c", "(AND (OR title:a b) c)"),
    OK("source:bbc-news", "source:bbc-news"),
    OK("source:\"bbc-news\"", "source:bbc-news"),
    OK("source:BBC-News", "source:BBC-News"), /* ids compared as the sources parameter does */
    OK("domain:BBC.co.uk", "domain:bbc.co.uk"),
    OK("domain:https://www.bbc.co.uk.", "domain:bbc.co.uk"),
    OK("a -source:bbc-news", "(AND a (NOT source:bbc-news))"),
    OK("source:a OR domain:b.com", "(OR source:a domain:b.com)"),
    OK("NOT domain:b.com a", "(AND (NOT domain:b.com) a)"),
    OK("source:a(b)", "(AND source:a b)"), /* a parenthesis ends the value */
    /* author: a name's words, folded, whatever the spacing and punctuation */
    OK("author:smith", "author:\"smith\""),
    OK("author:\"Jane  DOE\"", "author:\"jane doe\""),
    OK("author:\"Ivana Kottasová, CNN\"", "author:\"ivana kottasova cnn\""),
    OK("author:\"jane doe\" author:\"JANE DOE\"", "author:\"jane doe\""),
    OK("a -author:\"jane doe\"", "(AND a (NOT author:\"jane doe\"))"),
    OK("author:a OR title:b", "(OR author:\"a\" title:b)"),
    OK("author:o'brien", "author:\"o brien\""),
    BAD("author:\"!!\"", ERR_PARSE, "invalid author after author: at character 1"),
    BAD("a author:&", ERR_PARSE, "invalid author after author: at character 3"),
    BAD("author:\"a b\"~2", ERR_PARSE, "not author:, at character 1"),
    BAD("-author:a", ERR_INVALID, "only excludes"),
    BAD("author:\"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 "
        "w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41 w42 w43 "
        "w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59 w60 w61 w62 w63 w64\"",
        ERR_TOO_LARGE, "an author name of more than 64 words after author: at character 1"),
    /* ... and what stays as it was: not a field name, or no value at once */
    OK("title: apple", "(AND title apple)"),
    OK("title:(apple)", "(AND title apple)"),
    OK("title:", "title"),
    OK("Title:apple", "\"title apple\""), /* field names are lower case: a phrase as before */
    OK("foo:bar", "\"foo bar\""),
    OK("Author:smith", "\"author smith\""),
    OK("\"title:apple\"", "\"title apple\""),
    OK("xtitle:apple", "\"xtitle apple\""),
    OK("title:\"a\"b", "(AND title:\"a\" b)"),
    BAD("title:&", ERR_INVALID, "no searchable words"),
    BAD("a domain:.com", ERR_PARSE, "invalid domain after domain: at character 3"),
    BAD("a domain:x/y", ERR_PARSE, "invalid domain after domain: at character 3"),
    BAD("a source:\"b c\"", ERR_PARSE, "invalid source id after source: at character 3"),
    BAD("-source:a", ERR_INVALID, "only excludes"),
    BAD("a OR -domain:b.com", ERR_INVALID, "inside OR"),
    /* prefixes (an extension): a bare word ending in '*', one token before it */
    OK("app*", "app*"),
    OK("App* apple", "(AND app* apple)"),
    OK("app* app*", "app*"),
    OK("app* OR title:app*", "(OR app* title:app*)"),
    OK("-app* b", "(AND (NOT app*) b)"),
    OK("Café*", "cafe*"),
    OK("\"app*\"", "\"app\""), /* quoted: text, as before */
    OK("app**", "app"),        /* not one token then the star: as before */
    OK("covid-1*", "\"covid 1\""),
    OK("app-*", "app"),
    BAD("*", ERR_INVALID, "no searchable words"),
    OK("a *app", "(AND a app)"),
    BAD("-app*", ERR_INVALID, "only excludes"),
    /* proximity (an extension): a quote closed at once by ~N */
    OK("\"a b\"~3", "\"a b\"~3"),
    OK("\"B a\"~0", "\"b a\"~0"),
    OK("\"a b c\"~100", "\"a b c\"~100"),
    OK("\"a b\"~007", "\"a b\"~7"),
    OK("\"a b a\"~2", "\"a b\"~2"), /* a repeated word is one word of the window */
    OK("\"a a\"~2", "\"a\""),       /* one distinct word: that exact word */
    OK("\"a\"~3", "\"a\""),
    OK("\"covid-19 cases\"~4", "\"covid 19 cases\"~4"),
    OK("title:\"a b\"~3 c", "(AND title:\"a b\"~3 c)"),
    OK("-\"a b\"~3 c", "(AND (NOT \"a b\"~3) c)"),
    OK("(\"a b\"~3)", "\"a b\"~3"),
    OK("\"a b\"~3 OR \"a b\"~4 OR \"a b\"", "(OR \"a b\"~3 \"a b\"~4 \"a b\")"),
    OK("\"a b\"~3 \"a b\"~3", "\"a b\"~3"),
    OK("\"a b\"~3\"c d\"", "(AND \"a b\"~3 \"c d\")"),
    /* not a proximity: read as before, the '~' is punctuation */
    OK("\"a b\"~", "\"a b\""),
    OK("\"a b\"~x", "(AND \"a b\" x)"),
    OK("\"a b\"~2x", "(AND \"a b\" 2x)"),
    OK("\"a b\" ~2", "(AND \"a b\" 2)"),
    OK("\"a b\"~-2", "(AND \"a b\" 2)"),
    OK("a~2", "\"a 2\""), /* one word of two tokens: a phrase */
    OK("\"a~2 b\"", "\"a 2 b\""),
    BAD("\"a b\"~101", ERR_TOO_LARGE, "proximity distance above 100 at character 6"),
    BAD("x \"a b\"~99999999999999999999", ERR_TOO_LARGE, "above 100 at character 8"),
    BAD("source:\"a\"~2", ERR_PARSE, "not source:, at character 1"),
    BAD("-\"a b\"~3", ERR_INVALID, "only excludes"),
    BAD("\"&\"~3", ERR_INVALID, "no searchable words"),
    BAD("\"a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7\"~1", ERR_TOO_LARGE,
        "proximity of more than 32 distinct words at character 1"),
    /* grouping */
    OK("(a OR b) c", "(AND (OR a b) c)"),
    OK("(a OR b) AND (c OR d)", "(AND (OR a b) (OR c d))"),
    OK("((a))", "a"),
    OK("(a b) c", "(AND a b c)"),
    OK("(a OR b) OR c", "(OR a b c)"),
    OK("a OR (b OR c)", "(OR a b c)"),
    OK("a OR a", "a"),
    OK("(a OR b) (b OR a)", "(AND (OR a b) (OR b a))"),
    OK("(a OR b) (a OR b)", "(OR a b)"),
    OK("a (-b) c", "(AND a (NOT b) c)"),
    OK("a (-b -c)", "(AND a (NOT b) (NOT c))"),
    OK("a OR (b -c)", "(OR a (AND b (NOT c)))"),
    OK("(-a b) OR c", "(OR (AND (NOT a) b) c)"),
    OK("a NOT (b OR c)", "(AND a (NOT (OR b c)))"),
    OK("(a OR (b (c OR d)))", "(OR a (AND b (OR c d)))"),
    /* double negation */
    OK("NOT NOT a", "a"),
    OK("NOT -a", "a"),
    OK("a NOT (NOT b)", "(AND a b)"),
    OK("a -(-b -c)", "(AND a (OR b c))"),
    OK("-(-a -b)", "(OR a b)"),
    /* operands without any token are dropped */
    OK("a & b", "(AND a b)"),
    OK("a AND & AND b", "(AND a b)"),
    OK("a OR &", "a"),
    OK("& OR a", "a"),
    OK("a -&", "a"),
    OK("a \xe2\x80\x94 b", "(AND a b)"), /* em dash */
    OK("(&) a", "a"),
    OK("\"&\" a", "a"),
    OK("a \xf0\x9f\x98\x80", "a"), /* emoji */
    /* tokens: apostrophes and hyphens split, CJK bigrams, other scripts */
    OK("Trump's", "\"trump s\""),
    OK("Trump\xe2\x80\x99s", "\"trump s\""), /* U+2019 */
    OK("covid-19", "\"covid 19\""),
    OK("e-mail OR email", "(OR \"e mail\" email)"),
    OK("l'économie", "\"l economie\""),
    OK("U.S.", "\"u s\""),
    OK("東京", "東京"),
    OK("東京都", "\"東京 京都\""),
    OK("\"東京都\"", "\"東京 京都\""),
    OK("東", "東"),
    OK("\"東\"", "\"東\""),
    OK("서울 부산", "(AND 서울 부산)"),
    OK("東京 OR 大阪", "(OR 東京 大阪)"),
    OK("Москва", "москва"),
    OK("Αθήνα", "αθηνα"),
    OK("Straße", "strasse"),
    OK("rock & roll", "(AND rock roll)"),
    OK("rock and roll", "(AND rock and roll)"),
    OK("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3", "abc"), /* fullwidth ＡＢＣ, NFKC */
    /* bytes that are not text */
    {"a\0b", 3, "\"a b\"", 0, NULL},
    {"a\xff\x62", 0, "\"a b\"", 0, NULL},
    /* malformed: ERR_PARSE with the position */
    BAD("(a", ERR_PARSE, "unbalanced parenthesis at character 1"),
    BAD("a)", ERR_PARSE, "unbalanced parenthesis at character 2"),
    BAD("(a OR b))", ERR_PARSE, "unbalanced parenthesis at character 9"),
    BAD("((a)", ERR_PARSE, "unbalanced parenthesis at character 1"),
    BAD("a (b (c)", ERR_PARSE, "unbalanced parenthesis at character 3"),
    BAD(")", ERR_PARSE, "unbalanced parenthesis at character 1"),
    BAD("\"a", ERR_PARSE, "unbalanced quote at character 1"),
    BAD("a \"b c", ERR_PARSE, "unbalanced quote at character 3"),
    BAD("a \"b\" \"c", ERR_PARSE, "unbalanced quote at character 7"),
    BAD("a AND", ERR_PARSE, "missing word after AND at character 3"),
    BAD("OR b", ERR_PARSE, "missing word before OR at character 1"),
    BAD("AND b", ERR_PARSE, "missing word before AND at character 1"),
    BAD("a OR OR b", ERR_PARSE, "missing word after OR at character 3"),
    BAD("a AND OR b", ERR_PARSE, "missing word after AND at character 3"),
    BAD("a OR", ERR_PARSE, "missing word after OR at character 3"),
    BAD("NOT", ERR_PARSE, "missing word after NOT at character 1"),
    BAD("a NOT", ERR_PARSE, "missing word after NOT at character 3"),
    BAD("NOT AND a", ERR_PARSE, "missing word after NOT at character 1"),
    BAD("a AND )", ERR_PARSE, "missing word after AND at character 3"),
    BAD("+", ERR_PARSE, "missing word after '+' at character 1"),
    BAD("-", ERR_PARSE, "missing word after '-' at character 1"),
    BAD("a - b", ERR_PARSE, "missing word after '-' at character 3"),
    BAD("a + b", ERR_PARSE, "missing word after '+' at character 3"),
    BAD("(a -)", ERR_PARSE, "missing word after '-' at character 4"),
    BAD("()", ERR_PARSE, "empty group at character 1"),
    BAD("a ()", ERR_PARSE, "empty group at character 3"),
    BAD("a ( )", ERR_PARSE, "empty group at character 3"),
    BAD("\"\"", ERR_PARSE, "empty phrase at character 1"),
    BAD("a \" \"", ERR_PARSE, "empty phrase at character 3"),
    BAD("(OR a)", ERR_PARSE, "missing word before OR at character 2"),
    BAD("a (AND b)", ERR_PARSE, "missing word before AND at character 4"),
    /* positions count code points, not bytes */
    BAD("café (", ERR_PARSE, "unbalanced parenthesis at character 6"),
    BAD("東京 AND", ERR_PARSE, "missing word after AND at character 4"),
    BAD("ü \"x", ERR_PARSE, "unbalanced quote at character 3"),
    BAD("\xf0\x9f\x98\x80 )", ERR_PARSE, "unbalanced parenthesis at character 3"),
    BAD("\xff a)", ERR_PARSE, "unbalanced parenthesis at character 4"),
    BAD("a\xe3\x80\x80)", ERR_PARSE, "unbalanced parenthesis at character 3"),
    {"a\0b )", 5, NULL, ERR_PARSE, "unbalanced parenthesis at character 5"},
    /* syntax errors win over semantic ones, wherever they are */
    BAD("a OR -b (c", ERR_PARSE, "unbalanced parenthesis at character 9"),
    BAD("(a OR -b) \"c", ERR_PARSE, "unbalanced quote at character 11"),
    /* queries that only exclude, exclusions inside OR */
    BAD("-a", ERR_INVALID, "only excludes"),
    BAD("NOT a", ERR_INVALID, "only excludes"),
    BAD("-a -b", ERR_INVALID, "only excludes"),
    BAD("NOT a NOT b", ERR_INVALID, "only excludes"),
    BAD("(-a)", ERR_INVALID, "only excludes"),
    BAD("NOT NOT NOT a", ERR_INVALID, "only excludes"),
    BAD("-a -&", ERR_INVALID, "only excludes"),
    BAD("a OR -b", ERR_INVALID, "exclusion (NOT or -) inside OR at character 6"),
    BAD("a OR NOT b", ERR_INVALID, "inside OR at character 6"),
    BAD("(NOT a) OR b", ERR_INVALID, "inside OR at character 2"),
    BAD("-a OR b", ERR_INVALID, "inside OR at character 1"),
    BAD("(-a -b) OR c", ERR_INVALID, "inside OR at character 1"),
    BAD("NOT (a OR -b) c", ERR_INVALID, "inside OR at character 11"),
    BAD("-a OR -a", ERR_INVALID, "inside OR at character 1"),
    BAD("NOT a OR b c", ERR_INVALID, "inside OR at character 1"),
    /* nothing to search for */
    BAD("", ERR_INVALID, "no searchable words"),
    BAD("   ", ERR_INVALID, "no searchable words"),
    BAD("&", ERR_INVALID, "no searchable words"),
    BAD("-&", ERR_INVALID, "no searchable words"),
    BAD("\"?!\"", ERR_INVALID, "no searchable words"),
    BAD("& OR (!)", ERR_INVALID, "no searchable words"),
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static void every_query_of_the_table_gives_its_tree_or_its_error(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct qcase *c = &cases[i];
        size_t len = c->len ? c->len : strlen(c->q);
        struct err err;
        char *text = NULL;
        int rc = parse(c->q, len, &text, &err);
        if (rc != c->rc) {
            print_error("case %zu '%s': rc %s (%s), want %s\n", i, c->q, err_name(rc),
                        rc ? err.msg : text, err_name(c->rc));
            failures++;
        } else if (rc == 0 && strcmp(text, c->want)) {
            print_error("case %zu '%s': got %s, want %s\n", i, c->q, text, c->want);
            failures++;
        } else if (rc != 0 &&
                   (rc == ERR_INVALID ? !strstr(err.msg, c->msg) : !ends_with(err.msg, c->msg))) {
            print_error("case %zu '%s': message '%s' does not match '%s'\n", i, c->q, err.msg,
                        c->msg);
            failures++;
        }
        if (rc == 0)
            check_round_trip(c->q, len);
        free(text);
    }
    assert_int_equal(failures, 0);
}

static void malformed_query_messages_end_with_a_position(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct qcase *c = &cases[i];
        if (c->rc != ERR_PARSE)
            continue;
        struct err err;
        char *text;
        assert_int_equal(parse(c->q, c->len ? c->len : strlen(c->q), &text, &err), ERR_PARSE);
        const char *at = strstr(err.msg, " at character ");
        assert_non_null(at);
        at += strlen(" at character ");
        assert_true(*at >= '1' && *at <= '9');
        assert_int_equal(strspn(at, "0123456789"), strlen(at));
    }
}

/* ---- limits -------------------------------------------------------------- */

static void nesting_is_limited_to_the_query_depth(void **state)
{
    (void)state;
    char q[256];
    char *text;
    struct err err;
    for (int depth = LIMIT_QUERY_DEPTH; depth <= LIMIT_QUERY_DEPTH + 1; depth++) {
        size_t n = 0;
        for (int i = 0; i < depth; i++)
            q[n++] = '(';
        q[n++] = 'a';
        for (int i = 0; i < depth; i++)
            q[n++] = ')';
        int rc = parse(q, n, &text, &err);
        if (depth == LIMIT_QUERY_DEPTH) {
            assert_int_equal(rc, 0);
            assert_string_equal(text, "a");
            free(text);
        } else {
            assert_int_equal(rc, ERR_TOO_LARGE);
            char want[64];
            snprintf(want, sizeof want, "at character %d", LIMIT_QUERY_DEPTH + 1);
            assert_true(ends_with(err.msg, want));
        }
    }
    /* NOT and - count as a level each: 16 NOTs cancel out, 17 are too deep */
    for (int depth = LIMIT_QUERY_DEPTH; depth <= LIMIT_QUERY_DEPTH + 1; depth++) {
        size_t n = 0;
        for (int i = 0; i < depth; i++)
            n += (size_t)snprintf(q + n, sizeof q - n, "NOT ");
        n += (size_t)snprintf(q + n, sizeof q - n, "a b");
        int rc = parse(q, n, &text, &err);
        if (depth == LIMIT_QUERY_DEPTH) {
            assert_int_equal(rc, 0);
            assert_string_equal(text, "(AND a b)");
            free(text);
        } else {
            assert_int_equal(rc, ERR_TOO_LARGE);
            char want[64];
            snprintf(want, sizeof want, "at character %d", 4 * LIMIT_QUERY_DEPTH + 1);
            assert_true(ends_with(err.msg, want));
        }
    }
    /* mixed -( levels */
    size_t n = 0;
    n += (size_t)snprintf(q + n, sizeof q - n, "x ");
    for (int i = 0; i < LIMIT_QUERY_DEPTH / 2 + 1; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "-(");
    q[n++] = 'a';
    for (int i = 0; i < LIMIT_QUERY_DEPTH / 2 + 1; i++)
        q[n++] = ')';
    assert_int_equal(parse(q, n, &text, &err), ERR_TOO_LARGE);
}

static void a_deep_run_of_parentheses_fails_cleanly(void **state)
{
    (void)state;
    /* far beyond the depth: no stack exhaustion, one clean error */
    size_t n = 100000;
    char *q = malloc(n);
    assert_non_null(q);
    memset(q, '(', n);
    char *text;
    struct err err;
    assert_int_equal(parse(q, n, &text, &err), ERR_TOO_LARGE);
    memset(q, '-', n);
    q[n - 1] = 'a';
    assert_int_equal(parse(q, n, &text, &err), ERR_INVALID); /* --…-a: one exclusion */
    for (size_t i = 0; i + 4 <= n; i += 4)
        memcpy(q + i, "NOT ", 4);
    assert_int_equal(parse(q, n, &text, &err), ERR_TOO_LARGE);
    free(q);
}

static void words_and_phrases_are_limited_in_number(void **state)
{
    (void)state;
    static char q[16384];
    char *text;
    struct err err;
    for (int terms = LIMIT_QUERY_TERMS; terms <= LIMIT_QUERY_TERMS + 1; terms++) {
        /* every other term is a phrase "x wN"; "&" operands are dropped */
        size_t n = 0;
        for (int i = 0; i < terms; i++)
            n += (size_t)snprintf(q + n, sizeof q - n, i % 2 ? "w%d & " : "\"x w%d\" ", i);
        int rc = parse(q, n, &text, &err);
        if (terms == LIMIT_QUERY_TERMS) {
            assert_int_equal(rc, 0);
            free(text);
        } else {
            assert_int_equal(rc, ERR_TOO_LARGE);
            assert_non_null(strstr(err.msg, "words and phrases"));
            /* the term past the limit is the last one written */
            char last[32], want[64];
            snprintf(last, sizeof last, "\"x w%d\" ", LIMIT_QUERY_TERMS);
            snprintf(want, sizeof want, "at character %d", (int)(n - strlen(last) + 1));
            assert_true(ends_with(err.msg, want));
        }
    }
    /* dropped operands do not count */
    size_t n = 0;
    for (int i = 0; i < 3 * LIMIT_QUERY_TERMS; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "& ");
    n += (size_t)snprintf(q + n, sizeof q - n, "a");
    assert_int_equal(parse(q, n, &text, &err), 0);
    assert_string_equal(text, "a");
    free(text);
}

static void phrases_are_limited_in_tokens(void **state)
{
    (void)state;
    static char q[16384];
    char *text;
    struct err err;
    for (int quoted = 0; quoted < 2; quoted++) {
        for (int toks = LIMIT_PHRASE_TOKENS; toks <= LIMIT_PHRASE_TOKENS + 1; toks++) {
            size_t n = 0;
            n += (size_t)snprintf(q + n, sizeof q - n, "ok %s", quoted ? "\"" : "");
            for (int i = 0; i < toks; i++)
                n += (size_t)snprintf(q + n, sizeof q - n, quoted ? "t%d " : "t%d-", i);
            n--; /* drop the last separator */
            if (quoted)
                q[n++] = '"';
            int rc = parse(q, n, &text, &err);
            if (toks == LIMIT_PHRASE_TOKENS) {
                assert_int_equal(rc, 0);
                free(text);
            } else {
                assert_int_equal(rc, ERR_TOO_LARGE);
                assert_true(ends_with(err.msg, "at character 4"));
            }
        }
    }
    /* a CJK run of 34 characters gives 33 bigrams */
    size_t n = 0;
    for (int i = 0; i < LIMIT_PHRASE_TOKENS + 2; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "%s", i % 2 ? "京" : "東");
    assert_int_equal(parse(q, n, &text, &err), ERR_TOO_LARGE);
    n = 0;
    for (int i = 0; i < LIMIT_PHRASE_TOKENS + 1; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "%s", i % 2 ? "京" : "東");
    assert_int_equal(parse(q, n, &text, &err), 0);
    free(text);
}

/* ---- tree details and query_and ----------------------------------------- */

static void nodes_carry_kind_flags_tokens_and_positions(void **state)
{
    (void)state;
    struct arena a;
    struct err err;
    struct query_node *r;
    arena_init(&a, 0);
    const char *q = "été  \"Big Deal\" -\"x\" covid-19";
    assert_int_equal(query_parse(&a, q, strlen(q), &r, &err), 0);
    assert_int_equal(r->kind, QUERY_AND);
    assert_int_equal(r->n, 4);
    assert_int_equal(r->kids[0]->kind, QUERY_WORD);
    assert_false(r->kids[0]->exact);
    assert_string_equal(r->kids[0]->tokens[0], "ete");
    assert_int_equal(r->kids[0]->pos, 1);
    assert_int_equal(r->kids[1]->kind, QUERY_PHRASE);
    assert_int_equal(r->kids[1]->n, 2);
    assert_string_equal(r->kids[1]->tokens[1], "deal");
    assert_int_equal(r->kids[1]->pos, 6);
    assert_int_equal(r->kids[2]->kind, QUERY_NOT);
    assert_int_equal(r->kids[2]->pos, 17);
    assert_int_equal(r->kids[2]->kids[0]->kind, QUERY_WORD);
    assert_true(r->kids[2]->kids[0]->exact);
    assert_int_equal(r->kids[2]->kids[0]->pos, 18);
    assert_int_equal(r->kids[3]->kind, QUERY_PHRASE);
    assert_int_equal(r->kids[3]->pos, 22);
    arena_release(&a);
}

static char *fmt(const struct query_node *n)
{
    struct buf b = BUF_INIT;
    query_format(&b, n);
    return buf_detach(&b, NULL);
}

static struct query_node *must_parse(struct arena *a, const char *q)
{
    struct query_node *r;
    struct err err;
    assert_int_equal(query_parse(a, q, strlen(q), &r, &err), 0);
    return r;
}

static void query_and_joins_two_trees_in_normal_form(void **state)
{
    (void)state;
    static const struct {
        const char *x, *y, *want;
    } t[] = {
        {"a", "b", "(AND a b)"},
        {"a", "A", "a"},
        {"a b", "b c", "(AND a b c)"},
        {"a OR b", "c", "(AND (OR a b) c)"},
        {"a OR b", "b OR a", "(AND (OR a b) (OR b a))"},
        {"a OR b", "a OR b", "(OR a b)"},
        {"a -b", "c -b", "(AND a (NOT b) c)"},
        {"\"a b\"", "a-b", "\"a b\""},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct arena a;
        arena_init(&a, 0);
        struct query_node *r = query_and(&a, must_parse(&a, t[i].x), must_parse(&a, t[i].y));
        check_tree(r);
        char *s = fmt(r);
        assert_string_equal(s, t[i].want);
        free(s);
        arena_release(&a);
    }
    struct arena a;
    arena_init(&a, 0);
    struct query_node *x = must_parse(&a, "x");
    assert_null(query_and(&a, NULL, NULL));
    assert_ptr_equal(query_and(&a, x, NULL), x);
    assert_ptr_equal(query_and(&a, NULL, x), x);
    arena_release(&a);
}

/* query_parse_all over vals[0..n), its canonical text into *text (malloc'd). */
static int parse_all(const char *const *vals, size_t n, char **text, size_t *bad, struct err *err)
{
    struct arena a;
    struct query_node *r = NULL;
    size_t lens[600];
    assert_true(n <= sizeof lens / sizeof lens[0]);
    for (size_t i = 0; i < n; i++)
        lens[i] = strlen(vals[i]);
    arena_init(&a, 0);
    err_clear(err);
    int rc = query_parse_all(&a, vals, lens, n, &r, bad, err);
    *text = NULL;
    if (rc == 0 && r) {
        check_tree(r);
        *text = fmt(r);
    }
    arena_release(&a);
    return rc;
}

static void the_values_of_a_repeated_q_are_one_query(void **state)
{
    (void)state;
    static const struct {
        const char *v[4];
        size_t n;
        const char *want;
    } t[] = {
        {{"a"}, 1, "a"},
        {{"a", "b"}, 2, "(AND a b)"},
        {{"a b", "b c", "c"}, 3, "(AND a b c)"},
        {{"a OR b", "c", "a OR b"}, 3, "(AND (OR a b) c)"},
        {{"a -b", "c -b", "-d e"}, 3, "(AND a (NOT b) c (NOT d) e)"},
        {{"\"a b\"", "a-b"}, 2, "\"a b\""},
        {{"&", "a"}, 2, NULL}, /* each value must hold a word of its own */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char *text;
        size_t bad = 99;
        struct err err;
        int rc = parse_all(t[i].v, t[i].n, &text, &bad, &err);
        if (!t[i].want) {
            assert_int_equal(rc, ERR_INVALID);
            assert_int_equal(bad, 0);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_string_equal(text, t[i].want);
        free(text);
    }
    /* no values: no tree */
    struct arena a;
    struct query_node *r = (struct query_node *)&a;
    size_t bad;
    arena_init(&a, 0);
    assert_int_equal(query_parse_all(&a, NULL, NULL, 0, &r, &bad, NULL), 0);
    assert_null(r);
    arena_release(&a);
}

static void an_error_names_the_value_at_fault(void **state)
{
    (void)state;
    static const char *const v[] = {"a", "b OR", "(c"};
    char *text;
    size_t bad;
    struct err err;
    assert_int_equal(parse_all(v, 3, &text, &bad, &err), ERR_PARSE);
    assert_int_equal(bad, 1);
    assert_true(ends_with(err.msg, "at character 3"));
    static const char *const w[] = {"a", "b", "-c"};
    assert_int_equal(parse_all(w, 3, &text, &bad, &err), ERR_INVALID);
    assert_int_equal(bad, 2);
}

/* 500 characters hold 250 words in one value but 500 one-letter values:
 * LIMIT_QUERY_TERMS counts them all, however they are split. */
static void the_term_limit_holds_across_values(void **state)
{
    (void)state;
    static const char *const abc[] = {"a", "b", "c", "d", "e", "f", "g"};
    const char *v[LIMIT_QUERY_TERMS + 1];
    char *text;
    size_t bad;
    struct err err;
    for (size_t i = 0; i <= LIMIT_QUERY_TERMS; i++)
        v[i] = abc[i % 7];
    assert_int_equal(parse_all(v, LIMIT_QUERY_TERMS, &text, &bad, &err), 0);
    assert_string_equal(text, "(AND a b c d e f g)");
    free(text);
    assert_int_equal(parse_all(v, LIMIT_QUERY_TERMS + 1, &text, &bad, &err), ERR_TOO_LARGE);
    assert_int_equal(bad, LIMIT_QUERY_TERMS);
    assert_non_null(strstr(err.msg, "words and phrases"));
    /* split unevenly: 200 words in one value, 57 in others */
    static char big[1024];
    size_t n = 0;
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s ", abc[i % 7]);
    const char *w[58];
    w[0] = big;
    for (size_t i = 1; i < 58; i++)
        w[i] = "z";
    assert_int_equal(parse_all(w, 57, &text, &bad, &err), 0);
    free(text);
    assert_int_equal(parse_all(w, 58, &text, &bad, &err), ERR_TOO_LARGE);
    assert_int_equal(bad, 57);
}

/* Long lists are deduplicated through a hash table: the same tree as the
 * pairwise query_and, children once each in first-seen order, for lists
 * long past the scanned length and with duplicates of every shape. */
static void long_lists_keep_first_of_each_child_in_order(void **state)
{
    (void)state;
    enum { N = 150 }; /* 40 distinct values, each 3.75 times; 225 terms */
    static char words[N][16];
    const char *v[N];
    struct arena a;
    struct err err;
    size_t lens[N], bad;
    struct query_node *all = NULL, *folded = NULL;
    arena_init(&a, 0);
    for (size_t i = 0; i < N; i++) {
        /* 40 distinct values: words, exact words, phrases, OR groups */
        size_t k = (i * 7) % 40;
        snprintf(words[i], sizeof words[i],
                 k % 4 == 0   ? "w%zu"
                 : k % 4 == 1 ? "\"w%zu\""
                 : k % 4 == 2 ? "w%zu-x"
                              : "(w%zu OR y)",
                 k);
        v[i] = words[i];
        lens[i] = strlen(v[i]);
        folded = query_and(&a, folded, must_parse(&a, v[i]));
    }
    assert_int_equal(query_parse_all(&a, v, lens, N, &all, &bad, &err), 0);
    check_tree(all);
    assert_int_equal(all->kind, QUERY_AND);
    /* each of the 40 distinct values kept once */
    assert_int_equal(all->n, 40);
    char *x = fmt(all), *y = fmt(folded);
    assert_string_equal(x, y);
    free(x);
    free(y);
    /* and a tree joined with itself is itself */
    char *z = fmt(query_and(&a, all, all));
    x = fmt(all);
    assert_string_equal(z, x);
    free(x);
    free(z);
    arena_release(&a);
}

static void query_parse_all_fails_cleanly_out_of_memory(void **state)
{
    (void)state;
    static const char *const v[] = {"a b", "c OR d", "\"e f\"", "a", "g", "h", "i", "j",
                                    "k",   "l",      "m",       "n", "o", "p", "q"};
    size_t lens[15], bad;
    for (size_t i = 0; i < 15; i++)
        lens[i] = strlen(v[i]);
    bool done = false;
    for (size_t limit = 8; !done && limit < 1 << 20; limit += 8) {
        struct arena a;
        struct query_node *r = NULL;
        struct err err;
        arena_init(&a, limit);
        err_clear(&err);
        int rc = query_parse_all(&a, v, lens, 15, &r, &bad, &err);
        if (rc == ERR_NOMEM) {
            assert_int_equal(err.code, ERR_NOMEM);
        } else {
            assert_int_equal(rc, 0);
            check_tree(r);
            assert_int_equal(r->n, 15); /* "a" once */
            done = true;
        }
        arena_release(&a);
    }
    assert_true(done);
}

static void errors_are_returned_without_an_err_to_fill(void **state)
{
    (void)state;
    struct arena a;
    struct query_node *r;
    arena_init(&a, 0);
    assert_int_equal(query_parse(&a, "(a", 2, &r, NULL), ERR_PARSE);
    assert_int_equal(query_parse(&a, "-a", 2, &r, NULL), ERR_INVALID);
    assert_int_equal(query_parse(&a, "a OR -b", 7, &r, NULL), ERR_INVALID);
    assert_int_equal(query_parse(&a, "a b", 3, &r, NULL), 0);
    arena_release(&a);
    arena_init(&a, 1);
    assert_int_equal(query_parse(&a, "a b", 3, &r, NULL), ERR_NOMEM);
    arena_release(&a);
}

static void query_and_returns_null_when_out_of_memory(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct query_node *x = must_parse(&a, "a b"), *y = must_parse(&a, "c");
    a.limit = a.used + 1; /* nothing more fits */
    assert_null(query_and(&a, x, y));
    arena_release(&a);
}

static void query_format_prints_nothing_for_no_tree(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    query_format(&b, NULL);
    assert_int_equal(b.len, 0);
    assert_int_equal(buf_error(&b), 0);
    buf_release(&b);
}

/* query_and_split: what the backends plan an AND from. The required
 * children and the NOT operands keep the query's order; a tree built by
 * hand with a bare NOT, an empty NOT or only exclusions is refused. */
static void an_and_splits_into_required_and_excluded_children(void **state)
{
    (void)state;
    struct arena a;
    struct err err;
    struct query_node *r;
    struct query_and_parts parts;
    arena_init(&a, 0);
    const char *q = "a -b c NOT (d OR e)";
    assert_int_equal(query_parse(&a, q, strlen(q), &r, &err), 0);
    assert_int_equal(r->kind, QUERY_AND);
    assert_int_equal(query_and_split(&a, r, &parts, &err), 0);
    assert_int_equal(parts.n_pos, 2);
    assert_string_equal(parts.pos[0]->tokens[0], "a");
    assert_string_equal(parts.pos[1]->tokens[0], "c");
    assert_int_equal(parts.n_neg, 2);
    assert_string_equal(parts.neg[0]->tokens[0], "b");
    assert_int_equal(parts.neg[1]->kind, QUERY_OR);

    struct query_node *only_not[] = {r->kids[1]};
    struct query_node excluding = {.kind = QUERY_AND, .n = 1, .kids = only_not};
    assert_int_equal(query_and_split(&a, &excluding, &parts, &err), ERR_INVALID);
    assert_string_equal(err.msg, "a query cannot only exclude");

    struct query_node empty_not = {.kind = QUERY_NOT};
    struct query_node *bad_kids[] = {r->kids[0], &empty_not};
    struct query_node bad = {.kind = QUERY_AND, .n = 2, .kids = bad_kids};
    assert_int_equal(query_and_split(&a, &bad, &parts, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query tree");
    bad_kids[1] = NULL;
    assert_int_equal(query_and_split(&a, &bad, &parts, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query tree");
    arena_release(&a);
}

/* query_node_check: the shape both backends rely on, one node at a time,
 * with the messages a client sees when a stored tree is damaged. */
static void a_node_is_checked_for_the_shape_the_backends_rely_on(void **state)
{
    (void)state;
    struct arena a;
    struct err err;
    struct query_node *r;
    arena_init(&a, 0);
    const char *q = "a OR \"b c\"";
    assert_int_equal(query_parse(&a, q, strlen(q), &r, &err), 0);
    assert_int_equal(query_node_check(r, 0, &err), 0);
    assert_int_equal(query_node_check(r->kids[1], 1, &err), 0);
    assert_int_equal(query_node_check(r, 4 * LIMIT_QUERY_DEPTH, &err), 0);
    assert_int_equal(query_node_check(r, 4 * LIMIT_QUERY_DEPTH + 1, &err), ERR_TOO_LARGE);
    assert_string_equal(err.msg, "query nested too deeply");
    assert_int_equal(query_node_check(NULL, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query tree");

    char empty[] = "", *no_tokens[] = {empty};
    struct query_node word = {.kind = QUERY_WORD, .n = 1, .tokens = no_tokens};
    assert_int_equal(query_node_check(&word, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query word");
    char b[] = "b", *gap[] = {b, NULL};
    struct query_node phrase = {.kind = QUERY_PHRASE, .n = 2, .tokens = gap};
    assert_int_equal(query_node_check(&phrase, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query phrase");
    struct query_node not_node = {.kind = QUERY_NOT, .n = 1, .kids = &r};
    assert_int_equal(query_node_check(&not_node, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "a query cannot only exclude");
    struct query_node *kids[] = {r->kids[0], &not_node};
    struct query_node or_node = {.kind = QUERY_OR, .n = 2, .kids = kids};
    assert_int_equal(query_node_check(&or_node, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "an exclusion cannot be inside OR");
    struct query_node and_node = {.kind = QUERY_AND, .n = 2, .kids = kids};
    assert_int_equal(query_node_check(&and_node, 0, &err), 0); /* its NOT is split off */
    and_node.kids = NULL;
    assert_int_equal(query_node_check(&and_node, 0, &err), ERR_INVALID);
    assert_string_equal(err.msg, "malformed query tree");
    arena_release(&a);
}

/* ---- hostile input --------------------------------------------------------- */

static const char *const split_queries[] = {
    "(apple OR \"big deal\") -banana NOT (c d)",
    "東京都 OR \"l'économie\" +Trump's",
    "a OR -b",
    "((a OR b) AND NOT (c OR -(-d -e)))",
    "x\"a b\"y (&) — covid-19 \xe3\x80\x80 Ωμέγα",
    "NOT NOT a AND \"\xf0\x9f\x98\x80 x\" \xff\xfe",
};

/* Every prefix and suffix, each in a buffer of exactly its size so ASan sees
 * a read past the end: a clean answer each time, a valid tree on success. */
static void every_prefix_and_suffix_parses_cleanly(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof split_queries / sizeof split_queries[0]; i++) {
        const char *q = split_queries[i];
        size_t len = strlen(q);
        for (size_t cut = 0; cut <= len; cut++) {
            for (int side = 0; side < 2; side++) {
                size_t n = side ? len - cut : cut;
                char *copy = malloc(n ? n : 1);
                assert_non_null(copy);
                memcpy(copy, side ? q + cut : q, n);
                struct err err;
                char *text;
                int rc = parse(copy, n, &text, &err);
                assert_true(rc == 0 || rc == ERR_PARSE || rc == ERR_INVALID);
                if (rc == 0)
                    check_round_trip(copy, n);
                free(text);
                free(copy);
            }
        }
    }
}

/* A ceiling growing from 0: each failure is a clean ERR_NOMEM, and the first
 * success gives the same tree as an unbounded arena. */
static void allocation_failure_at_any_point_is_a_clean_nomem(void **state)
{
    (void)state;
    static const char *const qs[] = {
        "apple",
        "(apple OR \"big deal\") -banana NOT (c d) x-y",
        "東京都 OR \"l'économie\" +Trump's a b c d e f g h",
        "x -(-a -b) (c OR d OR e OR f) g",
        "a OR -b",
        "(a OR b",
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        struct err err;
        char *want = NULL;
        int want_rc = parse(qs[i], strlen(qs[i]), &want, &err);
        bool done = false;
        for (size_t limit = 0; !done && limit < 1 << 20; limit += 8) {
            struct arena a;
            struct query_node *r = NULL;
            arena_init(&a, limit ? limit : 1);
            err_clear(&err);
            int rc = query_parse(&a, qs[i], strlen(qs[i]), &r, &err);
            if (rc == ERR_NOMEM) {
                assert_null(r);
                assert_int_equal(err.code, ERR_NOMEM);
            } else {
                assert_int_equal(rc, want_rc);
                if (rc == 0) {
                    check_tree(r);
                    char *s = fmt(r);
                    assert_string_equal(s, want);
                    free(s);
                }
                done = true;
            }
            arena_release(&a);
        }
        assert_true(done);
        free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_query_of_the_table_gives_its_tree_or_its_error),
        cmocka_unit_test(malformed_query_messages_end_with_a_position),
        cmocka_unit_test(nesting_is_limited_to_the_query_depth),
        cmocka_unit_test(a_deep_run_of_parentheses_fails_cleanly),
        cmocka_unit_test(words_and_phrases_are_limited_in_number),
        cmocka_unit_test(phrases_are_limited_in_tokens),
        cmocka_unit_test(nodes_carry_kind_flags_tokens_and_positions),
        cmocka_unit_test(query_and_joins_two_trees_in_normal_form),
        cmocka_unit_test(the_values_of_a_repeated_q_are_one_query),
        cmocka_unit_test(an_error_names_the_value_at_fault),
        cmocka_unit_test(the_term_limit_holds_across_values),
        cmocka_unit_test(long_lists_keep_first_of_each_child_in_order),
        cmocka_unit_test(query_parse_all_fails_cleanly_out_of_memory),
        cmocka_unit_test(errors_are_returned_without_an_err_to_fill),
        cmocka_unit_test(query_and_returns_null_when_out_of_memory),
        cmocka_unit_test(query_format_prints_nothing_for_no_tree),
        cmocka_unit_test(an_and_splits_into_required_and_excluded_children),
        cmocka_unit_test(a_node_is_checked_for_the_shape_the_backends_rely_on),
        cmocka_unit_test(every_prefix_and_suffix_parses_cleanly),
        cmocka_unit_test(allocation_failure_at_any_point_is_a_clean_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
