/* The byline a page's text shows (ingest/pages/extract_passes.h:
 * extract_byline_of_page, extract_byline_over): an element whose class or
 * rel says author or byline, outside comments and widgets, else a line led
 * by a label ("By", "Von", ...) or a date that reads as names, else a link
 * to the author's page whose slug names its text, else the poster beside
 * an avatar, else a name signed under the text; the site's own name only
 * where the site is named after its host; and whether the metadata's
 * author is a publisher, a desk or a login that such a line replaces
 * (docs/extraction.md "Author"). */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/extract_passes.h"

#include "util/ascii.h"
#include "util/banned.h"
#include "util/urlview.h"

#define BYLINE_MAX_CHARS 100
#define BYLINE_MAX_UP 64 /* ancestors looked at for a comment or widget */

/* The names in the author's line line[0..n), or NULL. */
static char *byline_names_of(struct ctx *c, const char *line, size_t n, const char *site)
{
    char *s = n ? xtext_clean(c->a, line, n, EXTRACT_MAX_FIELD, false, &c->rc) : NULL;
    return xmeta_byline_clean(c->a, s, site, &c->rc);
}

/* The names in the author's line from node from, or NULL. */
static char *byline_names(struct ctx *c, uint32_t from, const char *site)
{
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(c->d, from, &b, EXTRACT_MAX_FIELD);
    char *s = buf_error(&b) ? NULL : byline_names_of(c, b.data, b.len, site);
    buf_release(&b);
    return s;
}

/* The nodes [from, end) of the author's line found, which leave the main
 * text once the line is taken (extract_byline_over may still refuse it);
 * empty when the line stays in the text. */
struct byline_nodes {
    uint32_t from, end;
};

/* The author's line when the metadata has none: the first visible element
 * outside comments and widgets that says it holds the author, with a short
 * text that names someone (its itemprop=name part when it has one, else
 * the whole line less its labels and date); *hide its nodes. */
static char *byline_in(struct ctx *c, const char *site, unsigned flags, struct byline_nodes *hide)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    extract_attempt_pass(c, flags);
    for (uint32_t i = 1; i < d->n; i++) {
        if (f[i].gone || d->nodes[i].tag == XTAG_TEXT || !xmeta_marks_author(d, i))
            continue;
        if (f[i].tlen == 0 || f[i].tlen > BYLINE_MAX_CHARS || extract_byline_other_voice(d, i))
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
            *hide = (struct byline_nodes){i, end};
            return s;
        }
    }
    return NULL;
}

#define LABELLED_MAX_CHARS 60 /* "By Jane Doe and John Roe, May 3" */

/* A line that starts with a byline's label ("By ", "Von ", "Autor: ")
 * and goes on with a capital: the author's line of a theme that marks it
 * with no class. */
/* A label blog software prints before the account that posted ("Gespeichert
 * von rasos am …", Drupal's; "Posted by", Blogger's): what follows is a
 * user name as its owner typed it, lower case too. */
static bool starts_with_account_label(const char *s)
{
    static const char *const labels[] = {"Posted by ", "Eingestellt von ", "Gespeichert von ",
                                         "Verfasst von ", "Geschrieben von "};
    for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++) {
        size_t n = strlen(labels[k]);
        if (strncmp(s, labels[k], n) == 0 && s[n] >= 'a' && s[n] <= 'z')
            return true;
    }
    return false;
}

static bool starts_with_byline_label(const char *s)
{
    /* "von" and "by" in lower case too: "von Daniela Obers" under a
     * heading; the names that must follow keep a sentence out */
    static const char *const labels[] = {
        "By ", "Von ", "Par ", "Por ", "Door ", "Written by ",
        "Written by: ", "By: ", "Autor: ", "Autorin: ", "Autor ", "Text: ", "Text von ", "von ",
        "by ", "Auteur ", "Auteur : ", "Author ", "Author: ", "Posted by ", "Eingestellt von ",
        "Gespeichert von ", "Ein Artikel von ", "Ein Beitrag von ", "Blog Beitrag von ", "Autoren ",
        "Autoren: ", "Von: ", "Redaktion: ",
        /* Chinese news' "责任编辑：", "作者：", "记者：", a space after them or not */
        "\xe8\xb4\xa3\xe4\xbb\xbb\xe7\xbc\x96\xe8\xbe\x91\xef\xbc\x9a",
        "\xe8\xb4\xa3\xe4\xbb\xbb\xe7\xbc\x96\xe8\xbe\x91\xef\xbc\x9a ",
        "\xe4\xbd\x9c\xe8\x80\x85\xef\xbc\x9a", "\xe4\xbd\x9c\xe8\x80\x85\xef\xbc\x9a ",
        "\xe8\xae\xb0\xe8\x80\x85\xef\xbc\x9a", "\xe8\xae\xb0\xe8\x80\x85\xef\xbc\x9a "};
    for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++) {
        size_t n = strlen(labels[k]);
        if (strncmp(s, labels[k], n) != 0)
            continue;
        unsigned char ch = (unsigned char)s[n];
        if ((ch >= 'A' && ch <= 'Z') || ch >= 0xC3) /* a capital, or a letter outside ASCII */
            return true;
        /* else a longer label may fit: "Auteur : Jane Doe" after "Auteur " */
    }
    return starts_with_account_label(s);
}

/* After a date that leads a line ("11.12.2019 - ", "04.02.2022 | 13:10 Uhr
 * | ", "06.11.2023 13:30 "): where the line goes on, and in *dashed
 * whether a dash or bar, not a label, leads on to it; s itself when no
 * date leads it. */
static const char *after_leading_date(const char *s, bool *dashed)
{
    const char *p = s;
    *dashed = false;
    for (int part = 0; part < 3; part++) { /* day, month, year */
        size_t n = 0;
        while (ascii_is_digit(p[n]))
            n++;
        if (n == 0 || n > 4 || (part < 2 && p[n] != '.'))
            return s;
        p += n + (part < 2 ? 1 : 0);
    }
    for (bool more = true; more;) { /* separators and a time, in any order */
        more = false;
        while (*p == ' ')
            p++;
        size_t n = 0;
        while (ascii_is_digit(p[n]))
            n++;
        if (*p == '-' || *p == '|' || strncmp(p, "\xe2\x80\x93", 3) == 0) {
            p += *p == '-' || *p == '|' ? 1 : 3;
            *dashed = more = true;
        } else if (n >= 1 && n <= 2 && p[n] == ':' && ascii_is_digit(p[n + 1]) &&
                   ascii_is_digit(p[n + 2])) {
            p += n + 3;
            more = true;
        } else if (strncmp(p, "Uhr", 3) == 0 && (p[3] == ' ' || p[3] == '\0')) {
            p += 3;
            more = true;
        }
    }
    return p;
}

/* Element i has a sibling whose line starts with a date too: a calendar
 * or a list of articles ("03.11.2022 - Grandbrothers - Flex"), no byline. */
static bool dated_sibling(const struct xdom *d, uint32_t i)
{
    struct buf b;
    buf_init(&b, 0);
    bool found = false;
    for (uint32_t k = d->nodes[d->nodes[i].parent].first; k != 0 && !found; k = d->nodes[k].next) {
        if (k == i || d->nodes[k].tag == XTAG_TEXT)
            continue;
        buf_reset(&b);
        xdom_text_line(d, k, &b, 32);
        bool dashed;
        found = !buf_error(&b) && b.data && after_leading_date(b.data, &dashed) != b.data;
    }
    buf_release(&b);
    return found;
}

/* s starts with a label that says "author" and a colon ("Autorin: "):
 * a line that may go on with the writer's role. */
static bool starts_with_role_label(const char *s)
{
    static const char *const labels[] = {
        "Autor: ", "Autorin: ", "Autoren: ", "Author: ", "Auteur : ", "Autor:in: "};
    for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++)
        if (strncmp(s, labels[k], strlen(labels[k])) == 0)
            return true;
    return false;
}

/* s is a byline's label and nothing more ("By", "Autor:"), a bar before
 * it aside: a screen reader's "| By " between the date and the name. */
static bool is_byline_label_alone(const char *s)
{
    static const char *const alone[] = {
        "By",      "By:",   "Von",        "Von:",   "Par",      "Por",    "Autor:", "Autorin:",
        "Author:", "Text:", "Written by", "Auteur", "Auteur :", "Author", "Autor",  "Autorin"};
    while (*s == '|' || *s == ' ')
        s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    for (size_t k = 0; k < sizeof alone / sizeof alone[0]; k++)
        if (strlen(alone[k]) == n && strncmp(s, alone[k], n) == 0)
            return true;
    return false;
}

/* Every word of a name starts with a capital, connectors aside ("Jane Doe
 * und John Roe", "Ana de la Cruz"). */
static bool reads_as_names(const char *s)
{
    static const char *const small[] = {"und", "and", "y",   "et", "i",  "&",  "de", "la", "del",
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

/* When a <br> among element i's children ends a line after text, b holds
 * that first line alone: "Von Jane Doe und John Roe<br>Kakuma /Kenia"
 * puts the dateline's place on a line of its own, no name of the byline.
 * b is left as it is for an element of one line. */
static bool first_line_of(const struct xdom *d, const struct nfo *f, uint32_t i, struct buf *b)
{
    uint32_t br = 0, before = 0;
    for (uint32_t k = d->nodes[i].first; k != 0 && br == 0; k = d->nodes[k].next) {
        if (d->nodes[k].tag == XTAG_br)
            br = k;
        else
            before += f[k].tlen;
    }
    if (br == 0 || before == 0 || before == f[i].tlen)
        return false;
    for (uint32_t k = d->nodes[i].first; k != br; k = d->nodes[k].next)
        xdom_text_line(d, k, b, 128);
    return true;
}

/* The names s, read off line, are followed by " am " or " on " and a
 * date's digit: "Von R. R. am 07.08.2013 um 09:07 Uhr gespeichert unter
 * …", a post's meta line that goes on past the names with its date and
 * category. */
static bool dated_after(const char *line, const char *s)
{
    const char *p = strstr(line, s);
    if (!p)
        return false;
    p += strlen(s);
    return (strncmp(p, " am ", 4) == 0 || strncmp(p, " on ", 4) == 0) && ascii_is_digit(p[4]);
}

/* A line of text outside any element of its own that starts with a
 * byline's label ("【纠错】 责任编辑： 焦鹏", "…<br>Autor: <a>Rechtsanwalt</a>
 * Sebastian Einbock"): text node i and its next siblings up to a <br> or
 * a block into b, *last the last of them; false when i starts no byline.
 * An element holding the line alone is read as a whole instead. */
static bool loose_line(const struct xdom *d, const struct nfo *f, uint32_t i, struct buf *b,
                       uint32_t *last)
{
    if (f[d->nodes[i].parent].tlen == f[i].tlen)
        return false; /* the element's own line, read as the element's */
    xdom_text_line(d, i, b, 128);
    /* "… von Firmenwägen", "Theme: <a>Graphy</a> by Themegraphy": a small
     * "von" or "by" after an element goes on with a sentence */
    if (buf_error(b) || !b->data || (b->data[0] >= 'a' && b->data[0] <= 'z') ||
        !(starts_with_byline_label(b->data) || is_byline_label_alone(b->data)))
        return false;
    *last = i;
    for (uint32_t k = d->nodes[i].next; k != 0 && b->len <= 2 * LABELLED_MAX_CHARS;
         k = d->nodes[k].next) {
        enum xtag t = (enum xtag)d->nodes[k].tag;
        if (t == XTAG_br || (html_tag_flags(t) & HT_BLOCK))
            break;
        if (f[k].gone)
            continue;
        xdom_text_line(d, k, b, 128);
        *last = k;
    }
    return true;
}

/* The first short visible line outside comments and widgets that starts
 * with a byline's label and names people; *hide its nodes, none for a line
 * that says more than the names (the writer's role stays in the text). */
static char *labelled_byline(struct ctx *c, const char *site, unsigned flags,
                             struct byline_nodes *hide)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    extract_attempt_pass(c, flags);
    struct buf b;
    buf_init(&b, 0);
    char *found = NULL;
    for (uint32_t i = 1; i < d->n && !found; i++) {
        enum xtag t = (enum xtag)d->nodes[i].tag;
        bool loose = t == XTAG_TEXT;
        if (f[i].gone || f[i].tlen < 2 || f[i].tlen > 2 * LABELLED_MAX_CHARS ||
            !(loose || t == XTAG_p || t == XTAG_span || t == XTAG_div || t == XTAG_small ||
              t == XTAG_em || t == XTAG_strong || t == XTAG_b || t == XTAG_li || t == XTAG_h5 ||
              t == XTAG_h6 || t == XTAG_address || t == XTAG_dt))
            continue;
        buf_reset(&b);
        uint32_t next = 0;
        if (loose) {
            if (!loose_line(d, f, i, &b, &next))
                continue;
        } else {
            /* a line over 60 characters must start "Autor…" (the role after
             * the names, below) or "Von "/"By " (a list of names): its first
             * bytes say whether to read the rest */
            if (f[i].tlen > LABELLED_MAX_CHARS) {
                xdom_text_line(d, i, &b, 16);
                if (buf_error(&b) || !b.data ||
                    (strncmp(b.data, "Aut", 3) != 0 && strncmp(b.data, "Von ", 4) != 0 &&
                     strncmp(b.data, "By ", 3) != 0))
                    continue;
                buf_reset(&b);
            }
            if (!first_line_of(d, f, i, &b))
                xdom_text_line(d, i, &b, 128);
            /* the label alone in an element of its own ("<span>By</span><a>Jane
             * Doe</a>", "<h5>Autor:</h5> Jane Doe"): the line goes on with the
             * element's next sibling */
            next = d->nodes[i].next;
            /* the white space between <dt> and <dd>, the <br>s after "Von:" */
            while (next != 0 && (d->nodes[next].tag == XTAG_br ||
                                 (d->nodes[next].tag == XTAG_TEXT && f[next].tlen == 0)))
                next = d->nodes[next].next;
            bool split = !buf_error(&b) && b.data && is_byline_label_alone(b.data) && next != 0;
            if (split)
                xdom_text_line(d, next, &b, 128);
            else
                next = i;
        }
        if (buf_error(&b) || !b.data || b.len > (loose ? 1 : 2) * LABELLED_MAX_CHARS)
            continue;
        /* a date before the label ("06.11.2023 13:30 von Olga"), or before
         * a dash and the names alone ("11.12.2019 - Amelie Loevenich"):
         * then two names or more, as a place or a topic is one word, and
         * nothing after them ("03.11.2022 - Mark Turner - Arena" is a
         * calendar's line) */
        bool dashed;
        const char *line = after_leading_date(b.data, &dashed);
        while (*line == '-' || *line == '|' || *line == ' ') /* "- Redaktion: …" after a date */
            line++;
        size_t rest = b.len - (size_t)(line - b.data);
        const char *role = strstr(line, " (");
        if (role && (size_t)(role - line) < rest) /* "Jane Doe (Pressesprecherin)" */
            rest = (size_t)(role - line);
        /* a longer line only after "Autorin:" and with the role after a
         * comma: "Autorin: Uta Staschewski, Projektleiterin der HSS in …",
         * or after "Von"/"By" as a list of writers and nothing more */
        bool long_line = !loose && f[i].tlen > LABELLED_MAX_CHARS, list = false;
        if (long_line) {
            role = starts_with_role_label(line) ? strstr(line, ", ") : NULL;
            if (role && (size_t)(role - line) < rest)
                rest = (size_t)(role - line);
            else if (strncmp(line, "Von ", 4) == 0 || strncmp(line, "By ", 3) == 0)
                list = true;
            else
                continue;
        }
        while (rest > 0 && line[rest - 1] == ' ')
            rest--;
        bool labelled = starts_with_byline_label(line);
        /* a form's "Von:" is a search's "from", never a byline */
        if ((!labelled && !(dashed && line[0] >= 'A' && line[0] <= 'Z')) ||
            extract_byline_other_voice(d, i) ||
            extract_has_ancestor_tag(d, i, XTAG_form, BYLINE_MAX_UP))
            continue; /* a shorter line inside may still be the one */
        char *s = byline_names_of(c, line, rest, site);
        /* "Von Volkmar Kabisch, Jan Lukas Strozyk und Benedikt Strunz, NDR":
         * names joined by commas or "und", nothing cut off but the label */
        bool joined = s && (strstr(s, ", ") || strstr(s, " und ") || strstr(s, " and "));
        if (list && s && !dated_after(line, s) && (strlen(s) + 4 < rest || !joined))
            continue;
        /* an account's name is one word: "rasos", not "rasos und ich" */
        bool account = labelled && starts_with_account_label(line) && s && !strchr(s, ' ');
        if (s && (reads_as_names(s) || account) && (!long_line || strchr(s, ' ')) &&
            (labelled || (strchr(s, ' ') && strlen(s) == rest && !dated_sibling(d, i)))) {
            found = s;
            uint32_t end = xdom_subtree_end(d, next);
            *hide = (struct byline_nodes){i, long_line ? i : end};
        }
    }
    buf_release(&b);
    return found;
}

/* The slug after an "/author/" segment of href ("heiko-sauer" of
 * https://blog.example/author/heiko-sauer/) into *slug, *n; false when
 * the link is no author's page. */
static bool author_slug(const char *href, const char **slug, size_t *n)
{
    static const char *const segments[] = {"/author/", "/authors/", "/autor/", "/autoren/"};
    for (const char *p = strchr(href, '/'); p; p = strchr(p + 1, '/')) {
        if ((p[1] | 0x20) != 'a')
            continue;
        for (size_t k = 0; k < sizeof segments / sizeof segments[0]; k++) {
            size_t len = strlen(segments[k]);
            if (strncasecmp(p, segments[k], len) != 0)
                continue;
            *slug = p + len;
            *n = strcspn(*slug, "/?#");
            return *n > 0;
        }
    }
    return false;
}

/* A word of the slug (3 letters or more; "-", "_", "." between them) is a
 * word of name, ASCII case aside: "gathmann-moritz" and "MORITZ GATHMANN",
 * "martin" and "Martin Junker". */
static bool slug_names(const char *slug, size_t n, const char *name)
{
    for (size_t i = 0; i < n;) {
        size_t w = 0;
        while (i + w < n && slug[i + w] != '-' && slug[i + w] != '_' && slug[i + w] != '.')
            w++;
        for (const char *p = name; w >= 3 && *p; p++) {
            bool starts = p == name || p[-1] == ' ' || p[-1] == '-';
            if (starts && strncasecmp(p, slug + i, w) == 0 &&
                (p[w] == '\0' || p[w] == ' ' || p[w] == ',' || p[w] == '-'))
                return true;
        }
        i += w + 1;
    }
    return false;
}

/* The first link to an author's page ("/author/<slug>/") whose text names
 * the one its slug names: WordPress and most CMSs link the byline so, and
 * the slug matching the text is the evidence that the link is an author's
 * and its text a name, where no class says so (or a class that would hide
 * it: a theme's "sidebar" column holding the entry, a "teaser" header).
 * Outside comments and related or recommended articles. */
static char *author_link(struct ctx *c, const char *site)
{
    static const char *const others[] = {"comment", "related", "recommend"};
    const struct xdom *d = c->d; /* on labelled_byline's last pass, nothing left out */
    for (uint32_t i = 1; i < d->n; i++) {
        const char *slug;
        const char *href = d->nodes[i].tag == XTAG_a ? xdom_attr(d, i, XATTR_href, NULL) : NULL;
        size_t n;
        if (!href || c->f[i].gone || c->f[i].tlen == 0 || c->f[i].tlen > BYLINE_MAX_CHARS ||
            !author_slug(href, &slug, &n))
            continue;
        /* its itemprop=name part when it has one: the picture's credit
         * beside the name in the link ("© Kathrin Führes Kathrin Führes") */
        uint32_t from = i, end = xdom_subtree_end(d, i);
        for (uint32_t k = i + 1; k < end && from == i; k++)
            if (xdom_attr_is(d, k, XATTR_itemprop, "name") && c->f[k].tlen > 0)
                from = k;
        char *s = byline_names(c, from, site);
        if (s && reads_as_names(s) && slug_names(slug, n, s) &&
            !extract_byline_in_block_of(d, i, others, sizeof others / sizeof others[0]))
            return s;
    }
    return NULL;
}

#define AVATAR_NAME_MAX_CHARS 40

/* Node i's next sibling, white space between them aside; 0 when none. */
static uint32_t next_with_text(const struct xdom *d, const struct nfo *f, uint32_t i)
{
    uint32_t k = d->nodes[i].next;
    while (k != 0 && d->nodes[k].tag == XTAG_TEXT && f[k].tlen == 0)
        k = d->nodes[k].next;
    return k;
}

/* The poster a post's meta line names beside an avatar: an <img> whose
 * class says "avatar", a link right after it, a date right after the link
 * (`<img class="avatar"> <a href="/user/?u=79003">MikeNils</a> 18.10.2019,
 * 15:07 Uhr`, a deal or forum post's own line). The picture and the date
 * are the evidence that the link names who posted; outside comments and
 * widgets, where every reader's line looks the same. */
static char *avatar_line(struct ctx *c, const char *site)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f; /* on labelled_byline's last pass, nothing left out */
    struct buf b;
    buf_init(&b, 0);
    char *found = NULL;
    for (uint32_t i = 1; i < d->n && !found; i++) {
        const char *klass = d->nodes[i].tag == XTAG_img ? xdom_attr(d, i, XATTR_class, NULL) : NULL;
        if (!klass || f[i].gone || !xtext_has_ci(klass, "avatar"))
            continue;
        uint32_t link = next_with_text(d, f, i);
        if (link == 0 || d->nodes[link].tag != XTAG_a || f[link].tlen == 0 ||
            f[link].tlen > AVATAR_NAME_MAX_CHARS)
            continue;
        uint32_t after = d->nodes[link].next;
        if (after == 0 || d->nodes[after].tag != XTAG_TEXT || extract_byline_other_voice(d, i))
            continue;
        buf_reset(&b);
        xdom_text_line(d, after, &b, 32);
        bool dashed;
        const char *line = buf_error(&b) || !b.data ? NULL : b.data;
        while (line && *line == ' ')
            line++;
        if (!line || after_leading_date(line, &dashed) == line)
            continue;
        char *s = byline_names(c, link, site);
        if (s && reads_as_names(s))
            found = s;
    }
    buf_release(&b);
    return found;
}

#define SIGNED_MIN_TEXT 500 /* characters of the text a signature closes */

/* The element child of i that holds all its text, or 0. */
static uint32_t sole_child(const struct xdom *d, const struct nfo *f, uint32_t i)
{
    uint32_t only = 0;
    for (uint32_t k = d->nodes[i].first; k != 0; k = d->nodes[k].next) {
        if (f[k].tlen == 0)
            continue;
        if (only != 0 || d->nodes[k].tag == XTAG_TEXT)
            return 0;
        only = k;
    }
    return only;
}

#define SIGNED_DATE_MAX_CHARS 24 /* "10. September 2017" */

/* Paragraph i is a name on a line and a date on the next and nothing more
 * ("<p>Benni<br>10. September 2017</p>"): a letter's close, signed and
 * dated. The text node of the name, or 0. */
static uint32_t signed_and_dated(const struct xdom *d, const struct nfo *f, uint32_t i)
{
    uint32_t parts[3], n = 0;
    for (uint32_t k = d->nodes[i].first; k != 0; k = d->nodes[k].next) {
        if (d->nodes[k].tag == XTAG_TEXT && f[k].tlen == 0)
            continue;
        if (n == 3)
            return 0;
        parts[n++] = k;
    }
    if (n != 3 || d->nodes[parts[0]].tag != XTAG_TEXT || d->nodes[parts[1]].tag != XTAG_br ||
        d->nodes[parts[2]].tag != XTAG_TEXT || f[parts[2]].tlen > SIGNED_DATE_MAX_CHARS)
        return 0;
    /* the date: a day's digit first, a year's four digits in it */
    const struct xnode *t = &d->nodes[parts[2]];
    const char *s = d->text.data + t->off;
    size_t len = t->len, at = 0, run = 0;
    while (at < len && (s[at] == ' ' || s[at] == '\n' || s[at] == '\t' || s[at] == '\r'))
        at++;
    if (at == len || !ascii_is_digit(s[at]))
        return 0;
    for (; at < len && run < 4; at++)
        run = ascii_is_digit(s[at]) ? run + 1 : 0;
    return run == 4 ? parts[0] : 0;
}

/* The writer's name signed under the text: a paragraph that is a name and
 * nothing else, set in bold or italics ("<p><b><i>Stefan Wasmer</i></b></p>"),
 * the last of its block (or set to the right), after 500 characters of
 * text: German regional papers and older sites sign so. Two or three
 * words, as a bold "Fazit" is one; a name of one word when a date is
 * signed under it ("Benni<br>10. September 2017"). */
static char *signature(struct ctx *c, const char *site)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f; /* on labelled_byline's last pass, nothing left out */
    for (uint32_t i = 1; i < d->n; i++) {
        if (d->nodes[i].tag != XTAG_p || f[i].gone || f[i].tlen < 5 || f[i].tlen > 40 ||
            f[d->nodes[i].parent].tlen < SIGNED_MIN_TEXT + f[i].tlen || f[i].llen > 0)
            continue;
        uint32_t k = sole_child(d, f, i);
        enum xtag t = k ? (enum xtag)d->nodes[k].tag : XTAG_TEXT;
        bool set_apart = t == XTAG_b || t == XTAG_strong || t == XTAG_em || t == XTAG_i;
        uint32_t name = set_apart ? i : signed_and_dated(d, f, i);
        if (name == 0)
            continue;
        bool last = true;
        for (uint32_t n = d->nodes[i].next; n != 0 && last; n = d->nodes[n].next)
            last = f[n].tlen == 0;
        /* set to the right (align="right"): a signature, where footnotes
         * or a next piece may follow it in the same block */
        if (!last && !xdom_attr_is(d, i, XATTR_align, "right"))
            continue;
        char *s = byline_names(c, name, site);
        size_t words = 1;
        for (const char *p = s; p && *p; p++)
            words += *p == ' ';
        if (s && reads_as_names(s) && words >= (name == i ? 2 : 1) && words <= 3 &&
            !strpbrk(s, "0123456789:"))
            return s;
    }
    return NULL;
}

#define HOST_NAME_MIN 5 /* letters of a host's label that may name a site */

/* The site is named after the page's host ("Wolfgang Schmale" on
 * wolfgangschmale.eu, "Telebasel" on telebasel.ch, "uncut-news.ch",
 * "Zahlenzauberin" on zahlenzauberin.wordpress.com): a person's or a
 * body's own site, which writes in its own name, so that name on its
 * author line is the author's, not a plugin's default. */
static bool site_named_after_host(const char *site, const char *url)
{
    struct urlview v;
    if (!site || !url)
        return false;
    urlview_parse(&v, url);
    char host[256];
    if (!v.host.p || v.host.n >= sizeof host)
        return false;
    memcpy(host, v.host.p, v.host.n);
    host[v.host.n] = '\0';
    struct buf name, part;
    buf_init(&name, 0);
    buf_init(&part, 0);
    extract_squash(&name, site);
    extract_squash(&part, strncasecmp(host, "www.", 4) == 0 ? host + 4 : host);
    bool same = !buf_error(&name) && name.len >= HOST_NAME_MIN && part.len == name.len &&
                memcmp(part.data, name.data, name.len) == 0;
    for (char *label = host; !same && label;) {
        char *dot = strchr(label, '.');
        if (dot)
            *dot = '\0';
        buf_reset(&part);
        extract_squash(&part, label);
        same = !buf_error(&part) && !buf_error(&name) && part.len >= HOST_NAME_MIN &&
               part.len == name.len && memcmp(part.data, name.data, name.len) == 0;
        label = dot ? dot + 1 : NULL;
    }
    buf_release(&name);
    buf_release(&part);
    return same;
}

/* The page's own author line, when the metadata's author is missing or
 * names the publisher (extract_byline_is_publisher); over a publisher only
 * a line that reads as a person's name of two words or more ("Jun" of a
 * date, a headline, "S." are not) and is no publisher itself. */
/* Outside the boilerplate first (a menu's "Sign in" may have an author
 * class), then in it: a theme's entry header often says "header"; then a
 * line that says "By …" with no class, the same two ways; then a link to
 * the author's page, a poster beside an avatar, a signature. *hide: the
 * nodes of the line found. */
static char *byline_of_page(struct ctx *c, const char *site, struct byline_nodes *hide)
{
    *hide = (struct byline_nodes){0, 0};
    char *s = byline_in(c, site, STRIP_UNLIKELY, hide);
    if (!s)
        s = byline_in(c, site, 0, hide);
    if (!s)
        s = labelled_byline(c, site, STRIP_UNLIKELY, hide);
    if (!s)
        s = labelled_byline(c, site, 0, hide);
    if (!s)
        s = author_link(c, site);
    if (!s)
        s = avatar_line(c, site);
    return s ? s : signature(c, site);
}

/* The line taken leaves the main text. */
static void hide_line(struct ctx *c, struct byline_nodes hide)
{
    for (uint32_t k = hide.from; k < hide.end; k++)
        c->f[k].invisible = 1;
}

char *extract_byline_over(struct ctx *c, const char *meta, const char *url, const char *site,
                          const char *desc)
{
    if (!extract_byline_is_publisher(meta, url, site))
        return NULL;
    struct byline_nodes hide;
    char *s = byline_of_page(c, site, &hide);
    /* a writer the page names still goes first; the site's name is looked
     * for on the lines classes mark only, with one more pass */
    if (!s && site_named_after_host(site, url)) {
        s = byline_in(c, NULL, 0, &hide);
        /* the site's own name is a label of the page, not a line of the
         * article's: it stays, as taking it out moved the choice of the
         * main text on a page (a gallery's captions lost) */
        hide.end = hide.from;
    }
    /* a page that names no one may still credit a news agency; over a
     * publisher's name it gained nothing on the development set */
    if (!s && !meta)
        s = extract_byline_agency(c);
    if (!s && !meta)
        s = extract_byline_title(c, site);
    /* Blogger's posts print their "Posted by" line in a <noscript> and a
     * script's template only, which the description's snippet repeats */
    if (!s && !meta) {
        s = extract_byline_description(c, desc, site);
        if (s && (!strchr(s, ' ') || !reads_as_names(s)))
            s = NULL; /* "By Aaron Humes: The Americas cannot …": a sentence */
    }
    if (s && meta &&
        (!strchr(s, ' ') || !reads_as_names(s) || strlen(s) <= 4 ||
         extract_byline_is_publisher(s, url, site)))
        return NULL; /* the line refused stays in the text */
    if (s)
        hide_line(c, hide);
    return s;
}

char *extract_byline_of_page(struct ctx *c, const char *site)
{
    struct byline_nodes hide;
    char *s = byline_of_page(c, site, &hide);
    if (s)
        hide_line(c, hide);
    return s;
}

/* ---- an author that is the publisher ------------------------------------ */

/* A legal form ends or fills a word of s: "e.V.", "GmbH", "AG". */
static bool names_a_company(const char *s)
{
    static const char *const forms[] = {"e.V.", "e. V.", "GmbH", "gGmbH", "AG",   "mbH", "KG",
                                        "Inc.", "Ltd",   "Ltd.", "LLC",   "S.A.", "SE"};
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        size_t n = strlen(forms[k]);
        for (const char *p = strstr(s, forms[k]); p; p = strstr(p + 1, forms[k]))
            if ((p == s || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == ','))
                return true;
    }
    return false;
}

/* The label of url's host before its top-level domain ("tagesschau" of
 * www.tagesschau.de), squashed, into out; empty when shorter than 3. */
static void host_label(struct buf *out, const char *url)
{
    struct urlview v;
    urlview_parse(&v, url);
    if (!v.host.p)
        return;
    size_t end = v.host.n;
    while (end > 0 && v.host.p[end - 1] != '.')
        end--;
    if (end == 0)
        return;
    size_t start = --end;
    while (start > 0 && v.host.p[start - 1] != '.')
        start--;
    if (end - start < 3)
        return;
    char label[64];
    size_t n = end - start < sizeof label - 1 ? end - start : sizeof label - 1;
    memcpy(label, v.host.p + start, n);
    label[n] = '\0';
    extract_squash(out, label);
}

/* s names the editorial desk ("Redaktion", "Die Redaktion", "Online-Redaktion"):
 * the publisher speaking, which a writer the page names replaces. */
static bool names_the_desk(const char *s)
{
    return xtext_has_ci(s, "redaktion");
}

/* s is an account's login, not a name: one word of lower-case letters,
 * digits and "._-" ("arianschlichenmayer", "sarah-indra"), as WordPress
 * writes its user into the metadata when no display name is set. */
static bool is_login(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || ascii_is_digit(*p) || *p == '.' || *p == '_' ||
              *p == '-'))
            return false;
    return *s != '\0';
}

/* Two or three capitals and nothing more ("LN", "DT"): a publication's
 * code (JSON-LD's Organization "LN" of the Lübecker Nachrichten) or a
 * writer's initials, either of which the name the page prints says better. */
static bool is_initials(const char *s)
{
    size_t n = 0;
    while (ascii_is_upper(s[n]))
        n++;
    return s[n] == '\0' && n >= 2 && n <= 3;
}

bool extract_byline_is_publisher(const char *byline, const char *url, const char *site)
{
    if (!byline)
        return true;
    if (names_a_company(byline) || names_the_desk(byline) || is_login(byline) ||
        is_initials(byline))
        return true;
    struct buf by, other;
    buf_init(&by, 0);
    buf_init(&other, 0);
    extract_squash(&by, byline);
    bool same = false;
    if (site) {
        extract_squash(&other, site);
        same = !buf_error(&other) && other.len >= 3 && by.len && strstr(by.data, other.data);
    }
    if (!same && url) {
        buf_reset(&other);
        host_label(&other, url);
        same = !buf_error(&other) && other.len && by.len && strstr(by.data, other.data);
    }
    buf_release(&by);
    buf_release(&other);
    return same;
}
