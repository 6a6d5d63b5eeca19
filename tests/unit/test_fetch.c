/* The feed fetcher (fetch/fetch.h) against tiny HTTP servers run by the
 * test itself on 127.0.0.1 (a thread per server, a thread per connection,
 * canned responses and the real feed files of tests/data/feeds). Every
 * server stops by itself; no request leaves the loopback interface. The
 * fetches allow the loopback networks (the network policy refuses them by
 * default; the policy's own tests are at the end). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ingest/feeds/feeds.h"
#include "fetch/fetch.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/netpolicy.h"
#include "test_loopback.h"

#define DATA "../data/feeds/"
#define GUARDIAN "rbren__rss-parser/test/input/guardian.rss"
#define ICONV "danmactough__node-feedparser/test/feeds/iconv.xml"
#define COMPRESSED "danmactough__node-feedparser/test/feeds/compressed.xml"
#define ETAG "\"v1-guardian\""
#define LAST_MODIFIED "Wed, 31 Jan 2018 20:15:15 GMT"
#define MAX_CONN_THREADS 64

struct server {
    int fd;
    int port;
    char host[16]; /* the loopback address it listens on */
    char to[128];  /* where /redirect-away sends: a URL */
    pthread_t thread;
    atomic_bool stop;
    atomic_int requests;
    atomic_int current;         /* /delay/ requests being answered now */
    atomic_int max_current;     /* highest value of current */
    atomic_int *global_current; /* shared by several servers, or NULL */
    atomic_int *global_max;
    pthread_mutex_t lock;
    char last_request[4096]; /* head of the last request, under lock */
    char last_body[4096];    /* body of the last POST, under lock */
    pthread_t conns[MAX_CONN_THREADS];
    size_t n_conns;
};

struct conn {
    struct server *srv;
    int fd;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void send_head(int fd, const char *status, const char *extra, long content_length)
{
    char head[1024];
    if (content_length >= 0)
        snprintf(head, sizeof head,
                 "HTTP/1.1 %s\r\nConnection: close\r\n%sContent-Length: %ld\r\n\r\n", status, extra,
                 content_length);
    else
        snprintf(head, sizeof head, "HTTP/1.1 %s\r\nConnection: close\r\n%s\r\n", status, extra);
    test_send_all(fd, head, strlen(head));
}

static void send_file(int fd, const char *rel, const char *extra)
{
    size_t len = 0;
    char *b = test_read_data(DATA, rel, &len);
    if (!b) {
        send_head(fd, "404 Not Found", "", 0);
        return;
    }
    send_head(fd, "200 OK", extra, (long)len);
    test_send_all(fd, b, len);
    free(b);
}

/* The value of header name in the request head, copied to out. */
static bool req_header(const char *req, const char *name, char *out, size_t out_size)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(req, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\r\n");
            if (n >= out_size)
                n = out_size - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

static void serve_gzip_bomb(int fd)
{
    /* 32 MiB of zeros compress to a few tens of KiB. */
    size_t raw = 32u * 1024 * 1024;
    unsigned char *zeros = calloc(1, raw);
    uLong bound = compressBound((uLong)raw) + 64;
    unsigned char *gz = malloc(bound);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (!zeros || !gz ||
        deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        send_head(fd, "500 Internal Server Error", "", 0);
        goto out;
    }
    zs.next_in = zeros;
    zs.avail_in = (uInt)raw;
    zs.next_out = gz;
    zs.avail_out = (uInt)bound;
    deflate(&zs, Z_FINISH);
    size_t n = zs.total_out;
    deflateEnd(&zs);
    send_head(fd, "200 OK", "Content-Type: application/rss+xml\r\nContent-Encoding: gzip\r\n",
              (long)n);
    test_send_all(fd, gz, n);
out:
    free(zeros);
    free(gz);
}

static void busy_enter(struct server *srv)
{
    int cur = atomic_fetch_add(&srv->current, 1) + 1;
    int m = atomic_load(&srv->max_current);
    while (cur > m && !atomic_compare_exchange_weak(&srv->max_current, &m, cur))
        ;
    if (srv->global_current) {
        int g = atomic_fetch_add(srv->global_current, 1) + 1;
        int gm = atomic_load(srv->global_max);
        while (g > gm && !atomic_compare_exchange_weak(srv->global_max, &gm, g))
            ;
    }
}

static void busy_leave(struct server *srv)
{
    if (srv->global_current)
        atomic_fetch_sub(srv->global_current, 1);
    atomic_fetch_sub(&srv->current, 1);
}

/* A POST (webhook deliveries): its body kept, answered 202. */
static void route_post(struct server *srv, int fd, const char *req)
{
    const char *body = strstr(req, "\r\n\r\n") + 4;
    char cl[32] = "", buf[4096];
    req_header(req, "Content-Length", cl, sizeof cl);
    size_t want = strtoul(cl, NULL, 10), have = strlen(body);
    memcpy(buf, body, have);
    while (have < want && have < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    buf[have] = '\0';
    pthread_mutex_lock(&srv->lock);
    snprintf(srv->last_body, sizeof srv->last_body, "%s", buf);
    pthread_mutex_unlock(&srv->lock);
    send_head(fd, "202 Accepted", "", 0);
}

static void route(struct server *srv, int fd, const char *req)
{
    char path[1024] = "";
    if (!strncmp(req, "POST ", 5)) {
        route_post(srv, fd, req);
        return;
    }
    if (sscanf(req, "GET %1023s HTTP/1.", path) != 1) {
        send_head(fd, "400 Bad Request", "", 0);
        return;
    }
    char inm[256] = "", ims[256] = "";
    req_header(req, "If-None-Match", inm, sizeof inm);
    req_header(req, "If-Modified-Since", ims, sizeof ims);

    if (strcmp(path, "/guardian") == 0) {
        if (strcmp(inm, ETAG) == 0 || (!inm[0] && strcmp(ims, LAST_MODIFIED) == 0)) {
            send_head(fd, "304 Not Modified", "ETag: " ETAG "\r\n", -1);
            return;
        }
        send_file(fd, GUARDIAN,
                  "Content-Type: application/rss+xml; charset=UTF-8\r\nETag: " ETAG
                  "\r\nLast-Modified: " LAST_MODIFIED "\r\n");
    } else if (strcmp(path, "/compressed") == 0) {
        /* The data set's gzip file is the windows-1251 feed, compressed. */
        send_file(fd, COMPRESSED,
                  "Content-Type: text/xml; charset=windows-1251\r\nContent-Encoding: gzip\r\n");
    } else if (strncmp(path, "/redirect/", 10) == 0) {
        int left = (int)strtol(path + 10, NULL, 10);
        if (left <= 0) {
            send_file(fd, "danmactough__node-feedparser/test/feeds/rss2sample.xml",
                      "Content-Type: application/rss+xml\r\n");
        } else {
            char loc[128];
            snprintf(loc, sizeof loc, "Location: /redirect/%d\r\n", left - 1);
            send_head(fd, "301 Moved Permanently", loc, 0);
        }
    } else if (strcmp(path, "/redirect-away") == 0) {
        char loc[192];
        snprintf(loc, sizeof loc, "Location: %s\r\n", srv->to);
        send_head(fd, "302 Found", loc, 0);
    } else if (strcmp(path, "/redirect-to-file") == 0) {
        send_head(fd, "302 Found", "Location: file:///etc/passwd\r\n", 0);
    } else if (strcmp(path, "/slow") == 0) {
        /* Headers at once, then a byte now and then: only a total timeout
         * ends this. Gives up after 10 s or when the client leaves. */
        send_head(fd, "200 OK", "Content-Type: application/rss+xml\r\n", 1000);
        for (int i = 0; i < 40 && !atomic_load(&srv->stop); i++) {
            if (!test_send_all(fd, " ", 1))
                break;
            sleep_ms(250);
        }
    } else if (strncmp(path, "/delay/", 7) == 0) {
        /* Counted while the answer is being prepared, and no longer once
         * its bytes go out: the client's next request on this host can
         * only follow the answer, so a slow close is not an overlap. */
        busy_enter(srv);
        sleep_ms(strtol(path + 7, NULL, 10));
        busy_leave(srv);
        send_head(fd, "200 OK", "Content-Type: text/plain\r\n", 2);
        test_send_all(fd, "ok", 2);
    } else if (strcmp(path, "/big-announced") == 0) {
        send_head(fd, "200 OK", "Content-Type: application/rss+xml\r\n", 20L * 1024 * 1024);
        static const char chunk[4096];
        for (int i = 0; i < 5120 && test_send_all(fd, chunk, sizeof chunk); i++)
            ;
    } else if (strcmp(path, "/big-unannounced") == 0) {
        send_head(fd, "200 OK", "Content-Type: application/rss+xml\r\n", -1);
        static const char chunk[4096];
        for (int i = 0; i < 5120 && test_send_all(fd, chunk, sizeof chunk); i++)
            ;
    } else if (strcmp(path, "/gzip-bomb") == 0) {
        serve_gzip_bomb(fd);
    } else if (strncmp(path, "/status/", 8) == 0) {
        char status[64];
        long code = strtol(path + 8, NULL, 10);
        snprintf(status, sizeof status, "%ld %s", code, code == 404 ? "Not Found" : "Oops");
        send_head(fd, status, "Content-Type: text/html\r\n", 5);
        test_send_all(fd, "oops!", 5);
    } else {
        send_head(fd, "404 Not Found", "", 0);
    }
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct server *srv = c->srv;
    char req[4096];
    size_t len = 0;
    while (len < sizeof req - 1) {
        struct pollfd p = {c->fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            break;
        ssize_t r = recv(c->fd, req + len, sizeof req - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        req[len] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    req[len] = '\0';
    if (strstr(req, "\r\n\r\n")) {
        atomic_fetch_add(&srv->requests, 1);
        pthread_mutex_lock(&srv->lock);
        snprintf(srv->last_request, sizeof srv->last_request, "%s", req);
        pthread_mutex_unlock(&srv->lock);
        route(srv, c->fd, req);
    }
    shutdown(c->fd, SHUT_WR);
    close(c->fd);
    free(c);
    return NULL;
}

static void *server_main(void *arg)
{
    struct server *srv = arg;
    while (!atomic_load(&srv->stop)) {
        struct pollfd p = {srv->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(srv->fd, NULL, NULL);
        if (fd < 0)
            continue;
        struct conn *c = malloc(sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->srv = srv;
        c->fd = fd;
        if (srv->n_conns < MAX_CONN_THREADS &&
            pthread_create(&srv->conns[srv->n_conns], NULL, conn_main, c) == 0)
            srv->n_conns++;
        else
            conn_main(c);
    }
    for (size_t i = 0; i < srv->n_conns; i++)
        pthread_join(srv->conns[i], NULL);
    return NULL;
}

/* A server on the loopback address host (127.0.0.1, 127.0.0.2, ...). */
static void server_start_on(struct server *srv, const char *host)
{
    memset(srv, 0, sizeof *srv);
    snprintf(srv->host, sizeof srv->host, "%s", host);
    pthread_mutex_init(&srv->lock, NULL);
    srv->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(srv->fd >= 0);
    int one = 1;
    setsockopt(srv->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, host, &sa.sin_addr), 1);
    sa.sin_port = 0;
    assert_int_equal(bind(srv->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(srv->fd, 64), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(srv->fd, (struct sockaddr *)&sa, &sl), 0);
    srv->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

static void server_start(struct server *srv)
{
    server_start_on(srv, "127.0.0.1");
}

static void server_stop(struct server *srv)
{
    atomic_store(&srv->stop, true);
    pthread_join(srv->thread, NULL);
    close(srv->fd);
    pthread_mutex_destroy(&srv->lock);
}

static char *url_of(const struct server *srv, const char *path)
{
    static char urls[8][256];
    static int next;
    char *u = urls[next++ % 8];
    snprintf(u, 256, "http://%s:%d%s", srv->host, srv->port, path);
    return u;
}

static int setup(void **state)
{
    struct server *srv = malloc(sizeof *srv);
    if (!srv)
        return -1;
    server_start(srv);
    *state = srv;
    return 0;
}

static int teardown(void **state)
{
    struct server *srv = *state;
    server_stop(srv);
    free(srv);
    return 0;
}

/* 127.0.0.0/8 and ::1: what the tests' servers listen on. */
static struct netpolicy loopback;
static const struct fetch_options loopback_opts = {.policy = &loopback};

/* opt (NULL: defaults) with the loopback policy unless it has its own. */
static struct fetch_result fetch_one(const char *url, const char *etag, const char *lm,
                                     const struct fetch_options *opt)
{
    struct fetch_request req = {.url = url, .etag = etag, .last_modified = lm};
    struct fetch_result res;
    struct fetch_options o = opt ? *opt : loopback_opts;
    if (!o.policy)
        o.policy = &loopback;
    assert_int_equal(fetch_run(&req, 1, &o, &res), 0);
    return res;
}

/* ---- tests ---------------------------------------------------------------------- */

static void a_feed_is_fetched_with_its_validators_and_parses(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_one(url_of(srv, "/guardian"), NULL, NULL, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    size_t len = 0;
    char *want = test_read_data(DATA, GUARDIAN, &len);
    assert_non_null(want);
    assert_int_equal(r.len, len);
    assert_memory_equal(r.body, want, len);
    assert_int_equal(r.body[r.len], '\0');
    free(want);
    assert_string_equal(r.etag, ETAG);
    assert_string_equal(r.last_modified, LAST_MODIFIED);
    assert_string_equal(r.content_type, "application/rss+xml; charset=UTF-8");
    assert_string_equal(r.effective_url, url_of(srv, "/guardian"));
    assert_int_equal(r.redirects, 0);
    assert_true(r.total_s > 0);

    /* What the server saw: our User-Agent, an Accept-Encoding, no validators. */
    pthread_mutex_lock(&srv->lock);
    char v[256];
    assert_true(req_header(srv->last_request, "User-Agent", v, sizeof v));
    assert_string_equal(v, FETCH_DEFAULT_USER_AGENT);
    assert_true(req_header(srv->last_request, "Accept-Encoding", v, sizeof v));
    assert_non_null(strstr(v, "gzip"));
    assert_non_null(strstr(v, "deflate"));
    assert_false(req_header(srv->last_request, "If-None-Match", v, sizeof v));
    pthread_mutex_unlock(&srv->lock);

    /* And the body is a feed the parser reads, with the header's charset. */
    char charset[32];
    assert_true(fetch_content_type_charset(r.content_type, charset, sizeof charset));
    assert_string_equal(charset, "utf-8");
    struct arena a;
    arena_init(&a, 0);
    struct feed f;
    struct err e = {0};
    assert_int_equal(feed_parse(&a, r.body, r.len, charset, r.effective_url, &f, &e), 0);
    assert_int_equal(f.format, FEED_FORMAT_RSS);
    assert_string_equal(f.title, "The Guardian");
    assert_int_equal(f.n_items, 55);
    arena_release(&a);
    fetch_result_release(&r);
}

static void validators_give_a_304_without_body(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_one(url_of(srv, "/guardian"), ETAG, NULL, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.len, 0);
    pthread_mutex_lock(&srv->lock);
    char v[256];
    assert_true(req_header(srv->last_request, "If-None-Match", v, sizeof v));
    assert_string_equal(v, ETAG);
    pthread_mutex_unlock(&srv->lock);
    fetch_result_release(&r);

    r = fetch_one(url_of(srv, "/guardian"), NULL, LAST_MODIFIED, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 304);
    fetch_result_release(&r);

    /* A stale validator gets the full body again. */
    r = fetch_one(url_of(srv, "/guardian"), "\"v0\"", NULL, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    assert_true(r.len > 100000);
    fetch_result_release(&r);
}

static void a_gzip_body_arrives_decoded(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_one(url_of(srv, "/compressed"), NULL, NULL, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    size_t len = 0;
    char *want = test_read_data(DATA, ICONV, &len);
    assert_non_null(want);
    assert_int_equal(r.len, len);
    assert_memory_equal(r.body, want, len);
    free(want);
    fetch_result_release(&r);
}

static void five_redirects_are_followed_and_six_are_refused(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_one(url_of(srv, "/redirect/5"), NULL, NULL, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.redirects, 5);
    assert_string_equal(r.effective_url, url_of(srv, "/redirect/0"));
    assert_non_null(strstr(r.body, "Liftoff News"));
    fetch_result_release(&r);

    r = fetch_one(url_of(srv, "/redirect/6"), NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_IO);
    assert_null(r.body);
    assert_true(r.errbuf[0] != '\0');
    fetch_result_release(&r);

    struct fetch_options o = {.max_redirects = -1};
    r = fetch_one(url_of(srv, "/redirect/1"), NULL, NULL, &o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 301);
    fetch_result_release(&r);
}

static void only_http_and_https_are_spoken_even_after_a_redirect(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_one(url_of(srv, "/redirect-to-file"), NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_INVALID);
    assert_null(r.body);
    fetch_result_release(&r);

    r = fetch_one("file:///etc/passwd", NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_INVALID);
    assert_null(r.body);
    fetch_result_release(&r);

    r = fetch_one("ftp://127.0.0.1:1/x", NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_INVALID);
    fetch_result_release(&r);
}

static void a_slow_response_times_out_without_hanging(void **state)
{
    struct server *srv = *state;
    struct fetch_options o = {.timeout_ms = 1000};
    double t0 = now_s();
    struct fetch_result r = fetch_one(url_of(srv, "/slow"), NULL, NULL, &o);
    double took = now_s() - t0;
    assert_int_equal(r.rc, ERR_TIMEOUT);
    assert_null(r.body);
    assert_true(took >= 0.9);
    assert_true(took < 5.0);
    fetch_result_release(&r);
}

static void oversized_bodies_are_refused(void **state)
{
    struct server *srv = *state;
    struct fetch_options o = {.max_body = 1024 * 1024};
    /* Announced by Content-Length: refused before the body is read. */
    struct fetch_result r = fetch_one(url_of(srv, "/big-announced"), NULL, NULL, &o);
    assert_int_equal(r.rc, ERR_TOO_LARGE);
    assert_null(r.body);
    fetch_result_release(&r);
    /* Not announced: the write callback stops it. */
    r = fetch_one(url_of(srv, "/big-unannounced"), NULL, NULL, &o);
    assert_int_equal(r.rc, ERR_TOO_LARGE);
    assert_null(r.body);
    fetch_result_release(&r);
    /* Small on the wire, huge once inflated. */
    r = fetch_one(url_of(srv, "/gzip-bomb"), NULL, NULL, &o);
    assert_int_equal(r.rc, ERR_TOO_LARGE);
    assert_null(r.body);
    fetch_result_release(&r);
    /* The default limit (10 MiB) also stops the 20 MiB body. */
    r = fetch_one(url_of(srv, "/big-unannounced"), NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_TOO_LARGE);
    fetch_result_release(&r);
}

static void error_statuses_are_responses_not_failures(void **state)
{
    struct server *srv = *state;
    struct fetch_request reqs[] = {
        {.url = url_of(srv, "/status/404"), .ctx = (void *)"a"},
        {.url = url_of(srv, "/status/500"), .ctx = (void *)"b"},
    };
    struct fetch_result res[2];
    assert_int_equal(fetch_run(reqs, 2, &loopback_opts, res), 0);
    assert_int_equal(res[0].rc, 0);
    assert_int_equal(res[0].status, 404);
    assert_ptr_equal(res[0].ctx, reqs[0].ctx);
    assert_int_equal(res[1].rc, 0);
    assert_int_equal(res[1].status, 500);
    assert_ptr_equal(res[1].ctx, reqs[1].ctx);
    fetch_result_release(&res[0]);
    fetch_result_release(&res[1]);
}

static void a_post_sends_its_body_and_its_headers(void **state)
{
    struct server *srv = *state;
    static const char body[] = "{\"alert\":1,\"articles\":[]}";
    const char *headers[] = {"Content-Type: application/json", "X-Newsd-Delivery: abc"};
    struct fetch_request req = {.url = url_of(srv, "/hook"),
                                .post_body = body,
                                .post_len = sizeof body - 1,
                                .headers = headers,
                                .n_headers = 2};
    struct fetch_result res;
    struct fetch_options o = loopback_opts;
    o.max_redirects = -1;
    assert_int_equal(fetch_run(&req, 1, &o, &res), 0);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.status, 202);
    fetch_result_release(&res);
    pthread_mutex_lock(&srv->lock);
    assert_non_null(strstr(srv->last_request, "POST /hook HTTP/1.1"));
    assert_non_null(strstr(srv->last_request, "X-Newsd-Delivery: abc"));
    assert_non_null(strstr(srv->last_request, "Content-Type: application/json"));
    assert_null(strstr(srv->last_request, "application/rss+xml")); /* not a feed's Accept */
    assert_string_equal(srv->last_body, body);
    pthread_mutex_unlock(&srv->lock);
    /* A header line with a line break would smuggle another: refused. */
    const char *bad[] = {"X-A: 1\r\nX-B: 2"};
    req.headers = bad;
    req.n_headers = 1;
    assert_int_equal(fetch_run(&req, 1, &o, &res), 0);
    assert_int_equal(res.rc, ERR_INVALID);
    fetch_result_release(&res);
}

static void a_refused_connection_is_an_io_error(void **state)
{
    (void)state;
    /* A port that was just bound and closed: nobody listens there. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(sa.sin_port));
    struct fetch_result r = fetch_one(url, NULL, NULL, NULL);
    assert_int_equal(r.rc, ERR_IO);
    assert_int_equal(r.status, 0);
    assert_true(r.errbuf[0] != '\0');
    fetch_result_release(&r);
}

/* Three hosts (servers), two slow requests each: hosts are fetched at the
 * same time, but each host sees one connection at a time. */
static void hosts_are_fetched_concurrently_one_connection_each(void **state)
{
    (void)state;
    struct server srv[3];
    atomic_int global_current = 0, global_max = 0;
    for (int i = 0; i < 3; i++) {
        server_start(&srv[i]);
        srv[i].global_current = &global_current;
        srv[i].global_max = &global_max;
    }
    char urls[6][128];
    struct fetch_request reqs[6];
    for (int i = 0; i < 6; i++) {
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d/delay/300", srv[i % 3].port);
        reqs[i] = (struct fetch_request){.url = urls[i]};
    }
    struct fetch_result res[6];
    assert_int_equal(fetch_run(reqs, 6, &loopback_opts, res), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(res[i].rc, 0);
        assert_int_equal(res[i].status, 200);
        assert_string_equal(res[i].body, "ok");
        fetch_result_release(&res[i]);
    }
    for (int i = 0; i < 3; i++) {
        server_stop(&srv[i]);
        assert_int_equal(atomic_load(&srv[i].requests), 2);
        assert_int_equal(atomic_load(&srv[i].max_current), 1);
    }
    assert_true(atomic_load(&global_max) >= 2);
}

/* Transfers to one host wait their turn (politeness), and each one's
 * timeout counts from its own start, not from the batch's (issue 23):
 * eight answers of 300 ms, one after the other, take 2.4 s, and none
 * times out under a 1 s limit. */
static void queued_transfers_to_one_host_each_get_their_own_timeout(void **state)
{
    struct server *srv = *state;
    enum { N = 8 };
    char urls[N][128];
    struct fetch_request reqs[N];
    struct fetch_result res[N];
    for (int i = 0; i < N; i++) {
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d/delay/300", srv->port);
        reqs[i] = (struct fetch_request){.url = urls[i]};
    }
    struct fetch_options o = loopback_opts;
    o.timeout_ms = 1000;
    assert_int_equal(fetch_run(reqs, N, &o, res), 0);
    for (int i = 0; i < N; i++) {
        if (res[i].rc != 0)
            fail_msg("transfer %d: %s", i, res[i].errbuf);
        assert_int_equal(res[i].status, 200);
        fetch_result_release(&res[i]);
    }
    assert_int_equal(atomic_load(&srv->requests), N);
    assert_int_equal(atomic_load(&srv->max_current), 1);
}

/* The bound on connections in all waits the same way: with one
 * connection for the batch, four hosts' transfers run one at a time, each
 * with its whole timeout. */
static void transfers_past_max_connections_wait_without_their_timeout_running(void **state)
{
    (void)state;
    enum { HOSTS = 4, N = 8 };
    struct server srv[HOSTS];
    atomic_int global_current = 0, global_max = 0;
    for (int i = 0; i < HOSTS; i++) {
        server_start(&srv[i]);
        srv[i].global_current = &global_current;
        srv[i].global_max = &global_max;
    }
    char urls[N][128];
    struct fetch_request reqs[N];
    struct fetch_result res[N];
    for (int i = 0; i < N; i++) {
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d/delay/300", srv[i % HOSTS].port);
        reqs[i] = (struct fetch_request){.url = urls[i]};
    }
    struct fetch_options o = loopback_opts;
    o.timeout_ms = 1000;
    o.max_connections = 1;
    assert_int_equal(fetch_run(reqs, N, &o, res), 0);
    for (int i = 0; i < N; i++) {
        if (res[i].rc != 0)
            fail_msg("transfer %d: %s", i, res[i].errbuf);
        fetch_result_release(&res[i]);
    }
    for (int i = 0; i < HOSTS; i++)
        server_stop(&srv[i]);
    assert_int_equal(atomic_load(&global_max), 1);
}

static void an_empty_batch_and_a_missing_url_are_handled(void **state)
{
    (void)state;
    assert_int_equal(fetch_run(NULL, 0, NULL, NULL), 0);
    struct fetch_request req = {.url = NULL};
    struct fetch_result r;
    assert_int_equal(fetch_run(&req, 1, NULL, &r), 0);
    assert_int_equal(r.rc, ERR_INVALID);
    fetch_result_release(&r);
    fetch_result_release(NULL);
}

static void the_charset_is_read_from_a_content_type(void **state)
{
    (void)state;
    char cs[32];
    assert_true(fetch_content_type_charset("text/xml; charset=ISO-8859-1", cs, sizeof cs));
    assert_string_equal(cs, "iso-8859-1");
    assert_true(fetch_content_type_charset("text/xml;charset=\"UTF-8\"", cs, sizeof cs));
    assert_string_equal(cs, "utf-8");
    assert_true(
        fetch_content_type_charset("text/xml; foo=bar; Charset = koi8-r ; x=y", cs, sizeof cs));
    assert_string_equal(cs, "koi8-r");
    assert_false(fetch_content_type_charset("application/rss+xml", cs, sizeof cs));
    assert_false(fetch_content_type_charset("text/xml; charset=", cs, sizeof cs));
    assert_false(fetch_content_type_charset(NULL, cs, sizeof cs));
    assert_false(fetch_content_type_charset("text/xml; charset=a-very-long-charset-name", cs, 8));
}

/* ---- the network policy (util/netpolicy.h) ------------------------------------ */

static struct netpolicy policy_of(const char *nets)
{
    struct netpolicy p;
    char why[NETPOLICY_WHY_MAX];
    if (netpolicy_allow_parse(&p, nets, strlen(nets), why, sizeof why) != 0)
        fail_msg("%s: %s", nets, why);
    return p;
}

/* fetch url with the default policy: no special-use address allowed. */
static struct fetch_result fetch_default(const char *url)
{
    struct fetch_request req = {.url = url};
    struct fetch_result res;
    assert_int_equal(fetch_run(&req, 1, NULL, &res), 0);
    return res;
}

static void a_loopback_feed_is_refused_unless_allowed(void **state)
{
    struct server *srv = *state;
    struct fetch_result r = fetch_default(url_of(srv, "/guardian"));
    assert_int_equal(r.rc, ERR_REFUSED);
    assert_string_equal(r.errbuf,
                        "refused: 127.0.0.1 is loopback; allow it with [outbound] allow_networks");
    assert_null(r.body);
    fetch_result_release(&r);
    /* Other spellings of the address lead to it all the same. */
    static const char *const hosts[] = {"0x7f000001", "2130706433", "127.1", "%31%32%37.0.0.1",
                                        "[::ffff:127.0.0.1]"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://%s:%d/guardian", hosts[i], srv->port);
        r = fetch_default(url);
        if (r.rc != ERR_REFUSED || !strstr(r.errbuf, "127.0.0.1 is loopback"))
            fail_msg("%s: rc %d, %s", url, r.rc, r.errbuf);
        fetch_result_release(&r);
    }
    /* Nothing reached the server. */
    assert_int_equal(atomic_load(&srv->requests), 0);
    /* Allowed, it is an ordinary fetch. */
    struct netpolicy p = policy_of("127.0.0.0/8");
    struct fetch_options o = {.policy = &p};
    r = fetch_one(url_of(srv, "/guardian"), NULL, NULL, &o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    fetch_result_release(&r);
    assert_int_equal(atomic_load(&srv->requests), 1);
}

static void every_redirect_hop_is_checked(void **state)
{
    struct server *srv = *state; /* on 127.0.0.1 */
    struct server inner;
    server_start_on(&inner, "127.0.0.2");
    struct netpolicy first_only = policy_of("127.0.0.1/32"), both = policy_of("127.0.0.0/8");
    struct fetch_options o = {.policy = &first_only};

    snprintf(srv->to, sizeof srv->to, "http://127.0.0.2:%d/guardian", inner.port);
    struct fetch_result r = fetch_one(url_of(srv, "/redirect-away"), NULL, NULL, &o);
    assert_int_equal(r.rc, ERR_REFUSED);
    assert_string_equal(r.errbuf,
                        "refused: 127.0.0.2 is loopback; allow it with [outbound] allow_networks");
    assert_null(r.body);
    fetch_result_release(&r);
    assert_int_equal(atomic_load(&srv->requests), 1);
    assert_int_equal(atomic_load(&inner.requests), 0);

    /* A name that resolves to a refused address, and IPv6 loopback. */
    static const char *const hosts[] = {"localhost", "[::1]", "0x7f000002"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        snprintf(srv->to, sizeof srv->to, "http://%s:%d/guardian", hosts[i], inner.port);
        r = fetch_one(url_of(srv, "/redirect-away"), NULL, NULL, &o);
        if (r.rc != ERR_REFUSED || !strstr(r.errbuf, "is loopback"))
            fail_msg("redirect to %s: rc %d, %s", srv->to, r.rc, r.errbuf);
        fetch_result_release(&r);
    }
    assert_int_equal(atomic_load(&inner.requests), 0);

    /* Allowed, the redirect is followed to the feed. */
    snprintf(srv->to, sizeof srv->to, "http://127.0.0.2:%d/guardian", inner.port);
    o.policy = &both;
    r = fetch_one(url_of(srv, "/redirect-away"), NULL, NULL, &o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.redirects, 1);
    assert_string_equal(r.effective_url, srv->to);
    assert_true(r.len > 100000);
    fetch_result_release(&r);
    server_stop(&inner);
    assert_int_equal(atomic_load(&inner.requests), 1);
}

/* A host name is checked where it is connected to, after DNS: "localhost"
 * is a name that resolves to loopback, like a rebinding attacker's. */
static void a_name_is_checked_after_it_resolves(void **state)
{
    struct server *srv = *state;
    char url[128];
    snprintf(url, sizeof url, "http://localhost:%d/guardian", srv->port);
    struct fetch_result r = fetch_default(url);
    assert_int_equal(r.rc, ERR_REFUSED);
    assert_non_null(strstr(r.errbuf, "is loopback; allow it with [outbound] allow_networks"));
    fetch_result_release(&r);
    assert_int_equal(atomic_load(&srv->requests), 0);
    r = fetch_one(url, NULL, NULL, NULL); /* 127.0.0.0/8 and ::1 allowed */
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    fetch_result_release(&r);
    assert_int_equal(atomic_load(&srv->requests), 1);
}

/* Through a proxy the address connected to would be the proxy's: the
 * environment's proxy settings are not used. */
static void proxies_from_the_environment_are_not_used(void **state)
{
    struct server *srv = *state;
    struct server proxy;
    server_start(&proxy);
    static const char *const names[] = {"http_proxy", "HTTPS_PROXY", "ALL_PROXY",
                                        "all_proxy",  "no_proxy",    "NO_PROXY"};
    char *saved[6];
    char purl[64];
    snprintf(purl, sizeof purl, "http://127.0.0.1:%d", proxy.port);
    for (size_t i = 0; i < 6; i++) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
        if (i < 4)
            setenv(names[i], purl, 1);
        else
            unsetenv(names[i]);
    }
    struct fetch_result r = fetch_one(url_of(srv, "/guardian"), NULL, NULL, NULL);
    for (size_t i = 0; i < 6; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
    }
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.status, 200);
    fetch_result_release(&r);
    server_stop(&proxy);
    assert_int_equal(atomic_load(&proxy.requests), 0);
    assert_int_equal(atomic_load(&srv->requests), 1);
}

int main(void)
{
    const char *nets = "127.0.0.0/8 ::1";
    if (netpolicy_allow_parse(&loopback, nets, strlen(nets), NULL, 0) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_feed_is_fetched_with_its_validators_and_parses, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(validators_give_a_304_without_body, setup, teardown),
        cmocka_unit_test_setup_teardown(a_gzip_body_arrives_decoded, setup, teardown),
        cmocka_unit_test_setup_teardown(five_redirects_are_followed_and_six_are_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(only_http_and_https_are_spoken_even_after_a_redirect, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_slow_response_times_out_without_hanging, setup, teardown),
        cmocka_unit_test_setup_teardown(oversized_bodies_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(error_statuses_are_responses_not_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(a_post_sends_its_body_and_its_headers, setup, teardown),
        cmocka_unit_test(a_refused_connection_is_an_io_error),
        cmocka_unit_test(hosts_are_fetched_concurrently_one_connection_each),
        cmocka_unit_test_setup_teardown(queued_transfers_to_one_host_each_get_their_own_timeout,
                                        setup, teardown),
        cmocka_unit_test(transfers_past_max_connections_wait_without_their_timeout_running),
        cmocka_unit_test(an_empty_batch_and_a_missing_url_are_handled),
        cmocka_unit_test(the_charset_is_read_from_a_content_type),
        cmocka_unit_test_setup_teardown(a_loopback_feed_is_refused_unless_allowed, setup, teardown),
        cmocka_unit_test_setup_teardown(every_redirect_hop_is_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(a_name_is_checked_after_it_resolves, setup, teardown),
        cmocka_unit_test_setup_teardown(proxies_from_the_environment_are_not_used, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
