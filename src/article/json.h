/* One article as NewsAPI writes it (API.md §3): the JSON object of an
 * element of "articles" — compact UTF-8, fixed key order, nulls where a
 * field is unknown, publishedAt as YYYY-MM-DDThh:mm:ssZ, content cut to
 * 200 characters. The API's pages and the engine's document store
 * (docs/engine.md "The page") both write it here, so a page copied from
 * the store is byte for byte the page rendered from rows. Every byte
 * depends only on the article's own row (source name included): a row
 * that changes is a new row (a new seq), so a stored copy never goes
 * stale. */
#ifndef NEWSD_ARTICLE_JSON_H
#define NEWSD_ARTICLE_JSON_H

#include "store/store.h"
#include "util/buf.h"

struct jw;

/* Write {"source":{"id":…,"name":…},"author":…,…,"publishedAt":…, through
 * w, the object left open for the writer's own "content" and what follows
 * (the API's page and an export's NDJSON line share the head). */
void article_json_head(struct jw *w, const struct article *a);

/* Append {"source":{"id":…,"name":…},"author":…,…,"content":…} to out. */
void article_json(struct buf *out, const struct article *a);

/* Append content as the API shows it: text longer than LIMIT_CONTENT_CHARS
 * code points becomes its first 199 + "…" + " [+N chars]" (N = code points
 * not shown); shorter text whole. Writes a JSON string (or null). */
void article_json_content(struct buf *out, const char *content);

#endif
