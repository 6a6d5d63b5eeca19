/* Coverage over time and facets (issue 26, docs/api.md §6): GET
 * /v2/everything/counts, and facets= on /v2/everything and on /counts.
 * Both are extensions: a request without their parameters is answered as
 * before, byte for byte. A counts request is one request against the
 * key's quota and rate limit, like the /v2/everything search it extends. */
#include "api/interval.h"
#include "api/render.h"
#include "api/internal.h"
#include "util/jw.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/tzif.h"

#include <string.h>

#include "util/banned.h"

#define FACET_SIZE_DEFAULT 10

int api_get_facets(struct api_call *c)
{
    const char *size = api_first_value(c, "facetsize");
    const char **items;
    size_t n;
    c->facets = 0;
    c->facet_size = FACET_SIZE_DEFAULT;
    int given = api_get_list(c, "facets", &items, &n);
    if (given < 0)
        return -1;
    if (!given) {
        if (size)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The facetSize parameter needs facets: say which ones, e.g. "
                            "facets=source,language.");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        int f = 0;
        while (f < INDEX_FACET_N && strcmp(items[i], index_facet_name((enum index_facet)f)))
            f++;
        if (f == INDEX_FACET_N)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The facets parameter takes a comma list of source, domain, "
                            "language, country, category and author; %.40s is none of them.",
                            items[i]);
        c->facets |= 1u << f;
    }
    if (size) {
        uint64_t v;
        if (!api_parse_digits(size, strlen(size), &v) || v < 1 || v > LIMIT_FACET_SIZE)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The facetSize parameter must be a whole number from 1 to %d.",
                            LIMIT_FACET_SIZE);
        c->facet_size = (size_t)v;
    }
    if (c->facets && c->feed != API_FEED_NONE)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The facets parameter cannot be combined with format: a feed has no "
                        "place for them.");
    return 0;
}

/* A source's name from the catalogue; NULL when it has none. */
static const char *source_name(struct api_call *c, const char *id)
{
    struct source src;
    struct err err;
    err_clear(&err);
    if (store_source_get(c->api->store, &c->arena, id, &src, &err) < 0)
        return NULL;
    return src.name;
}

static void write_facets(struct api_call *c, struct jw *w, const struct index_facet_top *top)
{
    jw_key(w, "facets");
    jw_obj_begin(w);
    for (int f = 0; f < INDEX_FACET_N; f++) {
        if (!(c->facets >> f & 1))
            continue;
        jw_key(w, index_facet_name((enum index_facet)f));
        jw_arr_begin(w);
        for (size_t i = 0; i < top[f].n; i++) {
            const struct index_facet_value *v = &top[f].v[i];
            jw_obj_begin(w);
            jw_key(w, "value");
            jw_strn(w, v->value, v->len);
            if (f == INDEX_FACET_SOURCE) {
                jw_key(w, "name");
                jw_str(w, source_name(c, v->value));
            }
            jw_key(w, "count");
            jw_uint(w, v->count);
            jw_obj_end(w);
        }
        jw_arr_end(w);
    }
    jw_obj_end(w);
}

/* The facets of req's matches into top; -1 with the error answered. */
static int facets_run(struct api_call *c, const struct index_request *req,
                      struct index_facet_top top[INDEX_FACET_N])
{
    struct err err;
    err_clear(&err);
    memset(top, 0, INDEX_FACET_N * sizeof *top);
    if (req->from > req->to)
        return 0; /* an empty window: no matches, no values */
    struct index_request timed = *req;
    timed.deadline_ms = api_deadline(c);
    int rc = index_facets(c->api->index, &c->arena, &timed, c->facets, c->facet_size, top, &err);
    return rc < 0 ? api_fail_index(c, rc, &err) : 0;
}

int api_facets_append(struct api_call *c, const struct index_request *req, struct buf *b)
{
    struct index_facet_top top[INDEX_FACET_N];
    if (!c->facets || buf_error(b) || b->len == 0)
        return 0;
    if (facets_run(c, req, top) < 0)
        return -1;
    /* ,"facets":{…} before the object's closing brace: the page's bytes
     * before it are the ones a request without facets gets. */
    struct jw w;
    b->len--;
    jw_init(&w, b);
    w.depth = 1;
    w.need_comma[1] = true;
    write_facets(c, &w, top);
    buf_putc(b, '}');
    return 0;
}

/* The parameters of a page mean nothing to counts: refused, not ignored. */
static int refuse_page_params(struct api_call *c)
{
    static const char *const names[][2] = {{"sortby", "sortBy"},
                                           {"page", "page"},
                                           {"pagesize", "pageSize"},
                                           {"cursor", "cursor"},
                                           {"format", "format"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (api_first_value(c, names[i][0]))
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %s parameter means nothing on /v2/everything/counts, which "
                            "counts every match: drop it.",
                            names[i][1]);
    }
    return 0;
}

static int get_interval(struct api_call *c, enum api_interval *out)
{
    const struct api_param *p = api_params_first(&c->params, "interval");
    *out = API_INTERVAL_DAY;
    if (p && !api_interval_parse(p->value, p->len, out))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The interval parameter must be one of hour, day, week, month.");
    return 0;
}

static int get_tz(struct api_call *c, struct tzif *z, const char **name)
{
    const struct api_param *p = api_params_first(&c->params, "tz");
    *name = "UTC";
    if (!p)
        return tzif_load(NULL, "UTC", 3, z) < 0 ? api_fail(c, API_ERR_UNEXPECTED, NULL) : 0;
    int rc = tzif_load(NULL, p->value, p->len, z);
    if (rc == ERR_NOMEM)
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    if (rc < 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The tz parameter must be a UTC offset such as +05:30 or a time zone "
                        "name such as Europe/Berlin; %.64s is neither.",
                        p->value);
    *name = p->value;
    return 0;
}

/* Without from, the window is this many buckets' worth before to. */
static int64_t default_span(enum api_interval iv)
{
    switch (iv) {
    case API_INTERVAL_HOUR:
        return 48 * 3600;
    case API_INTERVAL_DAY:
        return 30 * 86400;
    case API_INTERVAL_WEEK:
        return 26 * 7 * 86400;
    case API_INTERVAL_MONTH:
        break;
    }
    return 365 * 86400;
}

static void respond_counts(struct api_call *c, enum api_interval iv, const char *tz,
                           const int64_t *bounds, size_t nb, const uint64_t *counts,
                           const uint64_t *totals, const struct index_facet_top *top)
{
    struct buf b;
    struct jw w;
    uint64_t sum = 0;
    for (size_t i = 0; i < nb; i++)
        sum += counts[i];
    api_respond_ok_begin(&w, &b);
    jw_key(&w, "totalResults");
    jw_uint(&w, sum);
    jw_key(&w, "interval");
    jw_str(&w, api_interval_name(iv));
    jw_key(&w, "tz");
    jw_str(&w, tz);
    jw_key(&w, "counts");
    jw_arr_begin(&w);
    for (size_t i = 0; i < nb; i++) {
        char at[TIMEFMT_ISO_LEN];
        timefmt_iso8601(bounds[i], at);
        jw_obj_begin(&w);
        jw_key(&w, "from");
        jw_str(&w, at);
        jw_key(&w, "count");
        jw_uint(&w, counts[i]);
        jw_key(&w, "total");
        jw_uint(&w, totals[i]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    if (c->facets)
        write_facets(c, &w, top);
    jw_obj_end(&w);
    api_respond_rendered(c, &b);
}

void api_everything_counts(struct api_call *c)
{
    struct index_request req = {0};
    enum api_interval iv;
    const char *tz_name;
    bool from_given;
    struct tzif *z = arena_alloc(&c->arena, sizeof *z);
    if (z == NULL) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    if (api_everything_filters(c, &req) < 0 ||
        api_get_dates(c, &req.from, &req.to, &from_given) < 0 ||
        api_get_language(c, &req.language) < 0 || refuse_page_params(c) < 0 ||
        get_interval(c, &iv) < 0 || get_tz(c, z, &tz_name) < 0 || api_get_facets(c) < 0 ||
        api_check_plan(c, 1, 1, &req.from, from_given, &req.to) < 0)
        return;
    req.sort = INDEX_SORT_PUBLISHED_DESC;
    if (req.to == INT64_MAX)
        req.to = c->now; /* without to, the buckets end now */
    if (req.from == INT64_MIN)
        req.from = req.to - default_span(iv) + 1;
    if (req.from < TIMEFMT_MIN)
        req.from = TIMEFMT_MIN;

    size_t nb = 0;
    int64_t *bounds = arena_calloc(&c->arena, LIMIT_COUNT_BUCKETS + 1, sizeof *bounds);
    uint64_t *counts = arena_calloc(&c->arena, LIMIT_COUNT_BUCKETS, sizeof *counts);
    uint64_t *totals = arena_calloc(&c->arena, LIMIT_COUNT_BUCKETS, sizeof *totals);
    if (bounds == NULL || counts == NULL || totals == NULL) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    if (req.from <= req.to &&
        !api_interval_bounds(iv, z, req.from, req.to, LIMIT_COUNT_BUCKETS, bounds, &nb)) {
        char from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
        timefmt_iso8601(req.from, from);
        timefmt_iso8601(req.to, to);
        api_fail(c, API_ERR_PARAMETER_INVALID,
                 "Too many buckets: interval=%s from %s to %s needs more than %d of them. Use "
                 "a longer interval or a shorter from-to window.",
                 api_interval_name(iv), from, to, LIMIT_COUNT_BUCKETS);
        return;
    }

    struct err err;
    struct index_facet_top top[INDEX_FACET_N];
    memset(top, 0, sizeof top);
    err_clear(&err);
    c->searched = true;
    req.deadline_ms = api_deadline(c);
    int rc = nb ? index_counts(c->api->index, &c->arena, &req, bounds, nb, counts, &err) : 0;
    if (rc == 0 && nb && (req.q || req.q_title)) {
        /* total: the same scope without q (and qInTitle), for shares */
        struct index_request scope = req;
        scope.q = NULL;
        scope.q_title = NULL;
        rc = index_counts(c->api->index, &c->arena, &scope, bounds, nb, totals, &err);
    } else if (rc == 0) {
        memcpy(totals, counts, nb * sizeof *counts);
    }
    if (rc < 0) {
        api_fail_index(c, rc, &err);
        return;
    }
    if (c->facets && facets_run(c, &req, top) < 0)
        return;
    respond_counts(c, iv, tz_name, bounds, nb, counts, totals, top);
}
