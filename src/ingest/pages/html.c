/* The pages room's HTML front end (html_internal.h): the tag table's
 * look-ups, the one libxml2 HTML parser set-up. */
#include "ingest/pages/html_internal.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include "util/err.h"

#include "util/banned.h"

/* ---- the tag table -------------------------------------------------------- */

static const char *const tag_names[] = {
#define TAG_NAME_(n, flags) #n,
    HTML_TAGS(TAG_NAME_)
#undef TAG_NAME_
};

static const unsigned char tag_flags[] = {
#define TAG_FLAGS_(n, flags) (flags),
    HTML_TAGS(TAG_FLAGS_)
#undef TAG_FLAGS_
};

static int cmp_tag(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

enum xtag html_tag_of(const char *name)
{
    const char *const *hit = bsearch(name, tag_names, sizeof tag_names / sizeof tag_names[0],
                                     sizeof tag_names[0], cmp_tag);
    return hit ? (enum xtag)(XTAG_OTHER + 1 + (hit - tag_names)) : XTAG_OTHER;
}

unsigned html_tag_flags(enum xtag t)
{
    return t > XTAG_OTHER && t < XTAG_COUNT ? tag_flags[t - XTAG_OTHER - 1] : 0;
}

/* ---- libxml2 ---------------------------------------------------------------- */

int html_sax_parse(struct html_sax *h, const char *html, size_t len)
{
    xmlInitParser(); /* once per process; a no-op afterwards */
    if (len > INT32_MAX)
        len = INT32_MAX;
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(html, (int)len);
    if (!ctxt)
        return ERR_NOMEM;
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = h->start;
    sax.endElement = h->end;
    sax.characters = h->text;
    sax.ignorableWhitespace = h->text;
    sax.cdataBlock = h->text; /* script and style bodies */
    memcpy(ctxt->sax, &sax, sizeof sax);
    ctxt->userData = h->ctx;
    /* Without this the HTML parser decodes the first non-ASCII byte as
     * Latin-1. */
    xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8);
    htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_NONET | HTML_PARSE_IGNORE_ENC | HTML_PARSE_NOIMPLIED);
    h->running = ctxt;
    htmlParseDocument(ctxt);
    h->running = NULL;
    /* The SAX handler copy is libxml2's to free; myDoc is never built. */
    if (ctxt->myDoc)
        xmlFreeDoc(ctxt->myDoc);
    htmlFreeParserCtxt(ctxt);
    return 0;
}

void html_sax_stop(struct html_sax *h)
{
    if (h->running)
        xmlStopParser(h->running);
}
