/* libFuzzer harness: the whole request path behind the HTTP glue — routing,
 * key check, every validator, the q parser, the MATCH builder, the FTS5
 * search, the plan checks and the rendering — on a small real store built
 * once per process in a temporary directory.
 * Input: byte 0 picks the route (and whether a valid key is sent), the rest
 * is the raw query string (for /v2/stories/{id}, its bytes up to the first
 * '&' are also the id). Invariants: never a 500 (a store that works
 * cannot fail a request), always a JSON object body with "status" (a feed:
 * well-formed XML, or JSON Feed with its version), never a 200 when a
 * parameter value holds a NUL byte (%00). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <libxml/parser.h>

#include "api/api.h"
#include "api/params.h"
#include "auth/auth.h"
#include "index/index.h"
#include "ingest/ingest.h"
#include "store/store.h"

#include "api_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = {"/v2/everything", "/v2/top-headlines",
                                        "/v2/top-headlines/sources", "/v2/sources"};
    static char query[FUZZ_QUERY_MAX + 128];
    if (!api)
        fuzz_setup();
    if (size == 0 || size > FUZZ_QUERY_MAX)
        return 0;

    unsigned sel = data[0];
    const char *path = paths[sel % 4];
    static char story_path[64];
    if ((sel & 0x40) && sel % 4 == 0)
        path = "/v2/everything/stream"; /* the live stream's validation, same filters */
    if ((sel & 0x40) && sel % 4 == 1)
        path = "/v2/stories"; /* /v2/everything's filters, grouped */
    if ((sel & 0x40) && sel % 4 == 2) {
        /* /v2/stories/{id}: the input up to its first '&' is the id */
        size_t n = 1;
        while (n < size && n < 40 && data[n] != '&' && data[n] != '\0')
            n++;
        snprintf(story_path, sizeof story_path, "/v2/stories/%.*s", (int)(n - 1),
                 (const char *)data + 1);
        path = story_path;
    }
    size_t qlen = 0;
    if (!(sel & 0x10)) { /* mostly with a valid key: the deep paths */
        int m = snprintf(query, sizeof query, "apiKey=%s&", key);
        qlen = (size_t)m;
    }
    memcpy(query + qlen, data + 1, size - 1);
    qlen += size - 1;
    query[qlen] = '\0';
    if (memchr(data + 1, '\0', size - 1))
        return 0; /* the HTTP layer never hands over a NUL */

    struct http_request req = {
        .method = (sel & 0x20) ? "HEAD" : "GET",
        .path = path,
        .query = query,
        .request_id = "0123456789abcdef",
        .url_bytes = strlen(path) + 1 + qlen,
        .header_bytes = 0,
        .conn = NULL,
    };
    struct http_response resp;
    memset(&resp, 0, sizeof resp);
    api_handle(&req, &resp, api);

    if (getenv("FUZZ_API_VERBOSE")) /* to look at what a corpus exercises */
        fprintf(stderr, "%d %s?%s -> %.120s\n", resp.status, path, query,
                resp.body ? resp.body : "");
    if (resp.status == 500)
        abort(); /* nothing in a healthy store justifies it */
    if (resp.status < 200 || resp.status > 599)
        abort();
    if (resp.status == 200) {
        struct arena a;
        struct api_params p;
        arena_init(&a, 1 << 24);
        if (api_params_parse(&a, query, qlen, &p) == 0)
            for (size_t i = 0; i < p.n; i++)
                if (memchr(p.items[i].value, '\0', p.items[i].len))
                    abort(); /* read cut short at the NUL */
        arena_release(&a);
    }
    if (resp.body && resp.content_type && strstr(resp.content_type, "+xml")) {
        /* format=rss|atom: whatever the articles hold, well-formed XML */
        xmlDocPtr doc = xmlReadMemory(resp.body, (int)resp.len, NULL, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!doc)
            abort();
        xmlFreeDoc(doc);
    } else if (resp.body && resp.content_type && strstr(resp.content_type, "feed+json")) {
        json_t *v = json_loadb(resp.body, resp.len, 0, NULL); /* format=jsonfeed */
        if (!v || !json_is_string(json_object_get(v, "version")))
            abort();
        json_decref(v);
    } else if (resp.body && (!resp.content_type || strstr(resp.content_type, "json"))) {
        json_error_t jerr;
        json_t *v = json_loadb(resp.body, resp.len, 0, &jerr);
        if (!v || !json_is_object(v) || !json_is_string(json_object_get(v, "status")))
            abort();
        json_decref(v);
    }
    if (resp.stream) {
        /* No server sends it: end it, so the hub lets its subscriber go. */
        if (resp.status != 200)
            abort();
        http_stream_end(resp.stream);
        http_stream_release(resp.stream);
    }
    free(resp.body);
    for (size_t i = 0; i < resp.n_headers; i++)
        free(resp.headers[i].value);
    return 0;
}
