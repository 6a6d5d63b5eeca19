/* text_fts5_register() of text_fts5.h: the "newsd" FTS5 tokenizer.
 * Input conventions (the header has them in full): "\x1F" LANG "\x1F" text
 * → text_tokenize() tokens, each followed by its colocated "~stem" when the
 * language has a stemmer and the stem differs; "\x1E" terms → the terms
 * verbatim; query text → space-separated pieces verbatim, because the
 * query/ module already ran text_tokenize() and built the stems itself. */
#include "text/text_fts5.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/limits.h"

#include "util/banned.h"

struct doc_ctx {
    void *fts_ctx;
    int (*xToken)(void *, int, const char *, int, int, int);
};

/* What text_fts5_doc_tokenize() reads: the language (lower case; "" when
 * unknown or without a stemmer) and where the text begins after the header. */
struct doc_header {
    char lang[TEXT_FTS5_LANG_MAX + 1];
    size_t base; /* byte offset of the tokenized text */
};

struct doc_tok_ctx {
    const struct doc_header *h;
    bool stems; /* make each token's stem (text_fts5_column_words: not) */
    text_fts5_doc_cb cb;
    void *ctx;
};

/* One stateless tokenizer instance serves every table: all state lives on
 * the stack of xTokenize. */
static char tokenizer_instance;

static int newsd_create(void *user, const char **argv, int argc, Fts5Tokenizer **out)
{
    (void)user;
    (void)argv;
    (void)argc;
    *out = (Fts5Tokenizer *)&tokenizer_instance;
    return SQLITE_OK;
}

static void newsd_delete(Fts5Tokenizer *tok)
{
    (void)tok;
}

static int doc_token(const struct text_token *tok, const char *stem, size_t stem_len, void *arg)
{
    struct doc_ctx *d = arg;
    char tilde[sizeof TEXT_FTS5_STEM_PREFIX - 1 + LIMIT_TOKEN_BYTES + 1];
    const size_t plen = sizeof TEXT_FTS5_STEM_PREFIX - 1;
    int rc = d->xToken(d->fts_ctx, 0, tok->text, (int)tok->len, (int)tok->start, (int)tok->end);

    if (rc != SQLITE_OK || stem == NULL)
        return rc;
    memcpy(tilde, TEXT_FTS5_STEM_PREFIX, plen);
    memcpy(tilde + plen, stem, stem_len);
    return d->xToken(d->fts_ctx, FTS5_TOKEN_COLOCATED, tilde, (int)(plen + stem_len),
                     (int)tok->start, (int)tok->end);
}

int text_fts5_token_stem(const char *lang, const struct text_token *tok,
                         char out[LIMIT_TOKEN_BYTES + 1])
{
    if (lang[0] == '\0' || (tok->flags & TEXT_TOKEN_CJK))
        return 0;
    int n = text_stem(lang, tok->text, tok->len, out, LIMIT_TOKEN_BYTES + 1);
    /* no stem, or one too long to matter: the exact term is there */
    if (n <= 0 || ((size_t)n == tok->len && memcmp(out, tok->text, tok->len) == 0))
        return 0;
    return n;
}

/* A token of the text after the header: offsets moved to the whole input,
 * and its stem when it has one that differs (and stems are asked for). */
static int doc_tok_stem(const struct text_token *tok, void *arg)
{
    struct doc_tok_ctx *c = arg;
    struct text_token t = *tok;
    char stem[LIMIT_TOKEN_BYTES + 1];

    t.start += c->h->base;
    t.end += c->h->base;
    int n = c->stems ? text_fts5_token_stem(c->h->lang, tok, stem) : 0;
    return c->cb(&t, n > 0 ? stem : NULL, n > 0 ? (size_t)n : 0, c->ctx);
}

/* The header of s[0..n) read (its language also into lang, when not NULL,
 * before the first token), then its tokens to cb. */
static int doc_tokenize(const char *s, size_t n, bool stems, char *lang, text_fts5_doc_cb cb,
                        void *ctx)
{
    struct doc_header h = {.lang = "", .base = 0};
    struct doc_tok_ctx c = {.h = &h, .stems = stems, .cb = cb, .ctx = ctx};

    if (lang)
        lang[0] = '\0';
    if (s == NULL || n == 0)
        return 0;
    if (s[0] == TEXT_FTS5_LANG_MARK) {
        const char *close = memchr(s + 1, TEXT_FTS5_LANG_MARK,
                                   n - 1 < TEXT_FTS5_LANG_MAX + 1 ? n - 1 : TEXT_FTS5_LANG_MAX + 1);
        if (close != NULL) {
            size_t len = (size_t)(close - s - 1);
            /* the API compares languages case-insensitively */
            ascii_lower_n(h.lang, s + 1, len);
            h.lang[len] = '\0';
            if (!text_lang_has_stemmer(h.lang))
                h.lang[0] = '\0';
            h.base = len + 2;
        }
    }
    if (lang)
        memcpy(lang, h.lang, sizeof h.lang);
    return text_tokenize(s + h.base, n - h.base, doc_tok_stem, &c);
}

int text_fts5_doc_tokenize(const char *s, size_t n, text_fts5_doc_cb cb, void *ctx)
{
    return doc_tokenize(s, n, true, NULL, cb, ctx);
}

/* One text column as the store's triggers hand it to FTS5:
 * "\x1F" language "\x1F" text, tokenized by doc_tokenize. */
static int column_tokenize(const char *language, const char *text, bool stems,
                           char lang[TEXT_FTS5_LANG_MAX + 1], text_fts5_doc_cb cb, void *ctx)
{
    int rc = 0;
    if (lang)
        lang[0] = '\0';
    if (text != NULL) {
        size_t ll = language ? strlen(language) : 0, tl = strlen(text), n = ll + 2 + tl;
        char small[512], *s = n <= sizeof small ? small : malloc(n);

        if (s == NULL)
            return ERR_NOMEM;
        s[0] = TEXT_FTS5_LANG_MARK;
        if (ll)
            memcpy(s + 1, language, ll);
        s[ll + 1] = TEXT_FTS5_LANG_MARK;
        memcpy(s + ll + 2, text, tl);
        rc = doc_tokenize(s, n, stems, lang, cb, ctx);
        if (s != small)
            free(s);
    }
    return rc;
}

int text_fts5_column_tokenize(const char *language, const char *text, text_fts5_doc_cb cb,
                              void *ctx)
{
    return column_tokenize(language, text, true, NULL, cb, ctx);
}

int text_fts5_column_words(const char *language, const char *text,
                           char lang[TEXT_FTS5_LANG_MAX + 1], text_fts5_doc_cb cb, void *ctx)
{
    return column_tokenize(language, text, false, lang, cb, ctx);
}

/* Emit the pieces of s[from..n) separated by spaces, verbatim. In meta
 * text, the pieces after a second mark are colocated with the piece
 * before them (text_fts5.h). */
static int split_spaces(void *ctx, int (*xToken)(void *, int, const char *, int, int, int),
                        const char *s, int from, int n, bool meta)
{
    int i = from, flags = 0;
    bool emitted = false;
    while (i < n) {
        int j;
        while (i < n && (s[i] == ' ' || (meta && s[i] == TEXT_FTS5_META_MARK))) {
            /* nothing to colocate with before a first piece */
            if (s[i] == TEXT_FTS5_META_MARK && emitted)
                flags = FTS5_TOKEN_COLOCATED;
            i++;
        }
        j = i;
        while (j < n && s[j] != ' ' && !(meta && s[j] == TEXT_FTS5_META_MARK))
            j++;
        if (j > i) {
            int rc = xToken(ctx, flags, s + i, j - i, i, j);
            if (rc != SQLITE_OK)
                return rc;
            emitted = true;
        }
        i = j;
    }
    return SQLITE_OK;
}

static int newsd_tokenize(Fts5Tokenizer *tok, void *ctx, int flags, const char *text, int n,
                          int (*xToken)(void *, int, const char *, int, int, int))
{
    struct doc_ctx d;
    int rc;

    (void)tok;
    if (text == NULL || n <= 0)
        return SQLITE_OK;
    if (flags & FTS5_TOKENIZE_QUERY)
        return split_spaces(ctx, xToken, text, 0, n, false);
    if (text[0] == TEXT_FTS5_META_MARK)
        return split_spaces(ctx, xToken, text, 1, n, true);

    d.fts_ctx = ctx;
    d.xToken = xToken;
    rc = text_fts5_doc_tokenize(text, (size_t)n, doc_token, &d);
    if (rc == ERR_NOMEM)
        rc = SQLITE_NOMEM;
    return rc;
}

fts5_api *text_fts5_api(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *stmt = NULL;

    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_bind_pointer(stmt, 1, (void *)&api, "fts5_api_ptr", NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_step(stmt) != SQLITE_ROW || api == NULL || api->iVersion < 2)
        api = NULL;
out:
    sqlite3_finalize(stmt);
    return api;
}

int text_fts5_register(sqlite3 *db)
{
    static fts5_tokenizer methods = {newsd_create, newsd_delete, newsd_tokenize};
    fts5_api *api = text_fts5_api(db);

    if (api == NULL ||
        api->xCreateTokenizer(api, TEXT_FTS5_TOKENIZER, NULL, &methods, NULL) != SQLITE_OK)
        return ERR_STORE;
    return 0;
}
