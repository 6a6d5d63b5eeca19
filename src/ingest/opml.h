/* OPML 2.0 feed lists, what every feed reader imports and exports
 * (`newsd feeds import` / `export`, docs/feeds.md "OPML"). An outline with
 * an xmlUrl attribute is a feed; an outline without one is a folder, and
 * its outlines are read too (readers nest feeds in folders). newsd's own
 * settings of a feed travel as attributes in the OPML_NS namespace
 * (newsd:source, country, category, language, headlines, interval,
 * paused, pages; also read as "newsd:NAME" when a hand-written file forgot to
 * declare the prefix), so an export re-imports to the same feeds; readers
 * ignore them.
 *
 * Every byte is hostile: libxml2 parses without network access, a
 * document with a DOCTYPE is refused before its declarations are read (no
 * entity of any kind beyond the five predefined ones), nesting, outline
 * count and size are bounded. The parser returns the values as written:
 * the caller validates them (a URL, a country code, ...). */
#ifndef NEWSD_INGEST_OPML_H
#define NEWSD_INGEST_OPML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

#define OPML_NS "https://github.com/newsd#opml"
#define OPML_MAX_BYTES (64 * 1024 * 1024) /* a document */
#define OPML_MAX_OUTLINES 100000          /* outlines of a document, folders included */
#define OPML_MAX_DEPTH 32                 /* folders in folders */

/* One feed outline. Strings are valid UTF-8 in the arena, NULL when the
 * attribute is absent or empty. */
struct opml_feed {
    const char *url;      /* xmlUrl (the attribute name in any ASCII case) */
    const char *title;    /* title, else text */
    const char *html_url; /* htmlUrl */
    /* The innermost enclosing folder whose label (text, else title) is a
     * NewsAPI category, as util/vocab.h spells it; NULL when none is. */
    const char *folder_category;
    /* newsd's attributes (namespace OPML_NS) */
    const char *source, *country, *category, *language, *headlines, *interval, *paused, *pages;
    long line; /* where the outline's start tag ends, for messages */
};

/* Does data look like OPML rather than JSONL: after blanks and a UTF-8
 * BOM it starts with '<', and "<opml" comes within its first 64 KiB. */
bool opml_sniff(const char *data, size_t len);

/* The feed outlines of the document data[0..len), in document order, in
 * the arena. ERR_PARSE (not well-formed, with its line; not an <opml>
 * document; a DOCTYPE; nested deeper than OPML_MAX_DEPTH), ERR_TOO_LARGE
 * (over OPML_MAX_BYTES or OPML_MAX_OUTLINES), ERR_NOMEM. A document
 * without feeds is no error (*n_out = 0). */
int opml_parse(struct arena *a, const char *data, size_t len, struct opml_feed **out, size_t *n_out,
               struct err *err);

/* Append an OPML 2.0 document of feeds[0..n) to out: one outline per feed
 * (text and title = the feed's title or its url, xmlUrl, htmlUrl) with
 * newsd's attributes for whatever is set (interval always: the current
 * one; paused="true" for a paused feed). The caller checks buf_error. */
void opml_write(struct buf *out, const struct feed_record *feeds, size_t n);

#endif
