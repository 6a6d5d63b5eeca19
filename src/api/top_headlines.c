/* GET /v2/top-headlines (API.md §2): live headlines — articles marked as
 * headlines, published within the live window that ends now or at the newest
 * headline when that is older (so a store that is not being fed still shows
 * its latest headlines). */
#include "api/internal.h"

#include <stdint.h>
#include <string.h>

#include "util/vocab.h"

#include "util/banned.h"

/* [start, end] of the live window, or false when there are no headlines. */
static int live_window(struct api_call *c, int64_t *start, int64_t *end)
{
    int64_t newest;
    struct err err;
    err_clear(&err);
    int rc = index_newest_headline(c->api->index, INT64_MAX, &newest, &err);
    if (rc == ERR_NOTFOUND) {
        *end = c->now;
    } else if (rc == ERR_BUSY) {
        return api_fail_building(c);
    } else if (rc < 0) {
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    } else {
        *end = newest < c->now ? newest : c->now;
    }
    *start = *end - c->api->cfg.live_window_seconds;
    return 0;
}

void api_top_headlines(struct api_call *c)
{
    const char *sources = api_first_value(c, "sources");
    const char *country = api_first_value(c, "country");
    const char *category = api_first_value(c, "category");
    if (!sources && !api_first_value(c, "q") && !api_first_value(c, "qintitle") &&
        !api_first_value(c, "language") && !country && !category) {
        api_fail(c, API_ERR_PARAMETERS_MISSING,
                 "Required parameters are missing. Please set any of the following parameters "
                 "and try again: sources, q, language, country, category.");
        return;
    }
    if (sources && (country || category)) {
        api_fail(c, API_ERR_PARAMETERS_INCOMPATIBLE, NULL);
        return;
    }

    struct index_request req = {0};
    char country_code[3], language_code[3];
    bool country_given, language_given, dedupe;
    size_t page, size;
    req.q_fields = INDEX_FIELD_ALL;
    if (api_get_two_letters(c, "country", country_code, &country_given) < 0 ||
        api_get_category(c, &req.category) < 0 ||
        api_get_sources(c, (const char ***)&req.sources, &req.n_sources) < 0 ||
        api_get_query(c, "q", "q", (struct query_node **)&req.q) < 0 ||
        api_get_query(c, "qintitle", "qInTitle", (struct query_node **)&req.q_title) < 0 ||
        api_get_two_letters(c, "language", language_code, &language_given) < 0 ||
        api_get_sort(c, INDEX_SORT_PUBLISHED_ASC, &req.sort) < 0 ||
        api_get_paging(c, 20, &page, &size) < 0 || api_get_feed_format(c) < 0 ||
        api_get_dedupe(c, &dedupe) < 0)
        return;
    if (country_given)
        req.country = country_code;
    if (language_given)
        req.language = vocab_language_alias(language_code);
    req.headlines_only = true;
    if (live_window(c, &req.from, &req.to) < 0)
        return;
    if (api_check_plan(c, page, size, &req.from, false, &req.to) < 0)
        return;
    api_respond_matches(c, &req, page, size, dedupe);
}
