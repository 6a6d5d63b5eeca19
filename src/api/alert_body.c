/* The body of POST /v2/alerts and the stored query (api/alert_body.h),
 * read with jansson. */
#include "api/alert_body.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/ascii.h"
#include "util/buf.h"
#include "util/jw.h"
#include "util/limits.h"
#include "util/urlview.h"
#include "util/utf8.h"

#include "util/banned.h"

/* The query's parameters, in the order the canonical JSON keeps them; the
 * name as the API documents it (a request's keys are matched without
 * case, as query-string names are). country and category are kept so that
 * /v2/everything's own validation refuses them with its own words. */
static const char *const query_names[] = {
    "q",        "qInTitle", "searchIn", "sources", "domains", "excludeDomains",
    "language", "country",  "category",
};
#define N_QUERY_NAMES (sizeof query_names / sizeof query_names[0])

static int query_name_index(const char *key)
{
    for (size_t i = 0; i < N_QUERY_NAMES; i++)
        if (!strcasecmp(key, query_names[i]))
            return (int)i;
    return -1;
}

static char *lower_dup(struct arena *a, const char *s)
{
    char *d = arena_strdup(a, s);
    if (d)
        ascii_lower_str(d);
    return d;
}

/* Add one value of parameter name (display spelling) to out; an empty
 * value is absent, as in a query string. */
static int param_add(struct arena *a, struct api_params *out, size_t *cap, const char *name,
                     const json_t *v)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 0)
        return 0;
    if (out->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct api_param *items = arena_calloc(a, ncap, sizeof *items);
        if (!items)
            return ERR_NOMEM;
        if (out->n)
            memcpy(items, out->items, out->n * sizeof *items);
        out->items = items;
        *cap = ncap;
    }
    struct api_param *p = &out->items[out->n];
    p->name = lower_dup(a, name);
    p->value = arena_strndup(a, s, len);
    p->len = len;
    if (!p->name || !p->value)
        return ERR_NOMEM;
    out->n++;
    return 0;
}

/* The query object q into parameters. */
static int query_read(struct arena *a, const json_t *q, struct api_params *out, struct err *err)
{
    const char *key;
    const json_t *v;
    size_t cap = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (!json_is_object(q))
        return err_set(err, ERR_INVALID,
                       "The query field must be an object of /v2/everything parameters.");
    json_object_foreach((json_t *)q, key, v)
    {
        const char *refused = api_search_only_param(key);
        if (refused)
            return err_set(err, ERR_INVALID,
                           "The %s parameter does not apply to alerts: an alert gets every new "
                           "matching article.",
                           refused);
        /* Not ignored as an unknown name: the alert would send every copy
         * to a client that asked for one. */
        if (!strcasecmp(key, "dedupe"))
            return err_set(err, ERR_INVALID,
                           "The dedupe parameter is a field of the body beside query: "
                           "\"dedupe\": true.");
        int k = query_name_index(key);
        if (k < 0)
            continue; /* unknown parameters are ignored, as in a query string */
        if (json_is_string(v)) {
            if ((rc = param_add(a, out, &cap, query_names[k], v)) < 0)
                return err_set(err, rc, "out of memory");
            continue;
        }
        if (!json_is_array(v))
            return err_set(err, ERR_INVALID,
                           "The %s parameter must be a string or a list of strings.",
                           query_names[k]);
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            if (!json_is_string(item))
                return err_set(err, ERR_INVALID,
                               "The %s parameter must be a string or a list of strings.",
                               query_names[k]);
            if ((rc = param_add(a, out, &cap, query_names[k], item)) < 0)
                return err_set(err, rc, "out of memory");
        }
    }
    return 0;
}

/* The canonical JSON of params: the known names in query_names order, one
 * value a string, several a list. */
static int query_json(struct arena *a, const struct api_params *p, const char **out,
                      struct err *err)
{
    struct buf b;
    struct jw w;
    buf_init(&b, LIMIT_ALERT_BODY_BYTES * 2);
    jw_init(&w, &b);
    jw_obj_begin(&w);
    for (size_t k = 0; k < N_QUERY_NAMES; k++) {
        char lower[32];
        snprintf(lower, sizeof lower, "%s", query_names[k]);
        ascii_lower_str(lower);
        size_t n = api_params_count(p, lower);
        if (n == 0)
            continue;
        jw_key(&w, query_names[k]);
        if (n > 1)
            jw_arr_begin(&w);
        for (size_t i = 0; i < p->n; i++)
            if (!strcmp(p->items[i].name, lower))
                jw_strn(&w, p->items[i].value, p->items[i].len);
        if (n > 1)
            jw_arr_end(&w);
    }
    jw_obj_end(&w);
    int rc = buf_error(&b);
    if (rc == 0) {
        *out = arena_strndup(a, b.data, b.len);
        if (!*out)
            rc = ERR_NOMEM;
    }
    buf_release(&b);
    return rc < 0 ? err_set(err, rc, "out of memory") : 0;
}

/* A string field of the body: NULL when absent or null. */
static int string_field(const json_t *o, const char *name, size_t max, const char **out,
                        struct err *err)
{
    const json_t *v = json_object_get(o, name);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return err_set(err, ERR_INVALID, "The %s field must be a string.", name);
    if (json_string_length(v) > max)
        return err_set(err, ERR_INVALID, "The %s field is too long: the limit is %zu bytes.", name,
                       max);
    *out = json_string_value(v);
    return 0;
}

/* A boolean field of the body: false when absent or null. */
static int bool_field(const json_t *o, const char *name, bool *out, struct err *err)
{
    const json_t *v = json_object_get(o, name);
    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return err_set(err, ERR_INVALID, "The %s field must be true or false.", name);
    *out = json_is_true(v);
    return 0;
}

/* An http(s) URL with a host, without spaces or control characters. */
static int webhook_check(const char *url, struct err *err)
{
    struct urlview v;
    urlview_parse(&v, url);
    bool http = v.scheme.p && ((v.scheme.n == 4 && !strncasecmp(v.scheme.p, "http", 4)) ||
                               (v.scheme.n == 5 && !strncasecmp(v.scheme.p, "https", 5)));
    if (!http || !v.host.p || v.host.n == 0)
        return err_set(err, ERR_INVALID,
                       "The webhook field must be an http:// or https:// URL with a host.");
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return err_set(err, ERR_INVALID,
                           "The webhook field may not contain spaces or control characters.");
    return 0;
}

int api_alert_body_parse(struct arena *a, const char *body, size_t len, struct api_alert_body *out,
                         struct err *err)
{
    json_error_t jerr;
    json_t *root = NULL;
    const char *webhook = NULL, *secret = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (!body || len == 0)
        return err_set(err, ERR_NOTFOUND,
                       "Required parameters are missing. Send a JSON body with query, webhook "
                       "and secret.");
    if (!utf8_valid(body, len))
        return err_set(err, ERR_INVALID, "The request body is not valid UTF-8.");
    /* No \u0000 (JSON_ALLOW_NUL is off) and no key twice. */
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = err_set(err, ERR_INVALID,
                     "The request body is not valid JSON: %.120s (line %d, column %d).", jerr.text,
                     jerr.line, jerr.column);
        goto out;
    }
    if (!json_is_object(root)) {
        rc = err_set(err, ERR_INVALID,
                     "The request body must be a JSON object with query, webhook and secret.");
        goto out;
    }
    const json_t *q = json_object_get(root, "query");
    if ((rc = string_field(root, "webhook", LIMIT_ALERT_URL_BYTES, &webhook, err)) < 0 ||
        (rc = string_field(root, "secret", LIMIT_ALERT_SECRET_BYTES, &secret, err)) < 0 ||
        (rc = bool_field(root, "dedupe", &out->dedupe, err)) < 0)
        goto out;
    if (!q || json_is_null(q) || !webhook || !*webhook || !secret || !*secret) {
        rc = err_set(err, ERR_NOTFOUND,
                     "Required parameters are missing. Please set query, webhook and secret.");
        goto out;
    }
    if ((rc = webhook_check(webhook, err)) < 0)
        goto out;
    for (const unsigned char *p = (const unsigned char *)secret; *p; p++)
        if (*p < ' ' || *p == 0x7f) {
            rc = err_set(err, ERR_INVALID, "The secret field may not contain control characters.");
            goto out;
        }
    if ((rc = query_read(a, q, &out->query, err)) < 0 ||
        (rc = query_json(a, &out->query, &out->query_json, err)) < 0)
        goto out;
    out->webhook = arena_strdup(a, webhook);
    out->secret = arena_strdup(a, secret);
    if (!out->webhook || !out->secret)
        rc = err_set(err, ERR_NOMEM, "out of memory");
out:
    json_decref(root);
    return rc;
}

int api_alert_query_parse(struct arena *a, const char *json, struct api_params *out,
                          struct err *err)
{
    json_error_t jerr;
    memset(out, 0, sizeof *out);
    json_t *root = json_loads(json ? json : "", JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return err_set(err, ERR_INVALID, "the stored query is not JSON: %.120s", jerr.text);
    int rc = query_read(a, root, out, err);
    json_decref(root);
    return rc;
}
