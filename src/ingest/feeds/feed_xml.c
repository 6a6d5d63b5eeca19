/* XML feeds (ingest/feeds/feeds.h via feed_internal.h): RSS 0.9x/2.0, RSS 1.0/0.90
 * (RDF) and Atom 1.0/0.3 parsed by libxml2 into a tree, then mapped.
 * Safety rules, all here: recover mode, no network, no DTD loading, no
 * entity substitution by libxml2 (XML_PARSE_NOENT off) and our own text
 * gathering that takes a declared entity's replacement text verbatim, never
 * recursively (libxml2's xmlNodeGetContent/xmlGetProp would expand nested
 * entities: billion laughs), with a byte budget per field and per document.
 * Encoding: HTTP charset > BOM / XML declaration > UTF-8 > ISO-8859-1. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/encoding.h>
#include <libxml/entities.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>

#include "ingest/feeds/feed_internal.h"
#include "ingest/ingest.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/utf8.h"

#include "util/banned.h"

/* Raw bytes gathered for all fields of one document together: bounds the
 * work a document of many references to one big entity can cause. */
#define XML_GATHER_BUDGET (64 * 1024 * 1024)
/* Markup nesting we follow inside one field (libxml2 stops at 256). */
#define XML_GATHER_DEPTH 64
#define XML_ATTR_BYTES (8 * 1024)

#define NS_RDF_HREF "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

enum ns_id {
    NS_NONE = 0, /* no namespace */
    NS_RSS,      /* RSS 1.0 / 0.90 default namespaces */
    NS_ATOM,
    NS_ATOM03,
    NS_CONTENT,
    NS_DC,
    NS_MEDIA,
    NS_ITUNES,
    NS_RDF,
    NS_OTHER,
};

static const struct {
    const char *href;
    const char *prefix; /* conventional prefix, for undeclared ones */
    enum ns_id id;
} namespaces[] = {
    {"http://purl.org/rss/1.0/", NULL, NS_RSS},
    {"http://my.netscape.com/rdf/simple/0.9/", NULL, NS_RSS},
    {"http://channel.netscape.com/rdf/simple/0.9/", NULL, NS_RSS},
    {"http://www.w3.org/2005/Atom", "atom", NS_ATOM},
    {"http://purl.org/atom/ns#", NULL, NS_ATOM03},
    {"http://purl.org/rss/1.0/modules/content/", "content", NS_CONTENT},
    {"http://purl.org/dc/elements/1.1/", "dc", NS_DC},
    {"http://purl.org/dc/terms/", "dcterms", NS_DC},
    {"http://search.yahoo.com/mrss/", "media", NS_MEDIA},
    {"http://search.yahoo.com/mrss", NULL, NS_MEDIA},
    {"http://www.itunes.com/dtds/podcast-1.0.dtd", "itunes", NS_ITUNES},
    {NS_RDF_HREF, "rdf", NS_RDF},
};

struct xctx {
    struct feed_ctx *c;
    xmlDocPtr doc;
    bool atom;              /* Atom elements are "core" (else RSS ones) */
    const xmlChar *root_ns; /* the root's namespace: its elements are core too */
    const char *feed_base;  /* absolute base for relative links, or NULL */
    const char *feed_author;
    size_t gathered; /* raw bytes gathered so far (XML_GATHER_BUDGET) */
};

static enum ns_id ns_of_href(const xmlChar *href)
{
    for (size_t i = 0; i < sizeof namespaces / sizeof namespaces[0]; i++)
        if (strcmp((const char *)href, namespaces[i].href) == 0)
            return namespaces[i].id;
    return NS_OTHER;
}

/* Namespace and local name of an element. An undeclared prefix (recover
 * mode keeps "dc:creator" as the name) maps through the usual prefixes. */
static enum ns_id node_ns(const xmlNode *n, const char **local)
{
    const char *name = (const char *)n->name;
    *local = name;
    if (n->ns && n->ns->href)
        return ns_of_href(n->ns->href);
    const char *colon = strchr(name, ':');
    if (!colon)
        return NS_NONE;
    *local = colon + 1;
    size_t plen = (size_t)(colon - name);
    for (size_t i = 0; i < sizeof namespaces / sizeof namespaces[0]; i++) {
        const char *p = namespaces[i].prefix;
        if (p && strlen(p) == plen && strncmp(name, p, plen) == 0)
            return namespaces[i].id;
    }
    return NS_OTHER;
}

/* Is n the element ns:local? NS_NONE means "the format's own elements":
 * no namespace, or RSS 1.0's, or Atom's, depending on the document. */
static bool is_el(const struct xctx *x, const xmlNode *n, enum ns_id ns, const char *local)
{
    if (!n || n->type != XML_ELEMENT_NODE)
        return false;
    const char *l;
    enum ns_id got = node_ns(n, &l);
    if (strcmp(l, local) != 0)
        return false;
    if (ns != NS_NONE)
        return got == ns;
    if (got == NS_NONE)
        return true;
    if (x->atom && (got == NS_ATOM || got == NS_ATOM03))
        return true;
    if (!x->atom && got == NS_RSS)
        return true;
    /* <rss xmlns="http://backend.userland.com/rss2"> and the like. */
    return got == NS_OTHER && x->root_ns && n->ns && xmlStrEqual(n->ns->href, x->root_ns);
}

static const char *attr(struct xctx *x, const xmlNode *n, const char *name);

/* ---- text gathering -------------------------------------------------------- */

static void put_cp(struct buf *b, uint32_t cp)
{
    char enc[4];
    buf_append(b, enc, utf8_encode(cp, enc));
}

/* An entity reference: a declared internal entity gives its replacement
 * text as written (not expanded further); an undeclared one that HTML knows
 * (feeds use &nbsp; &eacute; without a DTD) gives its character. */
static void gather_entity(struct xctx *x, const xmlNode *n, struct buf *b)
{
    xmlEntityPtr ent = xmlGetDocEntity(x->doc, n->name);
    if (ent && ent->etype == XML_INTERNAL_GENERAL_ENTITY && ent->content) {
        buf_puts(b, (const char *)ent->content);
        return;
    }
    if (ent)
        return; /* external or parameter entity: never loaded */
    const htmlEntityDesc *h = htmlEntityLookup(n->name);
    if (h)
        put_cp(b, h->value);
}

/* Append the text under n. markup: child elements are written back as
 * bare tags ("<p>", "</p>", "<img src=...>") so the HTML converter sees
 * their structure (naked markup in RSS, Atom xhtml). */
static void gather(struct xctx *x, const xmlNode *n, bool markup, struct buf *b, int depth)
{
    for (const xmlNode *ch = n->children; ch && !buf_error(b); ch = ch->next) {
        switch (ch->type) {
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            if (ch->content)
                buf_puts(b, (const char *)ch->content);
            break;
        case XML_ENTITY_REF_NODE:
            gather_entity(x, ch, b);
            break;
        case XML_ELEMENT_NODE:
            if (depth >= XML_GATHER_DEPTH)
                break;
            if (markup) {
                const char *local;
                node_ns(ch, &local);
                buf_printf(b, "<%s", local);
                if (strcasecmp(local, "img") == 0) {
                    const char *src = attr(x, ch, "src");
                    if (src && !strchr(src, '"'))
                        buf_printf(b, " src=\"%s\"", src);
                }
                buf_putc(b, '>');
            }
            gather(x, ch, markup, b, depth + 1);
            if (markup) {
                const char *local;
                node_ns(ch, &local);
                buf_printf(b, "</%s>", local);
            }
            break;
        default:
            break;
        }
    }
}

/* The bounded normalised text of element n (NULL when empty). The raw
 * gathering bound is generous (markup weighs more than its text) but
 * finite; past it the field is cut, never the whole feed dropped. */
static const char *field_text(struct xctx *x, const xmlNode *n, enum feed_text_kind kind,
                              bool markup, size_t max, bool one_line, const char **first_img)
{
    if (!n || x->c->rc < 0 || x->gathered >= XML_GATHER_BUDGET)
        return NULL;
    size_t raw_max = max * 8 + 64 * 1024;
    if (raw_max > XML_GATHER_BUDGET - x->gathered)
        raw_max = XML_GATHER_BUDGET - x->gathered;
    struct buf b;
    buf_init(&b, raw_max);
    gather(x, n, markup, &b, 0);
    if (buf_error(&b) == ERR_NOMEM) {
        x->c->rc = ERR_NOMEM;
        buf_release(&b);
        return NULL;
    }
    x->gathered += b.len;
    const char *s = feed_ctx_text(x->c, b.data, b.len, kind, max, one_line, first_img);
    buf_release(&b);
    return s;
}

/* Text of attribute ns:name (ns NULL: no namespace), entities handled as
 * in gather(), in the arena. NULL when absent, empty or not UTF-8. */
static const char *attr_ns(struct xctx *x, const xmlNode *n, const char *name, const char *ns)
{
    const char *r = NULL;
    xmlAttrPtr a = xmlHasNsProp(n, (const xmlChar *)name, (const xmlChar *)ns);
    if (!a || a->type != XML_ATTRIBUTE_NODE)
        return NULL;
    struct buf b;
    buf_init(&b, XML_ATTR_BYTES);
    for (const xmlNode *ch = a->children; ch && !buf_error(&b); ch = ch->next) {
        if (ch->type == XML_TEXT_NODE && ch->content)
            buf_puts(&b, (const char *)ch->content);
        else if (ch->type == XML_ENTITY_REF_NODE)
            gather_entity(x, ch, &b);
    }
    if (!buf_error(&b) && b.len > 0 && utf8_valid(b.data, b.len)) {
        r = arena_strndup(x->c->a, b.data, b.len);
        if (!r)
            x->c->rc = ERR_NOMEM;
    }
    buf_release(&b);
    return r;
}

static const char *attr(struct xctx *x, const xmlNode *n, const char *name)
{
    return attr_ns(x, n, name, NULL);
}

/* The absolute base URL in effect at n: the xml:base attributes of n and
 * its ancestors resolved outermost first against fallback, or fallback. */
static const char *node_base(struct xctx *x, const xmlNode *n, const char *fallback)
{
    const xmlNode *chain[XML_GATHER_DEPTH];
    size_t depth = 0;
    for (const xmlNode *p = n; p && p->type == XML_ELEMENT_NODE && depth < XML_GATHER_DEPTH;
         p = p->parent)
        if (xmlHasNsProp(p, (const xmlChar *)"base", XML_XML_NAMESPACE))
            chain[depth++] = p;
    const char *base = fallback;
    while (depth > 0) {
        const char *v = attr_ns(x, chain[--depth], "base", (const char *)XML_XML_NAMESPACE);
        const char *u = v ? feed_ctx_url(x->c, v, strlen(v), base) : NULL;
        if (u)
            base = u;
    }
    return base;
}

/* xml:lang in effect at n (n or an ancestor), or NULL. */
static const char *node_lang(struct xctx *x, const xmlNode *n)
{
    for (int depth = 0; n && n->type == XML_ELEMENT_NODE && depth < XML_GATHER_DEPTH;
         n = n->parent, depth++) {
        const char *v = attr_ns(x, n, "lang", (const char *)XML_XML_NAMESPACE);
        if (v)
            return feed_ctx_text(x->c, v, strlen(v), FEED_TEXT_PLAIN, FEED_MAX_NAME_BYTES, true,
                                 NULL);
    }
    return NULL;
}

/* URL in the text of element n. */
static const char *field_url(struct xctx *x, const xmlNode *n, const char *base)
{
    if (!n)
        return NULL;
    struct buf b;
    buf_init(&b, FEED_MAX_URL_BYTES + 1);
    gather(x, n, false, &b, XML_GATHER_DEPTH);
    const char *u = NULL;
    if (!buf_error(&b) && b.len)
        u = feed_ctx_url(x->c, b.data, b.len, node_base(x, n, base));
    buf_release(&b);
    return u;
}

static const char *attr_url(struct xctx *x, const xmlNode *n, const char *name, const char *base)
{
    const char *v = attr(x, n, name);
    return v ? feed_ctx_url(x->c, v, strlen(v), node_base(x, n, base)) : NULL;
}

static bool field_date(struct xctx *x, const xmlNode *n, int64_t *out)
{
    if (!n)
        return false;
    struct buf b;
    buf_init(&b, 256);
    gather(x, n, false, &b, XML_GATHER_DEPTH);
    bool ok = !buf_error(&b) && ingest_date_parse(b.data, b.len, out);
    buf_release(&b);
    return ok;
}

/* ---- images ------------------------------------------------------------------ */

enum img_rank {
    IMG_NONE = 0,
    IMG_ITUNES,
    IMG_THUMBNAIL,
    IMG_ENCLOSURE,
    IMG_MEDIA_CONTENT, /* best: the publisher's main picture */
};

struct img {
    const xmlNode *node;
    const char *attr;
    enum img_rank rank;
    long width; /* width="" of the chosen one, 0 when unknown */
};

/* Keep the best image: higher rank, then (Guardian-style lists of one
 * picture in several sizes) the wider one. */
static void img_offer(struct xctx *x, struct img *img, const xmlNode *n, const char *attr_name,
                      enum img_rank rank)
{
    const char *w = attr(x, n, "width");
    long width = w ? strtol(w, NULL, 10) : 0;
    if (width < 0)
        width = 0;
    if (rank > img->rank || (rank == img->rank && width > img->width)) {
        img->node = n;
        img->attr = attr_name;
        img->rank = rank;
        img->width = width;
    }
}

/* An enclosure-like element (RSS enclosure, media:content, Atom link
 * rel=enclosure) that points at an image. */
static bool is_image_ref(struct xctx *x, const xmlNode *n, const char *url_attr)
{
    const char *type = attr(x, n, "type");
    const char *medium = attr(x, n, "medium");
    if (medium)
        return strcasecmp(medium, "image") == 0;
    if (type)
        return strncasecmp(type, "image/", 6) == 0;
    const char *url = attr(x, n, url_attr);
    return url && feed_url_is_image(url);
}

/* media:content / media:thumbnail / media:group, in an item or entry. */
static void media_offer(struct xctx *x, const xmlNode *e, struct img *img)
{
    if (is_el(x, e, NS_MEDIA, "content")) {
        if (is_image_ref(x, e, "url"))
            img_offer(x, img, e, "url", IMG_MEDIA_CONTENT);
        /* A video's own thumbnail is still a picture of the article. */
        for (const xmlNode *t = e->children; t; t = t->next)
            if (is_el(x, t, NS_MEDIA, "thumbnail"))
                img_offer(x, img, t, "url", IMG_THUMBNAIL);
    } else if (is_el(x, e, NS_MEDIA, "thumbnail")) {
        img_offer(x, img, e, "url", IMG_THUMBNAIL);
    } else if (is_el(x, e, NS_MEDIA, "group")) {
        for (const xmlNode *g = e->children; g; g = g->next)
            media_offer(x, g, img);
    } else if (is_el(x, e, NS_ITUNES, "image")) {
        img_offer(x, img, e, "href", IMG_ITUNES);
    }
}

/* ---- RSS and RDF -------------------------------------------------------------- */

/* Past FEED_MAX_ITEMS an item is counted without being read: true then. */
static bool item_dropped(struct xctx *x)
{
    if (x->c->out->n_items < FEED_MAX_ITEMS)
        return false;
    x->c->out->n_dropped++;
    return true;
}

/* The first image inside an item's text (url, filled by field_text) and
 * the element whose text has it (in: its base resolves the url). */
struct inline_img {
    const char *url;
    const xmlNode *in;
};

/* After element n's text was read: n has the image when it is the first. */
static void inline_img_note(struct inline_img *ii, const xmlNode *n)
{
    if (ii->url && !ii->in)
        ii->in = n;
}

/* An item's last steps, RSS's and Atom's alike: the first of its dates
 * that parses (dates[0..n) by preference), the best image offered by its
 * media elements, and feed_ctx_item_finish with its inline image. */
static void item_close(struct xctx *x, struct feed_item *it, const xmlNode *const *dates, size_t n,
                       const struct img *img, const char *base, const struct inline_img *ii)
{
    for (size_t i = 0; i < n && !it->has_date; i++)
        it->has_date = field_date(x, dates[i], &it->published_at);
    if (img->rank)
        it->image_url = attr_url(x, img->node, img->attr, base);
    feed_ctx_item_finish(x->c, it, ii->url, ii->in ? node_base(x, ii->in, base) : base);
}

static void rss_item(struct xctx *x, const xmlNode *item)
{
    if (item_dropped(x))
        return;
    const xmlNode *title = NULL, *link = NULL, *guid = NULL, *desc = NULL, *content = NULL,
                  *author = NULL;
    const xmlNode *d_pub = NULL, *d_dc = NULL, *d_pubd = NULL, *d_upd = NULL;
    const char *creators = NULL;
    struct img img = {0};
    struct feed_ctx *c = x->c;

    for (const xmlNode *e = item->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE)
            continue;
        if (is_el(x, e, NS_NONE, "title") && !title)
            title = e;
        else if (is_el(x, e, NS_NONE, "link") && !link)
            link = e;
        else if (is_el(x, e, NS_NONE, "guid") && !guid)
            guid = e;
        else if (is_el(x, e, NS_NONE, "description") && !desc)
            desc = e;
        else if (is_el(x, e, NS_CONTENT, "encoded") && !content)
            content = e;
        else if (is_el(x, e, NS_NONE, "author") && !author)
            author = e;
        else if (is_el(x, e, NS_DC, "creator") || is_el(x, e, NS_DC, "author"))
            creators = feed_ctx_join(
                c, creators,
                field_text(x, e, FEED_TEXT_HTML, false, FEED_MAX_NAME_BYTES, true, NULL));
        else if (is_el(x, e, NS_NONE, "pubDate") && !d_pub)
            d_pub = e;
        else if (is_el(x, e, NS_DC, "date") && !d_dc)
            d_dc = e;
        else if (is_el(x, e, NS_ATOM, "published") && !d_pubd)
            d_pubd = e;
        else if ((is_el(x, e, NS_ATOM, "updated") || is_el(x, e, NS_DC, "modified")) && !d_upd)
            d_upd = e;
        else if (is_el(x, e, NS_NONE, "enclosure") && is_image_ref(x, e, "url"))
            img_offer(x, &img, e, "url", IMG_ENCLOSURE);
        else
            media_offer(x, e, &img);
    }

    struct feed_item *it = feed_ctx_item_add(c);
    if (!it)
        return;
    const char *base = node_base(x, item, x->feed_base);
    struct inline_img ii = {0};
    it->title = field_text(x, title, FEED_TEXT_HTML, true, FEED_MAX_TITLE_BYTES, true, NULL);
    it->description =
        field_text(x, desc, FEED_TEXT_HTML, true, FEED_MAX_DESCRIPTION_BYTES, true, &ii.url);
    inline_img_note(&ii, desc);
    it->content =
        field_text(x, content, FEED_TEXT_HTML, true, FEED_MAX_CONTENT_BYTES, false, &ii.url);
    inline_img_note(&ii, content);
    it->guid = field_text(x, guid, FEED_TEXT_PLAIN, false, FEED_MAX_GUID_BYTES, true, NULL);
    const char *about = attr_ns(x, item, "about", NS_RDF_HREF);
    if (!it->guid && about)
        it->guid = feed_ctx_text(c, about, strlen(about), FEED_TEXT_PLAIN, FEED_MAX_GUID_BYTES,
                                 true, NULL);
    it->link = field_url(x, link, base);
    if (!it->link && guid) {
        /* A guid is the permalink unless it says otherwise. */
        const char *perma = attr(x, guid, "isPermaLink");
        if (!perma || strcasecmp(perma, "false") != 0)
            it->link = field_url(x, guid, base);
    }
    if (!it->link && about)
        it->link = feed_ctx_url(c, about, strlen(about), base);
    if (creators)
        it->author = creators;
    else if (author) {
        struct buf b;
        buf_init(&b, FEED_MAX_NAME_BYTES * 4);
        gather(x, author, false, &b, XML_GATHER_DEPTH);
        if (b.len)
            it->author = feed_ctx_author(c, b.data, b.len);
        buf_release(&b);
    }
    const xmlNode *dates[] = {d_pub, d_dc, d_pubd, d_upd};
    item_close(x, it, dates, sizeof dates / sizeof dates[0], &img, base, &ii);
}

static int rss_parse(struct xctx *x, const xmlNode *root)
{
    struct feed *f = x->c->out;
    const xmlNode *channel = NULL;
    for (const xmlNode *e = root->children; e && !channel; e = e->next)
        if (is_el(x, e, NS_NONE, "channel"))
            channel = e;

    x->feed_base = x->c->base_url;
    if (channel) {
        const xmlNode *title = NULL, *link = NULL, *lang = NULL;
        for (const xmlNode *e = channel->children; e; e = e->next) {
            if (is_el(x, e, NS_NONE, "title") && !title)
                title = e;
            else if (is_el(x, e, NS_NONE, "link") && !link)
                link = e;
            else if ((is_el(x, e, NS_NONE, "language") || is_el(x, e, NS_DC, "language")) && !lang)
                lang = e;
        }
        f->title = field_text(x, title, FEED_TEXT_HTML, true, FEED_MAX_TITLE_BYTES, true, NULL);
        f->language = field_text(x, lang, FEED_TEXT_PLAIN, false, FEED_MAX_NAME_BYTES, true, NULL);
        if (!f->language)
            f->language = node_lang(x, channel);
        const char *cbase = node_base(x, channel, x->c->base_url);
        f->link = field_url(x, link, cbase);
        /* Relative item links are relative to the site more often than to
         * wherever the feed happens to be served from. */
        x->feed_base = f->link ? f->link : cbase;
        /* RSS 2.0 keeps items in the channel... */
        for (const xmlNode *e = channel->children; e && x->c->rc == 0; e = e->next)
            if (is_el(x, e, NS_NONE, "item"))
                rss_item(x, e);
    }
    /* ... RSS 0.90 and 1.0 next to it. */
    for (const xmlNode *e = root->children; e && x->c->rc == 0; e = e->next)
        if (is_el(x, e, NS_NONE, "item"))
            rss_item(x, e);
    return 0;
}

/* ---- Atom -------------------------------------------------------------------- */

/* Kind of an Atom text construct (1.0 type=, 0.3 type= and mode=). */
static enum feed_text_kind atom_kind(struct xctx *x, const xmlNode *n, bool *markup)
{
    const char *type = attr(x, n, "type");
    const char *mode = attr(x, n, "mode");
    *markup = false;
    if (type &&
        (strcasecmp(type, "xhtml") == 0 || strcasecmp(type, "application/xhtml+xml") == 0)) {
        *markup = true;
        return FEED_TEXT_HTML;
    }
    if (mode && strcasecmp(mode, "escaped") == 0)
        return FEED_TEXT_HTML;
    if (type && (strcasecmp(type, "html") == 0 || strcasecmp(type, "text/html") == 0))
        return FEED_TEXT_HTML;
    if (mode && strcasecmp(mode, "xml") == 0) {
        *markup = true;
        return FEED_TEXT_HTML;
    }
    return FEED_TEXT_PLAIN;
}

static const char *atom_text(struct xctx *x, const xmlNode *n, size_t max, bool one_line,
                             const char **first_img)
{
    if (!n)
        return NULL;
    bool markup;
    enum feed_text_kind kind = atom_kind(x, n, &markup);
    return field_text(x, n, kind, markup, max, one_line, first_img);
}

/* rel="alternate" or no rel: the page this entry or feed stands for. */
static bool atom_link_is_alternate(struct xctx *x, const xmlNode *n)
{
    const char *rel = attr(x, n, "rel");
    return !rel || strcasecmp(rel, "alternate") == 0 ||
           strcasecmp(rel, "http://www.iana.org/assignments/relation/alternate") == 0;
}

/* Names of the <author> elements among n's children, ", "-joined. */
static const char *atom_authors(struct xctx *x, const xmlNode *n)
{
    const char *names = NULL;
    for (const xmlNode *e = n->children; e; e = e->next) {
        if (!is_el(x, e, NS_NONE, "author"))
            continue;
        for (const xmlNode *a = e->children; a; a = a->next)
            if (is_el(x, a, NS_NONE, "name"))
                names = feed_ctx_join(
                    x->c, names,
                    field_text(x, a, FEED_TEXT_PLAIN, false, FEED_MAX_NAME_BYTES, true, NULL));
    }
    return names;
}

static void atom_entry(struct xctx *x, const xmlNode *entry)
{
    if (item_dropped(x))
        return;
    const xmlNode *title = NULL, *link = NULL, *id = NULL, *summary = NULL, *content = NULL;
    const xmlNode *d_pub = NULL, *d_upd = NULL, *d_dc = NULL;
    struct img img = {0};
    struct feed_ctx *c = x->c;

    for (const xmlNode *e = entry->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE)
            continue;
        if (is_el(x, e, NS_NONE, "title") && !title)
            title = e;
        else if (is_el(x, e, NS_NONE, "link")) {
            if (!link && atom_link_is_alternate(x, e))
                link = e;
            else {
                const char *rel = attr(x, e, "rel");
                if (rel && strcasecmp(rel, "enclosure") == 0 && is_image_ref(x, e, "href"))
                    img_offer(x, &img, e, "href", IMG_ENCLOSURE);
            }
        } else if (is_el(x, e, NS_NONE, "id") && !id)
            id = e;
        else if (is_el(x, e, NS_NONE, "summary") && !summary)
            summary = e;
        else if (is_el(x, e, NS_NONE, "content") && !content)
            content = e;
        else if ((is_el(x, e, NS_NONE, "published") || is_el(x, e, NS_NONE, "issued") ||
                  is_el(x, e, NS_NONE, "created")) &&
                 !d_pub)
            d_pub = e;
        else if ((is_el(x, e, NS_NONE, "updated") || is_el(x, e, NS_NONE, "modified")) && !d_upd)
            d_upd = e;
        else if (is_el(x, e, NS_DC, "date") && !d_dc)
            d_dc = e;
        else
            media_offer(x, e, &img);
    }

    struct feed_item *it = feed_ctx_item_add(c);
    if (!it)
        return;
    const char *base = node_base(x, entry, x->feed_base);
    struct inline_img ii = {0};
    it->title = atom_text(x, title, FEED_MAX_TITLE_BYTES, true, NULL);
    it->description = atom_text(x, summary, FEED_MAX_DESCRIPTION_BYTES, true, &ii.url);
    inline_img_note(&ii, summary);
    /* Content by reference (src=) has no text of its own. */
    if (content && !xmlHasNsProp(content, (const xmlChar *)"src", NULL)) {
        it->content = atom_text(x, content, FEED_MAX_CONTENT_BYTES, false, &ii.url);
        inline_img_note(&ii, content);
    }
    it->guid = field_text(x, id, FEED_TEXT_PLAIN, false, FEED_MAX_GUID_BYTES, true, NULL);
    if (link)
        it->link = attr_url(x, link, "href", base);
    if (!it->link && it->guid && strncasecmp(it->guid, "http", 4) == 0)
        it->link = feed_ctx_url(c, it->guid, strlen(it->guid), base);
    it->author = atom_authors(x, entry);
    if (!it->author)
        it->author = x->feed_author;
    const xmlNode *dates[] = {d_pub, d_upd, d_dc};
    item_close(x, it, dates, sizeof dates / sizeof dates[0], &img, base, &ii);
}

static int atom_parse(struct xctx *x, const xmlNode *root)
{
    struct feed *f = x->c->out;
    const xmlNode *title = NULL, *link = NULL;
    for (const xmlNode *e = root->children; e; e = e->next) {
        if (is_el(x, e, NS_NONE, "title") && !title)
            title = e;
        else if (is_el(x, e, NS_NONE, "link") && !link && atom_link_is_alternate(x, e))
            link = e;
    }
    f->title = atom_text(x, title, FEED_MAX_TITLE_BYTES, true, NULL);
    const char *rbase = node_base(x, root, x->c->base_url);
    f->link = link ? attr_url(x, link, "href", rbase) : NULL;
    x->feed_base = rbase;
    f->language = node_lang(x, root);
    x->feed_author = atom_authors(x, root);
    for (const xmlNode *e = root->children; e && x->c->rc == 0; e = e->next)
        if (is_el(x, e, NS_NONE, "entry"))
            atom_entry(x, e);
    return 0;
}

/* ---- libxml2 with our SAX hooks -------------------------------------------------------
 * Two libxml2 (2.9) recover-mode behaviours are worked around here:
 *   - after the first well-formedness error every entity reference, &amp;
 *     included, is silently dropped (xmlParseReference checks wellFormed):
 *     the element and text callbacks note the error and clear the flag;
 *   - HTML entities (&nbsp; &eacute;) without a DTD are errors: getEntity
 *     answers them like the predefined ones, from htmlEntityLookup. */

#define XML_HTML_ENTITIES_MAX 64

struct parse_state {
    bool errors; /* some error was forgiven */
    xmlEntityPtr html[XML_HTML_ENTITIES_MAX];
    size_t n_html;
    startElementNsSAX2Func start;
    endElementNsSAX2Func end;
    charactersSAXFunc characters;
    cdataBlockSAXFunc cdata;
    getEntitySAXFunc get_entity;
};

static struct parse_state *forgive(void *ctx)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct parse_state *ps = ctxt->_private;
    if (!ctxt->wellFormed) {
        ps->errors = true;
        ctxt->wellFormed = 1;
    }
    return ps;
}

static void hook_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                       const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                       int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    forgive(ctx)->start(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                        nb_defaulted, attributes);
}

static void hook_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
    forgive(ctx)->end(ctx, localname, prefix, uri);
}

static void hook_characters(void *ctx, const xmlChar *ch, int len)
{
    forgive(ctx)->characters(ctx, ch, len);
}

static void hook_cdata(void *ctx, const xmlChar *value, int len)
{
    forgive(ctx)->cdata(ctx, value, len);
}

static xmlEntityPtr hook_get_entity(void *ctx, const xmlChar *name)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct parse_state *ps = ctxt->_private;
    xmlEntityPtr ent = ps->get_entity(ctx, name);
    if (ent || ctxt->inSubset)
        return ent;
    const htmlEntityDesc *h = htmlEntityLookup(name);
    if (!h)
        return NULL;
    for (size_t i = 0; i < ps->n_html; i++)
        if (xmlStrEqual(ps->html[i]->name, name))
            return ps->html[i];
    if (ps->n_html == XML_HTML_ENTITIES_MAX)
        return NULL;
    ent = calloc(1, sizeof *ent);
    struct buf b;
    buf_init(&b, 8);
    put_cp(&b, h->value);
    if (!ent || buf_error(&b)) {
        free(ent);
        buf_release(&b);
        return NULL;
    }
    size_t n = 0;
    ent->type = XML_ENTITY_DECL;
    ent->etype = XML_INTERNAL_PREDEFINED_ENTITY;
    ent->name = (const xmlChar *)h->name; /* libxml2's static table */
    ent->content = (xmlChar *)buf_detach(&b, &n);
    ent->length = (int)n;
    ps->html[ps->n_html++] = ent;
    return ent;
}

static void parse_state_release(struct parse_state *ps)
{
    for (size_t i = 0; i < ps->n_html; i++) {
        free(ps->html[i]->content);
        free(ps->html[i]);
    }
    ps->n_html = 0;
}

/* Parse with libxml2 (recover mode, no network, no DTD, no entity
 * substitution); *ctxt_out keeps the error state for the caller. */
static xmlDocPtr read_doc(const char *body, size_t len, const char *encoding,
                          struct parse_state *ps, xmlParserCtxtPtr *ctxt_out)
{
    int options = XML_PARSE_RECOVER | XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                  XML_PARSE_COMPACT;
    if (encoding)
        options |= XML_PARSE_IGNORE_ENC;
    xmlParserCtxtPtr ctxt = xmlCreateMemoryParserCtxt(body, (int)len);
    *ctxt_out = ctxt;
    if (!ctxt)
        return NULL;
    xmlCtxtUseOptions(ctxt, options);
    if (encoding) {
        xmlCharEncodingHandlerPtr h = xmlFindCharEncodingHandler(encoding);
        if (h)
            xmlSwitchToEncoding(ctxt, h);
    }
    xmlSAXHandlerPtr sax = ctxt->sax;
    ps->start = sax->startElementNs;
    ps->end = sax->endElementNs;
    ps->characters = sax->characters;
    ps->cdata = sax->cdataBlock;
    ps->get_entity = sax->getEntity;
    if (!ps->start || !ps->end || !ps->characters || !ps->cdata || !ps->get_entity)
        return NULL; /* not libxml2's SAX2 defaults: leave it alone */
    sax->startElementNs = hook_start;
    sax->endElementNs = hook_end;
    sax->characters = hook_characters;
    sax->cdataBlock = hook_cdata;
    sax->getEntity = hook_get_entity;
    ctxt->_private = ps;
    xmlParseDocument(ctxt);
    xmlDocPtr doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    if (!ctxt->wellFormed)
        ps->errors = true;
    return doc;
}

int feed_xml_parse(struct feed_ctx *c, const char *body, size_t len, const char *charset)
{
    int rc = 0;
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    char *escaped = NULL;
    struct parse_state ps;
    memset(&ps, 0, sizeof ps);
    xmlInitParser();

    feed_xml_skip_prolog_blanks(&body, &len);
    if (feed_xml_ascii_compatible(body, len, charset)) {
        size_t elen = 0;
        rc = feed_xml_amp_escape(body, len, &escaped, &elen);
        if (rc < 0) {
            rc = err_set(c->err, rc, "out of memory escaping the feed");
            goto out;
        }
        if (escaped) {
            body = escaped;
            len = elen;
        }
    }
    if (len > INT32_MAX) {
        rc = err_set(c->err, ERR_TOO_LARGE, "feed body too large");
        goto out;
    }

    const char *encoding = feed_xml_choose_encoding(body, len, charset);
    doc = read_doc(body, len, encoding, &ps, &ctxt);
    if (!ctxt) {
        rc = err_set(c->err, ERR_NOMEM, "out of memory starting the XML parser");
        goto out;
    }
    if ((!doc || !xmlDocGetRootElement(doc)) && !encoding &&
        feed_xml_decl_has_encoding(body, len)) {
        /* An encoding libxml2 does not know ("bogus"): read the bytes as
         * what they look like instead of giving up. */
        xmlFreeDoc(doc);
        doc = NULL;
        xmlFreeParserCtxt(ctxt);
        parse_state_release(&ps);
        memset(&ps, 0, sizeof ps);
        encoding = utf8_valid(body, len) ? "UTF-8" : "ISO-8859-1";
        doc = read_doc(body, len, encoding, &ps, &ctxt);
        if (!ctxt) {
            rc = err_set(c->err, ERR_NOMEM, "out of memory starting the XML parser");
            goto out;
        }
    }
    xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!root) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        if (e && e->message) {
            size_t n = strcspn(e->message, "\r\n");
            rc = err_set(c->err, ERR_PARSE, "malformed XML, line %d: %.*s", e->line, (int)n,
                         e->message);
        } else {
            rc = err_set(c->err, ERR_PARSE, "malformed XML: no root element");
        }
        goto out;
    }

    struct xctx x = {.c = c, .doc = doc};
    const char *local;
    enum ns_id ns = node_ns(root, &local);
    c->out->recovered = ps.errors || escaped != NULL || !ctxt->nsWellFormed;
    if (ns == NS_OTHER && root->ns)
        x.root_ns = root->ns->href;
    if (strcmp(local, "rss") == 0 && (ns == NS_NONE || ns == NS_RSS || ns == NS_OTHER)) {
        c->out->format = FEED_FORMAT_RSS;
        rc = rss_parse(&x, root);
    } else if (strcmp(local, "RDF") == 0 && (ns == NS_RDF || ns == NS_NONE)) {
        c->out->format = FEED_FORMAT_RDF;
        rc = rss_parse(&x, root);
    } else if (strcmp(local, "feed") == 0 && (ns == NS_ATOM || ns == NS_ATOM03 || ns == NS_NONE)) {
        c->out->format = FEED_FORMAT_ATOM;
        x.atom = true;
        rc = atom_parse(&x, root);
    } else {
        rc = err_set(c->err, ERR_PARSE, "not a feed: root element <%.64s>",
                     (const char *)root->name);
    }
out:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    parse_state_release(&ps);
    free(escaped);
    return rc;
}
