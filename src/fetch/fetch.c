/* Batch HTTP fetching with libcurl's multi interface (fetch/fetch.h).
 * One multi handle per batch. Politeness (one transfer per host at a time)
 * and the bound on sockets are kept here, not by curl's queue: a transfer
 * is added to the multi handle only when its host has none running and
 * fewer than max_connections run in all, the next one of a host when the
 * one before it ends. Why not CURLMOPT_MAX_HOST_CONNECTIONS: curl counts
 * CURLOPT_TIMEOUT_MS from when a transfer is added, so transfers it queues
 * behind a slow host time out before they start (a feed's 20 pages on a
 * site answering in 2 s got 14 pages and 6 timeouts). A progress callback
 * timing each transfer from CURLINFO_PRETRANSFER instead would have to
 * switch curl's own timeout off and re-implement it, and through a proxy
 * curl's queue is per proxy, not per site. Added only when it may start,
 * every transfer's timeout is its own, and curl's own limits stay the
 * ones that end it. A redirect to a host that another transfer is on may
 * briefly make two connections to it (the queue knows the first URL).
 * Every limit is enforced by curl except the decoded body size, which the
 * write callback checks.
 *
 * The network policy is enforced where curl opens a socket
 * (CURLOPT_OPENSOCKETFUNCTION): it gets the resolved address of every
 * connection attempt — each redirect hop, each address of a name, after
 * the DNS answer, so rebinding a name between a check and the connect
 * cannot get round it — and a refused address is never connected to. A
 * reused connection was checked when it was opened. CURLOPT_PREREQFUNCTION
 * (curl >= 7.80) would only see the address once connected.
 *
 * Through the operator's proxy every connection goes to the proxy (its
 * address is theirs to choose: allowed), so the same hook checks the
 * target instead: the host of the URL curl is about to ask for (the
 * effective URL: each redirect hop's), resolved with getaddrinfo, every
 * address permitted or none is asked for. Connections are not reused then
 * (CURLOPT_FORBID_REUSE), so every hop opens one and is checked; the
 * lookup blocks the batch's loop while it runs (a proxy is for networks
 * where the crawler is small). CURLOPT_NOPROXY "" makes sure no host
 * bypasses the proxy, whatever no_proxy says. */
#include "fetch/fetch.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netdb.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "util/ascii.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/urlview.h"

#include "util/banned.h"

#define FETCH_ACCEPT                                                                               \
    "Accept: application/rss+xml, application/atom+xml, application/feed+json, "                   \
    "application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5"

struct transfer {
    CURL *easy;
    struct fetch_result *res;
    struct curl_slist *headers;
    struct buf body;
    size_t max_body;
    bool too_large; /* the write callback refused the body */
    bool done;
    const struct netpolicy *policy;
    bool proxied;                    /* every connection is to the operator's proxy */
    char refused[NETPOLICY_WHY_MAX]; /* why the last attempt was refused; "" when it was not */
    char errbuf[CURL_ERROR_SIZE];
    bool added;          /* in the multi handle (until it ends) */
    size_t next_of_host; /* the next transfer to the same host; n when none */
};

/* The transfers of one batch and the order they may start in. */
struct batch {
    CURLM *multi;
    struct transfer *ts;
    size_t n;
    size_t *ready; /* FIFO of transfers whose host is free, each once */
    size_t ready_head, ready_tail;
    long running, max_running; /* transfers in the multi handle */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct transfer *t = ctx;
    size_t n = size * nmemb;
    if (n > t->max_body || t->body.len > t->max_body - n) {
        t->too_large = true;
        return 0; /* != n: curl aborts with CURLE_WRITE_ERROR */
    }
    buf_append(&t->body, data, n);
    return buf_error(&t->body) ? 0 : n;
}

/* Through a proxy: may the proxy be asked for the URL curl is at now? Every
 * address its host resolves to must be permitted; why says otherwise. */
static bool target_permitted(struct transfer *t, char *why, size_t why_size)
{
    char *url = NULL;
    struct urlview v;
    char host[256];
    struct netpolicy_addr addr;
    if (curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || !url) {
        snprintf(why, why_size, "refused: no target URL to check");
        return false;
    }
    urlview_parse(&v, url);
    if (!v.host.p || v.host.n == 0 || v.host.n >= sizeof host) {
        snprintf(why, why_size, "refused: the target URL has no host to check");
        return false;
    }
    if (netpolicy_addr_from_host(&addr, v.host.p, v.host.n))
        return netpolicy_permits(t->policy, &addr, why, why_size);
    memcpy(host, v.host.p, v.host.n);
    host[v.host.n] = '\0';
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0 || !res) {
        snprintf(why, why_size, "refused: cannot resolve %.100s to check it (%s)", host,
                 gai ? gai_strerror(gai) : "no address");
        return false;
    }
    bool ok = true;
    for (const struct addrinfo *ai = res; ai && ok; ai = ai->ai_next) {
        if (!netpolicy_addr_from_sockaddr(&addr, ai->ai_addr, ai->ai_addrlen))
            continue;
        ok = netpolicy_permits(t->policy, &addr, why, why_size);
    }
    freeaddrinfo(res);
    return ok;
}

/* curl's socket opener: only for an address the policy permits (through a
 * proxy: only for a target it permits). */
static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct transfer *t = ctx;
    struct netpolicy_addr addr;
    /* Through a char pointer: curl's struct declares a bare sockaddr, but
     * the bytes behind it hold addrlen bytes of the real one. */
    const char *sa = (const char *)a + offsetof(struct curl_sockaddr, addr);
    if (purpose != CURLSOCKTYPE_IPCXN || !netpolicy_addr_from_sockaddr(&addr, sa, a->addrlen)) {
        snprintf(t->refused, sizeof t->refused, "refused: not an IP connection");
        return CURL_SOCKET_BAD;
    }
    if (t->proxied ? !target_permitted(t, t->refused, sizeof t->refused)
                   : !netpolicy_permits(t->policy, &addr, t->refused, sizeof t->refused))
        return CURL_SOCKET_BAD;
    /* The last attempt explains a failure: an address refused before this
     * one must not hide why this one fails (a name with ::1 and a public
     * address that does not answer is a connect error). */
    t->refused[0] = '\0';
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static void set_error(struct fetch_result *r, int rc, const char *msg)
{
    r->rc = rc;
    size_t n = strlen(msg);
    if (n >= sizeof r->errbuf)
        n = sizeof r->errbuf - 1;
    memcpy(r->errbuf, msg, n);
    r->errbuf[n] = '\0';
    /* curl's messages end with a newline; ours are one line. */
    while (n > 0 && (r->errbuf[n - 1] == '\n' || r->errbuf[n - 1] == '\r'))
        r->errbuf[--n] = '\0';
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Value of a response header of the last request (after redirects),
 * white space around it trimmed; NULL when absent, empty, or holding a line
 * break. libcurl 7.88 hands an empty "ETag: \r\n" over as "\r"
 * (fuzz_fetch found it): kept, it was stored with the feed and never a
 * validator the server would recognise. */
static char *header_dup(CURL *easy, const char *name)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h || !h->value)
        return NULL;
    const char *v = h->value;
    size_t n = strlen(v);
    while (n > 0 && strchr(" \t\r\n", v[n - 1]))
        n--;
    while (n > 0 && strchr(" \t\r\n", v[0])) {
        v++;
        n--;
    }
    if (n == 0 || memchr(v, '\r', n) || memchr(v, '\n', n))
        return NULL;
    return strndup(v, n);
}

static int map_curl_error(CURLcode cc, bool too_large)
{
    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
        return ERR_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return ERR_TOO_LARGE;
    case CURLE_WRITE_ERROR:
        return too_large ? ERR_TOO_LARGE : ERR_NOMEM;
    case CURLE_OUT_OF_MEMORY:
        return ERR_NOMEM;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return ERR_INVALID;
    default:
        return ERR_IO;
    }
}

static void transfer_finish(struct transfer *t, CURLcode cc)
{
    struct fetch_result *r = t->res;
    CURL *e = t->easy;
    long status = 0, redirects = 0;
    double total = 0;
    char *url = NULL, *ctype = NULL;
    t->done = true;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_REDIRECT_COUNT, &redirects);
    curl_easy_getinfo(e, CURLINFO_TOTAL_TIME, &total);
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &url);
    curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ctype);
    r->status = status;
    r->redirects = redirects;
    r->total_s = total;
    r->effective_url = dup_or_null(url);
    curl_off_t retry_after = 0;
    if (curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0)
        r->retry_after_s = retry_after > 86400 * 30 ? 86400 * 30 : (long)retry_after;
    if (cc != CURLE_OK) {
        int rc = map_curl_error(cc, t->too_large);
        /* The last connection attempt was refused: curl had nothing left
         * to connect to. (A refusal followed by a success on another
         * address of the name is no failure at all.) */
        if (t->refused[0] && cc == CURLE_COULDNT_CONNECT)
            set_error(r, ERR_REFUSED, t->refused);
        else if (rc == ERR_TOO_LARGE)
            set_error(r, rc, "response body over the size limit");
        else
            set_error(r, rc, t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc));
        return;
    }
    if (buf_error(&t->body)) {
        set_error(r, ERR_NOMEM, "out of memory reading the body");
        return;
    }
    r->content_type = dup_or_null(ctype);
    r->etag = header_dup(e, "ETag");
    r->last_modified = header_dup(e, "Last-Modified");
    r->body = buf_detach(&t->body, &r->len);
    if (!r->body || (ctype && !r->content_type)) {
        set_error(r, ERR_NOMEM, "out of memory keeping the response");
        return;
    }
    r->rc = 0;
    r->errbuf[0] = '\0';
}

static int transfer_setup_common(struct transfer *t, const struct fetch_request *req,
                                 const struct fetch_options *o);

/* A POST: its headers instead of the feed ones, its body sent as it is. */
static int transfer_setup_post(struct transfer *t, const struct fetch_request *req,
                               const struct fetch_options *o)
{
    CURL *e = t->easy;
    CURLcode cc = CURLE_OK;
    for (size_t i = 0; i < req->n_headers; i++) {
        if (!req->headers[i] || strpbrk(req->headers[i], "\r\n"))
            return ERR_INVALID;
        struct curl_slist *l = curl_slist_append(t->headers, req->headers[i]);
        if (!l)
            return ERR_NOMEM;
        t->headers = l;
    }
    /* No "Expect: 100-continue": the body goes at once. */
    struct curl_slist *l = curl_slist_append(t->headers, "Expect:");
    if (!l)
        return ERR_NOMEM;
    t->headers = l;
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_POST, 1L);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->post_len);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->post_body);
    if (cc == CURLE_OUT_OF_MEMORY)
        return ERR_NOMEM;
    if (cc)
        return ERR_INVALID;
    return transfer_setup_common(t, req, o);
}

/* A conditional request's validator header (name: value) when the value
 * is there and holds no line break (it came from a stored response and
 * must not smuggle a header of its own). Out of memory, the request
 * simply goes unconditional. */
static void transfer_validator(struct transfer *t, const char *name, const char *value)
{
    if (!value || !*value || strpbrk(value, "\r\n"))
        return;
    struct buf h;
    buf_init(&h, 4096);
    buf_printf(&h, "%s: %s", name, value);
    struct curl_slist *l = buf_error(&h) ? NULL : curl_slist_append(t->headers, h.data);
    if (l)
        t->headers = l;
    buf_release(&h);
}

/* Configure t->easy for req; 0 or ERR_NOMEM / ERR_INVALID. */
static int transfer_setup(struct transfer *t, const struct fetch_request *req,
                          const struct fetch_options *o)
{
    if (req->post_body)
        return transfer_setup_post(t, req, o);
    t->headers = curl_slist_append(NULL, FETCH_ACCEPT);
    if (!t->headers)
        return ERR_NOMEM;
    transfer_validator(t, "If-None-Match", req->etag);
    transfer_validator(t, "If-Modified-Since", req->last_modified);
    return transfer_setup_common(t, req, o);
}

/* What every transfer gets: the URL, its limits and the network policy. */
static int transfer_setup_common(struct transfer *t, const struct fetch_request *req,
                                 const struct fetch_options *o)
{
    CURL *e = t->easy;
    CURLcode cc = CURLE_OK;

    /* Assign, then test: the first failure wins. */
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_URL, req->url);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, o->max_redirects >= 0 ? 1L : 0L);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_MAXREDIRS, o->max_redirects >= 0 ? o->max_redirects : 0L);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_body);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_AUTOREFERER, 1L);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t);
    /* "" = no proxy, also none from http_proxy and the like: through a
     * proxy the address checked would be the proxy's, not the target's.
     * The operator's own proxy: open_socket checks the target instead. */
    if (!cc)
        cc = curl_easy_setopt(e, CURLOPT_PROXY, t->proxied ? o->proxy : "");
    if (!cc && t->proxied)
        cc = curl_easy_setopt(e, CURLOPT_NOPROXY, "");
    if (!cc && t->proxied)
        cc = curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    if (cc == CURLE_OUT_OF_MEMORY)
        return ERR_NOMEM;
    return cc ? ERR_INVALID : 0;
}

static void options_fill(struct fetch_options *o, const struct fetch_options *in)
{
    memset(o, 0, sizeof *o);
    if (in)
        *o = *in;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = FETCH_DEFAULT_CONNECT_TIMEOUT_MS;
    if (o->timeout_ms <= 0)
        o->timeout_ms = FETCH_DEFAULT_TIMEOUT_MS;
    if (o->max_body == 0)
        o->max_body = FETCH_DEFAULT_MAX_BODY;
    if (o->max_redirects == 0)
        o->max_redirects = FETCH_DEFAULT_MAX_REDIRECTS;
    if (o->max_connections <= 0)
        o->max_connections = FETCH_DEFAULT_MAX_CONNECTIONS;
    if (!o->user_agent || !*o->user_agent)
        o->user_agent = FETCH_DEFAULT_USER_AGENT;
}

/* Which host a request's connection is to: the URL's host (lower case)
 * and port (the scheme's when none), hashed. Through a proxy too: the
 * politeness is toward the site. A URL without a host is a host of its
 * own (the request fails at once). Two hosts that collide only share a
 * queue, which is slower, never wrong. */
static uint64_t host_key(const char *url, size_t i)
{
    struct urlview v;
    char key[320];
    size_t k = 0;
    if (!url)
        return hash_mix64(i);
    urlview_parse(&v, url);
    if (!v.host.p || v.host.n == 0 || v.host.n > 255 || v.port.n > 16)
        return hash_mix64(i);
    for (size_t j = 0; j < v.host.n; j++)
        key[k++] = ascii_lower(v.host.p[j]);
    key[k++] = ':';
    if (v.port.n > 0) {
        memcpy(key + k, v.port.p, v.port.n);
        k += v.port.n;
    } else {
        bool https = v.scheme.n == 5 && strncasecmp(v.scheme.p, "https", 5) == 0;
        memcpy(key + k, https ? "443" : "80", https ? 3 : 2);
        k += https ? 3 : 2;
    }
    return hash_bytes64(key, k);
}

/* Chain each host's transfers in request order (next_of_host) and queue
 * the first of each host, in request order. ERR_NOMEM. */
static int batch_order(struct batch *b, const struct fetch_request *reqs)
{
    struct sort_keyed *k = calloc(b->n, sizeof *k);
    bool *first = calloc(b->n, sizeof *first);
    if (!k || !first) {
        free(k);
        free(first);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < b->n; i++)
        k[i] = (struct sort_keyed){host_key(reqs[i].url, i), i};
    qsort(k, b->n, sizeof *k, sort_cmp_keyed);
    for (size_t j = 0; j < b->n; j++) {
        bool same_as_next = j + 1 < b->n && k[j + 1].key == k[j].key;
        b->ts[k[j].at].next_of_host = same_as_next ? (size_t)k[j + 1].at : b->n;
        first[k[j].at] = j == 0 || k[j - 1].key != k[j].key;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (first[i])
            b->ready[b->ready_tail++] = i;
    }
    free(k);
    free(first);
    return 0;
}

/* Add ready transfers to the multi handle while fewer than max_running
 * run. One that cannot start (its set-up failed, or curl refuses it) ends
 * at once and hands its host to the next. */
static void batch_fill(struct batch *b)
{
    while (b->running < b->max_running && b->ready_head < b->ready_tail) {
        size_t i = b->ready[b->ready_head++];
        struct transfer *t = &b->ts[i];
        if (!t->done && curl_multi_add_handle(b->multi, t->easy) == CURLM_OK) {
            t->added = true;
            b->running++;
            continue;
        }
        if (!t->done) {
            set_error(t->res, ERR_INTERNAL, "cannot add the transfer");
            t->done = true;
        }
        if (t->next_of_host < b->n)
            b->ready[b->ready_tail++] = t->next_of_host;
    }
}

/* Finish the transfers curl says are over, free their hosts and start
 * what may start now. */
static void batch_drain(struct batch *b)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(b->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct transfer *t = NULL;
        CURLcode result = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        if (!t || !t->added)
            continue;
        /* msg is invalid once its handle is removed: result is read first. */
        if (!t->done)
            transfer_finish(t, result);
        curl_multi_remove_handle(b->multi, t->easy);
        t->added = false;
        b->running--;
        if (t->next_of_host < b->n)
            b->ready[b->ready_tail++] = t->next_of_host;
    }
    batch_fill(b);
}

/* Set up every transfer of the batch (those that fail are done at once,
 * with their error); none is started yet. */
static void batch_setup(struct batch *b, const struct fetch_request *reqs,
                        const struct fetch_options *o)
{
    for (size_t i = 0; i < b->n; i++) {
        struct transfer *t = &b->ts[i];
        struct fetch_result *r = t->res;
        t->max_body = o->max_body;
        t->policy = o->policy;
        t->proxied = o->proxy && *o->proxy;
        buf_init(&t->body, o->max_body + 1);
        if (!reqs[i].url) {
            set_error(r, ERR_INVALID, "no URL");
            t->done = true;
            continue;
        }
        t->easy = curl_easy_init();
        if (!t->easy) {
            set_error(r, ERR_NOMEM, "out of memory starting a transfer");
            t->done = true;
            continue;
        }
        int src = transfer_setup(t, &reqs[i], o);
        if (src < 0) {
            set_error(r, src, src == ERR_NOMEM ? "out of memory" : "bad request options");
            t->done = true;
        }
    }
}

/* Run the batch until every transfer has ended (0), curl fails
 * (ERR_INTERNAL) or the cancel hook says so (ERR_BUSY). */
static int batch_run(struct batch *b, const struct fetch_options *o)
{
    batch_fill(b);
    while (b->running > 0) {
        int still = 0;
        CURLMcode mc = curl_multi_perform(b->multi, &still);
        if (mc != CURLM_OK)
            return ERR_INTERNAL;
        batch_drain(b);
        if (b->running == 0)
            break;
        /* still == 0 with transfers running: just added, due at once. */
        if (still > 0 && (mc = curl_multi_poll(b->multi, NULL, 0, 1000, NULL)) != CURLM_OK)
            return ERR_INTERNAL;
        if (o->cancelled && o->cancelled(o->cancel_ctx))
            return ERR_BUSY;
    }
    return 0;
}

int fetch_run(const struct fetch_request *reqs, size_t n, const struct fetch_options *opt,
              struct fetch_result *out)
{
    int rc = 0;
    struct batch b;
    struct fetch_options o;
    memset(&b, 0, sizeof b);
    options_fill(&o, opt);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].ctx = reqs[i].ctx;
        set_error(&out[i], ERR_INTERNAL, "not fetched");
    }
    if (n == 0)
        return 0;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        rc = ERR_INTERNAL;
        goto out;
    }
    b.n = n;
    b.max_running = o.max_connections;
    b.ts = calloc(n, sizeof *b.ts);
    b.ready = calloc(n, sizeof *b.ready);
    b.multi = curl_multi_init();
    if (!b.ts || !b.ready || !b.multi) {
        rc = ERR_NOMEM;
        goto out;
    }
    curl_multi_setopt(b.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, o.max_connections);
    for (size_t i = 0; i < n; i++)
        b.ts[i].res = &out[i];
    batch_setup(&b, reqs, &o);
    rc = batch_order(&b, reqs);
    if (rc == 0)
        rc = batch_run(&b, &o);

out:
    for (size_t i = 0; b.ts && i < n; i++) {
        struct transfer *t = &b.ts[i];
        if (!t->done)
            set_error(&out[i], rc < 0 ? rc : ERR_INTERNAL,
                      rc == ERR_BUSY ? "cancelled" : "transfer did not complete");
        if (t->easy) {
            if (t->added)
                curl_multi_remove_handle(b.multi, t->easy);
            curl_easy_cleanup(t->easy);
        }
        curl_slist_free_all(t->headers);
        buf_release(&t->body);
    }
    if (rc < 0 && !b.ts) {
        for (size_t i = 0; i < n; i++)
            set_error(&out[i], rc, rc == ERR_NOMEM ? "out of memory" : "cannot start curl");
    }
    if (b.multi)
        curl_multi_cleanup(b.multi);
    free(b.ready);
    free(b.ts);
    return rc;
}

void fetch_result_release(struct fetch_result *r)
{
    if (!r)
        return;
    free(r->body);
    free(r->etag);
    free(r->last_modified);
    free(r->content_type);
    free(r->effective_url);
    memset(r, 0, sizeof *r);
}

bool fetch_content_type_charset(const char *ct, char *out, size_t out_size)
{
    if (!ct || out_size == 0)
        return false;
    const char *p = ct;
    while ((p = strchr(p, ';')) != NULL) {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncasecmp(p, "charset", 7) != 0)
            continue;
        const char *v = p + 7;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != '=')
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        bool quoted = *v == '"';
        if (quoted)
            v++;
        size_t n = 0;
        while (v[n] && v[n] != ';' && v[n] != '"' && v[n] != ' ' && v[n] != '\t')
            n++;
        if (n == 0 || n >= out_size)
            return false;
        ascii_lower_n(out, v, n);
        out[n] = '\0';
        return true;
    }
    return false;
}
