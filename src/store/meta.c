/* The meta terms of an article (store/meta.h). */
#include "store/meta.h"
#include "util/ascii.h"

#include <string.h>

#include "util/banned.h"

static void put_hex(struct buf *b, const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char digits[2];
        ascii_hex_byte(digits, (unsigned char)v[i]);
        buf_append(b, digits, 2);
    }
}

static bool plain_word(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = ascii_lower(v[i]);
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return false;
    }
    return len > 0;
}

void store_meta_term(struct buf *b, char kind, const char *v, size_t len)
{
    buf_putc(b, kind);
    switch (kind) {
    case STORE_META_ALL:
    case STORE_META_HEADLINE:
        return;
    case STORE_META_SOURCE:
    case STORE_META_DOMAIN:
        if (kind == STORE_META_DOMAIN) {
            /* Domains compare case-insensitively (API.md §8). */
            for (size_t i = 0; i < len; i++) {
                char c = ascii_lower(v[i]);
                put_hex(b, &c, 1);
            }
        } else {
            put_hex(b, v, len);
        }
        return;
    default:
        break;
    }
    if (kind == STORE_META_LANGUAGE && len == 2 && ascii_lower(v[0]) == 's' &&
        ascii_lower(v[1]) == 'e') {
        v = "sv";
    }
    if (plain_word(v, len)) {
        for (size_t i = 0; i < len; i++)
            buf_putc(b, ascii_lower(v[i]));
    } else {
        buf_putc(b, '_');
        for (size_t i = 0; i < len; i++) {
            char c = ascii_lower(v[i]);
            put_hex(b, &c, 1);
        }
    }
}

void store_meta_terms(struct buf *b, const struct article *art)
{
    store_meta_term(b, STORE_META_ALL, NULL, 0);
    if (art->language[0]) {
        buf_putc(b, ' ');
        store_meta_term(b, STORE_META_LANGUAGE, art->language,
                        strnlen(art->language, sizeof art->language - 1));
    }
    if (art->country[0]) {
        buf_putc(b, ' ');
        store_meta_term(b, STORE_META_COUNTRY, art->country,
                        strnlen(art->country, sizeof art->country - 1));
    }
    if (art->category && art->category[0]) {
        buf_putc(b, ' ');
        store_meta_term(b, STORE_META_CATEGORY, art->category, strlen(art->category));
    }
    if (art->headline) {
        buf_putc(b, ' ');
        store_meta_term(b, STORE_META_HEADLINE, NULL, 0);
    }
    if (art->source_id && art->source_id[0]) {
        buf_putc(b, ' ');
        store_meta_term(b, STORE_META_SOURCE, art->source_id, strlen(art->source_id));
    }
    if (art->domain && art->domain[0]) {
        /* news.bbc.co.uk files news.bbc.co.uk, bbc.co.uk, co.uk and uk, so
         * that a domain filter matches its subdomains with one term. */
        const char *d = art->domain;
        size_t len = strlen(d);
        for (size_t i = 0; i < len; i++) {
            if (i > 0 && d[i - 1] != '.')
                continue;
            if (d[i] == '.')
                continue; /* empty label: "a..b", ".a" */
            buf_putc(b, ' ');
            store_meta_term(b, STORE_META_DOMAIN, d + i, len - i);
        }
    }
}
