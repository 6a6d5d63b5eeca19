/* similarTo=URL on /v2/everything (an extension, docs/api.md §9 "More like
 * this"): the articles most like one stored article, its story's other
 * articles first, then its topic (index_similar). The answer is NewsAPI's
 * articles response; this file validates the request and finds the
 * article. */
#include "api/internal.h"

#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/limits.h"
#include "util/banned.h"

/* What similarTo does not take (yet): the search is the article's, so a
 * query or a source filter would be a second search mixed in. */
static const struct {
    const char *name, *display;
} not_with[] = {
    {"q", "q"},
    {"qintitle", "qInTitle"},
    {"searchin", "searchIn"},
    {"sources", "sources"},
    {"domains", "domains"},
    {"excludedomains", "excludeDomains"},
    {"language", "language"},
    {"cursor", "cursor"},
    {"dedupe", "dedupe"},
};

static int check_alone(struct api_call *c)
{
    for (size_t i = 0; i < sizeof not_with / sizeof not_with[0]; i++)
        if (api_first_value(c, not_with[i].name))
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %s parameter cannot be combined with similarTo: the search is "
                            "the article's (its story, then its topic). similarTo takes from, "
                            "to, page, pageSize and format.",
                            not_with[i].display);
    const char *sort = api_first_value(c, "sortby");
    if (sort && strcmp(sort, "relevancy") != 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The sortBy parameter of similarTo can only be relevancy: its story "
                        "first, then by how close each article is.");
    return 0;
}

/* The stored article at similarTo's address that the key's plan shows:
 * 0 with *art, or -1 with the error answered. */
static int find_article(struct api_call *c, struct article *art)
{
    const char *url = api_first_value(c, "similarto");
    char *canon = NULL, *domain = NULL;
    struct err err;
    int rc;

    err_clear(&err);
    if (strlen(url) > LIMIT_URL_BYTES || ingest_url_canonical(&c->arena, url, &canon, &domain) < 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The similarTo parameter must be the address (http or https) of a stored "
                        "article, as its url.");
    c->searched = true;
    rc = index_article_by_url(c->api->index, &c->arena, canon, art, &err);
    int64_t from = INT64_MIN, to = INT64_MAX;
    api_plan_window(&c->auth.plan, c->now, &from, &to);
    if (rc == ERR_NOTFOUND || (rc == 0 && (art->published_at < from || art->published_at > to)))
        return api_fail(c, API_ERR_ARTICLE_NOT_FOUND, NULL);
    if (rc < 0)
        return api_fail_index(c, rc, &err);
    return 0;
}

void api_similar(struct api_call *c)
{
    struct index_request req = {0};
    struct index_result res;
    struct article art;
    bool from_given;
    size_t page, size;
    struct err err;

    err_clear(&err);
    /* NewsAPI's unsupported parameters first, as /v2/everything */
    if (api_first_value(c, "country") || api_first_value(c, "category")) {
        api_everything_filters(c, &req);
        return;
    }
    if (check_alone(c) < 0 || api_get_dates(c, &req.from, &req.to, &from_given) < 0 ||
        api_get_paging(c, 100, &page, &size) < 0 || api_get_feed_format(c) < 0 ||
        api_check_plan(c, page, size, &req.from, from_given, &req.to) < 0 ||
        find_article(c, &art) < 0)
        return;
    req.q_fields = INDEX_FIELD_ALL;
    req.sort = INDEX_SORT_RELEVANCY;
    req.offset = (page - 1) * size;
    req.limit = size;
    req.deadline_ms = api_deadline(c);
    int rc = index_similar(c->api->index, &c->arena, &req, &art, &res, &err);
    if (rc < 0) {
        api_fail_index(c, rc, &err);
        return;
    }
    api_respond_result(c, &req, &res); /* similarTo takes no facets */
}
