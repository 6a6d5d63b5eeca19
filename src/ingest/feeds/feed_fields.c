/* The field helpers of feed_internal.h that every feed format shares (text
 * normalisation, mojibake repair, URLs, authors, dates), so that feed_xml.c
 * and feed_json.c only map their elements. Calls no parser: feed.c calls
 * the parsers, the parsers call these. */
#include "ingest/feeds/feed_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/ingest.h"
#include "ingest/pages/pages.h"
#include "util/buf.h"
#include "util/utf8.h"

#include "util/banned.h"

struct feed_item *feed_ctx_item_add(struct feed_ctx *c)
{
    struct feed *f = c->out;
    if (c->rc < 0)
        return NULL;
    if (f->n_items >= FEED_MAX_ITEMS) {
        f->n_dropped++;
        return NULL;
    }
    if (f->n_items == c->cap) {
        /* Arena memory is not reclaimed: grow geometrically, copy. */
        size_t cap = c->cap ? c->cap * 2 : 16;
        if (cap > FEED_MAX_ITEMS)
            cap = FEED_MAX_ITEMS;
        struct feed_item *items = arena_calloc(c->a, cap, sizeof *items);
        if (!items) {
            c->rc = ERR_NOMEM;
            return NULL;
        }
        if (f->n_items)
            memcpy(items, f->items, f->n_items * sizeof *items);
        f->items = items;
        c->cap = cap;
    }
    struct feed_item *it = &f->items[f->n_items++];
    memset(it, 0, sizeof *it);
    return it;
}

/* ---- mojibake ------------------------------------------------------------ */

/* windows-1252 bytes 0x80..0x9F that are not C1 controls, by code point. */
static const struct {
    uint16_t cp;
    unsigned char byte;
} cp1252_high[] = {
    {0x0152, 0x8C}, {0x0153, 0x9C}, {0x0160, 0x8A}, {0x0161, 0x9A}, {0x0178, 0x9F}, {0x017D, 0x8E},
    {0x017E, 0x9E}, {0x0192, 0x83}, {0x02C6, 0x88}, {0x02DC, 0x98}, {0x2013, 0x96}, {0x2014, 0x97},
    {0x2018, 0x91}, {0x2019, 0x92}, {0x201A, 0x82}, {0x201C, 0x93}, {0x201D, 0x94}, {0x201E, 0x84},
    {0x2020, 0x86}, {0x2021, 0x87}, {0x2022, 0x95}, {0x2026, 0x85}, {0x2030, 0x89}, {0x2039, 0x8B},
    {0x203A, 0x9B}, {0x20AC, 0x80}, {0x2122, 0x99},
};

/* The byte a code point had in Latin-1 / windows-1252, or -1. */
static int cp_to_byte(uint32_t cp)
{
    if (cp <= 0xFF)
        return (int)cp;
    for (size_t i = 0; i < sizeof cp1252_high / sizeof cp1252_high[0]; i++)
        if (cp1252_high[i].cp == cp)
            return cp1252_high[i].byte;
    return -1;
}

/* UTF-8 that went through a Latin-1 or windows-1252 decoder once too often
 * ("cafÃ©", "â€™", the "double-encoded" feeds) maps back to bytes that
 * are valid UTF-8 again; real text in those scripts essentially never does.
 * Rewrites s (valid UTF-8) in place and returns the new length, or n when
 * s is no such text; SIZE_MAX when s was overwritten but turned out not to
 * be repairable (the caller then uses its original). */
static size_t mojibake_repair(char *s, size_t n)
{
    size_t i = 0, out = 0;
    bool high = false;
    while (i < n) {
        uint32_t cp;
        size_t len = utf8_decode(s + i, n - i, &cp);
        if (len == 0)
            return n; /* not the valid UTF-8 promised: leave it be */
        i += len;
        int b = cp_to_byte(cp);
        if (b < 0)
            return n;
        if (b >= 0x80)
            high = true;
    }
    if (!high)
        return n;
    /* Every code point takes at least as many bytes as the one byte it maps
     * to, so writing never overtakes reading. */
    i = 0;
    while (i < n) {
        uint32_t cp = 0;
        size_t len = utf8_decode(s + i, n - i, &cp); /* > 0: the first pass read it all */
        i += len ? len : 1;
        s[out++] = (char)cp_to_byte(cp);
    }
    return utf8_valid(s, out) ? out : SIZE_MAX;
}

/* ---- text ---------------------------------------------------------------- */

const char *feed_ctx_text(struct feed_ctx *c, const char *s, size_t n, enum feed_text_kind kind,
                          size_t max, bool one_line, const char **first_img)
{
    if (!s || n == 0 || c->rc < 0)
        return NULL;
    const char *src = s;
    size_t len = n;
    char *copy = NULL;
    if (utf8_valid(s, n)) {
        copy = malloc(n);
        if (!copy) {
            c->rc = ERR_NOMEM;
            return NULL;
        }
        memcpy(copy, s, n);
        size_t r = mojibake_repair(copy, n);
        if (r != SIZE_MAX && r != n) {
            src = copy;
            len = r;
        }
    }
    unsigned flags =
        (one_line ? HTML_TEXT_ONE_LINE : 0) | (kind == FEED_TEXT_PLAIN ? HTML_TEXT_PLAIN : 0);
    struct html_text_out ht;
    int rc = html_text_extract(c->a, src, len, max, flags, &ht);
    free(copy);
    if (rc < 0) {
        c->rc = rc;
        return NULL;
    }
    if (first_img && !*first_img && ht.first_img)
        *first_img = ht.first_img;
    return ht.len ? ht.text : NULL;
}

const char *feed_ctx_url(struct feed_ctx *c, const char *s, size_t n, const char *base)
{
    if (!s || c->rc < 0)
        return NULL;
    return ingest_url_absolute(c->a, s, n, base ? base : c->base_url, FEED_MAX_URL_BYTES, &c->rc);
}

const char *feed_ctx_author(struct feed_ctx *c, const char *s, size_t n)
{
    if (!s)
        return NULL;
    ingest_trim(&s, &n);
    /* RSS 2.0 <author> is an e-mail address, the name often in parentheses. */
    if (n > 2 && s[n - 1] == ')') {
        const char *open = memchr(s, '(', n);
        const char *at = memchr(s, '@', n);
        if (open && at && at < open && open + 1 < s + n - 1) {
            n = (size_t)(s + n - 1 - (open + 1));
            s = open + 1;
        }
    }
    return feed_ctx_text(c, s, n, FEED_TEXT_HTML, FEED_MAX_NAME_BYTES, true, NULL);
}

const char *feed_ctx_join(struct feed_ctx *c, const char *a, const char *b)
{
    if (!a)
        return b;
    if (!b || strcmp(a, b) == 0)
        return a;
    size_t la = strlen(a), lb = strlen(b);
    if (la + 2 + lb > FEED_MAX_NAME_BYTES)
        return a;
    char *j = arena_printf(c->a, "%s, %s", a, b);
    if (!j)
        c->rc = ERR_NOMEM;
    return j ? j : a;
}

bool feed_url_is_image(const char *s)
{
    static const char *const exts[] = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"};
    size_t n = strcspn(s, "?#");
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n >= e && strncasecmp(s + n - e, exts[i], e) == 0)
            return true;
    }
    return false;
}

void feed_ctx_item_finish(struct feed_ctx *c, struct feed_item *it, const char *first_img,
                          const char *base)
{
    if (!it->content)
        it->content = it->description;
    if (!it->image_url && first_img)
        it->image_url = feed_ctx_url(c, first_img, strlen(first_img), base);
}
