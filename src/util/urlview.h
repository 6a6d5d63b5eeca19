/* Views of the parts of a URL (RFC 3986 §3's generic syntax:
 * scheme "://" [userinfo "@"] host [":" port] path ["?" query] ["#" fragment]),
 * and the one way a URL is shown in a log line or an error message
 * (urlview_redacted): feed URLs and store locations may carry passwords
 * and tokens, and logs are not a secret store.
 *
 * Nothing here allocates, decodes or validates: views point into the
 * caller's string, a host is whatever the authority holds (ingest's
 * ingest_url_canonical says whether a URL is a usable one). */
#ifndef NEWSD_UTIL_URLVIEW_H
#define NEWSD_UTIL_URLVIEW_H

#include <stdbool.h>
#include <stddef.h>

struct urlview_span {
    const char *p; /* NULL when the part is absent */
    size_t n;
};

struct urlview {
    struct urlview_span scheme;   /* before "://"; absent without one */
    struct urlview_span userinfo; /* before the authority's '@' */
    struct urlview_span host;     /* an IPv6 literal without its brackets */
    struct urlview_span port;     /* after the host's ':' (may be empty) */
    struct urlview_span path;     /* from the '/' after the authority (or the start) */
    struct urlview_span query;    /* after '?' */
    struct urlview_span fragment; /* after '#' */
};

/* Split url into out. A URL without "scheme://" has no authority: all of it
 * up to '?' or '#' is the path. Never fails; url must not be NULL. */
void urlview_parse(struct urlview *out, const char *url);

enum urlview_redact {
    /* Everything that may be a secret: the userinfo becomes "***", every
     * query value "***" (names kept; a parameter without '=' counts as a
     * value), a fragment "***". For feed and other outgoing URLs. */
    URLVIEW_REDACT_ALL,
    /* Only credentials: user:PASSWORD@ → user:***@ and the value of a
     * query parameter named as one (password, token, key, apikey,
     * access_token, secret, sig, ...; without case). For store locations
     * and `feeds list`, where the user, host and other options help an
     * operator tell them apart. */
    URLVIEW_REDACT_PASSWORDS,
    /* Only where it goes: "scheme://host[:port]" and "/..." when a path,
     * query or fragment follows; userinfo, path, query and fragment never
     * shown. For webhook URLs, whose secret is the path itself (Slack's
     * /services/T.../B.../SECRET, Discord's, Teams') and which no name
     * rule can find; the log line names the alert to tell them apart. A
     * string without "scheme://" gives "***". */
    URLVIEW_REDACT_HOST,
};

/* url fit for logs and error messages, in buf (at most n bytes, NUL
 * included; longer results are cut, after masking, so a cut never reveals
 * a secret). Returns buf; NULL url gives "". */
char *urlview_redacted(const char *url, enum urlview_redact how, char *buf, size_t n);

#endif
