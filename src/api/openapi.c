/* GET /v2/openapi.json: the OpenAPI 3.1 description of this interface
 * (docs/openapi.json, compacted and embedded at build time by
 * scripts/embed.py into build/gen/openapi_json.h). No key is needed: it
 * describes the interface, not data. */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

#include "openapi_json.h"

#include "util/banned.h"

void api_openapi(struct api_call *c)
{
    char *body = malloc(sizeof openapi_json);
    if (!body) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    memcpy(body, openapi_json, sizeof openapi_json);
    free(c->resp->body);
    c->resp->body = body;
    c->resp->len = sizeof openapi_json;
    c->resp->status = 200;
    c->resp->content_type = NULL; /* application/json; charset=utf-8 */
    http_response_add_header(c->resp, "Cache-Control", "no-cache");
}
