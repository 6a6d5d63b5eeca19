/* The pages room of ingest/ (docs/architecture.md): one HTML front end
 * (one libxml2 set-up, one tag table, one UTF-8 repair: html_internal.h)
 * under two readers of a page: the article behind a link (extract_), and
 * HTML fragments of feeds to plain text (html_text_); and the filling of
 * an article's gaps from its page (page_). Never touches the network (the
 * pages are fetched by the feeds room through fetch/) nor the store.
 * Private: html_internal.h (the front end), extract_internal.h (the
 * extractor's tree). */
#ifndef NEWSD_INGEST_PAGES_H
#define NEWSD_INGEST_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/arena.h"

/* The article behind a link: a web page's main text and metadata, as a
 * reader view shows them (issue 16). Input is the page's bytes as fetched,
 * in whatever charset they are, and every byte of it is hostile: the page
 * is read at most EXTRACT_MAX_INPUT bytes deep, its tree at most
 * EXTRACT_MAX_DEPTH deep and EXTRACT_MAX_NODES large, and each step is
 * linear in the size of the page (docs/extraction.md measures speed and
 * quality on 99 real pages).
 *
 * Invariants of every string of the result: well-formed UTF-8, no control
 * characters (but '\n' in text), white space folded (one space; in text a
 * line break between blocks), no leading or trailing white space; NULL when
 * the page does not say. URLs are absolute http(s). Never touches the
 * network. Thread-safe (no state of ours outside the call). */

#define EXTRACT_MAX_INPUT ((size_t)8 * 1024 * 1024) /* bytes of page read */
#define EXTRACT_MAX_DEPTH 256                       /* deeper elements fold into their ancestor */
#define EXTRACT_MAX_NODES 500000                    /* elements and text runs of one page */
#define EXTRACT_MAX_TEXT (512 * 1024)               /* bytes of main text kept */
#define EXTRACT_MAX_FIELD 4096                      /* bytes of a metadata string kept */

struct extract_options {
    const char *url;     /* where the page was fetched: resolves relative links; may be NULL */
    const char *charset; /* the HTTP Content-Type's charset, or NULL */
};

struct extracted_page {
    char *text;      /* main text: paragraphs separated by '\n'; "" when none */
    size_t text_len; /* bytes of text */
    char *title;     /* headline, the site's name cut off */
    char *byline;    /* author(s) */
    char *excerpt;   /* description: the page's own, else the text's first paragraph */
    char *image;     /* lead image: og:image, twitter:image, JSON-LD, first image of the text */
    char *published; /* publication time as the page writes it */
    int64_t published_at; /* published, read as UTC seconds; 0 when absent or unreadable */
    char *lang;           /* language tag as the page writes it ("en-US") */
    char *site_name;      /* og:site_name, JSON-LD publisher */
    char *canonical;      /* link rel=canonical, else og:url */
    bool readerable;      /* the page holds an article (not a list, a form, an index) */
};

/* Extract page[0..len) into *out (strings in the arena). Returns 0, or
 * ERR_NOMEM (arena ceiling or malloc). A page with no article is no error:
 * readerable is false and text may be "" or short. */
int extract_page(struct arena *a, const char *page, size_t len, const struct extract_options *opt,
                 struct extracted_page *out);

/* HTML (or plain text) to normalised plain text, as feeds' titles,
 * descriptions and article bodies need it. Invariants of every output:
 * well-formed UTF-8 (invalid input bytes become U+FFFD), no control
 * characters but '\n', no leading or trailing white space, no run of white
 * space longer than one character (a line break wins over a space), at most
 * max_out bytes, cut on a code point boundary. Entities are decoded, tags
 * dropped, block elements and <br> become line breaks (spaces in one-line
 * mode), script, style and similar invisible elements are dropped with their
 * content. Uses libxml2's HTML parser in recover mode; never touches the
 * network. Thread-safe (no global state of ours). */

enum html_text_flags {
    HTML_TEXT_ONE_LINE = 1 << 0, /* line breaks become spaces (titles, names) */
    HTML_TEXT_PLAIN = 1 << 1,    /* input is text, not HTML: only normalise */
};

struct html_text_out {
    char *text;      /* NUL-terminated, in the arena; "" when nothing is left */
    size_t len;      /* bytes of text */
    bool truncated;  /* max_out cut the text short */
    char *first_img; /* src of the first <img>, as written (maybe relative), or NULL */
};

/* Convert in[0..len) to plain text in the arena. max_out bounds the output
 * in bytes (0 = no bound besides the arena's). in need not be valid UTF-8 or
 * NUL-terminated. Returns 0, or ERR_NOMEM (arena ceiling or malloc). */
int html_text_extract(struct arena *a, const char *in, size_t len, size_t max_out, unsigned flags,
                      struct html_text_out *out);

/* Filling an article from its page. */

enum page_filled {
    PAGE_FILLED_CONTENT = 1 << 0,
    PAGE_FILLED_DESCRIPTION = 1 << 1,
    PAGE_FILLED_IMAGE = 1 << 2,
    PAGE_FILLED_AUTHOR = 1 << 3,
    PAGE_FILLED_PUBLISHED = 1 << 4,
    PAGE_FILLED_LANGUAGE = 1 << 5,
};

/* Fill the gaps of art from its page: content (also when the article's
 * content only repeats its description), description, image, author, the
 * publication time when !dated (the article's source gave none), the
 * language when art has none. What art says otherwise stays. The page's
 * strings are borrowed (they live where pg's do). Returns the
 * PAGE_FILLED_* bits of what changed. */
unsigned page_fill(struct article *art, const struct extracted_page *pg, bool dated);

/* The two-letter code of a page's or feed's language tag ("en-US",
 * "pt_BR", "de"), as vocab_language_code writes it; false ("" written)
 * for anything else. */
bool page_language(const char *tag, char out[3]);

#endif
