/* libFuzzer harness: a whole request as the API sees it after the HTTP
 * layer — method, raw target, headers and body — on the small real store of
 * api_fixture.h (issue 29 item 5). What fuzz_api.c's query strings do not
 * reach: the routes (404s, 405s, /v2/alerts/ID with any ID), the key in its
 * three places (apiKey, X-Api-Key, Authorization with or without Bearer),
 * Origin against a plan's allowed origins, Last-Event-ID on the stream,
 * X-No-Cache, and the JSON body of POST /v2/alerts.
 * Input: "METHOD\nTARGET\nName: value\n...\n\nBODY". In the target and
 * header values "@K" stands for a valid unlimited key and "@O" for a key
 * of the origin-restricted plan, so that inputs reach past the key check.
 * A NUL ends a line's value, as the HTTP layer cuts them.
 * Invariants: a status in 200..599 and never a 500 (a store that works
 * cannot fail a request); a JSON body (but the OpenAPI document) is an
 * object with "status"; no
 * response header value holds a CR, LF or NUL; Access-Control-Allow-Origin
 * is "*" or, for the restricted key, one of its plan's origins. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "http/http.h"
#include "util/buf.h"

#include "api_fixture.h"

#define FUZZ_REQUEST_MAX 65536
#define FUZZ_HEADERS_MAX 16

/* line [*p, next '\n') with @K/@O expanded, NUL-terminated (cut at a NUL) */
static char *take_line(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *stop = nl ? nl : end;
    struct buf b;
    buf_init(&b, 0);
    for (const uint8_t *c = *p; c < stop && *c; c++) {
        if (c + 1 < stop && c[0] == '@' && (c[1] == 'K' || c[1] == 'O')) {
            buf_puts(&b, c[1] == 'K' ? key : key_origins);
            c++;
        } else {
            buf_putc(&b, (char)*c);
        }
    }
    *p = nl ? nl + 1 : end;
    size_t n;
    char *s = buf_detach(&b, &n);
    CHECK(s != NULL);
    return s;
}

static bool origin_allowed(const char *v)
{
    size_t n = strlen(v);
    const char *all = FUZZ_ORIGINS;
    for (const char *q = all; (q = strstr(q, v)) != NULL; q++)
        if ((q == all || q[-1] == ' ') && (q[n] == ' ' || q[n] == '\0'))
            return true;
    return false;
}

static void check_response(const struct http_response *resp, const char *path, bool restricted)
{
    CHECK(resp->status >= 200 && resp->status <= 599);
    CHECK(resp->status != 500);
    for (size_t i = 0; i < resp->n_headers; i++) {
        const char *v = resp->headers[i].value;
        CHECK(v != NULL);
        CHECK(strpbrk(v, "\r\n") == NULL);
        if (!strcmp(resp->headers[i].name, "Access-Control-Allow-Origin"))
            CHECK(!strcmp(v, "*") || (restricted && origin_allowed(v)));
    }
    /* every JSON answer but the OpenAPI document is a NewsAPI object */
    if (resp->body && (!resp->content_type || strstr(resp->content_type, "json")) &&
        strcmp(path, "/v2/openapi.json") != 0) {
        json_error_t jerr;
        json_t *v = json_loadb(resp->body, resp->len, 0, &jerr);
        CHECK(v && json_is_object(v) && json_is_string(json_object_get(v, "status")));
        json_decref(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!api)
        fuzz_setup();
    if (size > FUZZ_REQUEST_MAX)
        return 0;
    const uint8_t *p = data, *end = data + size;
    char *method = take_line(&p, end);
    char *target = take_line(&p, end);
    char *fields[2 * FUZZ_HEADERS_MAX + 1] = {0};
    size_t nf = 0, header_bytes = 0;
    bool restricted = strstr(target, key_origins) != NULL;
    while (p < end && *p != '\n' && nf < 2 * FUZZ_HEADERS_MAX) {
        char *line = take_line(&p, end);
        char *colon = strchr(line, ':');
        if (!colon || colon == line) {
            free(line);
            continue;
        }
        *colon = '\0';
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        memmove(colon + 1, value, strlen(value) + 1);
        restricted = restricted || strstr(colon + 1, key_origins) != NULL;
        header_bytes += strlen(line) + strlen(colon + 1);
        fields[nf++] = line;
        fields[nf++] = colon + 1;
    }
    if (p < end && *p == '\n')
        p++;
    const char *body = (const char *)p;
    size_t body_len = (size_t)(end - p);

    char *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    size_t limit = api_body_limit(method, target, api);
    char *body_copy = NULL;
    if (body_len && body_len <= limit) { /* read whole, as the server would */
        body_copy = malloc(body_len + 1);
        CHECK(body_copy != NULL);
        memcpy(body_copy, body, body_len);
        body_copy[body_len] = '\0';
    }
    struct http_request req = {
        .method = method,
        .path = target,
        .query = q ? q : "",
        .request_id = "0123456789abcdef",
        .url_bytes = strlen(target) + (q ? 1 + strlen(q) : 0),
        .header_bytes = header_bytes,
        .body_announced = body_len && !body_copy,
        .body = body_copy,
        .body_len = body_copy ? body_len : 0,
        .client = "192.0.2.1",
        .conn = NULL,
        .headers = (const char *const *)fields,
    };
    struct http_response resp;
    memset(&resp, 0, sizeof resp);
    api_handle(&req, &resp, api);
    if (getenv("FUZZ_REQUEST_VERBOSE")) /* to look at what a corpus exercises */
        fprintf(stderr, "%d %s %s?%s -> %.160s\n", resp.status, method, target, req.query,
                resp.body ? resp.body : "");
    check_response(&resp, target, restricted);

    if (resp.stream) { /* no server sends it: end it, so the hub lets it go */
        CHECK(resp.status == 200);
        http_stream_end(resp.stream);
        http_stream_release(resp.stream);
    }
    free(resp.body);
    for (size_t i = 0; i < resp.n_headers; i++)
        free(resp.headers[i].value);
    free(body_copy);
    for (size_t i = 0; i < nf; i += 2)
        free(fields[i]);
    free(method);
    free(target);
    return 0;
}
