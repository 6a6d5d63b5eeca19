/* Query expansion, the one both search backends use (index/fts5/match.c
 * writes its forms into a MATCH expression, index/plan.c into a
 * plan), so that they agree on what a word matches by construction and the
 * FTS5 oracle cannot share a copied bug unseen (tests/unit/test_index_expand.c
 * checks it against hand-worked expansions).
 *
 * A plain (not exact) query word w matches the tokens w and, per language
 * in scope, its stem s; the tokenizer indexes a token t as t plus, when
 * stem(t) != t, a colocated "~stem(t)" (text/text_fts5.h), so w's forms
 * are: w, then per language in scope s (when new) and "~s" (when new). */
#ifndef NEWSD_INDEX_EXPAND_H
#define NEWSD_INDEX_EXPAND_H

#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"

/* Languages with a Snowball stemmer (text_lang_has_stemmer). */
#define INDEX_EXPAND_LANGS 11
/* Forms of one word at most: itself, then a stem and a "~stem" per language. */
#define INDEX_EXPAND_FORMS_MAX (1 + 2 * INDEX_EXPAND_LANGS)

/* The languages in scope for a request whose language is *language (NULL:
 * any): that one when it has a stemmer (*langs then points at language),
 * else every stemmed language. */
void index_expand_langs(const char *const *language, const char *const **langs, size_t *n);

/* The forms of plain word tok (see the file comment) into forms[0..*n),
 * forms[0] being tok itself; new strings in the arena. A stem longer than
 * LIMIT_TOKEN_BYTES is never indexed and is skipped. ERR_NOMEM, or the
 * stemmer's error, with err set. */
int index_expand_word(struct arena *a, const char *const *langs, size_t n_langs, const char *tok,
                      const char *forms[INDEX_EXPAND_FORMS_MAX], size_t *n, struct err *err);

#endif
