/* The imports room of ingest/ (docs/architecture.md): files into the
 * store: JSONL of articles and saved NewsAPI responses, sources
 * catalogues (ingest_import_file, ingest_sources_import), and web archives
 * (ingest_import_warc, on the WARC/ARC reader warc_). Every article goes
 * through the one normalisation (ingest/ingest.h); pages of web archives
 * through ingest/pages. Private: imports_internal.h (the JSON mapping, the
 * import pipeline, ARC record lines). */
#ifndef NEWSD_INGEST_IMPORTS_H
#define NEWSD_INGEST_IMPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ingest/ingest.h"
#include "util/err.h"

/* Imports. */

/* Import a file ("-" = stdin): JSONL of NewsAPI-shaped articles (one per
 * line), or one NewsAPI response object with an "articles" array. A bad line
 * or article is reported with its line (or array index) and skipped; the rest
 * is imported in batched transactions. An urlToImage that ingest_normalize
 * drops is reported the same way and counted. Returns 0 unless the file
 * cannot be read or the store fails. */
int ingest_import_file(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err);

/* Import the articles of a WARC file (plain or gzip, "-" = stdin;
 * ingest/imports/imports.h): each HTML response with status 200 whose page holds an
 * article (ingest/pages/pages.h) is normalised and upserted like an imported
 * article (warc_import.c says how its fields are found). Progress lines and
 * a last "warc FILE: done: ..." line (records, articles, skipped by reason)
 * go to opt->report (else stderr), as do malformed records, with their
 * offset; they are skipped. Streams in bounded memory. Returns 0 unless the
 * file cannot be read or the store fails. */
int ingest_import_warc(struct store *s, const char *path, const struct ingest_options *opt,
                       struct ingest_stats *stats, struct err *err);

/* Import a sources catalogue: a NewsAPI sources response ({"sources":[...]})
 * or JSONL of source objects; extra keys popularity (number) and headlines
 * (bool, default true). Values stored verbatim. *n_out = sources stored. */
int ingest_sources_import(struct store *s, const char *path, size_t *n_out, struct err *err);

/* A streaming reader of web archives, plain or gzip-compressed with any
 * number of members (Common Crawl and Heritrix write one member per
 * record), in constant memory: one record's block at a time, at most
 * WARC_MAX_BLOCK bytes of it kept. It reads, telling them apart record by
 * record (a file may even mix them):
 *
 *   WARC/1.0, WARC/1.1  ISO 28500:2009 and ISO 28500:2017
 *   WARC/0.17, 0.18     the drafts Heritrix 1.x and 2.x wrote (2008): the
 *                       same record layout (version line, named fields,
 *                       Content-Length bytes of block, CRLF CRLF) and the
 *                       same record types as 1.0; WARC-Target-URI may be
 *                       in angle brackets, as in 1.0 (removed here)
 *   ARC v1 and v2       the Internet Archive's format before WARC
 *                       (ingest/imports/imports_internal.h): records read as WARC ones, the
 *                       version block as "warcinfo", a document holding an
 *                       HTTP response as "response", any other as
 *                       "resource" with the ARC line's content type
 *
 * Older drafts (WARC/0.9, 0.10: the fields on the version line) are
 * reported, not read. Every byte is hostile. A record that cannot be read
 * (no WARC or ARC line, a header without Content-Length, a bad ARC field,
 * corrupt gzip data, a block cut short by the end of the file) is reported
 * with its offset and why, and skipped: the reader finds the next record
 * (the next gzip member, or the next line that opens one) and goes on.
 * For `response` records whose block is an HTTP response, the HTTP head is
 * parsed and the payload decoded (chunked transfer-encoding, gzip or
 * deflate content-encoding), bounded by WARC_MAX_BODY; for `resource`
 * records the block is the payload and the record's Content-Type its type.
 * Not thread-safe: one reader belongs to one thread. */

#define WARC_MAX_HEADER (64 * 1024)       /* bytes of a WARC or HTTP head */
#define WARC_MAX_BLOCK ((size_t)32 << 20) /* block bytes kept; longer ones are skipped */
#define WARC_MAX_BODY ((size_t)8 << 20)   /* decoded HTTP payload bytes kept */

struct warc_reader;

/* The format a record was read in. */
enum warc_format {
    WARC_FORMAT_0_17,
    WARC_FORMAT_0_18,
    WARC_FORMAT_1_0,
    WARC_FORMAT_1_1,
    WARC_FORMAT_ARC_1,
    WARC_FORMAT_ARC_2,
    WARC_FORMAT_COUNT
};

/* One record, valid until the next warc_next or warc_close. Strings are
 * NUL-terminated header values as written (trimmed), NULL when absent. */
struct warc_record {
    uint64_t offset;         /* where the record starts: byte offset in the
                              * uncompressed stream (= in the file when plain) */
    enum warc_format format; /* what the record was read as */
    const char *type;        /* WARC-Type: "response", "resource", "warcinfo", ...
                              * (ARC records: see the top of this file) */
    const char *target_uri;  /* WARC-Target-URI ("<...>" of WARC/1.0 removed),
                              * ARC's URL */
    const char *date;        /* WARC-Date; NULL for ARC records */
    int64_t date_s;          /* WARC-Date (ARC: Archive-date) as UTC seconds;
                              * 0 when unreadable */
    const char *block;       /* the record's block (Content-Length bytes) */
    size_t block_len;
    /* A response record whose block is an HTTP response (http_status > 0),
     * or a resource record (http_status 0, the record's Content-Type): */
    int http_status;
    const char *content_type; /* HTTP Content-Type (resource: the record's), or NULL */
    const char *charset;      /* its charset parameter (unquoted), or NULL */
    const char *body;         /* payload: dechunked and decompressed */
    size_t body_len;
    bool body_truncated; /* longer than WARC_MAX_BODY: cut there */
};

enum warc_next_result {
    WARC_END = 0,    /* no more records */
    WARC_RECORD = 1, /* *rec holds a record */
    WARC_BAD = 2,    /* a record was skipped: rec->offset says where, err why */
};

/* Open path ("-" = stdin), telling gzip from plain by its first bytes. */
int warc_open(struct warc_reader **out, const char *path, struct err *err);

/* Read from an open stream (not closed by warc_close). */
int warc_open_stream(struct warc_reader **out, FILE *f, struct err *err);

/* The next record: WARC_RECORD, WARC_BAD (skipped, with err and
 * rec->offset; call again), WARC_END, or a negative ERR_IO / ERR_NOMEM. */
int warc_next(struct warc_reader *r, struct warc_record *rec, struct err *err);

void warc_close(struct warc_reader *r);

/* "WARC/1.0", "ARC v1", ...: what the summaries print. */
const char *warc_format_name(enum warc_format f);

/* Decode an HTTP response held in block[0..n) into the http_* and body
 * fields of rec (the reader does it for response records; exposed for the
 * tests). Returns 0, ERR_PARSE when it is no HTTP response, ERR_NOMEM. The
 * body points into r's buffers or into block. */
int warc_http_decode(struct warc_reader *r, const char *block, size_t n, struct warc_record *rec);

#endif
