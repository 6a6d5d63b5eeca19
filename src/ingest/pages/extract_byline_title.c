/* A writer credited in the page's <title> or description of a page that
 * names no one (ingest/pages/extract_passes.h: extract_byline_title,
 * extract_byline_description). In the title: "Turpitude et
 * architecture, par Didier Roy (Les blogs du Diplo, 21 juin 2018)",
 * "gousto.co.uk reviewed by Mrs H Pyke". Only after a comma or a verb
 * that credits ("reviewed by", "written by"): a title's own "by" or
 * "von" is as often its subject's ("Auf den Spuren von Rafael Nadal",
 * "Inspired by Taylor Swift"). In the description: a label that opens it
 * ("Posted by Nathan Parker and Eric Mill - Chrome team Over the past …",
 * Blogger's snippet of the post's first line). docs/extraction.md
 * "Author". */
#include <stdint.h>
#include <string.h>

#include "ingest/pages/extract_passes.h"

#include "util/ascii.h"
#include "util/banned.h"

#define TITLE_LINE_MAX 512
#define TITLE_NAME_WORDS 4 /* "Mrs H Pyke", "Ana de la Cruz" */

/* What leads a writer's name in a title. */
static const char *const credits[] = {", par ",       ", by ",        ", By ",      " reviewed by ",
                                      " written by ", " Written by ", " posted by "};

/* Small words inside a name. */
static const char *const connectors[] = {"de", "la", "del", "van", "von", "der", "du", "le", "da"};

/* Where the names that start s end: the end of the title, a bracket, a
 * separator, a comma; 0 when they are not names of 2 to 4 words each
 * capitalised but for connectors, without digits. */
static size_t names_at(const char *s)
{
    size_t n = 0, words = 0;
    for (;;) {
        size_t w = 0;
        while (s[n + w] && s[n + w] != ' ' && s[n + w] != ',' && s[n + w] != '(')
            w++;
        unsigned char c = (unsigned char)s[n];
        bool capital = (c >= 'A' && c <= 'Z') || c >= 0xC3;
        bool connector = false;
        for (size_t k = 0; k < sizeof connectors / sizeof connectors[0] && !capital; k++)
            connector =
                connector || (strlen(connectors[k]) == w && memcmp(s + n, connectors[k], w) == 0);
        if (w == 0 || (!capital && !connector) || ++words > TITLE_NAME_WORDS)
            return 0;
        for (size_t k = 0; k < w; k++)
            if (ascii_is_digit(s[n + k]))
                return 0;
        n += w;
        /* the names end at the title's end or before " (", ", ", " | ", " - " …
         * (the byte after a space: s[n] is no NUL then) */
        unsigned char next = s[n] == ' ' ? (unsigned char)s[n + 1] : 0;
        if (s[n] == '\0' || s[n] == ',' ||
            (s[n] == ' ' && (next == '(' || next == '|' || next == '-' || next == 0xE2)))
            return words >= 2 ? n : 0;
        if (s[n] != ' ')
            return 0;
        n++;
    }
}

char *extract_byline_title(struct ctx *c, const char *site)
{
    const struct xdom *d = c->d;
    uint32_t title = 0;
    for (uint32_t i = 1; i < d->n && title == 0; i++)
        if (d->nodes[i].tag == XTAG_title)
            title = i;
    if (title == 0)
        return NULL;
    struct buf b;
    buf_init(&b, 0);
    xdom_text_line(d, title, &b, TITLE_LINE_MAX);
    char *found = NULL;
    for (size_t k = 0; k < sizeof credits / sizeof credits[0] && !found && !buf_error(&b) && b.data;
         k++) {
        const char *at = strstr(b.data, credits[k]);
        if (!at)
            continue;
        at += strlen(credits[k]);
        size_t n = names_at(at);
        if (n)
            found = xmeta_byline_clean(
                c->a, xtext_clean(c->a, at, n, EXTRACT_MAX_FIELD, false, &c->rc), site, &c->rc);
    }
    buf_release(&b);
    return found;
}

/* Labels a description opens with when its first line is the byline. */
static const char *const description_labels[] = {"Posted by ", "Written by ", "By "};

char *extract_byline_description(struct ctx *c, const char *desc, const char *site)
{
    for (size_t k = 0; desc && k < sizeof description_labels / sizeof description_labels[0]; k++) {
        if (strncmp(desc, description_labels[k], strlen(description_labels[k])) != 0)
            continue;
        /* the names end at a separator (" - Chrome team"); a sentence
         * after them makes the whole too long, refused */
        return xmeta_byline_clean(c->a, desc, site, &c->rc);
    }
    return NULL;
}
