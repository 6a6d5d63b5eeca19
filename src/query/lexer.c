/* Lexer of the query language (query/internal.h): splits q into bare words,
 * quoted phrases, parentheses and the operators AND OR NOT + -.
 * A word ends at white space, '"', '(' or ')'; AND, OR and NOT are operators
 * only as whole upper-case words; '+' and '-' only as the first character
 * of a word. Any bytes are accepted: invalid UTF-8 and NULs are word text,
 * which the tokenizer of text/ later treats as separators. */
#include "query/internal.h"

#include <stdint.h>
#include <string.h>

#include "util/limits.h"
#include "util/utf8.h"

#include "util/banned.h"

#define CP_INVALID UINT32_MAX

/* Unicode White_Space: a query pasted from a CJK text or a word processor
 * separates words with U+3000 or U+00A0 as often as with a space. */
static bool is_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

static bool is_delim(uint32_t cp)
{
    return is_space(cp) || cp == '"' || cp == '(' || cp == ')';
}

/* Code point at off (< lx->len) and its length. An invalid byte is one
 * character of its own, CP_INVALID, as util/utf8.c counts them, so the
 * positions in our messages agree with the length the API layer checks. */
static size_t peek(const struct query_lexer *lx, size_t off, uint32_t *cp)
{
    size_t len = utf8_decode(lx->q + off, lx->len - off, cp);
    if (len)
        return len;
    *cp = CP_INVALID;
    return 1;
}

static void advance(struct query_lexer *lx, size_t bytes)
{
    lx->off += bytes;
    lx->chars++;
}

void query_lexer_init(struct query_lexer *lx, const char *q, size_t len)
{
    lx->q = q;
    lx->len = len;
    lx->off = 0;
    lx->chars = 0;
    lx->after_prefix = false;
}

const char *query_tok_name(enum query_tok kind)
{
    switch (kind) {
    case QUERY_TOK_EOF:
        return "end of query";
    case QUERY_TOK_WORD:
        return "word";
    case QUERY_TOK_PHRASE:
        return "phrase";
    case QUERY_TOK_LPAREN:
        return "'('";
    case QUERY_TOK_RPAREN:
        return "')'";
    case QUERY_TOK_AND:
        return "AND";
    case QUERY_TOK_OR:
        return "OR";
    case QUERY_TOK_NOT:
        return "NOT";
    case QUERY_TOK_PLUS:
        return "'+'";
    case QUERY_TOK_MINUS:
        return "'-'";
    }
    return "?";
}

/* "~N" right after a closing quote, N digits then a delimiter or the end:
 * the phrase is a proximity. Anything else after the quote ("a b"~, "a b"~x,
 * "a b"~2x) is read as it always was, the next word (the '~' punctuation). */
static int lex_distance(struct query_lexer *lx, struct query_token *out, struct err *err)
{
    size_t at = lx->off, end = at + 1, pos = lx->chars + 1;
    unsigned long n = 0;
    uint32_t cp;

    if (at >= lx->len || lx->q[at] != '~')
        return 0;
    while (end < lx->len && lx->q[end] >= '0' && lx->q[end] <= '9') {
        if (n <= LIMIT_NEAR_DISTANCE) /* saturates: "~99999999999" is too large, not 0 */
            n = n * 10 + (unsigned long)(lx->q[end] - '0');
        end++;
    }
    if (end == at + 1 || (end < lx->len && (peek(lx, end, &cp), !is_delim(cp))))
        return 0;
    if (n > LIMIT_NEAR_DISTANCE)
        return err_set(err, ERR_TOO_LARGE, "proximity distance above %d at character %zu",
                       LIMIT_NEAR_DISTANCE, pos);
    lx->chars += end - at; /* ASCII: one character a byte */
    lx->off = end;
    out->near = true;
    out->distance = (unsigned)n;
    return 0;
}

static int lex_phrase(struct query_lexer *lx, struct query_token *out, struct err *err)
{
    size_t open = lx->off;
    const char *close = memchr(lx->q + open + 1, '"', lx->len - open - 1);
    if (!close)
        return err_set(err, ERR_PARSE, "unbalanced quote at character %zu", out->pos);
    size_t end = (size_t)(close - lx->q);
    advance(lx, 1);
    bool blank = true;
    while (lx->off < end) {
        uint32_t cp;
        size_t l = peek(lx, lx->off, &cp);
        /* A sequence cannot straddle the closing quote: '"' is never a
         * continuation byte, so utf8_decode() stops before it. */
        if (!is_space(cp))
            blank = false;
        advance(lx, l);
    }
    advance(lx, 1);
    if (blank)
        return err_set(err, ERR_PARSE, "empty phrase at character %zu", out->pos);
    out->kind = QUERY_TOK_PHRASE;
    out->start = open + 1;
    out->end = end;
    return lex_distance(lx, out, err);
}

static bool word_is(const struct query_lexer *lx, size_t start, const char *op)
{
    size_t n = strlen(op);
    return lx->off - start == n && memcmp(lx->q + start, op, n) == 0;
}

int query_lexer_next(struct query_lexer *lx, struct query_token *out, struct err *err)
{
    bool prefix = lx->after_prefix;
    uint32_t cp = 0;
    size_t l;

    lx->after_prefix = false;
    while (lx->off < lx->len && (l = peek(lx, lx->off, &cp), is_space(cp)))
        advance(lx, l);
    memset(out, 0, sizeof *out);
    out->pos = lx->chars + 1;
    out->start = out->end = lx->off;
    if (lx->off == lx->len) {
        out->kind = QUERY_TOK_EOF;
        return 0;
    }
    switch (lx->q[lx->off]) {
    case '(':
        advance(lx, 1);
        out->kind = QUERY_TOK_LPAREN;
        return 0;
    case ')':
        advance(lx, 1);
        out->kind = QUERY_TOK_RPAREN;
        return 0;
    case '"':
        return lex_phrase(lx, out, err);
    case '+':
    case '-':
        if (prefix)
            break; /* "--a", "+-a": the rest of the word is plain text */
        if (lx->off + 1 == lx->len || (peek(lx, lx->off + 1, &cp), is_space(cp) || cp == ')'))
            return err_set(err, ERR_PARSE, "missing word after '%c' at character %zu",
                           lx->q[lx->off], out->pos);
        out->kind = lx->q[lx->off] == '+' ? QUERY_TOK_PLUS : QUERY_TOK_MINUS;
        advance(lx, 1);
        lx->after_prefix = true;
        return 0;
    default:
        break;
    }
    while (lx->off < lx->len && (l = peek(lx, lx->off, &cp), !is_delim(cp)))
        advance(lx, l);
    out->end = lx->off;
    out->kind = QUERY_TOK_WORD;
    if (!prefix) {
        if (word_is(lx, out->start, "AND"))
            out->kind = QUERY_TOK_AND;
        else if (word_is(lx, out->start, "OR"))
            out->kind = QUERY_TOK_OR;
        else if (word_is(lx, out->start, "NOT"))
            out->kind = QUERY_TOK_NOT;
    }
    return 0;
}
