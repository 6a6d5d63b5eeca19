/* The segment builder (index/engine/internal.h): rows in, a segment out. An article is
 * tokenized by the FTS5 "newsd" tokenizer's own code as FTS5 sees its row
 * (text_fts5_doc_tokenize, store/sqlite/sqlite.c's triggers): each text
 * column is "\x1F" language "\x1F" text, each token is an exact term with
 * its position and, in a stemmed language, "~stem" when the stem differs;
 * the meta column is the stored meta_terms split on spaces. The row size
 * (BM25's D) counts the tokens of all four columns as FTS5's docsize does. */
#include "index/engine/internal.h"

#include "index/engine/tiers.h"
#include "index/engine/bdict.h"
#include "index/engine/resid.h"

#include <stdlib.h>
#include <string.h>

#include "store/meta.h"
#include "text/text.h"
#include "text/text_fts5.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/strtab.h"
#include "util/limits.h"
#include "util/banned.h"

struct occ {
    uint32_t term, field, pos;
};
/* In an exact term's occ.field: no "~stem" stands beside this occurrence
 * and the word has a residual (resid_start): flush_doc counts it there too. */
#define OCC_BARE 0x80000000u
#define OCC_FIELD(f) ((f) & ~OCC_BARE)

/* A term of the document being flushed (group_occ): its first and last
 * occurrence. */
struct gslot {
    uint32_t gen, term, head, tail;
};

#define SEQ_END UINT32_MAX

/* A token waiting for its exact term's lookup, then for its occurrences:
 * the lookup of token i happens while the hash slots of the PEND_FIND - 1
 * tokens after it are being prefetched, and its occurrences (with its
 * stem, kept in its term's entry) are added PEND_LAG lookups later, once
 * that entry has been prefetched too; so the cache misses of a document
 * overlap instead of queueing. */
#define PEND_FIND 12
#define PEND_LAG 4
#define PEND_MAX (PEND_FIND + PEND_LAG)
struct pend {
    uint64_t hv;
    uint32_t field, pos, len;
    uint32_t id;    /* its exact term, once looked up */
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
    uint32_t tier_min_df;  /* eng_builder_tiers */
    uint32_t resid_min_df; /* eng_builder_resid */
    struct pend ring[PEND_MAX];
    size_t rdone, rfound, rtail; /* ring[rdone, rfound) looked up, [rfound, rtail) not yet */
    size_t n, cap;
    int64_t *ids;
    uint32_t *dl, *src;
    uint64_t *url;
    struct eng_bdict dict;
    struct occ *occ;
    size_t nocc, occap;
    /* group_occ's hash of the document's terms (a slot is empty unless its
     * gen is ggen), each occurrence's next of its term, the slots in the order
     * first used, and the occurrences grouped (then swapped with occ) */
    struct gslot *gslot;
    uint32_t *gnext, *glist, ggen;
    struct occ *ogroup;
    size_t gcap, gncap, glcap, ogcap;
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
    const uint8_t *docs_dict; /* eng_builder_docs_dict: borrowed */
    size_t docs_dict_len;
    struct buf authors; /* the document's author terms (store_meta_author_terms) */
};

int eng_builder_new(struct eng_builder **out)
{
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return ERR_NOMEM;
    (*out)->tier_min_df = ENG_TIER_MIN_DF;
    (*out)->resid_min_df = ENG_RESID_MIN_DF;
    return 0;
}

void eng_builder_tiers(struct eng_builder *b, uint32_t min_df)
{
    b->tier_min_df = min_df;
}

void eng_builder_resid(struct eng_builder *b, uint32_t min_df)
{
    b->resid_min_df = min_df;
}

void eng_builder_free(struct eng_builder *b)
{
    if (b == NULL)
        return;
    eng_bdict_free(&b->dict);
    free(b->ids);
    free(b->dl);
    free(b->src);
    free(b->url);
    free(b->occ);
    free(b->gslot);
    free(b->gnext);
    free(b->glist);
    free(b->ogroup);
    free(b->seq);
    free(b->json);
    free(b->joff);
    buf_release(&b->authors);
    free(b);
}

void eng_builder_docs_dict(struct eng_builder *b, const uint8_t *dict, size_t len)
{
    b->docs_dict = dict;
    b->docs_dict_len = len;
}

size_t eng_builder_count(const struct eng_builder *b)
{
    return b->n;
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
    rc = eng_bdict_find(&b->dict, tmp, n, hash_bytes64(tmp, n), kind, out);
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

/* The "~stem" occurrence of e's token, its exact term looked up. A word's
 * stem is made once per language and kept in its term: stemming each token
 * (with the stem's own term lookup) was ~15 % of a first build's CPU. */
static int stem_add(struct eng_builder *b, const struct pend *e, bool *stemmed)
{
    uint32_t id = e->id;
    uint32_t stem1 = b->dict.terms[id].stem1;
    if (b->dict.terms[id].stem_lang != e->slang || e->slang == STEM_UNKEPT) {
        char stem[1 + LIMIT_TOKEN_BYTES + 1];
        struct text_token tok = {.text = e->text, .len = e->len, .flags = e->flags};
        int n = text_fts5_token_stem(b->lang, &tok, stem + 1);
        stem1 = 0;
        if (n > 0) {
            uint32_t sid;
            size_t len = (size_t)n + 1;
            stem[0] = TEXT_FTS5_STEM_PREFIX[0];
            uint64_t hv = hash_bytes64(stem, len);
            if (eng_bdict_find(&b->dict, stem, len, hv, ENG_TERM_STEM, &sid) < 0)
                return ERR_NOMEM;
            stem1 = sid + 1;
        }
        b->dict.terms[id].stem_lang = e->slang; /* (a find may have moved the terms) */
        b->dict.terms[id].stem1 = stem1;
    }
    *stemmed = stem1 != 0;
    return stem1 ? occ_add(b, stem1 - 1, e->field, e->pos) : 0;
}

/* The first occurrence of e's word with a "~stem" beside it: from here on
 * its occurrences without one are counted in its residual (resid.h), the
 * term word NUL; its postings so far, every one without, are added to the
 * residual when the segment is finished (resid_settle). A document has one
 * language, so its occurrences of a word all have a stem or none do. */
static int resid_start(struct eng_builder *b, uint32_t id)
{
    char str[LIMIT_TOKEN_BYTES + 1]; /* (an exact term is a token: no longer) */
    uint32_t rid, len = b->dict.terms[id].len;
    memcpy(str, b->dict.terms[id].s, len);
    str[len] = '\0';
    if (eng_bdict_find(&b->dict, str, len + 1, hash_bytes64(str, len + 1), ENG_TERM_STEM, &rid) < 0)
        return ERR_NOMEM;
    struct eng_bterm *t = &b->dict.terms[id]; /* (a find may have moved the terms) */
    t->resid1 = rid + 1;
    t->resid_from = t->n;
    return 0;
}

/* Look up the oldest token not looked up yet, prefetching its term's entry. */
static int pend_find(struct eng_builder *b)
{
    struct pend *e = &b->ring[b->rfound++ % PEND_MAX];
    if (eng_bdict_find(&b->dict, e->text, e->len, e->hv, ENG_TERM_EXACT, &e->id) < 0)
        return ERR_NOMEM;
    __builtin_prefetch(&b->dict.terms[e->id]);
    return 0;
}

/* Add the occurrences of the oldest token looked up. */
static int pend_finish(struct eng_builder *b)
{
    const struct pend *e = &b->ring[b->rdone++ % PEND_MAX];
    bool stemmed = false;
    size_t at = b->nocc;
    if (occ_add(b, e->id, e->field, e->pos) < 0 ||
        (e->slang != STEM_NONE && stem_add(b, e, &stemmed) < 0))
        return ERR_NOMEM;
    uint32_t resid1 = b->dict.terms[e->id].resid1;
    if (stemmed && resid1 == 0)
        return resid_start(b, e->id);
    if (!stemmed && resid1 != 0)
        b->occ[at].field |= OCC_BARE;
    return 0;
}

static int pend_drain(struct eng_builder *b)
{
    while (b->rfound < b->rtail) {
        if (pend_find(b) < 0)
            return ERR_NOMEM;
    }
    while (b->rdone < b->rfound) {
        if (pend_finish(b) < 0)
            return ERR_NOMEM;
    }
    return 0;
}

/* Queue the exact term of a token, s[0..len) (its stem made in language
 * slang when it is added), prefetching its hash slot. */
static int pend_push(struct eng_builder *b, const char *s, size_t len, uint32_t field, uint32_t pos,
                     uint8_t slang, unsigned flags)
{
    if (b->rtail - b->rfound == PEND_FIND && pend_find(b) < 0)
        return ERR_NOMEM;
    if (b->rfound - b->rdone == PEND_LAG && pend_finish(b) < 0)
        return ERR_NOMEM;
    struct pend *e = &b->ring[b->rtail++ % PEND_MAX];
    memcpy(e->text, s, len);
    e->len = (uint32_t)len;
    e->slang = slang;
    e->flags = flags;
    e->field = field;
    e->pos = pos;
    e->hv = hash_bytes64(e->text, len);
    eng_bdict_prefetch(&b->dict, e->hv);
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

/* A token as text_fts5_column_words() gives it: its "~stem" is added with
 * its occurrence (pend_finish). */
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
    b->rdone = b->rfound = b->rtail = 0;
    *ntok = d.ntok;
    return rc ? ERR_NOMEM : 0;
}

/* The document's occurrences grouped by term, each term's in the order
 * they were added: (field, position) order, but for meta terms (field 0
 * after the text fields: never the same term as a token), which is the
 * order flush_doc writes. A hash of the document's terms, not a sort: the
 * sort was 4 % of a first build. */
static int group_occ(struct eng_builder *b)
{
    size_t n = b->nocc, cap = b->gcap ? b->gcap : 64, nd = 0, k = 0;
    while (cap < 2 * n)
        cap *= 2;
    unsigned bits = (unsigned)__builtin_ctzll(cap); /* cap is a power of 2 */
    if (cap != b->gcap) {
        free(b->gslot);
        if ((b->gslot = calloc(cap, sizeof *b->gslot)) == NULL) {
            b->gcap = 0;
            return ERR_NOMEM;
        }
        b->gcap = cap;
        b->ggen = 0;
    }
    if (++b->ggen == 0) { /* (wrapped: every slot's gen may look current) */
        memset(b->gslot, 0, cap * sizeof *b->gslot);
        b->ggen = 1;
    }
    if (eng_grow((void **)&b->gnext, &b->gncap, n, sizeof *b->gnext) < 0 ||
        eng_grow((void **)&b->glist, &b->glcap, n, sizeof *b->glist) < 0 ||
        eng_grow((void **)&b->ogroup, &b->ogcap, n, sizeof *b->ogroup) < 0)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = b->occ[i].term;
        size_t j = (size_t)hash_fib(t, 64 - bits);
        while (b->gslot[j].gen == b->ggen && b->gslot[j].term != t)
            j = (j + 1) & (cap - 1);
        struct gslot *g = &b->gslot[j];
        if (g->gen != b->ggen) {
            *g = (struct gslot){b->ggen, t, (uint32_t)i, (uint32_t)i};
            b->glist[nd++] = (uint32_t)j;
        } else {
            b->gnext[g->tail] = (uint32_t)i;
            g->tail = (uint32_t)i;
        }
        b->gnext[i] = UINT32_MAX;
    }
    for (size_t d = 0; d < nd; d++) {
        for (uint32_t i = b->gslot[b->glist[d]].head; i != UINT32_MAX; i = b->gnext[i])
            b->ogroup[k++] = b->occ[i];
    }
    struct occ *o = b->occ;
    size_t c = b->occap;
    b->occ = b->ogroup;
    b->occap = b->ogcap;
    b->ogroup = o;
    b->ogcap = c;
    return 0;
}

/* The posting of doc in residual term r: its word's occurrences without a
 * stem beside them, tf[f] in each field f of mask. */
static int resid_posting(struct eng_builder *b, uint32_t r, uint32_t doc, unsigned mask,
                         const uint32_t tf[ENG_FIELDS])
{
    struct eng_bterm *t = &b->dict.terms[r];
    if (eng_bdict_posting_room(&b->dict, t, t->dlen + 1 + 15) < 0)
        return ERR_NOMEM;
    t->pst[t->n++] = (struct eng_bpost){doc, t->dlen};
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (mask & (1u << f))
            t->dlen += (uint32_t)eng_posting_tf_put(t->data + t->dlen, mask, f, tf[f]);
    }
    return 0;
}

/* Append the postings of the current document's occurrences. */
static int flush_doc(struct eng_builder *b, uint32_t doc)
{
    if (b->nocc > 1 && group_occ(b) < 0) /* (none: no occurrence array yet) */
        return ERR_NOMEM;
    for (size_t i = 0; i < b->nocc;) {
        /* Two-stage prefetch: the term 32 occurrences ahead, and the tails
         * of the term 16 ahead (its struct is on its way by now). */
        if (i + 32 < b->nocc)
            __builtin_prefetch(&b->dict.terms[b->occ[i + 32].term]);
        if (i + 16 < b->nocc) {
            const struct eng_bterm *u = &b->dict.terms[b->occ[i + 16].term];
            if (u->pst)
                __builtin_prefetch(u->pst + u->n, 1);
            if (u->data)
                __builtin_prefetch(u->data + u->dlen, 1);
        }
        struct eng_bterm *t = &b->dict.terms[b->occ[i].term];
        size_t j = i;
        while (j < b->nocc && b->occ[j].term == b->occ[i].term)
            j++;
        bool meta = eng_kind(t->kind) == ENG_TERM_META;
        /* worst case: mask + per occurrence 5 bytes + 3 tfs */
        if (eng_bdict_posting_room(&b->dict, t, meta ? 0 : t->dlen + 1 + 15 + 5 * (j - i)) < 0)
            return ERR_NOMEM;
        t->pst[t->n++] = (struct eng_bpost){doc, t->dlen};
        if (!meta) {
            /* (written in place: the room is there, and a memcpy() of a
             * varint's few bytes was 2 % of a first build) */
            unsigned mask = 0, bare_mask = 0;
            uint32_t bare[ENG_FIELDS] = {0};
            for (size_t k = i; k < j; k++) {
                uint32_t f = OCC_FIELD(b->occ[k].field);
                mask |= 1u << f;
                if (b->occ[k].field & OCC_BARE) {
                    bare_mask |= 1u << f;
                    bare[f]++;
                }
            }
            for (size_t k = i; k < j;) {
                size_t e = k;
                uint32_t f = OCC_FIELD(b->occ[k].field);
                while (e < j && OCC_FIELD(b->occ[e].field) == f)
                    e++;
                t->dlen +=
                    (uint32_t)eng_posting_tf_put(t->data + t->dlen, mask, f, (uint32_t)(e - k));
                if (eng_kind(t->kind) == ENG_TERM_EXACT) {
                    uint32_t prev = 0;
                    for (size_t m = k; m < e; m++) {
                        uint32_t p = b->occ[m].pos;
                        t->dlen +=
                            (uint32_t)eng_varint_put(t->data + t->dlen, m == k ? p : p - prev);
                        prev = p;
                    }
                }
                k = e;
            }
            /* its residual's posting (segment order: docs come in order) */
            if (bare_mask && resid_posting(b, t->resid1 - 1, doc, bare_mask, bare) < 0)
                return ERR_NOMEM;
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
    const struct eng_bterm *a = &b->dict.terms[x], *c = &b->dict.terms[y];
    char *str = eng_bdict_string_room(&b->dict, (size_t)a->len + c->len + 2);
    if (str == NULL)
        return ERR_NOMEM; /* (the pair stays numbered: the build fails) */
    size_t len = eng_pair_str(str, a->s, a->len, c->s, c->len);
    return eng_bdict_append(&b->dict, str, len, ENG_TERM_PAIR);
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
    struct pairs ps = {.nwords = b->dict.n};
    size_t at = 0;
    uint32_t min = eng_pair_min_df((uint32_t)b->n);
    int rc = ERR_NOMEM;

    strtab_init(&ps.seen);
    ps.paired = calloc(ps.nwords / 64 + 1, sizeof *ps.paired);
    ps.count = calloc(ps.nwords + 1, sizeof *ps.count);
    if (ps.paired == NULL || ps.count == NULL)
        goto out;
    for (size_t i = 0; i < ps.nwords; i++) {
        struct eng_bterm *t = &b->dict.terms[i];
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
    void **cols[] = {(void **)&b->ids, (void **)&b->dl, (void **)&b->src, (void **)&b->url};
    const size_t sizes[] = {sizeof *b->ids, sizeof *b->dl, sizeof *b->src, sizeof *b->url};
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
    /* The stored meta terms, then the author's, which FTS5 has colocated
     * (store/sqlite/db.h): they add nothing to the length, as there. */
    b->authors.len = 0;
    if (store_meta_author_terms(&b->authors, r->author) < 0)
        return ERR_NOMEM;
    const char *lists[2] = {r->meta_terms, b->authors.len ? b->authors.data : NULL};
    for (int l = 0; l < 2; l++) {
        const char *s = lists[l], *end = s ? s + (l ? b->authors.len : strlen(s)) : NULL;
        while (s && s < end) {
            while (s < end && *s == ' ')
                s++;
            const char *e = s;
            while (e < end && *e != ' ')
                e++;
            if (e > s) {
                uint32_t id;
                if (term_id(b, ENG_META_MARK, s, (size_t)(e - s), ENG_TERM_META, &id) < 0 ||
                    occ_add(b, id, 0, dl) < 0)
                    return ERR_NOMEM;
                dl += l == 0;
            }
            s = e;
        }
    }
    if ((rc = flush_doc(b, doc)) < 0)
        return rc;
    b->ids[doc] = r->id;
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

int eng_builder_finish(struct eng_builder *b, struct eng_segment **out)
{
    struct eng_segment *s = calloc(1, sizeof *s);
    uint32_t *order = NULL, *newdoc = NULL, *torder = NULL;
    uint64_t *keys = NULL;
    struct eng_obuf post = {0}, strs = {0};
    struct eng_enc_bufs enc = {0};
    struct eng_tdict_w dict = {0};
    size_t maxdf = 1;
    int rc = ERR_NOMEM;

    *out = NULL;
    if (s == NULL || add_pairs(b) < 0 || eng_resid_settle(&b->dict, b->resid_min_df) < 0)
        goto out;
    atomic_init(&s->ref, 1);
    s->gen = eng_next_gen();
    s->n = (uint32_t)b->n;
    order = malloc((b->n + 1) * sizeof *order);
    newdoc = malloc((b->n + 1) * sizeof *newdoc);
    s->ids = malloc((b->n + 1) * sizeof *s->ids);
    s->dl = malloc((b->n + 1) * sizeof *s->dl);
    s->src = malloc((b->n + 1) * sizeof *s->src);
    torder = malloc((b->dict.n + 1) * sizeof *torder);
    if (!order || !newdoc || !s->ids || !s->dl || !s->src || !torder)
        goto out;
    for (size_t i = 0; i < b->n; i++)
        order[i] = (uint32_t)i;
    sort_ids = b->ids;
    qsort(order, b->n, sizeof *order, cmp_doc_desc);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t l = order[i];
        newdoc[l] = (uint32_t)i;
        s->ids[i] = b->ids[l];
        s->dl[i] = b->dl[l];
        s->src[i] = b->src[l];
        s->ntoken += b->dl[l];
    }
    if (eng_segment_pk_build(s, b->n, b->url, newdoc) < 0)
        goto out;
    if (eng_docs_build(s, b->json, b->joff, order, NULL, b->docs_dict, b->docs_dict_len) < 0)
        goto out;
    for (size_t i = 0; i < b->dict.n; i++) {
        if (b->dict.terms[i].n > maxdf)
            maxdf = b->dict.terms[i].n;
    }
    if (eng_bdict_sorted(&b->dict, torder) < 0)
        goto out;
    keys = malloc(maxdf * sizeof *keys);
    if (keys == NULL)
        goto out;
    enc.tier_min_df = b->tier_min_df;
    enc.avgdl = s->n ? (double)s->ntoken / s->n : 1.0;
    for (size_t i = 0; i < b->dict.n; i++) {
        struct eng_bterm *t = &b->dict.terms[torder[i]];
        struct eng_term et;
        /* unreachable by any query, or a residual left out */
        if (t->len > ENG_TERM_LEN_MAX ||
            (eng_kind(t->kind) == ENG_TERM_STEM && t->resid1 == ENG_RESID_NONE)) {
            eng_bdict_term_release(t);
            continue;
        }
        if ((rc = eng_postings_encode(&post, &enc, t, newdoc, s->dl, keys, &dict, &et)) < 0 ||
            (rc = eng_obuf_put(&strs, t->s, t->len)) < 0 || (rc = eng_tdict_add(&dict, &et)) < 0)
            goto out;
        eng_bdict_term_release(t); /* keep the peak down: the builder is spent anyway */
    }
    eng_tdict_give(&dict, s);
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
    eng_bdict_clear(&b->dict);
    b->n = 0;
    b->nseq = 0;
    b->jlen = 0;
    b->docs_dict = NULL;
    b->docs_dict_len = 0;
    free(order);
    free(newdoc);
    free(torder);
    free(keys);
    free(post.p);
    eng_enc_bufs_free(&enc);
    eng_tdict_w_free(&dict);
    free(strs.p);
    eng_segment_unref(s);
    return rc;
}
