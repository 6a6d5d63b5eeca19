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

#include "text/text.h"
#include "util/ascii.h"
#include "util/hash.h"
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
        for (size_t p = n >= sl ? n - sl + 1 : 0; p-- > 0;) {
            if (memcmp(t + p, seps[i], sl) == 0) {
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

struct shingler {
    uint64_t recent[STORY_SHINGLE_WORDS]; /* hashes of the last words */
    unsigned words;                       /* words read */
    uint64_t filled;                      /* bins reached */
    struct story_sketch *sk;
};

static int shingle_word(const struct text_token *tok, void *ctx)
{
    struct shingler *s = ctx;
    if (s->words >= STORY_SKETCH_MAX_WORDS)
        return 1; /* enough read: stops the tokenizer */
    memmove(s->recent, s->recent + 1, sizeof s->recent - sizeof s->recent[0]);
    s->recent[STORY_SHINGLE_WORDS - 1] = hash_fnv1a64(tok->text, tok->len);
    s->words++;
    if (s->words < STORY_SHINGLE_WORDS)
        return 0;
    uint64_t h = HASH_FNV1A64_INIT;
    for (unsigned i = 0; i < STORY_SHINGLE_WORDS; i++)
        h = hash_mix64(h ^ s->recent[i]) + i;
    h = hash_mix64(h);
    unsigned bin = (unsigned)(h >> BIN_SHIFT);
    uint32_t v = (uint32_t)h;
    if (!(s->filled & ((uint64_t)1 << bin)) || v < s->sk->slot[bin])
        s->sk->slot[bin] = v;
    s->filled |= (uint64_t)1 << bin;
    s->sk->shingles++;
    return 0;
}

static void shingle_text(struct shingler *s, const char *t, size_t n)
{
    if (t && n > 0 && s->words < STORY_SKETCH_MAX_WORDS)
        (void)text_tokenize(t, n, shingle_word, s); /* 1 = word limit; ERR_NOMEM: what was read */
}

void story_sketch_build(struct story_sketch *out, const char *title, const char *description,
                        const char *content)
{
    struct shingler s;
    memset(out, 0, sizeof *out);
    memset(&s, 0, sizeof s);
    s.sk = out;
    if (title)
        shingle_text(&s, title, title_body_len(title, strlen(title)));
    if (description)
        shingle_text(&s, description, strlen(description));
    if (content)
        shingle_text(&s, content, content_body_len(content, strlen(content)));
    if (s.filled == 0)
        return;
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

struct title_hasher {
    uint64_t h;
    unsigned words;
};

static int title_word(const struct text_token *tok, void *ctx)
{
    struct title_hasher *t = ctx;
    t->h = hash_fnv1a64_update(t->h, tok->text, tok->len);
    t->h = hash_fnv1a64_update(t->h, " ", 1);
    t->words++;
    return 0;
}

uint64_t story_title_key(const char *title)
{
    struct title_hasher t = {HASH_FNV1A64_INIT, 0};
    if (title == NULL)
        return 0;
    if (text_tokenize(title, title_body_len(title, strlen(title)), title_word, &t) != 0)
        return 0;
    if (t.words < STORY_TITLE_MIN_WORDS)
        return 0;
    uint64_t k = hash_mix64(t.h);
    return k ? k : 1;
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

uint64_t story_host_key(const char *url)
{
    if (url == NULL || url[0] == '\0')
        return 0;
    size_t hn;
    const char *end, *host = host_span(url, strcspn(url, "#"), &hn, &end);
    uint64_t h = hash_mix64(host_hash(host, hn));
    return h ? h : 1;
}

uint64_t story_url_key(const char *url)
{
    if (url == NULL || url[0] == '\0')
        return 0;
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
