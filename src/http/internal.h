/* Private to src/http/: the pieces server.c stitches together (listen.c:
 * address parsing and the bound socket; gzip.c: Accept-Encoding and
 * compression; accesslog.c: the access log line with keys masked).
 * Nothing outside src/http/ includes it, except tests/unit/test_http.c. */
#ifndef NEWSD_HTTP_INTERNAL_H
#define NEWSD_HTTP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Bodies shorter than this are sent as they are: gzip's 18-byte frame and
 * the CPU spent are not worth it. */
#define HTTP_GZIP_MIN_BYTES 1024

/* Longest request target written to the access log (util/log lines are
 * 2 KiB; the status, id and note must survive); longer ones are cut
 * (after masking, so a cut never reveals part of a key). */
#define HTTP_LOG_TARGET_MAX 1024

/* Parse spec ("HOST:PORT", "[V6]:PORT", ":PORT"; port 0 = any free port),
 * bind and listen. *out_fd is a non-blocking, close-on-exec listening
 * socket; *out_port the port actually bound. ERR_INVALID for a malformed
 * spec, ERR_IO when the name does not resolve or no address can be bound. */
int http_listen_open(int *out_fd, uint16_t *out_port, const char *spec, struct err *err);

/* Whether an Accept-Encoding value lets us send gzip: "gzip", "x-gzip" or
 * "*" with a q-value above zero (an explicit gzip entry beats "*").
 * NULL or malformed: false, identity is always acceptable. */
bool http_gzip_accepted(const char *accept_encoding);

/* gzip in[0..len). *out is a malloc'd gzip member of *out_len bytes, or
 * NULL when the result would not be smaller than the input (nothing to
 * free then). ERR_NOMEM when zlib or malloc fail. */
int http_gzip_compress(char **out, size_t *out_len, const char *in, size_t len);

/* Write path[?query] into out (cap bytes, always NUL-terminated) with the
 * value of every parameter named apikey (case-insensitive, after
 * URL-decoding the name, as the API layer decodes it) replaced by "***",
 * wherever it stands: in the query, or in the path after a '&' or ';'
 * (clients that lost their '?'). path_len > 0 keeps only that many bytes of
 * the path, followed by "/...". Every byte outside printable ASCII, and
 * the backslash, is written as \xHH, so that no request can forge what a
 * terminal shows. Longer results are cut and end in "...". Returns the
 * length written. */
size_t http_accesslog_target(char *out, size_t cap, const char *path, size_t path_len,
                             const char *query);

/* Write s into out (cap bytes, always NUL-terminated) with every byte
 * outside printable ASCII, and the backslash, as \xHH; cut to fit. */
size_t http_accesslog_escape(char *out, size_t cap, const char *s);

/* One access log line (log_info). status 0: no response was made by us
 * (the client went away, timed out, or MHD answered a malformed request
 * itself); why then says what happened. */
struct http_accesslog_entry {
    const char *method; /* "-" when unknown */
    const char *path;
    size_t path_len; /* > 0: log only this much of the path (http_accesslog_target) */
    const char *query;
    int status;
    size_t body_bytes; /* the handler's body, before gzip */
    size_t sent_bytes; /* what went on the wire as the body */
    long long micros;  /* from the request line to completion */
    const char *request_id;
    const char *note; /* handler's log_note, or NULL */
    const char *why;  /* completion reason when status is 0, or NULL */
};
void http_accesslog_write(const struct http_accesslog_entry *e);

#endif
