/* The roof of ingest/ (docs/architecture.md): what its three rooms share.
 * The rooms are ingest/feeds (feeds.h: feeds, the crawler, OPML),
 * ingest/pages (pages.h: the HTML front end, page extraction) and
 * ingest/imports (imports.h: JSONL, NewsAPI responses, sources, WARC/ARC);
 * feeds and imports use pages, every room uses this roof, the roof uses no
 * room. Here: the normalisation every article goes through before the
 * store, whichever room it came from: canonical URL and domain, publish
 * time, language (given, else the catalogue source's, else detected); a
 * source id the catalogue lacks is registered as a non-headline catalogue
 * entry (API.md §8). And the field readers more than one room needs: an
 * absolute http(s) URL from a reference, a date as publishers write it. */
#ifndef NEWSD_INGEST_INGEST_H
#define NEWSD_INGEST_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

struct ingest_options {
    bool headlines;       /* mark imported articles as live headlines */
    const char *country;  /* 2 letters or NULL */
    const char *category; /* one of the 7 categories or NULL */
    const char *language; /* force a language, or NULL */
    int64_t now;          /* fetch/import time (0 = time(NULL)) */
    FILE *report;         /* where bad lines are reported (NULL = stderr) */
    FILE *progress;       /* NULL, or "committed N" after each committed batch, N =
                           * articles of the file stored so far (acknowledged) */
    unsigned workers;     /* WARC imports: page extraction threads (0 = 2) */
    int64_t progress_ms;  /* WARC imports: a progress line this often (0 = 5 s) */
};

struct ingest_stats {
    size_t imported;       /* new articles */
    size_t updated;        /* replaced articles */
    size_t skipped;        /* bad lines or articles */
    size_t images_dropped; /* urlToImage values stored as null: not absolute http(s) URLs */
};

/* *dst = *src with every string copied into a (category is a constant and
 * stays shared). ERR_NOMEM. */
int ingest_article_copy(struct arena *a, struct article *dst, const struct article *src);

/* Canonical form of an absolute http(s) URL (duplicate key): scheme and host
 * lower case, default port, fragment and tracking parameters (utm_*, fbclid,
 * gclid, ...) dropped. *domain_out = host lower case without "www.".
 * ERR_INVALID when url is not an absolute http(s) URL. */
int ingest_url_canonical(struct arena *a, const char *url, char **canon_out, char **domain_out);

/* s[0..n) without the ASCII blanks (space, \t, \n, \r, \f, \v) around it. */
void ingest_trim(const char **s, size_t *n);

/* "http://" or "https://" with a host. */
bool ingest_url_is_http(const char *url);

/* s[0..n) trimmed, spaces written %20, and resolved against base (when it
 * is not absolute already; base NULL or not http(s): no resolution): an
 * absolute http(s) URL with a lower-case scheme in the arena, or NULL (not
 * http(s), not resolvable, control characters, invalid UTF-8, longer than
 * max bytes before or after resolution). *rc = ERR_NOMEM when the arena
 * is full. What feeds' links and pages' references both go through. */
const char *ingest_url_absolute(struct arena *a, const char *s, size_t n, const char *base,
                                size_t max, int *rc);

/* A date written as RFC 822 or ISO 8601 (surrounding blanks allowed; at
 * most 128 bytes), also with its weekday and month in Portuguese, Spanish,
 * French, German or Italian ("Seg, 24 Set 2018 19:42:40 -0300"), as UTC
 * seconds. False when it is none. */
bool ingest_date_parse(const char *s, size_t n, int64_t *out);

/* Fill the derived fields of an article parsed from any input (canonical url,
 * domain, clamped time, language, source id) — the one normalisation. Also
 * the one gate for image URLs: url_to_image becomes NULL unless it is an
 * absolute http(s) URL with a host (no javascript:, data:, relative...). */
int ingest_normalize(struct store *s, struct arena *a, struct article *art,
                     const struct ingest_options *opt, struct err *err);

#endif
