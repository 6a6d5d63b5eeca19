/* Getting articles and sources into the store: imports of JSONL or saved
 * NewsAPI responses, sources catalogue imports, and the normalisation every
 * article goes through (shared with the feed crawler): canonical URL and
 * domain, publish time, language (given, else the catalogue source's, else
 * detected); a source id the catalogue lacks is registered as a
 * non-headline catalogue entry (API.md §8). */
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

/* Import a file ("-" = stdin): JSONL of NewsAPI-shaped articles (one per
 * line), or one NewsAPI response object with an "articles" array. A bad line
 * or article is reported with its line (or array index) and skipped; the rest
 * is imported in batched transactions. An urlToImage that ingest_normalize
 * drops is reported the same way and counted. Returns 0 unless the file
 * cannot be read or the store fails. */
int ingest_import_file(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err);

/* Import the articles of a WARC file (plain or gzip, "-" = stdin;
 * ingest/warc.h): each HTML response with status 200 whose page holds an
 * article (ingest/extract.h) is normalised and upserted like an imported
 * article (warc_import.c says how its fields are found). Progress lines and
 * a last "warc FILE: done: ..." line (records, articles, skipped by reason)
 * go to opt->report (else stderr), as do malformed records, with their
 * offset; they are skipped. Streams in bounded memory. Returns 0 unless the
 * file cannot be read or the store fails. */
int ingest_import_warc(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err);

/* *dst = *src with every string copied into a (category is a constant and
 * stays shared). ERR_NOMEM. */
int ingest_article_copy(struct arena *a, struct article *dst, const struct article *src);

/* ---- pages ------------------------------------------------------------ */

struct extracted_page; /* ingest/extract.h */

enum ingest_filled {
    INGEST_FILLED_CONTENT = 1 << 0,
    INGEST_FILLED_DESCRIPTION = 1 << 1,
    INGEST_FILLED_IMAGE = 1 << 2,
    INGEST_FILLED_AUTHOR = 1 << 3,
    INGEST_FILLED_PUBLISHED = 1 << 4,
    INGEST_FILLED_LANGUAGE = 1 << 5,
};

/* Fill the gaps of art from its page: content (also when the article's
 * content only repeats its description), description, image, author, the
 * publication time when !dated (the article's source gave none), the
 * language when art has none. What art says otherwise stays. The page's
 * strings are borrowed (they live where pg's do). Returns the
 * INGEST_FILLED_* bits of what changed. */
unsigned ingest_page_fill(struct article *art, const struct extracted_page *pg, bool dated);

/* The two-letter code of a page's or feed's language tag ("en-US",
 * "pt_BR", "de"), as ingest_language_code writes it; false ("" written)
 * for anything else. */
bool ingest_page_language(const char *tag, char out[3]);

/* Import a sources catalogue: a NewsAPI sources response ({"sources":[...]})
 * or JSONL of source objects; extra keys popularity (number) and headlines
 * (bool, default true). Values stored verbatim. *n_out = sources stored. */
int ingest_sources_import(struct store *s, const char *path, size_t *n_out, struct err *err);

/* Canonical form of an absolute http(s) URL (duplicate key): scheme and host
 * lower case, default port, fragment and tracking parameters (utm_*, fbclid,
 * gclid, ...) dropped. *domain_out = host lower case without "www.".
 * ERR_INVALID when url is not an absolute http(s) URL. */
int ingest_url_canonical(struct arena *a, const char *url, char **canon_out, char **domain_out);

/* Fill the derived fields of an article parsed from any input (canonical url,
 * domain, clamped time, language, source id) — the one normalisation. Also
 * the one gate for image URLs: url_to_image becomes NULL unless it is an
 * absolute http(s) URL with a host (no javascript:, data:, relative...). */
int ingest_normalize(struct store *s, struct arena *a, struct article *art,
                     const struct ingest_options *opt, struct err *err);

#endif
