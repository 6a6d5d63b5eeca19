/* Outbound HTTP(S), below its users: feeds and pages (ingest/feeds) and
 * webhook POSTs (push/) all go through it. libcurl's multi interface: one
 * call fetches a batch of URLs concurrently across hosts while keeping to one
 * transfer per host at a time (politeness; the others of a host wait their
 * turn, and their timeouts start only with them), with conditional GET
 * (If-None-Match / If-Modified-Since, answered by 304), gzip/deflate,
 * bounded redirects, connect and total timeouts and a body size ceiling
 * that aborts the transfer as soon as it is crossed (also for compressed
 * bodies: the bound applies to the decoded bytes). Only http and https,
 * also after redirects. Every connection, for every redirect hop and after
 * DNS resolution, goes only to an address the options' network policy
 * permits (util/netpolicy.h: no loopback, private, link-local, ... unless
 * allowed), and never through a proxy named by the environment (the
 * address connected to must be the one checked). Through the operator's
 * own proxy (fetch_options.proxy) the proxy's address is allowed, and the
 * target's host name is resolved here and every address of it checked
 * before the proxy is asked for it (each redirect hop on a new connection);
 * the proxy resolves the name again, so a name that changes its answer in
 * between (DNS rebinding) is the proxy's to refuse. No signals (thread-safe
 * given curl_global_init was called once before threads start; fetch_run
 * calls it itself otherwise).
 * Results own their memory (malloc): fetch_result_release frees it. */
#ifndef NEWSD_FETCH_FETCH_H
#define NEWSD_FETCH_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "util/netpolicy.h"

#define FETCH_ERRBUF 256
#define FETCH_DEFAULT_USER_AGENT "newsd/0.1 (+https://github.com/newsd)"
#define FETCH_DEFAULT_MAX_BODY (10 * 1024 * 1024)
#define FETCH_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define FETCH_DEFAULT_TIMEOUT_MS 30000
#define FETCH_DEFAULT_MAX_REDIRECTS 5
#define FETCH_DEFAULT_MAX_CONNECTIONS 16

struct fetch_request {
    const char *url;           /* absolute http(s) URL */
    const char *etag;          /* validator from the last 200, or NULL */
    const char *last_modified; /* Last-Modified from the last 200, or NULL */
    void *ctx;                 /* the caller's, copied to the result */
    /* A POST instead of a GET (webhook deliveries, src/push/): post_body
     * [0..post_len) sent as it is, with headers (full lines "Name: value",
     * n_headers of them) in place of the feed Accept header; etag and
     * last_modified are then ignored. NULL: a GET. */
    const char *post_body;
    size_t post_len;
    const char *const *headers;
    size_t n_headers;
};

struct fetch_options {
    long connect_timeout_ms; /* 0 = FETCH_DEFAULT_CONNECT_TIMEOUT_MS */
    long timeout_ms;         /* whole transfer, counted from its own start (not
                              * while it waits its turn for its host or a
                              * connection); 0 = FETCH_DEFAULT_TIMEOUT_MS */
    size_t max_body;         /* decoded bytes; 0 = FETCH_DEFAULT_MAX_BODY */
    long max_redirects;      /* 0 = FETCH_DEFAULT_MAX_REDIRECTS, < 0 = none followed */
    long max_connections;    /* in total; 0 = FETCH_DEFAULT_MAX_CONNECTIONS */
    const char *user_agent;  /* NULL or "" = FETCH_DEFAULT_USER_AGENT */
    /* An HTTP proxy, "http://[user:password@]host:port" (libcurl's
     * CURLOPT_PROXY); NULL or "" = none. */
    const char *proxy;
    /* The special-use networks connections may reach (borrowed; NULL =
     * none: only public addresses). */
    const struct netpolicy *policy;
    /* Asked about once a second while transfers run (NULL = never): true
     * abandons the batch, unfinished results get ERR_BUSY "cancelled". */
    bool (*cancelled)(void *ctx);
    void *cancel_ctx;
};

struct fetch_result {
    int rc;      /* 0 when an HTTP response arrived (any status), else
                    ERR_TIMEOUT, ERR_TOO_LARGE, ERR_IO (network, TLS,
                    too many redirects), ERR_INVALID (URL, protocol),
                    ERR_REFUSED (an address the policy does not permit;
                    errbuf says which and why), ERR_NOMEM */
    long status; /* HTTP status of the last response, 0 when none */
    char *body;  /* NUL-terminated (len excludes it); NULL unless rc == 0 */
    size_t len;
    char *etag; /* response validators, NULL when absent */
    char *last_modified;
    char *content_type;        /* as sent, e.g. "application/rss+xml; charset=utf-8" */
    char *effective_url;       /* after redirects */
    long redirects;            /* redirects followed */
    double total_s;            /* time the transfer took */
    void *ctx;                 /* from the request */
    char errbuf[FETCH_ERRBUF]; /* one line when rc < 0 */
    long retry_after_s;        /* Retry-After of the response in seconds (a date is
                                  turned into a delay), 0 when absent */
};

/* Fetch reqs[0..n) concurrently; out[i] receives the result of reqs[i]
 * (every out[i] is filled, whatever happens). opt may be NULL (defaults).
 * Returns 0, or ERR_NOMEM / ERR_INTERNAL when the batch could not run at
 * all (then every out[i].rc says so too), or ERR_BUSY when opt->cancelled
 * stopped it (finished results are kept, the others say "cancelled"). Blocks until every transfer
 * has finished or timed out. */
int fetch_run(const struct fetch_request *reqs, size_t n, const struct fetch_options *opt,
              struct fetch_result *out);

/* Free what a result owns and zero it; NULL is a no-op. */
void fetch_result_release(struct fetch_result *r);

/* The charset parameter of a Content-Type value, lower case, in out
 * (out_size bytes); false when there is none or it does not fit. */
bool fetch_content_type_charset(const char *content_type, char *out, size_t out_size);

#endif
