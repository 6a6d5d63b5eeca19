/* A brute-force oracle for searches, independent of src/text/ and
 * src/query/ (which the engine and FTS5 share, so their differential cannot
 * see a bug there): the rows are read once and cut into tokens by a
 * tokenizer of its own (docs/query-language.md: runs of letters and digits,
 * ASCII case folded, punctuation splits), queries are built as trees here
 * and evaluated here by a plain scan, and only then rendered as q text for
 * the backends.
 *
 * It knows ASCII only, so each document gets one of three answers (Kleene
 * logic): YES (the exact ASCII tokens match), NO, or MAYBE where something
 * it does not model could decide: a token with non-ASCII letters (folding,
 * CJK pairs) in a searched field, or an unquoted word in a language the
 * engine stems. A backend must return every YES and nothing but YES or
 * MAYBE; when no document is MAYBE the totals must be equal. */
#ifndef NEWSD_TEST_ORACLE_H
#define NEWSD_TEST_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "store/store.h"

#define ORACLE_FIELDS 3    /* title, description, content (INDEX_FIELD_* bits) */
#define ORACLE_WORD_MAX 20 /* longer words are not drawn for queries */
#define ORACLE_VOCAB_MAX 4000

enum oracle_value { ORACLE_NO = 0, ORACLE_MAYBE = 1, ORACLE_YES = 2 };

struct oracle_field {
    char **tok; /* lower-case ASCII tokens; NULL where a token had other letters */
    size_t n;
    char **maybe; /* ASCII runs of tokens mixed with another script's letters */
    size_t n_maybe;
    bool odd;   /* some token had letters the oracle does not fold at all */
    bool shaky; /* CJK text: pairs, so positions the oracle does not count */
};

struct oracle_doc {
    int64_t id, t;
    char *source_id, *domain;
    char lang[3];
    struct oracle_field f[ORACLE_FIELDS];
};

struct oracle {
    struct oracle_doc *doc;
    size_t n;
    char *vocab[ORACLE_VOCAB_MAX]; /* ASCII words of titles and descriptions, met first first */
    size_t n_vocab;
};

enum oracle_kind {
    OQ_WORD,
    OQ_EXACT,
    OQ_PHRASE,
    OQ_AND,
    OQ_OR,
    OQ_AND_NOT,
    OQ_TITLE,  /* title:leaf, the leaf a */
    OQ_SOURCE, /* source:w[0] */
    OQ_DOMAIN, /* domain:w[0] */
    OQ_PREFIX, /* w[0]*: an exact word that starts with w[0] */
    OQ_NEAR,   /* "w0 w1 (w2)"~distance: the distinct words in one window of one field */
};

struct oracle_q {
    enum oracle_kind kind;
    char *w[4]; /* the word, or a phrase's 2-3 words */
    size_t nw;
    unsigned distance;      /* OQ_NEAR */
    struct oracle_q *a, *b; /* AND / OR / AND_NOT (a AND NOT b) */
};

/* a and b are the same string. The oracle compares every token of every
 * document with a query's words: through ASan's strcmp interceptor that was
 * a fifth of test_index_engine's time (perf), a plain loop is not. */
static inline bool oracle_streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* s starts with prefix (the same reason). */
static inline bool oracle_starts(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix) {
        s++;
        prefix++;
    }
    return *prefix == '\0';
}

/* --- the tokenizer --------------------------------------------------------- */

/* Length of the UTF-8 sequence at s (1 for a stray byte) and its code point. */
static size_t oracle_utf8(const unsigned char *s, uint32_t *cp)
{
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;
    uint32_t v = n == 1 ? s[0] : s[0] & (0x3F >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD; /* cut short: one odd byte */
            return 1;
        }
        v = v << 6 | (s[i] & 0x3F);
    }
    *cp = v;
    return n;
}

/* One position: tok (len bytes) or, when NULL, a token no word equals;
 * odd marks the field as one the oracle cannot read. */
static void oracle_field_push(struct oracle_field *f, const char *tok, size_t len, bool odd)
{
    char **v = realloc(f->tok, (f->n + 1) * sizeof *v);
    assert_non_null(v);
    f->tok = v;
    f->tok[f->n] = NULL;
    if (odd) {
        f->odd = true;
    } else if (tok != NULL) {
        f->tok[f->n] = strndup(tok, len);
        assert_non_null(f->tok[f->n]);
    }
    f->n++;
}

/* Code points that split tokens as ASCII punctuation does: no-break space,
 * Latin-1 punctuation and symbols, the General Punctuation block (dashes,
 * curly quotes, spaces), currency signs, CJK punctuation. */
static bool oracle_cp_splits(uint32_t cp)
{
    return (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x20A0 && cp <= 0x20CF) ||
           (cp >= 0x3000 && cp <= 0x3003);
}

/* Latin-1 by the oracle's own table (docs/query-language.md: case folded,
 * accents removed, Straße = strasse): '.' splits, '?' is a letter it does
 * not fold (no decomposition: left to MAYBE), 'S' is ß, else the letter. */
static const char oracle_latin1[] = "........"
                                    "?.?..?.?"
                                    "..????.."
                                    "???.???."
                                    "aaaaaa?c"
                                    "eeeeiiii"
                                    "?nooooo."
                                    "?uuuuy?S"
                                    "aaaaaa?c"
                                    "eeeeiiii"
                                    "?nooooo."
                                    "?uuuuy?y";

/* Letters of Greek, Cyrillic, Hebrew and Arabic: folding keeps them in
 * their script, so they never make an ASCII word. */
static bool oracle_cp_foreign(uint32_t cp)
{
    return cp >= 0x370 && cp <= 0x6FF;
}

/* Han, kana, Hangul: overlapping pairs (docs/query-language.md), never an
 * ASCII word either, but a run is not one position. */
static bool oracle_cp_cjk(uint32_t cp)
{
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF) ||
           (cp >= 0xF900 && cp <= 0xFAFF);
}

/* Symbols that are neither letters nor digits, so they split: arrows,
 * mathematical and technical signs, box drawing, shapes, dingbats
 * (U+2460-24FF left out: enclosed digits fold to digits), emoji. */
static bool oracle_cp_symbol(uint32_t cp)
{
    return (cp >= 0x2190 && cp <= 0x245F) || (cp >= 0x2500 && cp <= 0x2BFF) ||
           (cp >= 0x1F000 && cp <= 0x1FAFF);
}

enum oracle_cp_kind { OCP_SPLIT, OCP_ASCII, OCP_ACCENT, OCP_FOREIGN, OCP_CJK, OCP_UNKNOWN };

/* How code point cp (>= 0x80) reads; for OCP_ASCII, the letters in buf. */
static enum oracle_cp_kind oracle_cp_fold(uint32_t cp, char buf[3])
{
    if (cp >= 0x300 && cp <= 0x36F)
        return OCP_ACCENT; /* removed */
    if (cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064) ||
        cp == 0xFEFF || cp == 0x640)
        return OCP_UNKNOWN; /* soft hyphen, zero widths, tatweel: joined or split? */
    if (cp >= 0xA0 && cp <= 0xFF) {
        char c = oracle_latin1[cp - 0xA0];
        if (c == '.')
            return OCP_SPLIT;
        if (c == '?')
            return OCP_UNKNOWN;
        buf[0] = c == 'S' ? 's' : c;
        buf[1] = c == 'S' ? 's' : '\0';
        buf[2] = '\0';
        return OCP_ASCII;
    }
    if (cp >= 0xFF01 && cp <= 0xFF5E) {
        /* fullwidth forms: ＡＢＣ = abc; their punctuation splits */
        uint32_t c = cp - 0xFF01 + 0x21;
        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return OCP_SPLIT;
        buf[0] = (char)c;
        buf[1] = '\0';
        return OCP_ASCII;
    }
    if (oracle_cp_splits(cp) || oracle_cp_symbol(cp))
        return OCP_SPLIT;
    if (oracle_cp_foreign(cp))
        return OCP_FOREIGN;
    if (oracle_cp_cjk(cp))
        return OCP_CJK;
    return OCP_UNKNOWN;
}

static void oracle_maybe_push(struct oracle_field *f, char *runs)
{
    for (char *w = strtok(runs, " "); w; w = strtok(NULL, " ")) {
        char **v = realloc(f->maybe, (f->n_maybe + 1) * sizeof *v);
        assert_non_null(v);
        f->maybe = v;
        f->maybe[f->n_maybe] = strdup(w);
        assert_non_null(f->maybe[f->n_maybe]);
        f->n_maybe++;
    }
}

/* The token the oracle collected: its ASCII letters (runs split by a space
 * where another script's letters were) and what else it held. */
struct oracle_tok {
    char s[256];
    size_t len;
    bool in, unknown, foreign, cjk;
};

static void oracle_tok_end(struct oracle_field *f, struct oracle_tok *t)
{
    if (!t->in)
        return;
    t->s[t->len] = '\0';
    if (t->cjk)
        f->shaky = true;
    if (t->unknown || t->len + 4 >= sizeof t->s) {
        oracle_field_push(f, NULL, 0, true);
    } else if (t->foreign || t->cjk) {
        bool ascii = strspn(t->s, " ") < t->len;
        oracle_field_push(f, ascii ? NULL : "\x01", 1, false); /* a position no word matches */
        if (ascii)
            oracle_maybe_push(f, t->s); /* a split at the script change could make these */
    } else {
        oracle_field_push(f, t->s, t->len, false);
    }
    memset(t, 0, sizeof *t);
}

static void oracle_tok_add(struct oracle_tok *t, const char *add)
{
    size_t n = strlen(add);
    t->in = true;
    if (add[0] == ' ' && t->len > 0 && t->s[t->len - 1] == ' ')
        return; /* one break per run of another script */
    if (t->len + n + 4 < sizeof t->s) {
        memcpy(t->s + t->len, add, n);
        t->len += n;
    } else {
        t->len = sizeof t->s; /* too long: unknown at the end */
    }
}

static void oracle_tokenize(struct oracle_field *f, const char *text)
{
    struct oracle_tok t = {0};
    char buf[3];
    const unsigned char *s = (const unsigned char *)(text ? text : "");

    memset(f, 0, sizeof *f);
    for (; *s; s++) {
        uint32_t cp = *s;
        if (cp < 0x80) {
            bool alnum =
                (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
            buf[0] = (char)(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
            buf[1] = '\0';
            if (alnum)
                oracle_tok_add(&t, buf);
            else
                oracle_tok_end(f, &t);
            continue;
        }
        s += oracle_utf8(s, &cp) - 1;
        switch (oracle_cp_fold(cp, buf)) {
        case OCP_SPLIT:
            oracle_tok_end(f, &t);
            break;
        case OCP_ASCII:
            oracle_tok_add(&t, buf);
            break;
        case OCP_ACCENT:
            t.in = true;
            break;
        case OCP_FOREIGN:
        case OCP_CJK:
            if (oracle_cp_cjk(cp))
                t.cjk = true;
            else
                t.foreign = true;
            oracle_tok_add(&t, " ");
            break;
        default:
            t.unknown = t.in = true;
            break;
        }
    }
    oracle_tok_end(f, &t);
}

/* --- the rows ---------------------------------------------------------------- */

/* A token fit to be a query word: ASCII, not the other-script mark, short. */
static bool oracle_word_ok(const char *w)
{
    return w != NULL && w[0] != '\x01' && strlen(w) <= ORACLE_WORD_MAX;
}

static bool oracle_has_word(const struct oracle *o, const char *w)
{
    for (size_t i = 0; i < o->n_vocab; i++) {
        if (oracle_streq(o->vocab[i], w))
            return true;
    }
    return false;
}

static void oracle_learn_words(struct oracle *o, const struct oracle_field *f)
{
    for (size_t i = 0; i < f->n && o->n_vocab < ORACLE_VOCAB_MAX; i++) {
        const char *w = f->tok[i];
        if (oracle_word_ok(w) && !oracle_has_word(o, w))
            o->vocab[o->n_vocab++] = strdup(w);
    }
}

static char *oracle_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Every row of the table (read by id straight from SQLite: no backend). */
static void oracle_load(struct oracle *o, const char *db_path)
{
    struct store_reader *rd = NULL;
    struct arena a;
    struct err err;
    sqlite3 *db;
    sqlite3_stmt *st;
    size_t cap = 0, n = 0;
    int64_t *ids = NULL;

    memset(o, 0, sizeof *o);
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM articles", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 512;
            ids = realloc(ids, cap * sizeof *ids);
            assert_non_null(ids);
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);

    arena_init(&a, 0);
    err_clear(&err);
    struct article *arts = arena_calloc(&a, n + 1, sizeof *arts);
    assert_non_null(arts);
    assert_int_equal(store_reader_open(&rd, db_path, &err), 0);
    assert_int_equal(store_reader_articles(rd, &a, ids, n, arts, &err), 0);
    store_reader_close(rd);
    o->doc = calloc(n + 1, sizeof *o->doc);
    assert_non_null(o->doc);
    for (size_t i = 0; i < n; i++) {
        struct oracle_doc *d = &o->doc[i];
        assert_int_equal(arts[i].id, ids[i]);
        d->id = arts[i].id;
        d->t = arts[i].published_at;
        d->source_id = oracle_strdup(arts[i].source_id);
        d->domain = oracle_strdup(arts[i].domain);
        memcpy(d->lang, arts[i].language, sizeof d->lang);
        oracle_tokenize(&d->f[0], arts[i].title);
        oracle_tokenize(&d->f[1], arts[i].description);
        oracle_tokenize(&d->f[2], arts[i].content);
        oracle_learn_words(o, &d->f[0]);
        oracle_learn_words(o, &d->f[1]);
    }
    o->n = n;
    arena_release(&a);
    free(ids);
}

static void oracle_release(struct oracle *o)
{
    for (size_t i = 0; i < o->n; i++) {
        for (int k = 0; k < ORACLE_FIELDS; k++) {
            struct oracle_field *f = &o->doc[i].f[k];
            for (size_t j = 0; j < f->n; j++)
                free(f->tok[j]);
            for (size_t j = 0; j < f->n_maybe; j++)
                free(f->maybe[j]);
            free(f->tok);
            free(f->maybe);
        }
        free(o->doc[i].source_id);
        free(o->doc[i].domain);
    }
    free(o->doc);
    for (size_t i = 0; i < o->n_vocab; i++)
        free(o->vocab[i]);
    memset(o, 0, sizeof *o);
}

/* --- evaluation -------------------------------------------------------------- */

/* The languages docs/query-language.md stems in; an unquoted word that does
 * not match exactly may still match another form there (or where the
 * language is unknown: the oracle does not guess). */
static bool oracle_lang_stems(const char *lang)
{
    return !oracle_streq(lang, "he") && !oracle_streq(lang, "zh") && !oracle_streq(lang, "ud");
}

static bool oracle_phrase_at(const struct oracle_field *f, size_t at, const struct oracle_q *q)
{
    for (size_t k = 0; k < q->nw; k++) {
        if (f->tok[at + k] == NULL || !oracle_streq(f->tok[at + k], q->w[k]))
            return false;
    }
    return true;
}

/* w[0]*: any token of the fields that starts with it; MAYBE where a token
 * the oracle does not read whole could. */
static enum oracle_value oracle_prefix(const struct oracle_doc *d, unsigned fields,
                                       const struct oracle_q *q)
{
    enum oracle_value v = ORACLE_NO;
    for (int k = 0; k < ORACLE_FIELDS; k++) {
        const struct oracle_field *f = &d->f[k];
        if (!(fields & (1u << k)))
            continue;
        for (size_t i = 0; i < f->n; i++) {
            if (f->tok[i] && oracle_starts(f->tok[i], q->w[0]))
                return ORACLE_YES;
        }
        if (f->odd || f->n_maybe > 0)
            v = ORACLE_MAYBE;
    }
    return v;
}

/* Whether word w is a token of f, or could be one the oracle does not read. */
static enum oracle_value oracle_field_has(const struct oracle_field *f, const char *w)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->tok[i] && oracle_streq(f->tok[i], w))
            return ORACLE_YES;
    for (size_t i = 0; i < f->n_maybe; i++)
        if (oracle_streq(f->maybe[i], w))
            return ORACLE_MAYBE;
    return f->odd ? ORACLE_MAYBE : ORACLE_NO;
}

/* "w0 w1"~D by brute force: some window [i, j] of one field, j − i at most
 * D + nw − 1, holds every word. Where every word is there, a token the
 * oracle does not read as the engine does could shift the positions: MAYBE. */
static enum oracle_value oracle_near(const struct oracle_doc *d, unsigned fields,
                                     const struct oracle_q *q)
{
    enum oracle_value v = ORACLE_NO;
    size_t span = q->distance + q->nw - 1;
    for (int k = 0; k < ORACLE_FIELDS; k++) {
        const struct oracle_field *f = &d->f[k];
        bool match = false, unsure = f->odd || f->shaky || f->n_maybe > 0;
        if (!(fields & (1u << k)))
            continue;
        enum oracle_value all = ORACLE_YES;
        for (size_t w = 0; w < q->nw; w++) {
            enum oracle_value h = oracle_field_has(f, q->w[w]);
            all = h < all ? h : all;
        }
        if (all == ORACLE_NO)
            continue;
        unsure |= all == ORACLE_MAYBE;
        for (size_t i = 0; i < f->n; i++) /* "\x01": one position, none of ours */
            unsure |= f->tok[i] == NULL;
        for (size_t i = 0; i < f->n && !match; i++) {
            for (size_t j = i; j < f->n && j <= i + span && !match; j++) {
                size_t found = 0;
                for (size_t w = 0; w < q->nw; w++) {
                    for (size_t t = i; t <= j; t++) {
                        if (f->tok[t] && oracle_streq(f->tok[t], q->w[w])) {
                            found++;
                            break;
                        }
                    }
                }
                match = found == q->nw;
            }
        }
        if (unsure)
            v = ORACLE_MAYBE;
        else if (match)
            return ORACLE_YES;
    }
    return v;
}

static enum oracle_value oracle_leaf(const struct oracle_doc *d, unsigned fields,
                                     const struct oracle_q *q)
{
    enum oracle_value v = ORACLE_NO;
    if (q->kind == OQ_PREFIX)
        return oracle_prefix(d, fields, q);
    if (q->kind == OQ_NEAR)
        return oracle_near(d, fields, q);
    for (int k = 0; k < ORACLE_FIELDS; k++) {
        const struct oracle_field *f = &d->f[k];
        if (!(fields & (1u << k)))
            continue;
        for (size_t i = 0; i + q->nw <= f->n; i++) {
            if (oracle_phrase_at(f, i, q))
                return ORACLE_YES;
        }
        if (f->odd || (q->nw > 1 && f->shaky))
            v = ORACLE_MAYBE;
        for (size_t i = 0; i < f->n_maybe; i++) {
            for (size_t k2 = 0; k2 < q->nw; k2++)
                if (oracle_streq(f->maybe[i], q->w[k2]))
                    v = ORACLE_MAYBE;
        }
        if (q->kind == OQ_WORD && f->n > 0 && oracle_lang_stems(d->lang))
            v = ORACLE_MAYBE;
    }
    return v;
}

static bool oracle_domain_in(const char *dom, const char *const *list, size_t n)
{
    size_t dl = dom ? strlen(dom) : 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list[i]);
        /* the domain itself or one of its subdomains */
        if (dl == l && oracle_streq(dom, list[i]))
            return true;
        if (dl > l && oracle_streq(dom + dl - l, list[i]) && dom[dl - l - 1] == '.')
            return true;
    }
    return false;
}

static enum oracle_value oracle_eval(const struct oracle_doc *d, unsigned fields,
                                     const struct oracle_q *q)
{
    enum oracle_value a, b;
    switch (q->kind) {
    case OQ_AND:
        a = oracle_eval(d, fields, q->a);
        b = oracle_eval(d, fields, q->b);
        return a < b ? a : b;
    case OQ_OR:
        a = oracle_eval(d, fields, q->a);
        b = oracle_eval(d, fields, q->b);
        return a > b ? a : b;
    case OQ_AND_NOT:
        a = oracle_eval(d, fields, q->a);
        b = (enum oracle_value)(ORACLE_YES - oracle_eval(d, fields, q->b));
        return a < b ? a : b;
    case OQ_TITLE: /* titles, whatever searchIn says */
        return oracle_eval(d, INDEX_FIELD_TITLE, q->a);
    case OQ_SOURCE:
        return d->source_id && oracle_streq(d->source_id, q->w[0]) ? ORACLE_YES : ORACLE_NO;
    case OQ_DOMAIN: {
        const char *const list[1] = {q->w[0]};
        return oracle_domain_in(d->domain, list, 1) ? ORACLE_YES : ORACLE_NO;
    }
    default:
        return oracle_leaf(d, fields, q);
    }
}

static bool oracle_filters_pass(const struct oracle_doc *d, const struct index_request *req)
{
    bool src = req->n_sources == 0;
    for (size_t i = 0; i < req->n_sources; i++)
        src |= d->source_id && oracle_streq(d->source_id, req->sources[i]);
    return src && d->t >= req->from && d->t <= req->to &&
           (req->n_domains == 0 || oracle_domain_in(d->domain, req->domains, req->n_domains)) &&
           !oracle_domain_in(d->domain, req->exclude_domains, req->n_exclude_domains) &&
           (req->language == NULL || oracle_streq(d->lang, req->language));
}

/* --- random trees, and their q text ---------------------------------------- */

static const char *oracle_word(const struct oracle *o)
{
    unsigned n = (unsigned)o->n_vocab;
    return o->vocab[rnd(2) ? rnd(n < 80 ? n : 80) : rnd(n)];
}

/* 2-3 consecutive ASCII tokens of some document's title; a word if none. */
static void oracle_phrase(const struct oracle *o, struct oracle_q *q)
{
    for (int tries = 0; tries < 20; tries++) {
        const struct oracle_field *f = &o->doc[rnd((unsigned)o->n)].f[0];
        size_t len = 2 + rnd(2);
        if (f->n < len)
            continue;
        size_t at = rnd((unsigned)(f->n - len + 1));
        bool ok = true;
        for (size_t k = 0; k < len; k++)
            ok &= oracle_word_ok(f->tok[at + k]);
        if (!ok)
            continue;
        q->kind = OQ_PHRASE;
        q->nw = len;
        for (size_t k = 0; k < len; k++)
            q->w[k] = f->tok[at + k];
        return;
    }
    q->kind = OQ_EXACT;
    q->nw = 1;
    q->w[0] = (char *)oracle_word(o);
}

/* 2-3 distinct ASCII words of a window of some document's title, in a
 * shuffled order, with a distance of 0-4: near that title's own spacing,
 * so that both answers come up. A word if none. The document, or NULL. */
static const struct oracle_doc *oracle_near_q(const struct oracle *o, struct oracle_q *q)
{
    for (int tries = 0; tries < 20; tries++) {
        const struct oracle_doc *d = &o->doc[rnd((unsigned)o->n)];
        const struct oracle_field *f = &d->f[0];
        size_t len = 2 + rnd(2);
        if (f->n < len + 2)
            continue;
        size_t at = rnd((unsigned)(f->n - len - 1)), nw = 0;
        for (size_t k = 0; k < len + 2 && nw < len; k++) {
            const char *w = f->tok[at + k];
            bool seen = false;
            if (rnd(3) == 0 || !oracle_word_ok(w))
                continue;
            for (size_t j = 0; j < nw; j++)
                seen |= strcmp(q->w[j], w) == 0;
            if (!seen)
                q->w[nw++] = (char *)w;
        }
        if (nw < 2)
            continue;
        for (size_t k = nw - 1; k > 0; k--) { /* any order */
            size_t j = rnd((unsigned)k + 1);
            char *t = q->w[k];
            q->w[k] = q->w[j];
            q->w[j] = t;
        }
        q->kind = OQ_NEAR;
        q->nw = nw;
        q->distance = rnd(5);
        return d;
    }
    q->kind = OQ_EXACT;
    q->nw = 1;
    q->w[0] = (char *)oracle_word(o);
    return NULL;
}

/* A field term (docs/query-language.md): leaf in titles, or one of the
 * documents' sources or domains (a parent domain now and then). */
static struct oracle_q *oracle_q_field(const struct oracle *o, struct arena *a,
                                       struct oracle_q *leaf)
{
    const struct oracle_doc *d = &o->doc[rnd((unsigned)o->n)];
    struct oracle_q *q = arena_calloc(a, 1, sizeof *q);
    assert_non_null(q);
    q->nw = 1;
    if (rnd(2) == 0 || (d->source_id == NULL && d->domain == NULL)) {
        q->kind = OQ_TITLE;
        q->a = leaf;
    } else if (d->source_id && (d->domain == NULL || rnd(2))) {
        q->kind = OQ_SOURCE;
        q->w[0] = d->source_id;
    } else {
        const char *dot = strchr(d->domain, '.');
        q->kind = OQ_DOMAIN;
        q->w[0] = rnd(3) == 0 && dot && strchr(dot + 1, '.') ? (char *)dot + 1 : d->domain;
    }
    return q;
}

static struct oracle_q *oracle_q_random(const struct oracle *o, struct arena *a, int depth)
{
    struct oracle_q *q = arena_calloc(a, 1, sizeof *q);
    unsigned k = rnd(10);
    assert_non_null(q);
    if (k >= 7 && depth < 3) {
        q->kind = k == 7 ? OQ_AND : k == 8 ? OQ_OR : OQ_AND_NOT;
        q->a = oracle_q_random(o, a, depth + 1);
        q->b = oracle_q_random(o, a, depth + 1);
    } else if (k >= 5) {
        if (rnd(3) == 0)
            oracle_near_q(o, q);
        else
            oracle_phrase(o, q);
    } else {
        q->kind = k < 4 ? OQ_EXACT : OQ_WORD; /* unquoted: mostly MAYBE where stemmed */
        q->nw = 1;
        q->w[0] = (char *)oracle_word(o);
        if (strlen(q->w[0]) >= 6 && rnd(4) == 0) { /* its first five letters, then '*' */
            q->kind = OQ_PREFIX;
            q->w[0] = arena_strndup(a, q->w[0], 5);
            assert_non_null(q->w[0]);
        }
    }
    if (q->kind != OQ_AND && q->kind != OQ_OR && q->kind != OQ_AND_NOT && rnd(6) == 0)
        return oracle_q_field(o, a, q);
    return q;
}

static bool oracle_q_leaf(const struct oracle_q *q)
{
    return q->kind == OQ_WORD || q->kind == OQ_EXACT || q->kind == OQ_PHRASE ||
           q->kind == OQ_TITLE || q->kind == OQ_SOURCE || q->kind == OQ_DOMAIN ||
           q->kind == OQ_PREFIX || q->kind == OQ_NEAR;
}

/* Fully bracketed, in the documented spellings (AND or juxtaposition, OR,
 * AND NOT or a leading -), so the text says what the tree says. */
static void oracle_q_text(const struct oracle_q *q, char *out, size_t cap)
{
    char a[2048], b[2048];
    switch (q->kind) {
    case OQ_WORD:
        snprintf(out, cap, "%s", q->w[0]);
        break;
    case OQ_EXACT:
        snprintf(out, cap, "\"%s\"", q->w[0]);
        break;
    case OQ_PREFIX:
        snprintf(out, cap, "%s*", q->w[0]);
        break;
    case OQ_PHRASE:
        snprintf(out, cap, "\"%s %s%s%s\"", q->w[0], q->w[1], q->nw > 2 ? " " : "",
                 q->nw > 2 ? q->w[2] : "");
        break;
    case OQ_NEAR:
        snprintf(out, cap, "\"%s %s%s%s\"~%u", q->w[0], q->w[1], q->nw > 2 ? " " : "",
                 q->nw > 2 ? q->w[2] : "", q->distance);
        break;
    case OQ_TITLE:
        oracle_q_text(q->a, a, sizeof a);
        snprintf(out, cap, "title:%s", a);
        break;
    case OQ_SOURCE:
        snprintf(out, cap, rnd(2) ? "source:%s" : "source:\"%s\"", q->w[0]);
        break;
    case OQ_DOMAIN:
        snprintf(out, cap, rnd(2) ? "domain:%s" : "domain:\"%s\"", q->w[0]);
        break;
    default:
        oracle_q_text(q->a, a, sizeof a);
        oracle_q_text(q->b, b, sizeof b);
        if (q->kind == OQ_OR)
            snprintf(out, cap, "(%s OR %s)", a, b);
        else if (q->kind == OQ_AND)
            snprintf(out, cap, rnd(2) ? "(%s AND %s)" : "(%s %s)", a, b);
        else if (oracle_q_leaf(q->b) && rnd(2))
            snprintf(out, cap, "(%s -%s)", a, b);
        else
            snprintf(out, cap, "(%s AND NOT %s)", a, b);
        break;
    }
}

/* A tree (or none, 1 in 8) with filters the oracle models: sources,
 * domains, excluded domains, language, a date window (often on an
 * article's own second). */
static void oracle_request_random(const struct oracle *o, struct test_corpus *c, struct arena *a,
                                  struct index_request *req, struct oracle_q **tree, char *q,
                                  size_t cap)
{
    memset(req, 0, sizeof *req);
    req->from = INT64_MIN;
    req->to = INT64_MAX;
    req->q_fields = rnd(4) == 0 ? 1 + rnd(7) : INDEX_FIELD_ALL;
    *tree = NULL;
    q[0] = '\0';
    if (rnd(8) != 0) {
        *tree = oracle_q_random(o, a, 0);
        oracle_q_text(*tree, q, cap);
    }
    if (rnd(6) == 0) {
        const char **v = arena_calloc(a, 2, sizeof *v);
        v[0] = c->sources[rnd((unsigned)c->n_sources)];
        v[1] = c->sources[rnd((unsigned)c->n_sources)];
        req->sources = v;
        req->n_sources = 1 + rnd(2);
    }
    if (rnd(6) == 0) {
        const char **v = arena_calloc(a, 1, sizeof *v);
        const char *d = c->domains[rnd((unsigned)c->n_domains)];
        const char *dot = strchr(d, '.');
        v[0] = rnd(3) == 0 && dot && strchr(dot + 1, '.') ? dot + 1 : d;
        if (rnd(2))
            req->domains = v, req->n_domains = 1;
        else
            req->exclude_domains = v, req->n_exclude_domains = 1;
    }
    if (rnd(6) == 0)
        req->language = langs[rnd(4)];
    if (rnd(3) == 0)
        boundary_window(c, req);
}

#endif
