/* The byline a page's text shows (ingest/pages/extract_passes.h:
 * extract_byline_of_page): an element whose class or rel says author or
 * byline, outside comments and widgets, else a line led by a label ("By",
 * "Von", ...) that reads as names; never the site's own name
 * (docs/extraction.md "Author"). */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/extract_passes.h"

#include "util/banned.h"

#define BYLINE_MAX_CHARS 100
#define BYLINE_MAX_UP 64 /* ancestors looked at for a comment or widget */

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

/* Element i sits in a comment, a widget or a sidebar, whose author lines
 * are readers' or other articles'. */
static bool in_other_voice(const struct xdom *d, uint32_t i)
{
    static const char *const words[] = {"comment", "widget", "sidebar", "related", "footer",
                                        "teaser", "recommend"};
    int up = BYLINE_MAX_UP;
    for (; i != 0 && up-- > 0; i = d->nodes[i].parent) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (t == XTAG_body) /* its classes describe the whole page ("has-sidebar") */
            return false;
        if (t == XTAG_nav) /* an <aside> or <footer> may well hold the article's author */
            return true;
        const char *v[2] = {xdom_attr(d, i, XATTR_class, NULL), xdom_attr(d, i, XATTR_id, NULL)};
        for (int k = 0; k < 2; k++)
            for (size_t w = 0; v[k] && w < sizeof words / sizeof words[0]; w++)
                if (class_word_starts(v[k], words[w]))
                    return true;
    }
    return false;
}

/* The names in the author's line from node from, or NULL. */
static char *byline_names(struct ctx *c, uint32_t from, const char *site)
{
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(c->d, from, &b, EXTRACT_MAX_FIELD);
    char *s = b.len ? xtext_clean(c->a, b.data, b.len, EXTRACT_MAX_FIELD, false, &c->rc) : NULL;
    buf_release(&b);
    return xmeta_byline_clean(c->a, s, site, &c->rc);
}

/* The author's line when the metadata has none: the first visible element
 * outside comments and widgets that says it holds the author, with a short
 * text that names someone (its itemprop=name part when it has one, else
 * the whole line less its labels and date). It leaves the main text. */
static char *byline_in(struct ctx *c, const char *site, unsigned flags)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    extract_mark_gone(c, flags);
    extract_sum_pass(c);
    for (uint32_t i = 1; i < d->n; i++) {
        if (f[i].gone || d->nodes[i].tag == XTAG_TEXT || !xmeta_marks_author(d, i))
            continue;
        if (f[i].tlen == 0 || f[i].tlen > BYLINE_MAX_CHARS || in_other_voice(d, i))
            continue;
        uint32_t from = i, end = xdom_subtree_end(d, i);
        for (uint32_t k = i + 1; k < end; k++) {
            if (xdom_attr_is(d, k, XATTR_itemprop, "name") && f[k].tlen > 0) {
                from = k;
                break;
            }
        }
        char *s = byline_names(c, from, site);
        if (s) {
            for (uint32_t k = i; k < end; k++)
                f[k].invisible = 1;
            return s;
        }
    }
    return NULL;
}

#define LABELLED_MAX_CHARS 60 /* "By Jane Doe and John Roe, May 3" */

/* A line that starts with a byline's label ("By ", "Von ", "Autor: ")
 * and goes on with a capital: the author's line of a theme that marks it
 * with no class. */
static bool starts_with_byline_label(const char *s)
{
    static const char *const labels[] = {"By ",      "Von ",     "Par ",    "Por ",
                                         "Door ",    "Written by ", "Written by: ", "By: ", "Autor: ", "Autorin: ",
                                         "Autor ",   "Text: ",   "Text von "};
    for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++) {
        size_t n = strlen(labels[k]);
        if (strncmp(s, labels[k], n) != 0)
            continue;
        unsigned char ch = (unsigned char)s[n];
        return (ch >= 'A' && ch <= 'Z') || ch >= 0xC3; /* a capital, or a letter outside ASCII */
    }
    return false;
}

/* Every word of a name starts with a capital, connectors aside ("Jane Doe
 * und John Roe", "Ana de la Cruz"). */
static bool reads_as_names(const char *s)
{
    static const char *const small[] = {"und", "and", "y", "et", "i", "&", "de", "la", "del",
                                        "van", "von", "der", "da", "di", "le", "du", "mit"};
    for (const char *w = s; *w;) {
        while (*w == ' ' || *w == ',')
            w++;
        size_t n = 0;
        while (w[n] && w[n] != ' ' && w[n] != ',')
            n++;
        if (n == 0)
            break;
        unsigned char ch = (unsigned char)w[0];
        bool capital = (ch >= 'A' && ch <= 'Z') || ch >= 0xC3;
        bool connector = false;
        for (size_t k = 0; k < sizeof small / sizeof small[0] && !capital; k++)
            connector = connector || (strlen(small[k]) == n && strncmp(w, small[k], n) == 0);
        if (!capital && !connector)
            return false;
        w += n;
    }
    return true;
}

/* The first short visible line outside comments and widgets that starts
 * with a byline's label and names people. It leaves the main text. */
static char *labelled_byline(struct ctx *c, const char *site)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    extract_mark_gone(c, STRIP_UNLIKELY);
    extract_sum_pass(c);
    struct buf b;
    buf_init(&b, 0);
    char *found = NULL;
    for (uint32_t i = 1; i < d->n && !found; i++) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (f[i].gone || t == XTAG_TEXT || f[i].tlen < 5 || f[i].tlen > LABELLED_MAX_CHARS ||
            !(t == XTAG_p || t == XTAG_span || t == XTAG_div || t == XTAG_small ||
              t == XTAG_em || t == XTAG_strong || t == XTAG_li || t == XTAG_h5 || t == XTAG_h6))
            continue;
        buf_reset(&b);
        xdom_text_line(d, i, &b, 128);
        if (buf_error(&b) || !b.data || !starts_with_byline_label(b.data) ||
            in_other_voice(d, i))
            continue;
        char *s = byline_names(c, i, site);
        if (s && reads_as_names(s)) {
            found = s;
            uint32_t end = xdom_subtree_end(d, i);
            for (uint32_t k = i; k < end; k++)
                f[k].invisible = 1;
        }
        i = xdom_subtree_end(d, i) - 1;
    }
    buf_release(&b);
    return found;
}

/* Outside the boilerplate first (a menu's "Sign in" may have an author
 * class), then in it: a theme's entry header often says "header"; then a
 * line that says "By …" with no class. */
char *extract_byline_of_page(struct ctx *c, const char *site)
{
    char *s = byline_in(c, site, STRIP_UNLIKELY);
    if (!s)
        s = byline_in(c, site, 0);
    return s ? s : labelled_byline(c, site);
}
