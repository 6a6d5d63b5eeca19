/* /v2/alerts and /v2/alerts/ID (docs/api.md "Webhook alerts"): a key's
 * saved searches whose new matches newsd POSTs to a webhook (src/push/
 * delivers them). The query is validated by /v2/everything's own
 * validators (api_everything_filters) over the body's parameters, so its
 * errors are word for word /everything's; a key sees and removes only its
 * own alerts (another key's id is answered as one that does not exist). */
#include "api/internal.h"
#include "api/render.h"
#include "api/alert_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jw.h"
#include "util/limits.h"
#include "util/log.h"
#include "util/timefmt.h"

#include "util/banned.h"

int api_alert_query_validate(struct api_call *c, const struct api_params *params,
                             struct index_request *req)
{
    struct api_params sent = c->params;
    c->params = *params;
    *req = (struct index_request){.from = INT64_MIN, .to = INT64_MAX};
    /* /v2/everything's filters and language (from/to are refused by the
     * body's parser: an alert has no time window). */
    int rc = api_everything_filters(c, req) < 0 || api_get_language(c, &req->language) < 0 ? -1 : 0;
    c->params = sent;
    return rc;
}

static void alert_write(struct jw *w, const struct alert_record *r)
{
    char created[TIMEFMT_ISO_LEN];
    timefmt_iso8601(r->created_at, created);
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_int(w, r->id);
    jw_key(w, "query");
    jw_raw(w, r->query, strlen(r->query));
    jw_key(w, "webhook");
    jw_str(w, r->webhook);
    jw_key(w, "createdAt");
    jw_str(w, created);
    if (r->dedupe) { /* an alert without it reads as before dedupe existed */
        jw_key(w, "dedupe");
        jw_bool(w, true);
        jw_key(w, "copies");
        jw_int(w, r->copies);
    }
    jw_obj_end(w);
}

/* {"status":"ok","alert":{…}} for one alert (one), else
 * {"status":"ok","totalResults":n,"alerts":[…]}; the HTTP status is
 * status unless rendering failed. */
static void respond_alerts(struct api_call *c, const struct alert_record *list, size_t n, bool one,
                           int status)
{
    struct buf b;
    struct jw w;
    api_respond_ok_begin(&w, &b);
    if (one) {
        jw_key(&w, "alert");
        alert_write(&w, list);
    } else {
        jw_key(&w, "totalResults");
        jw_uint(&w, n);
        jw_key(&w, "alerts");
        jw_arr_begin(&w);
        for (size_t i = 0; i < n; i++)
            alert_write(&w, &list[i]);
        jw_arr_end(&w);
    }
    jw_obj_end(&w);
    api_respond_rendered(c, &b);
    if (c->resp->status == 200)
        c->resp->status = status;
}

/* A store failure: logged with the request id, 503 when the store is
 * away for a moment, else 500. */
static void fail_store(struct api_call *c, int rc, const struct err *err)
{
    log_error("request %s: alerts: %s", c->req->request_id, err_msg(err, rc));
    api_fail(c, rc == ERR_BUSY ? API_ERR_UNAVAILABLE : API_ERR_UNEXPECTED, NULL);
}

int api_alert_add_call(struct api_call *c, int64_t key_id, int64_t max_per_key,
                       struct alert_record *r, int *store_rc, struct err *err)
{
    struct api_alert_body body;
    struct index_request req;
    *store_rc = 0;
    int rc = api_alert_body_parse(&c->arena, c->req->body, c->req->body_len, &body, err);
    if (rc == ERR_NOMEM)
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    if (rc < 0)
        return api_fail(c,
                        rc == ERR_NOTFOUND ? API_ERR_PARAMETERS_MISSING : API_ERR_PARAMETER_INVALID,
                        "%s", err_msg(err, rc));
    if (api_alert_query_validate(c, &body.query, &req) < 0)
        return -1;
    /* Cheap now; every delivery checks the addresses it connects to. */
    char why[NETPOLICY_WHY_MAX];
    if (!netpolicy_permits_url(c->api->cfg.outbound, body.webhook, why, sizeof why))
        return api_fail(c, API_ERR_PARAMETER_INVALID, "The webhook URL cannot be used: %s.", why);
    *r = (struct alert_record){
        .key_id = key_id,
        .query = body.query_json,
        .webhook = body.webhook,
        .secret = body.secret,
        .created_at = c->now,
        .cursor_seq = -1,
        .state = ALERT_ACTIVE,
        .dedupe = body.dedupe,
    };
    rc = store_alert_add(c->api->store, r, max_per_key, &r->id, err);
    if (rc == ERR_FULL)
        return api_fail(c, API_ERR_TOO_MANY_ALERTS,
                        "You have %lld alerts, as many as your plan allows. Delete one "
                        "(DELETE /v2/alerts/ID) before adding another.",
                        (long long)max_per_key);
    if (rc < 0) {
        *store_rc = rc;
        return -1;
    }
    return 0;
}

static void alerts_create(struct api_call *c)
{
    struct alert_record r;
    struct err err;
    int store_rc = 0;
    err_clear(&err);
    if (api_alert_add_call(c, c->auth.key_id, c->auth.plan.alerts, &r, &store_rc, &err) == 0)
        respond_alerts(c, &r, 1, true, 201);
    else if (store_rc < 0)
        fail_store(c, store_rc, &err);
}

static void alerts_list(struct api_call *c)
{
    struct alert_record *list = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    int rc = store_alerts_list(c->api->store, &c->arena, c->auth.key_id, &list, &n, &err);
    if (rc < 0) {
        fail_store(c, rc, &err);
        return;
    }
    respond_alerts(c, list, n, false, 200);
}

void api_alerts(struct api_call *c)
{
    if (!strcmp(c->req->method, "POST"))
        alerts_create(c);
    else
        alerts_list(c);
}

/* The id of the path's segment: plain decimal digits, else 0. */
static int64_t alert_id_of(const char *s)
{
    int64_t v = 0;
    if (!*s || strlen(s) > 18)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (*s - '0');
    }
    return v;
}

void api_alert(struct api_call *c, const char *segment)
{
    int64_t id = alert_id_of(segment);
    struct err err;
    err_clear(&err);
    if (id <= 0) {
        api_fail(c, API_ERR_ALERT_NOT_FOUND, NULL);
        return;
    }
    if (!strcmp(c->req->method, "DELETE")) {
        int rc = store_alert_remove(c->api->store, id, c->auth.key_id, &err);
        if (rc == ERR_NOTFOUND) {
            api_fail(c, API_ERR_ALERT_NOT_FOUND, NULL);
            return;
        }
        if (rc < 0) {
            fail_store(c, rc, &err);
            return;
        }
        struct buf b;
        buf_init(&b, 0);
        buf_puts(&b, "{\"status\":\"ok\"}");
        api_respond_rendered(c, &b);
        return;
    }
    struct alert_record *list = NULL;
    size_t n = 0;
    int rc = store_alerts_list(c->api->store, &c->arena, c->auth.key_id, &list, &n, &err);
    if (rc < 0) {
        fail_store(c, rc, &err);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (list[i].id == id) {
            respond_alerts(c, &list[i], 1, true, 200);
            return;
        }
    }
    api_fail(c, API_ERR_ALERT_NOT_FOUND, NULL);
}
