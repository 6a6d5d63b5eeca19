/* Private to the import side of ingest/ (import.c, article_json.c,
 * normalize.c, sources_import.c) and its tests and fuzz harness: the
 * store-free mapping of one NewsAPI article JSON object to a struct article,
 * and the file helpers imports share. */
#ifndef NEWSD_INGEST_IMPORT_INTERNAL_H
#define NEWSD_INGEST_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "ingest/ingest.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* Bytes import.c reads from its input at a time (tests/unit/test_import.c
 * puts lines across this boundary). */
#define IMPORT_READ_BYTES (64 * 1024)
/* Largest whole-file JSON (a NewsAPI response or sources catalogue). */
#define INGEST_MAX_FILE_BYTES ((size_t)256 * 1024 * 1024)
/* Longest source id kept; a longer one is treated as absent. */
#define INGEST_MAX_SOURCE_ID_BYTES 128

/* Map one article object (NewsAPI shape) into *out, strings copied into a.
 * Keys: source{id,name}, author, title, description, url, urlToImage,
 * publishedAt, content; and the extra labels of newsd's JSONL imports:
 * country (2 letters), category (one of the 7), language (2 letters, "se"
 * read as "sv"), headline (bool). A string field holding another JSON type
 * counts as null; an extra label with a bad value is ignored. Fields longer
 * than LIMIT_FIELD_BYTES are cut at a UTF-8 boundary. publishedAt (ISO 8601
 * or RFC 822) missing, null or not a string leaves published_at 0
 * (ingest_normalize then uses the import time); a string that is no date
 * is an error.
 * Errors: ERR_INVALID (url or title missing, empty or not a string; url not
 * absolute http(s); publishedAt unreadable; not an object) with err naming
 * the field, ERR_NOMEM. Needs no store: the fuzz harness calls it alone. */
int ingest_article_from_json(struct arena *a, const json_t *obj, struct article *out,
                             struct err *err);

/* The canonical two-letter code of an article language: lower case, "se"
 * (the sources catalogue's spelling of Swedish) becomes "sv". Writes "" and
 * returns false when s is not two ASCII letters. */
bool ingest_language_code(const char *s, char out[3]);

/* True when s is one of the seven categories (exact, lower case). */
bool ingest_category_known(const char *s);

/* Where import problems go: opt's report stream, else stderr. One line
 * each, "line N: reason" style, formatted by the caller. */
void ingest_report(FILE *report, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the import pipeline, for other formats (warc_import.c) ---------------
 * ingest_import_run starts the writer thread, calls produce(c, arg) on the
 * calling thread, and returns once everything produce added is committed (or
 * the first failure). Inside produce, each article goes through
 * ingest_import_article: its strings are copied (the caller's may live
 * anywhere), it is normalised and batched; the batches are committed in
 * order, so what is stored is always a prefix of what was added. */
struct import_ctx;

int ingest_import_run(struct store *s, const struct ingest_options *opt, struct ingest_stats *stats,
                      struct err *err, int (*produce)(struct import_ctx *c, void *arg), void *arg);

/* Add one article (copied). An article normalisation rejects is reported
 * as "where: reason" and counted skipped (returns 0); else 0 or the
 * store's or memory's failure. */
int ingest_import_article(struct import_ctx *c, const struct article *art, const char *where);

/* Count an item the producer skipped (it reports why itself). */
void ingest_import_skip(struct import_ctx *c);

/* Where the producer reports problems and progress. */
FILE *ingest_import_report(struct import_ctx *c);

/* The store being imported into (for catalogue look-ups). */
struct store *ingest_import_store(struct import_ctx *c);

#endif
