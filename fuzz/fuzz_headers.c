/* libFuzzer harness: the request and response headers newsd reads as bytes
 * outside a bigger parser (issue 29 item 5):
 *   Content-Length       http_content_length_parse / _announces (server.c
 *                        reads a body, or refuses one, by them)
 *   X-Forwarded-For      http_forwarded_client, the walk behind trusted
 *                        proxies (10.0.0.0/8 and ::1 here)
 *   Content-Type charset fetch_content_type_charset, on a fetched feed or
 *                        page's header, into buffers of every small size
 * Input: "<content-length>\n<x-forwarded-for>\n<content-type>"; the header
 * values libmicrohttpd and libcurl hand over are NUL-terminated strings, so
 * each line is cut at its first NUL as theirs would be.
 * Invariants: a length announced when and only when parsed above zero
 * (when it parses), the same number strtoull reads; a client that is the
 * peer or an address that reads back as itself; a charset that fits its
 * buffer, in lower case, without a separator. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http/internal.h"
#include "fetch/fetch.h"
#include "util/netpolicy.h"

#define PEER "10.1.2.3"

static char *take_line(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *stop = nl ? nl : end;
    size_t n = (size_t)(stop - *p);
    char *s = malloc(n + 1);
    CHECK(s != NULL);
    memcpy(s, *p, n);
    s[n] = '\0'; /* a NUL inside ends the value, as in the libraries' strings */
    *p = nl ? nl + 1 : end;
    return s;
}

static void content_length(const char *v)
{
    long long n = http_content_length_parse(v);
    bool announced = http_content_length_announces(v);
    CHECK(n >= -1);
    if (n > 0)
        CHECK(announced); /* a body it would read is never one it ignores */
    if (n == 0)
        CHECK(!announced);
    if (n >= 0) {
        const char *d = v + strspn(v, " \t");
        CHECK(strtoull(d, NULL, 10) == (unsigned long long)n);
    }
}

static void forwarded_for(const char *xff)
{
    static struct netpolicy trusted;
    static bool ready;
    if (!ready) {
        char why[128];
        static const char nets[] = "10.0.0.0/8 ::1";
        netpolicy_init(&trusted);
        CHECK(netpolicy_allow_parse(&trusted, nets, sizeof nets - 1, why, sizeof why) == 0);
        ready = true;
    }
    char client[NETPOLICY_ADDR_TEXT] = PEER;
    http_forwarded_client(client, xff, &trusted);
    CHECK(memchr(client, '\0', sizeof client) != NULL);
    if (strcmp(client, PEER) != 0) {
        /* an address from the header, in its canonical text form */
        struct netpolicy_addr a;
        char again[NETPOLICY_ADDR_TEXT];
        CHECK(netpolicy_addr_from_host(&a, client, strlen(client)));
        netpolicy_addr_format(&a, again);
        CHECK(strcmp(client, again) == 0);
    }
}

static void content_type(const char *ct)
{
    char out[80];
    for (size_t size = 0; size <= sizeof out; size += size < 12 ? 1 : 17) {
        memset(out, 0x5a, sizeof out);
        if (!fetch_content_type_charset(ct, out, size))
            continue;
        size_t n = strnlen(out, size);
        CHECK(n > 0 && n < size);
        for (size_t i = 0; i < n; i++)
            CHECK(out[i] != ';' && out[i] != '"' && out[i] != ' ' && out[i] != '\t' &&
                  !isupper((unsigned char)out[i]));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *cl = take_line(&p, end);
    char *xff = take_line(&p, end);
    char *ct = take_line(&p, end);
    content_length(cl);
    forwarded_for(xff);
    content_type(ct);
    free(cl);
    free(xff);
    free(ct);
    return 0;
}
