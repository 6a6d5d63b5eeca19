/* WARC reader (ingest/imports/imports.h) in two layers:
 *
 * the byte source  plain bytes, or gzip members inflated one after the
 *                  other into a window (zlib, inflateReset between
 *                  members). Corrupt gzip data marks the source damaged and
 *                  it looks for the next member's magic bytes (1f 8b 08);
 *                  a member cut short by the end of the file marks it
 *                  truncated.
 * the records      a WARC record: "WARC/x.y" line, "Name: value" header
 *                  lines up to an empty line, Content-Length bytes of block,
 *                  blank lines; or an ARC record: a URL-record line
 *                  (imports_internal.h), Archive-length bytes, a newline. The first line
 *                  says which. A record that breaks any of it (or meets a
 *                  damaged source) is reported once and the reader skips
 *                  lines up to the next one that opens a record.
 *
 * Sources for the formats (read, not copied): ISO 28500:2009 (WARC 1.0)
 * and ISO 28500:2017 (WARC 1.1, whose annex lists the changes since 1.0:
 * WARC-Target-URI without angle brackets among them); the WARC 0.17 draft
 * and 0.18 drafts of ISO 28500 (2008): the same record grammar and
 * record types (warcinfo, response, resource, request, metadata, revisit,
 * conversion, continuation), as Heritrix 1.14's and 2.0's writers wrote
 * them ("WARC/0.17", Content-Type "application/http; msgtype=response");
 * the drafts before 0.17 (0.9, 0.10) put the length, type, URI, date and
 * id on the version line: told apart and refused with their own message;
 * the Internet Archive's "Arc File Format" (Burner and Kahle, 1996) for
 * ARC v1 and v2 (see imports_internal.h), and Heritrix's ARCWriter for what real .arc.gz
 * files hold (one gzip member per record, a version block "1 1").
 * HTTP payloads of response records: status line and head, then chunked
 * transfer-encoding undone and gzip/deflate content-encoding inflated, each
 * bounded by WARC_MAX_BODY; a payload that does not decode is kept as it
 * came (Common Crawl's records carry decoded payloads under their original
 * headers, renamed X-Crawler-*, but others keep both). */
#include "ingest/imports/imports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "ingest/imports/imports_internal.h"
#include "util/buf.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define SRC_IN_BYTES (64 * 1024)
#define SRC_OUT_BYTES (256 * 1024)
#define LINE_MAX_BYTES (16 * 1024) /* one header line; longer ones make a record bad */
#define CONTENT_LENGTH_DIGITS 15

struct warc_reader {
    FILE *f;
    bool own; /* fclose at the end */
    bool gz;
    bool zs_ready;
    z_stream zs;
    unsigned char in[SRC_IN_BYTES];
    unsigned char out[SRC_OUT_BYTES];
    size_t out_pos, out_len;
    uint64_t upos;      /* uncompressed offset of out[out_pos] */
    uint64_t fpos;      /* bytes read from the file */
    bool in_eof;        /* the file is read to its end */
    bool eof;           /* no more bytes will come */
    bool in_member;     /* inside a gzip member (its end not seen) */
    bool damaged;       /* corrupt data met since the last record started */
    bool truncated;     /* the file ends inside a gzip member */
    uint64_t damage_at; /* file offset of the damage */
    int io_error;       /* errno of a failed read */
    bool have_line;     /* line holds a "WARC/1.x" line found while resyncing */
    uint64_t line_at;   /* its offset */
    struct buf line;    /* the current line */
    struct buf head;    /* header values of the current record, NUL-separated */
    struct buf block;
    struct buf body; /* decoded payload */
    struct buf tmp;
    char http_head[WARC_MAX_HEADER + 1];
};

/* ---- byte source ---------------------------------------------------------- */

/* Up to n bytes of the file into p: how many, 0 at its end or on a read
 * error (kept in io_error for the caller's report); fpos counts them. */
static size_t file_read(struct warc_reader *r, void *p, size_t n)
{
    size_t k = fread(p, 1, n, r->f);
    if (k == 0 && ferror(r->f))
        r->io_error = errno ? errno : EIO;
    r->fpos += k;
    return k;
}

static bool src_fill_in(struct warc_reader *r)
{
    if (r->in_eof)
        return false;
    size_t k = file_read(r, r->in, sizeof r->in);
    if (k == 0) {
        r->in_eof = true;
        return false;
    }
    r->zs.next_in = r->in;
    r->zs.avail_in = (uInt)k;
    return true;
}

/* Skip input up to the next gzip magic (1f 8b 08), refilling as needed. */
static void src_gz_resync(struct warc_reader *r)
{
    for (;;) {
        while (r->zs.avail_in >= 3) {
            unsigned char *p = memchr(r->zs.next_in + 1, 0x1f, r->zs.avail_in - 1);
            if (!p) {
                r->zs.next_in += r->zs.avail_in - 1;
                r->zs.avail_in = 1;
                break;
            }
            size_t skip = (size_t)(p - r->zs.next_in);
            r->zs.next_in = p;
            r->zs.avail_in -= (uInt)skip;
            if (r->zs.avail_in >= 3 && p[1] == 0x8b && p[2] == 0x08) {
                inflateReset(&r->zs);
                return;
            }
            if (r->zs.avail_in < 3)
                break;
        }
        /* keep the last bytes: a magic may straddle two reads */
        unsigned char keep[3];
        size_t nk = r->zs.avail_in;
        memcpy(keep, r->zs.next_in, nk);
        if (r->in_eof) {
            r->zs.avail_in = 0;
            return;
        }
        size_t k = file_read(r, r->in + nk, sizeof r->in - nk);
        memcpy(r->in, keep, nk);
        if (k == 0) {
            r->in_eof = true;
            r->zs.next_in = r->in;
            r->zs.avail_in = (uInt)nk;
            if (nk < 3) {
                r->zs.avail_in = 0;
                return;
            }
            continue;
        }
        r->zs.next_in = r->in;
        r->zs.avail_in = (uInt)(nk + k);
    }
}

/* Make out[out_pos..out_len) non-empty; false at the end of the bytes, and
 * after damage until the record layer has reported it (bad() clears it):
 * the bytes after the damage belong to the next record, not this one. */
static bool src_fill(struct warc_reader *r)
{
    if (r->out_pos < r->out_len)
        return true;
    if (r->damaged)
        return false;
    r->out_pos = r->out_len = 0;
    if (r->eof)
        return false;
    if (!r->gz) {
        size_t k = file_read(r, r->out, sizeof r->out);
        if (k == 0) {
            r->eof = true;
            return false;
        }
        r->out_len = k;
        return true;
    }
    while (r->out_len == 0) {
        if (r->zs.avail_in == 0 && !src_fill_in(r)) {
            if (r->in_member) {
                r->truncated = true;
                r->damaged = true;
                r->damage_at = r->fpos;
            }
            r->eof = true;
            return false;
        }
        r->zs.next_out = r->out;
        r->zs.avail_out = sizeof r->out;
        r->in_member = true;
        int zrc = inflate(&r->zs, Z_NO_FLUSH);
        r->out_len = sizeof r->out - r->zs.avail_out;
        if (zrc == Z_STREAM_END) {
            r->in_member = false;
            inflateReset(&r->zs);
        } else if (zrc == Z_DATA_ERROR || zrc == Z_STREAM_ERROR || zrc == Z_NEED_DICT) {
            r->damaged = true;
            r->damage_at = r->fpos - r->zs.avail_in;
            r->in_member = false;
            r->out_len = 0; /* what this member gave is cut off anyway */
            src_gz_resync(r);
            return false;
        } else if (zrc == Z_MEM_ERROR) {
            r->io_error = ENOMEM;
            r->eof = true;
            return false;
        }
        /* Z_OK / Z_BUF_ERROR: more input needed, loop */
    }
    return true;
}

static int src_getc(struct warc_reader *r)
{
    if (!src_fill(r))
        return -1;
    r->upos++;
    return r->out[r->out_pos++];
}

static int src_peek(struct warc_reader *r)
{
    if (!src_fill(r))
        return -1;
    return r->out[r->out_pos];
}

/* One line into r->line without its "\r\n" or "\n"; false at the end.
 * A line longer than LINE_MAX_BYTES is read to its end and kept cut. */
static bool src_line(struct warc_reader *r)
{
    buf_reset(&r->line);
    bool any = false;
    while (src_fill(r)) {
        any = true;
        unsigned char *start = r->out + r->out_pos;
        size_t avail = r->out_len - r->out_pos;
        unsigned char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        if (r->line.len < LINE_MAX_BYTES)
            buf_append(&r->line, start,
                       take < LINE_MAX_BYTES - r->line.len ? take : LINE_MAX_BYTES - r->line.len);
        r->out_pos += take + (nl ? 1 : 0);
        r->upos += take + (nl ? 1 : 0);
        if (nl)
            break;
    }
    if (r->line.len > 0 && r->line.data[r->line.len - 1] == '\r')
        r->line.data[--r->line.len] = '\0';
    return any;
}

/* n bytes into b (keep) or dropped; returns the bytes read (< n at the end). */
static size_t src_read(struct warc_reader *r, struct buf *b, uint64_t n)
{
    uint64_t done = 0;
    while (done < n && src_fill(r)) {
        size_t avail = r->out_len - r->out_pos;
        size_t take = (uint64_t)avail < n - done ? avail : (size_t)(n - done);
        if (b)
            buf_append(b, r->out + r->out_pos, take);
        r->out_pos += take;
        r->upos += take;
        done += take;
    }
    return (size_t)done;
}

/* ---- records ------------------------------------------------------------------ */

/* The WARC version a line opens, or -1 when it is no version line we
 * read; *other says it is one of WARC's all the same ("WARC/0.10"). */
static int warc_line_version(const char *s, size_t n, bool *other)
{
    static const char *const lines[] = {
        [WARC_FORMAT_0_17] = "WARC/0.17",
        [WARC_FORMAT_0_18] = "WARC/0.18",
        [WARC_FORMAT_1_0] = "WARC/1.0",
        [WARC_FORMAT_1_1] = "WARC/1.1",
    };
    *other = false;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    for (int v = WARC_FORMAT_0_17; v <= WARC_FORMAT_1_1; v++)
        if (n == strlen(lines[v]) && memcmp(s, lines[v], n) == 0)
            return v;
    *other = n >= 7 && memcmp(s, "WARC/", 5) == 0 && s[5] >= '0' && s[5] <= '9';
    return -1;
}

/* Whether a line opens a record: one of WARC (even a version we do not
 * read: it gets its own report) or a well-formed ARC line. */
static bool opens_record(const char *s, size_t n)
{
    bool other;
    if (warc_line_version(s, n, &other) >= 0 || other)
        return true;
    struct arc_line al;
    const char *why;
    return arc_line_parse(&al, s, n, &why) == 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Lines up to the next one that opens a record (kept for warc_next). */
static void resync(struct warc_reader *r)
{
    while (true) {
        uint64_t at = r->upos;
        if (!src_line(r))
            return;
        if (opens_record(r->line.data, r->line.len)) {
            r->have_line = true;
            r->line_at = at;
            r->damaged = false;
            return;
        }
    }
}

static int bad(struct warc_reader *r, struct err *err, const char *why)
{
    if (r->damaged) {
        err_set(err, ERR_PARSE, "%s at file offset %llu",
                r->truncated ? "file cut short" : "corrupt gzip data",
                (unsigned long long)r->damage_at);
    } else {
        err_set(err, ERR_PARSE, "%s", why);
    }
    r->damaged = false;
    resync(r);
    return WARC_BAD;
}

/* Offsets of header values in r->head, resolved to pointers at the end
 * (the buffer may move while it grows). */
struct fields {
    size_t type, uri, date, ctype; /* SIZE_MAX: absent */
    uint64_t length;
    bool has_length;
};

static size_t keep(struct warc_reader *r, const char *s, size_t n)
{
    size_t at = r->head.len;
    buf_append(&r->head, s, n);
    buf_putc(&r->head, '\0');
    return at;
}

static const char *field(const struct warc_reader *r, size_t at)
{
    return at == SIZE_MAX || buf_error(&r->head) ? NULL : r->head.data + at;
}

/* The charset parameter of a Content-Type value, cut out in place (its
 * end gets a NUL: the type's parameters after it are lost, which is fine),
 * or NULL. */
static char *ctype_charset(char *ctype)
{
    char *cs = NULL;
    for (char *p = ctype; *p && !cs; p++)
        if (strncasecmp(p, "charset=", 8) == 0)
            cs = p;
    if (!cs)
        return NULL;
    cs += 8;
    if (*cs == '"' || *cs == '\'')
        cs++;
    char *e = cs;
    while (*e && *e != ';' && *e != '"' && *e != '\'' && *e != ' ')
        e++;
    *e = '\0';
    return *cs ? cs : NULL;
}

/* Read the record's block of `length` bytes into r->block (or past it
 * when larger than WARC_MAX_BLOCK): 0, WARC_BAD with err, or a negative
 * code. */
static int read_block(struct warc_reader *r, uint64_t length, struct err *err)
{
    bool kept = length <= WARC_MAX_BLOCK;
    size_t got = src_read(r, kept ? &r->block : NULL, length);
    if (r->damaged)
        return bad(r, err, "damaged");
    if (got < length) {
        if (r->io_error)
            return err_set(err, ERR_IO, "read error: %s", strerror(r->io_error));
        err_set(err, ERR_PARSE, "file cut short inside the record (%zu of %llu bytes)", got,
                (unsigned long long)length);
        return WARC_BAD;
    }
    if (!kept) {
        err_set(err, ERR_TOO_LARGE, "record of %llu bytes skipped (more than %zu)",
                (unsigned long long)length, WARC_MAX_BLOCK);
        return WARC_BAD;
    }
    if (buf_error(&r->block))
        return err_set(err, ERR_NOMEM, "out of memory");
    return 0;
}

/* The block and, by the record's type, its payload: an HTTP response's
 * decoded, a resource's as it is under the record's Content-Type (which
 * lives in r->head: ours to cut). WARC_RECORD or ERR_NOMEM (a response
 * that is no HTTP after all is a record without payload). */
static int record_payload(struct warc_reader *r, struct warc_record *rec, char *ctype, bool http_ok,
                          struct err *err)
{
    rec->block = r->block.data ? r->block.data : "";
    rec->block_len = r->block.len;
    bool response = rec->type && strcasecmp(rec->type, "response") == 0;
    bool resource = rec->type && strcasecmp(rec->type, "resource") == 0;
    if (response && http_ok && rec->block_len >= 5 && memcmp(rec->block, "HTTP/", 5) == 0) {
        if (warc_http_decode(r, rec->block, rec->block_len, rec) == ERR_NOMEM)
            return err_set(err, ERR_NOMEM, "out of memory");
    }
    if (resource) {
        rec->content_type = ctype;
        rec->charset = ctype ? ctype_charset(ctype) : NULL;
        rec->body = rec->block;
        rec->body_len = rec->block_len;
        if (rec->body_len > WARC_MAX_BODY) {
            rec->body_len = WARC_MAX_BODY;
            rec->body_truncated = true;
        }
    }
    return WARC_RECORD;
}

/* A WARC record whose version line was read: header lines, block. */
static int warc_record_read(struct warc_reader *r, struct warc_record *rec, struct err *err)
{
    struct fields fl = {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX, 0, false};
    size_t head_bytes = 0;
    for (;;) {
        if (!src_line(r))
            return bad(r, err, "file ends inside a record's header");
        if (r->damaged)
            return bad(r, err, "damaged");
        if (r->line.len == 0)
            break;
        head_bytes += r->line.len + 2;
        if (head_bytes > WARC_MAX_HEADER || r->line.len >= LINE_MAX_BYTES)
            return bad(r, err, "record header too long");
        const char *colon = memchr(r->line.data, ':', r->line.len);
        if (!colon)
            continue; /* a continuation or a stray line: nothing we read */
        const char *name = r->line.data;
        size_t nn = (size_t)(colon - name);
        const char *v = colon + 1;
        size_t vn = r->line.len - nn - 1;
        trim(&v, &vn);
        if (nn == 9 && strncasecmp(name, "WARC-Type", nn) == 0) {
            fl.type = keep(r, v, vn);
        } else if (nn == 15 && strncasecmp(name, "WARC-Target-URI", nn) == 0) {
            if (vn >= 2 && v[0] == '<' && v[vn - 1] == '>')
                v++, vn -= 2;
            fl.uri = keep(r, v, vn);
        } else if (nn == 9 && strncasecmp(name, "WARC-Date", nn) == 0) {
            fl.date = keep(r, v, vn);
        } else if (nn == 12 && strncasecmp(name, "Content-Type", nn) == 0) {
            fl.ctype = keep(r, v, vn);
        } else if (nn == 14 && strncasecmp(name, "Content-Length", nn) == 0) {
            uint64_t len = 0;
            size_t i = 0;
            for (; i < vn && i < CONTENT_LENGTH_DIGITS && v[i] >= '0' && v[i] <= '9'; i++)
                len = len * 10 + (uint64_t)(v[i] - '0');
            if (i == 0 || i != vn)
                return bad(r, err, "Content-Length is not a number");
            fl.length = len;
            fl.has_length = true;
        }
    }
    if (!fl.has_length)
        return bad(r, err, "record without Content-Length");
    if (buf_error(&r->head))
        return err_set(err, ERR_NOMEM, "out of memory");
    int rc = read_block(r, fl.length, err);
    if (rc != 0)
        return rc;
    rec->type = field(r, fl.type);
    rec->target_uri = field(r, fl.uri);
    rec->date = field(r, fl.date);
    if (rec->date && timefmt_parse_iso8601(rec->date, strlen(rec->date), &rec->date_s, NULL) < 0)
        rec->date_s = 0;
    char *ctype = (char *)field(r, fl.ctype); /* r->head is ours */
    bool http_ok = !ctype || strncasecmp(ctype, "application/http", 16) == 0;
    return record_payload(r, rec, ctype, http_ok, err);
}

/* An ARC record whose URL-record line is in r->line: the document. The
 * version block reads as "warcinfo", a document that starts as an HTTP
 * response as "response", any other (dns:, ftp:, a v1 document stored
 * without its head) as "resource" of the line's content type. */
static int arc_record_read(struct warc_reader *r, struct warc_record *rec, struct err *err)
{
    struct arc_line al;
    const char *why = NULL;
    if (arc_line_parse(&al, r->line.data, r->line.len, &why) < 0)
        return bad(r, err, why);
    size_t uri = keep(r, al.url, al.url_len);
    size_t ctype = keep(r, al.ctype, al.ctype_len);
    if (buf_error(&r->head))
        return err_set(err, ERR_NOMEM, "out of memory");
    int rc = read_block(r, al.length, err);
    if (rc != 0)
        return rc;
    rec->format = al.version == 1 ? WARC_FORMAT_ARC_1 : WARC_FORMAT_ARC_2;
    rec->target_uri = field(r, uri);
    rec->date_s = al.date_s;
    bool http = r->block.len >= 5 && memcmp(r->block.data, "HTTP/", 5) == 0;
    if (al.url_len >= 11 && strncasecmp(al.url, "filedesc://", 11) == 0)
        rec->type = "warcinfo";
    else
        rec->type = http ? "response" : "resource";
    return record_payload(r, rec, (char *)field(r, ctype), true, err);
}

/* Why a line that should open a record does not, into msg. */
static const char *not_a_record(const struct warc_reader *r, char *msg, size_t cap)
{
    bool other;
    const char *why = NULL;
    struct arc_line al;
    if (warc_line_version(r->line.data, r->line.len, &other) < 0 && other) {
        size_t n = r->line.len < 16 ? r->line.len : 16;
        for (size_t i = 0; i < n; i++)
            if (r->line.data[i] == ' ' || (unsigned char)r->line.data[i] < 0x20)
                n = i;
        snprintf(msg, cap, "%.*s records are not read (WARC/0.17, 0.18, 1.0 and 1.1 are)", (int)n,
                 r->line.data);
        return msg;
    }
    if (arc_line_looks(r->line.data, r->line.len) &&
        arc_line_parse(&al, r->line.data, r->line.len, &why) < 0)
        return why;
    return "neither a WARC version line (WARC/0.17 to 1.1) nor an ARC record line where a "
           "record should start";
}

int warc_next(struct warc_reader *r, struct warc_record *rec, struct err *err)
{
    memset(rec, 0, sizeof *rec);
    buf_reset(&r->head);
    buf_reset(&r->block);
    buf_reset(&r->body);
    /* the first line, past blank lines between records */
    if (r->have_line) {
        r->have_line = false;
        rec->offset = r->line_at;
    } else {
        for (;;) {
            int c = src_peek(r);
            if (c != '\r' && c != '\n')
                break;
            src_getc(r);
        }
        rec->offset = r->upos;
        if (!src_line(r)) {
            if (r->io_error)
                return err_set(err, r->io_error == ENOMEM ? ERR_NOMEM : ERR_IO, "read error: %s",
                               strerror(r->io_error));
            if (r->damaged) {
                rec->offset = r->upos;
                return bad(r, err, "damaged");
            }
            return WARC_END;
        }
        if (r->damaged)
            return bad(r, err, "damaged");
    }
    bool other;
    int version = warc_line_version(r->line.data, r->line.len, &other);
    if (version >= 0) {
        rec->format = (enum warc_format)version;
        return warc_record_read(r, rec, err);
    }
    if (!other && opens_record(r->line.data, r->line.len))
        return arc_record_read(r, rec, err);
    char msg[128];
    return bad(r, err, not_a_record(r, msg, sizeof msg));
}

/* ---- HTTP ---------------------------------------------------------------------- */

#define HTTP_MAX_LINES 256

/* The header lines of an HTTP head, split in place: "Name: value" each,
 * NUL-terminated, trailing CR dropped. */
struct http_lines {
    char *line[HTTP_MAX_LINES];
    size_t n;
};

static void http_split(char *head, struct http_lines *hl)
{
    hl->n = 0;
    for (char *p = head; p && *p && hl->n < HTTP_MAX_LINES;) {
        char *next = strchr(p, '\n');
        if (next)
            *next = '\0';
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        hl->line[hl->n++] = p;
        p = next ? next + 1 : NULL;
    }
}

/* The value of header `name`, or NULL. */
static char *http_header(const struct http_lines *hl, const char *name)
{
    size_t nn = strlen(name);
    for (size_t i = 0; i < hl->n; i++) {
        char *line = hl->line[i];
        if (strncasecmp(line, name, nn) == 0 && line[nn] == ':') {
            char *v = line + nn + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

static bool has_token(const char *v, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = v; p && *p; p++)
        if (strncasecmp(p, tok, n) == 0)
            return true;
    return false;
}

/* Undo chunked transfer-encoding of s[0..n) into out; false when it is not
 * chunked after all. */
static bool dechunk(struct buf *out, const char *s, size_t n)
{
    size_t i = 0;
    bool any = false;
    while (i < n) {
        size_t size = 0, digits = 0;
        while (i < n && digits < 16) {
            char c = s[i];
            int v = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (v < 0)
                break;
            size = size * 16 + (size_t)v;
            i++, digits++;
        }
        if (digits == 0)
            return any && size == 0;
        while (i < n && s[i] != '\n') /* chunk extensions */
            i++;
        if (i >= n)
            return false;
        i++;
        if (size == 0)
            return true;
        if (size > n - i)
            size = n - i; /* cut short: keep what there is */
        if (out->len + size > WARC_MAX_BODY)
            size = WARC_MAX_BODY - out->len;
        buf_append(out, s + i, size);
        any = true;
        i += size;
        if (out->len >= WARC_MAX_BODY)
            return true;
        if (i < n && s[i] == '\r')
            i++;
        if (i < n && s[i] == '\n')
            i++;
    }
    return any;
}

/* Inflate gzip or zlib (window_bits 47) or raw deflate (-15) into out,
 * bounded; false when nothing decodes. */
static bool inflate_into(struct buf *out, const char *s, size_t n, int window_bits, bool *cut)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, window_bits) != Z_OK)
        return false;
    zs.next_in = (Bytef *)s;
    zs.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
    char chunk[65536];
    int zrc = Z_OK;
    while (zrc == Z_OK) {
        zs.next_out = (Bytef *)chunk;
        zs.avail_out = sizeof chunk;
        zrc = inflate(&zs, Z_NO_FLUSH);
        size_t got = sizeof chunk - zs.avail_out;
        if (out->len + got > WARC_MAX_BODY) {
            got = WARC_MAX_BODY - out->len;
            *cut = true;
            zrc = Z_STREAM_END;
        }
        buf_append(out, chunk, got);
        if (zrc == Z_BUF_ERROR && zs.avail_in == 0)
            break; /* cut short: keep what decoded */
    }
    inflateEnd(&zs);
    return out->len > 0 && (zrc == Z_STREAM_END || zrc == Z_BUF_ERROR || zrc == Z_OK);
}

int warc_http_decode(struct warc_reader *r, const char *block, size_t n, struct warc_record *rec)
{
    /* status line */
    if (n < 12 || memcmp(block, "HTTP/", 5) != 0)
        return ERR_PARSE;
    const char *sp = memchr(block, ' ', n < 16 ? n : 16);
    if (!sp || (size_t)(sp - block) + 4 > n)
        return ERR_PARSE;
    int status = 0;
    for (int k = 1; k <= 3; k++) {
        char c = sp[k];
        if (c < '0' || c > '9')
            return ERR_PARSE;
        status = status * 10 + (c - '0');
    }
    /* the head ends at the first empty line */
    size_t end = 0, body_at = 0;
    for (size_t i = 0; i + 1 < n && i < WARC_MAX_HEADER; i++) {
        if (block[i] == '\n' && block[i + 1] == '\n') {
            end = i + 1, body_at = i + 2;
            break;
        }
        if (block[i] == '\n' && block[i + 1] == '\r' && i + 2 < n && block[i + 2] == '\n') {
            end = i + 1, body_at = i + 3;
            break;
        }
    }
    if (body_at == 0) {
        if (n > WARC_MAX_HEADER)
            return ERR_PARSE;
        end = body_at = n; /* no payload */
    }
    memcpy(r->http_head, block, end);
    r->http_head[end] = '\0';
    for (size_t i = 0; i < end; i++)
        if (r->http_head[i] == '\0')
            r->http_head[i] = ' ';
    /* the status line is no header: skip it */
    char *headers = strchr(r->http_head, '\n');
    headers = headers ? headers + 1 : r->http_head + end;
    struct http_lines hl;
    http_split(headers, &hl);
    rec->http_status = status;
    char *ctype = http_header(&hl, "Content-Type");
    rec->content_type = ctype;
    const char *te = http_header(&hl, "Transfer-Encoding");
    const char *ce = http_header(&hl, "Content-Encoding");
    rec->charset = ctype ? ctype_charset(ctype) : NULL;
    const char *payload = block + body_at;
    size_t plen = n - body_at;
    rec->body_truncated = false;
    if (te && has_token(te, "chunked")) {
        buf_reset(&r->tmp);
        if (dechunk(&r->tmp, payload, plen) && !buf_error(&r->tmp)) {
            payload = r->tmp.data ? r->tmp.data : "";
            plen = r->tmp.len;
        }
    }
    if (ce && (has_token(ce, "gzip") || has_token(ce, "deflate"))) {
        buf_reset(&r->body);
        bool cut = false;
        bool ok = inflate_into(&r->body, payload, plen, 15 + 32, &cut);
        if (!ok && has_token(ce, "deflate")) {
            buf_reset(&r->body);
            ok = inflate_into(&r->body, payload, plen, -15, &cut);
        }
        if (buf_error(&r->body) == ERR_NOMEM)
            return ERR_NOMEM;
        if (ok) {
            payload = r->body.data;
            plen = r->body.len;
            rec->body_truncated = cut;
        }
    }
    if (plen > WARC_MAX_BODY) {
        plen = WARC_MAX_BODY;
        rec->body_truncated = true;
    }
    rec->body = payload;
    rec->body_len = plen;
    return 0;
}

/* ---- open and close -------------------------------------------------------------- */

int warc_open_stream(struct warc_reader **out, FILE *f, struct err *err)
{
    struct warc_reader *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(err, ERR_NOMEM, "out of memory");
    r->f = f;
    buf_init(&r->line, 0);
    buf_init(&r->head, 0);
    buf_init(&r->block, WARC_MAX_BLOCK + 1);
    buf_init(&r->body, WARC_MAX_BODY + 1);
    buf_init(&r->tmp, WARC_MAX_BODY + 1);
    /* gzip or plain: the first two bytes, which then start the inflater's
     * input or the plain window */
    unsigned char first[2];
    size_t k = fread(first, 1, 2, f);
    r->fpos = k;
    r->gz = k == 2 && first[0] == 0x1f && first[1] == 0x8b;
    if (r->gz) {
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK) {
            warc_close(r);
            return err_set(err, ERR_NOMEM, "out of memory");
        }
        r->zs_ready = true;
        memcpy(r->in, first, 2);
        r->zs.next_in = r->in;
        r->zs.avail_in = 2;
    } else {
        memcpy(r->out, first, k);
        r->out_len = k;
    }
    *out = r;
    return 0;
}

int warc_open(struct warc_reader **out, const char *path, struct err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return err_set(err, ERR_IO, "cannot open: %s", strerror(errno));
    int rc = warc_open_stream(out, f, err);
    if (rc < 0) {
        if (f != stdin)
            fclose(f);
        return rc;
    }
    (*out)->own = f != stdin;
    return 0;
}

const char *warc_format_name(enum warc_format f)
{
    static const char *const names[WARC_FORMAT_COUNT] = {
        [WARC_FORMAT_0_17] = "WARC/0.17", [WARC_FORMAT_0_18] = "WARC/0.18",
        [WARC_FORMAT_1_0] = "WARC/1.0",   [WARC_FORMAT_1_1] = "WARC/1.1",
        [WARC_FORMAT_ARC_1] = "ARC v1",   [WARC_FORMAT_ARC_2] = "ARC v2",
    };
    return (unsigned)f < WARC_FORMAT_COUNT ? names[f] : "unknown";
}

void warc_close(struct warc_reader *r)
{
    if (!r)
        return;
    if (r->zs_ready)
        inflateEnd(&r->zs);
    if (r->own)
        fclose(r->f);
    buf_release(&r->line);
    buf_release(&r->head);
    buf_release(&r->block);
    buf_release(&r->body);
    buf_release(&r->tmp);
    free(r);
}
