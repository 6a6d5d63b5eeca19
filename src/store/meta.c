/* The meta terms of an article (store/meta.h). */
#include "store/meta.h"
#include "util/ascii.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <nettle/sha2.h>

#include "text/text.h"
#include "util/limits.h"

#include "util/banned.h"

static void put_hex(struct buf *b, const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char digits[2];
        ascii_hex_byte(digits, (unsigned char)v[i]);
        buf_append(b, digits, 2);
    }
}

/* Words of an author field read (text_tokenize) past this many are not
 * part of any name: the field is a list too long to be anyone's (author:
 * in q refuses a longer name). */
#define AUTHOR_WORDS_MAX LIMIT_AUTHOR_WORDS
#define AUTHOR_HASH_BYTES 8

/* An author field's (or one name's) words: joined[at[i], at[i + 1] - 1)
 * is word i (each word is followed by a space), sep[i] says whether a list
 * separator stood between word i - 1 and word i in src. */
struct author_words {
    const char *src;
    size_t prev_end, n;
    struct buf joined;
    size_t at[AUTHOR_WORDS_MAX + 1];
    bool sep[AUTHOR_WORDS_MAX];
};

static int author_word(const struct text_token *t, void *ctx)
{
    struct author_words *w = ctx;
    if (w->n == AUTHOR_WORDS_MAX)
        return 1;
    bool sep = false;
    for (size_t i = w->prev_end; i < t->start; i++) {
        char c = w->src[i];
        sep |= c == ',' || c == ';' || c == '|' || c == '&';
    }
    w->prev_end = t->end;
    w->sep[w->n] = sep;
    w->at[w->n] = w->joined.len;
    buf_append(&w->joined, t->text, t->len);
    buf_putc(&w->joined, ' ');
    w->at[++w->n] = w->joined.len;
    return 0;
}

/* The words of s[0..len) into w (w->joined initialised by the caller). */
static int author_words_read(struct author_words *w, const char *s, size_t len)
{
    w->src = s;
    w->prev_end = w->n = 0;
    w->at[0] = 0;
    int rc = text_tokenize(s, len, author_word, w);
    return rc < 0 ? rc : buf_error(&w->joined) ? ERR_NOMEM : 0;
}

static bool author_word_is(const struct author_words *w, size_t i, const char *word)
{
    size_t len = strlen(word);
    return i < w->n && w->at[i + 1] - 1 - w->at[i] == len &&
           memcmp(w->joined.data + w->at[i], word, len) == 0;
}

/* The hash of words [i, j) of w (j > i), as they read joined by spaces. */
static void author_hash(const struct author_words *w, size_t i, size_t j,
                        uint8_t out[AUTHOR_HASH_BYTES])
{
    uint8_t digest[SHA256_DIGEST_SIZE];
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, w->at[j] - 1 - w->at[i], (const uint8_t *)w->joined.data + w->at[i]);
    sha256_digest(&c, sizeof digest, digest);
    memcpy(out, digest, AUTHOR_HASH_BYTES);
}

static void put_author_term(struct buf *b, const uint8_t hash[AUTHOR_HASH_BYTES])
{
    char hex[2 * AUTHOR_HASH_BYTES + 1];
    ascii_hex_encode(hex, hash, AUTHOR_HASH_BYTES);
    buf_append(b, hex, 2 * AUTHOR_HASH_BYTES);
}

/* The terms store_meta_author_terms has appended, to write each once. */
struct author_terms {
    struct buf *b;
    const struct author_words *w;
    uint8_t seen[STORE_META_AUTHOR_TERMS_MAX][AUTHOR_HASH_BYTES];
    int n;
};

/* The name of words [i, j), and the same without a first word "by". */
static void author_name(struct author_terms *t, size_t i, size_t j)
{
    for (int pass = 0; pass < 2 && j > i && t->n < STORE_META_AUTHOR_TERMS_MAX; pass++) {
        if (pass == 1 && !(author_word_is(t->w, i, "by") && j - i >= 2))
            break;
        size_t from = i + (size_t)pass;
        uint8_t h[AUTHOR_HASH_BYTES];
        author_hash(t->w, from, j, h);
        bool dup = false;
        for (int k = 0; k < t->n && !dup; k++)
            dup = memcmp(t->seen[k], h, sizeof h) == 0;
        if (dup)
            continue;
        memcpy(t->seen[t->n], h, sizeof h);
        if (t->n++ > 0)
            buf_putc(t->b, ' ');
        buf_putc(t->b, STORE_META_AUTHOR);
        put_author_term(t->b, h);
    }
}

int store_meta_author_terms(struct buf *b, const char *author)
{
    if (author == NULL || author[0] == '\0')
        return 0;
    struct author_words w;
    buf_init(&w.joined, 0);
    int rc = author_words_read(&w, author, strlen(author));
    struct author_terms t = {.b = b, .w = &w};
    if (rc == 0 && w.n > 0) {
        author_name(&t, 0, w.n);
        /* the parts of a list: a separator ends one, as does "and" (dropped) */
        size_t from = 0;
        for (size_t k = 1; k <= w.n; k++) {
            bool and = author_word_is(&w, k, "and");
            if (k < w.n && !w.sep[k] && !and)
                continue;
            if (from > 0 || k < w.n) /* not the whole field again */
                author_name(&t, from, k);
            from = and? k + 1 : k;
        }
        rc = t.n;
    }
    buf_release(&w.joined);
    return rc < 0 ? rc : buf_error(b) ? ERR_NOMEM : rc;
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
    case STORE_META_AUTHOR: {
        struct author_words w;
        uint8_t h[AUTHOR_HASH_BYTES] = {0};
        buf_init(&w.joined, 0);
        /* no word: a term no article has (store_meta_author_terms
         * writes none for such a field) */
        if (author_words_read(&w, v, len) == 0 && w.n > 0)
            author_hash(&w, 0, w.n, h);
        else if (buf_error(&w.joined))
            b->err = ERR_NOMEM;
        put_author_term(b, h);
        buf_release(&w.joined);
        return;
    }
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
