/* The one URL splitter: a URI reference cut into its components (RFC 3986
 * section 3 and appendix B) and an authority into userinfo, host and port.
 * Views into the caller's bytes, nothing allocated, validated or decoded:
 * what a component may hold is the caller's business (ingest/url.c's
 * canonical form, the crawler's host key). Also the one RFC 3986 reference
 * resolver (feeds' links, pages' links, imported image paths). */
#ifndef NEWSD_UTIL_URL_H
#define NEWSD_UTIL_URL_H

#include <stdbool.h>
#include <stddef.h>

/* scheme ":" "//" authority path "?" query "#" fragment. A NULL component is
 * undefined (no "scheme:", no "//", no "?", no "#"), which is not the same
 * as an empty one ("http://h?" has an empty query); path is never NULL. */
struct url_parts {
    const char *scheme, *authority, *path, *query, *fragment;
    size_t scheme_len, authority_len, path_len, query_len, fragment_len;
};

/* Split s[0..n) (NUL bytes are ordinary bytes). A scheme is a letter, then
 * letters, digits, '+', '-', '.', before the first ':'; otherwise the
 * reference is relative and the ':' belongs to the path. The authority runs
 * from "//" to the first '/', '?' or '#'. Every input splits: the defined
 * components joined with their delimiters give s back. */
void url_split(const char *s, size_t n, struct url_parts *out);

/* userinfo "@" host ":" port. */
struct url_authority {
    const char *userinfo, *host, *port;
    size_t userinfo_len, host_len, port_len;
};

/* Split the authority a[0..n): userinfo ends at the last '@' (NULL when
 * there is none); host keeps an IPv6 literal's brackets; port is what
 * follows the ':' after the host (NULL when there is no ':', empty for
 * "h:"). False when a host that opens with '[' has no ']' (host is then all
 * the rest) or something other than ':' follows its ']' (host ends at ']'). */
bool url_authority_split(const char *a, size_t n, struct url_authority *out);

/* One parameter of a query string: the piece between two separators,
 * "name=value", "name=" or "name" (nothing decoded). */
struct url_param {
    const char *p; /* the whole piece, p[0..n) */
    size_t n;
    size_t name_len;   /* the name is p[0..name_len): up to the first '=' */
    const char *value; /* after that '=', value[0..value_len); NULL without one */
    size_t value_len;
    char sep; /* the separator that ends the piece; '\0' after the last */
};

/* The one query-string walker: s[0..n) cut at every byte of seps (NUL
 * terminated; "&" when NULL), each piece a url_param. Every piece is
 * walked, empty ones too: a query with k separators has k + 1 pieces, so a
 * writer that copies each piece and its sep gives s back. */
struct url_query {
    const char *s, *seps;
    size_t n, at;
    int done;
};

void url_query_start(struct url_query *q, const char *s, size_t n, const char *seps);

/* The next piece into *out; false when there is none left. */
bool url_query_next(struct url_query *q, struct url_param *out);

/* The one percent-decoder. The first byte of s[0..n) (n > 0) decoded into
 * *byte: a %XX escape (hex digits in either case) is the byte it names and
 * takes 3; with plus_is_space (a form-encoded query string) '+' is a space;
 * anything else, a malformed escape's '%' included, is itself and takes 1.
 * Returns the bytes taken. Decoded bytes may be NUL: callers decide. */
size_t url_decode_byte(const char *s, size_t n, bool plus_is_space, unsigned char *byte);

/* s[0..n) decoded into out (room for n bytes; no terminator written, out
 * may be s); returns the decoded length. */
size_t url_decode(char *out, const char *s, size_t n, bool plus_is_space);

struct buf;

/* Resolve the reference ref against base (RFC 3986 section 5.2, with
 * remove_dot_segments), appending the result to out; both NUL-terminated.
 * base should be absolute (a scheme): without one the result has none
 * either. A reference with a scheme is taken as it is (its dot segments
 * removed). Bytes are copied as written: nothing is decoded or encoded, no
 * case changed. An append failure is out's sticky error (buf_error). */
void url_resolve(struct buf *out, const char *ref, const char *base);

#endif
