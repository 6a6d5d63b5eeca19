/* Success responses as NewsAPI writes them (API.md §3): compact UTF-8 JSON,
 * fixed key order, nulls where a field is unknown, publishedAt as
 * YYYY-MM-DDThh:mm:ssZ, content cut to 200 characters. */
#ifndef NEWSD_API_RENDER_H
#define NEWSD_API_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "store/store.h"
#include "util/buf.h"

/* Start a successful answer into out through w: {"status":"ok" with the
 * object left open for the endpoint's own keys. */
struct jw;
void api_render_ok_begin(struct jw *w, struct buf *out);

/* {"status":"ok","totalResults":N,"articles":[…]} from rows. */
void api_render_articles(struct buf *out, uint64_t total, const struct article *arts, size_t n);

/* The same bytes from a page the index wrote (index_result.docs): the
 * articles copied, nothing escaped. */
void api_render_page(struct buf *out, uint64_t total, const struct index_doc *docs, size_t n);

/* api_render_page's bytes with "nextCursor":next after the articles
 * (cursor paging, api/cursor.h); next NULL: none follows. */
void api_render_page_walk(struct buf *out, uint64_t total, const struct index_doc *docs, size_t n,
                          const char *next);

/* {"status":"ok","sources":[…]} */
void api_render_sources(struct buf *out, const struct source *srcs, size_t n);

#endif
