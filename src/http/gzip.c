/* Response compression (http/internal.h): whether the client takes gzip,
 * and one-shot gzip of a whole body (bodies are built in memory anyway). */
#include "http/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

#define ZLIB_CONST
#include <zlib.h>

#include "util/banned.h"

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* A q-value is zero unless one of its digits is not: "0", "0.", "0.000"
 * refuse; anything with a non-zero digit accepts. A q without digits is
 * malformed and read as a refusal, identity being the safe answer. */
static bool qvalue_positive(const char *p)
{
    for (; *p && *p != ',' && *p != ';' && !is_ows(*p); p++)
        if (*p >= '1' && *p <= '9')
            return true;
    return false;
}

bool http_gzip_accepted(const char *ae)
{
    int gzip_q = -1, star_q = -1; /* -1 absent, 0 refused, 1 accepted */
    if (!ae)
        return false;
    const char *p = ae;
    while (*p) {
        while (*p == ',' || is_ows(*p))
            p++;
        const char *tok = p;
        while (*p && *p != ',' && *p != ';' && !is_ows(*p))
            p++;
        size_t tlen = (size_t)(p - tok);
        int q = 1;
        /* Parameters: only q matters; others are skipped. */
        while (*p && *p != ',') {
            if (*p == ';') {
                p++;
                while (is_ows(*p))
                    p++;
                if ((*p == 'q' || *p == 'Q') && p[1] == '=')
                    q = qvalue_positive(p + 2);
            }
            while (*p && *p != ',' && *p != ';')
                p++;
        }
        if ((tlen == 4 && !strncasecmp(tok, "gzip", 4)) ||
            (tlen == 6 && !strncasecmp(tok, "x-gzip", 6)))
            gzip_q = q;
        else if (tlen == 1 && tok[0] == '*')
            star_q = q;
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}

int http_gzip_compress(char **out, size_t *out_len, const char *in, size_t len)
{
    *out = NULL;
    *out_len = 0;
    /* zlib counts in uInt; a body that large is not worth one shot. */
    if (len < 2 || len > UINT_MAX)
        return 0;
    /* Room for one byte less than the input: if gzip does not fit, it is
     * not smaller and we send the body as it is. */
    unsigned char *buf = malloc(len - 1);
    if (!buf)
        return ERR_NOMEM;
    z_stream zs = {0};
    /* windowBits 15 + 16: a gzip wrapper rather than zlib's. */
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
        free(buf);
        return ERR_NOMEM;
    }
    zs.next_in = (const Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = buf;
    zs.avail_out = (uInt)(len - 1);
    int zrc = deflate(&zs, Z_FINISH);
    size_t produced = zs.total_out;
    deflateEnd(&zs);
    if (zrc != Z_STREAM_END) {
        free(buf);
        return zrc == Z_OK || zrc == Z_BUF_ERROR ? 0 : ERR_INTERNAL;
    }
    *out = (char *)buf;
    *out_len = produced;
    return 0;
}
