/* The HTTP server (http/http.h) over libmicrohttpd 0.9.75.
 *
 * A request's life: MHD reads the request line and calls on_uri with the
 * raw target, where we allocate its struct req (MHD hands it back as
 * *req_cls) and count it active; on_request sees the headers, reads the
 * body of a request whose path takes one (http_config.body_limit; any
 * other announced body is answered at once, unread), then suspends the
 * connection and puts the request at the end of the work queue; a worker
 * thread takes requests in arrival order, runs the handler, builds the MHD
 * response (gzip included) and resumes the connection; on_request is
 * called again and queues the response; on_completed writes the access
 * log line, frees the req and counts it done.
 *
 * MHD does not call on_completed for every request that reached on_uri:
 * when it gives up on a request itself (its per-connection pool ran out,
 * say), the request is silently dropped. So each connection carries a
 * small struct conn_state (MHD's socket context, made and freed by
 * on_connection) that knows the request in progress; when the connection
 * closes with a request on_completed never saw, on_connection finishes it
 * (log line, free, uncount). The active count never drifts and stop can
 * wait on it.
 *
 * MHD also splits the query string into a list of its own, one record of
 * its pool per '&': a URL of a few thousand '&' ran the pool out, and the
 * request hung until the idle timeout (MHD 0.9.75 overwrites its own error
 * state there). We never read MHD's copy of the arguments (the API decodes
 * the raw query itself, see on_uri), so on_uri empties it before MHD
 * splits it: the query costs MHD nothing, and the size limits are the
 * API's, answered with JSON envelopes.
 *
 * Why a queue: MHD's own threads each serve many connections from one
 * event loop, so a handler running there holds up every connection of its
 * loop, whatever their arrival order. Measured with 1,000 connections on a
 * 1 M-article store (docs/reliability.md): p99 12 s and 3.8 % of requests
 * over wrk's 30 s timeout with handlers on the event loops; one I/O thread
 * and workers fed first come, first served make the wait every client's
 * share of the same throughput. */
#include "http/http.h"
#include "http/internal.h"

#include <microhttpd.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

#define HTTP_DEFAULT_MAX_CONNECTIONS 1024
#define HTTP_DEFAULT_TIMEOUT_S 30
/* One client may hold a quarter of the default pool; more is an abuser. */
#define HTTP_PER_IP_CONNECTIONS 256
/* MHD keeps the whole request head and its parsed header list in this
 * per-connection pool. The API's limits (8 KiB URL, 16 KiB headers, 500
 * header lines) must fit with room to spare, so that a request just over
 * them still reaches the handler and gets its JSON 414/431 (measured: an
 * 8 KiB URL with one 40 KiB header line does); more lines get MHD's own 431,
 * which is acceptable (Apache's default allows 100). (The query string costs
 * no records: see on_uri.) Not larger: MHD zeroes the whole pool between two
 * requests of a keep-alive connection (MHD_pool_reset), so its size is paid
 * on every request and stays resident per connection. At 384 KiB, sized to
 * fit 16 KiB of 4-byte lines, that memset was 12 % of the server's time on
 * a small page; at 64 KiB one client's loop of a rare word's page ran 11 %
 * faster (docs/performance.md). */
#define HTTP_CONNECTION_MEMORY (64 * 1024)
#define HTTP_STOP_WAIT_MS 10000
#define HTTP_DEFAULT_CONTENT_TYPE "application/json; charset=utf-8"

struct req;

struct http_server {
    struct MHD_Daemon *daemon;
    http_handler handler;
    void *ctx;
    bool access_log;
    const struct netpolicy *trusted_proxies;
    size_t (*body_limit)(const char *method, const char *path, void *ctx);
    uint16_t port;
    atomic_bool stopping;
    atomic_int active;        /* requests between on_uri and on_completed */
    atomic_int reading;       /* of those, the ones whose head is still coming */
    struct MHD_Response *oom; /* built at start: answering OOM must not allocate */
    /* the work queue: requests waiting for a worker, oldest first */
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    struct req *qhead, *qtail;
    bool qstop;
    pthread_t *workers;
    unsigned nworkers;
    struct http_streams streams; /* open streamed responses */
};

enum req_state {
    REQ_READING, /* headers or body still coming */
    REQ_QUEUED,  /* suspended, waiting for or in a worker */
    REQ_READY,   /* resumed with mr (or oom) to queue */
    REQ_DROPPED, /* resumed unanswered: the client left while it waited */
    REQ_ANSWERED,
};

/* MHD's socket context: the request in progress on a connection. Touched
 * on MHD's I/O thread only. */
struct conn_state {
    struct req *current; /* between on_uri and on_completed; NULL between requests */
};

struct req {
    int64_t start_us; /* util/clock: when the request line was read */
    size_t url_bytes;
    const char *query;      /* into target, after the first '?' */
    const char *mhd_target; /* MHD's target in its buffer (on_uri): for target_nul */
    bool target_nul;        /* http_request.target_nul */
    const char *nul_header; /* http_request.nul_header */
    char id[17];
    char method[16];     /* copy for the log; MHD's may be gone by then */
    bool started;        /* the headers-only first call was seen */
    bool body_announced; /* Content-Length > 0 or a Transfer-Encoding, not read */
    char *body;          /* a body being read whole (body_limit); NUL-terminated */
    size_t body_len, body_cap;
    int status; /* 0 until we queue a response */
    size_t body_bytes, sent_bytes;
    const char *note;
    size_t log_path_len;              /* the handler's: log only this much of the path (0: all) */
    int64_t log_key_id;               /* the handler's: the key's id, 0 none */
    char client[NETPOLICY_ADDR_TEXT]; /* the peer's address (or the one behind a trusted proxy) */
    struct conn_state *cs;            /* the connection's state, NULL when it has none */
    /* the queue's: */
    enum req_state state;
    struct MHD_Connection *conn;
    struct req *qnext;
    struct MHD_Response *mr; /* READY: the response; NULL = answer OOM */
    char target[];           /* raw request target; the '?' becomes NUL */
};

/* ---- request ids ---------------------------------------------------------- */

/* A random prefix per process and a counter: unique within a run, and two
 * runs' ids are unlikely to collide in merged logs. */
static uint32_t id_prefix;
static atomic_uint id_counter;
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

static void id_init(void)
{
    if (getrandom(&id_prefix, sizeof id_prefix, GRND_NONBLOCK) != sizeof id_prefix)
        id_prefix = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
}

static void id_next(char out[17])
{
    uint32_t n = (uint32_t)atomic_fetch_add(&id_counter, 1u);
    snprintf(out, 17, "%08" PRIx32 "%08" PRIx32, id_prefix, n);
}

/* ---- the request/response API of http.h --------------------------------- */

const char *http_request_header(const struct http_request *r, const char *name)
{
    /* No connection: a request built by a unit test or a fuzz harness of
     * a handler, with its headers in a list (first match, any case, as
     * libmicrohttpd looks them up). */
    if (!r->conn) {
        for (const char *const *h = r->headers; h && h[0] && h[1]; h += 2)
            if (!strcasecmp(h[0], name))
                return h[1];
        return NULL;
    }
    return MHD_lookup_connection_value((struct MHD_Connection *)r->conn, MHD_HEADER_KIND, name);
}

void http_response_add_header(struct http_response *resp, const char *name, const char *value)
{
    if (resp->n_headers >= HTTP_MAX_HEADERS || !name)
        return;
    /* On OOM the slot keeps a NULL value: the server sees it and answers
     * 500 instead of silently dropping a header (say, a CORS origin). */
    resp->headers[resp->n_headers].name = name;
    resp->headers[resp->n_headers].value = value ? strdup(value) : NULL;
    resp->n_headers++;
}

static void response_release(struct http_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    http_stream_release(resp->stream); /* the one handed over (MHD's is its own) */
    resp->stream = NULL;
    for (size_t i = 0; i < resp->n_headers; i++)
        free(resp->headers[i].value);
    resp->n_headers = 0;
}

/* ---- MHD callbacks ---------------------------------------------------------- */

/* MHD's messages, through our logger (the attribute marks fmt as a
 * pass-through format, as clang -Wformat-nonliteral wants). */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    log_warn("http: %s", line);
}

/* Once stopping, new connections are closed at once rather than served.
 * (Why not MHD_quiesce_daemon: with epoll and a thread pool, quiesce races
 * a worker removing the same listen fd from its epoll set, and the loser
 * calls MHD_PANIC, which aborts; and quiesced connections would sit in the
 * kernel backlog until stop anyway.) */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct http_server *s = cls;
    (void)addr;
    (void)addrlen;
    return atomic_load(&s->stopping) ? MHD_NO : MHD_YES;
}

static struct conn_state *conn_state_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The peer's address as text ("" when unknown). */
static void peer_address(struct MHD_Connection *conn, char *out, size_t cap)
{
    out[0] = '\0';
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)cap);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)cap);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct http_server *s = cls;
    /* Counted even when the allocation below fails: on_completed (or
     * on_connection) runs for this request either way and uncounts it. */
    atomic_fetch_add(&s->active, 1);
    size_t n = strlen(uri);
    /* Empty MHD's view of the query: MHD found the '?' in its own buffer
     * before calling us and splits what follows it once we return. An
     * empty string there gives it nothing to split (see the top). The
     * buffer is MHD's writable read buffer: the const is only the
     * callback's promise to itself. */
    char *mhd_query = strchr(uri, '?');
    struct req *r = calloc(1, sizeof *r + n + 1);
    if (r) {
        r->start_us = clock_mono_us();
        id_next(r->id);
        r->url_bytes = n;
        r->mhd_target = uri;
        memcpy(r->target, uri, n + 1);
        /* API parameters are split and decoded by the handler from the
         * raw query, because MHD's decoding leaves '+' as '+'. */
        char *q = strchr(r->target, '?');
        if (q)
            *q++ = '\0';
        r->query = q ? q : "";
        peer_address(conn, r->client, sizeof r->client);
        r->cs = conn_state_of(conn);
        if (r->cs)
            r->cs->current = r;
        atomic_fetch_add(&s->reading, 1);
    }
    if (mhd_query)
        mhd_query[1] = '\0';
    return r;
}

/* The request's head is in (or it ended): it is no longer only reading. */
static void leave_reading(struct http_server *s, struct req *r)
{
    if (r && r->state == REQ_READING) {
        r->state = REQ_ANSWERED; /* overwritten by the caller where it goes on */
        atomic_fetch_sub(&s->reading, 1);
    }
}

/* Write a request's access log line (if on), free it and count it done.
 * why: how it ended when no response of ours was sent. */
static void req_finish(struct http_server *s, struct req *r, const char *why)
{
    if (r && s->access_log) {
        struct http_accesslog_entry e = {
            .client = r->client[0] ? r->client : "-",
            .method = r->method[0] ? r->method : "-",
            .path = r->target,
            .path_len = r->log_path_len,
            .query = r->query,
            .status = r->status,
            .body_bytes = r->body_bytes,
            .sent_bytes = r->sent_bytes,
            .micros = clock_mono_us() - r->start_us,
            .request_id = r->id,
            .note = r->note,
            .why = why,
            .key_id = r->log_key_id,
        };
        http_accesslog_write(&e);
    }
    leave_reading(s, r);
    if (r && r->cs)
        r->cs->current = NULL;
    if (r)
        free(r->body);
    free(r);
    atomic_fetch_sub(&s->active, 1);
}

/* A connection opens or closes. A request still current when it closes
 * is one MHD gave up on without calling on_completed. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    (void)conn;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        /* NULL on OOM: its requests then simply go without the safety net. */
        *socket_context = calloc(1, sizeof(struct conn_state));
        return;
    }
    struct conn_state *cs = *socket_context;
    if (!cs)
        return;
    if (cs->current)
        req_finish(s, cs->current, "(dropped by libmicrohttpd)");
    free(cs);
    *socket_context = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_server *s = cls;
    struct req *r = *req_cls;
    (void)conn;
    static const char *const why[] = {
        [MHD_REQUEST_TERMINATED_COMPLETED_OK] = NULL,
        [MHD_REQUEST_TERMINATED_WITH_ERROR] = "(error)",
        [MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = "(timeout)",
        [MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = "(shutdown)",
        [MHD_REQUEST_TERMINATED_READ_ERROR] = "(read error)",
        [MHD_REQUEST_TERMINATED_CLIENT_ABORT] = "(client abort)",
    };
    req_finish(s, r, (unsigned)toe < sizeof why / sizeof why[0] ? why[toe] : "(?)");
    *req_cls = NULL;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    size_t *total = cls;
    (void)kind;
    *total += strlen(key) + (value ? strlen(value) : 0);
    return MHD_YES;
}

static enum MHD_Result queue_oom(struct http_server *s, struct MHD_Connection *conn, struct req *r)
{
    if (r) {
        r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        r->note = "out of memory";
    }
    return MHD_queue_response(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, s->oom);
}

/* Headers every response of ours carries. */
static bool add_common_headers(struct http_server *s, struct MHD_Response *mr, struct req *r)
{
    bool ok = MHD_add_response_header(mr, "X-Request-Id", r->id) == MHD_YES;
    /* Caches must not hand a gzip body to a client that did not ask. */
    ok = ok && MHD_add_response_header(mr, MHD_HTTP_HEADER_VARY, "Accept-Encoding") == MHD_YES;
    /* Tell keep-alive clients to go elsewhere while we drain. */
    if (atomic_load(&s->stopping))
        ok = ok && MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
    return ok;
}

static enum MHD_Result respond_preflight(struct http_server *s, struct MHD_Connection *conn,
                                         struct req *r)
{
    static const struct {
        const char *name, *value;
    } cors[] = {
        {"Access-Control-Allow-Origin", "*"},
        {"Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS"},
        {"Access-Control-Allow-Headers",
         "X-Api-Key, Authorization, X-No-Cache, Content-Type, Access-Control-Allow-Origin"},
        {"Access-Control-Max-Age", "86400"},
    };
    struct MHD_Response *mr = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!mr)
        return queue_oom(s, conn, r);
    bool ok = add_common_headers(s, mr, r);
    for (size_t i = 0; ok && i < sizeof cors / sizeof cors[0]; i++)
        ok = MHD_add_response_header(mr, cors[i].name, cors[i].value) == MHD_YES;
    if (!ok) {
        MHD_destroy_response(mr);
        return queue_oom(s, conn, r);
    }
    r->status = MHD_HTTP_NO_CONTENT;
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, mr);
    MHD_destroy_response(mr);
    return ret;
}

/* The headers of a response of ours: its content type, the common ones,
 * CORS unless the handler set its own, then the handler's. */
static bool add_response_headers(struct http_server *s, struct MHD_Response *mr, struct req *r,
                                 const struct http_response *resp, bool own_cors)
{
    bool ok = MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      resp->content_type ? resp->content_type
                                                         : HTTP_DEFAULT_CONTENT_TYPE) == MHD_YES;
    ok = ok && add_common_headers(s, mr, r);
    if (!own_cors)
        ok = ok && MHD_add_response_header(mr, "Access-Control-Allow-Origin", "*") == MHD_YES;
    for (size_t i = 0; ok && i < resp->n_headers; i++)
        ok = MHD_add_response_header(mr, resp->headers[i].name, resp->headers[i].value) == MHD_YES;
    return ok;
}

/* A streamed body: sent as written, never gzipped (compression would
 * hold bytes back until a block fills), never cached, and proxies told
 * not to buffer it (nginx's X-Accel-Buffering). */
static struct MHD_Response *stream_response_build(struct http_server *s,
                                                  struct MHD_Connection *conn, struct req *r,
                                                  const struct http_response *resp, bool own_cors)
{
    struct MHD_Response *mr = http_stream_response(&s->streams, resp->stream, conn);
    if (!mr)
        return NULL;
    r->note = r->note ? r->note : "stream";
    bool ok = add_response_headers(s, mr, r, resp, own_cors);
    ok = ok && MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache") == MHD_YES;
    ok = ok && MHD_add_response_header(mr, "X-Accel-Buffering", "no") == MHD_YES;
    if (!ok) {
        /* Its free callback drops the server's reference. */
        MHD_destroy_response(mr);
        return NULL;
    }
    return mr;
}

/* Turn the handler's response into an MHD one; takes resp->body. NULL on
 * OOM (resp is then released by the caller as usual). */
static struct MHD_Response *response_build(struct http_server *s, struct MHD_Connection *conn,
                                           struct req *r, struct http_response *resp)
{
    bool ok = true, gzipped = false, own_cors = false;
    for (size_t i = 0; i < resp->n_headers; i++) {
        if (!resp->headers[i].value)
            return NULL; /* http_response_add_header ran out of memory */
        if (!strcasecmp(resp->headers[i].name, "Access-Control-Allow-Origin"))
            own_cors = true;
    }
    if (resp->stream)
        return stream_response_build(s, conn, r, resp, own_cors);
    char *body = resp->body;
    size_t len = body ? resp->len : 0;
    r->body_bytes = len;
    if (len >= HTTP_GZIP_MIN_BYTES &&
        http_gzip_accepted(
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING))) {
        char *z;
        size_t zlen;
        /* A failed compression is no reason to fail the request. */
        if (http_gzip_compress(&z, &zlen, body, len) == 0 && z) {
            free(body);
            body = resp->body = z;
            len = zlen;
            gzipped = true;
        }
    }
    r->sent_bytes = len;
    if (!len) {
        /* Nothing to hand over; keeps MHD from owning a stray empty buffer. */
        free(body);
        body = resp->body = NULL;
    }
    /* HEAD gets the same response; MHD sends its Content-Length without the
     * body. */
    struct MHD_Response *mr = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!mr)
        return NULL;
    resp->body = NULL; /* MHD owns it now */
    ok = add_response_headers(s, mr, r, resp, own_cors);
    if (gzipped)
        ok = ok && MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip") == MHD_YES;
    if (!ok) {
        MHD_destroy_response(mr);
        return NULL;
    }
    return mr;
}

/* On a worker: run the handler and build the MHD response (r->mr, NULL
 * for OOM). The connection is suspended: its headers stay put. */
static void prepare(struct http_server *s, struct req *r)
{
    struct MHD_Connection *conn = r->conn;
    struct http_request req = {
        .method = r->method,
        .path = r->target,
        .query = r->query,
        .request_id = r->id,
        .url_bytes = r->url_bytes,
        .received_ms = r->start_us / 1000,
        .body_announced = r->body_announced,
        .body = r->body,
        .body_len = r->body_len,
        .client = r->client,
        .conn = (struct http_conn *)conn,
        .target_nul = r->target_nul,
        .nul_header = r->nul_header,
    };
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &req.header_bytes);
    struct http_response resp = {0};
    s->handler(&req, &resp, s->ctx);
    r->note = resp.log_note;
    r->log_path_len = resp.log_path_len;
    r->log_key_id = resp.log_key_id;
    r->mr = NULL;
    int status = resp.status;
    if (status < 100 || status > 999) {
        log_error("request %s: handler gave status %d", r->id, status);
        if (resp.stream)
            http_stream_end(resp.stream); /* never sent: its writer must learn it */
        response_release(&resp);
        r->note = "invalid status from the handler";
        return;
    }
    r->mr = response_build(s, conn, r, &resp);
    if (!r->mr && resp.stream)
        http_stream_end(resp.stream);
    response_release(&resp);
    if (r->mr)
        r->status = status;
}

/* On the MHD thread, after the worker resumed the connection. */
static enum MHD_Result answer(struct http_server *s, struct MHD_Connection *conn, struct req *r)
{
    leave_reading(s, r);
    r->state = REQ_ANSWERED;
    if (!r->mr) {
        const char *note = r->note;
        enum MHD_Result ret = queue_oom(s, conn, r);
        if (note)
            r->note = note;
        return ret;
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)r->status, r->mr);
    MHD_destroy_response(r->mr);
    r->mr = NULL;
    return ret;
}

/* Whether the client of a suspended connection has gone: its socket reads
 * as closed (or reset). Bytes waiting (a pipelined request) mean it is
 * still there. A client that only shut down its sending side reads the
 * same as one that left; like nginx, we take it for gone. */
static bool client_gone(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    char c;
    ssize_t n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void *worker_main(void *arg)
{
    struct http_server *s = arg;
    pthread_mutex_lock(&s->qlock);
    for (;;) {
        while (!s->qhead && !s->qstop)
            pthread_cond_wait(&s->qcond, &s->qlock);
        struct req *r = s->qhead;
        if (!r)
            break; /* stopping and nothing left */
        s->qhead = r->qnext;
        if (!s->qhead)
            s->qtail = NULL;
        pthread_mutex_unlock(&s->qlock);
        /* A request whose client left while it waited is not run: under
         * load, abandoned requests would otherwise take the workers'
         * time from the ones still waiting. */
        if (client_gone(r->conn)) {
            r->note = "client gone before its turn";
            r->state = REQ_DROPPED;
        } else {
            prepare(s, r);
            r->state = REQ_READY;
        }
        MHD_resume_connection(r->conn);
        pthread_mutex_lock(&s->qlock);
    }
    pthread_mutex_unlock(&s->qlock);
    return NULL;
}

/* Suspend the connection and queue its request for a worker. */
static enum MHD_Result enqueue(struct http_server *s, struct MHD_Connection *conn, struct req *r)
{
    r->conn = conn;
    r->qnext = NULL;
    leave_reading(s, r);
    r->state = REQ_QUEUED;
    pthread_mutex_lock(&s->qlock);
    if (s->qstop) { /* the workers are gone (stopping): answer here */
        pthread_mutex_unlock(&s->qlock);
        prepare(s, r);
        return answer(s, conn, r);
    }
    MHD_suspend_connection(conn);
    if (s->qtail)
        s->qtail->qnext = r;
    else
        s->qhead = r;
    s->qtail = r;
    pthread_cond_signal(&s->qcond);
    pthread_mutex_unlock(&s->qlock);
    return MHD_YES;
}

/* The client behind a trusted proxy (http_forwarded_client, headers.c),
 * when the peer is one. */
static void client_behind_proxies(struct http_server *s, struct MHD_Connection *conn, struct req *r)
{
    if (!s->trusted_proxies || !s->trusted_proxies->n_allow || !r->client[0])
        return;
    struct netpolicy_addr a;
    if (!netpolicy_addr_from_host(&a, r->client, strlen(r->client)) ||
        !netpolicy_holds(s->trusted_proxies, &a))
        return;
    http_forwarded_client(r->client,
                          MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Forwarded-For"),
                          s->trusted_proxies);
}

/* The Content-Length of a request that announces one, and no
 * Transfer-Encoding: the bytes of its body; -1 otherwise (or when it is
 * not plain digits, or absurd). */
static long long content_length(struct MHD_Connection *conn)
{
    if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return -1;
    return http_content_length_parse(
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH));
}

/* Start reading the body of a request whose path takes one (body_limit)
 * when its Content-Length is within the limit: true when it will be read
 * (its buffer is ready). */
static bool body_accept(struct http_server *s, struct MHD_Connection *conn, struct req *r,
                        const char *method)
{
    if (!s->body_limit)
        return false;
    size_t limit = s->body_limit(method, r->target, s->ctx);
    long long n = content_length(conn);
    if (limit == 0 || n <= 0 || (unsigned long long)n > limit)
        return false;
    r->body = malloc((size_t)n + 1);
    if (!r->body)
        return false;
    r->body_cap = (size_t)n;
    r->body_len = 0;
    r->body[0] = '\0';
    return true;
}

/* Whether the request's headers announce a body: a Content-Length above
 * zero, or any Transfer-Encoding (chunked). */
static bool body_announced(struct MHD_Connection *conn)
{
    if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return true;
    return http_content_length_announces(
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct http_server *s = cls;
    struct req *r = *req_cls;
    (void)url; /* decoded by MHD; we use the raw target from on_uri */
    if (!r)
        return queue_oom(s, conn, NULL);
    if (!r->started) {
        r->started = true;
        snprintf(r->method, sizeof r->method, "%s", method);
        client_behind_proxies(s, conn, r);
        /* MHD's method and version point into the request head. */
        r->target_nul = http_target_nul(r->mhd_target, r->url_bytes, version);
        r->nul_header = http_conn_nul_header(conn, method);
        /* Only the paths body_limit names take a body, of a known length
         * within their limit (body_accept): any other announced body is
         * refused at once, before a byte of it is read; MHD then closes
         * the connection after the answer instead of draining the body.
         * The handler answers such a request without running it, so it is
         * prepared here, on the I/O thread. */
        if (body_announced(conn) && !body_accept(s, conn, r, method)) {
            r->body_announced = true;
            prepare(s, r);
            return answer(s, conn, r);
        }
        /* Headers are in; wait for the call that says they are all. */
        return MHD_YES;
    }
    switch (r->state) {
    case REQ_READING:
        break;
    case REQ_QUEUED: /* not called while suspended; nothing to do if it is */
    case REQ_ANSWERED:
        if (*upload_data_size)
            *upload_data_size = 0;
        return MHD_YES;
    case REQ_READY:
        return answer(s, conn, r);
    case REQ_DROPPED:
        return MHD_NO; /* MHD closes the connection; on_completed logs it */
    }
    if (*upload_data_size) {
        /* A body accepted by body_accept: MHD delivers no more than its
         * Content-Length, the size of the buffer. */
        size_t n = *upload_data_size;
        if (r->body && n <= r->body_cap - r->body_len) {
            memcpy(r->body + r->body_len, upload_data, n);
            r->body_len += n;
            r->body[r->body_len] = '\0';
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!strcmp(method, MHD_HTTP_METHOD_OPTIONS)) {
        leave_reading(s, r);
        return respond_preflight(s, conn, r);
    }
    return enqueue(s, conn, r);
}

/* ---- lifecycle ----------------------------------------------------------- */

static int workers_start(struct http_server *s, unsigned n, struct err *err)
{
    s->workers = calloc(n, sizeof *s->workers);
    if (!s->workers)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (; s->nworkers < n; s->nworkers++) {
        if (pthread_create(&s->workers[s->nworkers], NULL, worker_main, s) != 0)
            return err_set(err, ERR_NOMEM, "cannot start HTTP worker threads");
    }
    return 0;
}

/* Idempotent; a server whose workers never started has none to join. */
static void workers_stop(struct http_server *s)
{
    if (!s->workers)
        return;
    pthread_mutex_lock(&s->qlock);
    s->qstop = true;
    pthread_cond_broadcast(&s->qcond);
    pthread_mutex_unlock(&s->qlock);
    for (unsigned i = 0; i < s->nworkers; i++)
        pthread_join(s->workers[i], NULL);
    free(s->workers);
    s->workers = NULL;
    s->nworkers = 0;
}

/* After MHD stopped: nothing can reach the queue any more. */
static void server_free(struct http_server *s)
{
    workers_stop(s);
    if (s->oom)
        MHD_destroy_response(s->oom);
    http_streams_release(&s->streams);
    pthread_mutex_destroy(&s->qlock);
    pthread_cond_destroy(&s->qcond);
    free(s);
}

int http_server_start(struct http_server **out, const struct http_config *cfg, http_handler handler,
                      void *ctx, struct err *err)
{
    static const char oom_body[] = "{\"status\":\"error\",\"code\":\"unexpectedError\","
                                   "\"message\":\"The server ran out of memory.\"}";
    int rc, fd = -1;
    struct http_server *s = NULL;

    *out = NULL;
    pthread_once(&id_once, id_init);
    s = calloc(1, sizeof *s);
    if (!s) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    pthread_mutex_init(&s->qlock, NULL);
    pthread_cond_init(&s->qcond, NULL);
    http_streams_init(&s->streams);
    s->handler = handler;
    s->ctx = ctx;
    s->access_log = cfg->access_log;
    s->trusted_proxies = cfg->trusted_proxies;
    s->body_limit = cfg->body_limit;
    atomic_init(&s->stopping, false);
    atomic_init(&s->active, 0);
    atomic_init(&s->reading, 0);

    s->oom = MHD_create_response_from_buffer(sizeof oom_body - 1, (void *)oom_body,
                                             MHD_RESPMEM_PERSISTENT);
    if (!s->oom ||
        MHD_add_response_header(s->oom, MHD_HTTP_HEADER_CONTENT_TYPE, HTTP_DEFAULT_CONTENT_TYPE) !=
            MHD_YES ||
        MHD_add_response_header(s->oom, "Access-Control-Allow-Origin", "*") != MHD_YES) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }

    if ((rc = http_listen_open(&fd, &s->port, cfg->listen, err)) < 0)
        goto out;

    unsigned threads = cfg->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    unsigned max_conn = cfg->max_connections ? cfg->max_connections : HTTP_DEFAULT_MAX_CONNECTIONS;
    unsigned timeout = cfg->conn_timeout_s ? cfg->conn_timeout_s : HTTP_DEFAULT_TIMEOUT_S;
    /* One event loop does the I/O; the workers run the handlers. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;

    struct MHD_OptionItem opts[] = {
        /* First, so that start-up complaints go through our log too. */
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, NULL},
        {MHD_OPTION_LISTEN_SOCKET, fd, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, s},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_CONNECTION_LIMIT, max_conn, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT,
         max_conn < HTTP_PER_IP_CONNECTIONS ? max_conn : HTTP_PER_IP_CONNECTIONS, NULL},
        /* Also what drops a slowloris client: MHD counts idle time, and a
         * header trickle slower than this is idle. */
        {MHD_OPTION_CONNECTION_TIMEOUT, timeout, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONNECTION_MEMORY, NULL},
        /* 0 = MHD's default tolerance, pinned: a raw space in the target is
         * accepted (API.md allows one in q); the request line's last space
         * starts the version. */
        {MHD_OPTION_STRICT_FOR_CLIENT, 0, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    if ((rc = workers_start(s, threads, err)) < 0)
        goto out;
    /* The port argument is unused with a listen socket of our own. */
    s->daemon = MHD_start_daemon(flags, 0, on_accept, s, on_request, s, MHD_OPTION_ARRAY, opts,
                                 MHD_OPTION_END);
    if (!s->daemon) {
        /* MHD does not take the socket when it fails to start. */
        rc = err_set(err, ERR_IO, "cannot start the HTTP server on %s", cfg->listen);
        goto out;
    }
    fd = -1; /* closed by MHD_stop_daemon */
    *out = s;
    s = NULL;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (s)
        server_free(s);
    return rc;
}

uint16_t http_server_port(const struct http_server *s)
{
    return s ? s->port : 0;
}

/* Requests past their head and not yet completed. */
static int in_flight(struct http_server *s)
{
    return atomic_load(&s->active) - atomic_load(&s->reading);
}

void http_server_stop(struct http_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    /* Open streams would never finish by themselves. */
    http_streams_stop(&s->streams);
    /* Let requests already in (head read) finish and be sent;
     * MHD_stop_daemon would otherwise close their connections mid-answer.
     * A request whose head is still coming is not waited for (a client
     * that stalls, or one MHD has not yet seen leave), and the wait is
     * bounded, so no client can hold shutdown hostage. */
    int64_t until = clock_mono_ms() + HTTP_STOP_WAIT_MS;
    while (in_flight(s) > 0 && clock_mono_ms() < until)
        clock_sleep_ms(10);
    if (in_flight(s) > 0)
        log_warn("http: stopping with %d request(s) still in flight", in_flight(s));
    /* The workers answer what is queued, then go: no connection stays
     * suspended when MHD stops (a later request is answered on MHD's
     * thread, see enqueue). */
    workers_stop(s);
    MHD_stop_daemon(s->daemon);
    server_free(s);
}
