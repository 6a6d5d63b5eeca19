/* Writing a request's answer into its response (api/internal.h): an error
 * in the NewsAPI envelope (api_fail; error.c maps the code to the HTTP
 * status and message), the index-not-ready 503, and a rendered 200 body. */
#include "api/internal.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/limits.h"
#include "util/banned.h"

int api_fail(struct api_call *c, enum api_error e, const char *fmt, ...)
{
    char msg[1024];
    const char *m = NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        m = msg;
    }
    api_error_respond(c->resp, e, m, c->req->request_id);
    return -1;
}

int api_fail_building(struct api_call *c)
{
    http_response_add_header(c->resp, "Retry-After", "5");
    c->resp->log_note = "index being built";
    return api_fail(c, API_ERR_UNAVAILABLE,
                    "The search index is being built (newsd just started on this store); try "
                    "again in a moment.");
}

void api_respond_ok_begin(struct jw *w, struct buf *b)
{
    buf_init(b, LIMIT_RESPONSE_BYTES);
    api_render_ok_begin(w, b);
}

void api_respond_rendered(struct api_call *c, struct buf *b)
{
    if (buf_error(b)) {
        buf_release(b);
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    c->resp->status = 200;
    c->resp->body = buf_detach(b, &c->resp->len);
}
