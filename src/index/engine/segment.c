/* The immutable segment (index/engine/internal.h): its lookups (term
 * dictionary, id column, canonical-URL table), the URL table built, and a
 * segment written from postings already in docid order (merge.c's
 * eng_segw), encoded by the builder's own encoder (postings.c). */
#include "index/engine/internal.h"

#include "index/engine/segw.h"
#include "index/engine/tiers.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/sort.h"
#include "util/banned.h"

/* The canonical-URL hashes of the documents, sorted, beside their docids:
 * an upsert finds the document it replaces by binary search (§5 pk index). */
int eng_segment_pk_build(struct eng_segment *s, size_t n, const uint64_t *url,
                         const uint32_t *newdoc)
{
    struct sort_keyed *v = malloc((n + 1) * sizeof *v);
    s->pk_hash = malloc((n + 1) * sizeof *s->pk_hash);
    s->pk_doc = malloc((n + 1) * sizeof *s->pk_doc);
    if (v == NULL || s->pk_hash == NULL || s->pk_doc == NULL) {
        free(v);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (struct sort_keyed){url[i], newdoc[i]};
    qsort(v, n, sizeof *v, sort_cmp_keyed);
    for (size_t i = 0; i < n; i++) {
        s->pk_hash[i] = v[i].key;
        s->pk_doc[i] = (uint32_t)v[i].at;
    }
    free(v);
    return 0;
}

/* Recent lookups of a segment's dictionary: in the slot of a term's hash,
 * the hash's high half and the term's index + 1. A query's terms then
 * cost one probe and one compare from their second lookup on, where the
 * binary search costs ~21 probes, a cache miss or two each (profile of the
 * mix at 10 M over 16 clients: 5 % of the server, 14 segments times each
 * query's terms and their forms). Slots are written racily, each read
 * whole and checked against the dictionary's own string. */
#define TERM_CACHE_SLOTS 4096

static _Atomic uint64_t *term_cache(const struct eng_segment *s)
{
    struct eng_segment *w = (struct eng_segment *)(uintptr_t)s; /* the cache alone */
    _Atomic uint64_t *c = atomic_load(&w->term_cache), *none = NULL;
    if (c != NULL || (c = calloc(TERM_CACHE_SLOTS, sizeof *c)) == NULL)
        return c;
    if (!atomic_compare_exchange_strong(&w->term_cache, &none, c)) {
        free((void *)c);
        return none; /* another thread's, made meanwhile */
    }
    return c;
}

bool eng_segment_term(const struct eng_segment *s, const char *t, size_t len, struct eng_term *out)
{
    uint64_t h = hash_bytes64(t, len);
    _Atomic uint64_t *c = term_cache(s);
    if (c) {
        uint64_t e = atomic_load_explicit(&c[h % TERM_CACHE_SLOTS], memory_order_relaxed);
        uint32_t at = (uint32_t)e;
        if (e >> 32 == h >> 32 && at > 0 && at <= s->nterms && eng_tdict_at(s, at - 1, out) &&
            eng_tdict_is(s, out, t, len))
            return true;
    }
    size_t i = eng_tdict_find(s, t, len, out);
    if (i >= s->nterms)
        return false;
    if (c)
        atomic_store_explicit(&c[h % TERM_CACHE_SLOTS], (h >> 32) << 32 | (uint64_t)(i + 1),
                              memory_order_relaxed);
    return true;
}

/* ids descend with the docid: an id above the key comes before it. */
static int id_above(const void *element, const void *key)
{
    return *(const int64_t *)element > *(const int64_t *)key ? -1 : 0;
}

uint32_t eng_segment_first_le(const struct eng_segment *s, int64_t hi)
{
    return (uint32_t)sort_lower_bound(s->ids, s->n, sizeof s->ids[0], &hi, id_above);
}

static int hash_below(const void *element, const void *key)
{
    return *(const uint64_t *)element < *(const uint64_t *)key ? -1 : 0;
}

uint32_t eng_segment_pk_first(const struct eng_segment *s, uint64_t hash)
{
    return (uint32_t)sort_lower_bound(s->pk_hash, s->n, sizeof s->pk_hash[0], &hash, hash_below);
}

uint32_t eng_segment_find(const struct eng_segment *s, int64_t id)
{
    uint32_t d = eng_segment_first_le(s, id);
    return d < s->n && s->ids[d] == id ? d : ENG_END;
}

/* --- a segment from postings in docid order (merge.c) --------------------- */

/* The merge hands over documents and postings already in their final
 * docids, and each term's postings are encoded by encode_term exactly as a
 * built segment's, so a merged segment is byte for byte what a build of the
 * same rows would give whatever the postings format. */
struct eng_segw {
    struct eng_segment *s;
    uint64_t *url;   /* canonical-URL hash per docid */
    uint32_t *ident; /* docid -> docid: the document store's and key table's map */
    uint64_t *keys;  /* encode_term's scratch */
    size_t kcap, pcap;
    char *json; /* the documents' JSON back to back, doc i at joff[i] */
    uint64_t *joff;
    size_t jlen, jcap;
    struct eng_bterm t; /* the term being written (t.s borrowed) */
    struct eng_obuf post, strs;
    struct eng_tdict_w dict;
    struct eng_enc_bufs enc; /* (its tier_min_df: eng_segw_tiers) */
    bool docs_built; /* eng_segw_docs */
};

void eng_segw_free(struct eng_segw *w)
{
    if (w == NULL)
        return;
    eng_segment_unref(w->s);
    free(w->url);
    free(w->ident);
    free(w->json);
    free(w->joff);
    free(w->keys);
    free(w->t.pst);
    free(w->t.data);
    free(w->post.p);
    eng_enc_bufs_free(&w->enc);
    free(w->strs.p);
    eng_tdict_w_free(&w->dict);
    free(w);
}

int eng_segw_new(struct eng_segw **out, uint32_t n)
{
    struct eng_segw *w = calloc(1, sizeof *w);
    struct eng_segment *s = w ? calloc(1, sizeof *s) : NULL;

    *out = NULL;
    if (s == NULL) {
        free(w);
        return ERR_NOMEM;
    }
    w->s = s;
    atomic_init(&s->ref, 1);
    s->gen = eng_next_gen();
    s->n = n;
    s->ids = malloc(((size_t)n + 1) * sizeof *s->ids);
    s->dl = malloc(((size_t)n + 1) * sizeof *s->dl);
    s->src = malloc(((size_t)n + 1) * sizeof *s->src);
    w->url = malloc(((size_t)n + 1) * sizeof *w->url);
    w->ident = malloc(((size_t)n + 1) * sizeof *w->ident);
    w->joff = calloc((size_t)n + 1, sizeof *w->joff);
    if (!s->ids || !s->dl || !s->src || !w->url || !w->ident || !w->joff) {
        eng_segw_free(w);
        return ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        w->ident[i] = i;
    w->enc.tier_min_df = ENG_TIER_MIN_DF;
    *out = w;
    return 0;
}

void eng_segw_tiers(struct eng_segw *w, uint32_t min_df)
{
    w->enc.tier_min_df = min_df;
}

int eng_segw_json(struct eng_segw *w, uint32_t doc, const char *json, size_t len)
{
    if (eng_grow((void **)&w->json, &w->jcap, w->jlen + len + 1, 1) < 0)
        return ERR_NOMEM;
    if (len > 0)
        memcpy(w->json + w->jlen, json, len);
    w->joff[doc] = w->jlen;
    w->jlen += len;
    w->joff[doc + 1] = w->jlen;
    return 0;
}

int eng_segw_doc(struct eng_segw *w, uint32_t doc, const struct eng_segw_doc *d)
{
    struct eng_segment *s = w->s;
    s->ids[doc] = d->id;
    s->dl[doc] = d->dl;
    s->src[doc] = d->src;
    s->ntoken += d->dl;
    w->url[doc] = d->url_hash;
    return 0;
}

int eng_segw_term(struct eng_segw *w, const char *str, size_t len, uint8_t kind)
{
    w->t.s = (char *)str;
    w->t.len = (uint32_t)len;
    w->t.kind = kind;
    w->t.n = 0;
    w->t.dlen = 0;
    return 0;
}

int eng_segw_posting(struct eng_segw *w, uint32_t doc, unsigned mask, const uint32_t tf[ENG_FIELDS],
                     const uint32_t (*pos)[ENG_POS_MAX])
{
    struct eng_bterm *t = &w->t;
    size_t cap = w->pcap;
    if (eng_grow((void **)&t->pst, &cap, (size_t)t->n + 1, sizeof *t->pst) < 0)
        return ERR_NOMEM;
    w->pcap = cap;
    t->pst[t->n++] = (struct eng_bpost){doc, t->dlen};
    if (eng_kind(t->kind) == ENG_TERM_META)
        return 0;
    /* The builder's posting data (flush_doc): per field in the mask its tf
     * (the first with the mask, eng_posting_tf_put) and, for exact terms,
     * the position deltas. */
    size_t need = t->dlen + 1 + 5 * ENG_FIELDS, dcap = t->dcap;
    for (unsigned f = 0; f < ENG_FIELDS; f++)
        need += eng_kind(t->kind) == ENG_TERM_EXACT && (mask & (1u << f)) ? 5 * (size_t)tf[f] : 0;
    if (eng_grow((void **)&t->data, &dcap, need, 1) < 0)
        return ERR_NOMEM;
    t->dcap = (uint32_t)dcap;
    for (unsigned f = 0; f < ENG_FIELDS; f++) {
        if (!(mask & (1u << f)))
            continue;
        t->dlen += (uint32_t)eng_posting_tf_put(t->data + t->dlen, mask, f, tf[f]);
        if (eng_kind(t->kind) != ENG_TERM_EXACT)
            continue;
        for (uint32_t k = 0; k < tf[f]; k++)
            t->dlen += (uint32_t)eng_varint_put(t->data + t->dlen,
                                                k == 0 ? pos[f][0] : pos[f][k] - pos[f][k - 1]);
    }
    return 0;
}

void eng_segw_term_flags(struct eng_segw *w, unsigned flags)
{
    w->t.kind |= (uint8_t)flags;
}

int eng_segw_term_end(struct eng_segw *w)
{
    struct eng_segment *s = w->s;
    int rc;
    if (w->t.n == 0) /* every posting was of a deleted document */
        return 0;
    if (w->t.n < eng_pair_min_df(s->n)) /* no longer frequent: its pairs are left out */
        w->t.kind &= (uint8_t)~ENG_TERM_PAIRED;
    if (eng_grow((void **)&w->keys, &w->kcap, w->t.n, sizeof *w->keys) < 0)
        return ERR_NOMEM;
    struct eng_term et;
    /* (as eng_builder_finish's: every document is in before the terms) */
    w->enc.avgdl = s->n ? (double)s->ntoken / s->n : 1.0;
    if ((rc = eng_postings_encode(&w->post, &w->enc, &w->t, NULL, s->dl, w->keys, &w->dict, &et)) <
        0)
        return rc;
    if ((rc = eng_obuf_put(&w->strs, w->t.s, w->t.len)) < 0)
        return rc;
    return eng_tdict_add(&w->dict, &et);
}

bool eng_segw_paired(const struct eng_segw *w, const char *str, size_t len)
{
    /* The terms written so far: a paired word sorts before its pairs. */
    struct eng_segment view;
    struct eng_term t;
    eng_tdict_view(&w->dict, (const char *)w->strs.p, w->strs.n, w->post.n, &view);
    return eng_tdict_find(&view, str, len, &t) < view.nterms && (t.kind & ENG_TERM_PAIRED);
}

int eng_segw_docs(struct eng_segw *w, const atomic_bool *cancel)
{
    int rc = eng_docs_build(w->s, w->json ? w->json : "", w->joff, w->ident, cancel, NULL, 0);
    w->docs_built = rc == 0;
    return rc;
}

int eng_segw_finish(struct eng_segw *w, struct eng_segment **out)
{
    struct eng_segment *s = w->s;
    int rc;
    *out = NULL;
    eng_tdict_give(&w->dict, s);
    if (eng_segment_pk_build(s, s->n, w->url, w->ident) < 0)
        return ERR_NOMEM;
    if (!w->docs_built && (rc = eng_segw_docs(w, NULL)) < 0)
        return rc;
    s->post = w->post.p;
    s->post_len = w->post.n;
    s->strs = (char *)w->strs.p;
    s->strs_len = w->strs.n;
    w->post.p = NULL;
    w->strs.p = NULL;
    *out = s;
    w->s = NULL;
    return 0;
}
