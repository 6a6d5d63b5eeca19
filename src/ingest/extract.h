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
#ifndef NEWSD_INGEST_EXTRACT_H
#define NEWSD_INGEST_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

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

#endif
