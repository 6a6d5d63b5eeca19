/* Private to the page extractor (extract.c, extract_dom.c, extract_meta.c)
 * and its tests: the page as a compact tree.
 *
 * Nodes live in one array in document order (a parent's index is below its
 * children's), so a forward pass visits parents first and a backward pass
 * children first; every walk of the tree is such a pass or follows
 * parent/sibling links, never recursion. Node 0 is the document. Element
 * names are the front end's enum xtag (html_internal.h: tags either reader
 * cares about; everything else is XTAG_OTHER); only the attributes it
 * reads are kept. Text is UTF-8 as the
 * parser decoded it (entities decoded, white space not yet folded). */
#ifndef NEWSD_INGEST_EXTRACT_INTERNAL_H
#define NEWSD_INGEST_EXTRACT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/pages/html_internal.h"
#include "util/arena.h"
#include "util/buf.h"

/* The attributes kept. */
/* clang-format off */
#define XATTRS(X)                                                                                  \
    X(class) X(id) X(href) X(src) X(srcset) X(data_src) X(data_srcset) X(data_original)          \
    X(data_lazy_src) X(content) X(property) X(name) X(itemprop) X(rel) X(datetime) X(lang)       \
    X(role) X(type) X(charset) X(http_equiv) X(width) X(height) X(alt) X(pubdate) X(align)
/* clang-format on */

enum xattr {
#define XATTR_ENUM_(n) XATTR_##n,
    XATTRS(XATTR_ENUM_)
#undef XATTR_ENUM_
        XATTR_COUNT
};

enum xnode_flags {
    XN_HIDDEN = 1 << 0, /* hidden, aria-hidden, display:none, visibility:hidden */
    XN_JSONLD = 1 << 1, /* <script type="application/ld+json">: its text is kept */
};

struct xattr_kv {
    uint32_t name; /* enum xattr */
    const char *value;
    uint32_t len;
};

struct xnode {
    uint32_t parent, first, last, next; /* 0 = none (for parent: the document) */
    uint16_t tag;                       /* enum xtag */
    uint16_t flags;                     /* enum xnode_flags */
    uint32_t off, len;                  /* text: bytes in xdom.text; element: its xattr_kv run */
};

struct xdom {
    struct xnode *nodes;
    uint32_t n;
    size_t cap;
    struct xattr_kv *attrs;
    uint32_t n_attrs;
    size_t cap_attrs;
    struct buf text; /* every text run, one after the other */
    struct arena *a; /* attribute values */
    int rc;          /* sticky: ERR_NOMEM */
};

/* page[0..len) as UTF-8 (charset: the caller's hint; a BOM, valid UTF-8,
 * <meta> decide before it or after it, extract_dom.c says how) with
 * ill-formed bytes and NULs replaced by U+FFFD: *out is page itself when it
 * is that already, else a malloc'd copy also in *owned (the caller frees
 * it; NULL otherwise). Returns 0 or ERR_NOMEM. */
int xdom_to_utf8(const char *page, size_t len, const char *charset, const char **out,
                 size_t *out_len, char **owned);

/* Parse UTF-8 html[0..len) into d (zeroed by the caller, a set). Returns 0
 * or ERR_NOMEM. */
int xdom_build(struct xdom *d, const char *html, size_t len);
void xdom_release(struct xdom *d);

/* The value of attribute `name` of element i, or NULL; *len_out its bytes. */
const char *xdom_attr(const struct xdom *d, uint32_t i, enum xattr name, size_t *len_out);

/* True when the NUL-terminated value of attribute name of node i equals s,
 * ASCII case-insensitively. */
bool xdom_attr_is(const struct xdom *d, uint32_t i, enum xattr name, const char *s);

/* One past the last node of i's subtree (nodes are in document order, so
 * the subtree of i is [i, end)). */
uint32_t xdom_subtree_end(const struct xdom *d, uint32_t i);

/* Append s[0..n) to b by the pages' one text renderer (html_internal.h:
 * html_fold_text): a run of white space becomes one space, written only
 * before the next shown character and never at the start of b or of a
 * line; invisible characters dropped. *pending_space carries a run across
 * calls. Stops at max bytes (0 = no bound) on a code point boundary. */
void xtext_fold(struct buf *b, const char *s, size_t n, bool *pending_space, size_t max);

/* The text below node i, white space folded, in one line (at most max
 * bytes), into b (appended). */
void xdom_text_line(const struct xdom *d, uint32_t i, struct buf *b, size_t max);

/* s[0..n) with white space folded to single spaces, trimmed, control
 * characters dropped, cut to max bytes on a code point boundary: an arena
 * string, or NULL when nothing is left (or out of memory: *rc). With
 * unescape, the entities a page escaped twice in an attribute or JSON-LD
 * (&amp;quot; read as &quot;) are decoded first: &quot; &amp; &lt; &gt;
 * &apos; and numeric references. */
char *xtext_clean(struct arena *a, const char *s, size_t n, size_t max, bool unescape, int *rc);

/* True when s holds word (lower case ASCII) in any case. */
bool xtext_has_ci(const char *s, const char *word);

/* What the page says it is: og:type "article..." or a JSON-LD object of an
 * article type (NewsArticle, BlogPosting, ...) is XMETA_ARTICLE, else
 * XMETA_UNDECLARED (og:type "website" included: CMSs write it on every
 * page, articles too). */
enum xmeta_kind {
    XMETA_UNDECLARED = 0,
    XMETA_ARTICLE,
};

/* Metadata of the page (extract_meta.c): everything but text and
 * readerable. url resolves relative links (may be NULL); *base_out is the
 * base they resolve against (<base href>, else url; may be NULL); *kind_out
 * what the page declares itself. */
struct extracted_page;
int xmeta_read(const struct xdom *d, struct arena *a, const char *url, struct extracted_page *out,
               const char **base_out, enum xmeta_kind *kind_out);

/* Element i says it holds the author's name: rel=author, itemprop=author,
 * or a class or id with byline, author, dateline or writtenby in it. */
bool xmeta_marks_author(const struct xdom *d, uint32_t i);

/* extract_names.c: the names in the byline s (labels such as "By" or
 * "Veröffentlicht von" and trailing dates cut off), in the arena; NULL when
 * s names no one: a URL, an e-mail address, "Staff"-like stand-ins, site
 * (the site's name, may be NULL), or more than a few words. *rc:
 * ERR_NOMEM. */
char *xmeta_byline_clean(struct arena *a, const char *s, const char *site, int *rc);

/* extract_names.c: s is a byline's label alone ("Written by", "Verfasst
 * von"): Yoast's twitter:label1 says so when twitter:data1 is the author. */
bool xmeta_label_is_author(const char *s);

/* Resolve ref against base (absolute http(s), or NULL) into an absolute
 * http(s) URL in the arena; NULL when that is not possible. */
char *xmeta_url(struct arena *a, const char *ref, size_t n, const char *base);

#endif
