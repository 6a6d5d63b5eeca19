/* Sketches and keys of story/sketch.h.
 *
 * MinHash by one permutation (Li, Owen, Zhang 2012): each shingle's 64-bit
 * hash picks one of K bins with its top bits and competes there with its
 * low 32 bits, so a sketch costs one hash per shingle instead of K; bins no
 * shingle reached borrow from the next filled bin to their right, shifted
 * by the distance (Shrivastava's rotation), so two sketches with the same
 * shingles agree on every bin and empty bins do not count as agreement by
 * accident. */
#include "story/sketch.h"

#include <string.h>

#include "story/publisher.h"
#include "util/ascii.h"
#include "util/hash.h"
#include "util/utf8.h"
#include "util/banned.h"

#define BIN_SHIFT 58 /* 64 - log2(STORY_SKETCH_K) */
_Static_assert(STORY_SKETCH_K == 64, "BIN_SHIFT and the filled mask assume 64 bins");

/* Where a title's publisher tail (" - BBC News") starts, else strlen. The
 * tail is short and follows a dash or bar between spaces; the last one
 * wins ("A - B - CNN" loses " - CNN"). */
static size_t title_body_len(const char *t, size_t n)
{
    static const char *const seps[] = {" - ", " | ", " \xe2\x80\x93 ", " \xe2\x80\x94 "};
    size_t cut = n;
    for (size_t i = 0; i < sizeof seps / sizeof seps[0]; i++) {
        size_t sl = strlen(seps[i]);
        /* Only the last one counts, and only when the tail after it is
         * short: the last 60 + sl bytes are all that need looking at. */
        size_t lo = n > sl + 60 ? n - sl - 60 : 0;
        for (size_t p = n >= sl ? n - sl + 1 : 0; p-- > lo;) {
            if (t[p] == ' ' && memcmp(t + p, seps[i], sl) == 0) {
                if (p > 0 && n - p - sl <= 60 && (cut == n || p > cut))
                    cut = p;
                break;
            }
        }
    }
    return cut;
}

/* NewsAPI cuts content at 200 characters and appends "… [+N chars]": the
 * count differs between copies of one text, so the tail is left out. */
static size_t content_body_len(const char *c, size_t n)
{
    size_t lim = n > 32 ? n - 32 : 0;
    for (size_t p = n; p-- > lim;) {
        if (c[p] == '[' && p + 1 < n && c[p + 1] == '+')
            return p;
    }
    return n;
}

/* ---- words -------------------------------------------------------------
 * A sketch's own word splitter, not the engine's tokenizer (text/text.h):
 * the two copies of one text it compares are spelt alike, so it needs no
 * Unicode normalisation, and a profile of `newsd import` showed the
 * tokenizer's NFKC folding as two thirds of a sketch's cost. Words are
 * runs of letters and digits, case folded for ASCII, Latin-1, Greek and
 * Cyrillic; punctuation, symbols, emoji and bytes that are not UTF-8
 * separate them; scripts written without spaces (Han, kana, Thai, Lao,
 * Myanmar, Khmer) give one word per character, so their shingles are
 * character pairs. A word is its FNV-1a hash over its code points. */

#define FNV_PRIME 1099511628211ULL

enum cp_kind { CP_SEP, CP_LETTER, CP_ALONE };

/* What code point cp is to a word; *cp is case folded. */
static enum cp_kind cp_kind(uint32_t *cp)
{
    uint32_t c = *cp;
    if (c < 0x80) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            return CP_LETTER;
        if (c >= 'A' && c <= 'Z') {
            *cp = c + 32;
            return CP_LETTER;
        }
        return CP_SEP;
    }
    if (c < 0xC0) /* C1 controls, no-break space, Latin-1 punctuation and signs */
        return CP_SEP;
    if (c < 0x250) {
        if (c == 0xD7 || c == 0xF7) /* × ÷ */
            return CP_SEP;
        if (c <= 0xDE)
            *cp = c + 0x20;
        return CP_LETTER;
    }
    if (c >= 0x391 && c <= 0x3A9) { /* Greek capitals */
        *cp = c + 0x20;
        return CP_LETTER;
    }
    if (c >= 0x400 && c <= 0x42F) { /* Cyrillic capitals */
        *cp = c + (c < 0x410 ? 0x50 : 0x20);
        return CP_LETTER;
    }
    if ((c >= 0xE00 && c <= 0xEFF) || (c >= 0x1000 && c <= 0x109F) ||
        (c >= 0x1780 && c <= 0x17FF) || (c >= 0x3040 && c <= 0x30FF) ||
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
        (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3FFFF))
        return CP_ALONE;
    if ((c >= 0x2000 && c <= 0x2BFF) || (c >= 0x2E00 && c <= 0x303F) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF0F) ||
        (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
        (c >= 0xFF5B && c <= 0xFF65) || (c >= 0x1F000 && c <= 0x1FAFF) || c == 0xFEFF)
        return CP_SEP;
    return CP_LETTER;
}

/* Calls word(ctx, hash) for each word of s[0..n) until it returns non-zero;
 * returns that value or 0. */
static int each_word(const char *s, size_t n, int (*word)(void *ctx, uint64_t h), void *ctx)
{
    uint64_t h = HASH_FNV1A64_INIT;
    bool in = false;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        enum cp_kind k;
        unsigned char b = (unsigned char)s[i];
        if (b < 0x80) { /* the common case, in line: a letter, a digit or not */
            unsigned lower = b | 0x20u;
            i++;
            if (lower - 'a' < 26u || (unsigned)b - '0' < 10u) {
                h = (h ^ (lower - 'a' < 26u ? lower : b)) * FNV_PRIME;
                in = true;
            } else if (in) {
                int rc = word(ctx, h);
                if (rc != 0)
                    return rc;
                h = HASH_FNV1A64_INIT;
                in = false;
            }
            continue;
        } else {
            size_t len = utf8_decode(s + i, n - i, &cp);
            if (len == 0) {
                cp = ' ';
                len = 1;
            }
            i += len;
        }
        k = cp_kind(&cp);
        if (k != CP_LETTER && in) {
            int rc = word(ctx, h);
            if (rc != 0)
                return rc;
            h = HASH_FNV1A64_INIT;
            in = false;
        }
        if (k == CP_SEP)
            continue;
        h = (h ^ cp) * FNV_PRIME;
        in = true;
        if (k == CP_ALONE) {
            int rc = word(ctx, h);
            if (rc != 0)
                return rc;
            h = HASH_FNV1A64_INIT;
            in = false;
        }
    }
    return in ? word(ctx, h) : 0;
}

/* ---- sketches ---------------------------------------------------------- */

struct title_hasher {
    uint64_t h;
    unsigned words;
};

static int title_word(void *ctx, uint64_t wh)
{
    struct title_hasher *t = ctx;
    t->h = hash_mix64(t->h ^ wh);
    t->words++;
    return 0;
}

/* The key of a title whose body (without the publisher tail) was read
 * into t: a body too short to be sure of is keyed with its tail when
 * that makes it long enough ("Moodle 3.9.1 - Produce/manage educational
 * sites. (Free)" is cut at its " - " but is no publisher's name). */
static uint64_t title_key_of(const struct title_hasher *t, const char *title, size_t body,
                             size_t whole)
{
    struct title_hasher w = {HASH_FNV1A64_INIT, 0};
    if (t->words < STORY_TITLE_MIN_WORDS) {
        if (body == whole)
            return 0;
        (void)each_word(title, whole, title_word, &w);
        if (w.words < STORY_TITLE_MIN_WORDS)
            return 0;
        t = &w;
    }
    uint64_t k = hash_mix64(t->h);
    return k ? k : 1;
}

struct shingler {
    struct title_hasher title;            /* the title's key, made in the same pass */
    uint64_t recent[STORY_SHINGLE_WORDS]; /* hashes of the last words */
    unsigned words;                       /* words read */
    uint64_t filled;                      /* bins reached */
    struct story_sketch *sk;
};

static int shingle_word(void *ctx, uint64_t wh)
{
    struct shingler *s = ctx;
    if (s->words >= STORY_SKETCH_MAX_WORDS)
        return 1; /* enough read: stops the splitter */
    _Static_assert(STORY_SHINGLE_WORDS == 2, "a shingle is the last two words");
    s->recent[0] = s->recent[1];
    s->recent[1] = wh;
    s->words++;
    if (s->words < STORY_SHINGLE_WORDS)
        return 0;
    /* The words' hashes are well spread already: one finalizer per shingle
     * (the order counts through the multiply). */
    uint64_t h = 0;
    for (unsigned i = 0; i < STORY_SHINGLE_WORDS; i++)
        h = (h ^ s->recent[i]) * 0x9E3779B97F4A7C15ULL;
    h = hash_mix64(h);
    unsigned bin = (unsigned)(h >> BIN_SHIFT);
    uint32_t v = (uint32_t)h;
    if (!(s->filled & ((uint64_t)1 << bin)) || v < s->sk->slot[bin])
        s->sk->slot[bin] = v;
    s->filled |= (uint64_t)1 << bin;
    s->sk->shingles++;
    return 0;
}

/* A word of the title: its key reads every word, the sketch up to its
 * limit. */
static int shingle_title_word(void *ctx, uint64_t wh)
{
    struct shingler *s = ctx;
    (void)title_word(&s->title, wh);
    (void)shingle_word(s, wh);
    return 0;
}

static void shingle_text(struct shingler *s, const char *t, size_t n)
{
    if (t && n > 0 && s->words < STORY_SKETCH_MAX_WORDS)
        (void)each_word(t, n, shingle_word, s); /* 1 = word limit */
}

void story_sketch_build(struct story_sketch *out, const char *title, const char *description,
                        const char *content)
{
    (void)story_sketch_build_titled(out, title, description, content);
}

uint64_t story_sketch_build_titled(struct story_sketch *out, const char *title,
                                   const char *description, const char *content)
{
    struct shingler s;
    memset(out, 0, sizeof *out);
    memset(&s, 0, sizeof s);
    s.title.h = HASH_FNV1A64_INIT;
    s.sk = out;
    size_t whole = title ? strlen(title) : 0, body = title ? title_body_len(title, whole) : 0;
    if (title)
        (void)each_word(title, body, shingle_title_word, &s);
    if (description)
        shingle_text(&s, description, strlen(description));
    if (content)
        shingle_text(&s, content, content_body_len(content, strlen(content)));
    if (s.filled == 0)
        return title ? title_key_of(&s.title, title, body, whole) : 0;
    /* Rotation: an empty bin takes the next filled bin's value plus a
     * constant per step of distance. */
    for (unsigned b = 0; b < STORY_SKETCH_K; b++) {
        if (s.filled & ((uint64_t)1 << b))
            continue;
        unsigned d = 1;
        while (!(s.filled & ((uint64_t)1 << ((b + d) % STORY_SKETCH_K))))
            d++;
        out->slot[b] = out->slot[(b + d) % STORY_SKETCH_K] + d * 0x9E3779B9u;
    }
    return title ? title_key_of(&s.title, title, body, whole) : 0;
}

double story_sketch_similarity(const struct story_sketch *a, const struct story_sketch *b)
{
    if (a->shingles < STORY_SKETCH_MIN_SHINGLES || b->shingles < STORY_SKETCH_MIN_SHINGLES)
        return 0;
    unsigned same = 0;
    for (unsigned i = 0; i < STORY_SKETCH_K; i++)
        same += a->slot[i] == b->slot[i];
    return (double)same / STORY_SKETCH_K;
}

uint64_t story_title_key(const char *title)
{
    struct title_hasher t = {HASH_FNV1A64_INIT, 0};
    if (title == NULL)
        return 0;
    size_t whole = strlen(title), body = title_body_len(title, whole);
    (void)each_word(title, body, title_word, &t);
    return title_key_of(&t, title, body, whole);
}

static bool prefix_ci(const char *s, size_t n, const char *p)
{
    size_t pl = strlen(p);
    if (n < pl)
        return false;
    for (size_t i = 0; i < pl; i++)
        if (ascii_lower(s[i]) != p[i])
            return false;
    return true;
}

static bool suffix_is(const char *s, size_t n, const char *p)
{
    size_t pl = strlen(p);
    return n >= pl && memcmp(s + n - pl, p, pl) == 0;
}

/* A query parameter that only asks for the AMP rendering. */
static bool amp_param(const char *p, size_t n)
{
    return (n == 3 && memcmp(p, "amp", 3) == 0) || prefix_ci(p, n, "amp=") ||
           prefix_ci(p, n, "outputtype=amp");
}

/* The host of url[0..n) without scheme and www./m./amp.; *end gets where
 * the host ends (the path starts). */
static const char *host_span(const char *url, size_t n, size_t *hn_out, const char **end)
{
    const char *p = url;
    if (prefix_ci(p, n, "https://"))
        p += 8, n -= 8;
    else if (prefix_ci(p, n, "http://"))
        p += 7, n -= 7;
    size_t hn = strcspn(p, "/?#");
    if (hn > n)
        hn = n;
    *end = p + hn;
    if (prefix_ci(p, hn, "www."))
        p += 4, hn -= 4;
    else if (prefix_ci(p, hn, "m."))
        p += 2, hn -= 2;
    else if (prefix_ci(p, hn, "amp."))
        p += 4, hn -= 4;
    *hn_out = hn;
    return p;
}

static uint64_t host_hash(const char *host, size_t hn)
{
    uint64_t h = HASH_FNV1A64_INIT;
    for (size_t i = 0; i < hn; i++) {
        char c = ascii_lower(host[i]);
        h = hash_fnv1a64_update(h, &c, 1);
    }
    return h;
}

/* A generic second-level label (bbc.co.uk, abc.net.au, abcnews.go.com). */
static bool generic_second_level(const char *l, size_t n)
{
    static const char *const g[] = {"co", "com", "net", "org", "gov", "ac",  "edu", "ne", "or",
                                    "go", "gob", "gv",  "mil", "nic", "ltd", "plc", "sch"};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (strlen(g[i]) == n && memcmp(g[i], l, n) == 0)
            return true;
    return false;
}

uint64_t story_site_key(const char *url)
{
    if (url == NULL || url[0] == '\0')
        return 0;
    char publisher[STORY_PUBLISHER_URL_MAX];
    url = story_publisher_url(url, publisher, sizeof publisher);
    size_t hn;
    const char *end, *host = host_span(url, strcspn(url, "#"), &hn, &end);
    const char *colon = memchr(host, ':', hn); /* the port, or user:pass@ */
    if (colon != NULL && memchr(host, '@', hn) == NULL)
        hn = (size_t)(colon - host);
    while (hn > 0 && host[hn - 1] == '.') /* "example.com." */
        hn--;
    /* labels from the right: [l2 .] l1 . tld */
    size_t dot1 = hn, dot2, dot3;
    while (dot1 > 0 && host[dot1 - 1] != '.')
        dot1--;
    const char *name = host;
    size_t nn = hn;
    if (dot1 > 0) {
        dot2 = dot1 - 1; /* at the dot before the tld */
        while (dot2 > 0 && host[dot2 - 1] != '.')
            dot2--;
        name = host + dot2;
        nn = dot1 - 1 - dot2;
        if (dot2 > 0 && generic_second_level(name, nn)) {
            dot3 = dot2 - 1;
            while (dot3 > 0 && host[dot3 - 1] != '.')
                dot3--;
            name = host + dot3;
            nn = dot2 - 1 - dot3;
        }
    }
    uint64_t h = hash_mix64(host_hash(name, nn));
    return h ? h : 1;
}

uint64_t story_url_key(const char *url)
{
    if (url == NULL || url[0] == '\0')
        return 0;
    char publisher[STORY_PUBLISHER_URL_MAX];
    url = story_publisher_url(url, publisher, sizeof publisher);
    size_t n = strcspn(url, "#"), hn;
    const char *path, *host = host_span(url, n, &hn, &path);
    uint64_t h = host_hash(host, hn);
    size_t rest = n - (size_t)(path - url);
    size_t pn = strcspn(path, "?");
    if (pn > rest)
        pn = rest;
    const char *query = pn < rest ? path + pn + 1 : NULL; /* after the '?' */
    size_t qn = query ? rest - pn - 1 : 0;
    /* /amp at either end of the path, .amp before an extension */
    if (suffix_is(path, pn, "/amp/"))
        pn -= 5;
    else if (suffix_is(path, pn, "/amp"))
        pn -= 4;
    if (prefix_ci(path, pn, "/amp/"))
        path += 4, pn -= 4;
    while (pn > 0 && path[pn - 1] == '/')
        pn--;
    size_t amp_ext = 0;
    if (suffix_is(path, pn, ".amp.html"))
        amp_ext = 9;
    else if (suffix_is(path, pn, ".amp"))
        amp_ext = 4;
    h = hash_fnv1a64_update(h, "/", 1);
    h = hash_fnv1a64_update(h, path, pn - amp_ext);
    if (amp_ext == 9)
        h = hash_fnv1a64_update(h, ".html", 5);
    if (query) {
        const char *q = query;
        while (qn > 0) {
            size_t pl = strcspn(q, "&");
            if (pl > qn)
                pl = qn;
            if (pl > 0 && !amp_param(q, pl)) {
                h = hash_fnv1a64_update(h, "&", 1);
                h = hash_fnv1a64_update(h, q, pl);
            }
            q += pl < qn ? pl + 1 : pl;
            qn -= pl < qn ? pl + 1 : pl;
        }
    }
    h = hash_mix64(h);
    return h ? h : 1;
}

int64_t story_id_for_url(const char *url)
{
    uint64_t h = hash_bytes64(url ? url : "", url ? strlen(url) : 0);
    int64_t id = (int64_t)(h & INT64_MAX);
    return id ? id : 1;
}
