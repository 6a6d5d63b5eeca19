/* libFuzzer harness: the HTTP layer's own parsers — Accept-Encoding
 * negotiation, gzip round trip, the access-log target that masks keys, and
 * the NUL scan of a request head as libmicrohttpd leaves it (headnul.c).
 * Input: "<accept-encoding>\n<path>\n<query>\n<head>", the head's fields
 * being wherever a NUL is followed by more bytes (reads must stay inside
 * the head, whatever its bytes). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "http/internal.h"

static char *take_line(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *stop = nl ? nl : end;
    size_t n = (size_t)(stop - *p);
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = nl ? nl + 1 : end;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *accept = take_line(&p, end);
    char *path = take_line(&p, end);
    char *query = take_line(&p, end);

    (void)http_gzip_accepted(accept);

    char out[2048];
    /* The first byte of the path picks how much of it a 404 would keep. */
    size_t path_len = path[0] ? (unsigned char)path[0] % 8 : 0;
    size_t n = http_accesslog_target(out, sizeof out, path, path_len, query);
    if (n >= sizeof out || strlen(out) != n)
        abort();
    /* Nothing a terminal would obey reaches the log. */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f)
            abort();

    /* A lone apiKey parameter is logged as its name and a mask, whatever
     * its value (which may even spell "apiKey": a substring test of the
     * value against the line would flag the name). Paths that the log
     * escapes, masks or cuts are left out of this exact comparison. */
    bool plain_path = path_len == 0 || path_len >= strlen(path);
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f || strchr("&;?\\", *c))
            plain_path = false;
    if (plain_path && !strncmp(query, "apiKey=", 7) && !strpbrk(query, "&;")) {
        char want[sizeof out + 16];
        int m = snprintf(want, sizeof want, "%s?apiKey=***", path);
        if (m > 0 && (size_t)m < sizeof out && strcmp(out, want) != 0)
            abort();
    }

    char *gz = NULL;
    size_t gz_len = 0;
    size_t qlen = strlen(query);
    if (http_gzip_compress(&gz, &gz_len, query, qlen) == 0 && gz) {
        unsigned char *back = malloc(qlen + 1);
        if (!back)
            abort();
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, 31) != Z_OK)
            abort();
        zs.next_in = (unsigned char *)gz;
        zs.avail_in = (uInt)gz_len;
        zs.next_out = back;
        zs.avail_out = (uInt)(qlen + 1);
        int rc = inflate(&zs, Z_FINISH);
        if (rc != Z_STREAM_END || zs.total_out != qlen || memcmp(back, query, qlen))
            abort();
        inflateEnd(&zs);
        free(back);
    }
    free(gz);

    size_t hl = (size_t)(end - p);
    char *head = malloc(hl ? hl : 1);
    if (!head)
        abort();
    memcpy(head, p, hl);
    struct http_nul_scan scan;
    http_nul_scan_init(&scan, head, hl);
    for (size_t i = 0; i + 1 < hl; i++) {
        if (head[i] != '\0')
            continue;
        const char *value = head + i + 1;
        while (value < head + hl && (*value == ' ' || *value == '\t'))
            value++;
        size_t vl = strnlen(value, (size_t)(head + hl - value));
        http_nul_scan_field(&scan, i > 0 ? head + i - 1 : "moved", value, vl);
    }
    const char *cut = http_nul_scan_done(&scan);
    if (cut && (cut < head || cut >= head + hl))
        abort();
    free(head);
    free(accept);
    free(path);
    free(query);
    return 0;
}
