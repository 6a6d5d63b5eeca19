/* The field readers more than one room of ingest/ needs (ingest/ingest.h):
 * feeds resolve their links and read their dates with them, pages their
 * references and publication times. */
#include "ingest/ingest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "util/ascii.h"
#include "util/buf.h"
#include "util/timefmt.h"
#include "util/url.h"
#include "util/utf8.h"

#include "util/banned.h"

static bool is_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

void ingest_trim(const char **s, size_t *n)
{
    while (*n && is_blank((unsigned char)(*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_blank((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

bool ingest_url_is_http(const char *u)
{
    struct url_parts p;
    url_split(u, strlen(u), &p);
    bool http = (p.scheme_len == 4 && strncasecmp(p.scheme, "http", 4) == 0) ||
                (p.scheme_len == 5 && strncasecmp(p.scheme, "https", 5) == 0);
    return http && p.authority_len > 0;
}

const char *ingest_url_absolute(struct arena *a, const char *s, size_t n, const char *base,
                                size_t max, int *rc)
{
    const char *result = NULL;
    struct buf b, r;
    buf_init(&b, max + 1);
    buf_init(&r, 2 * max + 16);
    if (!s)
        goto out;
    ingest_trim(&s, &n);
    if (n == 0 || n > max || !utf8_valid(s, n))
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
    const char *url = b.data;
    if (!ingest_url_is_http(url)) {
        if (!base || !ingest_url_is_http(base))
            goto out;
        url_resolve(&r, url, base);
        if (buf_error(&r))
            goto out;
        url = r.data;
    }
    size_t ulen = strlen(url);
    if (!ingest_url_is_http(url) || ulen > max)
        goto out;
    char *copy = arena_strndup(a, url, ulen);
    if (!copy) {
        *rc = ERR_NOMEM;
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

bool ingest_date_parse(const char *s, size_t n, int64_t *out)
{
    if (!s)
        return false;
    ingest_trim(&s, &n);
    if (n == 0 || n > 128)
        return false;
    if (timefmt_parse_any(s, n, out) == 0)
        return true;
    char fixed[160];
    return date_delocalise(s, n, fixed, sizeof fixed) &&
           timefmt_parse_any(fixed, strlen(fixed), out) == 0;
}
