/* NewsAPI error envelope (api/error.h). */
#include "api/error.h"
#include "util/buf.h"
#include "util/jw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

static const struct {
    const char *code;
    int status;
    const char *message;
} errors[] = {
#define API_ERR_ROW_(e, code, status, msg) {code, status, msg},
    API_ERROR_MAP(API_ERR_ROW_)
#undef API_ERR_ROW_
};

void api_error_begin(struct jw *w, struct buf *out, const char *code, const char *message)
{
    jw_init(w, out);
    jw_obj_begin(w);
    jw_key(w, "status");
    jw_str(w, "error");
    jw_key(w, "code");
    jw_str(w, code);
    jw_key(w, "message");
    jw_str(w, message);
}

const char *api_error_code(enum api_error e)
{
    return errors[e].code;
}

int api_error_status(enum api_error e)
{
    return errors[e].status;
}

void api_error_respond(struct http_response *resp, enum api_error e, const char *message,
                       const char *request_id)
{
    char fallback[160];
    if (!message)
        message = errors[e].message;
    if (!message) {
        snprintf(fallback, sizeof fallback,
                 "An unexpected error occurred. Please try again; if it persists, report "
                 "request id %s to the administrator.",
                 request_id ? request_id : "-");
        message = fallback;
    }
    struct buf b;
    buf_init(&b, 0);
    struct jw w;
    api_error_begin(&w, &b, errors[e].code, message);
    jw_obj_end(&w);
    free(resp->body);
    resp->status = errors[e].status;
    resp->content_type = NULL;
    if (buf_error(&b)) {
        buf_release(&b);
        static const char oom[] = "{\"status\":\"error\",\"code\":\"unexpectedError\","
                                  "\"message\":\"Out of memory.\"}";
        resp->body = malloc(sizeof oom);
        resp->len = 0;
        if (resp->body) {
            memcpy(resp->body, oom, sizeof oom - 1);
            resp->len = sizeof oom - 1;
        }
        resp->status = 500;
        return;
    }
    resp->body = buf_detach(&b, &resp->len);
}
