/* Article or not (ingest/pages/extract_passes.h: extract_page_is_article):
 * a site root is never one, a section index or a page of links is one only
 * when it says so; a main text in the page's only <article> says so; else
 * the main text's length and link share decide
 * (docs/extraction.md "Article or not"). */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/extract_passes.h"
#include "util/url.h"

#include "util/banned.h"

/* ---- article or not ---------------------------------------------------------- */

/* "index", "index.html", "default.aspx", "home", "start.php": a home page's
 * file name. */
static bool is_home_file(const char *p, size_t n)
{
    static const char *const names[] = {"index", "default", "home", "start", "startseite", "main"};
    size_t stem = 0;
    while (stem < n && p[stem] != '.')
        stem++;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strlen(names[k]) == stem && strncasecmp(p, names[k], stem) == 0)
            return true;
    return false;
}

/* The path of url, the archived URL's when it is a Wayback Machine one
 * ("/web/20160526181643/http://example.com/"). */
static void page_path(const char *url, struct url_parts *u)
{
    url_split(url, strlen(url), u);
    const char *p = u->path;
    if (u->path_len > 5 && strncmp(p, "/web/", 5) == 0) {
        const char *inner = strstr(p + 5, "/http");
        if (inner && inner < p + u->path_len)
            url_split(inner + 1, strlen(inner + 1), u);
    }
}

/* A site's home page: nothing, or a home file, after the host, and no
 * query (WordPress's "/?p=123" is an article). */
static bool url_is_site_root(const char *url)
{
    struct url_parts u;
    page_path(url, &u);
    if (!u.authority || (u.query && u.query_len > 0))
        return false;
    const char *p = u.path;
    size_t n = u.path_len;
    while (n > 0 && *p == '/')
        p++, n--;
    return n == 0 || (memchr(p, '/', n) == NULL && is_home_file(p, n));
}

/* A section's index: one short path segment of letters that ends with '/'
 * ("/politik/", "/news/"); an article's slug has digits or dashes. */
static bool url_is_section(const char *url)
{
    struct url_parts u;
    page_path(url, &u);
    if (!u.authority || (u.query && u.query_len > 0) || u.path_len < 3)
        return false;
    const char *p = u.path;
    size_t n = u.path_len;
    if (p[0] != '/' || p[n - 1] != '/' || n - 2 > SECTION_MAX_CHARS)
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')))
            return false;
    return true;
}

static bool digits(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return true;
}

/* A permalink with the date in its path ("/2012/05/31/slug",
 * "/2011/09/gefallt-mir/"): a year 1990-2099 and a month 01-12 as path
 * segments of their own, with more path after them. Blogs and news sites
 * file their articles so; an index is not filed by date and slug. */
static bool url_has_date_path(const char *url)
{
    struct url_parts u;
    page_path(url, &u);
    const char *p = u.path;
    size_t n = u.path_len;
    for (size_t i = 0; i + 9 < n; i++) {
        if (p[i] != '/' || p[i + 5] != '/' || p[i + 8] != '/' || !digits(p + i + 1, 4) ||
            !digits(p + i + 6, 2))
            continue;
        int year = (p[i + 1] - '0') * 1000 + (p[i + 2] - '0') * 100 + (p[i + 3] - '0') * 10 +
                   (p[i + 4] - '0');
        int month = (p[i + 6] - '0') * 10 + (p[i + 7] - '0');
        if (year >= 1990 && year <= 2099 && month >= 1 && month <= 12)
            return true;
    }
    return false;
}

/* Whether the page has one <article> element and the main text sits on its
 * branch (inside it, or the picked block holds it): a page that marks one
 * article so says what it is, as a declaration does. A page of teasers
 * marks each teaser, or none. */
static bool pick_in_only_article(const struct ctx *c, const struct pick *pk)
{
    uint32_t article = 0;
    for (uint32_t i = 1; i < c->d->n; i++) {
        if (c->d->nodes[i].tag != XTAG_article || c->f[i].invisible)
            continue;
        if (article)
            return false;
        article = i;
    }
    if (!article || pk->n == 0)
        return false;
    uint32_t first = pk->nodes[0];
    uint32_t a_end = xdom_subtree_end(c->d, article);
    if (first >= article && first < a_end)
        return true;
    return article > first && article < xdom_subtree_end(c->d, first);
}

/* Share of link text in the picked main text. */
static float pick_links(const struct ctx *c, const struct pick *pk)
{
    uint32_t t = 0, l = 0;
    for (uint32_t k = 0; k < pk->n; k++) {
        t += c->f[pk->nodes[k]].tlen;
        l += c->f[pk->nodes[k]].llen;
    }
    return t ? (float)l / (float)t : 0.0f;
}

/* Whether the page holds an article (docs/extraction.md, "Article or
 * not"): a home page never does, whatever it declares; a page that says it
 * is an article does when it has a main text at all, since Firefox's
 * gate (gate) misses briefs, lists and text in <div>s; a page of links or
 * a section's index does not; one whose main text sits in the page's only
 * <article> element, or whose URL is a permalink filed by date,
 * counts as declared; one that says nothing (og:type "website" says
 * nothing either) needs the gate or a longer main text of few links. */
bool extract_page_is_article(const struct ctx *c, const struct pick *pk, enum xmeta_kind kind,
                             const char *url, bool gate, size_t chars)
{
    if (url && url_is_site_root(url))
        return false;
    float text_links = pick_links(c, pk);
    if (kind == XMETA_ARTICLE)
        return gate || chars >= DECLARED_MIN_CHARS;
    if (text_links > PAGE_MAX_LINKS)
        return false;
    /* before the URL's word: a slug like "/supermarket/" reads as a
     * section */
    if (pick_in_only_article(c, pk))
        return gate || chars >= DECLARED_MIN_CHARS;
    if (url && url_is_section(url))
        return false;
    /* a permalink filed by date says "article" as a declaration does */
    if (url && url_has_date_path(url))
        return gate || chars >= DECLARED_MIN_CHARS;
    return gate || (chars >= UNDECLARED_MIN_CHARS && text_links < TEXT_MAX_LINKS);
}
