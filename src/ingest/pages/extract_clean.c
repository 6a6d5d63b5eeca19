/* Inside what an attempt picked (ingest/pages/extract_passes.h): lists,
 * tables, forms and divs that look like boilerplate (many links, few
 * paragraphs, more images or inputs than text, negative class) dropped,
 * inner ones first; headings that repeat the title, share bars, photo
 * captions, author boxes and other lines too (step 4 of extract.c's
 * passes). */
#include <stdint.h>
#include <string.h>

#include "ingest/pages/extract_passes.h"
#include "util/ascii.h"

#include "util/banned.h"

/* ---- cleaning ------------------------------------------------------------- */

/* Take node i's sums off its ancestors, and mark it gone. */
static void remove_node(struct ctx *c, uint32_t i)
{
    struct nfo *f = c->f;
    struct nfo *n = &f[i];
    for (uint32_t up = c->d->nodes[i].parent; up != 0; up = c->d->nodes[up].parent) {
        struct nfo *u = &f[up];
        u->tlen -= n->tlen;
        u->llen -= n->llen;
        u->ncommas -= n->ncommas;
        u->p -= n->p;
        u->img -= n->img;
        u->li -= n->li;
        u->input -= n->input;
        u->embed -= n->embed;
        u->htext -= n->htext;
        u->quote -= n->quote;
    }
    n->gone = 1;
}

/* Remove node i and mark what is below it gone too, so that a later
 * look at one of them does not take its sums off a second time. */
static void remove_subtree(struct ctx *c, uint32_t i)
{
    remove_node(c, i);
    uint32_t end = xdom_subtree_end(c->d, i);
    for (uint32_t k = i + 1; k < end; k++)
        c->f[k].gone = 1;
}

bool extract_has_ancestor_tag(const struct xdom *d, uint32_t i, enum xtag t, int max_up)
{
    for (uint32_t up = d->nodes[i].parent; up != 0 && max_up-- > 0; up = d->nodes[up].parent)
        if (d->nodes[up].tag == t)
            return true;
    return false;
}

/* A table of data (not layout): a caption, headers, or many cells. */
static bool is_data_table(const struct xdom *d, uint32_t i, uint32_t end)
{
    uint32_t rows = 0, cells = 0;
    for (uint32_t k = i + 1; k < end; k++) {
        enum xtag t = (enum xtag)d->nodes[k].tag;
        if (t == XTAG_caption || t == XTAG_th || t == XTAG_thead)
            return true;
        if (t == XTAG_table)
            return false;
        rows += t == XTAG_tr;
        cells += t == XTAG_td;
    }
    return rows >= 10 || cells > 4 * rows + 0 || (rows > 1 && cells / (rows ? rows : 1) >= 4);
}

#define PROSE_MIN_COMMAS 10 /* a block of sentences, not a list of links or labels */

/* Node i reads as prose (commas, few links) and holds more than half of
 * the picked text under root: the article itself, whatever its class
 * says ("o-media", a "field--label-hidden" wrapper). */
static bool holds_the_article(const struct ctx *c, uint32_t i, uint32_t root)
{
    const struct nfo *n = &c->f[i];
    return n->ncommas >= PROSE_MIN_COMMAS && link_density(n) < 0.2f &&
           n->tlen * 2 > c->f[root].tlen;
}

static bool conditional_removes(struct ctx *c, uint32_t i, uint32_t root, unsigned flags)
{
    const struct xdom *d = c->d;
    const struct nfo *n = &c->f[i];
    enum xtag t = (enum xtag)d->nodes[i].tag;
    if (t == XTAG_table && is_data_table(d, i, xdom_subtree_end(d, i)))
        return false;
    if (extract_has_ancestor_tag(d, i, XTAG_table, 64) && t != XTAG_table && t != XTAG_ul &&
        t != XTAG_ol)
        return false; /* inside a table kept as data */
    if (t == XTAG_pre || extract_has_ancestor_tag(d, i, XTAG_pre, 64) ||
        extract_has_ancestor_tag(d, i, XTAG_code, 8))
        return false;
    int weight = (flags & WEIGHT_CLASSES) ? n->weight : 0;
    float score = n->scored ? n->score : 0;
    /* a list starts below zero by its tag (tag_base_score); one of hardly
     * any links (a recipe's steps, an FAQ's answers) is not dropped for
     * that alone, only for its class */
    if ((t == XTAG_ul || t == XTAG_ol) && link_density(n) < 0.1f && score < 0)
        score = 0;
    if ((float)weight + score < 0 && !holds_the_article(c, i, root))
        return true;
    if (n->ncommas >= PROSE_MIN_COMMAS)
        return false;
    /* an embedded tweet or a quote in its wrapper: the article quotes it */
    if (n->quote > 0 && link_density(n) < 0.5f)
        return false;
    bool is_list = t == XTAG_ul || t == XTAG_ol;
    float ld = link_density(n);
    uint32_t len = n->tlen;
    int li = (int)n->li - 100;
    bool figure = extract_has_ancestor_tag(d, i, XTAG_figure, 8);
    float heading_density = len ? (float)n->htext / (float)len : 0;
    if (n->img > 1 && (float)n->p / (float)n->img < 0.5f && !figure)
        return true;
    if (!is_list && li > (int)n->p)
        return true;
    if (n->input > n->p / 3)
        return true;
    if (!is_list && heading_density < 0.9f && len < 25 && (n->img == 0 || n->img > 2) && !figure)
        return true;
    if (!is_list && weight < 25 && ld > 0.2f)
        return true;
    if (weight >= 25 && ld > 0.5f)
        return true;
    if ((n->embed == 1 && len < 75) || n->embed > 1)
        return true;
    return false;
}

/* Fold a string for comparisons: lower ASCII, letters and digits only. */
void extract_squash(struct buf *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ascii_is_upper((char)ch))
            buf_putc(out, ascii_lower((char)ch));
        else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch >= 0x80)
            buf_putc(out, (char)ch);
    }
}

/* A heading that says what the title says (extract_passes.h). */
bool extract_repeats_title(struct ctx *c, uint32_t i)
{
    if (!c->title)
        return false;
    struct buf h, t, sq;
    buf_init(&h, 0);
    buf_init(&t, 0);
    buf_init(&sq, 0);
    xdom_text_line(c->d, i, &h, 1024);
    extract_squash(&sq, h.data);
    extract_squash(&t, c->title);
    bool same = false;
    if (sq.len > 0 && t.len > 0 && !buf_error(&sq) && !buf_error(&t)) {
        size_t a = sq.len, b = t.len;
        const char *big = a >= b ? sq.data : t.data, *small = a >= b ? t.data : sq.data;
        size_t lo = a < b ? a : b, hi = a < b ? b : a;
        same = strstr(big, small) != NULL && (float)lo / (float)hi >= 0.75f;
    }
    buf_release(&h);
    buf_release(&t);
    buf_release(&sq);
    return same;
}

#define LINE_MAX_CHARS 200        /* a boilerplate line is short */
#define CREDIT_MAX_CHARS 120      /* a photo credit, a copyright line */
#define LEAD_MAX_CHARS 60         /* "Read more:" alone leads what follows it */
#define LINK_PARAGRAPH_SHARE 0.8f /* a <p> this much link text is a pointer */

/* Node i's text shows a web or mail address ("http://www.openpetition.de",
 * "name@example.org"): a link the article gives as information, not a
 * pointer to another page of the site. */
static bool shows_an_address(struct ctx *c, uint32_t i)
{
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(c->d, i, &b, 512);
    bool address = b.len > 0 && !buf_error(&b) &&
                   (strchr(b.data, '@') || strstr(b.data, "://") || strstr(b.data, "www."));
    buf_release(&b);
    return address;
}

/* How a short line of the page starts when it is no part of the article:
 * pointers to other articles, the footer's asks, tag lists. Lower case;
 * ASCII case is folded, other letters are written both ways. */
static const char *const other_lines[] = {
    "read more", "read also", "related", "see also", "don't miss", "don\u2019t miss",
    "you might also like", "you may also like", "more from", "more on this", "recommended",
    "lea también", "lea más", "lea:", "lee también", "leer más", "lire aussi", "à lire aussi",
    "\u00c0 lire aussi", "a lire aussi", "voir aussi", "lesen sie auch", "lesen sie hier",
    "lesen sie mehr", "auch interessant", "das könnte sie auch", "das könnte dich auch",
    "mehr zum thema", "zum weiterlesen", "weiterlesen", "schon gelesen", "auch lesen", "auch auf ",
    "ähnliche artikel", "\u00c4hnliche artikel", "weitere artikel", "neueste artikel",
    "entdecke weitere", "czytaj też", "czytaj także", "zobacz też", "zobacz także",
    "przeczytaj też", "about the author", "über den autor", "über die autorin",
    "\u00dcber den autor", "\u00dcber die autorin", "sign up for", "subscribe to our", "newsletter",
    "have a tip", "got a tip", "kommentar verfassen", "kommentieren", "wird geladen",
    "war der artikel", "möchten sie den artikel", "share this", "diesen artikel teilen",
    "tags:", "schlagwörter", "schlagworte", "stichwörter", "etiquetas:", "tagi:", "mots-clés",
    "filed under", "posted in", "kategorie:", "categories:", "alle angaben ohne gewähr",
    /* more pointers to other articles, by language */
    "related articles", "related posts", "more stories", "siehe auch", "verwandte artikel",
    "verwandte beiträge", "empfohlene beiträge", "weitere beiträge", "mehr themen",
    "kommentierte artikel", "meistgelesen", "das thema könnte", "diese artikel könnten",
    "das könnte dich", "noticias relacionadas", "notas relacionadas", "vea también",
    "le puede interesar", "te puede interesar", "también te puede", "puedes ver:", "lire la suite",
    "à voir aussi", "\u00c0 voir aussi", "sur le même sujet", "czytaj więcej", "czytaj również",
    "przeczytaj również", "zobacz również",
    /* the footer's asks: follow, subscribe, log in to comment */
    "subscribe now", "never miss", "get the latest", "to view the full story",
    "you must be logged in", "du musst eingeloggt", "sie sind aktuell nicht eingeloggt",
    "sie müssen angemeldet", "weitere informationen:", "quellenangaben", "autoren:"};

/* A short line that credits a photo or holds the copyright. */
static const char *const credit_lines[] = {"©",
                                           "(c) ",
                                           "copyright",
                                           "foto:",
                                           "fotos:",
                                           "photo:",
                                           "photos:",
                                           "bild:",
                                           "bilder:",
                                           "titelbild:",
                                           "image:",
                                           "credit:",
                                           "photo credit",
                                           "bildquelle",
                                           "quelle:",
                                           "source:",
                                           "fuente:",
                                           "beitragsbild",
                                           "bildnachweis",
                                           "bild via",
                                           "crédits photo",
                                           "crédit photo",
                                           "crédito:",
                                           "(crédito",
                                           "foto via",
                                           "photo via"};

/* s starts with one of list; when long, only with a label (the phrase
 * then a ':', "Read more: ...") and not with a sentence ("Related to the
 * plan, ..."). */
static bool starts_any(const char *s, const char *const *list, size_t n, bool long_line)
{
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(list[k]);
        if (strncmp(s, list[k], len) != 0)
            continue;
        if (!long_line || list[k][len - 1] == ':' || s[len] == ':' ||
            (s[len] == ' ' && s[len + 1] == ':'))
            return true;
    }
    return false;
}

/* Element i is a short line that is no part of the article (docs/
 * extraction.md, "Lines that are not the article"). */
static bool is_other_line(struct ctx *c, uint32_t i)
{
    uint32_t len = c->f[i].tlen;
    if (len == 0 || len > LINE_MAX_CHARS)
        return false;
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(c->d, i, &b, 96);
    bool other = false;
    if (b.len > 0 && !buf_error(&b)) {
        ascii_lower_str(b.data);
        bool long_line = len > LEAD_MAX_CHARS;
        other =
            starts_any(b.data, other_lines, sizeof other_lines / sizeof other_lines[0],
                       long_line) ||
            (len <= CREDIT_MAX_CHARS &&
             starts_any(b.data, credit_lines, sizeof credit_lines / sizeof credit_lines[0], false));
    }
    buf_release(&b);
    return other;
}

/* The element after i, when it is what a lead line ("Related:") leads: a
 * list, or mostly links. */
static uint32_t led_by(struct ctx *c, uint32_t i)
{
    if (c->f[i].tlen > LEAD_MAX_CHARS)
        return 0;
    uint32_t k = c->d->nodes[i].next;
    while (k && c->d->nodes[k].tag == XTAG_TEXT && c->f[k].chars == 0)
        k = c->d->nodes[k].next;
    if (!k || c->d->nodes[k].tag == XTAG_TEXT || c->f[k].gone)
        return 0;
    enum xtag t = (enum xtag)c->d->nodes[k].tag;
    return t == XTAG_ul || t == XTAG_ol || link_density(&c->f[k]) > 0.5f ? k : 0;
}

#define CAPTION_MAX_CHARS 300 /* a caption is a line or two, not a paragraph block */
#define CAPTION_MAX_UP 4      /* levels from a caption up to what shows the photo */

/* What holds the photo a caption captions: its figure (a figcaption), or
 * for a caption its class names ("wp-caption-text", "media__caption") or
 * a figcaption outside any figure, the nearest of its ancestors (a few
 * levels up) that shows an image. 0 when none. */
static uint32_t captioned(struct ctx *c, uint32_t i)
{
    const struct xdom *d = c->d;
    uint32_t up = d->nodes[i].parent;
    for (int k = 0; up && k < CAPTION_MAX_UP; k++, up = d->nodes[up].parent)
        if (d->nodes[up].tag == XTAG_figure)
            return up;
    up = d->nodes[i].parent;
    for (int k = 0; up && k < CAPTION_MAX_UP; k++, up = d->nodes[up].parent)
        if (c->f[up].img > 0)
            return up;
    return 0;
}

/* A caption of a figure that shows a photo (an image, no video): the
 * article does not rely on it. A video's caption often says what the
 * article does not, and stays. */
static bool is_photo_caption(struct ctx *c, uint32_t i)
{
    const struct xdom *d = c->d;
    uint32_t fig = captioned(c, i);
    if (!fig)
        return false;
    bool image = false;
    uint32_t end = xdom_subtree_end(d, fig);
    for (uint32_t k = fig + 1; k < end; k++) {
        enum xtag t = (enum xtag)d->nodes[k].tag;
        if (t == XTAG_video || t == XTAG_iframe || t == XTAG_object || t == XTAG_embed ||
            t == XTAG_audio)
            return false;
        image = image || t == XTAG_img || t == XTAG_picture;
    }
    return image;
}

/* A line whose class says it is a caption ("wp-caption-text",
 * "media__caption"), short. */
static bool names_caption(struct ctx *c, uint32_t i)
{
    const char *k = xdom_attr(c->d, i, XATTR_class, NULL);
    return k && c->f[i].tlen <= CAPTION_MAX_CHARS && xtext_has_ci(k, "caption");
}

/* A short block whose class or id says it is a note beside the article:
 * a photo's credit, a disclaimer, a rating widget, a copyright line, a
 * box of links or a call to action ("cta": a seminar, an app, a letter
 * to the editor). */
static bool names_side_note(struct ctx *c, uint32_t i)
{
    static const char *const words[] = {"credit",    "disclaimer", "rating",
                                        "copyright", "linkbox",    "cta"};
    if (c->f[i].tlen > CAPTION_MAX_CHARS)
        return false;
    const char *k = xdom_attr(c->d, i, XATTR_class, NULL);
    const char *id = xdom_attr(c->d, i, XATTR_id, NULL);
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if ((k && xtext_has_ci(k, words[w])) || (id && xtext_has_ci(id, words[w])))
            return true;
    return false;
}

static bool tag_is_line(enum xtag t)
{
    return t == XTAG_p || t == XTAG_div || t == XTAG_li || t == XTAG_figcaption ||
           t == XTAG_section || t == XTAG_aside || t == XTAG_span || t == XTAG_strong ||
           t == XTAG_b || t == XTAG_em || (tag_is_heading(t) && t != XTAG_h1);
}

#define AUTHOR_BOX_MAX_CHARS 1500 /* a bio, not an article that names its author box */

/* A class or id that marks the box about the author at the article's end
 * (a photo, a bio, links to their other articles): "author-box",
 * "AuthorBox", "author_bio", "about-author", "author-info",
 * "author-description", WordPress's Simple Author Box "saboxplugin-wrap".
 * Separators and case aside. */
static bool names_author_box(const char *v)
{
    static const char *const words[] = {"authorbox",   "authorbio",         "authorinfo",
                                        "aboutauthor", "authordescription", "authorcard",
                                        "autorbox",    "autorinfo",         "saboxplugin"};
    char folded[CLASS_MAX];
    size_t k = 0;
    for (; v && *v && k + 1 < sizeof folded; v++)
        if (*v != '-' && *v != '_')
            folded[k++] = ascii_lower(*v);
    folded[k] = '\0';
    return k > 0 && HAS_ANY(folded, words);
}

static bool is_author_box(struct ctx *c, uint32_t i)
{
    if (c->f[i].tlen > AUTHOR_BOX_MAX_CHARS)
        return false;
    return names_author_box(xdom_attr(c->d, i, XATTR_class, NULL)) ||
           names_author_box(xdom_attr(c->d, i, XATTR_id, NULL));
}

void extract_clean_pass(struct ctx *c, uint32_t root, uint32_t end, unsigned flags)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    bool title_seen = false;
    /* a removed subtree is skipped whole: its nodes' sums are off its
     * ancestors already */
    for (uint32_t i = root; i < end; i++) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (f[i].gone || t == XTAG_TEXT)
            continue;
        if ((t == XTAG_h1 || t == XTAG_h2) && !title_seen && extract_repeats_title(c, i)) {
            title_seen = true;
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if ((t == XTAG_h1 || t == XTAG_h2) && (flags & WEIGHT_CLASSES) && f[i].weight < 0) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (t == XTAG_footer || t == XTAG_aside || t == XTAG_nav || t == XTAG_form ||
            t == XTAG_fieldset) {
            if (i != root) {
                remove_subtree(c, i);
                i = xdom_subtree_end(d, i) - 1;
            }
            continue;
        }
        if (i != root && is_author_box(c, i)) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (i != root && (t == XTAG_figcaption || (tag_is_line(t) && names_caption(c, i))) &&
            is_photo_caption(c, i)) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (i != root && tag_is_line(t) && names_side_note(c, i)) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        if (i != root && tag_is_line(t) && is_other_line(c, i)) {
            uint32_t k = led_by(c, i);
            if (k)
                remove_subtree(c, k);
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        /* a paragraph of links (four fifths) points elsewhere: a related
         * headline, a forum thread, "Bilder des Treffens"; the dev set's
         * annotators leave these out wherever they sit */
        if (i != root && t == XTAG_p && f[i].tlen > 0 &&
            (float)f[i].llen >= LINK_PARAGRAPH_SHARE * (float)f[i].tlen &&
            !shows_an_address(c, i)) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
        const char *klass = xdom_attr(d, i, XATTR_class, NULL);
        const char *id = xdom_attr(d, i, XATTR_id, NULL);
        if (i != root && f[i].tlen < 500 &&
            ((klass && (xtext_has_ci(klass, "share") || xtext_has_ci(klass, "sharedaddy"))) ||
             (id && xtext_has_ci(id, "share")))) {
            remove_subtree(c, i);
            i = xdom_subtree_end(d, i) - 1;
            continue;
        }
    }
    if (!(flags & CLEAN_CONDITIONALLY))
        return;
    /* Inner ones first, as their removal changes their parents' sums. */
    for (uint32_t i = end; i-- > root;) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        if (f[i].gone || i == root)
            continue;
        if (t != XTAG_table && t != XTAG_ul && t != XTAG_ol && t != XTAG_div && t != XTAG_section &&
            t != XTAG_header && t != XTAG_form && t != XTAG_fieldset)
            continue;
        bool ancestor_gone = false;
        for (uint32_t up = d->nodes[i].parent; up != 0 && up >= root; up = d->nodes[up].parent)
            if (f[up].gone) {
                ancestor_gone = true;
                break;
            }
        if (!ancestor_gone && conditional_removes(c, i, root, flags))
            remove_node(c, i);
    }
}
