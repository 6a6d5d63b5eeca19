/* Private to the imports room (import.c, article_json.c, sources_import.c,
 * warc.c, arc.c, warc_import.c) and its tests and fuzz harnesses: the
 * store-free mapping of one NewsAPI article JSON object to a struct article,
 * the file helpers imports share, the import pipeline other formats
 * feed (warc_import.c), and ARC record lines (read by warc.c). */
#ifndef NEWSD_INGEST_IMPORTS_INTERNAL_H
#define NEWSD_INGEST_IMPORTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* Bytes import.c reads from its input at a time (tests/unit/test_imports.c
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

/* The record lines of ARC files, the Internet Archive's format before WARC
 * (read by ingest/imports/imports.h's reader, which tells ARC from WARC per record).
 *
 * An ARC file (Burner and Kahle, "Arc File Format", Internet Archive,
 * 1996, version 1.0; archive.org/web/researcher/ArcFileFormat.php) is a
 * version block, then documents, each a newline, a URL-record line and
 * that line's Archive-length bytes of what the server sent (for HTTP the
 * status line, the head and the payload):
 *
 *   filedesc://IA-001102.arc 0.0.0.0 19960923142103 text/plain 76
 *   1 0 Alexa Internet
 *   URL IP-address Archive-date Content-type Archive-length
 *
 *   http://example.com/a.html 192.0.2.1 19961104142103 text/html 202
 *   HTTP/1.0 200 OK ...
 *
 * The version block is itself a record: its line starts "filedesc://" and
 * its length counts the lines after it. Version 1 lines have the 5 fields
 * above, space-separated (a URL holds no space: writers escape them);
 * version 2 lines have 10: URL IP-address Archive-date Content-type
 * Result-code Checksum Location Offset Filename Archive-length. The date is
 * YYYYMMDDhhmmss in UTC. Heritrix's ARCWriter writes version 1 (its
 * version block says "1 1", the minor version, and holds XML metadata),
 * with one gzip member per record in .arc.gz files. */

/* One URL-record line, as views into the line. */
struct arc_line {
    const char *url;
    size_t url_len;
    const char *ctype; /* Content-type as written ("text/html", "no-type", ...) */
    size_t ctype_len;
    int64_t date_s;  /* Archive-date as UTC seconds */
    uint64_t length; /* Archive-length: bytes of the document after the line */
    int version;     /* 1 (5 fields) or 2 (10 fields) */
};

/* Read s[0..n) (one line, without its newline) as a URL-record line.
 * Returns 0, or ERR_PARSE with *why saying which field is wrong (a static
 * string). Allocates nothing. */
int arc_line_parse(struct arc_line *out, const char *s, size_t n, const char **why);

/* Whether s[0..n) looks meant as a URL-record line ("scheme:", then at
 * least four more fields), so that a parse error is worth reporting as
 * ARC's. */
bool arc_line_looks(const char *s, size_t n);

#endif
