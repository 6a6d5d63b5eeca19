/* SQLite FTS5 binding of the text/ tokenizer, registered as "newsd".
 * Input conventions (DESIGN.md: one tokenizer for index and query):
 *  - document text may begin with "\x1F" LANG "\x1F" (LANG: 2 letters or
 *    empty): tokens are text_tokenize()'s; for a language with a stemmer
 *    every non-CJK token whose stem differs is followed by the colocated
 *    token TEXT_FTS5_STEM_PREFIX stem (FTS5_TOKEN_COLOCATED);
 *  - document text beginning with "\x1E" is a list of metadata terms
 *    separated by spaces, emitted verbatim (filters as index terms); the
 *    terms after a second "\x1E" are emitted colocated with the term
 *    before them (FTS5_TOKEN_COLOCATED), so they add nothing to the row's
 *    length, which bm25 reads (the author's terms, store/meta.h);
 *  - query text (FTS5_TOKENIZE_QUERY) is already tokenized by the caller:
 *    it is split on spaces and each piece emitted verbatim. */
#ifndef NEWSD_TEXT_TEXT_FTS5_H
#define NEWSD_TEXT_TEXT_FTS5_H

#include <stddef.h>

#include <sqlite3.h>

#include "text/text.h"
#include "util/limits.h"

#define TEXT_FTS5_TOKENIZER "newsd"
#define TEXT_FTS5_LANG_MARK '\x1F'
#define TEXT_FTS5_META_MARK '\x1E'
#define TEXT_FTS5_STEM_PREFIX "~"
#define TEXT_FTS5_LANG_MAX 8 /* longest language header accepted between the marks */

/* One token of a document column: tok (start/end are byte offsets in the
 * text given to text_fts5_doc_tokenize) and, when the tokenizer follows it
 * with a colocated "~stem", that stem without the prefix (stem NULL
 * otherwise). A non-zero return stops tokenizing. */
typedef int (*text_fts5_doc_cb)(const struct text_token *tok, const char *stem, size_t stem_len,
                                void *ctx);

/* The tokens of document text s[0..n) exactly as the "newsd" tokenizer
 * gives them to FTS5 (the language header read, the stems made): the one
 * place that decides it, so that the engine (index/engine/segment.c) and
 * the matcher of single articles (index/match.c) index a row as FTS5 does
 * by construction. Not for meta text ("\x1E"). Returns 0, the callback's
 * non-zero value, or ERR_NOMEM. */
int text_fts5_doc_tokenize(const char *s, size_t n, text_fts5_doc_cb cb, void *ctx);

/* text_fts5_doc_tokenize over one text column of an article as the
 * store's triggers hand it to FTS5: "\x1F" language "\x1F" text (text NULL:
 * no token). Offsets are those of that string. Returns as
 * text_fts5_doc_tokenize. */
int text_fts5_column_tokenize(const char *language, const char *text, text_fts5_doc_cb cb,
                              void *ctx);

/* text_fts5_column_tokenize without making the stems (cb's stem is always
 * NULL), for a caller that makes each distinct word's stem once
 * (index/engine/segbuild.c) with text_fts5_token_stem in the language
 * written to lang before the first token ("": the tokens have no stems). */
int text_fts5_column_words(const char *language, const char *text,
                           char lang[TEXT_FTS5_LANG_MAX + 1], text_fts5_doc_cb cb, void *ctx);

/* The "~stem" (without the prefix) the tokenizer follows tok with in lang
 * (as text_fts5_column_words wrote it), into out: its length, 0 when none
 * (no stemmer, a CJK token, or the stem is the token). The one place that
 * decides it: text_fts5_doc_tokenize makes its stems with it. */
int text_fts5_token_stem(const char *lang, const struct text_token *tok,
                         char out[LIMIT_TOKEN_BYTES + 1]);

/* db's FTS5 API (version 2 or later), for registering what FTS5 calls
 * back; NULL when db has none. */
fts5_api *text_fts5_api(sqlite3 *db);

/* Register the tokenizer on db. Returns 0 or ERR_STORE. */
int text_fts5_register(sqlite3 *db);

#endif
