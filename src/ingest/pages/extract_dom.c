/* A page's bytes to the extractor's compact tree (extract_internal.h):
 * charset to UTF-8, then the pages room's HTML front end (html_internal.h:
 * libxml2's HTML parser in SAX mode, the tag table) building our own node
 * array.
 *
 * The parser was chosen by measurement on the 99 pages of tests/data/pages
 * (make bench-pages, docs/extraction.md): with libxml2's HTML parser
 * (recover mode) the whole extraction runs at 230-310 pages/s on one core;
 * with Debian's libgumbo (an HTML5 parser) building the same tree, at 80,
 * far from the 200 needed, and with the same text F1 and metadata on every
 * page (the pages are well-formed; gumbo's HTML5 error recovery had nothing
 * to win there). libxml2 is also a dependency already. Its SAX mode saves
 * building and freeing libxml2's own tree, which we would only copy.
 *
 * Charset, in order: a byte order mark; bytes that are well-formed UTF-8
 * (a page that declares Latin-1 but is UTF-8 is far more common than
 * Latin-1 text that happens to be valid UTF-8; pure ASCII reads the same
 * in every charset pages declare), parsed in place without a copy; the
 * caller's HTTP charset; a charset in a <meta> tag in the first 8 KB
 * (<meta charset>, http-equiv; a "charset=" elsewhere, such as the
 * <script charset="utf-8"> the Wayback Machine puts before the page's own
 * head, says nothing of the page); else windows-1252, as browsers do. Labels are mapped to
 * their WHATWG supersets (ISO-8859-1 and ASCII are windows-1252, GB2312 is
 * GB18030) and converted with iconv. libxml2 then gets UTF-8 only and is
 * told to ignore any declaration: its own encoding switch half-way through
 * a document is a source of surprises we do without. */
#include "ingest/pages/extract_internal.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parserInternals.h>

#include "ingest/pages/html_internal.h"
#include "ingest/pages/pages.h"
#include "util/array.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/utf8.h"

#include "util/banned.h"

#define SNIFF_BYTES 8192
#define CHARSET_LABEL_MAX 40
/* Text of all runs of one page, bytes (UTF-8 text can only shrink from the
 * input, by entity decoding aside: &lt; is 4 bytes for 1). */
#define XDOM_MAX_TEXT ((size_t)64 * 1024 * 1024)

/* ---- charset ----------------------------------------------------------- */

static bool is_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == ':';
}

/* Offset i of p sits inside a <meta ...> tag: the nearest '<' before it,
 * with no '>' between, opens "<meta". */
static bool in_meta_tag(const char *p, size_t i)
{
    while (i > 0) {
        i--;
        if (p[i] == '>')
            return false;
        if (p[i] == '<')
            return strncasecmp(p + i + 1, "meta", 4) == 0;
    }
    return false;
}

/* A "charset=" inside a <meta> tag in the first SNIFF_BYTES bytes, lower
 * case, into out. */
static bool sniff_charset(const char *p, size_t n, char out[CHARSET_LABEL_MAX])
{
    if (n > SNIFF_BYTES)
        n = SNIFF_BYTES;
    for (size_t i = 0; i + 7 < n; i++) {
        if ((p[i] | 0x20) != 'c' || strncasecmp(p + i, "charset", 7) != 0)
            continue;
        if (!in_meta_tag(p, i))
            continue;
        size_t j = i + 7;
        while (j < n && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r'))
            j++;
        if (j >= n || p[j] != '=')
            continue;
        j++;
        while (j < n && (p[j] == ' ' || p[j] == '"' || p[j] == '\'' || p[j] == '\t'))
            j++;
        size_t k = 0;
        while (j < n && k + 1 < CHARSET_LABEL_MAX && is_label_char(p[j])) {
            char ch = p[j++];
            out[k++] = ascii_lower(ch);
        }
        out[k] = '\0';
        if (k > 0)
            return true;
    }
    return false;
}

/* The iconv name for a label; NULL for UTF-8. */
static const char *charset_name(const char *label)
{
    static const struct {
        const char *label, *name;
    } map[] = {
        {"utf-8", NULL},
        {"utf8", NULL},
        {"unicode-1-1-utf-8", NULL},
        {"iso-8859-1", "WINDOWS-1252"},
        {"iso8859-1", "WINDOWS-1252"},
        {"latin1", "WINDOWS-1252"},
        {"l1", "WINDOWS-1252"},
        {"us-ascii", "WINDOWS-1252"},
        {"ascii", "WINDOWS-1252"},
        {"iso-8859-9", "WINDOWS-1254"},
        {"latin5", "WINDOWS-1254"},
        {"gb2312", "GB18030"},
        {"gbk", "GB18030"},
        {"x-gbk", "GB18030"},
        {"x-sjis", "SHIFT_JIS"},
        {"shift-jis", "SHIFT_JIS"},
        {"ks_c_5601-1987", "CP949"},
        {"euc-kr", "CP949"},
        {"tis-620", "CP874"},
        {"iso-8859-11", "CP874"},
        {"x-mac-roman", "MACINTOSH"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcasecmp(label, map[i].label) == 0)
            return map[i].name;
    return label;
}

/* iconv from `from` to UTF-8; an unconvertible byte becomes U+FFFD. False
 * when iconv does not know the charset. */
static bool convert(struct buf *out, const char *p, size_t n, const char *from)
{
    iconv_t cd = iconv_open("UTF-8", from);
    if (cd == (iconv_t)-1)
        return false;
    char chunk[16384];
    char *in = (char *)p;
    size_t left = n;
    while (left > 0 && buf_error(out) == 0) {
        char *o = chunk;
        size_t room = sizeof chunk;
        size_t r = iconv(cd, &in, &left, &o, &room);
        int e = errno;
        buf_append(out, chunk, (size_t)(o - chunk));
        if (r == (size_t)-1 && e != E2BIG) {
            /* EILSEQ or EINVAL (cut short at the end): one byte lost */
            char fffd[4];
            buf_append(out, fffd, utf8_encode(0xFFFD, fffd));
            in++;
            left--;
            iconv(cd, NULL, NULL, NULL, NULL);
        }
    }
    iconv_close(cd);
    return true;
}

int xdom_to_utf8(const char *page, size_t len, const char *charset, const char **out,
                 size_t *out_len, char **owned)
{
    struct buf b, fixed;
    char label[CHARSET_LABEL_MAX];
    const char *from = NULL; /* NULL: UTF-8 */
    bool valid = false;
    *owned = NULL;
    if (len >= 3 && memcmp(page, "\xEF\xBB\xBF", 3) == 0) {
        page += 3, len -= 3;
    } else if (len >= 2 && (memcmp(page, "\xFF\xFE", 2) == 0 || memcmp(page, "\xFE\xFF", 2) == 0)) {
        from = page[0] == '\xFF' ? "UTF-16LE" : "UTF-16BE";
        page += 2, len -= 2;
    } else if ((valid = utf8_valid(page, len))) {
        from = NULL; /* ASCII reads the same in every charset a page declares */
    } else if (charset && charset[0]) {
        from = charset_name(charset);
    } else if (sniff_charset(page, len, label)) {
        from = charset_name(label);
    } else {
        from = "WINDOWS-1252";
    }
    /* The common case: UTF-8 as it came, parsed in place. */
    if (!from && valid && !memchr(page, 0, len)) {
        *out = page;
        *out_len = len;
        return 0;
    }
    buf_init(&b, 0);
    buf_init(&fixed, 0);
    if (!from || !convert(&b, page, len, from)) {
        buf_reset(&b);
        if (from)
            convert(&b, page, len, "WINDOWS-1252"); /* a charset iconv lacks */
        else
            buf_append(&b, page, len);
    }
    /* iconv's UTF-8 output can still hold NULs, and its UTF-8 reader lets
     * through sequences past U+10FFFF: one more pass when needed. */
    if (buf_error(&b) == 0 &&
        (memchr(b.data ? b.data : "", 0, b.len) || !utf8_valid(b.data ? b.data : "", b.len))) {
        utf8_put_repaired(&fixed, b.data, b.len, UTF8_NUL_REPLACE);
        buf_release(&b);
        b = fixed;
    }
    if (buf_error(&b)) {
        buf_release(&b);
        return ERR_NOMEM;
    }
    *owned = buf_detach(&b, out_len);
    *out = *owned;
    return *owned ? 0 : ERR_NOMEM;
}

/* ---- the tree ------------------------------------------------------------ */

static const char *const attr_names[] = {
#define XATTR_NAME_(n) #n,
    XATTRS(XATTR_NAME_)
#undef XATTR_NAME_
};

/* Attribute names match with '-' written '_' ("data-src", "http-equiv"). */
static int attr_of(const char *name)
{
    for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++) {
        const char *a = attr_names[i];
        if (a[0] != name[0])
            continue;
        size_t k = 0;
        while (a[k] && (a[k] == name[k] || (a[k] == '_' && name[k] == '-')))
            k++;
        if (!a[k] && !name[k])
            return (int)i;
    }
    return -1;
}

struct builder {
    struct xdom *d;
    uint32_t cur;      /* innermost open element */
    uint32_t depth;    /* of cur */
    uint32_t overflow; /* open elements not made into nodes (too deep, too many) */
    uint32_t skip;     /* inside script/style/...: text dropped unless JSON-LD */
    struct html_sax *sax;
};

/* style="display:none" or "visibility:hidden", spaces and case aside. */
static bool style_hides(const char *s)
{
    static const char *const rules[] = {"display:none", "visibility:hidden"};
    for (size_t r = 0; r < 2; r++) {
        const char *rule = rules[r];
        for (const char *p = s; *p; p++) {
            if ((*p | 0x20) != rule[0])
                continue;
            const char *q = p;
            size_t k = 0;
            while (*q && rule[k]) {
                if (*q == ' ' || *q == '\t' || *q == '\n') {
                    q++;
                    continue;
                }
                char c = ascii_lower(*q);
                if (c != rule[k])
                    break;
                q++, k++;
            }
            if (!rule[k])
                return true;
        }
    }
    return false;
}

static uint32_t node_new(struct xdom *d, enum xtag tag)
{
    if (array_reserve(&d->nodes, &d->cap, d->n, 1, sizeof *d->nodes) < 0) {
        d->rc = ERR_NOMEM;
        return 0;
    }
    uint32_t i = d->n++;
    memset(&d->nodes[i], 0, sizeof d->nodes[i]);
    d->nodes[i].tag = (uint16_t)tag;
    return i;
}

static void node_append(struct xdom *d, uint32_t parent, uint32_t child)
{
    struct xnode *p = &d->nodes[parent];
    d->nodes[child].parent = parent;
    if (p->last)
        d->nodes[p->last].next = child;
    else
        p->first = child;
    p->last = child;
}

static void attr_add(struct xdom *d, int name, const char *value)
{
    if (array_reserve(&d->attrs, &d->cap_attrs, d->n_attrs, 1, sizeof *d->attrs) < 0) {
        d->rc = ERR_NOMEM;
        return;
    }
    size_t len = strlen(value);
    if (len > EXTRACT_MAX_FIELD * 4)
        len = utf8_cut(value, len, EXTRACT_MAX_FIELD * 4);
    char *copy = arena_strndup(d->a, value, len);
    if (!copy) {
        d->rc = ERR_NOMEM;
        return;
    }
    d->attrs[d->n_attrs++] = (struct xattr_kv){(uint32_t)name, copy, (uint32_t)len};
}

static void stop(struct builder *b)
{
    html_sax_stop(b->sax);
}

/* A new node of tag in *out, the last child of the builder's current
 * node; false when out of memory (d->rc says so, the parse is stopped). */
static bool child_new(struct builder *b, enum xtag tag, uint32_t *out)
{
    struct xdom *d = b->d;
    uint32_t i = node_new(d, tag);
    if (d->rc < 0) {
        stop(b);
        return false;
    }
    node_append(d, b->cur, i);
    *out = i;
    return true;
}

static void sax_start(void *ctx, const xmlChar *xname, const xmlChar **attrs)
{
    struct builder *b = ctx;
    struct xdom *d = b->d;
    if (d->rc < 0 || !xname)
        return;
    enum xtag tag = html_tag_of((const char *)xname);
    if (b->overflow || b->depth >= EXTRACT_MAX_DEPTH || d->n >= EXTRACT_MAX_NODES) {
        b->overflow++;
        return;
    }
    uint32_t i;
    if (!child_new(b, tag, &i))
        return;
    uint32_t first_attr = d->n_attrs;
    uint16_t flags = 0;
    for (size_t k = 0; attrs && attrs[k]; k += 2) {
        const char *an = (const char *)attrs[k];
        const char *av = attrs[k + 1] ? (const char *)attrs[k + 1] : "";
        if (strcmp(an, "hidden") == 0)
            flags |= XN_HIDDEN;
        else if (strcmp(an, "aria-hidden") == 0 && strcasecmp(av, "true") == 0)
            flags |= XN_HIDDEN;
        else if (strcmp(an, "style") == 0 && style_hides(av))
            flags |= XN_HIDDEN;
        int id = attr_of(an);
        if (id >= 0)
            attr_add(d, id, av);
        if (id == XATTR_type && tag == XTAG_script && strcasecmp(av, "application/ld+json") == 0)
            flags |= XN_JSONLD;
    }
    d->nodes[i].flags = flags;
    d->nodes[i].off = first_attr;
    d->nodes[i].len = d->n_attrs - first_attr;
    b->cur = i;
    b->depth++;
    if ((html_tag_flags(tag) & HT_NO_TEXT) || b->skip)
        b->skip++;
}

static void sax_end(void *ctx, const xmlChar *xname)
{
    struct builder *b = ctx;
    struct xdom *d = b->d;
    if (d->rc < 0 || !xname)
        return;
    if (b->overflow) {
        b->overflow--;
        return;
    }
    /* libxml2 closes what it opened; still, close up to the nearest open
     * element of this name, and nothing when there is none. */
    enum xtag tag = html_tag_of((const char *)xname);
    uint32_t i = b->cur;
    uint32_t up = 0;
    while (i != 0 && d->nodes[i].tag != tag)
        i = d->nodes[i].parent, up++;
    if (i == 0)
        return;
    for (uint32_t k = 0; k <= up; k++) {
        if (b->skip)
            b->skip--;
        b->depth--;
    }
    b->cur = d->nodes[i].parent;
}

static void sax_chars(void *ctx, const xmlChar *s, int n)
{
    struct builder *b = ctx;
    struct xdom *d = b->d;
    if (d->rc < 0 || n <= 0)
        return;
    if (b->skip && !(d->nodes[b->cur].flags & XN_JSONLD))
        return;
    struct xnode *cur = &d->nodes[b->cur];
    size_t before = d->text.len;
    buf_append(&d->text, s, (size_t)n);
    if (buf_error(&d->text)) {
        d->rc = buf_error(&d->text) == ERR_NOMEM ? ERR_NOMEM : 0;
        d->text.len = before; /* over the bound: the rest of the text is dropped */
        stop(b);
        return;
    }
    /* A run continues the text node just before it. */
    if (cur->last && d->nodes[cur->last].tag == XTAG_TEXT &&
        d->nodes[cur->last].off + d->nodes[cur->last].len == before) {
        d->nodes[cur->last].len += (uint32_t)n;
        return;
    }
    if (b->overflow == 0 && d->n >= EXTRACT_MAX_NODES)
        return;
    uint32_t t;
    if (!child_new(b, XTAG_TEXT, &t))
        return;
    d->nodes[t].off = (uint32_t)before;
    d->nodes[t].len = (uint32_t)n;
}

int xdom_build(struct xdom *d, const char *html, size_t len)
{
    struct builder b = {.d = d};
    buf_init(&d->text, XDOM_MAX_TEXT);
    node_new(d, XTAG_DOC);
    if (d->rc < 0)
        return d->rc;
    if (len > EXTRACT_MAX_INPUT * 4)
        len = EXTRACT_MAX_INPUT * 4;
    if (len == 0)
        return 0; /* libxml2 makes no parser for nothing: an empty document */
    struct html_sax sax = {.start = sax_start, .end = sax_end, .text = sax_chars, .ctx = &b};
    b.sax = &sax;
    int rc = html_sax_parse(&sax, html, len);
    if (rc < 0)
        return d->rc = rc;
    return d->rc;
}

void xdom_release(struct xdom *d)
{
    free(d->nodes);
    free(d->attrs);
    buf_release(&d->text);
    d->nodes = NULL;
    d->attrs = NULL;
    d->n = d->cap = d->n_attrs = d->cap_attrs = 0;
}

const char *xdom_attr(const struct xdom *d, uint32_t i, enum xattr name, size_t *len_out)
{
    const struct xnode *x = &d->nodes[i];
    if (x->tag == XTAG_TEXT || x->tag == XTAG_DOC)
        return NULL;
    for (uint32_t k = x->off; k < x->off + x->len; k++) {
        if (d->attrs[k].name == (uint32_t)name) {
            if (len_out)
                *len_out = d->attrs[k].len;
            return d->attrs[k].value;
        }
    }
    return NULL;
}

bool xdom_attr_is(const struct xdom *d, uint32_t i, enum xattr name, const char *s)
{
    const char *v = xdom_attr(d, i, name, NULL);
    return v && strcasecmp(v, s) == 0;
}

/* ---- text ------------------------------------------------------------------ */

void xtext_fold(struct buf *b, const char *s, size_t n, bool *pending_space, size_t max)
{
    struct html_fold f = {
        .b = b, .max = max, .gap = *pending_space ? HTML_GAP_SPACE : HTML_GAP_NONE};
    html_fold_text(&f, s, n);
    *pending_space = f.gap != HTML_GAP_NONE;
}

uint32_t xdom_subtree_end(const struct xdom *d, uint32_t i)
{
    while (i != 0 && d->nodes[i].next == 0)
        i = d->nodes[i].parent;
    return i == 0 ? d->n : d->nodes[i].next;
}

void xdom_text_line(const struct xdom *d, uint32_t i, struct buf *b, size_t max)
{
    bool space = b->len > 0;
    uint32_t end = xdom_subtree_end(d, i);
    for (uint32_t k = i; k < end; k++) {
        const struct xnode *x = &d->nodes[k];
        if (x->tag == XTAG_TEXT) {
            xtext_fold(b, d->text.data + x->off, x->len, &space, max);
            if (max && b->len >= max)
                return;
        } else if (x->tag == XTAG_br || x->tag == XTAG_p || x->tag == XTAG_div ||
                   x->tag == XTAG_li || x->tag == XTAG_td) {
            space = true;
        }
    }
}

/* &quot; &amp; &lt; &gt; &apos; &#N; &#xH; of s[0..n) decoded into b (a
 * code point that is none, 0 included, as U+FFFD); other text as is. */
static void unescape_into(struct buf *b, const char *s, size_t n)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"quot;", '"'}, {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"apos;", '\''}};
    size_t i = 0;
    while (i < n) {
        const char *amp = memchr(s + i, '&', n - i);
        size_t k = amp ? (size_t)(amp - s) : n;
        buf_append(b, s + i, k - i);
        i = k;
        if (i >= n)
            break;
        i++; /* past '&' */
        bool done = false;
        for (size_t e = 0; e < sizeof named / sizeof named[0] && !done; e++) {
            size_t l = strlen(named[e].name);
            if (n - i >= l && memcmp(s + i, named[e].name, l) == 0) {
                buf_putc(b, named[e].c);
                i += l;
                done = true;
            }
        }
        if (!done && i < n && s[i] == '#') {
            size_t j = i + 1;
            bool hex = j < n && (s[j] == 'x' || s[j] == 'X');
            j += hex;
            uint64_t v = 0;
            size_t digits = 0;
            for (; j < n && digits < 16; j++, digits++) {
                char c = s[j];
                int d = c >= '0' && c <= '9'          ? c - '0'
                        : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                      : -1;
                if (d < 0)
                    break;
                v = v * (hex ? 16 : 10) + (uint64_t)d;
            }
            if (digits > 0 && j < n && s[j] == ';') {
                xmlChar enc[8];
                int len = 0;
                if (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
                    v = 0xFFFD;
                if (v < 0x80) {
                    enc[0] = (xmlChar)v;
                    len = 1;
                } else {
                    len = xmlCopyCharMultiByte(enc, (int)v);
                }
                buf_append(b, enc, (size_t)(len > 0 ? len : 0));
                i = j + 1;
                done = true;
            }
        }
        if (!done)
            buf_putc(b, '&');
    }
}

char *xtext_clean(struct arena *a, const char *s, size_t n, size_t max, bool unescape, int *rc)
{
    struct buf b, u;
    buf_init(&b, 0);
    buf_init(&u, 0);
    bool space = false;
    if (unescape && memchr(s, '&', n)) {
        unescape_into(&u, s, n);
        s = u.data ? u.data : "";
        n = u.len;
    }
    xtext_fold(&b, s, n, &space, max);
    char *out = NULL;
    if (buf_error(&b) || buf_error(&u)) {
        *rc = ERR_NOMEM;
    } else if (b.len > 0) {
        out = arena_strndup(a, b.data, b.len);
        if (!out)
            *rc = ERR_NOMEM;
    }
    buf_release(&b);
    buf_release(&u);
    return out;
}

bool xtext_has_ci(const char *s, const char *word)
{
    size_t w = strlen(word);
    for (; *s; s++)
        if ((*s | 0x20) == word[0] && strncasecmp(s, word, w) == 0)
            return true;
    return false;
}
