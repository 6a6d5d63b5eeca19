/* Success responses as NewsAPI writes them (API.md §3): compact UTF-8 JSON,
 * fixed key order, nulls where a field is unknown, publishedAt as
 * YYYY-MM-DDThh:mm:ssZ, content cut to 200 characters. */
#ifndef NEWSD_API_RENDER_H
#define NEWSD_API_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/buf.h"

/* {"status":"ok","totalResults":N,"articles":[…]} */
void api_render_articles(struct buf *out, uint64_t total, const struct article *arts, size_t n);

/* {"status":"ok","sources":[…]} */
void api_render_sources(struct buf *out, const struct source *srcs, size_t n);

/* Append content as the API shows it: text longer than LIMIT_CONTENT_CHARS
 * code points becomes its first 199 + "…" + " [+N chars]" (N = code points
 * not shown); shorter text whole. Writes a JSON string (or null). */
void api_render_content(struct buf *out, const char *content);

#endif
