/* The segment builder (index/engine/internal.h): rows in, a segment out. An article is
 * tokenized by the FTS5 "newsd" tokenizer's own code as FTS5 sees its row
 * (text_fts5_doc_tokenize, store/sqlite/sqlite.c's triggers): each text
 * column is "\x1F" language "\x1F" text, each token is an exact term with
 * its position and, in a stemmed language, "~stem" when the stem differs;
 * the meta column is the stored meta_terms split on spaces. The row size
 * (BM25's D) counts the tokens of all four columns as FTS5's docsize does. */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "text/text_fts5.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strtab.h"
#include "util/limits.h"
#include "util/banned.h"

/* A hash slot holds enough of its term (length, 24 bits of hash, first 8
 * bytes) that most lookups - news words are short - never touch the term
 * itself: building is bound by cache misses on this table. */
struct hslot {
    uint32_t idx1;    /* term index + 1 */
    uint32_t len_tag; /* hash tag << 8 | min(len, 255) */
    uint64_t pre;     /* first 8 bytes, zero padded */
};

struct occ {
    uint32_t term, field, pos;
};

#define SEQ_END UINT32_MAX

/* A token waiting for its exact term's lookup: the lookup of token i
 * happens while the slots of tokens i+1..i+PEND_MAX-1 are being prefetched,
 * so the cache misses of a document overlap instead of queueing. */
#define PEND_MAX 16
struct pend {
    uint64_t hv;
    uint32_t field, pos, len;
    uint8_t slang;  /* the language its stem is made in (STEM_*) */
    unsigned flags; /* the token's (enum text_token_flags) */
    char text[LIMIT_TOKEN_BYTES];
};

/* The builder's stemming languages (pend.slang, eng_bterm.stem_lang): 0 none,
 * then each as first seen; past STEM_LANGS a stem is made every time. */
#define STEM_NONE 0
#define STEM_LANGS 254
#define STEM_UNKEPT 255

struct eng_builder {
    struct pend ring[PEND_MAX];
    size_t rhead, rn;
    size_t n, cap;
    int64_t *ids, *pub;
    uint32_t *dl, *src;
    uint64_t *url;
    struct eng_bterm *terms;
    size_t nterms, tcap;
    struct hslot *hash; /* open addressing, idx1 0 = empty */
    size_t hcap;
    struct occ *occ;
    size_t nocc, occap;
    /* flush_doc's sort: keys (term << 32 | index), their scratch, and the
     * occurrences in sorted order (then swapped with occ) */
    uint64_t *okey, *otmp;
    struct occ *osort;
    size_t okcap, otcap, oscap;
    /* Each document's exact terms in position order, field after field,
     * each field ended by SEQ_END: its pairs (pairs.h) are made from them
     * once every term's document count is known (add_pairs). */
    uint32_t *seq;
    size_t nseq, seqcap;
    /* The column being added: the language its stems are made in
     * (text_fts5_column_words), and the stemming languages seen. */
    char lang[TEXT_FTS5_LANG_MAX + 1];
    char langs[STEM_LANGS + 1][TEXT_FTS5_LANG_MAX + 1];
    unsigned nlangs;
    /* the documents' JSON (docs.c), back to back; doc i is json[joff[i], joff[i+1]) */
    char *json;
    size_t jlen, jcap;
    uint64_t *joff;
    size_t jocap;
};

int eng_builder_new(struct eng_builder **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ERR_NOMEM;
}

static void bterm_release(struct eng_bterm *t)
{
    free(t->s);
    free(t->docs);
    free(t->doff);
    free(t->data);
}

void eng_builder_free(struct eng_builder *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->nterms; i++)
        bterm_release(&b->terms[i]);
    free(b->terms);
    free(b->hash);
    free(b->ids);
    free(b->pub);
    free(b->dl);
    free(b->src);
    free(b->url);
    free(b->occ);
    free(b->okey);
    free(b->otmp);
    free(b->osort);
    free(b->seq);
    free(b->json);
    free(b->joff);
    free(b);
}

size_t eng_builder_count(const struct eng_builder *b)
{
    return b->n;
}

static uint64_t prefix8(const char *s, size_t n)
{
    uint64_t x = 0;
    memcpy(&x, s, n < 8 ? n : 8);
    return x;
}

static uint32_t len_tag(uint64_t hv, size_t n)
{
    return (uint32_t)(hv >> 40) << 8 | (uint32_t)(n < 255 ? n : 255);
}

static int rehash(struct eng_builder *b)
{
    size_t cap = b->hcap ? b->hcap * 2 : 1024;
    struct hslot *h = calloc(cap, sizeof *h);
    if (h == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < b->nterms; i++) {
        const struct eng_bterm *t = &b->terms[i];
        uint64_t hv = hash_bytes64(t->s, t->len);
        size_t j = hv & (cap - 1);
        while (h[j].idx1)
            j = (j + 1) & (cap - 1);
        h[j] = (struct hslot){(uint32_t)i + 1, len_tag(hv, t->len), prefix8(t->s, t->len)};
    }
    free(b->hash);
    b->hash = h;
    b->hcap = cap;
    return 0;
}

/* Index of term s[0..len) (prefix byte pre, 0 = none), added when new. */
static int term_find(struct eng_builder *b, const char *tmp, size_t n, uint64_t hv, uint8_t kind,
                     uint32_t *out)
{
    int rc = 0;
    if ((b->nterms + 1) * 2 > b->hcap && rehash(b) < 0)
        return ERR_NOMEM;
    uint64_t p8 = prefix8(tmp, n);
    uint32_t lt = len_tag(hv, n);
    size_t j = hv & (b->hcap - 1);
    while (b->hash[j].idx1) {
        const struct hslot *h = &b->hash[j];
        if (h->len_tag == lt && h->pre == p8) {
            uint32_t k = h->idx1 - 1;
            if (n <= 8) { /* length and bytes are in the slot */
                *out = k;
                goto out;
            }
            const struct eng_bterm *t = &b->terms[k];
            if (t->len == n && memcmp(t->s + 8, tmp + 8, n - 8) == 0) {
                *out = k;
                goto out;
            }
        }
        j = (j + 1) & (b->hcap - 1);
    }
    if (eng_grow((void **)&b->terms, &b->tcap, b->nterms + 1, sizeof *b->terms) < 0) {
        rc = ERR_NOMEM;
        goto out;
    }
    struct eng_bterm *t = &b->terms[b->nterms];
    memset(t, 0, sizeof *t);
    t->s = malloc(n);
    if (t->s == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    memcpy(t->s, tmp, n);
    t->len = (uint32_t)n;
    t->kind = kind;
    b->hash[j] = (struct hslot){(uint32_t)b->nterms + 1, lt, p8};
    *out = (uint32_t)b->nterms++;
out:
    return rc;
}

static int term_id(struct eng_builder *b, char pre, const char *s, size_t len, uint8_t kind,
                   uint32_t *out)
{
    char small[LIMIT_TOKEN_BYTES + 8], *tmp = small;
    size_t n = len + (pre != 0);
    int rc;

    if (n > sizeof small && (tmp = malloc(n)) == NULL) /* long meta terms (hex of domains) */
        return ERR_NOMEM;
    if (pre)
        tmp[0] = pre;
    memcpy(tmp + (pre != 0), s, len);
    rc = term_find(b, tmp, n, hash_bytes64(tmp, n), kind, out);
    if (tmp != small)
        free(tmp);
    return rc;
}

static int occ_add(struct eng_builder *b, uint32_t term, uint32_t field, uint32_t pos)
{
    if (eng_grow((void **)&b->occ, &b->occap, b->nocc + 1, sizeof *b->occ) < 0)
        return ERR_NOMEM;
    b->occ[b->nocc++] = (struct occ){term, field, pos};
    return 0;
}

struct tok_ctx {
    struct eng_builder *b;
    uint32_t field;
    uint32_t ntok;
    uint8_t slang; /* the column's stemming language, found at its first token */
};

/* The "~stem" occurrence of exact term id (e's token). A word's stem is
 * made once per language and kept in its term: stemming each token (with
 * the stem's own term lookup) was ~15 % of a first build's CPU. */
static int stem_add(struct eng_builder *b, const struct pend *e, uint32_t id)
{
    uint32_t stem1 = b->terms[id].stem1;
    if (b->terms[id].stem_lang != e->slang || e->slang == STEM_UNKEPT) {
        char stem[1 + LIMIT_TOKEN_BYTES + 1];
        struct text_token tok = {.text = e->text, .len = e->len, .flags = e->flags};
        int n = text_fts5_token_stem(b->lang, &tok, stem + 1);
        stem1 = 0;
        if (n > 0) {
            uint32_t sid;
            size_t len = (size_t)n + 1;
            stem[0] = TEXT_FTS5_STEM_PREFIX[0];
            if (term_find(b, stem, len, hash_bytes64(stem, len), ENG_TERM_STEM, &sid) < 0)
                return ERR_NOMEM;
            stem1 = sid + 1;
        }
        b->terms[id].stem_lang = e->slang; /* (term_find may have moved the terms) */
        b->terms[id].stem1 = stem1;
    }
    return stem1 ? occ_add(b, stem1 - 1, e->field, e->pos) : 0;
}

static int pend_resolve(struct eng_builder *b)
{
    struct pend *e = &b->ring[b->rhead];
    uint32_t id;
    b->rhead = (b->rhead + 1) % PEND_MAX;
    b->rn--;
    if (term_find(b, e->text, e->len, e->hv, ENG_TERM_EXACT, &id) < 0 ||
        occ_add(b, id, e->field, e->pos) < 0)
        return ERR_NOMEM;
    return e->slang != STEM_NONE ? stem_add(b, e, id) : 0;
}

static int pend_drain(struct eng_builder *b)
{
    while (b->rn > 0) {
        if (pend_resolve(b) < 0)
            return ERR_NOMEM;
    }
    return 0;
}

/* Queue the exact term of a token, s[0..len) (its stem made in language
 * slang when it is resolved), prefetching its hash slot. */
static int pend_push(struct eng_builder *b, const char *s, size_t len, uint32_t field, uint32_t pos,
                     uint8_t slang, unsigned flags)
{
    if (b->rn == PEND_MAX && pend_resolve(b) < 0)
        return ERR_NOMEM;
    struct pend *e = &b->ring[(b->rhead + b->rn++) % PEND_MAX];
    memcpy(e->text, s, len);
    e->len = (uint32_t)len;
    e->slang = slang;
    e->flags = flags;
    e->field = field;
    e->pos = pos;
    e->hv = hash_bytes64(e->text, len);
    if (b->hcap)
        __builtin_prefetch(&b->hash[e->hv & (b->hcap - 1)]);
    return 0;
}

/* The number of stemming language b->lang (STEM_*). */
static uint8_t stem_lang(struct eng_builder *b)
{
    if (b->lang[0] == '\0')
        return STEM_NONE;
    for (unsigned i = 1; i <= b->nlangs; i++) {
        if (strcmp(b->langs[i], b->lang) == 0)
            return (uint8_t)i;
    }
    if (b->nlangs == STEM_LANGS)
        return STEM_UNKEPT;
    memcpy(b->langs[++b->nlangs], b->lang, sizeof b->lang);
    return (uint8_t)b->nlangs;
}

/* A token as text_fts5_column_words() gives it: its "~stem" is added when
 * it is resolved (stem_add). */
static int on_token(const struct text_token *tok, const char *stem, size_t stem_len, void *arg)
{
    struct tok_ctx *d = arg;
    uint32_t pos = d->ntok++;
    size_t len = tok->len < LIMIT_TOKEN_BYTES ? tok->len : LIMIT_TOKEN_BYTES;

    (void)stem; /* (none: the column's words come without) */
    (void)stem_len;
    if (d->ntok == 1)
        d->slang = stem_lang(d->b);
    return pend_push(d->b, tok->text, len, d->field, pos, d->slang, tok->flags);
}

/* One text column as FTS5 gets it from the trigger. Returns its token
 * count or ERR_NOMEM. */
static int add_column(struct eng_builder *b, uint32_t field, const char *language, const char *text,
                      uint32_t *ntok)
{
    struct tok_ctx d = {.b = b, .field = field};
    int rc = text_fts5_column_words(language, text, b->lang, on_token, &d);
    if (rc == 0)
        rc = pend_drain(b);
    b->rn = 0;
    *ntok = d.ntok;
    return rc ? ERR_NOMEM : 0;
}

/* The document's occurrences in (term, field, position) order. They were
 * added in (field, position) order, but for meta terms (field 0 after the
 * text fields: never the same term as a token), so ordering by term while
 * keeping the order of addition is that order. */
static int sort_occ(struct eng_builder *b)
{
    size_t n = b->nocc;
    if (eng_grow((void **)&b->okey, &b->okcap, n, sizeof *b->okey) < 0 ||
        eng_grow((void **)&b->otmp, &b->otcap, n, sizeof *b->otmp) < 0 ||
        eng_grow((void **)&b->osort, &b->oscap, n, sizeof *b->osort) < 0)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        b->okey[i] = (uint64_t)b->occ[i].term << 32 | i;
    sort_u64_merge(b->okey, b->otmp, n);
    for (size_t i = 0; i < n; i++)
        b->osort[i] = b->occ[(uint32_t)b->okey[i]];
    struct occ *o = b->occ;
    size_t c = b->occap;
    b->occ = b->osort;
    b->occap = b->oscap;
    b->osort = o;
    b->oscap = c;
    return 0;
}

/* Append the postings of the current document's occurrences. */
static int flush_doc(struct eng_builder *b, uint32_t doc)
{
    uint8_t tmp[16];
    if (b->nocc > 1 && sort_occ(b) < 0) /* (none: no occurrence array yet) */
        return ERR_NOMEM;
    for (size_t i = 0; i < b->nocc;) {
        /* Two-stage prefetch: the term 32 occurrences ahead, and the tails
         * of the term 16 ahead (its struct is on its way by now). */
        if (i + 32 < b->nocc)
            __builtin_prefetch(&b->terms[b->occ[i + 32].term]);
        if (i + 16 < b->nocc) {
            const struct eng_bterm *u = &b->terms[b->occ[i + 16].term];
            if (u->docs)
                __builtin_prefetch(u->docs + u->n, 1);
            if (u->data)
                __builtin_prefetch(u->data + u->dlen, 1);
        }
        struct eng_bterm *t = &b->terms[b->occ[i].term];
        size_t j = i;
        while (j < b->nocc && b->occ[j].term == b->occ[i].term)
            j++;
        size_t cap = t->cap;
        if (eng_grow((void **)&t->docs, &cap, t->n + 1, sizeof *t->docs) < 0)
            return ERR_NOMEM;
        cap = t->cap;
        if (eng_grow((void **)&t->doff, &cap, t->n + 1, sizeof *t->doff) < 0)
            return ERR_NOMEM;
        t->cap = (uint32_t)cap;
        t->docs[t->n] = doc;
        t->doff[t->n] = t->dlen;
        t->n++;
        if (eng_kind(t->kind) != ENG_TERM_META) {
            /* worst case: mask + per occurrence 5 bytes + 3 tfs */
            size_t need = t->dlen + 1 + 15 + 5 * (j - i), dcap = t->dcap;
            if (eng_grow((void **)&t->data, &dcap, need, 1) < 0)
                return ERR_NOMEM;
            t->dcap = (uint32_t)dcap;
            unsigned mask = 0;
            for (size_t k = i; k < j; k++)
                mask |= 1u << b->occ[k].field;
            for (size_t k = i; k < j;) {
                size_t e = k;
                while (e < j && b->occ[e].field == b->occ[k].field)
                    e++;
                size_t w = eng_posting_tf_put(tmp, mask, b->occ[k].field, (uint32_t)(e - k));
                memcpy(t->data + t->dlen, tmp, w);
                t->dlen += (uint32_t)w;
                if (eng_kind(t->kind) == ENG_TERM_EXACT) {
                    uint32_t prev = 0;
                    for (size_t m = k; m < e; m++) {
                        uint32_t p = b->occ[m].pos;
                        w = eng_varint_put(tmp, m == k ? p : p - prev);
                        memcpy(t->data + t->dlen, tmp, w);
                        t->dlen += (uint32_t)w;
                        prev = p;
                    }
                }
                k = e;
            }
        }
        i = j;
    }
    b->nocc = 0;
    return 0;
}

/* The exact terms of the field whose occurrences are occ[from, nocc) onto
 * seq, in position order: a token's exact term is its first occurrence,
 * its stem (at the same position) the next. */
static int seq_field(struct eng_builder *b, size_t from)
{
    if (eng_grow((void **)&b->seq, &b->seqcap, b->nseq + (b->nocc - from) + 1, sizeof *b->seq) < 0)
        return ERR_NOMEM;
    for (size_t i = from; i < b->nocc; i++) {
        if (i == from || b->occ[i].pos != b->occ[i - 1].pos)
            b->seq[b->nseq++] = b->occ[i].term;
    }
    b->seq[b->nseq++] = SEQ_END;
    return 0;
}

/* --- pairs (pairs.h): made once the documents are in ------------------ */

struct pairs {
    /* each pair of word indexes (a << 32 | b, 8 bytes) numbered as first
     * seen: its term is the builder's term nwords + that number */
    struct strtab seen;
    size_t nwords;
    uint64_t *paired; /* a bit per word: paired */
    uint32_t *count;  /* a long field's occurrences so far, per word */
    uint32_t *rank;   /* a long field's occurrence ranks, per position */
    size_t rcap;
};

/* The builder's term of the pair of words x, y, added when new. */
static int pair_term(struct eng_builder *b, struct pairs *ps, uint32_t x, uint32_t y, uint32_t *out)
{
    uint64_t key = (uint64_t)x << 32 | y;
    size_t num;
    int added;
    if (strtab_add(&ps->seen, (const char *)&key, sizeof key, &num, &added) < 0)
        return ERR_NOMEM;
    *out = (uint32_t)(ps->nwords + num);
    if (!added)
        return 0;
    const struct eng_bterm *a = &b->terms[x], *c = &b->terms[y];
    char *str = malloc((size_t)a->len + c->len + 2);
    if (str == NULL)
        return ERR_NOMEM; /* (the pair stays numbered: the build fails) */
    size_t len = eng_pair_str(str, a->s, a->len, c->s, c->len);
    if (eng_grow((void **)&b->terms, &b->tcap, b->nterms + 1, sizeof *b->terms) < 0) {
        free(str);
        return ERR_NOMEM;
    }
    struct eng_bterm *t = &b->terms[b->nterms++];
    memset(t, 0, sizeof *t);
    t->s = str;
    t->len = (uint32_t)len;
    t->kind = ENG_TERM_PAIR;
    return 0;
}

static bool word_paired(const struct pairs *ps, uint32_t w)
{
    return bits_get(ps->paired, w);
}

/* One field's pairs (its exact terms x[0, len)) as occurrences of doc. A
 * field longer than ENG_POS_MAX pairs a word's first ENG_POS_MAX
 * occurrences only, as the phrase matcher reads no more (postings.c). */
static int field_pairs(struct eng_builder *b, struct pairs *ps, const uint32_t *x, size_t len,
                       uint32_t field)
{
    bool capped = len > ENG_POS_MAX;
    if (capped) {
        if (eng_grow((void **)&ps->rank, &ps->rcap, len, sizeof *ps->rank) < 0)
            return ERR_NOMEM;
        for (size_t p = 0; p < len; p++)
            ps->rank[p] = ps->count[x[p]]++;
        for (size_t p = 0; p < len; p++)
            ps->count[x[p]] = 0;
    }
    for (size_t p = 0; p + 1 < len; p++) {
        uint32_t id;
        if (!word_paired(ps, x[p]) || !word_paired(ps, x[p + 1]))
            continue;
        if (capped && (ps->rank[p] >= ENG_POS_MAX || ps->rank[p + 1] >= ENG_POS_MAX))
            continue;
        if (pair_term(b, ps, x[p], x[p + 1], &id) < 0 || occ_add(b, id, field, (uint32_t)p) < 0)
            return ERR_NOMEM;
    }
    return 0;
}

/* The segment's pairs: its exact terms in eng_pair_min_df documents or
 * more are marked paired, then every document's fields are walked again
 * for the places where two paired words follow one another. */
static int add_pairs(struct eng_builder *b)
{
    struct pairs ps = {.nwords = b->nterms};
    size_t at = 0;
    uint32_t min = eng_pair_min_df((uint32_t)b->n);
    int rc = ERR_NOMEM;

    strtab_init(&ps.seen);
    ps.paired = calloc(ps.nwords / 64 + 1, sizeof *ps.paired);
    ps.count = calloc(ps.nwords + 1, sizeof *ps.count);
    if (ps.paired == NULL || ps.count == NULL)
        goto out;
    for (size_t i = 0; i < ps.nwords; i++) {
        struct eng_bterm *t = &b->terms[i];
        if (t->kind == ENG_TERM_EXACT && t->n >= min && eng_pair_word(t->s, t->len)) {
            t->kind |= ENG_TERM_PAIRED;
            ps.paired[i >> 6] |= (uint64_t)1 << (i & 63);
        }
    }
    for (uint32_t doc = 0; doc < b->n; doc++) {
        b->nocc = 0;
        for (uint32_t f = 0; f < ENG_FIELDS; f++) {
            size_t from = at;
            while (b->seq[at] != SEQ_END)
                at++;
            if (field_pairs(b, &ps, b->seq + from, at - from, f) < 0)
                goto out;
            at++;
        }
        if (flush_doc(b, doc) < 0)
            goto out;
    }
    rc = 0;
out:
    strtab_release(&ps.seen);
    free(ps.paired);
    free(ps.count);
    free(ps.rank);
    return rc;
}

/* Room for one more document in each per-document column. The columns
 * share b->cap: each grows from the same room to the same room, and b->cap
 * moves only when all have. */
static int grow_doc_columns(struct eng_builder *b)
{
    void **cols[] = {(void **)&b->ids, (void **)&b->pub, (void **)&b->dl, (void **)&b->src,
                     (void **)&b->url};
    const size_t sizes[] = {sizeof *b->ids, sizeof *b->pub, sizeof *b->dl, sizeof *b->src,
                            sizeof *b->url};
    size_t cap = b->cap;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        cap = b->cap;
        if (eng_grow(cols[i], &cap, b->n + 1, sizes[i]) < 0)
            return ERR_NOMEM;
    }
    b->cap = cap;
    return 0;
}

int eng_builder_add(struct eng_builder *b, const struct eng_row *r)
{
    const char *lang = r->language ? r->language : "";
    const char *texts[ENG_FIELDS] = {r->title, r->description, r->content};
    uint32_t doc = (uint32_t)b->n, dl = 0, ntok;
    int rc;

    if (grow_doc_columns(b) < 0 ||
        eng_grow((void **)&b->joff, &b->jocap, b->n + 2, sizeof *b->joff) < 0 ||
        eng_grow((void **)&b->json, &b->jcap, b->jlen + r->json_len + 1, 1) < 0)
        return ERR_NOMEM;
    b->nocc = 0;
    for (uint32_t f = 0; f < ENG_FIELDS; f++) {
        size_t from = b->nocc;
        if ((rc = add_column(b, f, lang, texts[f], &ntok)) < 0 || (rc = seq_field(b, from)) < 0)
            return rc;
        dl += ntok;
    }
    if (r->meta_terms) {
        const char *s = r->meta_terms;
        while (*s) {
            while (*s == ' ')
                s++;
            const char *e = s;
            while (*e && *e != ' ')
                e++;
            if (e > s) {
                uint32_t id;
                if (term_id(b, ENG_META_MARK, s, (size_t)(e - s), ENG_TERM_META, &id) < 0 ||
                    occ_add(b, id, 0, dl) < 0)
                    return ERR_NOMEM;
                dl++;
            }
            s = e;
        }
    }
    if ((rc = flush_doc(b, doc)) < 0)
        return rc;
    b->ids[doc] = r->id;
    b->pub[doc] = r->published_at;
    b->dl[doc] = dl;
    b->src[doc] = r->src;
    b->url[doc] = r->url_hash;
    if (r->json_len > 0)
        memcpy(b->json + b->jlen, r->json, r->json_len);
    b->joff[doc] = b->jlen;
    b->jlen += r->json_len;
    b->joff[doc + 1] = b->jlen;
    b->n++;
    return 0;
}

/* --- finishing: sort docs newest first, encode postings ------------------ */

static _Thread_local const int64_t *sort_ids; /* qsort context */

static int cmp_doc_desc(const void *x, const void *y)
{
    int64_t a = sort_ids[*(const uint32_t *)x], b = sort_ids[*(const uint32_t *)y];
    return a > b ? -1 : a < b;
}

/* A term in the dictionary's sort: its first 8 bytes as a big-endian number
 * (zero padded) order most pairs without reading the strings, whose cache
 * misses made the sort ~3 % of a first build. */
struct term_key {
    uint64_t head;
    uint32_t idx;
};

static _Thread_local const struct eng_bterm *sort_terms;

static int cmp_term(const void *x, const void *y)
{
    const struct term_key *ka = x, *kb = y;
    if (ka->head != kb->head)
        return ka->head < kb->head ? -1 : 1;
    const struct eng_bterm *a = &sort_terms[ka->idx], *b = &sort_terms[kb->idx];
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    if (c)
        return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

static uint64_t term_head(const struct eng_bterm *t)
{
    uint64_t h = 0;
    size_t n = t->len < 8 ? t->len : 8;
    for (size_t i = 0; i < n; i++)
        h |= (uint64_t)(unsigned char)t->s[i] << (56 - 8 * i);
    return h;
}

int eng_builder_finish(struct eng_builder *b, struct eng_segment **out)
{
    struct eng_segment *s = calloc(1, sizeof *s);
    uint32_t *order = NULL, *newdoc = NULL;
    struct term_key *torder = NULL;
    uint64_t *keys = NULL;
    struct eng_obuf post = {0}, strs = {0};
    struct eng_enc_bufs enc = {0};
    size_t maxdf = 1;
    int rc = ERR_NOMEM;

    *out = NULL;
    if (s == NULL || add_pairs(b) < 0)
        goto out;
    atomic_init(&s->ref, 1);
    s->gen = eng_next_gen();
    s->n = (uint32_t)b->n;
    order = malloc((b->n + 1) * sizeof *order);
    newdoc = malloc((b->n + 1) * sizeof *newdoc);
    s->ids = malloc((b->n + 1) * sizeof *s->ids);
    s->pub = malloc((b->n + 1) * sizeof *s->pub);
    s->dl = malloc((b->n + 1) * sizeof *s->dl);
    s->src = malloc((b->n + 1) * sizeof *s->src);
    torder = malloc((b->nterms + 1) * sizeof *torder);
    s->terms = calloc(b->nterms + 1, sizeof *s->terms);
    if (!order || !newdoc || !s->ids || !s->pub || !s->dl || !s->src || !torder || !s->terms)
        goto out;
    for (size_t i = 0; i < b->n; i++)
        order[i] = (uint32_t)i;
    sort_ids = b->ids;
    qsort(order, b->n, sizeof *order, cmp_doc_desc);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t l = order[i];
        newdoc[l] = (uint32_t)i;
        s->ids[i] = b->ids[l];
        s->pub[i] = b->pub[l];
        s->dl[i] = b->dl[l];
        s->src[i] = b->src[l];
        s->ntoken += b->dl[l];
    }
    if (eng_segment_pk_build(s, b->n, b->url, newdoc) < 0)
        goto out;
    if (eng_docs_build(s, b->json, b->joff, order) < 0)
        goto out;
    for (size_t i = 0; i < b->nterms; i++) {
        torder[i] = (struct term_key){term_head(&b->terms[i]), (uint32_t)i};
        if (b->terms[i].n > maxdf)
            maxdf = b->terms[i].n;
    }
    sort_terms = b->terms;
    qsort(torder, b->nterms, sizeof *torder, cmp_term);
    keys = malloc(maxdf * sizeof *keys);
    if (keys == NULL)
        goto out;
    for (size_t i = 0; i < b->nterms; i++) {
        struct eng_bterm *t = &b->terms[torder[i].idx];
        struct eng_term *et = &s->terms[s->nterms];
        if (t->len > ENG_TERM_LEN_MAX) { /* unreachable by any query */
            bterm_release(t);
            memset(t, 0, sizeof *t);
            continue;
        }
        if ((rc = eng_postings_encode(&post, &enc, t, newdoc, s->dl, keys, et)) < 0)
            goto out;
        et->str = (uint32_t)strs.n;
        et->len = t->len;
        if ((rc = eng_obuf_put(&strs, t->s, t->len)) < 0)
            goto out;
        bterm_release(t); /* keep the peak down: the builder is spent anyway */
        memset(t, 0, sizeof *t);
        s->nterms++;
    }
    s->post = post.p;
    s->post_len = post.n;
    s->strs = (char *)strs.p;
    s->strs_len = strs.n;
    post.p = NULL;
    strs.p = NULL;
    *out = s;
    s = NULL;
    rc = 0;
out:
    /* The builder is emptied either way. */
    for (size_t i = 0; i < b->nterms; i++)
        bterm_release(&b->terms[i]);
    b->nterms = 0;
    b->n = 0;
    b->nseq = 0;
    b->jlen = 0;
    free(b->hash);
    b->hash = NULL;
    b->hcap = 0;
    free(order);
    free(newdoc);
    free(torder);
    free(keys);
    free(post.p);
    eng_enc_bufs_free(&enc);
    free(strs.p);
    eng_segment_unref(s);
    return rc;
}
