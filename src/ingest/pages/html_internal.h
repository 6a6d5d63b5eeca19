/* Private to the pages room: its one HTML front end, under both readers of
 * HTML (the extractor's tree, extract_dom.c, and the feed text renderer,
 * html_text.c): one tag table, one libxml2 set-up, one repair of bytes
 * that are not UTF-8.
 *
 * The tag table names every element either reader treats by name (any
 * other is XTAG_OTHER) with what each reader does with it. The readers
 * keep their own columns: the extractor reads whole pages and decides
 * what an article is (a <dialog> or <label> is no article text, a <td> is
 * a block of its own), the renderer turns a feed's HTML fragment into
 * lines (a <br> or <title> breaks the line, a <td> only separates words).
 * One row per tag keeps the two side by side; merging the columns would
 * change what either produces (tests/data/pages, the fuzz corpora). */
#ifndef NEWSD_INGEST_PAGES_HTML_INTERNAL_H
#define NEWSD_INGEST_PAGES_HTML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/HTMLparser.h>

#include "util/buf.h"

/* What a tag means to each reader. */
enum html_tag_flags {
    /* the extractor (extract.c) */
    HT_BLOCK = 1 << 0,     /* a block of its own: text on either side is apart */
    HT_INVISIBLE = 1 << 1, /* never shows as article text */
    HT_NO_TEXT = 1 << 2,   /* its text is not kept in the tree (JSON-LD aside) */
    /* the renderer (html_text.c) */
    HT_TEXT_BREAK = 1 << 3, /* a line break before and after */
    HT_TEXT_DROP = 1 << 4,  /* dropped with its content */
    HT_TEXT_SPACE = 1 << 5, /* separates words without breaking the line */
};

/* Every tag named by either reader, in byte order of the names (looked up
 * by binary search; h1..h6 are consecutive). */
/* clang-format off */
#define HTML_TAGS(X)                                                                               \
    X(a, 0)                                                                                        \
    X(abbr, 0)                                                                                     \
    X(address, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(article, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(aside, HT_BLOCK | HT_TEXT_BREAK)                                                             \
    X(audio, HT_INVISIBLE | HT_TEXT_DROP)                                                          \
    X(b, 0)                                                                                        \
    X(base, HT_INVISIBLE)                                                                          \
    X(blockquote, HT_BLOCK | HT_TEXT_BREAK)                                                        \
    X(body, HT_BLOCK | HT_TEXT_BREAK)                                                              \
    X(br, HT_TEXT_BREAK)                                                                           \
    X(button, HT_INVISIBLE)                                                                        \
    X(canvas, HT_INVISIBLE | HT_TEXT_DROP)                                                         \
    X(caption, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(center, HT_BLOCK | HT_TEXT_BREAK)                                                            \
    X(code, 0)                                                                                     \
    X(dd, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(del, 0)                                                                                      \
    X(details, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(dialog, HT_BLOCK | HT_INVISIBLE)                                                             \
    X(dir, HT_TEXT_BREAK)                                                                          \
    X(div, HT_BLOCK | HT_TEXT_BREAK)                                                               \
    X(dl, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(dt, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(em, 0)                                                                                       \
    X(embed, HT_INVISIBLE | HT_TEXT_DROP)                                                          \
    X(fieldset, HT_BLOCK | HT_TEXT_BREAK)                                                          \
    X(figcaption, HT_BLOCK | HT_TEXT_BREAK)                                                        \
    X(figure, HT_BLOCK | HT_TEXT_BREAK)                                                            \
    X(font, 0)                                                                                     \
    X(footer, HT_BLOCK | HT_TEXT_BREAK)                                                            \
    X(form, HT_BLOCK | HT_TEXT_BREAK)                                                              \
    X(h1, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(h2, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(h3, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(h4, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(h5, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(h6, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(head, HT_INVISIBLE | HT_TEXT_DROP)                                                           \
    X(header, HT_BLOCK | HT_TEXT_BREAK)                                                            \
    X(hr, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(html, HT_BLOCK | HT_TEXT_BREAK)                                                              \
    X(i, 0)                                                                                        \
    X(iframe, HT_INVISIBLE | HT_TEXT_DROP)                                                         \
    X(img, HT_TEXT_SPACE)                                                                          \
    X(input, HT_INVISIBLE)                                                                         \
    X(ins, 0)                                                                                      \
    X(kbd, 0)                                                                                      \
    X(label, HT_INVISIBLE)                                                                         \
    X(legend, HT_TEXT_BREAK)                                                                       \
    X(li, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(link, HT_INVISIBLE)                                                                          \
    X(listing, HT_TEXT_BREAK)                                                                      \
    X(main, HT_BLOCK | HT_TEXT_BREAK)                                                              \
    X(map, HT_INVISIBLE)                                                                           \
    X(math, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                              \
    X(menu, HT_BLOCK | HT_TEXT_BREAK)                                                              \
    X(meta, HT_INVISIBLE)                                                                          \
    X(nav, HT_BLOCK | HT_TEXT_BREAK)                                                               \
    X(noscript, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                          \
    X(object, HT_INVISIBLE | HT_TEXT_DROP)                                                         \
    X(ol, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(option, HT_INVISIBLE)                                                                        \
    X(p, HT_BLOCK | HT_TEXT_BREAK)                                                                 \
    X(picture, 0)                                                                                  \
    X(plaintext, HT_TEXT_BREAK)                                                                    \
    X(pre, HT_BLOCK | HT_TEXT_BREAK)                                                               \
    X(q, 0)                                                                                        \
    X(s, 0)                                                                                        \
    X(samp, 0)                                                                                     \
    X(script, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                            \
    X(section, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(select, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                            \
    X(small, 0)                                                                                    \
    X(source, 0)                                                                                   \
    X(span, 0)                                                                                     \
    X(strong, 0)                                                                                   \
    X(style, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                             \
    X(sub, 0)                                                                                      \
    X(summary, HT_BLOCK | HT_TEXT_BREAK)                                                           \
    X(sup, 0)                                                                                      \
    X(svg, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                               \
    X(table, HT_BLOCK | HT_TEXT_BREAK)                                                             \
    X(tbody, HT_BLOCK | HT_TEXT_BREAK)                                                             \
    X(td, HT_BLOCK | HT_TEXT_SPACE)                                                                \
    X(template, HT_INVISIBLE | HT_NO_TEXT | HT_TEXT_DROP)                                          \
    X(textarea, HT_INVISIBLE | HT_NO_TEXT)                                                         \
    X(tfoot, HT_BLOCK | HT_TEXT_BREAK)                                                             \
    X(th, HT_BLOCK | HT_TEXT_SPACE)                                                                \
    X(thead, HT_BLOCK | HT_TEXT_BREAK)                                                             \
    X(time, 0)                                                                                     \
    X(title, HT_INVISIBLE | HT_TEXT_BREAK)                                                         \
    X(tr, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(tt, 0)                                                                                       \
    X(u, 0)                                                                                        \
    X(ul, HT_BLOCK | HT_TEXT_BREAK)                                                                \
    X(var, 0)                                                                                      \
    X(video, HT_INVISIBLE | HT_TEXT_DROP)                                                          \
    X(wbr, 0)                                                                                      \
    X(xmp, HT_TEXT_BREAK)
/* clang-format on */

enum xtag {
    XTAG_TEXT = 0, /* a text run, not an element */
    XTAG_DOC,      /* the document (the extractor's node 0) */
    XTAG_OTHER,    /* an element of no interest by name */
#define XTAG_ENUM_(n, flags) XTAG_##n,
    HTML_TAGS(XTAG_ENUM_)
#undef XTAG_ENUM_
        XTAG_COUNT
};

/* The tag of an element name as libxml2's HTML parser gives it (lower
 * case); XTAG_OTHER for any name not in the table. */
enum xtag html_tag_of(const char *name);

/* The enum html_tag_flags of t; 0 for XTAG_TEXT, XTAG_DOC and XTAG_OTHER. */
unsigned html_tag_flags(enum xtag t);

/* What a reader hears of a document, in libxml2's SAX terms. */
struct html_sax {
    startElementSAXFunc start;
    endElementSAXFunc end;
    charactersSAXFunc text; /* also white space and CDATA (script and style bodies) */
    void *ctx;              /* handed to each */
    /* Set while the parse runs, NULL after: html_sax_stop may be called
     * from the events. */
    htmlParserCtxtPtr running;
};

/* Parse UTF-8 html[0..len) (len > 0; cut at INT32_MAX) with libxml2's HTML
 * parser, events to h: recover mode, no network, no errors printed, no
 * implied <html>/<body>, and the input's own encoding declarations
 * ignored (both readers hand over UTF-8 already: a <meta charset> must not
 * switch decoding half-way). Builds no libxml2 tree. Returns 0, or
 * ERR_NOMEM when libxml2 makes no parser. */
int html_sax_parse(struct html_sax *h, const char *html, size_t len);

/* Stop the parse h runs (from inside one of its events): no more events. */
void html_sax_stop(struct html_sax *h);

/* ---- the text renderer (html_text.c) -------------------------------------- */

/* What text becomes of a code point: the one rule of both readers (the
 * renderer of html_text_extract and the extractor's text). Unicode's
 * White_Space code points are spaces; the other C0 and C1 controls, the
 * soft hyphen, U+200B, U+FEFF and the noncharacters (U+FDD0..U+FDEF and
 * the last two of each plane) are dropped: invisible, they only get in the
 * way of search and display. Every other is shown: ZWNJ and ZWJ too, which
 * carry meaning in Persian, Indic scripts and emoji sequences. */
enum html_cp {
    HTML_CP_SHOWN,
    HTML_CP_SPACE,
    HTML_CP_DROPPED,
};
enum html_cp html_cp_class(uint32_t cp);

/* White space read and not yet written. */
enum html_gap {
    HTML_GAP_NONE,
    HTML_GAP_SPACE,
    HTML_GAP_BREAK, /* a line break: outranks a space */
};

/* Where a text is rendered to, and what is carried across its runs. */
struct html_fold {
    struct buf *b;
    size_t max;        /* bound of b->len in bytes, 0: none */
    enum html_gap gap; /* before the next shown code point */
    bool one_line;     /* a break is written as a space */
    bool full;         /* the bound was reached, or b failed: no more is written */
};

/* s[0..n) appended to f->b under the rule above: a run of spaces becomes
 * f->gap, written (' ', or '\n' for a break unless one_line) only before
 * the next shown code point and never at the start of b or of a line;
 * dropped code points are left out, a byte that starts no well-formed
 * UTF-8 sequence is written as U+FFFD. The first code point that would
 * take b past max is not written, nor anything after it (f->full, as on
 * an append failure: the caller checks buf_error). Returns !f->full. */
bool html_fold_text(struct html_fold *f, const char *s, size_t n);

#endif
