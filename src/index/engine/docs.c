/* The document store (index/engine/internal.h, docs/engine.md "The
 * page"): each article's NewsAPI JSON, rendered once when its segment is
 * built (article/json.h), kept in the segment as one LZ4 block per
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
 * LZ4, not zstd (segment format 11): a page of 100 articles was one zstd
 * frame each, and their decoding was 47 % of the server's time on a rare
 * word's page over HTTP (perf, 1 M articles): 2.27 us an article against
 * LZ4's 0.70 us with the same dictionary (32 k real articles, level 3
 * against LZ4's default; the frames' entropy tables are what a small zstd
 * frame pays for each time). The store is 1.4x larger for it (2.60 against
 * 1.81 times smaller than the JSON); the index proper is unchanged.
 *
 * A frame: the JSON's length (4 bytes, little-endian), the low 32 bits of
 * the XXH3 of the JSON (4 bytes), the LZ4 block. The checksum is of the
 * decoded text, so a damaged frame or dictionary (which decode into other
 * text without any other error) is never served (issue 23); XXH3 costs
 * 0.1 us an article where zlib's CRC-32 cost 0.5.
 *
 * The bottom layer: calls nothing else of the engine. */
#include "index/engine/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#define ZDICT_STATIC_LINKING_ONLY /* ZDICT_trainFromBuffer_fastCover */
#include <zdict.h>
#include <xxhash.h>

#include "util/bits.h"
#include "util/limits.h"

#include "util/banned.h"

#define DOCS_DICT_BYTES (64 * 1024) /* dictionary capacity: LZ4 reaches back 64 KiB */
#define DOCS_DICT_MIN_DOCS 1024     /* fewer documents: no dictionary (it would not pay) */
#define DOCS_SAMPLE_BYTES (4 << 20) /* the training sample, spread over the segment */
#define DOCS_HEADER 8               /* a frame's length and checksum */
/* A frame claiming more is corrupt: an article's fields are at most
 * LIMIT_FIELD_BYTES each, six bytes of JSON per byte at worst (\u0001),
 * and a page's response is at most LIMIT_RESPONSE_BYTES anyway. */
#define DOCS_MAX_JSON ((size_t)LIMIT_RESPONSE_BYTES)
_Static_assert(DOCS_MAX_JSON < INT_MAX / 2, "LZ4 counts in int");

static uint32_t json_sum(const char *json, size_t len)
{
    return (uint32_t)XXH3_64bits(json, len);
}

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
        size_t r =
            ZDICT_trainFromBuffer_fastCover(dict, DOCS_DICT_BYTES, sample, sizes, (unsigned)k, fp);
        /* zstd's header and entropy tables off: LZ4 wants the content */
        size_t head = ZDICT_isError(r) ? 0 : ZDICT_getDictHeaderSize(dict, r);
        if (!ZDICT_isError(r) && !ZDICT_isError(head) && head < r) {
            memmove(dict, dict + head, r - head);
            got = r - head;
        }
    }
    free(sizes);
    free(sample);
    return got;
}

int eng_docs_build(struct eng_segment *s, const char *blob, const uint64_t *off,
                   const uint32_t *order, const atomic_bool *cancel, const uint8_t *reuse,
                   size_t reuse_len)
{
    LZ4_stream_t *loaded = LZ4_createStream(), *work = LZ4_createStream();
    uint8_t *dict = malloc(DOCS_DICT_BYTES);
    size_t cap = 0, len = 0;
    int rc = ERR_NOMEM;

    s->doc_off = malloc(((size_t)s->n + 1) * sizeof *s->doc_off);
    if (loaded == NULL || work == NULL || dict == NULL || s->doc_off == NULL)
        goto out;
    /* (never below DOCS_DICT_MIN_DOCS: a small segment goes without one) */
    if (reuse_len > 0 && reuse_len <= DOCS_DICT_BYTES && s->n >= DOCS_DICT_MIN_DOCS &&
        s->n < ENG_DOCS_OWN_DICT_DOCS) {
        memcpy(dict, reuse, reuse_len);
        s->dict_len = reuse_len;
    } else {
        s->dict_len = train(blob, off, order, s->n, dict);
    }
    if (s->dict_len > 0) {
        s->dict = dict;
        dict = NULL;
    }
    /* The dictionary loaded (hashed) once, then copied into the working
     * stream before each document: LZ4_stream_t is plain data (a table of
     * offsets, a pointer to the dictionary's bytes, counters; nothing
     * points into it), so the copy is a stream with the same dictionary
     * loaded. LZ4_loadDict a document cost more than compressing it (43
     * MB/s against 190), and LZ4_attach_dictionary, which does this
     * without the copy, is not exported by the shared library. */
    if (s->dict_len > 0)
        LZ4_loadDict(loaded, (const char *)s->dict, (int)s->dict_len);
    for (uint32_t d = 0; d < s->n; d++) {
        if (cancel && (d & 1023) == 0 && atomic_load(cancel)) {
            rc = ERR_BUSY;
            goto out;
        }
        const char *src = blob + off[order[d]];
        size_t n = (size_t)(off[order[d] + 1] - off[order[d]]);
        if (n > DOCS_MAX_JSON) { /* (the renderer's limits make it impossible) */
            rc = ERR_INVALID;
            goto out;
        }
        size_t need = len + DOCS_HEADER + (size_t)LZ4_compressBound((int)n);
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
        memcpy(work, loaded, sizeof *work);
        int z = LZ4_compress_fast_continue(work, src, (char *)s->dz + len + DOCS_HEADER, (int)n,
                                           (int)(cap - len - DOCS_HEADER), 1);
        if (z <= 0)
            goto out;
        bits_put_le32(s->dz + len, (uint32_t)n);
        bits_put_le32(s->dz + len + 4, json_sum(src, n));
        len += DOCS_HEADER + (size_t)z;
    }
    s->doc_off[s->n] = len;
    s->dz_len = len;
    rc = 0;
out:
    LZ4_freeStream(loaded);
    LZ4_freeStream(work);
    free(dict);
    return rc;
}

int eng_docs_attach(struct eng_segment *s, struct err *err)
{
    /* the dictionary stays in the mapped file; LZ4 counts in int */
    return s->dict_len <= DOCS_DICT_BYTES
               ? 0
               : err_set(err, ERR_PARSE, "a segment's document dictionary is unusable");
}

void eng_docs_release(struct eng_segment *s)
{
    if (s->home == ENG_SEG_HEAP) {
        free(s->doc_off);
        free(s->dz);
        free(s->dict);
    }
}

/* The frame of doc inside dz, or false when its offsets are out of bounds
 * or it is too short for its header. */
static bool frame(const struct eng_segment *s, uint32_t doc, const uint8_t **p, size_t *n)
{
    uint64_t lo = s->doc_off[doc], hi = s->doc_off[doc + 1];
    if (lo > hi || hi > s->dz_len || hi - lo < DOCS_HEADER || hi - lo - DOCS_HEADER > INT_MAX)
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
    /* a frame is ~550 bytes: its first lines hold the header and the
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
    uint32_t len = bits_le32(p);
    if (len > DOCS_MAX_JSON)
        return ERR_PARSE;
    *size = len;
    return 0;
}

int eng_docs_read(const struct eng_segment *s, uint32_t doc, char *out, size_t size)
{
    const uint8_t *p;
    size_t n;
    /* size: the frame's own length (eng_docs_size), at most DOCS_MAX_JSON */
    if (doc >= s->n || !frame(s, doc, &p, &n) || bits_le32(p) != size || size > DOCS_MAX_JSON)
        return ERR_PARSE;
    /* the safe decoder: never reads past the frame or writes past size,
     * whatever the bytes */
    const char *src = (const char *)p + DOCS_HEADER;
    int got = s->dict_len > 0
                  ? LZ4_decompress_safe_usingDict(src, out, (int)(n - DOCS_HEADER), (int)size,
                                                  (const char *)s->dict, (int)s->dict_len)
                  : LZ4_decompress_safe(src, out, (int)(n - DOCS_HEADER), (int)size);
    return got < 0 || (size_t)got != size || json_sum(out, size) != bits_le32(p + 4) ? ERR_PARSE
                                                                                     : 0;
}

int eng_docs_get(const struct eng_segment *s, uint32_t doc, struct arena *a, const char **json,
                 size_t *len)
{
    size_t size;
    int rc = eng_docs_size(s, doc, &size);
    if (rc < 0)
        return rc;
    char *out = arena_alloc(a, size + 1);
    if (out == NULL)
        return ERR_NOMEM;
    if ((rc = eng_docs_read(s, doc, out, size)) < 0)
        return rc;
    *json = out;
    *len = size;
    return 0;
}

int eng_docs_check(const struct eng_segment *s, struct err *err)
{
    struct arena a;
    int rc = 0;

    if (s->doc_off[0] != 0 || s->doc_off[s->n] != s->dz_len)
        rc = err_set(err, ERR_PARSE, "the document store's offsets disagree with its length");
    arena_init(&a, 0);
    for (uint32_t d = 0; d < s->n && rc == 0; d++) {
        const char *json;
        size_t len;
        (void)json;
        int r = eng_docs_get(s, d, &a, &json, &len);
        if (r == ERR_NOMEM)
            rc = err_set(err, ERR_NOMEM, "out of memory");
        else if (r < 0)
            rc = err_set(err, ERR_PARSE, "a stored document does not decode");
        arena_release(&a);
        arena_init(&a, 0);
    }
    arena_release(&a);
    return rc;
}
