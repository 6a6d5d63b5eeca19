/* libFuzzer harness: the response headers a feed or page fetch keeps
 * (issue 29 item 5) — Retry-After (libcurl's reading, then our clamp),
 * ETag and Last-Modified (kept, then sent back as If-None-Match and
 * If-Modified-Since), Content-Type (kept; its charset read by
 * fetch_content_type_charset) — through fetch_run itself, against a server
 * on loopback that answers any request with the input's bytes.
 * Input: the raw response (status line, headers, body) as the server
 * sends it before closing the connection.
 * Invariants: fetch_run returns; a response that arrived has a
 * Retry-After within [0, 30 days], validators and a content type without
 * CR or LF; the conditional request made from its validators is headers
 * that each stand on one line of their own (nothing from the response
 * injects a header), among the ones a fetch sends. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "fetch/fetch.h"
#include "util/netpolicy.h"

#define FUZZ_FETCH_MAX 65536
#define REQUEST_MAX 16384

static int listen_fd = -1;
static char url[64];
static struct netpolicy policy;
/* The answer, copied from the input: a connection libcurl abandoned may be
 * served after the input is gone. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t answer[FUZZ_FETCH_MAX];
static size_t answer_len;
static char request[REQUEST_MAX + 1]; /* the last request head received */

static size_t read_head(int fd, char *head)
{
    size_t n = 0;
    head[0] = '\0';
    while (n < REQUEST_MAX) {
        ssize_t got = read(fd, head + n, REQUEST_MAX - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        head[n] = '\0';
        if (strstr(head, "\r\n\r\n"))
            break;
    }
    return n;
}

/* One connection at a time: read the request, send the answer, close. A
 * client that sends nothing is dropped after a second. */
static void *serve(void *arg)
{
    static char head[REQUEST_MAX + 1];
    static uint8_t out[FUZZ_FETCH_MAX];
    struct timeval tv = {.tv_sec = 1};
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        read_head(fd, head);
        pthread_mutex_lock(&lock);
        memcpy(request, head, sizeof request);
        size_t len = answer_len;
        memcpy(out, answer, len);
        pthread_mutex_unlock(&lock);
        size_t off = 0;
        while (off < len) {
            ssize_t w = send(fd, out + off, len - off, MSG_NOSIGNAL);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static void fuzz_setup(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    char why[128];
    pthread_t t;
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(listen_fd >= 0);
    CHECK(bind(listen_fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(listen_fd, 16) == 0);
    CHECK(getsockname(listen_fd, (struct sockaddr *)&a, &alen) == 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/feed.xml", ntohs(a.sin_port));
    netpolicy_init(&policy);
    CHECK(netpolicy_allow_parse(&policy, "127.0.0.1", 9, why, sizeof why) == 0);
    CHECK(pthread_create(&t, NULL, serve, NULL) == 0);
    CHECK(pthread_detach(t) == 0);
}

static void fetch_one(const struct fetch_request *req, struct fetch_result *res)
{
    struct fetch_options o = {.connect_timeout_ms = 2000,
                              .timeout_ms = 2000,
                              .max_body = 1 << 16,
                              .max_redirects = -1,
                              .policy = &policy};
    memset(res, 0, sizeof *res);
    CHECK(fetch_run(req, 1, &o, res) == 0 || res->rc < 0);
}

static bool one_line(const char *s)
{
    return s == NULL || strpbrk(s, "\r\n") == NULL;
}

/* Every line of the request head a known request line or header. */
static void check_request_head(void)
{
    static const char *const names[] = {
        "Host:",          "User-Agent:",       "Accept:", "Accept-Encoding:",
        "If-None-Match:", "If-Modified-Since:"};
    char *save = NULL;
    int line = 0;
    for (char *l = strtok_r(request, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
        if (line++ == 0) {
            CHECK(!strncmp(l, "GET /feed.xml HTTP/1.1", 22));
            continue;
        }
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !known; i++)
            known = !strncasecmp(l, names[i], strlen(names[i]));
        CHECK(known);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (listen_fd < 0)
        fuzz_setup();
    if (size > FUZZ_FETCH_MAX)
        return 0;
    pthread_mutex_lock(&lock);
    memcpy(answer, data, size);
    answer_len = size;
    pthread_mutex_unlock(&lock);

    struct fetch_request req = {.url = url};
    struct fetch_result res;
    fetch_one(&req, &res);
    if (res.rc == 0) {
        /* No check of the status: libcurl reads status lines it hardly
         * understands ("HTTP/21.1 200" gives 0, "HTTP/21211.  OK" more
         * than 999); the crawler and webhooks take anything but 2xx (and a
         * feed's 304) for a failure. */
        CHECK(res.retry_after_s >= 0 && res.retry_after_s <= 86400 * 30);
        if (getenv("FUZZ_FETCH_VERBOSE"))
            fprintf(stderr, "etag [%s] lm [%s] ct [%s]\n", res.etag ? res.etag : "-",
                    res.last_modified ? res.last_modified : "-",
                    res.content_type ? res.content_type : "-");
        CHECK(one_line(res.etag) && one_line(res.last_modified) && one_line(res.content_type));
        char cs[64];
        if (fetch_content_type_charset(res.content_type, cs, sizeof cs))
            CHECK(strlen(cs) > 0 && strlen(cs) < sizeof cs);
        if (res.etag || res.last_modified) {
            /* the next poll of the feed: validators sent back */
            struct fetch_request again = {
                .url = url, .etag = res.etag, .last_modified = res.last_modified};
            struct fetch_result res2;
            fetch_one(&again, &res2);
            pthread_mutex_lock(&lock);
            check_request_head();
            pthread_mutex_unlock(&lock);
            fetch_result_release(&res2);
        }
    }
    fetch_result_release(&res);
    return 0;
}
