/* Facet columns (columns.h): per segment and facet, each docid's value as
 * a small integer (a number of the segment's own string table), derived
 * the first time a search asks for that facet of that segment and kept in
 * memory with the segment (docs/engine.md "Facets"). Source, domain,
 * language, country and category come from the meta terms (store/meta.h):
 * each value's term is walked once and its docids marked (a domain's
 * suffix terms are walked too: a document keeps its longest, which is its
 * own domain). The author, which no term holds, comes from each
 * document's JSON in the document store. Read by facets.c (counting) and
 * by the set evaluator (sets.c: a broad language or source filter checked
 * at each candidate). */
#include "index/engine/columns.h"
#include "index/engine/internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "article/json_author.h"
#include "store/meta.h"
#include "util/array.h"
#include "util/ascii.h"
#include "util/bits.h"
#include "util/buf.h"
#include "util/strtab.h"

#include "util/banned.h"

#define NO_VALUE ENG_FACET_NO_VALUE

/* Each column is made once, whoever asks, and different columns at once:
 * the first to ask for a column claims it (its bit in the segment's
 * `building`, under build_lock), makes it with no lock held and publishes
 * it; who asks for the same column meanwhile waits for it on build_made.
 * One lock held over every build made a search wait for whatever column
 * was being made: the first `q=people&language=en` after a restart of a
 * 10 M store waited 0.96-1.44 s behind the warm threads' columns of the
 * other facets (warm.h), against 0.15 s without them. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t build_made = PTHREAD_COND_INITIALIZER;

/* The bits of eng_facet_cols.building: facet f's column is bit f. */
#define BUILDING_SOURCE_DOCS (1u << INDEX_FACET_N)
#define BUILDING_NORMS (1u << (INDEX_FACET_N + 1))

static const char meta_kind[INDEX_FACET_N] = {STORE_META_SOURCE,   STORE_META_DOMAIN,
                                              STORE_META_LANGUAGE, STORE_META_COUNTRY,
                                              STORE_META_CATEGORY, 0};

/* A meta term's value back from store_meta_term's spelling: hex for
 * source and domain, "_"+hex for a language, country or category that is
 * not one plain word, else the word. false when it is neither. */
static bool meta_value(char kind, const char *t, size_t len, struct buf *out)
{
    bool hex = kind == STORE_META_SOURCE || kind == STORE_META_DOMAIN;
    if (!hex && len > 0 && t[0] == '_') {
        hex = true;
        t++;
        len--;
    }
    if (!hex) {
        buf_append(out, t, len);
        return true;
    }
    if (len % 2)
        return false;
    for (size_t i = 0; i < len; i += 2) {
        int hi = ascii_hex_value(t[i]), lo = ascii_hex_value(t[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        buf_putc(out, (char)(hi * 16 + lo));
    }
    return true;
}

/* build_meta's value being set: its number, its length, and the length
 * of every value numbered so far (by number). */
struct meta_fill {
    uint32_t *v;
    uint32_t num, len;
    const uint32_t *lens;
};

/* A block of the value's docids into the column. */
static void meta_fill_block(void *ctx, const uint32_t *ids, uint32_t n)
{
    const struct meta_fill *m = ctx;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t *x = &m->v[ids[k]];
        /* a domain's suffixes are terms too: keep the longest */
        if (*x == NO_VALUE || m->lens[*x] < m->len)
            *x = m->num;
    }
}

/* A column from the meta terms of kind: each term's docids read a block at
 * a time and checked as they are (eng_segment_term_docids), not opened for
 * a cursor (its whole check, with each posting's document length for the
 * blocks' minima, and a seek per posting were two thirds of the first
 * language-filtered search of a 10 M store). */
static int build_meta(const struct eng_segment *s, char kind, struct eng_facet_col *c)
{
    const char prefix[2] = {ENG_META_MARK, kind};
    struct buf val;
    uint32_t *lens = NULL;
    size_t lcap = 0;
    int rc = 0;
    buf_init(&val, 0);
    /* a damaged dictionary (the search says so and flags the segment)
     * fails the column rather than leaving it empty */
    struct eng_term_iter it;
    struct eng_term term, *t = &term;
    bool more = eng_term_iter_at(&it, s, eng_tdict_lower(s, prefix, 2, t), t);
    for (; rc == 0 && more; more = eng_term_iter_next(&it)) {
        const char *str = s->strs + t->str;
        if (t->len < 2 || memcmp(str, prefix, 2))
            break;
        size_t num;
        int added;
        val.len = 0;
        if (!meta_value(kind, str + 2, t->len - 2, &val) || val.len == 0)
            continue; /* not a value newsd writes: no facet value */
        if (buf_error(&val)) {
            rc = ERR_NOMEM;
            break;
        }
        if ((rc = strtab_add(&c->vals, val.data, val.len, &num, &added)) < 0 ||
            (rc = array_reserve(&lens, &lcap, num + 1, 0, sizeof *lens)) < 0)
            break;
        lens[num] = (uint32_t)val.len;
        struct meta_fill m = {c->v, (uint32_t)num, (uint32_t)val.len, lens};
        rc = eng_segment_term_docids(s, t, meta_fill_block, &m);
    }
    if (rc == 0 && eng_segment_damaged(s))
        rc = ERR_PARSE;
    buf_release(&val);
    free(lens);
    return rc;
}

/* The author column from the document store. */
static int build_author(const struct eng_segment *s, struct eng_facet_col *c)
{
    struct buf val;
    char *json = NULL;
    size_t cap = 0;
    int rc = 0;
    buf_init(&val, 0);
    for (uint32_t d = 0; d < s->n && rc == 0; d++) {
        size_t size, num;
        int added;
        if ((rc = eng_docs_size(s, d, &size)) < 0)
            break;
        if (size > cap) {
            char *grown = realloc(json, size);
            if (grown == NULL) {
                rc = ERR_NOMEM;
                break;
            }
            json = grown;
            cap = size;
        }
        if ((rc = eng_docs_read(s, d, json, size)) < 0)
            break;
        val.len = 0;
        /* A document that decoded (its checksum held) is the JSON
         * article_json wrote; should its author not read back, the
         * document has none here rather than the segment being damaged. */
        int got = article_json_author(json, size, &val);
        if (buf_error(&val)) {
            rc = ERR_NOMEM;
            break;
        }
        if (got == 1) {
            if ((rc = strtab_add(&c->vals, val.data, val.len, &num, &added)) < 0)
                break;
            c->v[d] = (uint32_t)num;
        }
    }
    free(json);
    buf_release(&val);
    return rc;
}

/* The segment's facet columns (under build_lock). */
static struct eng_facet_cols *cols_of(struct eng_segment *s)
{
    struct eng_facet_cols *cols = atomic_load(&s->facets);
    if (cols == NULL && (cols = calloc(1, sizeof *cols)) != NULL)
        atomic_store(&s->facets, cols);
    return cols;
}

/* A column of s kept in its eng_facet_cols (number i of its kind: the
 * facet), made by make the first time it is asked. */
struct lazy_col {
    void *(*get)(struct eng_facet_cols *cols, unsigned i);
    void (*put)(struct eng_facet_cols *cols, unsigned i, void *col);
    int (*make)(const struct eng_segment *s, unsigned i, void **col);
    unsigned bit; /* in building, shifted left by i */
};

static int lazy_col(struct eng_segment *s, const struct lazy_col *c, unsigned i, void **out)
{
    struct eng_facet_cols *cols = atomic_load(&s->facets);
    void *col = cols ? c->get(cols, i) : NULL;
    unsigned bit = c->bit << i;
    int rc = 0;
    if (col) {
        *out = col;
        return 0;
    }
    pthread_mutex_lock(&build_lock);
    for (;;) {
        if ((cols = cols_of(s)) == NULL) {
            rc = ERR_NOMEM;
            break;
        }
        if ((col = c->get(cols, i)) != NULL || !(cols->building & bit))
            break;
        pthread_cond_wait(&build_made, &build_lock); /* another thread makes it */
    }
    if (rc == 0 && col == NULL) { /* ours to make */
        cols->building |= bit;
        pthread_mutex_unlock(&build_lock);
        rc = c->make(s, i, &col);
        pthread_mutex_lock(&build_lock);
        if (rc == 0)
            c->put(cols, i, col);
        else /* the next to ask tries again (and says why) */
            col = NULL;
        cols->building &= ~bit;
        pthread_cond_broadcast(&build_made);
    }
    pthread_mutex_unlock(&build_lock);
    *out = col;
    return rc;
}

static void *facet_get(struct eng_facet_cols *cols, unsigned f)
{
    return atomic_load(&cols->col[f]);
}

static void facet_put(struct eng_facet_cols *cols, unsigned f, void *col)
{
    atomic_store(&cols->col[f], col);
}

static int facet_make(const struct eng_segment *s, unsigned f, void **out)
{
    struct eng_facet_col *c = calloc(1, sizeof *c);
    if (c == NULL || (c->v = malloc((s->n ? s->n : 1) * sizeof *c->v)) == NULL) {
        eng_facet_col_free(c);
        return ERR_NOMEM;
    }
    strtab_init(&c->vals);
    memset(c->v, 0xff, s->n * sizeof *c->v); /* NO_VALUE */
    int rc = f == INDEX_FACET_AUTHOR ? build_author(s, c) : build_meta(s, meta_kind[f], c);
    if (rc < 0) {
        eng_facet_col_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int eng_facet_column(struct eng_segment *s, enum index_facet f, const struct eng_facet_col **out)
{
    static const struct lazy_col c = {facet_get, facet_put, facet_make, 1};
    void *col;
    int rc = lazy_col(s, &c, (unsigned)f, &col);
    *out = col;
    return rc;
}

static struct eng_source_docs *source_docs_build(const struct eng_segment *s)
{
    uint32_t nsrc = 0;
    for (uint32_t d = 0; d < s->n; d++) {
        if (s->src[d] != ENG_NO_SOURCE && s->src[d] >= nsrc)
            nsrc = s->src[d] + 1;
    }
    struct eng_source_docs *sd = calloc(1, sizeof *sd);
    if (sd == NULL || (sd->off = calloc((size_t)nsrc + 2, sizeof *sd->off)) == NULL ||
        (sd->docs = malloc(((size_t)s->n + 1) * sizeof *sd->docs)) == NULL) {
        if (sd)
            free(sd->off);
        free(sd);
        return NULL;
    }
    sd->nsrc = nsrc;
    for (uint32_t d = 0; d < s->n; d++) { /* off[k + 2]: k's count, then shifted */
        if (s->src[d] != ENG_NO_SOURCE)
            sd->off[s->src[d] + 2]++;
    }
    for (uint32_t k = 2; k < nsrc + 2; k++)
        sd->off[k] += sd->off[k - 1];
    for (uint32_t d = 0; d < s->n; d++) { /* off[k + 1]: where k's next goes */
        if (s->src[d] != ENG_NO_SOURCE)
            sd->docs[sd->off[s->src[d] + 1]++] = d;
    }
    return sd;
}

static void *by_source_get(struct eng_facet_cols *cols, unsigned i)
{
    (void)i;
    return atomic_load(&cols->by_source);
}

static void by_source_put(struct eng_facet_cols *cols, unsigned i, void *col)
{
    (void)i;
    atomic_store(&cols->by_source, col);
}

static int by_source_make(const struct eng_segment *s, unsigned i, void **col)
{
    (void)i;
    return (*col = source_docs_build(s)) ? 0 : ERR_NOMEM;
}

int eng_source_docs(struct eng_segment *s, const struct eng_source_docs **out)
{
    static const struct lazy_col c = {by_source_get, by_source_put, by_source_make,
                                      BUILDING_SOURCE_DOCS};
    void *col;
    int rc = lazy_col(s, &c, 0, &col);
    *out = col;
    return rc;
}

static void *norm_get(struct eng_facet_cols *cols, unsigned i)
{
    (void)i;
    return atomic_load(&cols->norm);
}

static void norm_put(struct eng_facet_cols *cols, unsigned i, void *col)
{
    (void)i;
    atomic_store(&cols->norm, col);
}

static int norm_make(const struct eng_segment *s, unsigned i, void **col)
{
    (void)i;
    uint8_t *norm = malloc(s->n ? s->n : 1);
    for (uint32_t d = 0; norm && d < s->n; d++)
        norm[d] = eng_norm_of(s->dl[d]);
    *col = norm;
    return norm ? 0 : ERR_NOMEM;
}

int eng_length_norms(struct eng_segment *s, const uint8_t **out)
{
    static const struct lazy_col c = {norm_get, norm_put, norm_make, BUILDING_NORMS};
    void *col;
    int rc = lazy_col(s, &c, 0, &col);
    *out = col;
    return rc;
}

/* Language and source only: one value per document. (A domain's term
 * also holds its subdomains' documents, and a column keeps a document's
 * own domain; a country or category may not be the only one.) */
static int term_column(struct eng_segment *s, const struct eng_term *t,
                       const struct eng_facet_col **out, uint32_t *want)
{
    if (eng_kind(t->kind) != ENG_TERM_META || t->len < 2)
        return 0;
    const char *str = s->strs + t->str; /* a term the dictionary search checked */
    enum index_facet f;
    if (str[1] == STORE_META_LANGUAGE)
        f = INDEX_FACET_LANGUAGE;
    else if (str[1] == STORE_META_SOURCE)
        f = INDEX_FACET_SOURCE;
    else
        return 0;
    struct buf val;
    buf_init(&val, 0);
    bool ok = meta_value(str[1], str + 2, t->len - 2, &val) && !buf_error(&val);
    const struct eng_facet_col *c = NULL;
    int rc = ok ? eng_facet_column(s, f, &c) : 0;
    int64_t num = rc == 0 && ok ? strtab_find(&c->vals, val.data, val.len) : -1;
    buf_release(&val);
    if (rc < 0 || num < 0) /* not a value the column knows: the caller decodes the term */
        return rc;
    *out = c;
    *want = (uint32_t)num;
    return 1;
}

int eng_facet_term_column(struct eng_segment *s, const struct eng_term *t, const uint32_t **col,
                          uint32_t *want)
{
    const struct eng_facet_col *c;
    int rc = term_column(s, t, &c, want);
    if (rc > 0)
        *col = c->v;
    return rc;
}

/* The set of value want among c's first n; NULL when none. */
static const uint64_t *set_made(const struct eng_facet_col *c, uint32_t n, uint32_t want)
{
    for (uint32_t i = 0; i < n; i++) {
        if (c->set_value[i] == want)
            return c->set[i];
    }
    return NULL;
}

/* b's bit d set where col[d] == want, for d < n: each word made in a
 * register (a read-modify-write of b per document was a chain of stores
 * and loads, 20 ms for a language of a 10 M store's first filter). */
static void value_bits(const uint32_t *col, uint32_t n, uint32_t want, uint64_t *b)
{
    uint32_t w = 0;
    for (; w < n / 64; w++) {
        const uint32_t *p = col + (size_t)w * 64;
        uint64_t x = 0;
        for (unsigned i = 0; i < 64; i++)
            x |= (uint64_t)(p[i] == want) << i;
        b[w] = x;
    }
    for (uint32_t d = w * 64; d < n; d++)
        b[d >> 6] |= (uint64_t)(col[d] == want) << (d & 63);
}

/* The bitset of value want's documents in column c of s: made the first
 * time a narrowing asks for it, while fewer than ENG_FACET_VALUE_SETS are;
 * NULL past that or out of memory (the caller reads the column). */
static const uint64_t *value_set(const struct eng_segment *s, struct eng_facet_col *c,
                                 uint32_t want)
{
    uint32_t n = atomic_load(&c->nset);
    const uint64_t *found = set_made(c, n, want);
    if (found || n == ENG_FACET_VALUE_SETS)
        return found;
    pthread_mutex_lock(&build_lock);
    n = atomic_load(&c->nset);
    found = set_made(c, n, want);
    uint64_t *b;
    if (found == NULL && n < ENG_FACET_VALUE_SETS &&
        (b = calloc(s->n / 64 + 1, sizeof *b)) != NULL) {
        value_bits(c->v, s->n, want, b);
        c->set_value[n] = want;
        c->set[n] = b;
        atomic_store(&c->nset, n + 1);
        found = b;
    }
    pthread_mutex_unlock(&build_lock);
    return found;
}

int eng_facet_column_narrow(struct eng_segment *s, const struct eng_term *t, uint64_t *v,
                            uint32_t base, uint32_t nw, bool neg)
{
    const struct eng_facet_col *c;
    uint32_t want;
    int rc = term_column(s, t, &c, &want);
    if (rc <= 0)
        return rc;
    /* A word of the value's bitset a word of candidates: a language
     * filter read at each of 330,000 candidates (q=people&language=en at
     * 10 M) was a load each, 10 % of the mix over 16 clients. (The
     * column is the segment's, made writable by malloc: the sets are
     * added to it under build_lock.) */
    const uint32_t *col = c->v;
    const uint64_t *set = value_set(s, (struct eng_facet_col *)(uintptr_t)c, want);
    if (set) {
        const uint64_t *from = set + base / 64;
        for (uint32_t w = 0; w < nw; w++)
            v[w] &= neg ? ~from[w] : from[w];
        return 1;
    }
    for (uint32_t w = 0; w < nw; w++) {
        uint64_t keep = v[w];
        for (uint64_t bits = v[w]; bits; bits &= bits - 1) {
            unsigned i = bits_low(bits);
            if ((col[base + w * 64 + i] == want) == neg)
                keep &= ~((uint64_t)1 << i);
        }
        v[w] = keep;
    }
    return 1;
}
