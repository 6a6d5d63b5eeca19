/* The search page: web/index.html, app.js and style.css, embedded at build
 * time (scripts/embed.py → build/gen/web_assets.h) and served at /,
 * /app.js and /style.css without a key. The page loads nothing from
 * elsewhere, which the Content-Security-Policy enforces; article images are
 * the one exception (img-src *), as NewsAPI hands out their URLs. */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

#include "web_assets.h"

#include "util/banned.h"

#define WEB_CSP                                                                                    \
    "default-src 'self'; img-src * data:; frame-ancestors 'none'; base-uri 'none'; form-action "   \
    "'self'"

static const struct web_asset {
    const char *name;
    const unsigned char *data;
    size_t len;
    const char *type;
} assets[] = {
    {"index.html", web_index_html, sizeof web_index_html, "text/html; charset=utf-8"},
    {"app.js", web_app_js, sizeof web_app_js, "text/javascript; charset=utf-8"},
    {"style.css", web_style_css, sizeof web_style_css, "text/css; charset=utf-8"},
};

void api_web(struct api_call *c, const char *name)
{
    const struct web_asset *a = NULL;
    for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++)
        if (!strcmp(assets[i].name, name))
            a = &assets[i];
    if (!a) {
        api_fail(c, API_ERR_ROUTE_NOT_FOUND, NULL);
        return;
    }
    /* The server takes (and frees) the body, so each answer gets a copy;
     * the files are a few KiB. */
    char *body = malloc(a->len);
    if (!body) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    memcpy(body, a->data, a->len);
    struct http_response *resp = c->resp;
    free(resp->body);
    resp->body = body;
    resp->len = a->len;
    resp->status = 200;
    resp->content_type = a->type;
    http_response_add_header(resp, "Content-Security-Policy", WEB_CSP);
    http_response_add_header(resp, "X-Content-Type-Options", "nosniff");
    http_response_add_header(resp, "Referrer-Policy", "no-referrer");
    http_response_add_header(resp, "Cache-Control", "no-cache");
}
