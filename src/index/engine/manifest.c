/* The index directory's MANIFEST (index/engine/internal.h): which segment
 * files make the index, what each has deleted, the interned source table
 * and how far into the articles table they reach. Replaced atomically
 * (write MANIFEST.tmp, fsync, rename, fsync the directory), so a crash
 * leaves the old manifest or the new one, never a torn one; files it does
 * not name are leftovers and are removed at the next open.
 *
 * Image (little-endian on every machine newsd runs on, native here):
 *   "NEWSDMAN" u32 version u32 crc (CRC-32 of everything after these 16 bytes)
 *   i64 applied_seq, i64 covered, u64 next_file
 *   u32 len + bytes: epoch
 *   u32 nsrc, then per source u32 len + bytes
 *   u32 nseg, then per segment u64 file_id, u32 n, u32 ndel, u32 del[ndel]
 * Every length is checked against the bytes that are left before it is
 * used: a damaged manifest is refused (and the index rebuilt), never read
 * past its end. */
#include "index/engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "util/buf.h"
#include "util/fsync.h"
#include "util/banned.h"

#define MAN_MAGIC "NEWSDMAN"
#define MAN_VERSION 1u
#define MAN_HEAD 16
#define MAN_MAX ((size_t)1 << 30) /* a manifest larger than this is damage */
#define MAN_SRC_MAX 4096          /* longest source id */

void eng_manifest_clear(struct eng_manifest *m)
{
    for (uint32_t i = 0; i < m->nsrc && m->srcs; i++)
        free(m->srcs[i]);
    free(m->srcs);
    for (uint32_t i = 0; i < m->nseg && m->segs; i++)
        free(m->segs[i].del);
    free(m->segs);
    memset(m, 0, sizeof *m);
}

/* --- parsing --------------------------------------------------------------- */

struct reader {
    const uint8_t *p, *end;
    bool bad;
};

static void take(struct reader *r, void *out, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p, n);
    r->p += n;
}

static uint32_t take_u32(struct reader *r)
{
    uint32_t v;
    take(r, &v, sizeof v);
    return v;
}

static uint64_t take_u64(struct reader *r)
{
    uint64_t v;
    take(r, &v, sizeof v);
    return v;
}

/* A table's entry count in *count, then a zeroed array for count + 1
 * entries of size bytes. Each entry takes at least `least` bytes of the
 * file: a count larger than the bytes left is damage (r->bad), caught
 * before allocating for it. NULL when damaged or out of memory (r->bad
 * tells which). */
static void *take_table(struct reader *r, size_t least, size_t size, uint32_t *count)
{
    *count = take_u32(r);
    if (r->bad || *count > (size_t)(r->end - r->p) / least) {
        r->bad = true;
        return NULL;
    }
    return calloc((size_t)*count + 1, size);
}

int eng_manifest_parse(const uint8_t *p, size_t len, struct eng_manifest *m, struct err *err)
{
    struct reader r = {p, p + len, false};
    char magic[8];
    uint32_t version, crc;

    memset(m, 0, sizeof *m);
    take(&r, magic, sizeof magic);
    version = take_u32(&r);
    crc = take_u32(&r);
    if (r.bad || memcmp(magic, MAN_MAGIC, 8) != 0)
        return err_set(err, ERR_PARSE, "not an index manifest");
    if (version != MAN_VERSION)
        return err_set(err, ERR_UNSUPPORTED, "index manifest of another version");
    if (len > MAN_MAX ||
        (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p + MAN_HEAD, len - MAN_HEAD) != crc)
        return err_set(err, ERR_PARSE, "index manifest checksum mismatch");
    m->applied_seq = (int64_t)take_u64(&r);
    m->covered = (int64_t)take_u64(&r);
    m->next_file = take_u64(&r);
    uint32_t elen = take_u32(&r);
    if (elen >= sizeof m->epoch)
        r.bad = true;
    else
        take(&r, m->epoch, elen);
    if (!r.bad && memchr(m->epoch, '\0', elen) != NULL)
        r.bad = true;
    uint32_t nsrc, nseg;
    /* A source takes at least its length word, a segment its id and counts. */
    if ((m->srcs = take_table(&r, 4, sizeof *m->srcs, &nsrc)) == NULL)
        goto no_table;
    for (uint32_t i = 0; i < nsrc; i++) {
        uint32_t n = take_u32(&r);
        if (r.bad || n > MAN_SRC_MAX || n > (size_t)(r.end - r.p))
            goto bad;
        if ((m->srcs[i] = malloc((size_t)n + 1)) == NULL)
            goto nomem;
        m->nsrc = i + 1;
        take(&r, m->srcs[i], n);
        m->srcs[i][n] = '\0';
        if (memchr(m->srcs[i], '\0', n) != NULL)
            goto bad;
    }
    if ((m->segs = take_table(&r, 16, sizeof *m->segs, &nseg)) == NULL)
        goto no_table;
    for (uint32_t i = 0; i < nseg; i++) {
        struct eng_manifest_seg *s = &m->segs[i];
        s->file_id = take_u64(&r);
        s->n = take_u32(&r);
        s->ndel = take_u32(&r);
        m->nseg = i + 1;
        if (r.bad || s->file_id == 0 || s->file_id >= m->next_file || s->ndel > s->n ||
            s->ndel > (size_t)(r.end - r.p) / 4)
            goto bad;
        if ((s->del = malloc(((size_t)s->ndel + 1) * sizeof *s->del)) == NULL)
            goto nomem;
        take(&r, s->del, (size_t)s->ndel * sizeof *s->del);
        for (uint32_t k = 0; k < s->ndel; k++) {
            if (s->del[k] >= s->n || (k > 0 && s->del[k] <= s->del[k - 1]))
                goto bad;
        }
        for (uint32_t k = 0; k < i; k++) {
            if (m->segs[k].file_id == s->file_id)
                goto bad;
        }
    }
    if (r.bad || r.p != r.end)
        goto bad;
    return 0;
no_table:
    if (!r.bad)
        goto nomem;
bad:
    eng_manifest_clear(m);
    return err_set(err, ERR_PARSE, "index manifest is damaged");
nomem:
    eng_manifest_clear(m);
    return err_set(err, ERR_NOMEM, "out of memory");
}

void eng_manifest_seal(uint8_t *p, size_t len)
{
    if (len < MAN_HEAD || len > MAN_MAX)
        return;
    uint32_t u = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p + MAN_HEAD, len - MAN_HEAD);
    memcpy(p + 12, &u, 4);
}

/* --- writing --------------------------------------------------------------- */

int eng_manifest_image(const struct eng_manifest *m, uint8_t **out, size_t *len)
{
    struct buf b;
    uint32_t u;
    uint64_t v;

    buf_init(&b, MAN_MAX);
    buf_append(&b, MAN_MAGIC, 8);
    u = MAN_VERSION;
    buf_append(&b, &u, 4);
    u = 0; /* crc, patched below */
    buf_append(&b, &u, 4);
    v = (uint64_t)m->applied_seq;
    buf_append(&b, &v, 8);
    v = (uint64_t)m->covered;
    buf_append(&b, &v, 8);
    buf_append(&b, &m->next_file, 8);
    u = (uint32_t)strnlen(m->epoch, sizeof m->epoch - 1);
    buf_append(&b, &u, 4);
    buf_append(&b, m->epoch, u);
    buf_append(&b, &m->nsrc, 4);
    for (uint32_t i = 0; i < m->nsrc; i++) {
        u = (uint32_t)strlen(m->srcs[i]);
        buf_append(&b, &u, 4);
        buf_append(&b, m->srcs[i], u);
    }
    buf_append(&b, &m->nseg, 4);
    for (uint32_t i = 0; i < m->nseg; i++) {
        const struct eng_manifest_seg *s = &m->segs[i];
        buf_append(&b, &s->file_id, 8);
        buf_append(&b, &s->n, 4);
        buf_append(&b, &s->ndel, 4);
        buf_append(&b, s->del, (size_t)s->ndel * sizeof *s->del);
    }
    if (buf_error(&b) < 0) {
        buf_release(&b);
        return ERR_NOMEM;
    }
    eng_manifest_seal((uint8_t *)b.data, b.len);
    *out = (uint8_t *)buf_detach(&b, len);
    return *out ? 0 : ERR_NOMEM;
}

int eng_file_replace(const char *path, const uint8_t *p, size_t len, struct err *err)
{
    char tmp[4096];
    int fd, rc = 0;

    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return err_set(err, ERR_INVALID, "index path too long");
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return err_set(err, ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    for (size_t done = 0; done < len && rc == 0;) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = err_set(err, ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
        else
            done += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = err_set(err, ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = err_set(err, ERR_IO, "cannot rename %s: %s", tmp, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int eng_dir_sync(const char *dir, struct err *err)
{
    return fsync_path(dir, true, err);
}

int eng_manifest_write(const char *dir, const struct eng_manifest *m, struct err *err)
{
    char path[4096];
    uint8_t *img = NULL;
    size_t len = 0;
    int rc;

    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ENG_MANIFEST_NAME) >= sizeof path)
        return err_set(err, ERR_INVALID, "index path too long");
    if (eng_manifest_image(m, &img, &len) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");
    rc = eng_file_replace(path, img, len, err);
    free(img);
    if (rc == 0)
        rc = eng_dir_sync(dir, err);
    return rc;
}

int eng_manifest_read(const char *dir, struct eng_manifest *m, struct err *err)
{
    char path[4096];
    struct stat st;
    uint8_t *img = NULL;
    int fd, rc = 0;

    memset(m, 0, sizeof *m);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ENG_MANIFEST_NAME) >= sizeof path)
        return err_set(err, ERR_INVALID, "index path too long");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot open %s: %s", path,
                       strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_size < 0 || (size_t)st.st_size > MAN_MAX) {
        rc = err_set(err, ERR_PARSE, "%s: not a manifest", path);
        goto out;
    }
    if ((img = malloc((size_t)st.st_size + 1)) == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t done = 0; done < (size_t)st.st_size;) {
        ssize_t r = read(fd, img + done, (size_t)st.st_size - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = err_set(err, ERR_IO, "cannot read %s", path);
            goto out;
        }
        done += (size_t)r;
    }
    rc = eng_manifest_parse(img, (size_t)st.st_size, m, err);
out:
    free(img);
    close(fd);
    return rc;
}
