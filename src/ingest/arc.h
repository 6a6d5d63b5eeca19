/* The record lines of ARC files, the Internet Archive's format before WARC
 * (read by ingest/warc.h's reader, which tells ARC from WARC per record).
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
#ifndef NEWSD_INGEST_ARC_H
#define NEWSD_INGEST_ARC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
