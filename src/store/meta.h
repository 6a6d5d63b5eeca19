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
 * lower-casing) is written as <kind>_<hex(value)> so it stays one token. */
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

/* Append the meta term of `kind` for value v[0..len) (len ignored for 'a'
 * and 'h'); see the file comment. Errors are the buffer's (sticky). */
void store_meta_term(struct buf *b, char kind, const char *v, size_t len);

/* The whole space-separated meta term list of an article (without the
 * leading TEXT_FTS5_META_MARK), appended to b. */
void store_meta_terms(struct buf *b, const struct article *art);

#endif
