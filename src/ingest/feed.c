/* Feed parsing entry point (ingest/feed.h): gzip bodies, format detection,
 * and the field helpers of feed_internal.h that every format shares (text
 * normalisation, mojibake repair, URL resolution, authors, dates). */
#include "ingest/feed.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "ingest/feed_internal.h"
#include "ingest/html_text.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/timefmt.h"
#include "util/url.h"
#include "util/utf8.h"

#include "util/banned.h"

const char *feed_format_name(enum feed_format f)
{
    switch (f) {
    case FEED_FORMAT_RSS:
        return "rss";
    case FEED_FORMAT_RDF:
        return "rdf";
    case FEED_FORMAT_ATOM:
        return "atom";
    case FEED_FORMAT_JSON:
        return "json";
    default:
        return "unknown";
    }
}

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

static bool is_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_blank((unsigned char)(*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_blank((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* "http://" or "https://" with a host. */
static bool is_http_url(const char *u)
{
    struct url_parts p;
    url_split(u, strlen(u), &p);
    bool http = (p.scheme_len == 4 && strncasecmp(p.scheme, "http", 4) == 0) ||
                (p.scheme_len == 5 && strncasecmp(p.scheme, "https", 5) == 0);
    return http && p.authority_len > 0;
}

const char *feed_ctx_url(struct feed_ctx *c, const char *s, size_t n, const char *base)
{
    const char *result = NULL;
    struct buf b, r;
    buf_init(&b, FEED_MAX_URL_BYTES + 1);
    buf_init(&r, 2 * FEED_MAX_URL_BYTES + 16);
    if (!s || c->rc < 0)
        goto out;
    trim(&s, &n);
    if (n == 0 || n > FEED_MAX_URL_BYTES || !utf8_valid(s, n))
        goto out;
    /* Spaces inside URLs are common in feeds; other control characters mean
     * this is no URL. */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == ' ')
            buf_puts(&b, "%20");
        else if (ch < 0x20 || ch == 0x7F)
            goto out;
        else
            buf_putc(&b, (char)ch);
    }
    if (buf_error(&b))
        goto out;
    if (!base)
        base = c->base_url;
    const char *url = b.data;
    if (!is_http_url(url)) {
        if (!base || !is_http_url(base))
            goto out;
        url_resolve(&r, url, base);
        if (buf_error(&r))
            goto out;
        url = r.data;
    }
    size_t ulen = strlen(url);
    if (!is_http_url(url) || ulen > FEED_MAX_URL_BYTES)
        goto out;
    char *copy = arena_strndup(c->a, url, ulen);
    if (!copy) {
        c->rc = ERR_NOMEM;
        goto out;
    }
    /* The scheme is case-insensitive; the rest is left as written. */
    for (size_t i = 0; copy[i] != ':'; i++)
        copy[i] = ascii_lower(copy[i]);
    result = copy;
out:
    buf_release(&b);
    buf_release(&r);
    return result;
}

const char *feed_ctx_author(struct feed_ctx *c, const char *s, size_t n)
{
    if (!s)
        return NULL;
    trim(&s, &n);
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

/* Month abbreviations of the languages publishers' feeds are seen to
 * localise RFC 822 dates in (pt, es, fr, de, it), matched as prefixes of
 * the lower-cased word; English ones pass through unchanged. */
static const struct {
    const char *word;
    const char *en;
} months_l10n[] = {
    {"janv", "Jan"},
    {"ene", "Jan"},
    {"gen", "Jan"},
    {"fev", "Feb"},
    {"f\xC3\xA9"
     "v",
     "Feb"},
    {"m\xC3\xA4r", "Mar"},
    {"mrz", "Mar"},
    {"abr", "Apr"},
    {"avr", "Apr"},
    {"mai", "May"},
    {"mag", "May"},
    {"juin", "Jun"},
    {"giu", "Jun"},
    {"juil", "Jul"},
    {"lug", "Jul"},
    {"ago", "Aug"},
    {"ao\xC3\xBB", "Aug"},
    {"set", "Sep"},
    {"out", "Oct"},
    {"ott", "Oct"},
    {"okt", "Oct"},
    {"dez", "Dec"},
    {"dic", "Dec"},
    {"d\xC3\xA9"
     "c",
     "Dec"},
};

/* "Seg, 24 Set 2018 19:42:40 -0300" -> "24 Sep 2018 19:42:40 -0300": the
 * weekday dropped (any language), a localised month replaced. */
static bool date_delocalise(const char *s, size_t n, char *out, size_t out_size)
{
    size_t o = 0, i = 0;
    const char *comma = memchr(s, ',', n);
    if (comma && comma - s < 16)
        i = (size_t)(comma - s) + 1;
    bool changed = i > 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        const char *word = s + i;
        size_t wl = j - i;
        const char *rep = NULL;
        if (wl >= 3 && wl <= 12 && ascii_is_alpha((char)word[0])) {
            char low[16];
            ascii_lower_n(low, word, wl);
            low[wl] = '\0';
            for (size_t m = 0; m < sizeof months_l10n / sizeof months_l10n[0] && !rep; m++)
                if (strncmp(low, months_l10n[m].word, strlen(months_l10n[m].word)) == 0)
                    rep = months_l10n[m].en;
        }
        const char *w = rep ? rep : word;
        size_t l = rep ? 3 : wl;
        changed |= rep != NULL;
        if (o + l + 2 > out_size)
            return false;
        memcpy(out + o, w, l);
        o += l;
        while (j < n && s[j] == ' ')
            out[o++] = s[j++];
        i = j;
    }
    out[o] = '\0';
    return changed;
}

bool feed_ctx_date(const char *s, size_t n, int64_t *out)
{
    if (!s)
        return false;
    trim(&s, &n);
    if (n == 0 || n > 128)
        return false;
    if (timefmt_parse_any(s, n, out) == 0)
        return true;
    char fixed[160];
    return date_delocalise(s, n, fixed, sizeof fixed) &&
           timefmt_parse_any(fixed, strlen(fixed), out) == 0;
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

/* ---- entry --------------------------------------------------------------- */

/* Inflate a gzip body into a malloc'd buffer of at most FEED_MAX_BODY_BYTES. */
static int gunzip(const unsigned char *in, size_t len, char **out, size_t *out_len, struct err *err)
{
    int rc = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    struct buf b;
    buf_init(&b, FEED_MAX_BODY_BYTES + 1);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        rc = err_set(err, ERR_NOMEM, "gzip: cannot start inflating");
        goto out_noend;
    }
    zs.next_in = (unsigned char *)(uintptr_t)in;
    zs.avail_in = len > UINT32_MAX ? UINT32_MAX : (unsigned)len;
    for (;;) {
        rc = buf_grow(&b, 64 * 1024);
        if (rc < 0) {
            if (rc == ERR_TOO_LARGE)
                err_set(err, rc, "gzip body inflates past %d bytes", FEED_MAX_BODY_BYTES);
            else
                err_set(err, rc, "out of memory inflating the body");
            goto out;
        }
        zs.next_out = (unsigned char *)b.data + b.len;
        zs.avail_out = (unsigned)(b.cap - b.len - 1);
        int z = inflate(&zs, Z_NO_FLUSH);
        b.len = (size_t)((char *)zs.next_out - b.data);
        b.data[b.len] = '\0';
        if (b.len > FEED_MAX_BODY_BYTES) {
            rc = err_set(err, ERR_TOO_LARGE, "gzip body inflates past %d bytes",
                         FEED_MAX_BODY_BYTES);
            goto out;
        }
        if (z == Z_STREAM_END)
            break;
        if (z != Z_OK) {
            /* A truncated stream keeps what was inflated: feeds are parsed
             * in recover mode anyway. */
            if (z == Z_BUF_ERROR && b.len > 0)
                break;
            rc = err_set(err, ERR_PARSE, "gzip: %s", zs.msg ? zs.msg : "corrupt data");
            goto out;
        }
    }
    *out = buf_detach(&b, out_len);
out:
    inflateEnd(&zs);
out_noend:
    buf_release(&b);
    return rc;
}

int feed_parse(struct arena *a, const char *body, size_t len, const char *charset,
               const char *base_url, struct feed *out, struct err *err)
{
    int rc = 0;
    char *inflated = NULL;
    memset(out, 0, sizeof *out);
    struct feed_ctx c = {.a = a, .err = err, .out = out};
    if (!body)
        len = 0;
    if (len > FEED_MAX_BODY_BYTES) {
        rc = err_set(err, ERR_TOO_LARGE, "feed body over %d bytes", FEED_MAX_BODY_BYTES);
        goto out;
    }
    if (len >= 2 && (unsigned char)body[0] == 0x1F && (unsigned char)body[1] == 0x8B) {
        size_t ilen = 0;
        rc = gunzip((const unsigned char *)body, len, &inflated, &ilen, err);
        if (rc < 0)
            goto out;
        body = inflated;
        len = ilen;
    }
    if (base_url && is_http_url(base_url) && strlen(base_url) <= FEED_MAX_URL_BYTES)
        c.base_url = base_url;

    size_t i = 0;
    if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && is_blank((unsigned char)body[i]))
        i++;
    if (i == len) {
        rc = err_set(err, ERR_PARSE, "empty feed body");
        goto out;
    }
    if (body[i] == '{')
        rc = feed_json_parse(&c, body + i, len - i);
    else
        rc = feed_xml_parse(&c, body, len, charset);
    if (rc == 0 && c.rc < 0)
        rc = err_set(err, c.rc, "out of memory parsing the feed");
out:
    free(inflated);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
}
