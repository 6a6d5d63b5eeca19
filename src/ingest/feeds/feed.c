/* Feed parsing entry point (ingest/feeds/feeds.h): gzip bodies, format
 * detection, then the format's parser (feed_xml.c, feed_json.c), which
 * uses the field helpers of feed_fields.c. */

#include "ingest/feeds/feeds.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "ingest/feeds/feed_internal.h"
#include "ingest/ingest.h"
#include "util/ascii.h"
#include "util/buf.h"
#include "util/timefmt.h"
#include "util/url.h"
#include "util/utf8.h"

#include "util/banned.h"

/* ---- entry --------------------------------------------------------------- */

/* Inflate a gzip body into a malloc'd buffer of at most FEED_MAX_BODY_BYTES. */
static int gunzip(const unsigned char *in, size_t len, char **out, size_t *out_len, struct err *err)
{
    int rc = 0;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    struct buf b;
    buf_init(&b, FEED_MAX_BODY_BYTES + 1);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        rc = err_set(err, ERR_NOMEM, "gzip: cannot start inflating");
        goto out_noend;
    }
    zs.next_in = (unsigned char *)(uintptr_t)in;
    zs.avail_in = len > UINT32_MAX ? UINT32_MAX : (unsigned)len;
    for (;;) {
        rc = buf_grow(&b, 64 * 1024);
        if (rc < 0) {
            if (rc == ERR_TOO_LARGE)
                err_set(err, rc, "gzip body inflates past %d bytes", FEED_MAX_BODY_BYTES);
            else
                err_set(err, rc, "out of memory inflating the body");
            goto out;
        }
        zs.next_out = (unsigned char *)b.data + b.len;
        zs.avail_out = (unsigned)(b.cap - b.len - 1);
        int z = inflate(&zs, Z_NO_FLUSH);
        b.len = (size_t)((char *)zs.next_out - b.data);
        b.data[b.len] = '\0';
        if (b.len > FEED_MAX_BODY_BYTES) {
            rc = err_set(err, ERR_TOO_LARGE, "gzip body inflates past %d bytes",
                         FEED_MAX_BODY_BYTES);
            goto out;
        }
        if (z == Z_STREAM_END)
            break;
        if (z != Z_OK) {
            /* A truncated stream keeps what was inflated: feeds are parsed
             * in recover mode anyway. */
            if (z == Z_BUF_ERROR && b.len > 0)
                break;
            rc = err_set(err, ERR_PARSE, "gzip: %s", zs.msg ? zs.msg : "corrupt data");
            goto out;
        }
    }
    *out = buf_detach(&b, out_len);
out:
    inflateEnd(&zs);
out_noend:
    buf_release(&b);
    return rc;
}

int feed_parse(struct arena *a, const char *body, size_t len, const char *charset,
               const char *base_url, struct feed *out, struct err *err)
{
    int rc = 0;
    char *inflated = NULL;
    memset(out, 0, sizeof *out);
    struct feed_ctx c = {.a = a, .err = err, .out = out};
    if (!body)
        len = 0;
    if (len > FEED_MAX_BODY_BYTES) {
        rc = err_set(err, ERR_TOO_LARGE, "feed body over %d bytes", FEED_MAX_BODY_BYTES);
        goto out;
    }
    if (len >= 2 && (unsigned char)body[0] == 0x1F && (unsigned char)body[1] == 0x8B) {
        size_t ilen = 0;
        rc = gunzip((const unsigned char *)body, len, &inflated, &ilen, err);
        if (rc < 0)
            goto out;
        body = inflated;
        len = ilen;
    }
    if (base_url && ingest_url_is_http(base_url) && strlen(base_url) <= FEED_MAX_URL_BYTES)
        c.base_url = base_url;

    size_t i = 0;
    if (len >= 3 && memcmp(body, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    const char *rest = body + i;
    size_t rest_len = len - i;
    ingest_trim(&rest, &rest_len);
    i = rest_len ? (size_t)(rest - body) : len;
    if (i == len) {
        rc = err_set(err, ERR_PARSE, "empty feed body");
        goto out;
    }
    if (body[i] == '{')
        rc = feed_json_parse(&c, body + i, len - i);
    else
        rc = feed_xml_parse(&c, body, len, charset);
    if (rc == 0 && c.rc < 0)
        rc = err_set(err, c.rc, "out of memory parsing the feed");
out:
    free(inflated);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
}
