/* A page's metadata (ingest/pages/extract_internal.h: xmeta_read): title, author,
 * description, image, publication time, language, site name, canonical URL.
 *
 * Sources, each field taking the first that says something:
 *   title      JSON-LD headline; <meta> og:title, dc.title, twitter:title,
 *              title; else <title> with the site's name cut off (below)
 *   byline     JSON-LD author; <meta> dc.creator, author, article:author
 *              (unless a URL); else (extract.c) the first element outside
 *              the boilerplate marked as the author (xmeta_marks_author)
 *   excerpt    JSON-LD description; og:description, description,
 *              twitter:description, dc.description
 *   image      og:image, twitter:image, JSON-LD image, link rel=image_src
 *   published  JSON-LD datePublished; article:published_time,
 *              itemprop=datePublished, dc.date, <time pubdate>
 *   lang       <html lang>, http-equiv content-language, og:locale
 *   site_name  og:site_name, JSON-LD publisher name
 *   canonical  <link rel=canonical>, og:url
 * JSON-LD counts only for an object whose @type is an article (…Article,
 * …Posting, Report), found at the top, in an array or in @graph.
 * <meta property> may hold several names separated by spaces. Relative URLs
 * resolve against <base href> (itself resolved against the page's URL). */
#include "ingest/pages/extract_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "ingest/pages/pages.h"
#include "ingest/ingest.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/utf8.h"

#include "util/banned.h"

#define JSONLD_MAX_BYTES ((size_t)1024 * 1024)
#define BYLINE_MAX_CHARS 100
#define TITLE_MAX_WORDS_CUT 3 /* a cut title needs more words than this */

enum mfield {
    MF_TITLE,
    MF_DESC,
    MF_AUTHOR,
    MF_SITE,
    MF_PUBLISHED,
    MF_IMAGE,
    MF_URL,
    MF_LOCALE,
    MF_TYPE,
    MF_LABEL, /* Yoast's twitter:label1 / twitter:data1: "Written by" / the name */
    MF_DATA,
    MF_COUNT
};

/* Meta names in order of preference within each field. */
static const struct {
    const char *name; /* lower case, '.' written ':' */
    enum mfield field;
} meta_names[] = {
    {"dc:title", MF_TITLE},
    {"dcterm:title", MF_TITLE},
    {"dcterms:title", MF_TITLE},
    {"og:title", MF_TITLE},
    {"title", MF_TITLE},
    {"twitter:title", MF_TITLE},
    {"dc:description", MF_DESC},
    {"dcterm:description", MF_DESC},
    {"dcterms:description", MF_DESC},
    {"og:description", MF_DESC},
    {"description", MF_DESC},
    {"twitter:description", MF_DESC},
    {"dc:creator", MF_AUTHOR},
    {"dcterm:creator", MF_AUTHOR},
    {"dcterms:creator", MF_AUTHOR},
    {"author", MF_AUTHOR},
    {"article:author", MF_AUTHOR},
    {"og:site_name", MF_SITE},
    {"article:published_time", MF_PUBLISHED},
    {"og:article:published_time", MF_PUBLISHED},
    {"datepublished", MF_PUBLISHED},
    {"dc:date:issued", MF_PUBLISHED},
    {"dcterms:issued", MF_PUBLISHED},
    {"dc:date", MF_PUBLISHED},
    {"og:image", MF_IMAGE},
    {"og:image:url", MF_IMAGE},
    {"og:image:secure_url", MF_IMAGE},
    {"twitter:image", MF_IMAGE},
    {"twitter:image:src", MF_IMAGE},
    {"og:url", MF_URL},
    {"og:locale", MF_LOCALE},
    {"content-language", MF_LOCALE},
    {"og:type", MF_TYPE},
    {"twitter:label1", MF_LABEL},
    {"twitter:data1", MF_DATA},
};
#define N_META_NAMES (sizeof meta_names / sizeof meta_names[0])

struct meta_state {
    const struct xdom *d;
    struct arena *a;
    int rc;
    const char *meta[N_META_NAMES]; /* first value seen of each name */
    size_t meta_len[N_META_NAMES];
    /* from JSON-LD */
    char *ld_title, *ld_name, *ld_headline, *ld_author, *ld_desc, *ld_published, *ld_image,
        *ld_site;
    char *ld_page_author; /* a WebPage's author: older Yoast graphs name it there, not on an article
                           */
    bool ld_article;      /* a JSON-LD object of an article type */
    const json_t *ld_graph; /* the list being read, where an {"@id": …} is looked up */
    uint32_t title_node, html_node, base_node, canonical_node, image_src_node, time_node;
};

/* Attribute and JSON-LD values: entities escaped twice are decoded. */
static char *clean(struct meta_state *m, const char *s, size_t n)
{
    return xtext_clean(m->a, s, n, EXTRACT_MAX_FIELD, true, &m->rc);
}

/* Text of the page: decoded once by the parser, as it should be. */
static char *clean_text(struct meta_state *m, const char *s, size_t n)
{
    return xtext_clean(m->a, s, n, EXTRACT_MAX_FIELD, false, &m->rc);
}

/* ---- JSON-LD ------------------------------------------------------------- */

static bool type_is_article(const char *t)
{
    size_t n = strlen(t);
    static const char *const ends[] = {"Article", "Posting", "Report", "Blog"};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t k = strlen(ends[i]);
        if (n >= k && strcmp(t + n - k, ends[i]) == 0)
            return true;
    }
    return false;
}

static bool is_article(const json_t *o)
{
    const json_t *t = json_object_get(o, "@type");
    if (json_is_string(t))
        return type_is_article(json_string_value(t));
    if (json_is_array(t)) {
        for (size_t i = 0; i < json_array_size(t); i++) {
            const json_t *e = json_array_get(t, i);
            if (json_is_string(e) && type_is_article(json_string_value(e)))
                return true;
        }
    }
    return false;
}

/* A WebPage (or ItemPage, ProfilePage…): its author is the article's when
 * no article object names one. */
static bool is_web_page(const json_t *o)
{
    const json_t *t = json_object_get(o, "@type");
    if (json_is_array(t))
        t = json_array_get(t, 0);
    const char *v = json_is_string(t) ? json_string_value(t) : "";
    size_t n = strlen(v);
    return n >= 4 && strcmp(v + n - 4, "Page") == 0;
}

static char *json_str(struct meta_state *m, const json_t *v)
{
    if (!json_is_string(v))
        return NULL;
    return clean(m, json_string_value(v), json_string_length(v));
}

/* The "name" of object o; when it has only an "@id" (Yoast's @graph: the
 * article's author is {"@id": ".../#/schema/person/…"}, the Person beside
 * it in the graph has the name), that of the object with the same @id in
 * the list being read. */
static const json_t *ref_name(const struct meta_state *m, const json_t *o)
{
    const json_t *name = json_object_get(o, "name");
    const json_t *id = json_object_get(o, "@id");
    if (name || !json_is_string(id) || !json_is_array(m->ld_graph))
        return name;
    for (size_t i = 0; i < json_array_size(m->ld_graph); i++) {
        const json_t *e = json_array_get(m->ld_graph, i);
        const json_t *eid = json_is_object(e) ? json_object_get(e, "@id") : NULL;
        if (e != o && json_is_string(eid) && json_equal(eid, id))
            return json_object_get(e, "name");
    }
    return NULL;
}

/* A name: a string, {"name": …} (or {"@id": …}, ref_name), or an array of
 * either joined by ", ". */
static char *json_names(struct meta_state *m, const json_t *v)
{
    if (json_is_string(v))
        return json_str(m, v);
    if (json_is_object(v))
        return json_str(m, ref_name(m, v));
    if (!json_is_array(v))
        return NULL;
    struct buf b;
    buf_init(&b, EXTRACT_MAX_FIELD);
    for (size_t i = 0; i < json_array_size(v) && i < 32; i++) {
        const json_t *e = json_array_get(v, i);
        const json_t *s = json_is_object(e) ? ref_name(m, e) : e;
        if (!json_is_string(s) || json_string_length(s) == 0)
            continue;
        if (b.len)
            buf_puts(&b, ", ");
        buf_append(&b, json_string_value(s), json_string_length(s));
    }
    char *out = b.len && !buf_error(&b) ? clean(m, b.data, b.len) : NULL;
    buf_release(&b);
    return out;
}

/* An image: a string, {"url": …}, or the first of an array. */
static char *json_image(struct meta_state *m, const json_t *v)
{
    if (json_is_array(v))
        v = json_array_get(v, 0);
    if (json_is_object(v))
        v = json_object_get(v, "url");
    return json_str(m, v);
}

static void jsonld_article(struct meta_state *m, const json_t *o)
{
    m->ld_article = true;
    if (!m->ld_title) {
        m->ld_name = json_str(m, json_object_get(o, "name"));
        m->ld_headline = json_str(m, json_object_get(o, "headline"));
        m->ld_title = m->ld_name ? m->ld_name : m->ld_headline;
    }
    if (!m->ld_author)
        m->ld_author = json_names(m, json_object_get(o, "author"));
    if (!m->ld_desc)
        m->ld_desc = json_str(m, json_object_get(o, "description"));
    if (!m->ld_published)
        m->ld_published = json_str(m, json_object_get(o, "datePublished"));
    if (!m->ld_image)
        m->ld_image = json_image(m, json_object_get(o, "image"));
    if (!m->ld_site)
        m->ld_site = json_names(m, json_object_get(o, "publisher"));
}

/* The article objects of one JSON-LD value: itself, the members of an
 * array, the members of @graph (one level each: no recursion on input). */
static void jsonld_value(struct meta_state *m, const json_t *v)
{
    const json_t *lists[2] = {NULL, NULL};
    if (json_is_array(v)) {
        lists[0] = v;
    } else if (json_is_object(v)) {
        if (is_article(v))
            jsonld_article(m, v);
        lists[1] = json_object_get(v, "@graph");
    }
    for (size_t l = 0; l < 2; l++) {
        if (!json_is_array(lists[l]))
            continue;
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            const json_t *e = json_array_get(lists[l], i);
            m->ld_graph = lists[l];
            if (json_is_object(e) && is_article(e))
                jsonld_article(m, e);
            else if (json_is_object(e) && !m->ld_page_author && is_web_page(e))
                m->ld_page_author = json_names(m, json_object_get(e, "author"));
            const json_t *g = json_is_object(e) ? json_object_get(e, "@graph") : NULL;
            m->ld_graph = g;
            for (size_t k = 0; json_is_array(g) && k < json_array_size(g); k++) {
                const json_t *ge = json_array_get(g, k);
                if (json_is_object(ge) && is_article(ge))
                    jsonld_article(m, ge);
            }
        }
    }
    m->ld_graph = NULL;
}

/* JSON-LD that hand-written templates break with a raw line break or tab
 * inside a string ("description": "two\nlines"): read again with every
 * control byte a space, which outside strings is white space anyway. Only
 * after the strict read failed. */
static json_t *json_load_lenient(const char *s, size_t n)
{
    char *copy = malloc(n ? n : 1);
    if (!copy)
        return NULL;
    bool changed = false;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        copy[k] = c < 0x20 ? ' ' : (char)c;
        changed = changed || (c < 0x20 && c != ' ');
    }
    json_error_t jerr;
    json_t *v = changed ? json_loadb(copy, n, JSON_DECODE_ANY, &jerr) : NULL;
    free(copy);
    return v;
}

static void jsonld_read(struct meta_state *m, uint32_t i)
{
    const struct xdom *d = m->d;
    for (uint32_t c = d->nodes[i].first; c; c = d->nodes[c].next) {
        const struct xnode *t = &d->nodes[c];
        if (t->tag != XTAG_TEXT || t->len > JSONLD_MAX_BYTES)
            continue;
        const char *s = d->text.data + t->off;
        size_t n = t->len;
        /* Some pages wrap it in a CDATA section or a comment. */
        static const char *const wraps[][2] = {{"<![CDATA[", "]]>"}, {"<!--", "-->"}};
        for (size_t w = 0; w < 2; w++) {
            while (n > 0 && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
                s++, n--;
            while (n > 0 &&
                   (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                n--;
            size_t a = strlen(wraps[w][0]), z = strlen(wraps[w][1]);
            if (n >= a && memcmp(s, wraps[w][0], a) == 0) {
                s += a, n -= a;
                if (n >= z && memcmp(s + n - z, wraps[w][1], z) == 0)
                    n -= z;
            }
        }
        json_error_t jerr;
        /* JSON nests as deep as the page likes; jansson bounds its own
         * depth (JSON_PARSER_MAX_DEPTH). */
        json_t *v = json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        if (!v)
            v = json_load_lenient(s, n);
        if (v) {
            jsonld_value(m, v);
            json_decref(v);
        }
    }
}

/* ---- <meta> and friends ----------------------------------------------- */

/* Meta names compare case-insensitively with '.' and ':' alike
 * ("DC.title" is "dc:title"). */
static bool meta_name_is(const char *want, const char *name, size_t n)
{
    for (size_t i = 0; i < n; i++, want++) {
        char c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
        if (c == '.')
            c = ':';
        if (*want != c)
            return false;
    }
    return *want == '\0';
}

static void meta_take(struct meta_state *m, const char *name, size_t n, const char *content,
                      size_t clen)
{
    for (size_t k = 0; k < N_META_NAMES; k++) {
        if (!m->meta[k] && meta_name_is(meta_names[k].name, name, n)) {
            m->meta[k] = content;
            m->meta_len[k] = clen;
        }
    }
}

static void meta_element(struct meta_state *m, uint32_t i)
{
    size_t clen = 0;
    const char *content = xdom_attr(m->d, i, XATTR_content, &clen);
    if (!content || clen == 0)
        return;
    /* property (several names possible), name, itemprop, http-equiv */
    static const enum xattr keys[] = {XATTR_property, XATTR_name, XATTR_itemprop, XATTR_http_equiv};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *v = xdom_attr(m->d, i, keys[k], NULL);
        if (!v)
            continue;
        while (*v) {
            while (*v == ' ' || *v == '\t' || *v == '\n')
                v++;
            size_t n = 0;
            while (v[n] && v[n] != ' ' && v[n] != '\t' && v[n] != '\n')
                n++;
            if (n)
                meta_take(m, v, n, content, clen);
            v += n;
        }
    }
}

static bool rel_has(const struct xdom *d, uint32_t i, const char *word)
{
    const char *v = xdom_attr(d, i, XATTR_rel, NULL);
    size_t w = strlen(word);
    while (v && *v) {
        while (*v == ' ')
            v++;
        size_t n = 0;
        while (v[n] && v[n] != ' ')
            n++;
        if (n == w && strncasecmp(v, word, n) == 0)
            return true;
        v += n;
    }
    return false;
}

/* A class or id naming the author's line. */
static bool names_byline(const char *v)
{
    static const char *const words[] = {"byline", "author", "dateline", "writtenby"};
    for (size_t k = 0; v && k < sizeof words / sizeof words[0]; k++)
        if (xtext_has_ci(v, words[k]))
            return true;
    return false;
}

static bool itemprop_has(const struct xdom *d, uint32_t i, const char *word)
{
    const char *v = xdom_attr(d, i, XATTR_itemprop, NULL);
    return v && xtext_has_ci(v, word);
}

bool xmeta_marks_author(const struct xdom *d, uint32_t i)
{
    return rel_has(d, i, "author") || itemprop_has(d, i, "author") ||
           names_byline(xdom_attr(d, i, XATTR_class, NULL)) ||
           names_byline(xdom_attr(d, i, XATTR_id, NULL));
}

static char *node_text(struct meta_state *m, uint32_t i, size_t max);

/* ---- title ------------------------------------------------------------- */

#define TITLE_HEADINGS 64 /* h1 and h2 looked at */

/* Words are runs of bytes other than ASCII white space and punctuation. */
static bool word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t count_words(const char *s)
{
    size_t n = 0;
    bool in = false;
    for (; *s; s++) {
        bool sp = *s == ' ' || *s == '\t' || *s == '\n';
        if (!sp && !in)
            n++;
        in = !sp;
    }
    return n;
}

/* Share of b's word bytes in words that a also has (case aside): how much
 * of b a says. Titles are short; longer strings count their first 1 KB. */
static double similarity(const char *a, const char *b)
{
    size_t la = strnlen(a, 1024), lb = strnlen(b, 1024);
    size_t total = 0, covered = 0;
    size_t i = 0;
    while (i < lb) {
        while (i < lb && !word_byte((unsigned char)b[i]))
            i++;
        size_t w = i;
        while (i < lb && word_byte((unsigned char)b[i]))
            i++;
        size_t wn = i - w;
        if (wn == 0)
            continue;
        total += wn;
        for (size_t k = 0; k + wn <= la; k++) {
            if (strncasecmp(a + k, b + w, wn) == 0 &&
                (k == 0 || !word_byte((unsigned char)a[k - 1])) &&
                (k + wn == la || !word_byte((unsigned char)a[k + wn]))) {
                covered += wn;
                break;
            }
        }
    }
    return total ? (double)covered / (double)total : 0;
}

/* Title separators, the site's name on one side: " | ", " - ", " – ",
 * " — ", " / ", " \ ", " > ", " » ". */
static size_t separator_at(const char *s)
{
    static const char *const seps[] = {" | ",  " - ", " \xE2\x80\x93 ", " \xE2\x80\x94 ", " / ",
                                       " \\ ", " > ", " \xC2\xBB "};
    if (s[0] != ' ')
        return 0;
    for (size_t k = 0; k < sizeof seps / sizeof seps[0]; k++) {
        size_t n = strlen(seps[k]);
        if (strncmp(s, seps[k], n) == 0)
            return n;
    }
    return 0;
}

/* Words of t without its separators. */
static size_t words_without_separators(const char *t)
{
    size_t n = 0;
    bool in = false;
    for (size_t i = 0; t[i];) {
        size_t k = separator_at(t + i);
        if (k) {
            in = false;
            i += k;
            continue;
        }
        bool sp = t[i] == ' ';
        if (!sp && !in)
            n++;
        in = !sp;
        i++;
    }
    return n;
}

static char *dup_n(struct meta_state *m, const char *s, size_t n)
{
    char *r = clean_text(m, s, n);
    return r ? r : arena_strdup(m->a, "");
}

/* The <title> without the site's name. With separators: the part before
 * the last one, or after the first one when that leaves fewer than three
 * words. With a colon (and no heading saying the whole title): the part
 * after the last colon, or after the first when that is too short, unless
 * the part before the first colon is a sentence of its own (more than five
 * words). A very long or short title gives way to the page's only <h1>.
 * A result of four words or fewer goes back to the whole title, unless it
 * is the part before the separator and lost exactly one word (the site's
 * name). */
static char *title_cut(struct meta_state *m, char *t, const uint32_t *heads, size_t n_heads,
                       size_t h1s)
{
    size_t n = strlen(t);
    size_t first = SIZE_MAX, first_len = 0, last = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t k = separator_at(t + i);
        if (k) {
            if (first == SIZE_MAX) {
                first = i;
                first_len = k;
            }
            last = i;
        }
    }
    bool had_sep = first != SIZE_MAX;
    char *cut = t;
    bool kept_front = false;
    if (had_sep) {
        cut = dup_n(m, t, last);
        kept_front = true;
        if (count_words(cut) < 3) {
            cut = dup_n(m, t + first + first_len, n - first - first_len);
            kept_front = false;
        }
    } else if (strstr(t, ": ")) {
        bool heading_says_it = false;
        for (size_t h = 0; h < n_heads && !heading_says_it; h++) {
            struct buf b;
            buf_init(&b, 0);
            xdom_text_line(m->d, heads[h], &b, n + 8);
            heading_says_it = b.len == n && memcmp(b.data, t, n) == 0;
            buf_release(&b);
        }
        if (!heading_says_it) {
            const char *colon_last = t, *p;
            for (p = strstr(t, ": "); p; p = strstr(p + 1, ": "))
                colon_last = p;
            cut = dup_n(m, colon_last + 2, strlen(colon_last + 2));
            const char *colon_first = strstr(t, ": ");
            if (count_words(cut) < 3) {
                cut = dup_n(m, colon_first + 2, strlen(colon_first + 2));
            } else {
                char *before = dup_n(m, t, (size_t)(colon_first - t));
                if (count_words(before) > 5)
                    cut = t;
            }
        }
    } else if ((n > 150 || n < 15) && h1s == 1) {
        for (size_t h = 0; h < n_heads; h++) {
            if (m->d->nodes[heads[h]].tag == XTAG_h1) {
                char *h1 = node_text(m, heads[h], EXTRACT_MAX_FIELD);
                if (h1)
                    cut = h1;
                break;
            }
        }
    }
    size_t w = count_words(cut);
    if (w <= 4 && (!kept_front || w != words_without_separators(t) - 1))
        cut = t;
    return cut;
}

/* ---- the pass ------------------------------------------------------------- */

static char *first_of(struct meta_state *m, enum mfield f)
{
    for (size_t k = 0; k < N_META_NAMES; k++)
        if (meta_names[k].field == f && m->meta[k])
            return clean(m, m->meta[k], m->meta_len[k]);
    return NULL;
}

static bool looks_like_url(const char *s)
{
    return s &&
           (strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0 || s[0] == '/');
}

char *xmeta_url(struct arena *a, const char *ref, size_t n, const char *base)
{
    int rc = 0; /* a full arena shows at the extractor's next allocation */
    if (!ref)
        return NULL;
    return (char *)ingest_url_absolute(a, ref, n, base, LIMIT_URL_BYTES, &rc);
}

static char *node_text(struct meta_state *m, uint32_t i, size_t max)
{
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(m->d, i, &b, max);
    char *out = NULL;
    if (buf_error(&b))
        m->rc = ERR_NOMEM;
    else if (b.len)
        out = clean_text(m, b.data, b.len);
    buf_release(&b);
    return out;
}

/* The element's own link, for an image or URL attribute. */
static char *attr_url(struct meta_state *m, uint32_t i, enum xattr name, const char *base)
{
    size_t n = 0;
    const char *v = i ? xdom_attr(m->d, i, name, &n) : NULL;
    return v ? xmeta_url(m->a, v, n, base) : NULL;
}

/* og:type "article", "article:...", or JSON-LD says article. og:type
 * "website" says nothing: 89 of the development set's 990 articles carry
 * it (docs/extraction.md "Article or not"). */
static enum xmeta_kind kind_of(struct meta_state *m)
{
    char *t = first_of(m, MF_TYPE);
    if (m->ld_article || (t && strncasecmp(t, "article", 7) == 0))
        return XMETA_ARTICLE;
    return XMETA_UNDECLARED;
}

int xmeta_read(const struct xdom *d, struct arena *a, const char *url, struct extracted_page *out,
               const char **base_out, enum xmeta_kind *kind_out)
{
    struct meta_state m = {.d = d, .a = a};
    uint32_t heads[TITLE_HEADINGS];
    size_t n_heads = 0, h1s = 0;
    for (uint32_t i = 1; i < d->n; i++) {
        const struct xnode *x = &d->nodes[i];
        switch (x->tag) {
        case XTAG_html:
            if (!m.html_node)
                m.html_node = i;
            break;
        case XTAG_title:
            if (!m.title_node)
                m.title_node = i;
            break;
        case XTAG_h1:
        case XTAG_h2:
            if (n_heads < TITLE_HEADINGS)
                heads[n_heads++] = i;
            h1s += x->tag == XTAG_h1;
            break;
        case XTAG_base:
            if (!m.base_node && xdom_attr(d, i, XATTR_href, NULL))
                m.base_node = i;
            break;
        case XTAG_meta:
            meta_element(&m, i);
            break;
        case XTAG_link:
            if (!m.canonical_node && rel_has(d, i, "canonical"))
                m.canonical_node = i;
            if (!m.image_src_node && rel_has(d, i, "image_src"))
                m.image_src_node = i;
            break;
        case XTAG_script:
            if (x->flags & XN_JSONLD)
                jsonld_read(&m, i);
            break;
        case XTAG_TEXT:
        case XTAG_DOC:
            break;
        default:
            if (!m.time_node && (itemprop_has(d, i, "datePublished") ||
                                 (x->tag == XTAG_time && xdom_attr(d, i, XATTR_pubdate, NULL))))
                m.time_node = i;
            break;
        }
        if (m.rc < 0)
            return m.rc;
    }

    /* base for relative links */
    const char *base = url;
    char *page_url = url ? xmeta_url(a, url, strlen(url), NULL) : NULL;
    base = page_url;
    if (m.base_node) {
        char *b = attr_url(&m, m.base_node, XATTR_href, page_url);
        if (b)
            base = b;
    }
    *base_out = base;
    *kind_out = kind_of(&m);

    /* title: JSON-LD's name or headline (when they differ, the one that
     * says more of the <title>), the <meta> titles, the <title> cut */
    char *doc_title = m.title_node ? node_text(&m, m.title_node, EXTRACT_MAX_FIELD) : NULL;
    out->title = m.ld_title;
    if (m.ld_name && m.ld_headline && strcmp(m.ld_name, m.ld_headline) != 0 && doc_title &&
        similarity(m.ld_headline, doc_title) > similarity(m.ld_name, doc_title))
        out->title = m.ld_headline;
    if (!out->title)
        out->title = first_of(&m, MF_TITLE);
    if (!out->title && doc_title)
        out->title = title_cut(&m, doc_title, heads, n_heads, h1s);

    /* byline: JSON-LD, then the <meta> names, each only when it names
     * someone; the page's author line is extract.c's */
    char *site = first_of(&m, MF_SITE);
    out->byline = xmeta_byline_clean(a, m.ld_author ? m.ld_author : m.ld_page_author,
                                     site ? site : m.ld_site, &m.rc);
    for (size_t k = 0; k < N_META_NAMES && !out->byline; k++) {
        if (meta_names[k].field != MF_AUTHOR || !m.meta[k])
            continue;
        char *v = clean(&m, m.meta[k], m.meta_len[k]);
        /* a blogger's own name is often the site's: <meta name=author> is
         * written by hand, JSON-LD's author by a plugin */
        if (v && !looks_like_url(v))
            out->byline = xmeta_byline_clean(a, v, NULL, &m.rc);
    }
    /* Yoast's Twitter card: "Written by" / "Verfasst von" beside the name */
    char *label = out->byline ? NULL : first_of(&m, MF_LABEL);
    if (label && xmeta_label_is_author(label))
        out->byline = xmeta_byline_clean(a, first_of(&m, MF_DATA), site, &m.rc);

    out->excerpt = m.ld_desc ? m.ld_desc : first_of(&m, MF_DESC);
    out->site_name = first_of(&m, MF_SITE);
    if (!out->site_name)
        out->site_name = m.ld_site;

    /* published */
    out->published = m.ld_published ? m.ld_published : first_of(&m, MF_PUBLISHED);
    if (!out->published && m.time_node) {
        size_t n = 0;
        const char *v = xdom_attr(d, m.time_node, XATTR_datetime, &n);
        if (!v)
            v = xdom_attr(d, m.time_node, XATTR_content, &n);
        out->published = v ? clean(&m, v, n) : node_text(&m, m.time_node, 64);
    }
    /* A time that is no date ("12:06 PM") says nothing. */
    out->published_at = 0;
    if (out->published) {
        int64_t t;
        if (ingest_date_parse(out->published, strlen(out->published), &t))
            out->published_at = t;
        else
            out->published = NULL;
    }

    /* language */
    size_t ln = 0;
    const char *lang = m.html_node ? xdom_attr(d, m.html_node, XATTR_lang, &ln) : NULL;
    out->lang = lang ? clean(&m, lang, ln) : NULL;
    if (!out->lang) {
        char *loc = first_of(&m, MF_LOCALE);
        for (char *p = loc; p && *p; p++)
            if (*p == '_')
                *p = '-';
        out->lang = loc;
    }

    /* image */
    out->image = NULL;
    for (size_t k = 0; k < N_META_NAMES && !out->image; k++)
        if (meta_names[k].field == MF_IMAGE && m.meta[k])
            out->image = xmeta_url(a, m.meta[k], m.meta_len[k], base);
    if (!out->image && m.ld_image)
        out->image = xmeta_url(a, m.ld_image, strlen(m.ld_image), base);
    if (!out->image)
        out->image = attr_url(&m, m.image_src_node, XATTR_href, base);

    /* canonical */
    out->canonical = attr_url(&m, m.canonical_node, XATTR_href, base);
    if (!out->canonical) {
        char *u = first_of(&m, MF_URL);
        out->canonical = u ? xmeta_url(a, u, strlen(u), base) : NULL;
    }
    return m.rc;
}
