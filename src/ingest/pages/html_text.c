/* HTML to plain text (ingest/pages/pages.h: html_text_extract), and the
 * pages room's one text renderer (html_internal.h: html_fold_text, which
 * the extractor's text goes through too): the HTML front end
 * (html_internal.h: libxml2's HTML parser in SAX mode, the tag table's
 * TEXT_ columns) feeds an emitter that decodes nothing itself (the parser
 * has decoded entities); the renderer owns the code point rule (spaces
 * folded, invisible ones dropped) and the byte bound, the emitter line
 * breaks for block elements and dropped invisible elements. Input that
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

struct emitter {
    struct buf b;
    struct html_fold fold; /* into b */
    unsigned skip;         /* depth inside script/style/... */
    bool stop;             /* output full: ignore the rest */
    struct arena *a;
    char *first_img;
    struct html_sax *sax; /* the parse; NULL in plain mode */
};

/* ---- the one text renderer ------------------------------------------------ */

enum html_cp html_cp_class(uint32_t cp)
{
    switch (cp) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85: /* NEL */
    case 0xA0: /* no-break space: folded like any space */
    case 0x1680:
    case 0x2028: /* line and paragraph separators */
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return HTML_CP_SPACE;
    case 0xAD:   /* soft hyphen */
    case 0x200B: /* zero width space */
    case 0xFEFF: /* BOM / zero width no-break space */
        return HTML_CP_DROPPED;
    default:
        break;
    }
    if (cp >= 0x2000 && cp <= 0x200A)
        return HTML_CP_SPACE;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return HTML_CP_DROPPED;
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE)
        return HTML_CP_DROPPED;
    return HTML_CP_SHOWN;
}

/* s[0..n), whole shown code points, appended after the gap (see
 * html_fold_text). */
static bool put_shown(struct html_fold *f, const char *s, size_t n)
{
    struct buf *b = f->b;
    if (n == 0 || f->full)
        return !f->full;
    char gap = 0;
    if (f->gap != HTML_GAP_NONE && b->len > 0 && b->data[b->len - 1] != '\n')
        gap = f->gap == HTML_GAP_BREAK && !f->one_line ? '\n' : ' ';
    size_t g = gap != 0;
    if (f->max && b->len + g + n > f->max) {
        n = utf8_cut(s, n, f->max > b->len + g ? f->max - b->len - g : 0);
        f->full = true;
    }
    if (n > 0) {
        if (gap)
            buf_putc(b, gap);
        buf_append(b, s, n);
        f->gap = HTML_GAP_NONE;
    }
    if (buf_error(b))
        f->full = true;
    return !f->full;
}

bool html_fold_text(struct html_fold *f, const char *s, size_t n)
{
    size_t run = 0, i = 0; /* s[run..i): shown code points not yet written */
    while (i < n && !f->full) {
        uint32_t cp;
        size_t l = utf8_decode(s + i, n - i, &cp);
        enum html_cp kind = l ? html_cp_class(cp) : HTML_CP_SHOWN;
        if (l && kind == HTML_CP_SHOWN) {
            i += l;
            continue;
        }
        if (!put_shown(f, s + run, i - run))
            break;
        if (l == 0) {
            char fffd[4];
            put_shown(f, fffd, utf8_encode(0xFFFD, fffd));
            l = 1;
        } else if (kind == HTML_CP_SPACE && f->gap < HTML_GAP_SPACE) {
            f->gap = HTML_GAP_SPACE;
        }
        i += l;
        run = i;
    }
    put_shown(f, s + run, i - run);
    return !f->full;
}

/* ---- HTML to text ------------------------------------------------------------ */

static void emit_stop(struct emitter *e)
{
    e->stop = true;
    if (e->sax)
        html_sax_stop(e->sax);
}

static void emit_text(struct emitter *e, const char *s, size_t n)
{
    if (!e->stop && !html_fold_text(&e->fold, s, n))
        emit_stop(e);
}

/* An element's start (opening) or end: a dropped element's depth counted,
 * else its break or space owed to the text. True when the element's text
 * shows (not inside a dropped one). */
static bool tag_edge(struct emitter *e, unsigned flags, bool opening)
{
    if (flags & HT_TEXT_DROP) {
        if (opening)
            e->skip++;
        else if (e->skip)
            e->skip--;
        return false;
    }
    if (e->skip)
        return false;
    if (flags & HT_TEXT_BREAK)
        e->fold.gap = HTML_GAP_BREAK;
    else if ((flags & HT_TEXT_SPACE) && e->fold.gap < HTML_GAP_SPACE)
        e->fold.gap = HTML_GAP_SPACE;
    return true;
}

static void sax_start(void *ctx, const xmlChar *xname, const xmlChar **attrs)
{
    struct emitter *e = ctx;
    if (e->stop || !xname)
        return;
    enum xtag tag = html_tag_of((const char *)xname);
    unsigned flags = html_tag_flags(tag);
    if (!tag_edge(e, flags, true))
        return;
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
    tag_edge(e, flags, false);
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
    e.fold = (struct html_fold){.b = &e.b, .max = max_out, .one_line = flags & HTML_TEXT_ONE_LINE};
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
    out->truncated = e.fold.full;
    out->first_img = e.first_img;
out:
    buf_release(&e.b);
    free(prepared);
    return rc;
}
