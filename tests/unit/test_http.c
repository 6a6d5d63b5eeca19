/* http/: a real server on 127.0.0.1 with a test handler, driven by a raw
 * socket client so every byte of the request is ours (a client library
 * would normalise the very things under test: '+', spaces, header case).
 * Also table tests of the Accept-Encoding parser and the key masking of
 * the access log, which are reached through http/internal.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <zlib.h>
#include <cmocka.h>
#include "test_skip.h"

#include "http/http.h"
#include "http/internal.h"
#include "util/err.h"

/* ---- the handler under the server ---------------------------------------- */

#define BIG_LEN 20000
#define SLOW_MS 1500

struct test_ctx {
    atomic_int calls;
    atomic_int slow_entered;
    atomic_int hold_entered, hold_release, hold_done; /* /hold */
    struct http_stream *_Atomic stream;               /* /stream: the test's reference */
};

static char *big_body(void)
{
    static const char line[] = "newsd says the same thing again and again. ";
    char *b = malloc(BIG_LEN);
    assert_non_null(b);
    for (size_t i = 0; i < BIG_LEN; i++)
        b[i] = line[i % (sizeof line - 1)];
    return b;
}

/* Bytes gzip cannot shrink: a xorshift stream. */
static char *noise_body(size_t n)
{
    char *b = malloc(n);
    uint32_t x = 2463534242u;
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (char)(x & 0xff);
    }
    return b;
}

static void set_body(struct http_response *resp, char *body, size_t len)
{
    resp->body = body;
    resp->len = len;
}

static void test_handler(const struct http_request *req, struct http_response *resp, void *ctx)
{
    struct test_ctx *t = ctx;
    atomic_fetch_add(&t->calls, 1);
    resp->status = 200;
    if (!strcmp(req->path, "/big")) {
        set_body(resp, big_body(), BIG_LEN);
        return;
    }
    if (!strcmp(req->path, "/small")) {
        char *b = malloc(100);
        assert_non_null(b);
        memset(b, 'x', 100);
        set_body(resp, b, 100);
        return;
    }
    if (!strcmp(req->path, "/noise")) {
        set_body(resp, noise_body(4096), 4096);
        return;
    }
    if (!strcmp(req->path, "/status0")) {
        resp->status = 0;
        return;
    }
    if (!strcmp(req->path, "/slow")) {
        atomic_store(&t->slow_entered, 1);
        struct timespec d = {SLOW_MS / 1000, (SLOW_MS % 1000) * 1000000L};
        nanosleep(&d, NULL);
        set_body(resp, strdup("slow-finished"), 13);
        return;
    }
    if (!strcmp(req->path, "/hold")) { /* busy until the test releases it (10 s at most) */
        atomic_store(&t->hold_entered, 1);
        for (int i = 0; i < 2000 && !atomic_load(&t->hold_release); i++) {
            struct timespec d = {0, 5 * 1000 * 1000};
            nanosleep(&d, NULL);
        }
        atomic_store(&t->hold_done, 1);
        set_body(resp, strdup("held"), 4);
        return;
    }
    if (!strcmp(req->path, "/stream")) { /* a streamed body the test writes */
        struct http_stream *st = NULL;
        struct err err;
        assert_int_equal(http_stream_new(&st, 64, &err), 0);
        assert_int_equal(http_stream_write(st, "hello;", 6), 0);
        resp->content_type = "text/event-stream";
        resp->stream = http_stream_ref(st);
        atomic_store(&t->stream, st);
        return;
    }
    if (!strcmp(req->path, "/cors"))
        http_response_add_header(resp, "Access-Control-Allow-Origin", "https://example.org");
    if (!strcmp(req->path, "/note"))
        resp->log_note = "note-here";
    /* Echo what the handler was given, one "name=value" line each. */
    const char *h1 = http_request_header(req, "x-test-header");
    const char *h2 = http_request_header(req, "X-TEST-HEADER");
#define ECHO_FMT                                                                                   \
    "method=%s\npath=%s\nquery=%s\nurl_bytes=%zu\nheader_bytes=%zu\nid=%s\nh1=%s\nh2=%s\n"         \
    "target_nul=%d\nnul_header=%s\n"
#define ECHO_ARGS                                                                                  \
    req->method, req->path, req->query, req->url_bytes, req->header_bytes, req->request_id,        \
        h1 ? h1 : "(null)", h2 ? h2 : "(null)", req->target_nul,                                   \
        req->nul_header ? req->nul_header : "(null)"
    int n = snprintf(NULL, 0, ECHO_FMT, ECHO_ARGS);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    snprintf(b, (size_t)n + 1, ECHO_FMT, ECHO_ARGS);
    resp->content_type = "text/plain; charset=utf-8";
    set_body(resp, b, (size_t)n);
}

/* ---- a raw HTTP client ------------------------------------------------------ */

struct reply {
    int status;
    char *raw;  /* everything received, NUL-terminated */
    char *head; /* into raw: status line and headers, NUL-terminated */
    char *body; /* into raw, after the blank line */
    size_t body_len;
};

static int client_connect(int family, uint16_t port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {10, 0}; /* a hung server fails the test, not CI */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int rc;
    if (family == AF_INET6) {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        a.sin6_addr = in6addr_loopback;
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read until the server closes (every request says Connection: close). */
static char *recv_all(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void reply_parse(struct reply *out, char *raw, size_t n)
{
    memset(out, 0, sizeof *out);
    out->raw = raw;
    char *end = strstr(raw, "\r\n\r\n");
    if (!end)
        return;
    *end = '\0';
    out->head = raw;
    out->body = end + 4;
    out->body_len = n - (size_t)(out->body - raw);
    sscanf(raw, "HTTP/1.%*d %d", &out->status);
}

static int roundtrip_family(int family, uint16_t port, const char *req, size_t len,
                            struct reply *out)
{
    int fd = client_connect(family, port);
    if (fd < 0)
        return -1;
    if (send_all(fd, req, len) < 0) {
        close(fd);
        return -1;
    }
    size_t n;
    char *raw = recv_all(fd, &n);
    close(fd);
    reply_parse(out, raw, n);
    return 0;
}

static void roundtrip(uint16_t port, const char *req, struct reply *out)
{
    assert_int_equal(roundtrip_family(AF_INET, port, req, strlen(req), out), 0);
}

static void reply_free(struct reply *r)
{
    free(r->raw);
}

/* Value of the n-th header called name (case-insensitive), copied. */
static bool reply_header_nth(const struct reply *r, const char *name, int nth, char *val,
                             size_t cap)
{
    size_t nl = strlen(name);
    const char *p = r->head ? strstr(r->head, "\r\n") : NULL;
    while (p) {
        p += 2;
        const char *eol = strstr(p, "\r\n");
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        if (ll > nl && p[nl] == ':' && !strncasecmp(p, name, nl) && nth-- == 0) {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = (size_t)(p + ll - v);
            if (vl >= cap)
                vl = cap - 1;
            memcpy(val, v, vl);
            val[vl] = '\0';
            return true;
        }
        p = eol;
    }
    return false;
}

static const char *reply_header(const struct reply *r, const char *name)
{
    static _Thread_local char val[512];
    return reply_header_nth(r, name, 0, val, sizeof val) ? val : NULL;
}

static int reply_header_count(const struct reply *r, const char *name)
{
    char val[512];
    int n = 0;
    while (reply_header_nth(r, name, n, val, sizeof val))
        n++;
    return n;
}

/* Value of "name=" in an echo body, copied. */
static const char *echo_field(const struct reply *r, const char *name)
{
    static _Thread_local char val[16384];
    char key[64];
    snprintf(key, sizeof key, "%s=", name);
    const char *p = r->body;
    while (p && *p) {
        if (!strncmp(p, key, strlen(key))) {
            p += strlen(key);
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            if (n >= sizeof val)
                n = sizeof val - 1;
            memcpy(val, p, n);
            val[n] = '\0';
            return val;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

static bool is_request_id(const char *s)
{
    if (!s || strlen(s) != 16)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static char *gunzip(const char *in, size_t len, size_t *out_len)
{
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    assert_non_null(out);
    z_stream zs = {0};
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    *out_len = zs.total_out;
    inflateEnd(&zs);
    return out;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- fixture --------------------------------------------------------------- */

struct fixture {
    struct test_ctx ctx;
    struct http_server *server;
    uint16_t port;
};

static struct fixture *fixture_start(const struct http_config *cfg)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    err_clear(&err);
    assert_non_null(f);
    int rc = http_server_start(&f->server, cfg, test_handler, &f->ctx, &err);
    if (rc < 0)
        fail_msg("start: %s", err_msg(&err, rc));
    f->port = http_server_port(f->server);
    assert_true(f->port > 0);
    return f;
}

static int setup(void **state)
{
    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 2};
    *state = fixture_start(&cfg);
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    http_server_stop(f->server);
    free(f);
    return 0;
}

/* ---- requests ------------------------------------------------------------------ */

static void test_the_raw_query_reaches_the_handler_undecoded(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    const char *target = "/v2/everything?q=a+b%2Bc&apiKey=k&x=%20&e=";
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target);
    roundtrip(f->port, req, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "method"), "GET");
    assert_string_equal(echo_field(&r, "path"), "/v2/everything");
    /* '+' stays '+', %2B stays %2B: decoding is the handler's. */
    assert_string_equal(echo_field(&r, "query"), "q=a+b%2Bc&apiKey=k&x=%20&e=");
    char n[32];
    snprintf(n, sizeof n, "%zu", strlen(target));
    assert_string_equal(echo_field(&r, "url_bytes"), n);
    assert_string_equal(reply_header(&r, "Content-Type"), "text/plain; charset=utf-8");
    reply_free(&r);
}

static void test_a_path_without_query_gives_an_empty_query(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /v2/sources HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "path"), "/v2/sources");
    assert_string_equal(echo_field(&r, "query"), "");
    /* Only the first '?' splits; later ones belong to the query. */
    reply_free(&r);
    roundtrip(f->port, "GET /p?a=?b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_string_equal(echo_field(&r, "path"), "/p");
    assert_string_equal(echo_field(&r, "query"), "a=?b");
    reply_free(&r);
}

/* MHD 0.9.75 (at its default, and our pinned, strictness 0) takes a raw
 * space inside the request target: the target runs from the first space
 * to the last one, which starts "HTTP/1.1". So "GET /p?q=a b HTTP/1.1"
 * reaches the handler with query "q=a b", space and all, and API.md's
 * "a raw space in q is fine" holds. */
static void test_a_raw_space_in_the_target_is_kept(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /p?q=a b \"c d\"&x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
              &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "path"), "/p");
    assert_string_equal(echo_field(&r, "query"), "q=a b \"c d\"&x=1");
    char n[16];
    snprintf(n, sizeof n, "%zu", strlen("/p?q=a b \"c d\"&x=1"));
    assert_string_equal(echo_field(&r, "url_bytes"), n);
    reply_free(&r);
}

/* Issue 14 item 6: MHD 0.9.75 ends a header value at a raw NUL byte and
 * drops the rest of the line ("X-Api-Key: KEY\0zz" reads as KEY); the
 * server finds it in what is left of the head and names the header. Heads
 * as clients write them (CRLF or bare LF, spaces and tabs, empty values,
 * folded lines, many headers) are not flagged. */
struct nul_case {
    const char *head; /* the request, with its NUL bytes */
    size_t len;       /* sizeof - 1 */
    const char *flag; /* the echo's nul_header (or target_nul) */
    const char *seen; /* and its h1 (or query): what the handler reads */
};
#define NUL_CASE(lit, flag, seen)                                                                  \
    {                                                                                              \
        lit, sizeof lit - 1, flag, seen                                                            \
    }

/* Send each case and compare the echo's flag_field and seen_field with it;
 * other_field must read "none" (the other NUL check finds nothing). */
static void check_nul_cases(const struct fixture *f, const struct nul_case *cases, size_t n,
                            const char *flag_field, const char *seen_field, const char *other_field,
                            const char *none)
{
    for (size_t i = 0; i < n; i++) {
        struct reply r;
        assert_int_equal(roundtrip_family(AF_INET, f->port, cases[i].head, cases[i].len, &r), 0);
        assert_int_equal(r.status, 200);
        char flag[256];
        snprintf(flag, sizeof flag, "%s", echo_field(&r, flag_field));
        if (strcmp(flag, cases[i].flag) || strcmp(echo_field(&r, seen_field), cases[i].seen))
            fail_msg("case %zu: %s=%s %s=%s", i, flag_field, flag, seen_field,
                     echo_field(&r, seen_field));
        assert_string_equal(echo_field(&r, other_field), none);
        reply_free(&r);
    }
}

static void test_a_nul_in_a_header_value_is_reported(void **state)
{
    struct fixture *f = *state;
    static const struct nul_case cases[] = {
        NUL_CASE(
            "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: abc\0zz\r\nConnection: close\r\n\r\n",
            "X-Test-Header", "abc"),
        NUL_CASE(
            "GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Test-Header: abc\0zz\r\n\r\n",
            "X-Test-Header", "abc"),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: \0zz\r\nConnection: close\r\n\r\n",
                 "X-Test-Header", ""),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: abc\0\r\nConnection: close\r\n\r\n",
                 "X-Test-Header", "abc"),
        NUL_CASE(
            "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: abc\0\0\0\r\nConnection: close\r\n\r\n",
            "X-Test-Header", "abc"),
        NUL_CASE("GET /h HTTP/1.1\nHost: x\nX-Test-Header: a\0b\nConnection: close\n\n",
                 "X-Test-Header", "a"),
        NUL_CASE("GET /h HTTP/1.1\r\nOrigin: https://a.test\0.evil.test\r\nX-Test-Header: v\r\n"
                 "Connection: close\r\n\r\n",
                 "Origin", "v"),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Test-Header: v\r\n"
                 "Accept: */*\0\r\n\r\n",
                 "Accept", "v"),
        /* as clients write them: nothing to report */
        NUL_CASE(
            "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: \t  v1  \r\nConnection: close\r\n\r\n",
            "(null)", "v1  "),
        NUL_CASE("GET /h HTTP/1.1\nHost: x\nX-Test-Header: v1\nConnection: close\n\n", "(null)",
                 "v1"),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\nX-Test-Header:v1\r\nConnection: close\n\r\n",
                 "(null)", "v1"),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header:\r\nX-Empty: \r\n"
                 "Connection: close\r\n\r\n",
                 "(null)", ""),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\tc\r\nX-Test-Header: v1\r\n"
                 "Connection: close\r\n\r\n",
                 "(null)", "v1"),
        NUL_CASE("GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Test-Header: v1\r\n"
                 "X-Folded-Last: a\r\n b\r\n\r\n",
                 "(null)", "v1"),
        NUL_CASE("GET /h?q=a HTTP/1.0\r\nX-Test-Header: v1\r\n\r\n", "(null)", "v1"),
    };
    check_nul_cases(f, cases, sizeof cases / sizeof cases[0], "nul_header", "h1", "target_nul",
                    "0");
}

static void test_many_headers_are_not_taken_for_a_nul(void **state)
{
    struct fixture *f = *state;
    char req[16384];
    size_t n = (size_t)snprintf(req, sizeof req, "GET /h HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(req + n, sizeof req - n, i % 2 ? "X-H%d: %d\r\n" : "X-H%d:%d\n", i,
                              i * 7919);
    n += (size_t)snprintf(req + n, sizeof req - n, "Connection: close\r\n\r\n");
    struct reply r;
    assert_int_equal(roundtrip_family(AF_INET, f->port, req, n, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "nul_header"), "(null)");
    reply_free(&r);
    /* the same with a NUL in the 201st: that one is named */
    char *at = strstr(req, "X-H201: ");
    assert_non_null(at);
    at[10] = '\0';
    assert_int_equal(roundtrip_family(AF_INET, f->port, req, n, &r), 0);
    assert_string_equal(echo_field(&r, "nul_header"), "X-H201");
    reply_free(&r);
}

/* The second request of a connection has its head further on in MHD's
 * buffer: each request is judged on its own. */
static void test_a_nul_is_found_in_a_pipelined_request(void **state)
{
    struct fixture *f = *state;
    static const char two[] = "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: first\r\n\r\n"
                              "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: sec\0ond\r\n"
                              "Connection: close\r\n\r\n";
    struct reply r;
    assert_int_equal(roundtrip_family(AF_INET, f->port, two, sizeof two - 1, &r), 0);
    char *first = strstr(r.body, "nul_header=(null)\n");
    char *second = strstr(r.body, "nul_header=X-Test-Header\n");
    assert_non_null(first);
    assert_non_null(second);
    assert_true(first < second);
    assert_non_null(strstr(first, "h1=sec\n")); /* the second's echo */
    reply_free(&r);
}

/* The target is cut at a raw NUL the same way ("?apiKey=KEY\0zz"). */
static void test_a_nul_in_the_target_is_reported(void **state)
{
    struct fixture *f = *state;
    static const struct nul_case cases[] = {
        NUL_CASE("GET /p?apiKey=k\0zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "1",
                 "apiKey=k"),
        NUL_CASE("GET /p\0/x?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "1", ""),
        NUL_CASE("GET /p?q=a b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "0", "q=a b"),
        NUL_CASE("GET /p?q=ab  HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "0", "q=ab "),
        NUL_CASE("GET /p?q=ab HTTP/1.1\nHost: x\nConnection: close\n\n", "0", "q=ab"),
    };
    check_nul_cases(f, cases, sizeof cases / sizeof cases[0], "target_nul", "query", "nul_header",
                    "(null)");
}

/* The scan itself on heads laid out by hand as MHD 0.9.75 leaves them: it
 * names a cut field, and claims nothing when the layout is not that one
 * (a value outside the head, fields out of order: another MHD). */
static void test_the_nul_scan_claims_nothing_it_cannot_tell(void **state)
{
    (void)state;
    static const char head[] = "GET\0/\0HTTP/1.1\0\0A\0 1\0\0B\0 2\0zz\0\0C\0 3\0\0\0";
    const char *a = head + 16, *b = head + 22, *c = head + 31;
    assert_memory_equal(a, "A\0 1", 4);
    assert_memory_equal(b, "B\0 2", 4);
    assert_memory_equal(c, "C\0 3", 4);
    struct http_nul_scan s;

    http_nul_scan_init(&s, head, sizeof head - 1);
    http_nul_scan_field(&s, a, a + 3, 1);
    http_nul_scan_field(&s, b, b + 3, 1);
    http_nul_scan_field(&s, c, c + 3, 1);
    assert_ptr_equal(http_nul_scan_done(&s), b);

    http_nul_scan_init(&s, head, sizeof head - 1); /* out of order */
    http_nul_scan_field(&s, c, c + 3, 1);
    http_nul_scan_field(&s, a, a + 3, 1);
    assert_null(http_nul_scan_done(&s));

    static const char elsewhere[] = "2";
    http_nul_scan_init(&s, head, sizeof head - 1); /* a value outside the head */
    http_nul_scan_field(&s, a, a + 3, 1);
    http_nul_scan_field(&s, b, elsewhere, 1);
    assert_null(http_nul_scan_done(&s));

    http_nul_scan_init(&s, head, sizeof head - 1); /* no colon before the value */
    http_nul_scan_field(&s, a, a + 1, 3);
    assert_null(http_nul_scan_done(&s));

    /* The last field: 2 to 4 NUL bytes to the end of the head. */
    static const char last[] = "GET\0/\0HTTP/1.1\0\0A\0 1\0\0\0\0\0";
    http_nul_scan_init(&s, last, sizeof last - 1);
    http_nul_scan_field(&s, last + 16, last + 19, 1);
    assert_ptr_equal(http_nul_scan_done(&s), last + 16);
    http_nul_scan_init(&s, last, sizeof last - 2);
    http_nul_scan_field(&s, last + 16, last + 19, 1);
    assert_null(http_nul_scan_done(&s));
}

static void test_header_lookup_ignores_case(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port,
              "GET /h HTTP/1.1\r\nHost: x\r\nX-Test-Header: v1\r\nConnection: close\r\n\r\n", &r);
    assert_string_equal(echo_field(&r, "h1"), "v1");
    assert_string_equal(echo_field(&r, "h2"), "v1");
    reply_free(&r);
    roundtrip(f->port, "GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_string_equal(echo_field(&r, "h1"), "(null)");
    reply_free(&r);
}

static void test_header_bytes_sum_names_and_values(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /h HTTP/1.1\r\nHost: abc\r\nX-A: 12345\r\nConnection: close\r\n\r\n",
              &r);
    char n[16];
    snprintf(n, sizeof n, "%zu",
             strlen("Hostabc"
                    "X-A12345"
                    "Connectionclose"));
    assert_string_equal(echo_field(&r, "header_bytes"), n);
    reply_free(&r);
}

static void test_every_response_carries_id_cors_and_vary(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_true(is_request_id(reply_header(&r, "X-Request-Id")));
    assert_string_equal(reply_header(&r, "Access-Control-Allow-Origin"), "*");
    assert_string_equal(reply_header(&r, "Vary"), "Accept-Encoding");
    assert_string_equal(reply_header(&r, "Content-Type"), "application/json; charset=utf-8");
    reply_free(&r);
}

static void test_the_handler_sees_the_id_it_is_answered_with(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    char id[32];
    snprintf(id, sizeof id, "%s", reply_header(&r, "X-Request-Id"));
    assert_string_equal(echo_field(&r, "id"), id);
    reply_free(&r);
}

static void test_a_handler_cors_origin_is_not_overridden(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /cors HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(reply_header_count(&r, "Access-Control-Allow-Origin"), 1);
    assert_string_equal(reply_header(&r, "Access-Control-Allow-Origin"), "https://example.org");
    reply_free(&r);
}

static void test_options_is_answered_without_the_handler(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    int before = atomic_load(&f->ctx.calls);
    roundtrip(f->port,
              "OPTIONS /v2/everything HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n"
              "Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n",
              &r);
    assert_int_equal(r.status, 204);
    assert_int_equal(r.body_len, 0);
    assert_string_equal(reply_header(&r, "Access-Control-Allow-Origin"), "*");
    assert_string_equal(reply_header(&r, "Access-Control-Allow-Methods"),
                        "GET, HEAD, POST, DELETE, OPTIONS");
    assert_string_equal(
        reply_header(&r, "Access-Control-Allow-Headers"),
        "X-Api-Key, Authorization, X-No-Cache, Content-Type, Access-Control-Allow-Origin");
    assert_string_equal(reply_header(&r, "Access-Control-Max-Age"), "86400");
    assert_true(is_request_id(reply_header(&r, "X-Request-Id")));
    assert_int_equal(atomic_load(&f->ctx.calls), before);
    reply_free(&r);
}

static void test_head_has_no_body_but_the_get_length(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "HEAD /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, 0);
    assert_string_equal(reply_header(&r, "Content-Length"), "20000");
    reply_free(&r);

    roundtrip(f->port, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_string_equal(reply_header(&r, "Content-Length"), "20000");
    assert_int_equal(r.body_len, BIG_LEN);
    reply_free(&r);

    /* Gzipped, HEAD still announces what GET would send. */
    char get_len[32];
    roundtrip(f->port,
              "GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
              &r);
    snprintf(get_len, sizeof get_len, "%s", reply_header(&r, "Content-Length"));
    reply_free(&r);
    roundtrip(f->port,
              "HEAD /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
              &r);
    assert_string_equal(reply_header(&r, "Content-Encoding"), "gzip");
    assert_string_equal(reply_header(&r, "Content-Length"), get_len);
    assert_int_equal(r.body_len, 0);
    reply_free(&r);
}

static void test_a_large_body_is_gzipped_when_accepted(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port,
              "GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: deflate, gzip;q=0.8, br\r\n"
              "Connection: close\r\n\r\n",
              &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(reply_header(&r, "Content-Encoding"), "gzip");
    char n[32];
    snprintf(n, sizeof n, "%zu", r.body_len);
    assert_string_equal(reply_header(&r, "Content-Length"), n);
    assert_true(r.body_len < BIG_LEN);
    size_t plain_len;
    char *plain = gunzip(r.body, r.body_len, &plain_len);
    char *want = big_body();
    assert_int_equal(plain_len, BIG_LEN);
    assert_memory_equal(plain, want, BIG_LEN);
    free(plain);
    free(want);
    reply_free(&r);
}

static void expect_identity(uint16_t port, const char *path, const char *accept, size_t len)
{
    char req[256];
    struct reply r;
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n%s%s%sConnection: close\r\n\r\n", path,
             accept ? "Accept-Encoding: " : "", accept ? accept : "", accept ? "\r\n" : "");
    roundtrip(port, req, &r);
    assert_int_equal(r.status, 200);
    assert_null(reply_header(&r, "Content-Encoding"));
    assert_int_equal(r.body_len, len);
    assert_string_equal(reply_header(&r, "Vary"), "Accept-Encoding");
    reply_free(&r);
}

static void test_gzip_is_not_used_when_it_should_not_be(void **state)
{
    struct fixture *f = *state;
    expect_identity(f->port, "/small", "gzip", 100);       /* too small to bother */
    expect_identity(f->port, "/big", NULL, BIG_LEN);       /* not asked */
    expect_identity(f->port, "/big", "gzip;q=0", BIG_LEN); /* refused */
    expect_identity(f->port, "/big", "br, deflate", BIG_LEN);
    expect_identity(f->port, "/noise", "gzip", 4096); /* would not shrink */
}

static void test_accept_encoding_is_parsed_with_q_values(void **state)
{
    (void)state;
    static const struct {
        const char *ae;
        bool gzip;
    } cases[] = {
        {NULL, false},
        {"", false},
        {"gzip", true},
        {"GZIP", true},
        {"x-gzip", true},
        {"deflate, gzip", true},
        {"gzip, deflate, br", true},
        {"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
        {"gzip;q=0", false},
        {"gzip; q=0.000", false},
        {"gzip;Q=0.", false},
        {"gzip;q=0.001", true},
        {"gzip;q=1", true},
        {"gzip ; q=0.5", true},
        {"gzip;level=1;q=0", false},
        {"gzip;q=", false},
        {"gzip;q=abc", false},
        {"*", true},
        {"*;q=0", false},
        {"gzip;q=0, *", false}, /* an explicit refusal beats the wildcard */
        {"*;q=0, gzip", true},
        {"identity", false},
        {"gzipx, xgzip, gzi", false},
        {"deflate;q=0.5,gzip", true},
        {",,, ,gzip,,", true},
        {";;;", false},
        {"gzip;;;q=0", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (http_gzip_accepted(cases[i].ae) != cases[i].gzip)
            fail_msg("Accept-Encoding '%s': expected %d", cases[i].ae ? cases[i].ae : "(null)",
                     cases[i].gzip);
    }
}

static void test_gzip_compress_refuses_what_it_cannot_shrink(void **state)
{
    (void)state;
    char *z;
    size_t zlen;
    char *noise = noise_body(2048);
    assert_int_equal(http_gzip_compress(&z, &zlen, noise, 2048), 0);
    assert_null(z);
    free(noise);
    assert_int_equal(http_gzip_compress(&z, &zlen, "a", 1), 0);
    assert_null(z);
    char *big = big_body();
    assert_int_equal(http_gzip_compress(&z, &zlen, big, BIG_LEN), 0);
    assert_non_null(z);
    size_t plain_len;
    char *plain = gunzip(z, zlen, &plain_len);
    assert_int_equal(plain_len, BIG_LEN);
    assert_memory_equal(plain, big, BIG_LEN);
    free(plain);
    free(z);
    free(big);
}

static void test_a_request_body_is_ignored(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    int before = atomic_load(&f->ctx.calls);
    roundtrip(f->port,
              "POST /b?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\n"
              "hello world",
              &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "method"), "POST");
    assert_string_equal(echo_field(&r, "query"), "x=1");
    assert_null(strstr(r.body, "hello"));
    reply_free(&r);
    /* A chunked body too; and GET with a body (API.md: ignored). */
    roundtrip(f->port,
              "GET /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
              "\r\n5\r\nhello\r\n0\r\n\r\n",
              &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "method"), "GET");
    reply_free(&r);
    assert_int_equal(atomic_load(&f->ctx.calls), before + 2);
}

static void test_keep_alive_serves_two_requests_on_one_connection(void **state)
{
    struct fixture *f = *state;
    const char *two = "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    struct reply r;
    assert_int_equal(roundtrip_family(AF_INET, f->port, two, strlen(two), &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "path=/one\n"));
    assert_non_null(strstr(r.body, "path=/two\n"));
    reply_free(&r);
}

/* A busy handler holds up no other request while a worker is free: every
 * connection open before it started (with handlers on the event loops,
 * those sharing its loop would wait for it) is answered while it runs. */
static void test_a_busy_handler_holds_up_no_other_connection(void **state)
{
    struct fixture *f = *state;
    enum { N = 8 };
    int fd[N];
    static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    static const char small[] = "GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

    for (int i = 0; i < N; i++) {
        fd[i] = client_connect(AF_INET, f->port);
        assert_true(fd[i] >= 0);
    }
    /* Let the server accept them all before anything is asked. */
    struct timespec d = {0, 100 * 1000 * 1000};
    nanosleep(&d, NULL);
    assert_int_equal(send_all(fd[0], hold, sizeof hold - 1), 0);
    for (int i = 0; i < 2000 && !atomic_load(&f->ctx.hold_entered); i++) {
        struct timespec t = {0, 5 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    assert_true(atomic_load(&f->ctx.hold_entered));
    for (int i = 1; i < N; i++) {
        size_t n;
        struct reply r;
        assert_int_equal(send_all(fd[i], small, sizeof small - 1), 0);
        char *raw = recv_all(fd[i], &n);
        reply_parse(&r, raw, n);
        close(fd[i]);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.body_len, 100);
        reply_free(&r);
        assert_false(atomic_load(&f->ctx.hold_done)); /* answered while /hold still ran */
    }
    atomic_store(&f->ctx.hold_release, 1);
    size_t n;
    struct reply r;
    char *raw = recv_all(fd[0], &n);
    reply_parse(&r, raw, n);
    close(fd[0]);
    assert_int_equal(r.status, 200);
    assert_memory_equal(r.body, "held", 4);
    reply_free(&r);
}

static void test_a_10k_url_reaches_the_handler(void **state)
{
    struct fixture *f = *state;
    size_t qlen = 10 * 1024;
    char *req = malloc(qlen + 128);
    assert_non_null(req);
    int n = snprintf(req, qlen + 128, "GET /v2/everything?q=");
    memset(req + n, 'a', qlen);
    snprintf(req + n + qlen, 128, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    struct reply r;
    roundtrip(f->port, req, &r);
    assert_int_equal(r.status, 200);
    char want[32];
    snprintf(want, sizeof want, "%zu", strlen("/v2/everything?q=") + qlen);
    assert_string_equal(echo_field(&r, "url_bytes"), want);
    assert_int_equal(strlen(echo_field(&r, "query")), qlen + 2);
    reply_free(&r);
    free(req);
}

static void test_20k_of_headers_reach_the_handler(void **state)
{
    struct fixture *f = *state;
    size_t pad = 20 * 1024;
    char *req = malloc(pad + 256);
    assert_non_null(req);
    int n = snprintf(req, pad + 256, "GET /h?%s HTTP/1.1\r\nHost: x\r\nX-Pad: ", "q=1");
    memset(req + n, 'p', pad);
    snprintf(req + n + pad, 256, "\r\nConnection: close\r\n\r\n");
    struct reply r;
    roundtrip(f->port, req, &r);
    assert_int_equal(r.status, 200);
    char want[32];
    snprintf(want, sizeof want, "%zu",
             strlen("Host") + 1 + strlen("X-Pad") + pad + strlen("Connection") + strlen("close"));
    assert_string_equal(echo_field(&r, "header_bytes"), want);
    assert_string_equal(echo_field(&r, "nul_header"), "(null)");
    reply_free(&r);
    free(req);
}

/* Just over both API limits at once: still the handler's to answer. */
static void test_a_request_over_both_api_limits_reaches_the_handler(void **state)
{
    struct fixture *f = *state;
    size_t qlen = 9 * 1024, pad = 17 * 1024;
    char *req = malloc(qlen + pad + 256);
    assert_non_null(req);
    size_t n = (size_t)snprintf(req, 64, "GET /both?q=");
    memset(req + n, 'a', qlen);
    n += qlen;
    n += (size_t)snprintf(req + n, 64, " HTTP/1.1\r\nHost: x\r\nX-Pad: ");
    memset(req + n, 'p', pad);
    n += pad;
    snprintf(req + n, 64, "\r\nConnection: close\r\n\r\n");
    struct reply r;
    roundtrip(f->port, req, &r);
    assert_int_equal(r.status, 200);
    char want[32];
    snprintf(want, sizeof want, "%zu", strlen("/both?q=") + qlen);
    assert_string_equal(echo_field(&r, "url_bytes"), want);
    snprintf(want, sizeof want, "%zu", strlen("HostxX-PadConnectionclose") + pad);
    assert_string_equal(echo_field(&r, "header_bytes"), want);
    /* nothing taken for a NUL in a head this large either */
    assert_string_equal(echo_field(&r, "target_nul"), "0");
    assert_string_equal(echo_field(&r, "nul_header"), "(null)");
    reply_free(&r);
    free(req);
}

static void test_an_invalid_handler_status_becomes_a_500(void **state)
{
    struct fixture *f = *state;
    struct reply r;
    roundtrip(f->port, "GET /status0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 500);
    assert_non_null(strstr(r.body, "\"status\":\"error\""));
    assert_string_equal(reply_header(&r, "Access-Control-Allow-Origin"), "*");
    reply_free(&r);
}

/* ---- concurrency ---------------------------------------------------------------- */

#define CLIENTS 8
#define PER_CLIENT 8

struct client_job {
    uint16_t port;
    int index;
    int ok;
    char ids[PER_CLIENT][17];
};

static void *client_main(void *arg)
{
    struct client_job *j = arg;
    for (int i = 0; i < PER_CLIENT; i++) {
        char req[128], path[32];
        snprintf(path, sizeof path, "/c%d_%d", j->index, i);
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
        struct reply r;
        if (roundtrip_family(AF_INET, j->port, req, strlen(req), &r) < 0)
            continue;
        const char *got = echo_field(&r, "path");
        const char *id = reply_header(&r, "X-Request-Id");
        if (r.status == 200 && got && !strcmp(got, path) && is_request_id(id)) {
            snprintf(j->ids[i], sizeof j->ids[i], "%s", id);
            j->ok++;
        }
        reply_free(&r);
    }
    return NULL;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_concurrent_clients_are_all_answered_with_unique_ids(void **state)
{
    struct fixture *f = *state;
    struct client_job jobs[CLIENTS] = {0};
    pthread_t th[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        jobs[i].port = f->port;
        jobs[i].index = i;
        assert_int_equal(pthread_create(&th[i], NULL, client_main, &jobs[i]), 0);
    }
    static char ids[CLIENTS * PER_CLIENT][17];
    int k = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].ok, PER_CLIENT);
        for (int j = 0; j < PER_CLIENT; j++)
            memcpy(ids[k++], jobs[i].ids[j], 17);
    }
    qsort(ids, (size_t)k, sizeof ids[0], cmp_id);
    for (int i = 1; i < k; i++)
        assert_string_not_equal(ids[i - 1], ids[i]);
}

/* ---- stop ------------------------------------------------------------------------ */

struct slow_job {
    uint16_t port;
    struct reply r;
    int rc;
};

static void *slow_client(void *arg)
{
    struct slow_job *j = arg;
    const char *req = "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    j->rc = roundtrip_family(AF_INET, j->port, req, strlen(req), &j->r);
    return NULL;
}

/* A client that arrives while stop drains: it must be turned away at once,
 * not left waiting for the drain to end. */
struct late_job {
    uint16_t port;
    atomic_int *stop_called;
    int status;
    int connected;
    double took;
};

static void *late_client(void *arg)
{
    struct late_job *j = arg;
    while (!atomic_load(j->stop_called)) {
        struct timespec d = {0, 1000 * 1000};
        nanosleep(&d, NULL);
    }
    struct timespec d = {0, 100 * 1000 * 1000};
    nanosleep(&d, NULL);
    const char *req = "GET /late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    struct reply r = {0};
    double t0 = now_s();
    j->connected = roundtrip_family(AF_INET, j->port, req, strlen(req), &r) == 0;
    j->took = now_s() - t0;
    j->status = r.status;
    reply_free(&r);
    return NULL;
}

/* ---- streamed bodies ---------------------------------------------------------- */

struct stream_job {
    uint16_t port;
    const char *req;
    struct reply r;
};

static void *stream_client(void *arg)
{
    struct stream_job *j = arg;
    roundtrip_family(AF_INET, j->port, j->req, strlen(j->req), &j->r);
    return NULL;
}

/* The test's reference to the /stream request's stream, once the handler ran. */
static struct http_stream *wait_stream(struct fixture *f)
{
    double t0 = now_s();
    while (!atomic_load(&f->ctx.stream) && now_s() - t0 < 5) {
        struct timespec d = {0, 5 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    struct http_stream *st = atomic_exchange(&f->ctx.stream, NULL);
    assert_non_null(st);
    return st;
}

static void pause_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

static void test_a_stream_sends_what_is_written_as_it_comes_never_gzipped(void **state)
{
    struct fixture *f = *state;
    /* HTTP/1.0: the body ends when the connection closes (no chunks to undo). */
    struct stream_job j = {.port = f->port,
                           .req = "GET /stream HTTP/1.0\r\nAccept-Encoding: gzip\r\n\r\n"};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stream_client, &j), 0);
    struct http_stream *st = wait_stream(f);
    pause_ms(100); /* the connection has sent "hello;" and is parked */
    assert_true(http_stream_open(st));
    assert_int_equal(http_stream_write(st, "world;", 6), 0);
    pause_ms(50);
    assert_int_equal(http_stream_write(st, "bye", 3), 0);
    http_stream_end(st);
    assert_int_equal(http_stream_write(st, "late", 4), ERR_IO);
    pthread_join(th, NULL);
    assert_int_equal(j.r.status, 200);
    assert_int_equal(j.r.body_len, 15);
    assert_memory_equal(j.r.body, "hello;world;bye", 15);
    assert_string_equal(reply_header(&j.r, "Content-Type"), "text/event-stream");
    assert_null(reply_header(&j.r, "Content-Encoding"));
    assert_string_equal(reply_header(&j.r, "Cache-Control"), "no-cache");
    assert_string_equal(reply_header(&j.r, "Access-Control-Allow-Origin"), "*");
    reply_free(&j.r);
    http_stream_release(st);
}

static void test_a_stream_over_its_bound_is_cut_off(void **state)
{
    struct fixture *f = *state;
    struct stream_job j = {.port = f->port, .req = "GET /stream HTTP/1.0\r\n\r\n"};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stream_client, &j), 0);
    struct http_stream *st = wait_stream(f);
    char big[65];
    memset(big, 'x', sizeof big);
    /* 64 bytes may wait unsent; 65 at once never fit. */
    assert_int_equal(http_stream_write(st, big, sizeof big), ERR_FULL);
    assert_false(http_stream_open(st));
    assert_int_equal(http_stream_write(st, "a", 1), ERR_IO);
    pthread_join(th, NULL); /* the client sees the connection end */
    reply_free(&j.r);
    http_stream_release(st);
}

static void test_stop_ends_open_streams_promptly(void **state)
{
    (void)state;
    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 2};
    struct fixture *f = fixture_start(&cfg);
    struct stream_job j = {.port = f->port, .req = "GET /stream HTTP/1.0\r\n\r\n"};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stream_client, &j), 0);
    struct http_stream *st = wait_stream(f);
    pause_ms(100);
    double s0 = now_s();
    http_server_stop(f->server);
    assert_true(now_s() - s0 < 3.0);
    pthread_join(th, NULL);
    assert_int_equal(j.r.status, 200);
    assert_false(http_stream_open(st));
    assert_int_equal(http_stream_write(st, "a", 1), ERR_IO);
    http_stream_release(st); /* the last reference: ASan sees it freed */
    reply_free(&j.r);
    free(f);
}

static void test_stop_lets_a_request_in_flight_finish(void **state)
{
    (void)state;
    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 2};
    struct fixture *f = fixture_start(&cfg);
    struct slow_job job = {.port = f->port};
    atomic_int stop_called = 0;
    struct late_job late = {.port = f->port, .stop_called = &stop_called};
    pthread_t th, th_late;
    assert_int_equal(pthread_create(&th, NULL, slow_client, &job), 0);
    assert_int_equal(pthread_create(&th_late, NULL, late_client, &late), 0);
    double t0 = now_s();
    while (!atomic_load(&f->ctx.slow_entered) && now_s() - t0 < 5) {
        struct timespec d = {0, 5 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    assert_true(atomic_load(&f->ctx.slow_entered));
    double s0 = now_s();
    atomic_store(&stop_called, 1);
    http_server_stop(f->server);
    double took = now_s() - s0;
    pthread_join(th, NULL);
    pthread_join(th_late, NULL);
    /* Turned away (closed without an answer) well before the drain ended. */
    assert_int_equal(late.status, 0);
    assert_true(late.took < 1.0);
    assert_int_equal(job.rc, 0);
    assert_int_equal(job.r.status, 200);
    assert_int_equal(job.r.body_len, 13);
    assert_memory_equal(job.r.body, "slow-finished", 13);
    /* Answered during the drain: keep-alive clients are told to leave. */
    assert_string_equal(reply_header(&job.r, "Connection"), "close");
    /* It waited for the handler, and not for the full bound. */
    assert_true(took > 0.5);
    assert_true(took < 8.0);
    reply_free(&job.r);
    /* The listening socket is closed, not merely ignored. */
    assert_int_equal(client_connect(AF_INET, f->port), -1);
    free(f);
}

/* Requests MHD ends without our handler (client gone mid-headers, headers
 * too large for the connection) must still be uncounted, or stop would
 * wait its full bound for them. */
static void test_stop_is_prompt_after_requests_that_never_reached_the_handler(void **state)
{
    (void)state;
    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 2};
    struct fixture *f = fixture_start(&cfg);

    int fd = client_connect(AF_INET, f->port);
    assert_true(fd >= 0);
    const char *part = "GET /gone?apiKey=x HTTP/1.1\r\nHost: x\r\n";
    assert_int_equal(send_all(fd, part, strlen(part)), 0);
    struct timespec d = {0, 100 * 1000 * 1000};
    nanosleep(&d, NULL);
    close(fd);

    size_t pad = 200 * 1024;
    char *req = malloc(pad + 128);
    assert_non_null(req);
    int n = snprintf(req, pad + 128, "GET /huge HTTP/1.1\r\nHost: x\r\nX-Pad: ");
    memset(req + n, 'p', pad);
    snprintf(req + n + pad, 128, "\r\nConnection: close\r\n\r\n");
    struct reply r;
    fd = client_connect(AF_INET, f->port);
    assert_true(fd >= 0);
    send_all(fd, req, strlen(req)); /* MHD may close before taking it all */
    size_t got;
    r.raw = recv_all(fd, &got);
    close(fd);
    free(r.raw);
    free(req);
    nanosleep(&d, NULL);

    double s0 = now_s();
    http_server_stop(f->server);
    assert_true(now_s() - s0 < 2.0);
    free(f);
}

static void test_a_slowloris_client_is_dropped(void **state)
{
    (void)state;
    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 1, .conn_timeout_s = 1};
    struct fixture *f = fixture_start(&cfg);
    int fd = client_connect(AF_INET, f->port);
    assert_true(fd >= 0);
    assert_int_equal(send_all(fd, "GET / HTTP/1.1\r\nHo", 18), 0);
    double t0 = now_s();
    char buf[256];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
        ;
    double took = now_s() - t0;
    close(fd);
    assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
    assert_true(took > 0.5 && took < 5.0); /* the timeout, not an early close */
    http_server_stop(f->server);
    free(f);
}

/* ---- listen addresses ------------------------------------------------------------- */

static void test_malformed_listen_addresses_are_refused(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "8080",
        "127.0.0.1",
        "127.0.0.1:",
        "127.0.0.1:65536",
        "127.0.0.1:-1",
        "127.0.0.1:80x",
        "::1:8080",
        "[::1]8080",
        "[::1",
        "[::1]:",
        ":123456",
        "host:0x10",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_config cfg = {.listen = bad[i], .threads = 1};
        struct http_server *s = (struct http_server *)1;
        struct err err;
        err_clear(&err);
        int rc = http_server_start(&s, &cfg, test_handler, NULL, &err);
        if (rc != ERR_INVALID)
            fail_msg("listen '%s': expected ERR_INVALID, got %d", bad[i], rc);
        assert_null(s);
        assert_true(err.msg[0] != '\0');
    }
    struct http_config cfg = {.listen = NULL, .threads = 1};
    struct http_server *s;
    struct err err;
    assert_int_equal(http_server_start(&s, &cfg, test_handler, NULL, &err), ERR_INVALID);
}

static void test_an_address_in_use_is_an_error(void **state)
{
    struct fixture *f = *state;
    char spec[32];
    snprintf(spec, sizeof spec, "127.0.0.1:%u", f->port);
    struct http_config cfg = {.listen = spec, .threads = 1};
    struct http_server *s;
    struct err err;
    err_clear(&err);
    assert_int_equal(http_server_start(&s, &cfg, test_handler, NULL, &err), ERR_IO);
    assert_non_null(strstr(err.msg, "in use"));
}

/* Whether the loopback interface has ::1: a kernel or a container network
 * namespace with IPv6 disabled has none (/proc/net/if_inet6 lists every
 * address the kernel holds). */
static bool ipv6_loopback_present(void)
{
    FILE *f = fopen("/proc/net/if_inet6", "r");
    char line[256];
    bool found = false;
    if (f == NULL)
        return false;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = strncmp(line, "00000000000000000000000000000001 ", 33) == 0;
    fclose(f);
    return found;
}

static void serve_one_on(const char *spec, int family)
{
    struct http_config cfg = {.listen = spec, .threads = 1};
    struct test_ctx ctx = {0};
    struct http_server *s;
    struct err err;
    err_clear(&err);
    /* Decided before listening, so that where ::1 exists a failure to listen
     * on it is a failure, not a skip. */
    if (family == AF_INET6 && !ipv6_loopback_present())
        TEST_SKIP_BY_DESIGN("IPv6 listen: no ::1 on the loopback interface "
                            "(IPv6 disabled in this kernel or network namespace)");
    int rc = http_server_start(&s, &cfg, test_handler, &ctx, &err);
    if (rc < 0)
        fail_msg("listen '%s': %s", spec, err_msg(&err, rc));
    struct reply r;
    const char *req = "GET /fam HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    /* family 0: a name that may resolve to either loopback; try both. */
    rc = roundtrip_family(family ? family : AF_INET, http_server_port(s), req, strlen(req), &r);
    if (rc < 0 && !family)
        rc = roundtrip_family(AF_INET6, http_server_port(s), req, strlen(req), &r);
    assert_int_equal(rc, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(echo_field(&r, "path"), "/fam");
    reply_free(&r);
    http_server_stop(s);
}

static void test_listen_takes_ipv4_ipv6_names_and_the_wildcard(void **state)
{
    (void)state;
    serve_one_on("127.0.0.1:0", AF_INET);
    serve_one_on(":0", AF_INET); /* dual-stack wildcard takes IPv4 clients */
    serve_one_on("localhost:0", 0);
}

static void test_listen_takes_an_ipv6_literal(void **state)
{
    (void)state;
    serve_one_on("[::1]:0", AF_INET6);
}

/* ---- access log ------------------------------------------------------------------- */

static void test_the_access_log_target_masks_only_key_values(void **state)
{
    (void)state;
    static const struct {
        const char *path, *query, *want;
    } cases[] = {
        {"/p", "", "/p"},
        {"/p", NULL, "/p"},
        {"/v2/everything", "q=x&apiKey=SECRET", "/v2/everything?q=x&apiKey=***"},
        {"/p", "APIKEY=SECRET&a=1", "/p?APIKEY=***&a=1"},
        {"/p", "apikey=SECRET&apikey=OTHER", "/p?apikey=***&apikey=***"},
        {"/p", "api%4Bey=SECRET", "/p?api%4Bey=***"},
        {"/p", "%61%70%69%6b%65%79=SECRET", "/p?%61%70%69%6b%65%79=***"},
        {"/p", "apiKey=", "/p?apiKey=***"},
        {"/p", "apiKey", "/p?apiKey"},
        {"/p", "apiKeyX=v&xapiKey=v&api+Key=v", "/p?apiKeyX=v&xapiKey=v&api+Key=v"},
        {"/p", "q=apiKey=SECRET", "/p?q=apiKey=SECRET"}, /* a value, not a name */
        {"/p", "apiKey=a=b&c", "/p?apiKey=***&c"},
        {"/p", "&&apiKey=S&&", "/p?&&apiKey=***&&"},
        {"/p", "a=%zz&apikey%=x", "/p?a=%zz&apikey%=x"},
        {"/p", "apikey%", "/p?apikey%"},
        /* Clients that lost their '?': the key is in the path. */
        {"/v2/everything&apiKey=SECRET", "", "/v2/everything&apiKey=***"},
        {"/v2/everything;apiKey=SECRET", "q=a", "/v2/everything;apiKey=***?q=a"},
        {"/v2/everything;APIKEY=SECRET;x=1", NULL, "/v2/everything;APIKEY=***;x=1"},
        {"/p", "q=a;apiKey=SECRET", "/p?q=a;apiKey=***"},
        /* Bytes a terminal would obey, and the backslash, are escaped. */
        {"/\x1b[31mred", "q=\r\n", "/\\x1b[31mred?q=\\x0d\\x0a"},
        {"/caf\xc3\xa9", "a=\\", "/caf\\xc3\\xa9?a=\\x5c"},
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = http_accesslog_target(out, sizeof out, cases[i].path, 0, cases[i].query);
        if (strcmp(out, cases[i].want))
            fail_msg("case %zu: got '%s', want '%s'", i, out, cases[i].want);
        assert_int_equal(n, strlen(out));
    }
}

static void test_the_access_log_target_is_cut_after_masking(void **state)
{
    (void)state;
    char out[16];
    /* The cut falls inside the masked value: no byte of the key shows. */
    http_accesslog_target(out, sizeof out, "/pp", 0, "apiKey=SECRET&b=2");
    assert_string_equal(out, "/pp?apiKey=*...");
    assert_null(strstr(out, "SECRET"));
    http_accesslog_target(out, sizeof out, "/a-very-long-path-indeed", 0, "q=1");
    assert_string_equal(out, "/a-very-long...");
    http_accesslog_target(out, sizeof out, "/exactly-15byte", 0, "");
    assert_string_equal(out, "/exactly-15byte");
    /* Every split point of a key-bearing query, every buffer size. */
    const char *q = "a=1&apikey=KEYVALUE&b=2";
    for (size_t cap = 1; cap < 40; cap++) {
        char buf[40];
        http_accesslog_target(buf, cap, "/p", 0, q);
        assert_true(strlen(buf) < cap);
        assert_null(strstr(buf, "KEY"));
        assert_null(strstr(buf, "VALUE"));
    }
    /* An escape is never cut in half. */
    for (size_t cap = 1; cap < 12; cap++) {
        char buf[12];
        http_accesslog_target(buf, cap, "/\x1b\x1b", 0, NULL);
        for (const char *bs = strchr(buf, '\\'); bs; bs = strchr(bs + 1, '\\'))
            assert_true(bs[1] == 'x' && bs[2] == '1' && bs[3] == 'b');
    }
}

static void test_a_404_path_is_logged_up_to_its_first_unknown_segment(void **state)
{
    (void)state;
    char out[128];
    http_accesslog_target(out, sizeof out, "/v2/everything/SECRETKEY", strlen("/v2/everything"),
                          "q=a");
    assert_string_equal(out, "/v2/everything/...?q=a");
    http_accesslog_target(out, sizeof out, "/SECRETKEY/x", 0, NULL);
    assert_string_equal(out, "/SECRETKEY/x"); /* 0: the whole path */
    http_accesslog_target(out, sizeof out, "/v2/SECRETKEY", strlen("/v2"), NULL);
    assert_string_equal(out, "/v2/...");
    http_accesslog_target(out, sizeof out, "/SECRETKEY", 1, NULL);
    assert_string_equal(out, "/...");
}

static char *read_file_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void test_the_access_log_has_one_masked_line_per_request(void **state)
{
    (void)state;
    char path[] = "/tmp/newsd_test_http_log_XXXXXX";
    int logfd = mkstemp(path);
    assert_true(logfd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(logfd, STDERR_FILENO);

    struct http_config cfg = {.listen = "127.0.0.1:0", .threads = 2, .access_log = true};
    struct test_ctx ctx = {0};
    struct http_server *s;
    struct err err;
    int rc = http_server_start(&s, &cfg, test_handler, &ctx, &err);
    struct reply r = {0};
    char id[32] = "";
    if (rc == 0) {
        roundtrip(http_server_port(s),
                  "GET /note?q=x&apiKey=SECRETKEY1 HTTP/1.1\r\nHost: x\r\n"
                  "X-Api-Key: SECRETKEY2\r\nAuthorization: Bearer SECRETKEY3\r\n"
                  "Connection: close\r\n\r\n",
                  &r);
        snprintf(id, sizeof id, "%s", reply_header(&r, "X-Request-Id"));
        reply_free(&r);
        roundtrip(
            http_server_port(s),
            "GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
            &r);
        reply_free(&r);
        http_server_stop(s); /* every completion is logged by now */
    }
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(logfd);
    assert_int_equal(rc, 0);
    char *log = read_file_all(path);
    unlink(path);

    assert_null(strstr(log, "SECRETKEY"));
    const char *line = strstr(log, "http 127.0.0.1 GET /note?q=x&apiKey=*** 200 ");
    assert_non_null(line);
    const char *eol = strchr(line, '\n');
    assert_non_null(eol);
    char one[1024];
    snprintf(one, sizeof one, "%.*s", (int)(eol - line), line);
    char want_id[48];
    snprintf(want_id, sizeof want_id, "id=%s", id);
    assert_non_null(strstr(one, want_id));
    assert_non_null(strstr(one, "note-here"));
    assert_non_null(strstr(one, " us="));
    /* The gzipped one says both sizes. */
    line = strstr(log, "http 127.0.0.1 GET /big 200 bytes=20000 gz=");
    assert_non_null(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_raw_query_reaches_the_handler_undecoded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_path_without_query_gives_an_empty_query, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_raw_space_in_the_target_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_nul_in_a_header_value_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_headers_are_not_taken_for_a_nul, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_nul_is_found_in_a_pipelined_request, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_nul_in_the_target_is_reported, setup, teardown),
        cmocka_unit_test(test_the_nul_scan_claims_nothing_it_cannot_tell),
        cmocka_unit_test_setup_teardown(test_header_lookup_ignores_case, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_bytes_sum_names_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_stream_sends_what_is_written_as_it_comes_never_gzipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stream_over_its_bound_is_cut_off, setup, teardown),
        cmocka_unit_test(test_stop_ends_open_streams_promptly),
        cmocka_unit_test_setup_teardown(test_every_response_carries_id_cors_and_vary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_handler_sees_the_id_it_is_answered_with, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_handler_cors_origin_is_not_overridden, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_options_is_answered_without_the_handler, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_head_has_no_body_but_the_get_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_large_body_is_gzipped_when_accepted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gzip_is_not_used_when_it_should_not_be, setup,
                                        teardown),
        cmocka_unit_test(test_accept_encoding_is_parsed_with_q_values),
        cmocka_unit_test(test_gzip_compress_refuses_what_it_cannot_shrink),
        cmocka_unit_test_setup_teardown(test_a_request_body_is_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_alive_serves_two_requests_on_one_connection,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_busy_handler_holds_up_no_other_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_10k_url_reaches_the_handler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_20k_of_headers_reach_the_handler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_request_over_both_api_limits_reaches_the_handler,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_invalid_handler_status_becomes_a_500, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_clients_are_all_answered_with_unique_ids,
                                        setup, teardown),
        cmocka_unit_test(test_stop_lets_a_request_in_flight_finish),
        cmocka_unit_test(test_stop_is_prompt_after_requests_that_never_reached_the_handler),
        cmocka_unit_test(test_a_slowloris_client_is_dropped),
        cmocka_unit_test(test_malformed_listen_addresses_are_refused),
        cmocka_unit_test_setup_teardown(test_an_address_in_use_is_an_error, setup, teardown),
        cmocka_unit_test(test_listen_takes_ipv4_ipv6_names_and_the_wildcard),
        cmocka_unit_test(test_listen_takes_an_ipv6_literal),
        cmocka_unit_test(test_the_access_log_target_masks_only_key_values),
        cmocka_unit_test(test_the_access_log_target_is_cut_after_masking),
        cmocka_unit_test(test_a_404_path_is_logged_up_to_its_first_unknown_segment),
        cmocka_unit_test(test_the_access_log_has_one_masked_line_per_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
