/* Whose voice an element of the page is in (ingest/pages/extract_passes.h:
 * extract_byline_in_block_of, extract_byline_other_voice): a comment, a
 * widget, a sidebar, a footer, a teaser or related articles' block speaks
 * for readers or other articles, so an author line, an agency's credit
 * found there is not the article's; the entry itself (<article>, "hentry")
 * ends the walk up, as what holds it says nothing of its author line.
 * docs/extraction.md "Author". */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/extract_passes.h"
#include "util/ascii.h"

#include "util/banned.h"

#define BLOCK_MAX_UP 64 /* ancestors looked at for a comment or widget */

/* A word of the class or id list v starts with w ("comment-author",
 * "sidebar-main"; not "sticky-sidebar-parent", which says nothing). */
static bool class_word_starts(const char *v, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = v; p && *p; p++)
        if ((p == v || p[-1] == ' ') && strncasecmp(p, w, n) == 0)
            return true;
    return false;
}

/* The class list v has the word w, whole. */
static bool class_word_is(const char *v, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = v; p && *p; p++)
        if ((p == v || p[-1] == ' ') && strncasecmp(p, w, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Element i holds an <h1>: a block that holds the page's title holds the
 * article, whatever its class says of the layout ("content-wrapper
 * sidebar-included", "site-content sidebar"); looked at for "sidebar"
 * only, as a comment block may be large and is never the article. */
static bool holds_the_title(const struct xdom *d, uint32_t i)
{
    uint32_t end = xdom_subtree_end(d, i);
    for (uint32_t k = i + 1; k < end; k++)
        if (d->nodes[k].tag == XTAG_h1)
            return true;
    return false;
}

/* The id v is WordPress's for a post, "post-" and its number: the entry
 * itself, as classic themes mark it (<div class="post" id="post-2037">). */
static bool is_post_id(const char *v)
{
    if (!v || strncmp(v, "post-", 5) != 0 || v[5] == '\0')
        return false;
    for (v += 5; *v; v++)
        if (!ascii_is_digit(*v))
            return false;
    return true;
}

/* Element i sits in a block whose class or id starts with one of words[0..n)
 * or in a <nav>, below the entry itself (<article>, "hentry"). */
bool extract_byline_in_block_of(const struct xdom *d, uint32_t i, const char *const *words,
                                size_t n)
{
    int up = BLOCK_MAX_UP;
    for (uint32_t self = i; i != 0 && up-- > 0; i = d->nodes[i].parent) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (t == XTAG_body) /* its classes describe the whole page ("has-sidebar") */
            return false;
        if (t == XTAG_nav) /* an <aside> or <footer> may well hold the article's author */
            return true;
        const char *v[2] = {xdom_attr(d, i, XATTR_class, NULL), xdom_attr(d, i, XATTR_id, NULL)};
        for (int k = 0; k < 2; k++)
            for (size_t w = 0; v[k] && w < n; w++)
                if (class_word_starts(v[k], words[w]) &&
                    !(strcmp(words[w], "sidebar") == 0 && holds_the_title(d, i)) &&
                    /* a line styled as a teaser's ("teaser-cat") is no teaser */
                    !(i == self && strcmp(words[w], "teaser") == 0))
                    return true;
        /* the entry itself (<article>, microformats' "hentry", WordPress's
         * id="post-2037"): what holds it says nothing of its own author
         * line (Blogger's posts sit in a "widget Blog", a theme's content in
         * an id="sidebar", a post in a widget that broken markup leaves
         * open: <img … < div>) */
        if (t == XTAG_article || class_word_is(v[0], "hentry") || class_word_is(v[0], "h-entry") ||
            is_post_id(v[1]))
            return false;
    }
    return false;
}

/* Element i sits in a comment, a widget or a sidebar, whose author lines
 * are readers' or other articles'. */
bool extract_byline_other_voice(const struct xdom *d, uint32_t i)
{
    static const char *const words[] = {"comment", "widget", "sidebar",  "related",
                                        "footer",  "teaser", "recommend"};
    return extract_byline_in_block_of(d, i, words, sizeof words / sizeof words[0]);
}
