/* GET /v2/top-headlines/sources and the legacy /v2/sources (API.md §2):
 * the publishers with headlines, filtered, ordered by id, not paged. */
#include "api/internal.h"
#include "util/limits.h"

#include <stdlib.h>

#include "util/banned.h"

void api_sources(struct api_call *c)
{
    char country[3], language[3];
    bool country_given, language_given;
    struct source_filter f = {0};
    if (api_get_category(c, &f.category) < 0 ||
        api_get_two_letters(c, "language", language, &language_given) < 0 ||
        api_get_two_letters(c, "country", country, &country_given) < 0)
        return;
    if (language_given)
        f.language = language;
    if (country_given)
        f.country = country;
    f.headlines_only = true;

    struct source *srcs;
    size_t n;
    struct err err;
    err_clear(&err);
    if (store_sources_list(c->api->store, &c->arena, &f, &srcs, &n, &err) < 0) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    struct buf b;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    api_render_sources(&b, srcs, n);
    api_respond_rendered(c, &b);
}
