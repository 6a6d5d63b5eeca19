/* The WARC reader (ingest/imports/imports.h): records and their fields from plain and
 * gzip files (one member per record), HTTP payloads (chunked, gzip), and
 * what it survives: malformed records, a file cut short, a corrupt gzip
 * member, blocks larger than a window or than the bound. Every vintage:
 * WARC/0.17 and 0.18, resource records, ARC v1 and v2 (ingest/imports/imports_internal.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "ingest/imports/imports_internal.h"
#include "ingest/imports/imports.h"
#include "util/buf.h"

static const char html[] = "<html><title>T</title><p>Body of the page.</p></html>";

/* One record: version, headers, block, blank line. */
static void add_record(struct buf *b, const char *version, const char *type, const char *uri,
                       const char *block, size_t n)
{
    buf_printf(b, "%s\r\nWARC-Type: %s\r\nWARC-Date: 2024-03-05T06:07:08Z\r\n", version, type);
    if (uri)
        buf_printf(b, "WARC-Target-URI: %s\r\n", uri);
    buf_printf(b, "Content-Type: application/http; msgtype=%s\r\nContent-Length: %zu\r\n\r\n", type,
               n);
    buf_append(b, block, n);
    buf_puts(b, "\r\n\r\n");
}

static void add_response(struct buf *b, const char *uri, const char *head, const char *body,
                         size_t n)
{
    struct buf blk;
    buf_init(&blk, 0);
    buf_puts(&blk, head);
    buf_append(&blk, body, n);
    add_record(b, "WARC/1.1", "response", uri, blk.data, blk.len);
    buf_release(&blk);
}

/* s[0..n) as one gzip member appended to out. */
static void gz_member(struct buf *out, const char *s, size_t n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, n) + 64;
    char *tmp = malloc(cap);
    zs.next_in = (Bytef *)s;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)tmp;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    buf_append(out, tmp, cap - zs.avail_out);
    deflateEnd(&zs);
    free(tmp);
}

struct got {
    int results[64];
    size_t n;
    char bodies[8][256];
    char uris[8][128];
    int status[8];
    size_t n_rec;
    char errs[8][ERR_MSG_MAX];
    uint64_t bad_offsets[8];
    size_t n_bad;
};

static void read_all(const char *data, size_t n, struct got *g)
{
    memset(g, 0, sizeof *g);
    FILE *f = fmemopen((void *)data, n, "rb");
    assert_non_null(f);
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    int rc;
    while ((rc = warc_next(r, &rec, &e)) != WARC_END) {
        assert_true(rc == WARC_RECORD || rc == WARC_BAD);
        assert_true(g->n < 64);
        g->results[g->n++] = rc;
        if (rc == WARC_BAD) {
            if (g->n_bad < 8) {
                snprintf(g->errs[g->n_bad], sizeof g->errs[0], "%.200s", e.msg);
                g->bad_offsets[g->n_bad] = rec.offset;
            }
            g->n_bad++;
            continue;
        }
        if (rec.http_status && g->n_rec < 8) {
            snprintf(g->bodies[g->n_rec], sizeof g->bodies[0], "%.*s", (int)rec.body_len, rec.body);
            snprintf(g->uris[g->n_rec], sizeof g->uris[0], "%s", rec.target_uri);
            g->status[g->n_rec] = rec.http_status;
            g->n_rec++;
        }
    }
    warc_close(r);
    fclose(f);
}

static void records_and_their_fields_are_read(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    add_record(&b, "WARC/1.0", "warcinfo", NULL, "software: x\r\n", 13);
    add_record(&b, "WARC/1.0", "request", "<https://a.example/x>", "GET / HTTP/1.1\r\n\r\n", 18);
    add_response(&b, "<https://a.example/x>",
                 "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"ISO-8859-1\"\r\n"
                 "Content-Length: 52\r\n\r\n",
                 html, sizeof html - 1);
    FILE *f = fmemopen(b.data, b.len, "rb");
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.type, "warcinfo");
    assert_int_equal(rec.offset, 0);
    assert_int_equal(rec.http_status, 0);
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.type, "request");
    assert_int_equal(rec.http_status, 0); /* a request is no response */
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.type, "response");
    assert_string_equal(rec.target_uri, "https://a.example/x"); /* WARC/1.0's <> removed */
    assert_string_equal(rec.date, "2024-03-05T06:07:08Z");
    assert_int_equal(rec.date_s, 1709618828);
    assert_int_equal(rec.http_status, 200);
    assert_string_equal(rec.charset, "ISO-8859-1");
    assert_int_equal(rec.body_len, sizeof html - 1);
    assert_memory_equal(rec.body, html, sizeof html - 1);
    assert_true((size_t)(strstr(b.data, "WARC/1.1") - b.data) == rec.offset);
    assert_int_equal(warc_next(r, &rec, &e), WARC_END);
    assert_int_equal(warc_next(r, &rec, &e), WARC_END);
    warc_close(r);
    fclose(f);
    buf_release(&b);
}

static void gzip_members_read_like_the_plain_file(void **state)
{
    (void)state;
    struct buf plain, gz, one;
    buf_init(&plain, 0);
    buf_init(&gz, 0);
    for (int i = 0; i < 5; i++) {
        char uri[64];
        snprintf(uri, sizeof uri, "https://a.example/%d", i);
        buf_init(&one, 0);
        add_response(&one, uri, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", html,
                     sizeof html - 1);
        buf_append(&plain, one.data, one.len);
        gz_member(&gz, one.data, one.len);
        buf_release(&one);
    }
    struct got a, z;
    read_all(plain.data, plain.len, &a);
    read_all(gz.data, gz.len, &z);
    assert_int_equal(a.n_rec, 5);
    assert_int_equal(z.n_rec, 5);
    assert_int_equal(a.n_bad + z.n_bad, 0);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(a.uris[i], z.uris[i]);
        assert_string_equal(a.bodies[i], z.bodies[i]);
    }
    buf_release(&plain);
    buf_release(&gz);
}

static void chunked_and_gzip_payloads_are_decoded(void **state)
{
    (void)state;
    struct buf b, payload, chunked;
    buf_init(&b, 0);
    buf_init(&payload, 0);
    buf_init(&chunked, 0);
    gz_member(&payload, html, sizeof html - 1);
    /* chunks of 10 bytes, with an extension on the first */
    for (size_t i = 0; i < payload.len; i += 10) {
        size_t k = payload.len - i < 10 ? payload.len - i : 10;
        buf_printf(&chunked, i == 0 ? "%zx;ext=1\r\n" : "%zx\r\n", k);
        buf_append(&chunked, payload.data + i, k);
        buf_puts(&chunked, "\r\n");
    }
    buf_puts(&chunked, "0\r\n\r\n");
    add_response(&b, "https://a.example/z",
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n",
                 chunked.data, chunked.len);
    struct got g;
    read_all(b.data, b.len, &g);
    assert_int_equal(g.n_rec, 1);
    assert_string_equal(g.bodies[0], html);
    buf_release(&b);
    buf_release(&payload);
    buf_release(&chunked);
}

static void malformed_records_are_reported_and_skipped(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    add_response(&b, "https://a.example/1", "HTTP/1.1 200 OK\r\n\r\n", "one", 3);
    size_t bad1 = b.len;
    buf_puts(&b, "WARC/1.1\r\nWARC-Type: response\r\n\r\nno length here\r\n\r\n");
    add_response(&b, "https://a.example/2", "HTTP/1.1 404 Not Found\r\n\r\n", "two", 3);
    size_t bad2 = b.len;
    buf_puts(&b, "garbage between records\r\nmore garbage\r\n");
    buf_puts(&b, "WARC/1.1\r\nContent-Length: 12x\r\n\r\n");
    add_response(&b, "https://a.example/3", "HTTP/1.1 200 OK\r\n\r\n", "three", 5);
    struct got g;
    read_all(b.data, b.len, &g);
    assert_int_equal(g.n_rec, 3);
    assert_string_equal(g.bodies[0], "one");
    assert_int_equal(g.status[1], 404);
    assert_string_equal(g.bodies[2], "three");
    assert_int_equal(g.n_bad, 3);
    assert_int_equal(g.bad_offsets[0], bad1);
    assert_non_null(strstr(g.errs[0], "Content-Length"));
    assert_int_equal(g.bad_offsets[1], bad2);
    assert_non_null(strstr(g.errs[1], "neither a WARC version line"));
    assert_non_null(strstr(g.errs[2], "not a number"));
    buf_release(&b);
}

static void a_file_cut_anywhere_ends_with_a_report(void **state)
{
    (void)state;
    struct buf plain, gz;
    buf_init(&plain, 0);
    buf_init(&gz, 0);
    add_response(&plain, "https://a.example/1", "HTTP/1.1 200 OK\r\n\r\n", html, sizeof html - 1);
    size_t first = plain.len;
    add_response(&plain, "https://a.example/2", "HTTP/1.1 200 OK\r\n\r\n", html, sizeof html - 1);
    gz_member(&gz, plain.data, first);
    size_t gz_first = gz.len;
    gz_member(&gz, plain.data + first, plain.len - first);
    /* every cut of the second record: the first one is read, the second
     * never, and the reader ends */
    for (size_t cut = first + 1; cut < plain.len - 4; cut++) {
        struct got g;
        read_all(plain.data, cut, &g);
        assert_int_equal(g.n_rec, 1);
        assert_true(g.n_bad <= 1);
    }
    /* gzip: a member cut in the first half of its data loses its record;
     * one cut near its end (the last deflate bytes hold the record's
     * closing blank line, then the CRC and size) may have given all of the
     * block, but its end is reported all the same */
    for (size_t cut = gz_first + 1; cut < gz.len; cut++) {
        struct got g;
        read_all(gz.data, cut, &g);
        if (cut < gz_first + (gz.len - gz_first) / 2)
            assert_int_equal(g.n_rec, 1);
        else
            assert_true(g.n_rec == 1 || g.n_rec == 2);
        assert_int_equal(g.n_bad, 1);
        assert_non_null(strstr(g.errs[0], "cut short"));
    }
    buf_release(&plain);
    buf_release(&gz);
}

static void a_corrupt_gzip_member_loses_only_its_record(void **state)
{
    (void)state;
    struct buf gz, one;
    buf_init(&gz, 0);
    size_t damaged_at = 0;
    for (int i = 0; i < 3; i++) {
        char uri[64], body[4096];
        snprintf(uri, sizeof uri, "https://a.example/%d", i);
        for (size_t k = 0; k < sizeof body - 1; k++)
            body[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
        body[sizeof body - 1] = '\0';
        buf_init(&one, 0);
        add_response(&one, uri, "HTTP/1.1 200 OK\r\n\r\n", body, strlen(body));
        if (i == 1)
            damaged_at = gz.len;
        gz_member(&gz, one.data, one.len);
        buf_release(&one);
    }
    for (size_t k = damaged_at + 40; k < damaged_at + 80; k++)
        gz.data[k] ^= 0x5A;
    struct got g;
    read_all(gz.data, gz.len, &g);
    assert_int_equal(g.n_rec, 2);
    assert_string_equal(g.uris[0], "https://a.example/0");
    assert_string_equal(g.uris[1], "https://a.example/2");
    assert_int_equal(g.n_bad, 1);
    assert_non_null(strstr(g.errs[0], "corrupt gzip data"));
    buf_release(&gz);
}

static void blocks_across_windows_and_past_the_bound(void **state)
{
    (void)state;
    /* a 1 MB payload crosses the reader's windows; a block past
     * WARC_MAX_BLOCK is skipped as too large and the next one is read */
    size_t big = 1 << 20;
    char *body = malloc(WARC_MAX_BLOCK + 2);
    for (size_t k = 0; k < WARC_MAX_BLOCK + 1; k++)
        body[k] = (char)('A' + k % 23);
    FILE *f = tmpfile();
    assert_non_null(f);
    struct buf b;
    buf_init(&b, 0);
    add_response(&b, "https://a.example/big", "HTTP/1.1 200 OK\r\n\r\n", body, big);
    fwrite(b.data, 1, b.len, f);
    buf_reset(&b);
    buf_printf(&b, "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: %zu\r\n\r\n",
               WARC_MAX_BLOCK + 1);
    fwrite(b.data, 1, b.len, f);
    fwrite(body, 1, WARC_MAX_BLOCK + 1, f);
    buf_reset(&b);
    buf_puts(&b, "\r\n\r\n");
    add_response(&b, "https://a.example/after", "HTTP/1.1 200 OK\r\n\r\n", "after", 5);
    fwrite(b.data, 1, b.len, f);
    rewind(f);
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_int_equal(rec.body_len, big);
    assert_memory_equal(rec.body, body, big);
    assert_int_equal(warc_next(r, &rec, &e), WARC_BAD);
    assert_non_null(strstr(e.msg, "skipped"));
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.target_uri, "https://a.example/after");
    assert_int_equal(warc_next(r, &rec, &e), WARC_END);
    warc_close(r);
    fclose(f);
    free(body);
    buf_release(&b);
}

static void a_missing_file_is_an_error(void **state)
{
    (void)state;
    struct warc_reader *r = NULL;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open(&r, "/nonexistent/x.warc.gz", &e), ERR_IO);
    assert_non_null(strstr(e.msg, "cannot open"));
    warc_close(NULL);
}

/* ---- every vintage ---------------------------------------------------------------- */

/* The records of a file, each as "format type uri status body", one per
 * line, and the reports as "BAD@offset why". */
static void describe(const char *data, size_t n, struct buf *out)
{
    FILE *f = fmemopen((void *)data, n, "rb");
    assert_non_null(f);
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    int rc;
    while ((rc = warc_next(r, &rec, &e)) != WARC_END) {
        assert_true(rc == WARC_RECORD || rc == WARC_BAD);
        if (rc == WARC_BAD) {
            buf_printf(out, "BAD@%llu %s\n", (unsigned long long)rec.offset, e.msg);
            continue;
        }
        buf_printf(out, "%s %s %s %d %.*s\n", warc_format_name(rec.format), rec.type,
                   rec.target_uri ? rec.target_uri : "-", rec.http_status,
                   rec.body ? (int)rec.body_len : 1, rec.body ? rec.body : "-");
    }
    warc_close(r);
    fclose(f);
}

/* Each record of `plain` (records separated at the offsets in cuts[0..n))
 * as one gzip member. */
static void gz_records(struct buf *gz, const struct buf *plain, const size_t *cuts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 < n ? cuts[i + 1] : plain->len;
        gz_member(gz, plain->data + cuts[i], end - cuts[i]);
    }
}

static void warc_drafts_017_and_018_are_read(void **state)
{
    (void)state;
    struct buf b, gz, got, gotz;
    buf_init(&b, 0);
    buf_init(&gz, 0);
    buf_init(&got, 0);
    buf_init(&gotz, 0);
    size_t cuts[3];
    cuts[0] = b.len;
    add_record(&b, "WARC/0.17", "warcinfo", NULL, "software: Heritrix/1.14.4\r\n", 27);
    cuts[1] = b.len;
    struct buf blk;
    buf_init(&blk, 0);
    buf_printf(&blk, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n%s", "old page");
    add_record(&b, "WARC/0.17", "response", "<http://old.example/a>", blk.data, blk.len);
    cuts[2] = b.len;
    add_record(&b, "WARC/0.18", "response", "http://old.example/b", blk.data, blk.len);
    describe(b.data, b.len, &got);
    assert_string_equal(got.data, "WARC/0.17 warcinfo - 0 -\n"
                                  "WARC/0.17 response http://old.example/a 200 old page\n"
                                  "WARC/0.18 response http://old.example/b 200 old page\n");
    gz_records(&gz, &b, cuts, 3);
    describe(gz.data, gz.len, &gotz);
    assert_string_equal(gotz.data, got.data);
    buf_release(&blk);
    buf_release(&b);
    buf_release(&gz);
    buf_release(&got);
    buf_release(&gotz);
}

static void older_drafts_are_reported_by_their_version(void **state)
{
    (void)state;
    struct buf b, got;
    buf_init(&b, 0);
    buf_init(&got, 0);
    /* WARC/0.10 put the length, type and URI on the version line */
    buf_puts(&b, "WARC/0.10 120 response http://x.example/ 20080101000000 x text/html\r\n"
                 "stuff\r\n\r\n");
    add_record(&b, "WARC/1.0", "resource", "http://x.example/r", "text", 4);
    describe(b.data, b.len, &got);
    assert_non_null(strstr(got.data, "BAD@0 WARC/0.10 records are not read"));
    assert_non_null(strstr(got.data, "WARC/1.0 resource http://x.example/r 0 text\n"));
    buf_release(&b);
    buf_release(&got);
}

static void resource_records_hold_their_page(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    buf_printf(&b,
               "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: file:///site/a.html\r\n"
               "Content-Type: text/html; charset=windows-1252\r\nContent-Length: %zu\r\n\r\n%s"
               "\r\n\r\n",
               sizeof html - 1, html);
    FILE *f = fmemopen(b.data, b.len, "rb");
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.type, "resource");
    assert_int_equal(rec.http_status, 0);
    assert_string_equal(rec.content_type, "text/html; charset=windows-1252");
    assert_string_equal(rec.charset, "windows-1252");
    assert_int_equal(rec.body_len, sizeof html - 1);
    assert_memory_equal(rec.body, html, sizeof html - 1);
    assert_int_equal(warc_next(r, &rec, &e), WARC_END);
    warc_close(r);
    fclose(f);
    buf_release(&b);
}

/* An ARC v1 file as the Internet Archive's description has it. */
static void arc_v1_file(struct buf *b, size_t *cuts)
{
    static const char desc[] = "1 0 Alexa Internet\n"
                               "URL IP-address Archive-date Content-type Archive-length\n";
    static const char page[] = "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                               "\r\n<html><p>archived</p></html>";
    cuts[0] = b->len;
    buf_printf(b, "filedesc://IA-001102.arc 0.0.0.0 19960923142103 text/plain %zu\n%s\n",
               sizeof desc - 1, desc);
    cuts[1] = b->len;
    buf_printf(b,
               "http://www.dryswamp.edu:80/index.html 127.10.100.2 19961104142103 text/html "
               "%zu\n%s\n",
               sizeof page - 1, page);
    cuts[2] = b->len;
    buf_printf(b, "dns:www.dryswamp.edu 127.0.0.1 19961104142104 text/dns 14\n%s\n",
               "127.10.100.2\r\n");
}

static void arc_v1_is_read_plain_and_gzip(void **state)
{
    (void)state;
    struct buf b, gz, got, gotz;
    buf_init(&b, 0);
    buf_init(&gz, 0);
    buf_init(&got, 0);
    buf_init(&gotz, 0);
    size_t cuts[3];
    arc_v1_file(&b, cuts);
    describe(b.data, b.len, &got);
    assert_string_equal(got.data, "ARC v1 warcinfo filedesc://IA-001102.arc 0 -\n"
                                  "ARC v1 response http://www.dryswamp.edu:80/index.html 200 "
                                  "<html><p>archived</p></html>\n"
                                  "ARC v1 resource dns:www.dryswamp.edu 0 127.10.100.2\r\n\n");
    gz_records(&gz, &b, cuts, 3);
    describe(gz.data, gz.len, &gotz);
    assert_string_equal(gotz.data, got.data);
    /* the fields of the response */
    FILE *f = fmemopen(b.data, b.len, "rb");
    struct warc_reader *r;
    struct err e;
    err_clear(&e);
    assert_int_equal(warc_open_stream(&r, f, &e), 0);
    struct warc_record rec;
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_int_equal(rec.date_s, 843488463); /* 1996-09-23T14:21:03Z */
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_int_equal(rec.offset, cuts[1]);
    assert_int_equal(rec.date_s, 847117263); /* 1996-11-04T14:21:03Z */
    assert_string_equal(rec.charset, "utf-8");
    assert_int_equal(warc_next(r, &rec, &e), WARC_RECORD);
    assert_string_equal(rec.content_type, "text/dns");
    assert_int_equal(warc_next(r, &rec, &e), WARC_END);
    warc_close(r);
    fclose(f);
    buf_release(&b);
    buf_release(&gz);
    buf_release(&got);
    buf_release(&gotz);
}

static void arc_v2_lines_are_read(void **state)
{
    (void)state;
    struct buf b, got;
    buf_init(&b, 0);
    buf_init(&got, 0);
    static const char page[] = "HTTP/1.0 200 OK\r\n\r\nv2 page";
    buf_printf(&b,
               "http://v2.example/ 192.0.2.1 20010203040506 text/html 200 "
               "0123456789abcdef - 1024 IA-000001.arc %zu\n%s\n",
               sizeof page - 1, page);
    describe(b.data, b.len, &got);
    assert_string_equal(got.data, "ARC v2 response http://v2.example/ 200 v2 page\n");
    buf_release(&b);
    buf_release(&got);
}

static void arc_lines_are_checked_field_by_field(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        const char *want; /* the URL of a good line, or (after "!") why it is not */
        int version;
    } cases[] = {
        {"http://a.example/ 192.0.2.1 20240305060708 text/html 12", "http://a.example/", 1},
        {"http://a.example/ - 20240305060708 no-type 0", "http://a.example/", 1},
        {"http://a.example/ 192.0.2.1 20240305060708 text/html 200 0123abcd - 1024 IA-1.arc 12",
         "http://a.example/", 2},
        /* unescaped spaces in the URL, as in old files: read from the right */
        {"http://a.example/a b.html 192.0.2.1 20240305060708 text/html 12",
         "http://a.example/a b.html", 1},
        {"http://a.example/a b c d e 192.0.2.1 20240305060708 text/html 12",
         "http://a.example/a b c d e", 1},
        {"http://a.example/ 192.0.2.1 20240305060708 text/html", "!5 space-separated", 0},
        {"", "!5 space-separated", 0},
        {"http://a.example/  192.0.2.1 20240305060708 text/html 12", "!URL", 0},
        {"a.example/x 192.0.2.1 20240305060708 text/html 12", "!no scheme", 0},
        {"http://a.example/ 192.0.2.x 20240305060708 text/html 12", "!IP-address", 0},
        {"http://a.example/ 192.0.2.1 2024030506070 text/html 12", "!Archive-date", 0},
        {"http://a.example/ 192.0.2.1 20240230060708 text/html 12", "!Archive-date", 0},
        {"http://a.example/ 192.0.2.1 20240305250708 text/html 12", "!Archive-date", 0},
        {"http://a.example/ 192.0.2.1 2024-03-05 text/html 200 0123abcd - 1024 IA-1.arc 12",
         "!Archive-date", 0},
        {"http://a.example/ 192.0.2.1 20240305060708 text/html -12", "!Archive-length", 0},
        {"http://a.example/ 192.0.2.1 20240305060708 text/html 1234567890123456", "!Archive-length",
         0},
        {"http://a.example/ 192.0.2.1 20240305060708 text/html 12x", "!Archive-length", 0},
        {"http://a.example/ 192.0.2.1 20240305060708 text/\x01html 12", "!Content-type", 0},
        {"http://a.example/\x01 192.0.2.1 20240305060708 text/html 12", "!URL", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct arc_line al;
        const char *why = NULL;
        int rc = arc_line_parse(&al, cases[i].line, strlen(cases[i].line), &why);
        if (cases[i].want[0] != '!') {
            if (rc != 0)
                fail_msg("%s: %s", cases[i].line, why);
            assert_int_equal(al.version, cases[i].version);
            assert_int_equal(al.date_s, 1709618828);
            assert_int_equal(al.length, 12 * (cases[i].line[18] != '-'));
            assert_int_equal(al.url_len, strlen(cases[i].want));
            assert_memory_equal(al.url, cases[i].want, al.url_len);
        } else {
            assert_int_equal(rc, ERR_PARSE);
            assert_non_null(why);
            if (!strstr(why, cases[i].want + 1))
                fail_msg("%s: %s", cases[i].line, why);
        }
    }
}

static void bad_arc_records_are_reported_and_skipped(void **state)
{
    (void)state;
    struct buf b, got;
    buf_init(&b, 0);
    buf_init(&got, 0);
    buf_puts(&b, "http://a.example/1 192.0.2.1 20240305060708 text/html 22\n"
                 "HTTP/1.0 200 OK\r\n\r\none\n");
    size_t bad1 = b.len;
    /* a bad date, then its document: lines up to the next record skipped */
    buf_puts(&b, "http://a.example/2 192.0.2.1 2024-03-05 text/html 22\n"
                 "HTTP/1.0 200 OK\r\n\r\ntwo\n");
    buf_puts(&b, "http://a.example/3 192.0.2.1 20240305060708 text/html 24\n"
                 "HTTP/1.0 200 OK\r\n\r\nthree\n");
    size_t bad2 = b.len;
    /* a length past the end of the file */
    buf_puts(&b, "http://a.example/4 192.0.2.1 20240305060708 text/html 999999\n"
                 "HTTP/1.0 200 OK\r\n\r\nfour\n");
    describe(b.data, b.len, &got);
    char want[512];
    snprintf(want, sizeof want,
             "ARC v1 response http://a.example/1 200 one\n"
             "BAD@%zu ARC record line: Archive-date is not a YYYYMMDDhhmmss date\n"
             "ARC v1 response http://a.example/3 200 three\n"
             "BAD@%zu file cut short inside the record (24 of 999999 bytes)\n",
             bad1, bad2);
    assert_string_equal(got.data, want);
    buf_release(&b);
    buf_release(&got);
}

/* s[0..n) as one gzip member whose header carries an extra field, as
 * Heritrix's .arc.gz members do (its "LX" subfield). */
static void gz_member_extra(struct buf *out, const char *s, size_t n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    static unsigned char extra[] = {'L', 'X', 4, 0, 0, 0, 0, 0};
    gz_header head;
    memset(&head, 0, sizeof head);
    head.extra = extra;
    head.extra_len = sizeof extra;
    head.os = 3;
    assert_int_equal(deflateSetHeader(&zs, &head), Z_OK);
    size_t cap = deflateBound(&zs, n) + 64;
    char *tmp = malloc(cap);
    zs.next_in = (Bytef *)s;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)tmp;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    assert_true(((unsigned char)tmp[3] & 4) != 0); /* FEXTRA set */
    buf_append(out, tmp, cap - zs.avail_out);
    deflateEnd(&zs);
    free(tmp);
}

static void heritrix_arc_gz_members_with_an_extra_field_are_read(void **state)
{
    (void)state;
    struct buf b, gz, got, gotz;
    buf_init(&b, 0);
    buf_init(&gz, 0);
    buf_init(&got, 0);
    buf_init(&gotz, 0);
    size_t cuts[3];
    arc_v1_file(&b, cuts);
    for (size_t i = 0; i < 3; i++) {
        size_t end = i + 1 < 3 ? cuts[i + 1] : b.len;
        gz_member_extra(&gz, b.data + cuts[i], end - cuts[i]);
    }
    describe(b.data, b.len, &got);
    describe(gz.data, gz.len, &gotz);
    assert_string_equal(gotz.data, got.data);
    assert_null(strstr(gotz.data, "BAD"));
    buf_release(&b);
    buf_release(&gz);
    buf_release(&got);
    buf_release(&gotz);
}

static void a_file_may_mix_arc_and_warc(void **state)
{
    (void)state;
    struct buf b, got;
    buf_init(&b, 0);
    buf_init(&got, 0);
    size_t cuts[3];
    arc_v1_file(&b, cuts);
    add_record(&b, "WARC/1.1", "resource", "http://x.example/", "text", 4);
    describe(b.data, b.len, &got);
    assert_non_null(strstr(got.data, "ARC v1 resource dns:"));
    assert_non_null(strstr(got.data, "\nWARC/1.1 resource http://x.example/ 0 text\n"));
    assert_null(strstr(got.data, "BAD"));
    buf_release(&b);
    buf_release(&got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_and_their_fields_are_read),
        cmocka_unit_test(gzip_members_read_like_the_plain_file),
        cmocka_unit_test(chunked_and_gzip_payloads_are_decoded),
        cmocka_unit_test(malformed_records_are_reported_and_skipped),
        cmocka_unit_test(a_file_cut_anywhere_ends_with_a_report),
        cmocka_unit_test(a_corrupt_gzip_member_loses_only_its_record),
        cmocka_unit_test(blocks_across_windows_and_past_the_bound),
        cmocka_unit_test(a_missing_file_is_an_error),
        cmocka_unit_test(warc_drafts_017_and_018_are_read),
        cmocka_unit_test(older_drafts_are_reported_by_their_version),
        cmocka_unit_test(resource_records_hold_their_page),
        cmocka_unit_test(arc_v1_is_read_plain_and_gzip),
        cmocka_unit_test(arc_v2_lines_are_read),
        cmocka_unit_test(arc_lines_are_checked_field_by_field),
        cmocka_unit_test(bad_arc_records_are_reported_and_skipped),
        cmocka_unit_test(heritrix_arc_gz_members_with_an_extra_field_are_read),
        cmocka_unit_test(a_file_may_mix_arc_and_warc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
