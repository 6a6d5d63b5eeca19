/* SQLite FTS5 binding of the text/ tokenizer, registered as "newsd".
 * Input conventions (DESIGN.md: one tokenizer for index and query):
 *  - document text may begin with "\x1F" LANG "\x1F" (LANG: 2 letters or
 *    empty): tokens are text_tokenize()'s; for a language with a stemmer
 *    every non-CJK token whose stem differs is followed by the colocated
 *    token TEXT_FTS5_STEM_PREFIX stem (FTS5_TOKEN_COLOCATED);
 *  - document text beginning with "\x1E" is a list of metadata terms
 *    separated by spaces, emitted verbatim (filters as index terms);
 *  - query text (FTS5_TOKENIZE_QUERY) is already tokenized by the caller:
 *    it is split on spaces and each piece emitted verbatim. */
#ifndef NEWSD_TEXT_TEXT_FTS5_H
#define NEWSD_TEXT_TEXT_FTS5_H

#include <sqlite3.h>

#define TEXT_FTS5_TOKENIZER "newsd"
#define TEXT_FTS5_LANG_MARK '\x1F'
#define TEXT_FTS5_META_MARK '\x1E'
#define TEXT_FTS5_STEM_PREFIX "~"

/* Register the tokenizer on db. Returns 0 or ERR_STORE. */
int text_fts5_register(sqlite3 *db);

#endif
