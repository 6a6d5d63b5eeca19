/* HTML to plain text (ingest/pages/pages.h: html_text_extract): the
 * pages room's HTML front end (html_internal.h: libxml2's HTML parser in
 * SAX mode, the tag table's TEXT_ columns) feeds an emitter that decodes
 * nothing itself (the parser has decoded entities) but owns every output
 * rule: white space folding, line breaks for block elements, dropped
 * invisible elements, control characters and the byte bound. Input that
 * is not valid UTF-8 is repaired first (U+FFFD) so the parser never falls
 * back to guessing an encoding. */
#include "ingest/pages/pages.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/html_internal.h"
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
    struct html_sax *sax; /* the parse; NULL in plain mode */
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
    if (e->sax)
        html_sax_stop(e->sax);
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

static void sax_start(void *ctx, const xmlChar *xname, const xmlChar **attrs)
{
    struct emitter *e = ctx;
    if (e->stop || !xname)
        return;
    enum xtag tag = html_tag_of((const char *)xname);
    unsigned flags = html_tag_flags(tag);
    if (flags & HT_TEXT_DROP) {
        e->skip++;
        return;
    }
    if (e->skip)
        return;
    if (flags & HT_TEXT_BREAK)
        emit_break(e);
    else if ((flags & HT_TEXT_SPACE) && e->pending < PENDING_SPACE)
        e->pending = PENDING_SPACE;
    if (!e->first_img && tag == XTAG_img && attrs) {
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
    if (e->stop || !xname)
        return;
    unsigned flags = html_tag_flags(html_tag_of((const char *)xname));
    if (flags & HT_TEXT_DROP) {
        if (e->skip)
            e->skip--;
        return;
    }
    if (e->skip)
        return;
    if (flags & HT_TEXT_BREAK)
        emit_break(e);
    else if ((flags & HT_TEXT_SPACE) && e->pending < PENDING_SPACE)
        e->pending = PENDING_SPACE;
}

static void sax_chars(void *ctx, const xmlChar *s, int n)
{
    struct emitter *e = ctx;
    if (e->stop || e->skip || n <= 0)
        return;
    emit_text(e, (const char *)s, (size_t)n);
}

/* Parse with the front end, events going to the emitter. */
static int parse_html(struct emitter *e, const char *in, size_t len)
{
    struct html_sax sax = {.start = sax_start, .end = sax_end, .text = sax_chars, .ctx = e};
    e->sax = &sax;
    int rc = html_sax_parse(&sax, in, len);
    e->sax = NULL;
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
    utf8_put_repaired(&b, in, len, UTF8_NUL_DROP);
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
