/* JSON Feed 1.0 / 1.1 (ingest/feeds/feeds.h via feed_internal.h) with jansson.
 * https://jsonfeed.org/version/1.1: items[] with id, url (else
 * external_url), title, summary, content_html / content_text, image (else
 * banner_image), date_published (else date_modified), authors[].name (1.1)
 * or author.name (1.0); top-level title, home_page_url, language, authors.
 * Values of the wrong JSON type are ignored, not fatal. */
#include <string.h>

#include <jansson.h>

#include "ingest/feeds/feed_internal.h"
#include "ingest/ingest.h"

#include "util/banned.h"

/* The string member key of o, or NULL (absent, not a string). */
static const char *jstr(const json_t *o, const char *key, size_t *len)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    *len = json_string_length(v);
    return json_string_value(v);
}

static const char *jtext(struct feed_ctx *c, const json_t *o, const char *key,
                         enum feed_text_kind kind, size_t max, bool one_line,
                         const char **first_img)
{
    size_t n = 0;
    const char *s = jstr(o, key, &n);
    return s ? feed_ctx_text(c, s, n, kind, max, one_line, first_img) : NULL;
}

static const char *jurl(struct feed_ctx *c, const json_t *o, const char *key, const char *base)
{
    size_t n = 0;
    const char *s = jstr(o, key, &n);
    return s ? feed_ctx_url(c, s, n, base) : NULL;
}

/* 1.1 "authors": [{"name": ...}], 1.0 "author": {"name": ...}. */
static const char *json_authors(struct feed_ctx *c, const json_t *o)
{
    const char *names = NULL;
    const json_t *arr = json_object_get(o, "authors");
    if (json_is_array(arr)) {
        size_t i;
        const json_t *a;
        json_array_foreach(arr, i, a)
        {
            size_t n = 0;
            const char *s = json_is_object(a) ? jstr(a, "name", &n) : NULL;
            if (s)
                names = feed_ctx_join(c, names, feed_ctx_author(c, s, n));
        }
    }
    const json_t *one = json_object_get(o, "author");
    if (!names && json_is_object(one)) {
        size_t n = 0;
        const char *s = jstr(one, "name", &n);
        if (s)
            names = feed_ctx_author(c, s, n);
    }
    return names;
}

static void json_item(struct feed_ctx *c, const json_t *o, const char *feed_base,
                      const char *feed_author)
{
    struct feed_item *it = feed_ctx_item_add(c);
    if (!it)
        return;
    const char *first_img = NULL;
    it->title = jtext(c, o, "title", FEED_TEXT_PLAIN, FEED_MAX_TITLE_BYTES, true, NULL);
    it->link = jurl(c, o, "url", feed_base);
    if (!it->link)
        it->link = jurl(c, o, "external_url", feed_base);
    /* ids may be numbers in the wild although the spec says string. */
    const json_t *id = json_object_get(o, "id");
    if (json_is_string(id))
        it->guid = feed_ctx_text(c, json_string_value(id), json_string_length(id), FEED_TEXT_PLAIN,
                                 FEED_MAX_GUID_BYTES, true, NULL);
    else if (json_is_integer(id))
        it->guid = arena_printf(c->a, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
    it->description =
        jtext(c, o, "summary", FEED_TEXT_PLAIN, FEED_MAX_DESCRIPTION_BYTES, true, NULL);
    it->content =
        jtext(c, o, "content_html", FEED_TEXT_HTML, FEED_MAX_CONTENT_BYTES, false, &first_img);
    if (!it->content)
        it->content =
            jtext(c, o, "content_text", FEED_TEXT_PLAIN, FEED_MAX_CONTENT_BYTES, false, NULL);
    it->author = json_authors(c, o);
    if (!it->author)
        it->author = feed_author;
    it->image_url = jurl(c, o, "image", feed_base);
    if (!it->image_url)
        it->image_url = jurl(c, o, "banner_image", feed_base);
    size_t n = 0;
    const char *d = jstr(o, "date_published", &n);
    if (d)
        it->has_date = ingest_date_parse(d, n, &it->published_at);
    d = jstr(o, "date_modified", &n);
    if (!it->has_date && d)
        it->has_date = ingest_date_parse(d, n, &it->published_at);
    feed_ctx_item_finish(c, it, first_img, it->link ? it->link : feed_base);
}

int feed_json_parse(struct feed_ctx *c, const char *body, size_t len)
{
    int rc = 0;
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        rc = err_set(c->err, ERR_PARSE, "malformed JSON, line %d: %s", jerr.line, jerr.text);
        goto out;
    }
    const json_t *version = json_object_get(root, "version");
    const json_t *items = json_object_get(root, "items");
    if (!json_is_object(root) || !json_is_string(version) ||
        strncmp(json_string_value(version), "https://jsonfeed.org/version/", 29) != 0) {
        rc = err_set(c->err, ERR_PARSE, "not a JSON Feed: no jsonfeed.org version");
        goto out;
    }
    struct feed *f = c->out;
    f->format = FEED_FORMAT_JSON;
    f->title = jtext(c, root, "title", FEED_TEXT_PLAIN, FEED_MAX_TITLE_BYTES, true, NULL);
    f->link = jurl(c, root, "home_page_url", NULL);
    f->language = jtext(c, root, "language", FEED_TEXT_PLAIN, FEED_MAX_NAME_BYTES, true, NULL);
    const char *base = f->link ? f->link : c->base_url;
    const char *author = json_authors(c, root);
    if (json_is_array(items)) {
        size_t i;
        const json_t *o;
        json_array_foreach(items, i, o)
        {
            if (c->rc < 0)
                break;
            if (json_is_object(o))
                json_item(c, o, base, author);
        }
    }
out:
    json_decref(root);
    return rc;
}
