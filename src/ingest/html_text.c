/* HTML to plain text (ingest/html_text.h): libxml2's HTML parser in SAX
 * mode feeds an emitter that decodes nothing itself (the parser has decoded
 * entities) but owns every output rule: white space folding, line breaks
 * for block elements, dropped invisible elements, control characters and
 * the byte bound. Input that is not valid UTF-8 is repaired first (U+FFFD)
 * so the parser never falls back to guessing an encoding. */
#include "ingest/html_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/utf8.h"

#include "util/banned.h"

enum pending {
    PENDING_NONE = 0,
    PENDING_SPACE = 1,
    PENDING_BREAK = 2,
};

struct emitter {
    struct buf b;
    size_t max; /* output bound in bytes, 0 = none */
    unsigned flags;
    enum pending pending;
    unsigned skip; /* depth inside script/style/... */
    bool truncated;
    bool stop; /* output full: ignore the rest */
    struct arena *a;
    char *first_img;
    htmlParserCtxtPtr ctxt; /* NULL in plain mode */
};

#define REPLACEMENT_CP 0xFFFDu

/* The code point at s[0..n) (n > 0) and its length: an invalid byte reads
 * as U+FFFD of length 1, so every input makes progress. */
static size_t decode_or_replacement(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len = utf8_decode((const char *)s, n, cp);
    if (len)
        return len;
    *cp = REPLACEMENT_CP;
    return 1;
}

static bool cp_is_space(uint32_t cp)
{
    switch (cp) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '\f':
    case '\v':
    case 0x85: /* NEL */
    case 0xA0: /* no-break space: folded like any space */
    case 0x1680:
    case 0x2028: /* line and paragraph separators */
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

/* Invisible code points that only get in the way of search and display. */
static bool cp_is_dropped(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return true;
    switch (cp) {
    case 0xAD:   /* soft hyphen */
    case 0x200B: /* zero width space */
    case 0xFEFF: /* BOM / zero width no-break space */
    case 0xFFFE:
    case 0xFFFF:
        return true;
    default:
        return false;
    }
}

static void emit_stop(struct emitter *e)
{
    e->stop = true;
    if (e->ctxt)
        xmlStopParser(e->ctxt);
}

/* Append one visible code point, first writing the pending white space. */
static void emit_cp(struct emitter *e, uint32_t cp)
{
    char enc[5];
    size_t n = 0;
    if (e->pending != PENDING_NONE && e->b.len > 0) {
        enc[0] = (e->pending == PENDING_BREAK && !(e->flags & HTML_TEXT_ONE_LINE)) ? '\n' : ' ';
        n = 1;
    }
    n += utf8_encode(cp, enc + n);
    if (e->max && e->b.len + n > e->max) {
        e->truncated = true;
        emit_stop(e);
        return;
    }
    buf_append(&e->b, enc, n);
    if (buf_error(&e->b)) {
        emit_stop(e);
        return;
    }
    e->pending = PENDING_NONE;
}

static void emit_text(struct emitter *e, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n && !e->stop) {
        uint32_t cp;
        i += decode_or_replacement(p + i, n - i, &cp);
        if (cp_is_space(cp)) {
            if (e->pending < PENDING_SPACE)
                e->pending = PENDING_SPACE;
        } else if (!cp_is_dropped(cp)) {
            emit_cp(e, cp);
        }
    }
}

static void emit_break(struct emitter *e)
{
    e->pending = PENDING_BREAK;
}

/* Elements whose content is never shown as text. */
static bool tag_is_invisible(const char *name)
{
    static const char *const tags[] = {"script", "style",  "noscript", "template", "iframe",
                                       "object", "embed",  "svg",      "math",     "head",
                                       "select", "canvas", "audio",    "video"};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strcasecmp(name, tags[i]) == 0)
            return true;
    return false;
}

/* Elements that start and end a line of their own. */
static bool tag_is_block(const char *name)
{
    static const char *const tags[] = {
        "address", "article", "aside", "blockquote", "br",       "caption",    "dd",
        "details", "div",     "dl",    "dt",         "fieldset", "figcaption", "figure",
        "footer",  "form",    "h1",    "h2",         "h3",       "h4",         "h5",
        "h6",      "header",  "hr",    "legend",     "li",       "main",       "nav",
        "ol",      "p",       "pre",   "section",    "summary",  "table",      "tbody",
        "tfoot",   "thead",   "title", "tr",         "ul",       "body",       "html",
        "center",  "dir",     "menu",  "listing",    "xmp",      "plaintext"};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strcasecmp(name, tags[i]) == 0)
            return true;
    return false;
}

/* Cells and images separate words without breaking the line. */
static bool tag_is_spacer(const char *name)
{
    return strcasecmp(name, "td") == 0 || strcasecmp(name, "th") == 0 ||
           strcasecmp(name, "img") == 0;
}

static void sax_start(void *ctx, const xmlChar *xname, const xmlChar **attrs)
{
    struct emitter *e = ctx;
    const char *name = (const char *)xname;
    if (e->stop || !name)
        return;
    if (tag_is_invisible(name)) {
        e->skip++;
        return;
    }
    if (e->skip)
        return;
    if (tag_is_block(name))
        emit_break(e);
    else if (tag_is_spacer(name) && e->pending < PENDING_SPACE)
        e->pending = PENDING_SPACE;
    if (!e->first_img && strcasecmp(name, "img") == 0 && attrs) {
        const char *src = NULL;
        bool pixel = false;
        for (size_t i = 0; attrs[i]; i += 2) {
            const char *an = (const char *)attrs[i];
            const char *av = (const char *)attrs[i + 1];
            if (!av)
                continue;
            if (strcasecmp(an, "src") == 0 && av[0])
                src = av;
            /* 1x1 tracking pixels are no article image. */
            if ((strcasecmp(an, "width") == 0 || strcasecmp(an, "height") == 0) &&
                (strcmp(av, "0") == 0 || strcmp(av, "1") == 0))
                pixel = true;
        }
        if (src && !pixel)
            e->first_img = arena_strdup(e->a, src);
    }
}

static void sax_end(void *ctx, const xmlChar *xname)
{
    struct emitter *e = ctx;
    const char *name = (const char *)xname;
    if (e->stop || !name)
        return;
    if (tag_is_invisible(name)) {
        if (e->skip)
            e->skip--;
        return;
    }
    if (e->skip)
        return;
    if (tag_is_block(name))
        emit_break(e);
    else if (tag_is_spacer(name) && e->pending < PENDING_SPACE)
        e->pending = PENDING_SPACE;
}

static void sax_chars(void *ctx, const xmlChar *s, int n)
{
    struct emitter *e = ctx;
    if (e->stop || e->skip || n <= 0)
        return;
    emit_text(e, (const char *)s, (size_t)n);
}

/* Parse with libxml2's HTML parser, events going to the emitter. */
static int parse_html(struct emitter *e, const char *in, size_t len)
{
    int rc = 0;
    htmlParserCtxtPtr ctxt = NULL;
    xmlInitParser(); /* once per process; a no-op afterwards */
    if (len > INT32_MAX)
        len = INT32_MAX;
    ctxt = htmlCreateMemoryParserCtxt(in, (int)len);
    if (!ctxt) {
        rc = ERR_NOMEM;
        goto out;
    }
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = sax_start;
    sax.endElement = sax_end;
    sax.characters = sax_chars;
    sax.ignorableWhitespace = sax_chars;
    /* script/style bodies arrive as CDATA; the skip depth drops them. */
    sax.cdataBlock = sax_chars;
    memcpy(ctxt->sax, &sax, sizeof sax);
    ctxt->userData = e;
    /* Without this the HTML parser decodes the first non-ASCII byte as
     * Latin-1. */
    xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8);
    /* Our input is UTF-8 already: a <meta charset> inside a feed's HTML must
     * not switch decoding half-way. */
    htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_NONET | HTML_PARSE_IGNORE_ENC | HTML_PARSE_NOIMPLIED);
    e->ctxt = ctxt;
    htmlParseDocument(ctxt);
    e->ctxt = NULL;
out:
    if (ctxt) {
        /* The SAX handler copy is libxml2's to free; myDoc is never built. */
        if (ctxt->myDoc)
            xmlFreeDoc(ctxt->myDoc);
        htmlFreeParserCtxt(ctxt);
    }
    return rc;
}

#define BODY_PREFIX "<body>"

/* "<body>" + in[0..len), with invalid UTF-8 replaced by U+FFFD and NULs
 * dropped (the HTML parser would stop at them). The prefix keeps the
 * parser's element stack non-empty: text at top level would otherwise open
 * an implied <p> and break the line in the middle of "<b>a</b>b".
 * Malloc'd; caller frees. */
static char *html_prepare(const char *in, size_t len, size_t *out_len)
{
    struct buf b;
    buf_init(&b, 0);
    buf_puts(&b, BODY_PREFIX);
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        /* Copy valid runs whole; only bad bytes go one by one. */
        while (run < len) {
            uint32_t cp;
            size_t n = utf8_decode(in + run, len - run, &cp);
            if (n == 0 || cp == 0)
                break;
            run += n;
        }
        buf_append(&b, p + i, run - i);
        if (run < len) {
            if (p[run] != 0)
                buf_append(&b, "\xEF\xBF\xBD", 3);
            run++;
        }
        i = run;
    }
    if (buf_error(&b)) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, out_len);
}

int html_text_extract(struct arena *a, const char *in, size_t len, size_t max_out, unsigned flags,
                      struct html_text_out *out)
{
    int rc = 0;
    char *prepared = NULL;
    struct emitter e;
    memset(&e, 0, sizeof e);
    buf_init(&e.b, 0);
    e.max = max_out;
    e.flags = flags;
    e.a = a;
    memset(out, 0, sizeof *out);

    bool html = !(flags & HTML_TEXT_PLAIN) && len > 0 &&
                (memchr(in, '<', len) != NULL || memchr(in, '&', len) != NULL);
    if (!html) {
        emit_text(&e, in, len);
    } else {
        size_t plen = 0;
        prepared = html_prepare(in, len, &plen);
        if (!prepared) {
            rc = ERR_NOMEM;
            goto out;
        }
        rc = parse_html(&e, prepared, plen);
        if (rc < 0)
            goto out;
    }
    if (buf_error(&e.b)) {
        rc = ERR_NOMEM;
        goto out;
    }
    out->text = arena_strndup(a, e.b.data ? e.b.data : "", e.b.len);
    if (!out->text) {
        rc = ERR_NOMEM;
        goto out;
    }
    out->len = e.b.len;
    out->truncated = e.truncated;
    out->first_img = e.first_img;
out:
    buf_release(&e.b);
    free(prepared);
    return rc;
}
