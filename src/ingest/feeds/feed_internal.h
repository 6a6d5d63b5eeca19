/* Private to feed.c, feed_xml.c and feed_json.c: the parse context and the
 * field helpers every format shares, so that each format only maps its
 * elements and all bounds, UTF-8 and URL rules live in one place (feed.c). */
#ifndef NEWSD_INGEST_FEED_INTERNAL_H
#define NEWSD_INGEST_FEED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/feeds/feeds.h"
#include "util/arena.h"
#include "util/err.h"

struct feed_ctx {
    struct arena *a;
    struct err *err;
    struct feed *out;
    size_t cap;           /* items allocated in out->items */
    const char *base_url; /* absolute http(s) URL or NULL */
    int rc;               /* sticky: first ERR_NOMEM, checked once at the end */
};

/* Kinds of text a field holds. */
enum feed_text_kind {
    FEED_TEXT_HTML,  /* markup or entity-escaped markup */
    FEED_TEXT_PLAIN, /* text as is (Atom type="text", JSON content_text) */
};

/* A new zeroed item at the end of out->items, or NULL when FEED_MAX_ITEMS
 * are kept already (then out->n_dropped grows) or memory ran out (c->rc). */
struct feed_item *feed_ctx_item_add(struct feed_ctx *c);

/* s[0..n) as bounded normalised text in the arena (html_text rules, plus a
 * repair of UTF-8 that was decoded as Latin-1/windows-1252), NULL when
 * empty. one_line folds line breaks. When first_img is not NULL and
 * *first_img is NULL it receives the first <img src> of the markup. */
const char *feed_ctx_text(struct feed_ctx *c, const char *s, size_t n, enum feed_text_kind kind,
                          size_t max, bool one_line, const char **first_img);

/* s[0..n) trimmed and resolved against base (or c->base_url when base is
 * NULL): an absolute http(s) URL in the arena, or NULL (not http(s), not
 * resolvable, control characters, longer than FEED_MAX_URL_BYTES). */
const char *feed_ctx_url(struct feed_ctx *c, const char *s, size_t n, const char *base);

/* An author as feeds write it ("mail@x (Name)" gives "Name"), one line,
 * FEED_MAX_NAME_BYTES; NULL when empty. */
const char *feed_ctx_author(struct feed_ctx *c, const char *s, size_t n);

/* "a" + ", " + "b" in the arena, bounded by FEED_MAX_NAME_BYTES (b dropped
 * when it does not fit); either may be NULL. */
const char *feed_ctx_join(struct feed_ctx *c, const char *a, const char *b);

/* Fill what an item lacks from what it has: content from description,
 * image from the first <img> of its markup (resolved against base). */
void feed_ctx_item_finish(struct feed_ctx *c, struct feed_item *it, const char *first_img,
                          const char *base);

/* True when s looks like a URL whose path names an image file. */
bool feed_url_is_image(const char *s);

/* An XML feed's bytes before libxml2 reads them (feed_xml_bytes.c). */

/* *body[0..*len) without the blanks before an XML declaration (a fatal
 * error for libxml2 but harmless); a BOM or wide encoding stays untouched. */
void feed_xml_skip_prolog_blanks(const char **body, size_t *len);

/* '&' and '<' are plain bytes of s[0..n) under charset: not UTF-16/32, not
 * ISO-2022 or UTF-7 (so bare ampersands can be escaped byte-wise). */
bool feed_xml_ascii_compatible(const char *s, size_t n, const char *charset);

/* A copy of s[0..n) with bare '&'s escaped in *out (malloc'd), or *out =
 * NULL when there are none; 0 or ERR_NOMEM. */
int feed_xml_amp_escape(const char *s, size_t n, char **out, size_t *out_len);

/* The encoding to force, or NULL to let libxml2 read BOM and declaration. */
const char *feed_xml_choose_encoding(const char *body, size_t len, const char *charset);

/* The document starts with an XML declaration naming an encoding. */
bool feed_xml_decl_has_encoding(const char *s, size_t n);

/* Per-format parsers: fill c->out; 0 or a negative ERR_* (with c->err). */
int feed_xml_parse(struct feed_ctx *c, const char *body, size_t len, const char *charset);
int feed_json_parse(struct feed_ctx *c, const char *body, size_t len);

#endif
