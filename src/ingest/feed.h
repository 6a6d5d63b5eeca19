/* Parsing of publishers' feeds: RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 1.0 (and
 * 0.3) with libxml2, JSON Feed 1.0/1.1 with jansson. Input is the raw HTTP
 * body (gzip bodies are inflated first); output is a struct feed whose
 * every string lives in the caller's arena and is:
 *   - well-formed UTF-8 with no control characters but '\n' (content only),
 *   - trimmed, white space folded, HTML turned into plain text,
 *   - bounded by the FEED_MAX_* sizes below (cut on a code point boundary),
 *   - NULL rather than empty.
 * Links and image URLs are absolute http(s) URLs (relative ones resolved
 * against xml:base, then the feed's own link, then base_url) or NULL.
 * Security: never touches the network or the file system, never loads a DTD,
 * never expands a declared entity recursively (billion laughs), no
 * XML_PARSE_HUGE (libxml2's depth and text limits stay on).
 * Thread-safe: no state of ours outside the arguments. */
#ifndef NEWSD_INGEST_FEED_H
#define NEWSD_INGEST_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

#define FEED_MAX_BODY_BYTES (16 * 1024 * 1024) /* input, also after gunzip */
#define FEED_MAX_ITEMS 1000                    /* later items are counted, not kept */
#define FEED_MAX_TITLE_BYTES 2048
#define FEED_MAX_DESCRIPTION_BYTES (32 * 1024)
#define FEED_MAX_CONTENT_BYTES (1024 * 1024) /* = LIMIT_FIELD_BYTES */
#define FEED_MAX_NAME_BYTES 512              /* author, language */
#define FEED_MAX_GUID_BYTES 2048
#define FEED_MAX_URL_BYTES (8 * 1024) /* = LIMIT_URL_BYTES; longer URLs are dropped */

enum feed_format {
    FEED_FORMAT_UNKNOWN = 0,
    FEED_FORMAT_RSS,  /* RSS 0.91, 0.92, 2.0 (<rss>) */
    FEED_FORMAT_RDF,  /* RSS 0.90 and 1.0 (<rdf:RDF>) */
    FEED_FORMAT_ATOM, /* Atom 1.0 and 0.3 (<feed>) */
    FEED_FORMAT_JSON, /* JSON Feed 1.0 / 1.1 */
};

struct feed_item {
    const char *title;       /* one line */
    const char *link;        /* absolute http(s) URL of the article */
    const char *guid;        /* RSS guid, Atom id, RDF rdf:about, JSON id; as written */
    const char *description; /* one line: RSS description, Atom summary, JSON summary */
    const char *content;     /* lines: content:encoded, Atom content, JSON content_*,
                                else the description */
    const char *author;      /* names, ", "-separated; "mail (Name)" gives Name */
    const char *image_url;   /* absolute http(s) URL: media:content, enclosure, thumbnail,
                                itunes:image, JSON image, else the first <img> of the HTML */
    int64_t published_at;    /* UTC seconds since the epoch; valid when has_date */
    bool has_date;           /* pubDate / dc:date / published / updated parsed */
};

struct feed {
    enum feed_format format;
    const char *title;
    const char *link;        /* absolute http(s) URL of the site */
    const char *language;    /* as written (RSS language, dc:language, xml:lang, JSON language) */
    struct feed_item *items; /* in document order */
    size_t n_items;          /* <= FEED_MAX_ITEMS */
    size_t n_dropped;        /* items past FEED_MAX_ITEMS */
    bool recovered;          /* the XML was not well-formed (bare '&', bad nesting, undeclared
                                prefix, ...) and was read in recover mode */
};

/* Parse body[0..len) (need not be NUL-terminated). charset is the HTTP
 * Content-Type charset or NULL: a charset libxml2 knows overrides the XML
 * declaration; without either a BOM decides, else UTF-8, else (bytes that
 * are not UTF-8) ISO-8859-1. base_url (the URL fetched, or NULL) resolves
 * relative links. The format is JSON when the first non-blank byte is '{',
 * else the XML root element decides.
 * Returns 0, or ERR_PARSE (not a feed, or XML too broken to recover, with
 * the reason in err), ERR_TOO_LARGE (body or inflated body over
 * FEED_MAX_BODY_BYTES), ERR_NOMEM (arena ceiling or malloc). On error *out
 * is zeroed. */
int feed_parse(struct arena *a, const char *body, size_t len, const char *charset,
               const char *base_url, struct feed *out, struct err *err);

/* "rss", "rdf", "atom", "json" or "unknown". */
const char *feed_format_name(enum feed_format f);

#endif
