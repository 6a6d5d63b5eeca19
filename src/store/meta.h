/* The meta terms of an article: its filterable properties (language,
 * country, category, headline, source, domain) as words of their own, kept
 * in the articles' meta_terms column, so that an index answers a filter by
 * looking up a term instead of joining back to the table (DESIGN.md). The
 * store writes them with every row; both search indexes spell a filter's
 * value with store_meta_term, so they and the column agree.
 *
 * One space-separated token per property:
 *   a            every article (the positive term of a filter-less query)
 *   l<lang>      language ("se" is filed as "sv")
 *   c<cc>        country
 *   k<category>  category
 *   h            headline
 *   s<hex(id)>   source id, lower-case hex of its bytes (one token for any id)
 *   d<hex(dom)>  the domain and each of its suffixes at a dot boundary
 * A value of l/c/k that is not only ASCII letters and digits (after ASCII
 * lower-casing) is written as <kind>_<hex(value)> so it stays one token.
 *
 * The author is not in the stored list (a store made before author terms
 * would hold lists without them): each index adds the terms of the row's
 * author itself, with store_meta_author_terms, and FTS5 has them from the
 * SQL function the store's triggers call (store/sqlite/db.c):
 *   w<hex16>     a name the author field gives (store_meta_author_terms),
 *                the first 8 bytes of SHA-256 of the name's words
 * A hash, not the name's hex: names are long and many (a dictionary entry
 * each), and SHA-256 because the author comes from hostile feeds: no one
 * can make an article pass for another author's by crafting a collision. */
#ifndef NEWSD_STORE_META_H
#define NEWSD_STORE_META_H

#include <stddef.h>

#include "store/store.h"
#include "util/buf.h"

/* Meta term kinds. */
#define STORE_META_ALL 'a'
#define STORE_META_LANGUAGE 'l'
#define STORE_META_COUNTRY 'c'
#define STORE_META_CATEGORY 'k'
#define STORE_META_HEADLINE 'h'
#define STORE_META_SOURCE 's'
#define STORE_META_DOMAIN 'd'
#define STORE_META_AUTHOR 'w'

/* Most author terms one article gets (the whole field, its parts). */
#define STORE_META_AUTHOR_TERMS_MAX 8

/* Append the meta term of `kind` for value v[0..len) (len ignored for 'a'
 * and 'h'); see the file comment. For 'w', v is one name (author: in q):
 * its words (text_tokenize: case and accents folded, punctuation
 * dropped) joined by single spaces are what is hashed. Errors are the
 * buffer's (sticky). */
void store_meta_term(struct buf *b, char kind, const char *v, size_t len);

/* The whole space-separated meta term list of an article (without the
 * leading TEXT_FTS5_META_MARK), appended to b. */
void store_meta_terms(struct buf *b, const struct article *art);

/* The author terms of an author field (NULL: none), space-separated, with
 * no space before the first, appended to b; the number appended (0 when the
 * field has no word). The names: the whole field; when it lists several
 * (parts between ',', ';', '|' or '&', or around the word "and"), each
 * part; and each of these without a first word "by". Duplicates once; at
 * most STORE_META_AUTHOR_TERMS_MAX; only the first 64 words are read.
 * ERR_NOMEM when b failed. */
int store_meta_author_terms(struct buf *b, const char *author);

#endif
