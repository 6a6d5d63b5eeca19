/* HTTP server glue over libmicrohttpd. Knows nothing of NewsAPI: it parses
 * requests into struct http_request, calls one handler, and writes its
 * struct http_response, adding what every response gets (request id,
 * gzip when accepted and worthwhile, default CORS, access log line).
 * OPTIONS preflights are answered here (204 + CORS headers) without calling
 * the handler. HEAD is answered like GET without a body. */
#ifndef NEWSD_HTTP_HTTP_H
#define NEWSD_HTTP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/netpolicy.h"

struct http_server;
struct http_conn; /* opaque: the connection a request came on */

struct http_request {
    const char *method;     /* "GET", "HEAD", ... */
    const char *path;       /* raw path (not decoded), without the query string */
    const char *query;      /* raw query string after '?', "" when none */
    const char *request_id; /* 16 hex characters, unique per process run */
    size_t url_bytes;       /* length of the request target (path + '?' + query) */
    size_t header_bytes;    /* total bytes of header names and values */
    int64_t received_ms;    /* util/clock ms when the request line was read: a
                             * time budget counts from here, queue wait included */
    bool body_announced;    /* the headers announce a body (Content-Length > 0
                             * or Transfer-Encoding) that is not read (see
                             * http_config.body_limit). No byte of it is read:
                             * the handler is called at once, on the I/O thread,
                             * and must answer without blocking (405/413); the
                             * connection is closed after the answer. */
    const char *body;       /* a body read whole (http_config.body_limit),
                             * NUL-terminated; NULL when none */
    size_t body_len;
    const char *client; /* the client's address: the peer's, or from
                         * X-Forwarded-For when the peer is a trusted proxy */
    struct http_conn *conn;
    /* With no conn (a request built by a test or a fuzz harness, never by
     * the server): the headers, NAME, VALUE, NAME, VALUE, ..., NULL; NULL
     * for none. http_request_header reads them as it reads a connection's. */
    const char *const *headers;
    /* A raw NUL byte ends the target and header values libmicrohttpd hands
     * over (the rest is dropped); the server tells the handler, which
     * would otherwise read them cut short: */
    bool target_nul;        /* the request target held a raw NUL byte */
    const char *nul_header; /* name of a header whose value held one, or NULL */
};

#define HTTP_MAX_HEADERS 8

struct http_header {
    const char *name; /* static string */
    char *value;      /* malloc'd; freed by the server */
};

struct http_stream;

struct http_response {
    int status;
    const char *content_type; /* static string; NULL = application/json; charset=utf-8 */
    char *body;               /* malloc'd; taken by the server (may be NULL) */
    size_t len;
    /* Non-NULL: the body is this stream (http_stream_new), sent as it is
     * written, never gzipped; body must then be NULL. Like body, it is
     * taken by the server: setting it hands over one reference (a writer
     * that goes on writing keeps another, http_stream_ref). */
    struct http_stream *stream;
    struct http_header headers[HTTP_MAX_HEADERS];
    size_t n_headers;
    const char *log_note; /* optional static text appended to the access log line */
    size_t log_path_len;  /* > 0: the access log shows only this many bytes of the
                           * path, then "/..." (a 404's unknown segments may be
                           * anything, a key among them) */
    int64_t log_key_id;   /* > 0: the id of the key that made the request (never
                           * the key), for the access log */
};

/* Value of a request header (case-insensitive name), NULL when absent. */
const char *http_request_header(const struct http_request *r, const char *name);

/* Add a header (value copied). Silently ignored beyond HTTP_MAX_HEADERS. */
void http_response_add_header(struct http_response *resp, const char *name, const char *value);

/* The handler fills resp; it runs on a pool thread, concurrently with others. */
typedef void (*http_handler)(const struct http_request *req, struct http_response *resp, void *ctx);

/* ---- streamed bodies --------------------------------------------------------
 * A response body written over time by any thread (Server-Sent Events):
 * the writer appends, the server sends what is there and parks the
 * connection (libmicrohttpd's suspend, no thread held) while there is
 * nothing, and the next write wakes it. Bytes written and not yet sent are
 * bounded (max_pending): a client too slow to read them is disconnected
 * rather than let the buffer grow. A stream is shared by the writer and
 * the server, each holding a reference; the last release frees it. */

/* A stream with room for max_pending unsent bytes, one reference (the
 * caller's). ERR_NOMEM. */
int http_stream_new(struct http_stream **out, size_t max_pending, struct err *err);

/* Append data[0..len). 0; ERR_FULL when the unsent bytes would pass
 * max_pending (the client is then disconnected and the stream closed);
 * ERR_IO when the stream is closed (the client went, the server stops, or
 * http_stream_end was called). Any thread. */
int http_stream_write(struct http_stream *st, const char *data, size_t len);

/* Bytes written and not yet sent. */
size_t http_stream_pending(struct http_stream *st);

/* Wait until room more bytes fit (unsent + room <= max_pending): for a
 * writer that produces as fast as the client reads (an export) rather
 * than one that must not wait (a live stream, cut off when full). 0 when
 * they fit; ERR_IO when the stream is closed or ended (or room can never
 * fit); ERR_TIMEOUT after timeout_ms without room (the client reads
 * nothing: the caller may check http_stream_open and wait again). */
int http_stream_wait_room(struct http_stream *st, size_t room, int64_t timeout_ms);

/* No more data: the body ends once what was written is sent. */
void http_stream_end(struct http_stream *st);

/* No more data, and the body is broken off once what was written is sent:
 * the connection closes without the chunked body's terminating chunk, so
 * the client sees an incomplete transfer (for a writer that failed after
 * the headers went: its client must not take what it got for the whole). */
void http_stream_fail(struct http_stream *st);

/* Whether writes can still succeed (the client has not gone, the server
 * is not stopping, nobody ended it). A client that closed its connection
 * while nothing was being sent is found here (a system call: call it
 * about once a second per stream, not in a tight loop). */
bool http_stream_open(struct http_stream *st);

/* Another reference to st (returned). */
struct http_stream *http_stream_ref(struct http_stream *st);

/* Drop the caller's reference. NULL: no-op. */
void http_stream_release(struct http_stream *st);

struct http_config {
    const char *listen;       /* "HOST:PORT", "[v6]:PORT" or ":PORT"; port 0 = any free port */
    unsigned threads;         /* 0 = number of cores */
    unsigned max_connections; /* 0 = default (1024) */
    unsigned conn_timeout_s;  /* idle connection timeout; 0 = default (30) */
    bool access_log;          /* one line per request on stderr, in util/log's
                               * format (text or JSON: log_set_format) */
    /* Peers whose X-Forwarded-For names the client (NULL or empty: none;
     * borrowed, must outlive the server). */
    const struct netpolicy *trusted_proxies;
    /* The bytes of body a request to path (raw, without the query) with
     * method may send: a body with a Content-Length up to it is read whole
     * before the handler runs (http_request.body); a longer one, a chunked
     * one, or any body where it answers 0 is not read at all
     * (http_request.body_announced). NULL: no request has a body. Called
     * on the I/O thread with the handler's ctx; must not block. */
    size_t (*body_limit)(const char *method, const char *path, void *ctx);
};

/* Bind and start serving. On success *out is running and the bound port can
 * be read with http_server_port. */
int http_server_start(struct http_server **out, const struct http_config *cfg, http_handler handler,
                      void *ctx, struct err *err);

/* The port actually bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);

/* Graceful stop: stop accepting, end open streams (what they hold unsent is
 * dropped), let in-flight requests finish, free. */
void http_server_stop(struct http_server *s);

#endif
