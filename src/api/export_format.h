/* The lines of an export (docs/api.md, "Export: every match in a file"):
 * one article as an NDJSON line or a CSV record (RFC 4180), with the
 * cursor that resumes the export after it. Pure functions onto a buffer:
 * unit-tested (tests/unit/test_api_export_format.c).
 *
 * Both carry NewsAPI's article fields with `content` whole (the page's
 * 200-character cut is for pages, not for a copy to take away), then the
 * story id (as /v2/everything's dedupe=true writes it), then the cursor. Every string comes out as
 * valid UTF-8 (a stored byte that is not becomes U+FFFD, as in the JSON pages). */
#ifndef NEWSD_API_EXPORT_FORMAT_H
#define NEWSD_API_EXPORT_FORMAT_H

#include <stddef.h>

#include "store/store.h"
#include "util/buf.h"

enum api_export_format {
    API_EXPORT_NDJSON,
    API_EXPORT_CSV,
};

/* The Content-Type of a format's body. */
const char *api_export_content_type(enum api_export_format f);

/* What a format's body starts with: CSV's header record (the column names
 * below), nothing for NDJSON. */
void api_export_head(struct buf *out, enum api_export_format f);

/* One article, ended by its line break (LF for NDJSON, CRLF for CSV).
 * cursor: the cursor that goes on after it (api/cursor.h), NUL-terminated.
 *
 * NDJSON: {"source":{"id":…,"name":…},"author":…,"title":…,"description":…,
 * "url":…,"urlToImage":…,"publishedAt":…,"content":…,"storyId":…,"cursor":…}
 * CSV: sourceId,sourceName,author,title,description,url,urlToImage,
 * publishedAt,content,storyId,cursor; storyId is a->story_id in decimal; a null is an empty field
 * (CSV has no null), a field holding a comma, a double quote, CR or LF is quoted with its quotes
 * doubled. No spreadsheet-formula guard: a leading = + - @ is kept, so every field reads back
 * exactly (docs/api.md says why). */
void api_export_article(struct buf *out, enum api_export_format f, const struct article *a,
                        const char *cursor);

/* One CSV field (s[0..n), quoted when it must be) onto out; NULL: empty. */
void api_export_csv_field(struct buf *out, const char *s, size_t n);

#endif
