/* Search results as RSS 2.0, Atom 1.0 or JSON Feed 1.1 (api/feed.h).
 *
 * What each carries of an article, and why:
 * - the article's URL is its link and its id (RSS guid isPermaLink, Atom
 *   id, JSON Feed id): what a reader dedupes on, as newsd itself does;
 * - title, publishedAt (RSS pubDate in RFC 822 form, Atom published and
 *   updated, JSON Feed date_published), description as the summary;
 * - the author: RSS's own <author> must be an e-mail address, so the name
 *   goes in dc:creator (what feedparser and readers read); Atom and JSON
 *   Feed take a name;
 * - the image: an RSS enclosure (its length unknown: 0, which RSS
 *   readers accept) and media:content, an Atom enclosure link, JSON Feed's
 *   image;
 * - the source: RSS <source> (the name, the article site's root as its
 *   address), Atom <source> with its title, JSON Feed's _newsd extension.
 * An Atom feed has a feed-level author ("newsd") so that an entry without
 * one is still valid (RFC 4287 §4.1.1). */
#include "api/feed.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/jw.h"
#include "util/timefmt.h"
#include "util/url.h"
#include "util/xml.h"

#include "util/banned.h"

/* Each format by enum api_feed_format: its format= value and its
 * Content-Type. */
static const struct {
    const char *name, *content_type;
} formats[] = {
    [API_FEED_NONE] = {"json", "application/json; charset=utf-8"},
    [API_FEED_RSS] = {"rss", "application/rss+xml; charset=utf-8"},
    [API_FEED_ATOM] = {"atom", "application/atom+xml; charset=utf-8"},
    [API_FEED_JSONFEED] = {"jsonfeed", "application/feed+json; charset=utf-8"},
};

#define N_FORMATS (sizeof formats / sizeof formats[0])

int api_feed_format_of(const char *value)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(value, formats[i].name))
            return (int)i;
    return -1;
}

const char *api_feed_content_type(enum api_feed_format f)
{
    return formats[(size_t)f < N_FORMATS ? (size_t)f : API_FEED_NONE].content_type;
}

/* One article of the page, as views into its parsed JSON. */
struct item {
    json_t *obj;
    const char *title, *url, *description, *content, *author, *image;
    const char *source_id, *source_name;
    int64_t published;
};

static const char *str_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : NULL;
}

static int item_read(struct item *it, const struct index_doc *d)
{
    memset(it, 0, sizeof *it);
    it->obj = json_loadb(d->json, d->len, 0, NULL);
    if (!json_is_object(it->obj))
        return ERR_PARSE;
    it->title = str_of(it->obj, "title");
    it->url = str_of(it->obj, "url");
    it->description = str_of(it->obj, "description");
    it->content = str_of(it->obj, "content");
    it->author = str_of(it->obj, "author");
    it->image = str_of(it->obj, "urlToImage");
    json_t *src = json_object_get(it->obj, "source");
    it->source_id = str_of(src, "id");
    it->source_name = str_of(src, "name");
    const char *at = str_of(it->obj, "publishedAt");
    if (!it->url || !at || timefmt_parse_iso8601(at, strlen(at), &it->published, NULL) < 0)
        return ERR_PARSE;
    return 0;
}

/* An image's media type, from its path's extension (JPEG when it says
 * nothing: most news images are). */
static const char *image_type(const char *url)
{
    struct url_parts p;
    url_split(url, strlen(url), &p);
    static const struct {
        const char *ext, *type;
    } types[] = {{".png", "image/png"},
                 {".gif", "image/gif"},
                 {".webp", "image/webp"},
                 {".avif", "image/avif"},
                 {".svg", "image/svg+xml"}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = strlen(types[i].ext);
        if (p.path_len >= n && !strncasecmp(p.path + p.path_len - n, types[i].ext, n))
            return types[i].type;
    }
    return "image/jpeg";
}

/* scheme://authority/ of an article's URL, for its source's address. */
static void site_of(struct buf *b, const char *url)
{
    struct url_parts p;
    url_split(url, strlen(url), &p);
    if (!p.scheme || !p.authority)
        return;
    buf_append(b, p.scheme, p.scheme_len);
    buf_puts(b, "://");
    buf_append(b, p.authority, p.authority_len);
    buf_putc(b, '/');
}

static void xml_elem(struct buf *b, const char *name, const char *text)
{
    if (!text)
        return;
    buf_printf(b, "<%s>", name);
    xml_text(b, text, strlen(text));
    buf_printf(b, "</%s>", name);
}

static void xml_attr_s(struct buf *b, const char *name, const char *value)
{
    buf_printf(b, " %s=\"", name);
    xml_attr(b, value, strlen(value));
    buf_putc(b, '"');
}

/* text (NULL: none) between open and close: an element whose start tag
 * carries fixed attributes or text (xml_elem's has only its name). */
static void xml_text_in(struct buf *b, const char *open, const char *text, const char *close)
{
    buf_puts(b, open);
    if (text)
        xml_text(b, text, strlen(text));
    buf_puts(b, close);
}

/* <outer><inner>text</inner></outer>, none when text is NULL. */
static void xml_elem_in(struct buf *b, const char *outer, const char *inner, const char *text)
{
    if (!text)
        return;
    buf_printf(b, "<%s>", outer);
    xml_elem(b, inner, text);
    buf_printf(b, "</%s>", outer);
}

/* An empty element, the start of its tag open (its name and fixed
 * attributes), its address href: the links of RSS and Atom. */
static void xml_link(struct buf *b, const char *open, const char *href)
{
    buf_puts(b, open);
    xml_attr_s(b, "href", href);
    buf_puts(b, "/>");
}

/* ---- RSS 2.0 ------------------------------------------------------------------ */

static void rss_item(struct buf *b, const struct item *it)
{
    char date[TIMEFMT_HTTP_LEN];
    buf_puts(b, "<item>");
    xml_elem(b, "title", it->title);
    xml_elem(b, "link", it->url);
    xml_text_in(b, "<guid isPermaLink=\"true\">", it->url, "</guid>");
    timefmt_http(it->published, date);
    xml_elem(b, "pubDate", date);
    xml_elem(b, "dc:creator", it->author);
    xml_elem(b, "description", it->description);
    if (it->source_name) {
        struct buf site = BUF_INIT;
        site_of(&site, it->url);
        buf_putc(&site, '\0');
        buf_puts(b, "<source");
        xml_attr_s(b, "url", buf_error(&site) || site.len < 2 ? it->url : site.data);
        buf_putc(b, '>');
        xml_text(b, it->source_name, strlen(it->source_name));
        buf_puts(b, "</source>");
        buf_release(&site);
    }
    if (it->image) {
        buf_puts(b, "<enclosure");
        xml_attr_s(b, "url", it->image);
        buf_puts(b, " length=\"0\"");
        xml_attr_s(b, "type", image_type(it->image));
        buf_puts(b, "/><media:content");
        xml_attr_s(b, "url", it->image);
        buf_puts(b, " medium=\"image\"/>");
    }
    buf_puts(b, "</item>\n");
}

static void rss_render(struct buf *b, const struct api_feed_meta *m, const struct item *items,
                       size_t n, int64_t updated)
{
    char date[TIMEFMT_HTTP_LEN];
    buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\" "
                "xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
                "xmlns:media=\"http://search.yahoo.com/mrss/\">\n<channel>");
    xml_elem(b, "title", m->title);
    xml_elem(b, "link", m->home_url);
    xml_elem(b, "description", m->title);
    xml_link(b, "<atom:link rel=\"self\" type=\"application/rss+xml\"", m->self_url);
    if (updated) {
        timefmt_http(updated, date);
        xml_elem(b, "lastBuildDate", date);
    }
    xml_text_in(b, "<generator>newsd ", m->version, "</generator>\n");
    for (size_t i = 0; i < n; i++)
        rss_item(b, &items[i]);
    buf_puts(b, "</channel>\n</rss>\n");
}

/* ---- Atom 1.0 ----------------------------------------------------------------- */

static void atom_entry(struct buf *b, const struct item *it)
{
    char date[TIMEFMT_ISO_LEN];
    timefmt_iso8601(it->published, date);
    buf_puts(b, "<entry>");
    xml_elem(b, "id", it->url);
    xml_text_in(b, "<title type=\"text\">", it->title, "</title>");
    xml_link(b, "<link rel=\"alternate\" type=\"text/html\"", it->url);
    xml_elem(b, "published", date);
    xml_elem(b, "updated", date);
    xml_elem_in(b, "author", "name", it->author);
    if (it->description)
        xml_text_in(b, "<summary type=\"text\">", it->description, "</summary>");
    if (it->content)
        xml_text_in(b, "<content type=\"text\">", it->content, "</content>");
    if (it->image) {
        buf_puts(b, "<link rel=\"enclosure\"");
        xml_attr_s(b, "type", image_type(it->image));
        xml_attr_s(b, "href", it->image);
        buf_puts(b, "/>");
    }
    xml_elem_in(b, "source", "title", it->source_name);
    buf_puts(b, "</entry>\n");
}

static void atom_render(struct buf *b, const struct api_feed_meta *m, const struct item *items,
                        size_t n, int64_t updated)
{
    char date[TIMEFMT_ISO_LEN];
    buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<feed xmlns=\"http://www.w3.org/2005/Atom\">");
    xml_elem(b, "id", m->self_url);
    xml_text_in(b, "<title type=\"text\">", m->title, "</title>");
    timefmt_iso8601(updated, date);
    xml_elem(b, "updated", date);
    xml_link(b, "<link rel=\"self\" type=\"application/atom+xml\"", m->self_url);
    xml_link(b, "<link rel=\"alternate\" type=\"text/html\"", m->home_url);
    buf_puts(b, "<author><name>newsd</name></author><generator");
    xml_attr_s(b, "version", m->version);
    buf_puts(b, ">newsd</generator>\n");
    for (size_t i = 0; i < n; i++)
        atom_entry(b, &items[i]);
    buf_puts(b, "</feed>\n");
}

/* ---- JSON Feed 1.1 ------------------------------------------------------------ */

static void jw_opt(struct jw *w, const char *key, const char *value)
{
    if (!value)
        return;
    jw_key(w, key);
    jw_str(w, value);
}

static void jsonfeed_item(struct jw *w, const struct item *it)
{
    char date[TIMEFMT_ISO_LEN];
    timefmt_iso8601(it->published, date);
    jw_obj_begin(w);
    jw_opt(w, "id", it->url);
    jw_opt(w, "url", it->url);
    jw_opt(w, "title", it->title);
    jw_opt(w, "summary", it->description);
    /* content_text is required when content_html is absent (JSON Feed 1.1). */
    jw_key(w, "content_text");
    jw_str(w, it->content ? it->content : it->description ? it->description : "");
    jw_opt(w, "image", it->image);
    jw_opt(w, "date_published", date);
    if (it->author) {
        jw_key(w, "authors");
        jw_arr_begin(w);
        jw_obj_begin(w);
        jw_opt(w, "name", it->author);
        jw_obj_end(w);
        jw_arr_end(w);
    }
    if (it->source_name || it->source_id) {
        jw_key(w, "_newsd"); /* an extension: keys starting with '_' (JSON Feed 1.1) */
        jw_obj_begin(w);
        jw_key(w, "source");
        jw_obj_begin(w);
        jw_key(w, "id");
        if (it->source_id)
            jw_str(w, it->source_id);
        else
            jw_null(w);
        jw_opt(w, "name", it->source_name);
        jw_obj_end(w);
        jw_obj_end(w);
    }
    jw_obj_end(w);
}

static void jsonfeed_render(struct buf *b, const struct api_feed_meta *m, const struct item *items,
                            size_t n)
{
    struct jw w;
    jw_init(&w, b);
    jw_obj_begin(&w);
    jw_opt(&w, "version", "https://jsonfeed.org/version/1.1");
    jw_opt(&w, "title", m->title);
    jw_opt(&w, "home_page_url", m->home_url);
    jw_opt(&w, "feed_url", m->self_url);
    jw_key(&w, "items");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        jsonfeed_item(&w, &items[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    buf_putc(b, '\n');
}

int api_feed_render(struct buf *out, enum api_feed_format f, const struct api_feed_meta *m,
                    const struct index_doc *docs, size_t n, int64_t *newest)
{
    struct item *items = n ? calloc(n, sizeof *items) : NULL;
    int rc = 0;
    *newest = 0;
    if (n && !items)
        return ERR_NOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = item_read(&items[i], &docs[i]);
        if (rc == 0 && items[i].published > *newest)
            *newest = items[i].published;
    }
    /* The feed changes when its page does: an empty page's time is fixed
     * too (the epoch), so that its ETag holds and a reader's poll gets 304. */
    int64_t updated = *newest;
    if (rc == 0) {
        if (f == API_FEED_RSS)
            rss_render(out, m, items, n, updated);
        else if (f == API_FEED_ATOM)
            atom_render(out, m, items, n, updated);
        else
            jsonfeed_render(out, m, items, n);
        if (buf_error(out))
            rc = ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        json_decref(items[i].obj);
    free(items);
    return rc;
}
