/* The author of an article's NewsAPI JSON (article/json.h) read back: the
 * engine's author facet column (index/engine/facets.c) is built from the
 * document store, which holds that JSON and nothing else of the author.
 * The bytes are hostile (a damaged file): fuzzed by fuzz/fuzz_counts.c. */
#ifndef NEWSD_ARTICLE_JSON_AUTHOR_H
#define NEWSD_ARTICLE_JSON_AUTHOR_H

#include <stddef.h>

#include "util/buf.h"

/* The value of the first "author" key of json[0..len) (article_json
 * writes keys unescaped and values escaped, so the quoted key cannot
 * occur inside a value), unescaped into out (appended): 1 for a string, 0
 * for null, no key or an empty string, ERR_PARSE for anything else. A
 * \u escape of a lone surrogate becomes U+FFFD. */
int article_json_author(const char *json, size_t len, struct buf *out);

#endif
