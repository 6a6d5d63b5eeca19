/* api_alert_matcher (api/api.h): a stored alert's query compiled for the
 * delivery worker (src/push/alerts.h), through the validators of
 * /v2/everything as when it was saved. Apart from alerts.c so that a
 * program without the worker does not link the matcher. */
#include "api/internal.h"
#include "api/alert_body.h"

#include <stdlib.h>

#include "index/match.h"
#include "util/limits.h"

#include "util/banned.h"

/* A throwaway call for validating a stored query outside a request. */
int api_alert_matcher(struct api *api, const char *query_json, struct index_matcher **out,
                      struct err *err)
{
    struct http_request req = {.method = "GET", .path = "", .query = "", .request_id = "alert"};
    struct http_response resp = {0};
    struct api_call c = {.api = api, .req = &req, .resp = &resp, .now = api_now(api)};
    struct api_params params;
    struct index_request ir;
    int rc;

    *out = NULL;
    arena_init(&c.arena, LIMIT_REQUEST_ARENA_BYTES);
    if ((rc = api_alert_query_parse(&c.arena, query_json, &params, err)) < 0)
        goto out;
    if (api_alert_query_validate(&c, &params, &ir) < 0) {
        /* Valid when it was saved; the catalogue may have changed since (a
         * source gone). The response's message says how. */
        rc = err_set(err, ERR_INVALID, "the query is no longer valid: %.*s",
                     resp.body ? (int)(resp.len < 200 ? resp.len : 200) : 0,
                     resp.body ? resp.body : "");
        goto out;
    }
    rc = index_matcher_new(out, &ir, err);
out:
    free(resp.body);
    for (size_t i = 0; i < resp.n_headers; i++)
        free(resp.headers[i].value);
    arena_release(&c.arena);
    return rc;
}
