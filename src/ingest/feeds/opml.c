/* OPML feed lists (ingest/feeds/feeds.h): read with libxml2 into a tree, then
 * walked; written with util/buf. Safety rules, all here: no network, no
 * DTD (the parser stops at a DOCTYPE, before any declaration is read, so
 * no entity but the predefined five can exist and nothing is expanded), no
 * recover mode (a document that is not well-formed is refused with its
 * line rather than half read), and the walk is bounded in depth and
 * outline count. */
#include "ingest/feeds/feeds.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <libxml/entities.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>

#include "util/utf8.h"
#include "util/vocab.h"
#include "util/xml.h"

#include "util/banned.h"

#define OPML_SNIFF_BYTES (64 * 1024)
#define OPML_ATTR_MAX (64 * 1024) /* bytes of one attribute value kept */

/* ---- reading --------------------------------------------------------------- */

struct walk {
    struct arena *a;
    struct err *err;
    struct opml_feed *feeds;
    size_t n, cap;
    size_t outlines; /* seen, folders included */
    int rc;
};

bool opml_sniff(const char *data, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i >= len || data[i] != '<')
        return false;
    size_t end = len - i > OPML_SNIFF_BYTES ? i + OPML_SNIFF_BYTES : len;
    for (size_t k = i; k + 5 <= end; k++) {
        if (data[k] == '<' && memcmp(data + k, "<opml", 5) == 0)
            return true;
    }
    return false;
}

/* What the parser's hooks saw (ctxt->_private). */
struct parse_state {
    bool doctype;
    int error_line; /* of the first error; 0 = none */
    char error[160];
};

/* The SAX hook for <!DOCTYPE ...>: stop before the declarations. */
static void refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id)
{
    (void)name;
    (void)external_id;
    (void)system_id;
    xmlParserCtxtPtr ctxt = ctx;
    ((struct parse_state *)ctxt->_private)->doctype = true;
    xmlStopParser(ctxt);
}

#if LIBXML_VERSION >= 21200
typedef const xmlError *opml_xml_error;
#else
typedef xmlError *opml_xml_error;
#endif

/* The structured error hook: keep the first error, the one that explains
 * (libxml2 goes on and reports what follows from it last). */
static void first_error(void *ctx, opml_xml_error e)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct parse_state *ps = ctxt->_private;
    if (ps->error_line || !e || e->level < XML_ERR_ERROR)
        return;
    ps->error_line = e->line > 0 ? e->line : 1;
    const char *msg = e->message ? e->message : "error";
    snprintf(ps->error, sizeof ps->error, "%.*s", (int)strcspn(msg, "\r\n"), msg);
}

/* The text of attribute a: its text nodes and predefined entities (no
 * other entity can exist: the DOCTYPE was refused); NULL when empty, not
 * UTF-8 or over OPML_ATTR_MAX bytes. */
static const char *attr_text(struct walk *w, const xmlAttr *attr)
{
    struct buf b;
    const char *r = NULL;
    buf_init(&b, OPML_ATTR_MAX);
    for (const xmlNode *ch = attr->children; ch && !buf_error(&b); ch = ch->next) {
        if (ch->type == XML_TEXT_NODE && ch->content) {
            buf_puts(&b, (const char *)ch->content);
        } else if (ch->type == XML_ENTITY_REF_NODE) {
            xmlEntityPtr e = xmlGetPredefinedEntity(ch->name);
            if (e && e->content)
                buf_puts(&b, (const char *)e->content);
        }
    }
    if (buf_error(&b) == ERR_NOMEM)
        w->rc = err_set(w->err, ERR_NOMEM, "out of memory reading the OPML");
    else if (!buf_error(&b) && b.len > 0 && utf8_valid(b.data, b.len) &&
             memchr(b.data, '\0', b.len) == NULL) {
        r = arena_strndup(w->a, b.data, b.len);
        if (!r)
            w->rc = err_set(w->err, ERR_NOMEM, "out of memory reading the OPML");
    }
    buf_release(&b);
    return r;
}

/* newsd's attribute: in OPML_NS by any prefix, or written "newsd:NAME"
 * without declaring the prefix (libxml2 keeps that name whole); *local
 * gets NAME. */
static bool is_newsd_attr(const xmlAttr *attr, const char **local)
{
    const char *name = (const char *)attr->name;
    *local = name;
    if (attr->ns)
        return attr->ns->href && xmlStrEqual(attr->ns->href, (const xmlChar *)OPML_NS);
    if (strncmp(name, "newsd:", 6) != 0)
        return false;
    *local = name + 6;
    return true;
}

/* Fill f (or only the folder label) from the outline's attributes. */
static void outline_read(struct walk *w, const xmlNode *n, struct opml_feed *f, const char **text)
{
    for (const xmlAttr *attr = n->properties; attr && w->rc == 0; attr = attr->next) {
        const char *name = (const char *)attr->name;
        const char **slot = NULL;
        if (is_newsd_attr(attr, &name)) {
            static const char *const names[] = {"source",    "country",  "category", "language",
                                                "headlines", "interval", "paused",   "pages"};
            const char **slots[] = {&f->source,    &f->country,  &f->category, &f->language,
                                    &f->headlines, &f->interval, &f->paused,   &f->pages};
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                if (strcmp(name, names[i]) == 0)
                    slot = slots[i];
            }
        } else if (attr->ns) {
            continue; /* another vocabulary's */
        } else if (strcasecmp(name, "xmlUrl") == 0) {
            slot = &f->url;
        } else if (strcasecmp(name, "htmlUrl") == 0) {
            slot = &f->html_url;
        } else if (strcmp(name, "title") == 0) {
            slot = &f->title;
        } else if (strcmp(name, "text") == 0) {
            slot = text;
        }
        if (slot && !*slot)
            *slot = attr_text(w, attr);
    }
}

static bool is_outline(const xmlNode *n)
{
    return n->type == XML_ELEMENT_NODE && n->ns == NULL &&
           xmlStrEqual(n->name, (const xmlChar *)"outline");
}

static int feeds_push(struct walk *w, const struct opml_feed *f)
{
    if (arena_grow(w->a, &w->feeds, &w->cap, w->n, 64, sizeof *w->feeds) < 0)
        return w->rc = err_set(w->err, ERR_NOMEM, "out of memory reading the OPML");
    w->feeds[w->n++] = *f;
    return 0;
}

/* The outlines under parent, depth folders deep, in folder_category. */
static void walk_outlines(struct walk *w, const xmlNode *parent, int depth,
                          const char *folder_category)
{
    for (const xmlNode *n = parent->children; n && w->rc == 0; n = n->next) {
        if (!is_outline(n))
            continue;
        if (++w->outlines > OPML_MAX_OUTLINES) {
            w->rc = err_set(w->err, ERR_TOO_LARGE, "more than %d outlines", OPML_MAX_OUTLINES);
            return;
        }
        struct opml_feed f;
        const char *text = NULL;
        memset(&f, 0, sizeof f);
        outline_read(w, n, &f, &text);
        if (w->rc < 0)
            return;
        if (!f.title)
            f.title = text;
        f.line = (long)xmlGetLineNo(n);
        if (f.url) {
            f.folder_category = folder_category;
            if (feeds_push(w, &f) < 0)
                return;
        }
        if (!n->children)
            continue;
        if (depth + 1 > OPML_MAX_DEPTH) {
            w->rc = err_set(w->err, ERR_PARSE, "line %ld: outlines nested deeper than %d", f.line,
                            OPML_MAX_DEPTH);
            return;
        }
        /* A folder labelled with a category gives it to what it holds. */
        const char *label = text ? text : f.title;
        const char *cat = f.url ? NULL : vocab_category(label);
        walk_outlines(w, n, depth + 1, cat ? cat : folder_category);
    }
}

static int parse_error(const struct parse_state *ps, struct err *err)
{
    if (ps->error_line)
        return err_set(err, ERR_PARSE, "not well-formed XML, line %d: %s", ps->error_line,
                       ps->error);
    return err_set(err, ERR_PARSE, "not well-formed XML");
}

int opml_parse(struct arena *a, const char *data, size_t len, struct opml_feed **out, size_t *n_out,
               struct err *err)
{
    struct walk w = {.a = a, .err = err};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    struct parse_state ps = {0};
    *out = NULL;
    *n_out = 0;
    if (len > OPML_MAX_BYTES) {
        w.rc = err_set(err, ERR_TOO_LARGE, "the OPML document is over %d MiB",
                       OPML_MAX_BYTES / (1024 * 1024));
        goto out;
    }
    if (len == 0) {
        w.rc = err_set(err, ERR_PARSE, "not well-formed XML: the document is empty");
        goto out;
    }
    xmlInitParser();
    ctxt = xmlCreateMemoryParserCtxt(data, (int)len);
    if (!ctxt) {
        w.rc = err_set(err, ERR_NOMEM, "out of memory starting the XML parser");
        goto out;
    }
    xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                XML_PARSE_COMPACT);
    ctxt->sax->internalSubset = refuse_doctype;
    ctxt->sax->serror = first_error;
    ctxt->_private = &ps;
    xmlParseDocument(ctxt);
    doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    if (ps.doctype) {
        w.rc = err_set(err, ERR_PARSE,
                       "an OPML document with a DOCTYPE is not read (no DTD, no entities)");
        goto out;
    }
    if (!ctxt->wellFormed || !doc) {
        w.rc = parse_error(&ps, err);
        goto out;
    }
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || root->ns || !xmlStrEqual(root->name, (const xmlChar *)"opml")) {
        w.rc = err_set(err, ERR_PARSE, "not OPML: the root element is not <opml>");
        goto out;
    }
    for (const xmlNode *n = root->children; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && n->ns == NULL &&
            xmlStrEqual(n->name, (const xmlChar *)"body"))
            walk_outlines(&w, n, 0, NULL);
    }
    if (w.rc == 0) {
        *out = w.feeds;
        *n_out = w.n;
    }
out:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return w.rc;
}

/* ---- writing --------------------------------------------------------------- */

static void put_attr(struct buf *b, const char *name, const char *value)
{
    if (!value || !*value)
        return;
    buf_printf(b, " %s=\"", name);
    xml_attr(b, value, strlen(value));
    buf_putc(b, '"');
}

void opml_write(struct buf *out, const struct feed_record *feeds, size_t n)
{
    buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<opml version=\"2.0\" xmlns:newsd=\"" OPML_NS "\">\n"
                  "  <head>\n    <title>newsd feeds</title>\n  </head>\n  <body>\n");
    for (size_t i = 0; i < n; i++) {
        const struct feed_record *f = &feeds[i];
        const char *label = f->title && *f->title ? f->title : f->url;
        char interval[24];
        snprintf(interval, sizeof interval, "%lld",
                 (long long)(f->interval_s > 0 ? f->interval_s : STORE_FEED_DEFAULT_INTERVAL));
        buf_puts(out, "    <outline type=\"rss\"");
        put_attr(out, "text", label);
        put_attr(out, "title", label);
        put_attr(out, "xmlUrl", f->url);
        put_attr(out, "htmlUrl", f->site_url);
        put_attr(out, "newsd:source", f->source_id);
        put_attr(out, "newsd:country", f->country);
        put_attr(out, "newsd:category", f->category);
        put_attr(out, "newsd:language", f->language);
        put_attr(out, "newsd:headlines", f->headline ? "true" : NULL);
        put_attr(out, "newsd:interval", interval);
        put_attr(out, "newsd:paused", f->enabled ? NULL : "true");
        put_attr(out, "newsd:pages", f->pages);
        buf_puts(out, "/>\n");
    }
    buf_puts(out, "  </body>\n</opml>\n");
}
