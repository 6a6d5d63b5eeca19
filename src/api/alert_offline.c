/* Alerts outside a request (api/api.h): a stored query compiled for the
 * delivery worker (api_alert_matcher, src/push/webhook.h) and an alert
 * added by the operator (api_alert_add, `newsd alerts add`), each through
 * the same validation as POST /v2/alerts, run on a throwaway call whose
 * error envelope becomes the message. Apart from alerts.c so that a
 * program without the worker does not link the matcher. */
#include "api/internal.h"
#include "api/alert_body.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "index/match.h"
#include "util/limits.h"

#include "util/banned.h"

struct offline {
    struct http_request req;
    struct http_response resp;
    struct api_call c;
};

static void offline_init(struct offline *o, struct api *api, const char *body, size_t len)
{
    memset(o, 0, sizeof *o);
    o->req = (struct http_request){.method = "POST",
                                   .path = "",
                                   .query = "",
                                   .request_id = "offline",
                                   .body = body,
                                   .body_len = len};
    o->c = (struct api_call){.api = api, .req = &o->req, .resp = &o->resp, .now = api_now(api)};
    arena_init(&o->c.arena, LIMIT_REQUEST_ARENA_BYTES);
}

/* The message of the error envelope the call wrote, as err's. */
static int offline_error(struct offline *o, int code, struct err *err)
{
    json_t *root = o->resp.body ? json_loadb(o->resp.body, o->resp.len, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(root, "message"));
    int rc = err_set(err, code, "%s", m ? m : "invalid alert");
    json_decref(root);
    return rc;
}

static void offline_release(struct offline *o)
{
    free(o->resp.body);
    for (size_t i = 0; i < o->resp.n_headers; i++)
        free(o->resp.headers[i].value);
    arena_release(&o->c.arena);
}

int api_alert_matcher(struct api *api, const char *query_json, struct index_matcher **out,
                      struct err *err)
{
    struct offline o;
    struct api_params params;
    struct index_request ir;
    int rc;

    *out = NULL;
    offline_init(&o, api, NULL, 0);
    if ((rc = api_alert_query_parse(&o.c.arena, query_json, &params, err)) < 0)
        goto out;
    /* Valid when it was saved; the catalogue may have changed since (a
     * source gone). */
    if (api_alert_query_validate(&o.c, &params, &ir) < 0) {
        rc = offline_error(&o, ERR_INVALID, err);
        goto out;
    }
    rc = index_matcher_new(out, &ir, err);
out:
    offline_release(&o);
    return rc;
}

int api_alert_add(struct api *api, int64_t key_id, int64_t max_per_key, const char *body,
                  size_t len, int64_t *id_out, struct err *err)
{
    struct offline o;
    struct alert_record r;
    int store_rc = 0;
    offline_init(&o, api, body, len);
    int rc = api_alert_add_call(&o.c, key_id, max_per_key, &r, &store_rc, err);
    if (rc < 0)
        rc = store_rc < 0 ? store_rc : offline_error(&o, ERR_INVALID, err);
    else if (id_out)
        *id_out = r.id;
    offline_release(&o);
    return rc;
}
