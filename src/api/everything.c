/* GET /v2/everything (API.md §2): search the whole archive. Its filters
 * are shared with the live stream of the same filters (stream.c). */
#include "api/cursor.h"
#include "api/internal.h"

#include <stdint.h>
#include <string.h>

#include "util/banned.h"

int api_everything_filters(struct api_call *c, struct index_request *req)
{
    /* Unsupported parameters come before the scope check (§5 order). */
    if (api_first_value(c, "country"))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The country param is not currently supported on the /everything "
                        "endpoint.");
    if (api_first_value(c, "category"))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The category param is not currently supported on the /everything "
                        "endpoint.");
    if (!api_first_value(c, "q") && !api_first_value(c, "qintitle") &&
        !api_first_value(c, "sources") && !api_first_value(c, "domains"))
        return api_fail(c, API_ERR_PARAMETERS_MISSING,
                        "Required parameters are missing, the scope of your search is too broad. "
                        "Please set any of the following required parameters and try again: q, "
                        "qInTitle, sources, domains.");
    if (api_get_query(c, "q", "q", (struct query_node **)&req->q) < 0 ||
        api_get_query(c, "qintitle", "qInTitle", (struct query_node **)&req->q_title) < 0 ||
        api_get_search_in(c, &req->q_fields) < 0 ||
        api_get_sources(c, (const char ***)&req->sources, &req->n_sources) < 0 ||
        api_get_domains(c, "domains", "domains", (const char ***)&req->domains, &req->n_domains) <
            0 ||
        api_get_domains(c, "excludedomains", "excludeDomains",
                        (const char ***)&req->exclude_domains, &req->n_exclude_domains) < 0)
        return -1;
    return 0;
}

/* cursor (an extension, api/cursor.h): "*" starts a newest-first walk,
 * a cursor this search's previous page gave goes on below it. */
static int get_cursor(struct api_call *c, struct index_request *req)
{
    const struct api_param *p = api_params_first(&c->params, "cursor");
    if (!p)
        return 0;
    if (api_first_value(c, "page"))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The page parameter cannot be combined with cursor: the cursor says "
                        "where the next page starts.");
    if (req->sort != INDEX_SORT_PUBLISHED_DESC)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "Cursor paging follows sortBy=publishedAt (newest first): relevancy and "
                        "popularity orders change as articles arrive, so no place in them stays "
                        "put. Page through them with page, up to the result window.");
    if (c->feed != API_FEED_NONE)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The cursor parameter cannot be combined with format: cursor pages are "
                        "NewsAPI's JSON with a nextCursor.");
    c->walk = true;
    if (p->len == 1 && p->value[0] == '*')
        return 0;
    return api_cursor_below(c, p, req,
                            "pass cursor=* to start a walk, then each response's nextCursor",
                            "pageSize as it was when the walk started");
}

int api_cursor_below(struct api_call *c, const struct api_param *p, struct index_request *req,
                     const char *how_to_start, const char *keep)
{
    struct api_cursor cur;
    if (!api_cursor_decode(p->value, p->len, &cur))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The cursor parameter is not a cursor newsd gave: %s.", how_to_start);
    if (cur.search != api_cursor_search(&c->params))
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "This cursor belongs to another search: keep every parameter but cursor "
                        "and %s.",
                        keep);
    req->below = true;
    req->id_below = cur.id;
    return 0;
}

void api_everything(struct api_call *c)
{
    struct index_request req = {0};
    bool from_given, dedupe;
    size_t page, size;
    if (api_first_value(c, "similarto")) { /* an extension: a search of its own */
        api_similar(c);
        return;
    }
    if (api_everything_filters(c, &req) < 0 ||
        api_get_dates(c, &req.from, &req.to, &from_given) < 0 ||
        api_get_language(c, &req.language) < 0 ||
        api_get_sort(c, INDEX_SORT_PUBLISHED_DESC, &req.sort) < 0 ||
        api_get_paging(c, 100, &page, &size) < 0 || api_get_feed_format(c) < 0 ||
        get_cursor(c, &req) < 0 || api_get_facets(c) < 0 || api_get_dedupe(c, &dedupe) < 0 ||
        (dedupe && c->walk &&
         api_fail(c, API_ERR_PARAMETER_INVALID,
                  "The dedupe parameter cannot be combined with cursor: page through the "
                  "stories with page.") < 0) ||
        (dedupe && c->facets &&
         api_fail(c, API_ERR_PARAMETER_INVALID,
                  "The dedupe parameter cannot be combined with facets: facets count "
                  "articles, ask for them without dedupe.") < 0) ||
        api_check_plan(c, page, size, &req.from, from_given, &req.to) < 0)
        return;
    api_respond_matches(c, &req, page, size, dedupe);
}
