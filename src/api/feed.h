/* A page of search results as a feed a reader can follow (docs/api.md,
 * "Search as a feed"): RSS 2.0, Atom 1.0 (RFC 4287) or JSON Feed 1.1,
 * from the NewsAPI article objects the index wrote for the page. Pure:
 * the request's parts (title, addresses) come in, the document goes out;
 * conditional GET is the caller's (search.c). */
#ifndef NEWSD_API_FEED_H
#define NEWSD_API_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "util/buf.h"

enum api_feed_format {
    API_FEED_NONE = 0, /* NewsAPI's JSON: no feed */
    API_FEED_RSS,
    API_FEED_ATOM,
    API_FEED_JSONFEED,
};

/* The format a `format` value names ("json" is API_FEED_NONE); -1 for
 * any other value. */
int api_feed_format_of(const char *value);

/* Its Content-Type (static). */
const char *api_feed_content_type(enum api_feed_format f);

struct api_feed_meta {
    const char *title;    /* the feed's title: the search it follows */
    const char *self_url; /* this feed's absolute address, without the key */
    const char *home_url; /* the site: the server's search page */
    const char *version;  /* newsd's, for the generator */
};

/* The page docs[0..n) as format f into out. *newest: the newest
 * publishedAt among them (0 for an empty page), for Last-Modified; it is
 * also the feed's own update time (the epoch for an empty page, whose
 * bytes then stay the same).
 * Returns 0, or ERR_PARSE when a document is no article object (never one
 * the index wrote), ERR_NOMEM. */
int api_feed_render(struct buf *out, enum api_feed_format f, const struct api_feed_meta *m,
                    const struct index_doc *docs, size_t n, int64_t *newest);

#endif
