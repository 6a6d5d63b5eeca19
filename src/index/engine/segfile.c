/* Segment files (index/engine/internal.h, docs/engine.md "Persistence").
 *
 * One file per segment, the in-memory arrays written as they are, so that
 * a mapped file is searched in place: no decoding at open, and the kernel
 * pages in only what searches touch (an index larger than RAM stays
 * usable). Layout, every part 8-byte aligned:
 *
 *   header   struct seg_header (88 bytes)
 *   ids      int64[n]     article ids, descending (each its published_at: store_id_time)
 *   dl       uint32[n]    row sizes (BM25)
 *   src      uint32[n]    interned source ids (the manifest's table)
 *   pk_hash  uint64[n]    canonical-URL hashes, ascending
 *   pk_doc   uint32[n]    their docids
 *   tidx     struct eng_tblock[], the term dictionary's block index (tdict.h)
 *   tdict    its entries (tdict_len bytes), the terms in byte order
 *   strs     the term strings, back to back in the same order
 *   post     the postings (skip tables, docid and data streams)
 *   doc_off  uint64[n+1]  each document's frame in dz (docs.c)
 *   dict     the documents' LZ4 dictionary (dict_len bytes, 0: none)
 *   dz       the documents' frames: each article's NewsAPI JSON (docs.c)
 *
 * The header's crc is zlib's CRC-32 of everything after the header, read
 * by `newsd index verify` alone (it reads the whole file); ids_crc is the
 * CRC-32 of the ids part, read before a damaged segment is rebuilt from
 * the rows its ids name. A search checks what it reads the first time it
 * reads it (segcheck.c; each document's frame carries the
 * checksum of its text, docs.c), never the whole file. The
 * file is this build's memory layout (byte order, struct eng_tblock's size):
 * the header records both and a file from another layout is refused, and
 * then rebuilt from the table. */
#include "index/engine/internal.h"

#include "index/engine/heads.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "util/banned.h"

#define SEG_MAGIC "NEWSDSEG"
/* 2: the document store (doc_off, dict, dz); 3: block max (wf2_max,
 * dl_min) in the skip table; 4: a posting's field mask shares a varint
 * with its first field's tf (one byte where there were two), 24-byte
 * dictionary entries (no block count; the kind in the length's top byte),
 * each term's postings 4-byte aligned (they were 8); 5: a list of one
 * block keeps only its block maxima as its skip table (struct eng_skip1);
 * 6: docid blocks bit-packed (FOR-128), an exact term's block data its
 * heads (masks, tfs) before its positions; 7: each document's frame with
 * zstd's content checksum and the ids' CRC-32 in the header (a damaged file was read
 * as it came: a wrong document frequency crashed a search, a damaged
 * dictionary changed the articles' text); 8: pairs (pairs.h), exact terms
 * marked paired; 9: the term dictionary in blocks of varint entries
 * (tdict.h), a one-block list's maxima in its entry, only lists of several
 * blocks 4-byte aligned (1 M articles: the index proper -38 MB); 10: a block's heads
 * bit-packed, its fields' tfs in runs of one width (heads.h), an exact term's block without
 * the heads' length (1 M articles: the heads 101.7 -> 46.6 MB); 11: the documents LZ4
 * blocks with their length and XXH3 in front, the dictionary raw content (a page of 100
 * articles decodes in a third of the time, docs.c); 12: a frequent term's tier after its
 * postings (tiers.h), flagged ENG_TERM_TIERED with its bytes in its dictionary entry; 13: a
 * word's residual, the term word NUL, and its flags ENG_TERM_RESID and ENG_TERM_BARE (resid.h);
 * 14: the author's meta terms (store/meta.h; a segment of 13 has none, so author: in q would
 * miss its documents), and no published_at column: an id holds its second (store_id_time;
 * 10 M articles: -80 MB, more than the author terms add). */
#define SEG_VERSION 14u
#define SEG_ENDIAN 0x01020304u

struct seg_header {
    char magic[8];
    uint32_t version;
    uint32_t endian;    /* SEG_ENDIAN as this machine stores it */
    uint32_t tblock_size; /* sizeof(struct eng_tblock) */
    uint32_t n;
    uint64_t nterms, strs_len, post_len, ntoken;
    uint32_t crc;     /* CRC-32 of the bytes after the header */
    uint32_t ids_crc; /* CRC-32 of the ids part */
    uint64_t dict_len, dz_len;
    uint64_t tdict_len;
};
_Static_assert(sizeof(struct seg_header) == 88, "segment header is 88 bytes");

enum {
    P_IDS,
    P_DL,
    P_SRC,
    P_PKH,
    P_PKD,
    P_TIDX,
    P_TDICT,
    P_STRS,
    P_POST,
    P_DOFF,
    P_DICT,
    P_DZ,
    P_END
};

/* CRC-32 of n ids as they are in memory (and in the file). */
static uint32_t crc_of_ids(const int64_t *ids, uint32_t n)
{
    return (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), (const Bytef *)ids, (size_t)n * 8);
}

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

/* Offsets of the parts (off[P_END] = the file's length); false when the
 * sizes overflow. */
static bool seg_layout(const struct seg_header *h, uint64_t off[P_END + 1])
{
    const uint64_t limit = (uint64_t)1 << 48;
    uint64_t n = h->n;
    /* (a term's index is 32 bits: its bit in term_ok, tdict.h) */
    if (h->nterms > UINT32_MAX || h->strs_len > limit || h->post_len > limit ||
        h->dict_len > limit || h->dz_len > limit || h->tdict_len > limit)
        return false;
    uint64_t len[P_END] = {
        [P_IDS] = 8 * n,
        [P_DL] = 4 * n,
        [P_SRC] = 4 * n,
        [P_PKH] = 8 * n,
        [P_PKD] = 4 * n,
        [P_TIDX] = eng_tdict_blocks(h->nterms) * sizeof(struct eng_tblock),
        [P_TDICT] = h->tdict_len,
        [P_STRS] = h->strs_len,
        [P_POST] = h->post_len,
        [P_DOFF] = 8 * (n + 1),
        [P_DICT] = h->dict_len,
        [P_DZ] = h->dz_len,
    };
    off[0] = sizeof(struct seg_header);
    for (int i = 0; i < P_END; i++)
        off[i + 1] = align8(off[i] + len[i]);
    return true;
}

/* --- writing -------------------------------------------------------------- */

struct sink {
    FILE *f;       /* a file, or */
    uint8_t *buf;  /* a buffer */
    size_t n, cap; /* bytes emitted; the buffer's capacity */
    uLong crc;
    bool failed;
};

static void emit(struct sink *k, const void *p, size_t n, bool body)
{
    if (k->failed || n == 0)
        return;
    if (body)
        k->crc = crc32_z(k->crc, p, n);
    if (k->f) {
        if (fwrite(p, 1, n, k->f) != n)
            k->failed = true;
    } else {
        if (k->n + n > k->cap) {
            size_t cap = k->cap ? k->cap : 4096;
            while (cap < k->n + n)
                cap *= 2;
            uint8_t *q = realloc(k->buf, cap);
            if (q == NULL) {
                k->failed = true;
                return;
            }
            k->buf = q;
            k->cap = cap;
        }
        memcpy(k->buf + k->n, p, n);
    }
    k->n += n;
}

static void emit_part(struct sink *k, const void *p, size_t n)
{
    static const uint8_t zero[8];
    emit(k, p, n, true);
    emit(k, zero, (size_t)(align8(n) - n), true);
}

static void seg_header_fill(const struct eng_segment *s, struct seg_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, SEG_MAGIC, 8);
    h->version = SEG_VERSION;
    h->endian = SEG_ENDIAN;
    h->tblock_size = sizeof(struct eng_tblock);
    h->n = s->n;
    h->nterms = s->nterms;
    h->strs_len = s->strs_len;
    h->post_len = s->post_len;
    h->ntoken = s->ntoken;
    h->dict_len = s->dict_len;
    h->dz_len = s->dz_len;
    h->tdict_len = s->tdict_len;
    h->ids_crc = crc_of_ids(s->ids, s->n);
}

/* Header placeholder, then the parts; the caller patches the header. */
static void seg_emit(const struct eng_segment *s, struct sink *k, struct seg_header *h)
{
    seg_header_fill(s, h);
    k->crc = crc32(0L, Z_NULL, 0);
    emit(k, h, sizeof *h, false);
    emit_part(k, s->ids, (size_t)s->n * 8);
    emit_part(k, s->dl, (size_t)s->n * 4);
    emit_part(k, s->src, (size_t)s->n * 4);
    emit_part(k, s->pk_hash, (size_t)s->n * 8);
    emit_part(k, s->pk_doc, (size_t)s->n * 4);
    emit_part(k, s->tidx, eng_tdict_blocks(s->nterms) * sizeof *s->tidx);
    emit_part(k, s->tdict, s->tdict_len);
    emit_part(k, s->strs, (size_t)h->strs_len);
    emit_part(k, s->post, s->post_len);
    emit_part(k, s->doc_off, ((size_t)s->n + 1) * 8);
    emit_part(k, s->dict, s->dict_len);
    emit_part(k, s->dz, s->dz_len);
    h->crc = (uint32_t)k->crc;
}

int eng_segment_image(const struct eng_segment *s, uint8_t **out, size_t *len)
{
    struct sink k = {0};
    struct seg_header h;
    seg_emit(s, &k, &h);
    if (k.failed) {
        free(k.buf);
        return ERR_NOMEM;
    }
    if (k.buf == NULL && (k.buf = malloc(1)) == NULL)
        return ERR_NOMEM;
    memcpy(k.buf, &h, sizeof h);
    *out = k.buf;
    *len = k.n;
    return 0;
}

int eng_segment_write(const struct eng_segment *s, const char *path, struct err *err)
{
    char tmp[4096];
    struct sink k = {0};
    struct seg_header h;
    int rc = 0;

    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return err_set(err, ERR_INVALID, "index path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (k.f = fdopen(fd, "wb")) == NULL) {
        rc = err_set(err, ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    seg_emit(s, &k, &h);
    if (!k.failed && (fseek(k.f, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, k.f) != 1))
        k.failed = true;
    if (!k.failed && (fflush(k.f) != 0 || fsync(fileno(k.f)) != 0))
        k.failed = true;
    int saved = errno;
    if (fclose(k.f) != 0 && !k.failed) {
        k.failed = true;
        saved = errno;
    }
    if (k.failed)
        rc = err_set(err, ERR_IO, "cannot write %s: %s", tmp, strerror(saved));
    else if (rename(tmp, path) != 0)
        rc = err_set(err, ERR_IO, "cannot rename %s: %s", tmp, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* CRC-32 of an image's bytes after the header. */
static uint32_t body_crc(const uint8_t *p, size_t len)
{
    return (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p + sizeof(struct seg_header),
                             len - sizeof(struct seg_header));
}

void eng_segment_seal(uint8_t *p, size_t len)
{
    struct seg_header h;
    if (len < sizeof h)
        return;
    memcpy(&h, p, sizeof h);
    h.crc = body_crc(p, len);
    memcpy(p, &h, sizeof h);
}

/* --- reading -------------------------------------------------------------- */

static int seg_attach(struct eng_segment *s, const uint8_t *p, size_t len, struct err *err)
{
    struct seg_header h;
    uint64_t off[P_END + 1];

    if (len < sizeof h)
        return err_set(err, ERR_PARSE, "segment file too short");
    memcpy(&h, p, sizeof h);
    if (memcmp(h.magic, SEG_MAGIC, 8) != 0)
        return err_set(err, ERR_PARSE, "not a segment file");
    if (h.version != SEG_VERSION || h.endian != SEG_ENDIAN ||
        h.tblock_size != sizeof(struct eng_tblock))
        return err_set(err, ERR_UNSUPPORTED, "segment file of another version or machine");
    if (!seg_layout(&h, off) || off[P_END] != len)
        return err_set(err, ERR_PARSE, "segment file length disagrees with its header");
    s->image = p;
    s->image_len = len;
    s->n = h.n;
    s->nterms = (size_t)h.nterms;
    s->strs_len = (size_t)h.strs_len;
    s->post_len = (size_t)h.post_len;
    s->ntoken = h.ntoken;
    /* The parts are 8-aligned in an image that is (mmap: page-aligned;
     * malloc: max_align_t-aligned), so the casts below are aligned. */
    s->ids = (int64_t *)(uintptr_t)(p + off[P_IDS]);
    s->dl = (uint32_t *)(uintptr_t)(p + off[P_DL]);
    s->src = (uint32_t *)(uintptr_t)(p + off[P_SRC]);
    s->pk_hash = (uint64_t *)(uintptr_t)(p + off[P_PKH]);
    s->pk_doc = (uint32_t *)(uintptr_t)(p + off[P_PKD]);
    s->tidx = (struct eng_tblock *)(uintptr_t)(p + off[P_TIDX]);
    s->tdict = (uint8_t *)(uintptr_t)(p + off[P_TDICT]);
    s->tdict_len = (size_t)h.tdict_len;
    s->strs = (char *)(uintptr_t)(p + off[P_STRS]);
    s->post = (uint8_t *)(uintptr_t)(p + off[P_POST]);
    s->doc_off = (uint64_t *)(uintptr_t)(p + off[P_DOFF]);
    s->dict = (uint8_t *)(uintptr_t)(p + off[P_DICT]);
    s->dict_len = (size_t)h.dict_len;
    s->dz = (uint8_t *)(uintptr_t)(p + off[P_DZ]);
    s->dz_len = (size_t)h.dz_len;
    s->term_ok = calloc(s->nterms / 64 + 1, sizeof *s->term_ok);
    if (s->term_ok == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    int rc = eng_docs_attach(s, err);
    if (rc < 0) {
        free(s->term_ok);
        s->term_ok = NULL;
    }
    return rc;
}

int eng_segment_from_image(const uint8_t *p, size_t len, struct eng_segment **out, struct err *err)
{
    struct eng_segment *s = calloc(1, sizeof *s);
    int rc;
    *out = NULL;
    if (s == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if ((uintptr_t)p & 7) {
        free(s);
        return err_set(err, ERR_INVALID, "segment image not 8-byte aligned");
    }
    atomic_init(&s->ref, 1);
    s->gen = eng_next_gen();
    s->home = ENG_SEG_BORROWED;
    if ((rc = seg_attach(s, p, len, err)) < 0) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int eng_segment_map(const char *path, uint64_t file_id, struct eng_segment **out, struct err *err)
{
    struct eng_segment *s = NULL;
    struct stat st;
    void *p = MAP_FAILED;
    int rc, fd;

    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open %s: %s", path,
                       strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = err_set(err, ERR_IO, "cannot stat %s: %s", path, strerror(errno));
        goto out;
    }
    if (st.st_size < (off_t)sizeof(struct seg_header)) {
        rc = err_set(err, ERR_PARSE, "%s: too short for a segment file", path);
        goto out;
    }
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        rc = err_set(err, ERR_IO, "cannot map %s: %s", path, strerror(errno));
        goto out;
    }
    if ((s = calloc(1, sizeof *s)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    atomic_init(&s->ref, 1);
    s->gen = eng_next_gen();
    s->home = ENG_SEG_MAPPED;
    s->file_id = file_id;
    if ((rc = seg_attach(s, p, (size_t)st.st_size, err)) < 0) {
        char why[256];
        snprintf(why, sizeof why, "%s", err_msg(err, rc));
        rc = err_set(err, rc, "%s: %s", path, why);
        goto out;
    }
    *out = s;
    s = NULL;
    p = MAP_FAILED;
out:
    if (p != MAP_FAILED)
        munmap(p, (size_t)st.st_size);
    free(s);
    close(fd);
    return rc;
}

/* --- the full check -------------------------------------------------------- */

bool eng_segment_ids_intact(const struct eng_segment *s)
{
    struct seg_header h;
    if (s->image == NULL)
        return true; /* built in this process */
    memcpy(&h, s->image, sizeof h);
    return crc_of_ids(s->ids, s->n) == h.ids_crc;
}

int eng_segment_check(const struct eng_segment *s, uint32_t nsrc, struct err *err)
{
    int rc;

    if (s->image) {
        struct seg_header h;
        memcpy(&h, s->image, sizeof h);
        if (body_crc(s->image, s->image_len) != h.crc)
            return err_set(err, ERR_PARSE, "segment checksum mismatch");
    }
    if ((rc = eng_segment_check_columns(s, nsrc, err)) < 0)
        return rc;
    const char *why = eng_tdict_check(s);
    if (why)
        return err_set(err, ERR_PARSE, "%s", why);
    struct eng_term_iter it;
    struct eng_term t;
    for (bool more = eng_term_iter_at(&it, s, 0, &t); more; more = eng_term_iter_next(&it)) {
        if ((rc = eng_segment_check_term(s, &t, err)) < 0)
            return rc;
    }
    return eng_docs_check(s, err);
}

/* --- where the bytes go ------------------------------------------------------ */

/* One term's data stream split into frequencies (the blocks' heads: masks
 * and tfs) and positions. */
static void term_sizes(const struct eng_segment *s, const struct eng_term *t,
                       struct index_size_report *r)
{
    uint64_t skip_bytes = eng_term_skip_bytes(t);
    const uint8_t *data = s->post + t->off + skip_bytes + t->docs_len;
    const uint8_t *end = s->post + t->off + t->bytes, *p = data;
    uint64_t freqs = 0, pos_bytes = 0;
    const char *why;

    r->skip += skip_bytes;
    r->tiers += t->tier_bytes;
    r->docids += t->docs_len;
    r->postings += t->df;
    for (uint32_t left = t->df; eng_kind(t->kind) != ENG_TERM_META && left > 0 && p < end;) {
        uint32_t nin = left > ENG_BLOCK ? ENG_BLOCK : left;
        const uint8_t *q = p;
        struct eng_heads h;
        uint64_t due = 0;
        left -= nin;
        if ((p = eng_heads_check(p, end, nin, &h, &why)) == NULL)
            return;
        freqs += (uint64_t)(p - q);
        for (uint32_t k = 0; k < nin; k++)
            due += eng_heads_tfs(&h, k);
        for (uint64_t i = 0; eng_kind(t->kind) == ENG_TERM_EXACT && i < due; i++) {
            uint32_t v;
            q = p;
            if ((p = eng_varint_in(p, end, &v)) == NULL)
                return;
            pos_bytes += (uint64_t)(p - q);
            r->positions++;
        }
    }
    r->freqs += freqs;
    r->positions_bytes += pos_bytes;
}

void eng_segment_sizes(const struct eng_segment *s, struct index_size_report *r)
{
    struct seg_header h;
    uint64_t off[P_END + 1];

    seg_header_fill(s, &h);
    if (!seg_layout(&h, off))
        return;
    uint64_t before = index_size_index_bytes(r) + index_size_store_bytes(r);
    r->segments++;
    r->docs += s->n;
    r->terms += s->nterms;
    r->columns += (uint64_t)s->n * (8 + 4 + 4);
    r->url_table += (uint64_t)s->n * (8 + 4);
    r->dictionary += eng_tdict_blocks(s->nterms) * sizeof(struct eng_tblock) + s->tdict_len;
    r->term_strs += s->strs_len;
    r->store_offsets += ((uint64_t)s->n + 1) * 8;
    r->store_dict += s->dict_len;
    r->store_frames += s->dz_len;
    struct eng_term_iter it;
    struct eng_term t;
    for (bool more = eng_term_iter_at(&it, s, 0, &t); more; more = eng_term_iter_next(&it)) {
        uint64_t at = r->skip + r->docids + r->freqs;
        term_sizes(s, &t, r);
        if (eng_kind(t.kind) == ENG_TERM_PAIR)
            r->pairs += r->skip + r->docids + r->freqs - at + it.entry_bytes + t.len;
    }
    /* The header, and every byte no part above names (alignment). */
    uint64_t named = index_size_index_bytes(r) + index_size_store_bytes(r) - before;
    if (off[P_END] > named)
        r->header += off[P_END] - named;
}

uint32_t eng_segment_version(void)
{
    return SEG_VERSION;
}

int eng_snap_check_live(const struct eng_snap *s, int64_t **docs, size_t *n, uint64_t *bad,
                        char *detail, size_t detail_size)
{
    bool *damaged = calloc(s->nseg + 1, sizeof *damaged);
    size_t live = 0;

    *docs = NULL;
    *n = 0;
    if (damaged == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < s->nseg; i++) {
        const struct eng_segment *seg = s->segs[i];
        struct err cerr;
        err_clear(&cerr);
        int c = eng_segment_check(seg, (uint32_t)s->npop, &cerr);
        if (c < 0) {
            damaged[i] = true;
            *bad += seg->n;
            if (!detail[0])
                snprintf(detail, detail_size, "segment %zu (file %016llx): %s", i,
                         (unsigned long long)seg->file_id, err_msg(&cerr, c));
            continue;
        }
        live += seg->n - (s->deletions[i] ? s->deletions[i]->n : 0);
    }
    if ((*docs = malloc((live + 1) * sizeof **docs)) == NULL) {
        free(damaged);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->nseg; i++) {
        for (uint32_t d = 0; !damaged[i] && d < s->segs[i]->n; d++) {
            if (!eng_deletions_has(s->deletions[i], d))
                (*docs)[(*n)++] = s->segs[i]->ids[d];
        }
    }
    free(damaged);
    return 0;
}
