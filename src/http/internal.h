/* Private to src/http/: the pieces server.c stitches together (listen.c:
 * address parsing and the bound socket; gzip.c: Accept-Encoding and
 * compression; accesslog.c: the access log line with keys masked).
 * Nothing outside src/http/ includes it, except tests/unit/test_http.c. */
#ifndef NEWSD_HTTP_INTERNAL_H
#define NEWSD_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/netpolicy.h"

/* Bodies shorter than this are sent as they are: gzip's 18-byte frame and
 * the CPU spent are not worth it. */
#define HTTP_GZIP_MIN_BYTES 1024

/* Longest request target written to the access log (util/log lines are
 * 2 KiB; the status, id and note must survive); longer ones are cut
 * (after masking, so a cut never reveals part of a key). */
#define HTTP_LOG_TARGET_MAX 1024

/* headers.c: the request headers the server reads (fuzz/fuzz_headers.c). */

/* The body size a Content-Length value announces: plain digits, spaces and
 * tabs around them allowed; -1 for NULL, anything else, or an absurd
 * number (over 2^40). */
long long http_content_length_parse(const char *cl);

/* Whether a Content-Length value announces a body (a number above zero
 * after any leading zeros), however the rest of it reads: such a request is
 * refused or its body read, never taken for one without a body. */
bool http_content_length_announces(const char *cl);

/* The client behind trusted proxies, from an X-Forwarded-For value (the
 * addresses each proxy saw, the nearest last) received from a trusted
 * peer: walking from the right while the hop is a trusted proxy, the first
 * one that is not is the client (a client cannot forge what our own
 * proxies appended). client holds the peer's address and is replaced by
 * each hop read; an entry that is not an address ends the walk at the hop
 * before it. */
void http_forwarded_client(char client[NETPOLICY_ADDR_TEXT], const char *xff,
                           const struct netpolicy *trusted);

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
    const char *client; /* the peer's address ("-" when unknown) */
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
    int64_t key_id;   /* > 0: the key's id */
};
/* In util/log's format. Text: "http CLIENT METHOD TARGET STATUS bytes=N [gz=N] us=N id=ID [key=N]
 * [note] [why]". JSON: {"msg":"http","client":…,"method":…,"target":…,
 * "status":N|null,"bytes":N,"sent":N,"us":N,"id":…,"key":N|null,
 * "note":…|null}, written through util/log as one line. */
void http_accesslog_write(const struct http_accesslog_entry *e);

/* ---- raw NUL bytes libmicrohttpd 0.9.x drops (headnul.c) ------------------
 * It parses the request head in place and ends the target and each header
 * value at a raw NUL byte, dropping the rest of it; these tell, from what is
 * left in its buffer, so that such a request can be refused rather than
 * read cut short. With another libmicrohttpd they find nothing (1.0 refuses
 * such requests itself). */

/* Whether the request target held a raw NUL byte. target: the pointer
 * MHD's URI callback got (into its buffer), len its strlen there; version:
 * the pointer its request callback got. */
bool http_target_nul(const char *target, size_t len, const char *version);

/* A scan of the header fields of one head, fed in MHD's order (the order of
 * the lines). head..head+len: the request head in MHD's buffer, from the
 * method to the end of the empty line. */
struct http_nul_scan {
    const char *head, *end;
    const char *prev_name; /* field waiting for the next line start, or NULL */
    const char *prev_end;  /* end of its value */
    const char *found;     /* name of the first field cut at a NUL */
    bool broken;           /* the head is not laid out as expected */
};
void http_nul_scan_init(struct http_nul_scan *s, const char *head, size_t len);
void http_nul_scan_field(struct http_nul_scan *s, const char *name, const char *value, size_t len);
/* The name of the first field whose value held a NUL, or NULL. */
const char *http_nul_scan_done(struct http_nul_scan *s);

struct MHD_Connection;
struct MHD_Response;

/* ---- streamed bodies (stream.c) ---------------------------------------------- */

/* Bytes libmicrohttpd asks the content reader for at most per call. */
#define HTTP_STREAM_BLOCK (16 * 1024)

/* The server's open streams, so that stopping can end them. */
struct http_stream;
struct http_streams {
    pthread_mutex_t lock;
    struct http_stream *head;
    size_t n;
    bool stopping; /* streams made from now on end at once */
};
void http_streams_init(struct http_streams *reg);
void http_streams_release(struct http_streams *reg); /* after every stream is done */

/* The libmicrohttpd response that sends st on conn (chunked, as written);
 * registers st and takes the server's reference (dropped when MHD frees
 * the response). NULL on OOM, nothing taken. */
struct MHD_Response *http_stream_response(struct http_streams *reg, struct http_stream *st,
                                          struct MHD_Connection *conn);

/* End every open stream, dropping what they hold unsent (the server
 * stops); streams made after this end at once. */
void http_streams_stop(struct http_streams *reg);

/* http_nul_scan over the headers of conn, whose request head starts at head
 * (the method pointer MHD's request callback got). Call once the headers
 * are in; the name returned lives as long as the request. */
const char *http_conn_nul_header(struct MHD_Connection *conn, const char *head);

#endif
