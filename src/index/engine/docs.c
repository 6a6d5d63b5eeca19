/* The document store (index/engine/internal.h, docs/engine.md "The
 * page"): each article's NewsAPI JSON, rendered once when its segment is
 * built (article/json.h), kept in the segment as one zstd frame per
 * document. A page is then one small decompression per article and a copy:
 * no row read, no escaping on the request path.
 *
 * One frame per document, not blocks of documents: a page's hits are
 * scattered over a segment (a rare word, relevancy), and a block would
 * cost a whole block's decompression per hit. What blocks gain in
 * compression the dictionary gives back: it is trained on a sample of the
 * segment's own documents (their keys, source names, URL prefixes), so a
 * frame holds little more than what is new in its article.
 *
 * The bottom layer: calls nothing else of the engine. */
#include "index/engine/internal.h"

#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY  /* ZSTD_createDDict_byReference's advanced form */
#define ZDICT_STATIC_LINKING_ONLY /* ZDICT_trainFromBuffer_fastCover */
#include <zdict.h>
#include <zstd.h>

#include "util/limits.h"

#include "util/banned.h"

#define DOCS_LEVEL 3                /* zstd level: build speed over the last percent */
#define DOCS_DICT_BYTES (64 * 1024) /* dictionary capacity */
#define DOCS_DICT_MIN_DOCS 1024     /* fewer documents: no dictionary (it would not pay) */
#define DOCS_SAMPLE_BYTES (4 << 20) /* the training sample, spread over the segment */
/* A frame claiming more is corrupt: an article's fields are at most
 * LIMIT_FIELD_BYTES each, six bytes of JSON per byte at worst (\u0001),
 * and a page's response is at most LIMIT_RESPONSE_BYTES anyway. */
#define DOCS_MAX_JSON ((size_t)LIMIT_RESPONSE_BYTES)

/* A dictionary from a sample of the documents; 0 bytes when none pays. */
static size_t train(const char *blob, const uint64_t *off, const uint32_t *order, uint32_t n,
                    uint8_t *dict)
{
    if (n < DOCS_DICT_MIN_DOCS)
        return 0;
    uint64_t total = 0;
    for (uint32_t d = 0; d < n; d++)
        total += off[order[d] + 1] - off[order[d]];
    uint32_t step = total > DOCS_SAMPLE_BYTES ? (uint32_t)(total / DOCS_SAMPLE_BYTES) + 1 : 1;
    uint32_t ns = (n + step - 1) / step;
    size_t *sizes = malloc(ns * sizeof *sizes);
    char *sample = malloc(DOCS_SAMPLE_BYTES + 1);
    size_t used = 0, k = 0, got = 0;
    if (sizes && sample) {
        for (uint32_t d = 0; d < n && k < ns; d += step) {
            size_t len = (size_t)(off[order[d] + 1] - off[order[d]]);
            if (used + len > DOCS_SAMPLE_BYTES)
                break;
            memcpy(sample + used, blob + off[order[d]], len);
            used += len;
            sizes[k++] = len;
        }
        /* fastCover with fixed parameters: ZDICT_trainFromBuffer tries
         * several segment sizes (k) and keeps the best, ~0.25 s a segment
         * for a few tenths of a percent; k = 100 is about what it picks for
         * NewsAPI JSON (0.05 s). */
        ZDICT_fastCover_params_t fp;
        memset(&fp, 0, sizeof fp);
        fp.k = 100;
        fp.d = 8;
        fp.f = 20;
        fp.accel = 1;
        fp.zParams.compressionLevel = DOCS_LEVEL;
        size_t r =
            ZDICT_trainFromBuffer_fastCover(dict, DOCS_DICT_BYTES, sample, sizes, (unsigned)k, fp);
        got = ZDICT_isError(r) ? 0 : r;
    }
    free(sizes);
    free(sample);
    return got;
}

int eng_docs_build(struct eng_segment *s, const char *blob, const uint64_t *off,
                   const uint32_t *order, const atomic_bool *cancel)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CDict *cdict = NULL;
    uint8_t *dict = malloc(DOCS_DICT_BYTES);
    size_t cap = 0, len = 0;
    int rc = ERR_NOMEM;

    s->doc_off = malloc(((size_t)s->n + 1) * sizeof *s->doc_off);
    if (cctx == NULL || dict == NULL || s->doc_off == NULL)
        goto out;
    s->dict_len = train(blob, off, order, s->n, dict);
    if (s->dict_len > 0) {
        if ((cdict = ZSTD_createCDict(dict, s->dict_len, DOCS_LEVEL)) == NULL ||
            (s->ddict = ZSTD_createDDict(dict, s->dict_len)) == NULL)
            goto out;
        s->dict = dict;
        dict = NULL;
    }
    /* Each frame carries zstd's content checksum (the low 32 bits of the
     * XXH64 of the document's JSON, 4 bytes), checked by the decoder as it
     * decodes: a damaged frame or dictionary (which decodes frames into
     * other text without any other error) is never served (issue 23). It is
     * zstd's own xxhash, taken as the frame is decoded: about 4 % of the
     * in-process bench mix, where zlib's CRC-32 of the JSON afterwards
     * (no new dependency either) cost 9 % (docs/engine.md, "Damaged
     * files"). No dictionary id: the dictionary is the segment's own. */
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, DOCS_LEVEL);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    if (cdict && ZSTD_isError(ZSTD_CCtx_refCDict(cctx, cdict)))
        goto out;
    for (uint32_t d = 0; d < s->n; d++) {
        if (cancel && (d & 1023) == 0 && atomic_load(cancel)) {
            rc = ERR_BUSY;
            goto out;
        }
        const char *src = blob + off[order[d]];
        size_t n = (size_t)(off[order[d] + 1] - off[order[d]]);
        size_t need = len + ZSTD_compressBound(n);
        if (need > cap) {
            size_t c = cap ? cap : 65536;
            while (c < need)
                c *= 2;
            uint8_t *q = realloc(s->dz, c);
            if (q == NULL)
                goto out;
            s->dz = q;
            cap = c;
        }
        s->doc_off[d] = len;
        size_t z = ZSTD_compress2(cctx, s->dz + len, cap - len, src, n);
        if (ZSTD_isError(z))
            goto out;
        len += z;
    }
    s->doc_off[s->n] = len;
    s->dz_len = len;
    rc = 0;
out:
    ZSTD_freeCDict(cdict);
    ZSTD_freeCCtx(cctx);
    free(dict);
    return rc;
}

int eng_docs_attach(struct eng_segment *s, struct err *err)
{
    if (s->dict_len == 0)
        return 0;
    /* By reference: the dictionary stays in the mapped file. */
    s->ddict = ZSTD_createDDict_advanced(s->dict, s->dict_len, ZSTD_dlm_byRef, ZSTD_dct_auto,
                                         ZSTD_defaultCMem);
    return s->ddict ? 0 : err_set(err, ERR_PARSE, "a segment's document dictionary is unusable");
}

void eng_docs_release(struct eng_segment *s)
{
    ZSTD_freeDDict(s->ddict);
    s->ddict = NULL;
    if (s->home == ENG_SEG_HEAP) {
        free(s->doc_off);
        free(s->dz);
        free(s->dict);
    }
}

void *eng_docs_dctx(void)
{
    return ZSTD_createDCtx();
}

void eng_docs_dctx_free(void *dctx)
{
    ZSTD_freeDCtx(dctx);
}

void eng_docs_pool_init(struct eng_docs_pool *p)
{
    pthread_mutex_init(&p->lock, NULL);
    p->n = 0;
}

void eng_docs_pool_release(struct eng_docs_pool *p)
{
    while (p->n > 0)
        ZSTD_freeDCtx(p->free[--p->n]);
    pthread_mutex_destroy(&p->lock);
}

void *eng_docs_pool_get(struct eng_docs_pool *p)
{
    void *d = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->n > 0)
        d = p->free[--p->n];
    pthread_mutex_unlock(&p->lock);
    return d ? d : ZSTD_createDCtx();
}

void eng_docs_pool_put(struct eng_docs_pool *p, void *dctx)
{
    if (dctx == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->n < ENG_DOCS_POOL) {
        p->free[p->n++] = dctx;
        dctx = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    ZSTD_freeDCtx(dctx);
}

/* The frame of doc inside dz, or false when its offsets are out of bounds. */
static bool frame(const struct eng_segment *s, uint32_t doc, const uint8_t **p, size_t *n)
{
    uint64_t lo = s->doc_off[doc], hi = s->doc_off[doc + 1];
    if (lo > hi || hi > s->dz_len)
        return false;
    *p = s->dz + lo;
    *n = (size_t)(hi - lo);
    return true;
}

void eng_docs_prefetch(const struct eng_segment *s, uint32_t doc)
{
    if (doc >= s->n)
        return;
    uint64_t lo = s->doc_off[doc], hi = s->doc_off[doc + 1];
    /* a frame is ~400 bytes: its first lines hold the header and the
     * literals the decoder reads first; the rest follows as it streams */
    for (uint64_t at = lo; at < hi && at < s->dz_len && at < lo + 256; at += 64)
        __builtin_prefetch(s->dz + at);
}

int eng_docs_size(const struct eng_segment *s, uint32_t doc, size_t *size)
{
    const uint8_t *p;
    size_t n;
    if (doc >= s->n || !frame(s, doc, &p, &n))
        return ERR_PARSE;
    ZSTD_frameHeader h;
    /* a frame without its checksum (a flag bit flipped) is damaged too */
    if (ZSTD_getFrameHeader(&h, p, n) != 0 || h.frameType != ZSTD_frame || !h.checksumFlag ||
        h.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN || h.frameContentSize > DOCS_MAX_JSON)
        return ERR_PARSE;
    *size = (size_t)h.frameContentSize;
    return 0;
}

int eng_docs_read(const struct eng_segment *s, void *dctx, uint32_t doc, char *out, size_t size)
{
    const uint8_t *p;
    size_t n;
    if (doc >= s->n || !frame(s, doc, &p, &n))
        return ERR_PARSE;
    size_t got = s->ddict ? ZSTD_decompress_usingDDict(dctx, out, size, p, n, s->ddict)
                          : ZSTD_decompressDCtx(dctx, out, size, p, n);
    /* (a checksum that disagrees is a zstd error: ZSTD_error_checksum_wrong) */
    return ZSTD_isError(got) || got != size ? ERR_PARSE : 0;
}

int eng_docs_get(const struct eng_segment *s, void *dctx, uint32_t doc, struct arena *a,
                 const char **json, size_t *len)
{
    size_t size;
    int rc = eng_docs_size(s, doc, &size);
    if (rc < 0)
        return rc;
    char *out = arena_alloc(a, size + 1);
    if (out == NULL)
        return ERR_NOMEM;
    if ((rc = eng_docs_read(s, dctx, doc, out, size)) < 0)
        return rc;
    *json = out;
    *len = size;
    return 0;
}

int eng_docs_check(const struct eng_segment *s, struct err *err)
{
    struct arena a;
    void *dctx = eng_docs_dctx();
    int rc = 0;

    if (dctx == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if (s->doc_off[0] != 0 || s->doc_off[s->n] != s->dz_len)
        rc = err_set(err, ERR_PARSE, "the document store's offsets disagree with its length");
    arena_init(&a, 0);
    for (uint32_t d = 0; d < s->n && rc == 0; d++) {
        const char *json;
        size_t len;
        (void)json;
        int r = eng_docs_get(s, dctx, d, &a, &json, &len);
        if (r == ERR_NOMEM)
            rc = err_set(err, ERR_NOMEM, "out of memory");
        else if (r < 0)
            rc = err_set(err, ERR_PARSE, "a stored document does not decode");
        arena_release(&a);
        arena_init(&a, 0);
    }
    arena_release(&a);
    eng_docs_dctx_free(dctx);
    return rc;
}
