/* Running a validated search against the index and answering with its page
 * of articles (api/internal.h): the query time budget, and the index's
 * failures turned into NewsAPI errors (timeout and index-not-ready 503,
 * anything else 500 with the cause in the log only). */
#include "api/internal.h"
#include "util/clock.h"
#include "util/limits.h"
#include "util/log.h"

#include "util/banned.h"

void api_respond_search(struct api_call *c, const struct index_request *req)
{
    struct index_result res;
    struct err err;
    err_clear(&err);
    c->searched = true;
    if (req->from > req->to) {
        /* An empty window (plan delay, history): nothing can match. */
        res.total = 0;
        res.n = 0;
        res.docs = NULL;
    } else {
        struct index_request timed = *req;
        /* The budget counts from the request's arrival: time spent waiting
         * for a worker is part of what the client waits. */
        if (c->api->cfg.query_timeout_ms > 0)
            timed.deadline_ms = (c->req->received_ms > 0 ? c->req->received_ms : clock_mono_ms()) +
                                c->api->cfg.query_timeout_ms;
        int rc = index_search(c->api->index, &c->arena, &timed, &res, &err);
        if (rc == ERR_TIMEOUT) {
            /* A runaway query: the client may retry a narrower one. */
            api_fail(c, API_ERR_UNAVAILABLE,
                     "Your query took too long to run and was stopped. Try a narrower query "
                     "(fewer OR terms, a date range) or try again later.");
            c->resp->log_note = "query time budget exceeded";
            return;
        }
        if (rc == ERR_BUSY) {
            c->searched = false; /* no search ran: the index is not ready yet */
            api_fail_building(c);
            return;
        }
        if (rc < 0) {
            api_fail(c, API_ERR_UNEXPECTED, NULL);
            /* The cause goes to the log only (no internals in responses). */
            log_msg(LOG_ERROR, "request %s: search failed: %s", c->req->request_id,
                    err_msg(&err, rc));
            c->resp->log_note = "index failure";
            return;
        }
    }
    struct buf b;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    api_render_page(&b, res.total, res.docs, res.n);
    api_respond_rendered(c, &b);
}
