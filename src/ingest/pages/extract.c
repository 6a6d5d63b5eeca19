/* The main text of a page (ingest/pages/pages.h), by scoring its blocks the way
 * reader views do, in passes over the node array that are each linear:
 *
 * 1. Drop what is never the article: invisible elements (script, forms'
 *    controls, hidden ones) and, in the first attempt, elements whose class
 *    or id says menu, comment, share, sidebar, footer, ... (unless it also
 *    says article, content, main, ...) or whose role is navigation.
 * 2. Paragraphs: every block with 25 characters of its own text (text not
 *    inside a nested block). A paragraph is worth 1 + its commas + one per
 *    100 characters (at most 3); that goes to the block that holds it, half
 *    to the next one up, a third of a third further, up to 5 levels. A
 *    candidate starts from its tag (div +5, lists and headings less) and
 *    its class and id (+25 for article words, -25 for boilerplate words),
 *    and its sum is scaled by the share of its text that is not link text;
 *    on the headline's branch (headline_bonus) it scores a fifth more.
 * 3. The best candidate, moved up to an ancestor when several near-best
 *    candidates sit under it (an article split into blocks), or when its
 *    parent scores nearly as well; then its siblings that score well, share
 *    its class, or are link-poor paragraphs, join it.
 * 4. Inside what was picked, lists, tables, forms and divs that look like
 *    boilerplate (many links, few paragraphs, more images or inputs than
 *    text, negative class) are dropped, inner ones first, but not a
 *    block that holds most of the text as prose (extract_clean.c says
 *    which); headings that repeat the title and share bars too.
 * 5. Less than 500 characters: again without step 1's class rule, then
 *    without class weights, then without step 4; the longest result wins.
 * Whether the page holds an article at all is a separate, cheaper test:
 * enough long visible paragraphs (sum of sqrt(chars - 140) over blocks of
 * 140+ characters above 20).
 * The ideas are those of Mozilla's Readability; the code is our own. */
#include "ingest/pages/pages.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/extract_internal.h"
#include "ingest/pages/extract_passes.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/url.h"
#include "util/utf8.h"

#include "util/banned.h"

/* ---- tags ------------------------------------------------------------- */

/* The front end's tag table (html_internal.h) holds the extractor's
 * columns: blocks, and elements whose content never shows as text of an
 * article. */
static bool tag_is_block(enum xtag t)
{
    return t == XTAG_DOC || (html_tag_flags(t) & HT_BLOCK);
}

static bool tag_is_invisible(enum xtag t)
{
    return html_tag_flags(t) & HT_INVISIBLE;
}

/* Blocks whose own text makes a paragraph that scores. */
static bool tag_scores(enum xtag t)
{
    switch (t) {
    case XTAG_p:
    case XTAG_pre:
    case XTAG_td:
    case XTAG_section:
    case XTAG_h2:
    case XTAG_h3:
    case XTAG_h4:
    case XTAG_h5:
    case XTAG_h6:
    case XTAG_div:
    case XTAG_article:
    case XTAG_main:
        return true;
    default:
        return false;
    }
}

static float tag_base_score(enum xtag t)
{
    switch (t) {
    case XTAG_div:
        return 5;
    case XTAG_pre:
    case XTAG_td:
    case XTAG_blockquote:
        return 3;
    case XTAG_address:
    case XTAG_ol:
    case XTAG_ul:
    case XTAG_dl:
    case XTAG_dd:
    case XTAG_dt:
    case XTAG_li:
    case XTAG_form:
        return -3;
    case XTAG_h1:
    case XTAG_h2:
    case XTAG_h3:
    case XTAG_h4:
    case XTAG_h5:
    case XTAG_h6:
    case XTAG_th:
        return -5;
    default:
        return 0;
    }
}

/* ---- class and id ----------------------------------------------------- */

static const char *const unlikely_words[] = {
    "-ad-",       "ai2html", "banner",     "breadcrumbs",  "combx",    "comment",   "community",
    "cover-wrap", "disqus",  "extra",      "footer",       "gdpr",     "header",    "legends",
    "menu",       "related", "remark",     "replies",      "rss",      "shoutbox",  "sidebar",
    "skyscraper", "social",  "sponsor",    "supplemental", "ad-break", "agegate",   "pagination",
    "pager",      "popup",   "yom-remote", "cookie",       "consent",  "newsletter"};
static const char *const maybe_words[] = {"and",     "article", "body",    "column",
                                          "content", "main",    "mathjax", "shadow"};
static const char *const positive_words[] = {"article", "body", "content", "entry",      "hentry",
                                             "h-entry", "main", "page",    "pagination", "post",
                                             "text",    "blog", "story"};
static const char *const negative_words[] = {
    "-ad-",     "banner",  "combx",      "comment",  "com-",     "contact", "footer", "gdpr",
    "masthead", "media",   "meta",       "outbrain", "promo",    "related", "scroll", "share",
    "shoutbox", "sidebar", "skyscraper", "sponsor",  "shopping", "tags",    "widget"};

/* Lower-case copy of an attribute into out (bounded). */
static void lower_into(char *out, size_t cap, const char *v)
{
    size_t k = 0;
    for (; v && *v && k + 1 < cap; v++)
        out[k++] = ascii_lower(*v);
    out[k] = '\0';
}

/* " hid " as a whole class word. */
static bool has_hid_word(const char *s)
{
    for (const char *p = strstr(s, "hid"); p; p = strstr(p + 1, "hid"))
        if ((p == s || p[-1] == ' ') && (p[3] == '\0' || p[3] == ' '))
            return true;
    return false;
}

static int word_weight(const char *s)
{
    if (!s[0])
        return 0;
    int w = 0;
    if (HAS_ANY(s, negative_words) || strstr(s, "hidden") || has_hid_word(s))
        w -= 25;
    if (HAS_ANY(s, positive_words))
        w += 25;
    return w;
}

static bool role_is_boilerplate(const char *r)
{
    static const char *const roles[] = {"menu",  "menubar",     "complementary", "navigation",
                                        "alert", "alertdialog", "dialog"};
    for (size_t i = 0; r && i < sizeof roles / sizeof roles[0]; i++)
        if (strcasecmp(r, roles[i]) == 0)
            return true;
    return false;
}

/* ---- text lengths --------------------------------------------------------- */

/* Characters of s[0..n) with white space runs as one; commas (',', '，', '、'). */
static void measure(const char *s, size_t n, uint32_t *chars, uint32_t *commas)
{
    uint32_t c = 0, k = 0;
    bool space = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f') {
            if (!space)
                c++;
            space = true;
            continue;
        }
        space = false;
        if ((b & 0xC0) != 0x80)
            c++;
        if (b == ',')
            k++;
        else if (b == 0xEF && i + 2 < n && (unsigned char)s[i + 1] == 0xBC &&
                 (unsigned char)s[i + 2] == 0x8C)
            k++;
        else if (b == 0xE3 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                 (unsigned char)s[i + 2] == 0x81)
            k++;
    }
    if (space && c > 0)
        c--; /* trailing space */
    *chars = c;
    *commas = k;
}

/* ---- per page ---------------------------------------------------------------- */

static void page_pass(struct ctx *c)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    char cls[CLASS_MAX];
    for (uint32_t i = 1; i < d->n; i++) {
        const struct xnode *x = &d->nodes[i];
        struct nfo *n = &f[i];
        uint32_t p = x->parent;
        n->link = f[p].link || x->tag == XTAG_a;
        n->owner = f[p].block ? p : f[p].owner;
        n->invisible = f[p].invisible;
        if (x->tag == XTAG_TEXT) {
            measure(d->text.data + x->off, x->len, &n->chars, &n->commas);
            continue;
        }
        n->block = tag_is_block(x->tag);
        if (tag_is_invisible(x->tag) || (x->flags & XN_HIDDEN))
            n->invisible = 1;
        const char *klass = xdom_attr(d, i, XATTR_class, NULL);
        const char *id = xdom_attr(d, i, XATTR_id, NULL);
        int w = 0;
        bool unlikely = false;
        if (klass) {
            lower_into(cls, sizeof cls, klass);
            w += word_weight(cls);
            unlikely = HAS_ANY(cls, unlikely_words) && !HAS_ANY(cls, maybe_words);
        }
        if (id) {
            lower_into(cls, sizeof cls, id);
            w += word_weight(cls);
            unlikely = unlikely || (HAS_ANY(cls, unlikely_words) && !HAS_ANY(cls, maybe_words));
        }
        if (x->tag == XTAG_body || x->tag == XTAG_a || x->tag == XTAG_html)
            unlikely = false;
        /* <nav> says what role="navigation" says */
        if (role_is_boilerplate(xdom_attr(d, i, XATTR_role, NULL)) || x->tag == XTAG_nav)
            unlikely = true;
        n->weight = (int8_t)w;
        n->unlikely = unlikely;
    }
}

/* ---- one attempt --------------------------------------------------------- */

static void candidate_init(struct ctx *c, uint32_t i, unsigned flags)
{
    struct nfo *n = &c->f[i];
    if (n->scored)
        return;
    n->scored = 1;
    n->score = tag_base_score((enum xtag)c->d->nodes[i].tag);
    if (flags & WEIGHT_CLASSES)
        n->score += n->weight;
}

static void score_pass(struct ctx *c, unsigned flags)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    for (uint32_t i = 0; i < d->n; i++) {
        f[i].scored = 0;
        f[i].score = 0;
    }
    for (uint32_t i = 1; i < d->n; i++) {
        const struct xnode *x = &d->nodes[i];
        struct nfo *n = &f[i];
        if (n->gone || x->tag == XTAG_TEXT || !tag_scores((enum xtag)x->tag))
            continue;
        if (n->own < PARAGRAPH_MIN_CHARS)
            continue;
        float worth = 1.0f + (float)n->own_commas + (float)(n->own / 100 < 3 ? n->own / 100 : 3);
        /* A container with blocks inside holds its own text as paragraphs
         * of its own: it is their parent. */
        uint32_t a = tag_div_like((enum xtag)x->tag) && n->has_block ? i : x->parent;
        for (int level = 0; level < SCORE_LEVELS && a != 0; level++) {
            candidate_init(c, a, flags);
            float div = level == 0 ? 1.0f : level == 1 ? 2.0f : (float)level * 3.0f;
            f[a].score += worth / div;
            a = d->nodes[a].parent;
        }
    }
    for (uint32_t i = 1; i < d->n; i++)
        if (f[i].scored)
            f[i].score *= 1.0f - link_density(&f[i]);
}

#define HEADLINE_BONUS 1.2f /* a candidate at the headline: the article is there */

/* The first h1 the attempt keeps that repeats the page's title, or 0. */
static uint32_t find_headline(struct ctx *c)
{
    for (uint32_t i = 1; i < c->d->n; i++)
        if (c->d->nodes[i].tag == XTAG_h1 && !c->f[i].gone && extract_repeats_title(c, i))
            return i;
    return 0;
}

/* A candidate on the headline's branch of the tree (one that holds the
 * headline, or whose parent does: the headline's siblings and its
 * ancestors' children) scores a fifth more: of several blocks of text
 * (a teaser grid, a sidebar's text, a table of names, the next article of
 * an endless scroll) the one by the headline is the article. Narrower
 * (the parent at most a few levels above the headline) did worse on the
 * development set's tuning half. */
static void headline_bonus(struct ctx *c)
{
    const struct xdom *d = c->d;
    uint32_t h = find_headline(c);
    if (h == 0)
        return;
    for (uint32_t i = 1; i < d->n; i++) {
        if (!c->f[i].scored || c->f[i].gone)
            continue;
        uint32_t at = d->nodes[i].parent ? d->nodes[i].parent : i;
        if (h >= at && h < xdom_subtree_end(d, at))
            c->f[i].score *= HEADLINE_BONUS;
    }
}

static bool in_subtree(const struct xdom *d, uint32_t root, uint32_t i, uint32_t end)
{
    (void)d;
    return i >= root && i < end;
}

static uint32_t pick_top(struct ctx *c)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    uint32_t best[ALT_CANDIDATES] = {0};
    for (uint32_t i = 1; i < d->n; i++) {
        if (!f[i].scored || f[i].gone)
            continue;
        for (int k = 0; k < ALT_CANDIDATES; k++) {
            if (best[k] == 0 || f[i].score > f[best[k]].score) {
                memmove(&best[k + 1], &best[k], (ALT_CANDIDATES - 1 - (size_t)k) * sizeof best[0]);
                best[k] = i;
                break;
            }
        }
    }
    uint32_t top = best[0];
    if (top == 0)
        return 0;
    /* Several near-best candidates under one ancestor: the article is
     * split into blocks, take the ancestor. */
    uint32_t alts[ALT_CANDIDATES];
    int n_alts = 0;
    for (int k = 1; k < ALT_CANDIDATES && best[k]; k++)
        if (f[best[k]].score >= f[top].score * ALT_SHARE)
            alts[n_alts++] = best[k];
    if (n_alts >= ALT_MIN_SHARED) {
        for (uint32_t up = d->nodes[top].parent; up != 0; up = d->nodes[up].parent) {
            if (d->nodes[up].tag == XTAG_body || d->nodes[up].tag == XTAG_html)
                break;
            uint32_t end = xdom_subtree_end(d, up);
            int inside = 0;
            for (int k = 0; k < n_alts; k++)
                inside += in_subtree(d, up, alts[k], end);
            if (inside >= ALT_MIN_SHARED) {
                top = up;
                break;
            }
        }
    }
    if (!f[top].scored)
        candidate_init(c, top, 0);
    /* A parent scoring nearly as well holds more of the article. */
    float last = f[top].score;
    float threshold = last / 3.0f;
    for (uint32_t up = d->nodes[top].parent; up != 0; up = d->nodes[up].parent) {
        if (d->nodes[up].tag == XTAG_body || d->nodes[up].tag == XTAG_html)
            break;
        if (!f[up].scored)
            continue;
        if (f[up].score < threshold)
            break;
        if (f[up].score > last) {
            top = up;
            break;
        }
        last = f[up].score;
    }
    /* An only child says nothing its parent does not. */
    for (;;) {
        uint32_t up = d->nodes[top].parent;
        if (up == 0 || d->nodes[up].tag == XTAG_body || d->nodes[up].tag == XTAG_html)
            break;
        int elems = 0;
        for (uint32_t k = d->nodes[up].first; k; k = d->nodes[k].next)
            if (d->nodes[k].tag != XTAG_TEXT && !f[k].gone)
                elems++;
            else if (d->nodes[k].tag == XTAG_TEXT && f[k].chars > 0 && !f[k].gone)
                elems += 2; /* text beside it: not an only child */
        if (elems != 1)
            break;
        top = up;
    }
    return top;
}

/* ---- output ------------------------------------------------------------------ */

/* Text runs in document order; a line break between two runs that belong
 * to different blocks (one was left or entered between them), or with a
 * <br> between them. */
struct render {
    struct buf b;
    bool space;
    bool br;
    uint32_t owner;    /* block of the last run written */
    size_t line_start; /* offset of the last line in b */
    bool line_heading; /* the last line is a heading's */
};

static void render_subtree(struct ctx *c, struct render *r, uint32_t root)
{
    const struct xdom *d = c->d;
    const struct nfo *f = c->f;
    uint32_t end = xdom_subtree_end(d, root);
    for (uint32_t i = root; i < end && r->b.len < EXTRACT_MAX_TEXT; i++) {
        const struct xnode *x = &d->nodes[i];
        if (f[i].gone || f[i].invisible) {
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (x->tag == XTAG_br) {
            r->br = true;
        } else if (x->tag == XTAG_img || x->tag == XTAG_td || x->tag == XTAG_th) {
            r->space = true;
        } else if (x->tag == XTAG_TEXT && f[i].chars == 0) {
            /* white space alone still separates words: "<b>a</b> <i>b</i>" */
            if (x->len > 0)
                r->space = true;
        } else if (x->tag == XTAG_TEXT) {
            if (r->b.len > 0 && (r->br || f[i].owner != r->owner) &&
                r->b.data[r->b.len - 1] != '\n') {
                buf_putc(&r->b, '\n');
                r->space = false;
            }
            if (r->b.len == 0 || r->b.data[r->b.len - 1] == '\n') {
                r->line_start = r->b.len;
                r->line_heading = tag_is_heading((enum xtag)d->nodes[f[i].owner].tag);
            }
            r->br = false;
            r->owner = f[i].owner;
            xtext_fold(&r->b, d->text.data + x->off, x->len, &r->space, EXTRACT_MAX_TEXT);
        }
    }
}

/* ---- attempts ------------------------------------------------------------------ */

/* A sibling without a score joins when it reads like a paragraph. */
static bool sibling_reads_as_text(struct ctx *c, uint32_t i)
{
    const struct nfo *n = &c->f[i];
    enum xtag t = (enum xtag)c->d->nodes[i].tag;
    if (t != XTAG_p && !(tag_div_like(t) && !n->has_block))
        return false;
    float ld = link_density(n);
    if (n->tlen > 80)
        return ld < 0.25f;
    if (n->tlen == 0 || ld > 0)
        return false;
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(c->d, i, &b, 1024);
    bool sentence = b.len > 0 && (b.data[b.len - 1] == '.' || strstr(b.data, ". ") != NULL);
    buf_release(&b);
    return sentence;
}

static bool same_class(const struct xdom *d, uint32_t a, uint32_t b)
{
    const char *x = xdom_attr(d, a, XATTR_class, NULL);
    const char *y = xdom_attr(d, b, XATTR_class, NULL);
    return x && y && x[0] && strcmp(x, y) == 0;
}

static uint32_t find_tag(const struct xdom *d, enum xtag t)
{
    for (uint32_t i = 1; i < d->n; i++)
        if (d->nodes[i].tag == t)
            return i;
    return 0;
}

/* Blocks of 140+ characters (their whole text, hidden parts and all, as a
 * browser's textContent), each visible and not boilerplate by its own
 * class or id. */
static bool readerable_test(struct ctx *c)
{
    const struct xdom *d = c->d;
    const struct nfo *f = c->f;
    double score = 0;
    for (uint32_t i = 1; i < d->n; i++) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        bool take = t == XTAG_p || t == XTAG_pre || t == XTAG_article;
        if (!take && t == XTAG_div) {
            for (uint32_t k = d->nodes[i].first; k && !take; k = d->nodes[k].next)
                take = d->nodes[k].tag == XTAG_br;
        }
        if (!take || (d->nodes[i].flags & XN_HIDDEN) || f[i].unlikely)
            continue;
        if (t == XTAG_p && extract_has_ancestor_tag(d, i, XTAG_li, 64))
            continue;
        if (f[i].tlen < READERABLE_MIN_CHARS)
            continue;
        score += sqrt((double)(f[i].tlen - READERABLE_MIN_CHARS));
        if (score > READERABLE_MIN_SCORE)
            return true;
    }
    return false;
}

/* One attempt: the picked subtrees into *pk, their text into out. */
static int attempt(struct ctx *c, unsigned flags, struct pick *pk, struct buf *out,
                   bool *readerable)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    if (readerable) {
        for (uint32_t i = 0; i < d->n; i++)
            f[i].gone = 0;
        extract_sum_pass(c);
        *readerable = readerable_test(c);
        c->page_links = link_density(&f[0]);
    }
    extract_attempt_pass(c, flags);
    score_pass(c, flags);
    headline_bonus(c);
    uint32_t top = pick_top(c);
    pk->n = 0;
    if (top == 0) {
        top = find_tag(d, XTAG_body);
        if (top == 0 || f[top].gone)
            top = 0;
        pk->nodes[pk->n++] = top;
    } else {
        uint32_t parent = d->nodes[top].parent;
        float threshold = f[top].score * 0.2f;
        if (threshold < 10)
            threshold = 10;
        for (uint32_t s = d->nodes[parent].first; s; s = d->nodes[s].next) {
            if (d->nodes[s].tag == XTAG_TEXT || f[s].gone)
                continue;
            bool take = s == top;
            if (!take) {
                float bonus = same_class(d, s, top) ? f[top].score * 0.2f : 0;
                if (f[s].scored && f[s].score + bonus >= threshold)
                    take = true;
                else
                    take = sibling_reads_as_text(c, s);
            }
            if (take)
                pk->nodes[pk->n++] = s;
        }
    }
    for (uint32_t k = 0; k < pk->n; k++)
        extract_clean_pass(c, pk->nodes[k], xdom_subtree_end(d, pk->nodes[k]), flags);
    struct render r = {.b = BUF_INIT};
    buf_init(&r.b, EXTRACT_MAX_TEXT + 8);
    for (uint32_t k = 0; k < pk->n; k++)
        render_subtree(c, &r, pk->nodes[k]);
    /* a heading that ends the text heads what cleaning dropped ("More from
     * the channel", "Upcoming events"): nothing of the article follows it */
    if (r.line_heading && r.line_start > 0 && r.b.len < EXTRACT_MAX_TEXT) {
        r.b.len = r.line_start;
        r.b.data[r.b.len] = '\0';
    }
    /* a break written just before the bound cut the text */
    while (r.b.len > 0 && (r.b.data[r.b.len - 1] == '\n' || r.b.data[r.b.len - 1] == ' '))
        r.b.data[--r.b.len] = '\0';
    if (buf_error(&r.b) == ERR_NOMEM) {
        buf_release(&r.b);
        return ERR_NOMEM;
    }
    buf_reset(out);
    buf_append(out, r.b.data ? r.b.data : "", r.b.len);
    buf_release(&r.b);
    return buf_error(out) == ERR_NOMEM ? ERR_NOMEM : 0;
}

/* First image of the picked text, as an absolute URL. */
static char *lead_image(struct ctx *c, const struct pick *pk, const char *base)
{
    static const enum xattr srcs[] = {XATTR_src, XATTR_data_src, XATTR_data_original,
                                      XATTR_data_lazy_src};
    const struct xdom *d = c->d;
    for (uint32_t k = 0; k < pk->n; k++) {
        uint32_t end = xdom_subtree_end(d, pk->nodes[k]);
        for (uint32_t i = pk->nodes[k]; i < end; i++) {
            if (d->nodes[i].tag != XTAG_img || c->f[i].gone)
                continue;
            const char *w = xdom_attr(d, i, XATTR_width, NULL);
            const char *h = xdom_attr(d, i, XATTR_height, NULL);
            if ((w && (strcmp(w, "1") == 0 || strcmp(w, "0") == 0)) ||
                (h && (strcmp(h, "1") == 0 || strcmp(h, "0") == 0)))
                continue;
            for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
                size_t n = 0;
                const char *v = xdom_attr(d, i, srcs[s], &n);
                char *u = v ? xmeta_url(c->a, v, n, base) : NULL;
                if (u)
                    return u;
            }
        }
    }
    return NULL;
}

/* The first paragraph of the picked text (a <p>, or a container of
 * inline content only), one line. */
static char *first_paragraph(struct ctx *c, const struct pick *pk)
{
    const struct xdom *d = c->d;
    for (uint32_t k = 0; k < pk->n; k++) {
        uint32_t end = xdom_subtree_end(d, pk->nodes[k]);
        for (uint32_t i = pk->nodes[k]; i < end; i++) {
            enum xtag t = (enum xtag)d->nodes[i].tag;
            bool para = t == XTAG_p || (tag_div_like(t) && !c->f[i].has_block);
            if (!para || c->f[i].gone || c->f[i].tlen == 0)
                continue;
            struct buf b;
            buf_init(&b, 0);
            xdom_text_line(d, i, &b, EXTRACT_MAX_FIELD);
            char *s =
                b.len ? xtext_clean(c->a, b.data, b.len, EXTRACT_MAX_FIELD, false, &c->rc) : NULL;
            buf_release(&b);
            if (s)
                return s;
        }
    }
    return NULL;
}

/* ---- the lead ----------------------------------------------------------------- */

#define LEAD_MATCH_BYTES 80      /* folded bytes of the description compared */
#define LEAD_MIN_BYTES 30        /* a shorter description says too little to match */
#define LEAD_MAX_CHARS_TEXT 1500 /* a lead is a paragraph, not a page */

/* Folded a starts with folded b's first LEAD_MATCH_BYTES bytes (or all of
 * b when shorter). */
static bool folded_starts(const struct buf *a, const struct buf *b)
{
    size_t n = b->len < LEAD_MATCH_BYTES ? b->len : LEAD_MATCH_BYTES;
    return a->len >= n && memcmp(a->data, b->data, n) == 0;
}

/* The lead paragraph (the dek, the standfirst) sits above the article's
 * body in a container of its own, which scoring seldom joins: the page's
 * description often says it word for word. When the main text does not
 * hold the description's start, the last visible paragraph before the
 * main text that starts with it is put before it. Returns the node, or 0. */
static uint32_t lead_before(struct ctx *c, const struct pick *pk, const char *desc,
                            const char *text)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    if (!desc || pk->n == 0 || pk->nodes[0] == 0)
        return 0;
    struct buf want, got, line;
    buf_init(&want, 0);
    buf_init(&got, 0);
    buf_init(&line, 0);
    extract_squash(&want, desc);
    uint32_t found = 0;
    if (want.len < LEAD_MIN_BYTES || buf_error(&want))
        goto out;
    if (want.len > LEAD_MATCH_BYTES)
        want.data[want.len = LEAD_MATCH_BYTES] = '\0';
    extract_squash(&got, text);
    if (buf_error(&got) || (got.data && strstr(got.data, want.data)))
        goto out; /* the main text has it already */
    extract_attempt_pass(c, 0);
    uint32_t first = pk->nodes[0];
    for (uint32_t i = 1; i < first; i++) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (f[i].gone) {
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        bool para = t == XTAG_p || (tag_is_heading(t) && t != XTAG_h1) ||
                    (tag_div_like(t) && !f[i].has_block);
        if (!para || f[i].tlen < LEAD_MIN_BYTES || f[i].tlen > LEAD_MAX_CHARS_TEXT ||
            xdom_subtree_end(d, i) > first)
            continue;
        buf_reset(&line);
        buf_reset(&got);
        xdom_text_line(d, i, &line, 1024);
        extract_squash(&got, line.data);
        if (!buf_error(&got) && folded_starts(&got, &want))
            found = i;
        i = xdom_subtree_end(d, i) - 1;
    }
out:
    buf_release(&want);
    buf_release(&got);
    buf_release(&line);
    return found;
}

#define LEAD_MAX_GAP_CHARS 300 /* a headline, a byline, a date between it and the body */

/* A class or id word that marks a lead: "intro", "lead", "leader",
 * "chapo" (French), "standfirst", "teaser", "summary", "excerpt",
 * "abstract". */
static bool marks_lead(const char *v)
{
    static const char *const words[] = {"intro",  "lead",    "chapo",   "standfirst",
                                        "teaser", "summary", "excerpt", "abstract"};
    char low[CLASS_MAX];
    lower_into(low, sizeof low, v);
    return low[0] && HAS_ANY(low, words);
}

/* Characters of visible text in nodes [from, to), at most cap. */
static uint32_t text_between(const struct ctx *c, uint32_t from, uint32_t to, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = from; i < to && n <= cap; i++) {
        if (c->f[i].gone) {
            i = xdom_subtree_end(c->d, i) - 1;
            continue;
        }
        if (c->d->nodes[i].tag == XTAG_TEXT)
            n += c->f[i].chars;
    }
    return n;
}

/* A lead no description announces: the page marks it by its class or id
 * instead (docs/extraction.md, "the lead"). The last visible element so
 * marked before the main text, of paragraph size, mostly not links, with
 * no heading of its own, and right above the body: at most a headline,
 * a byline and a date between them (a teaser further up is another
 * article's). Its text must not be in the main text already. Call after
 * lead_before, whose attempt pass it relies on. Returns the node, or 0. */
static uint32_t lead_by_class(struct ctx *c, const struct pick *pk, const char *text)
{
    const struct xdom *d = c->d;
    const struct nfo *f = c->f;
    if (pk->n == 0 || pk->nodes[0] == 0)
        return 0;
    uint32_t first = pk->nodes[0], found = 0;
    for (uint32_t i = 1; i < first; i++) {
        if (f[i].gone) {
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (d->nodes[i].tag == XTAG_TEXT || xdom_subtree_end(d, i) > first)
            continue;
        if (!marks_lead(xdom_attr(d, i, XATTR_class, NULL)) &&
            !marks_lead(xdom_attr(d, i, XATTR_id, NULL)))
            continue;
        if (f[i].tlen >= LEAD_MIN_BYTES && f[i].tlen <= LEAD_MAX_CHARS_TEXT && f[i].htext == 0 &&
            link_density(&f[i]) < 0.5f) {
            found = i;
            i = xdom_subtree_end(d, i) - 1; /* the outermost marked element that fits */
        }
    }
    if (!found ||
        text_between(c, xdom_subtree_end(d, found), first, LEAD_MAX_GAP_CHARS) > LEAD_MAX_GAP_CHARS)
        return 0;
    struct buf line, want, got;
    buf_init(&line, 0);
    buf_init(&want, 0);
    buf_init(&got, 0);
    xdom_text_line(d, found, &line, 1024);
    extract_squash(&want, line.data);
    if (want.len > LEAD_MATCH_BYTES)
        want.data[want.len = LEAD_MATCH_BYTES] = '\0';
    extract_squash(&got, text);
    if (buf_error(&want) || buf_error(&got) || want.len == 0 ||
        (got.data && strstr(got.data, want.data)))
        found = 0; /* the main text has it already */
    buf_release(&line);
    buf_release(&want);
    buf_release(&got);
    return found;
}

/* text with the lead node's text and a line break before it. */
static char *with_lead(struct ctx *c, uint32_t lead, const char *text, size_t *len)
{
    struct render r = {.b = BUF_INIT};
    buf_init(&r.b, 0);
    render_subtree(c, &r, lead);
    while (r.b.len > 0 && (r.b.data[r.b.len - 1] == '\n' || r.b.data[r.b.len - 1] == ' '))
        r.b.data[--r.b.len] = '\0';
    char *s = NULL;
    if (r.b.len > 0 && r.b.len + 1 + *len <= EXTRACT_MAX_TEXT) {
        buf_putc(&r.b, '\n');
        buf_append(&r.b, text, *len);
        if (!buf_error(&r.b)) {
            s = arena_strndup(c->a, r.b.data, r.b.len);
            if (s)
                *len = r.b.len;
        }
    }
    buf_release(&r.b);
    return s;
}

int extract_page(struct arena *a, const char *page, size_t len, const struct extract_options *opt,
                 struct extracted_page *out)
{
    static const unsigned tries[] = {STRIP_UNLIKELY | WEIGHT_CLASSES | CLEAN_CONDITIONALLY,
                                     WEIGHT_CLASSES | CLEAN_CONDITIONALLY, CLEAN_CONDITIONALLY, 0};
    struct xdom d = {0};
    struct ctx c = {0};
    struct pick pk = {0};
    struct buf text, best;
    const char *html = NULL;
    char *html_owned = NULL;
    size_t html_len = 0;
    const char *base = NULL;
    enum xmeta_kind kind = XMETA_UNDECLARED;
    int rc;
    memset(out, 0, sizeof *out);
    buf_init(&text, 0);
    buf_init(&best, 0);
    if (len > EXTRACT_MAX_INPUT)
        len = EXTRACT_MAX_INPUT;
    rc = xdom_to_utf8(page, len, opt ? opt->charset : NULL, &html, &html_len, &html_owned);
    if (rc < 0)
        goto out;
    d.a = a;
    rc = xdom_build(&d, html, html_len);
    if (rc < 0)
        goto out;
    rc = xmeta_read(&d, a, opt ? opt->url : NULL, out, &base, &kind);
    if (rc < 0)
        goto out;

    rc = ERR_NOMEM;
    c = (struct ctx){.d = &d, .a = a, .title = out->title};
    c.f = calloc(d.n, sizeof *c.f);
    pk.nodes = calloc(d.n, sizeof *pk.nodes);
    if (!c.f || !pk.nodes)
        goto out;
    c.f[0].block = 1;
    page_pass(&c);
    /* a publisher in the metadata's author field gives way to a writer the
     * page names */
    char *writer =
        extract_byline_over(&c, out->byline, opt ? opt->url : NULL, out->site_name, out->excerpt);
    if (writer)
        out->byline = writer;
    size_t best_try = 0, best_chars = 0;
    for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
        rc = attempt(&c, tries[t], &pk, &text, t == 0 ? &out->readerable : NULL);
        if (rc < 0)
            goto out;
        size_t chars = utf8_count(text.data ? text.data : "", text.len);
        if (t == 0 || text.len > best.len) {
            buf_reset(&best);
            buf_append(&best, text.data ? text.data : "", text.len);
            best_try = t;
            best_chars = chars;
        }
        if (chars >= RETRY_BELOW_CHARS)
            break;
    }
    if (buf_error(&best)) {
        rc = ERR_NOMEM;
        goto out;
    }
    /* The picked nodes of the winning attempt, for the image and excerpt. */
    rc = attempt(&c, tries[best_try], &pk, &text, NULL);
    if (rc < 0)
        goto out;
    rc = ERR_NOMEM;
    out->text = arena_strndup(a, best.data ? best.data : "", best.len);
    if (!out->text)
        goto out;
    out->text_len = best.len;
    out->readerable =
        extract_page_is_article(&c, &pk, kind, opt ? opt->url : NULL, out->readerable, best_chars);
    if (!out->image)
        out->image = lead_image(&c, &pk, base);
    const char *desc = out->excerpt;
    if (!out->excerpt)
        out->excerpt = first_paragraph(&c, &pk);
    if (out->readerable) {
        uint32_t lead = lead_before(&c, &pk, desc, out->text);
        if (!lead) {
            extract_attempt_pass(&c, 0);
            lead = lead_by_class(&c, &pk, out->text);
        }
        char *t = lead ? with_lead(&c, lead, out->text, &out->text_len) : NULL;
        if (t)
            out->text = t;
    }
    rc = c.rc;
out:
    free(c.f);
    free(pk.nodes);
    free(html_owned);
    buf_release(&text);
    buf_release(&best);
    xdom_release(&d);
    return rc;
}
