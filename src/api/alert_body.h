/* The body of POST /v2/alerts (docs/api.md "Webhook alerts"):
 *   {"query": {"q": …, "qInTitle": …, "searchIn": …, "sources": …,
 *              "domains": …, "excludeDomains": …, "language": …},
 *    "webhook": "https://…", "secret": "…", "dedupe": true}
 * turned into the parameters /v2/everything would get from a query string
 * (api/params.h: names lower-cased, an empty value absent, a list of
 * strings as repeated values), so that the query is validated by the very
 * validators of /v2/everything, and into the canonical JSON of the query
 * that the store keeps (api_alert_query_parse reads it back).
 *
 * Hostile bytes: any JSON is refused cleanly (duplicate keys, \u0000,
 * nesting, non-string values); sizes are bounded by the caller
 * (LIMIT_ALERT_BODY_BYTES). Pure functions over an arena: fuzzed by
 * fuzz/fuzz_alert_body.c. */
#ifndef NEWSD_API_ALERT_BODY_H
#define NEWSD_API_ALERT_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "api/params.h"
#include "util/arena.h"
#include "util/err.h"

struct api_alert_body {
    struct api_params query; /* the query's parameters */
    const char *query_json;  /* canonical JSON of the query (arena) */
    const char *webhook;     /* as given (checked: http(s), length) */
    const char *secret;
    bool dedupe; /* a story is delivered once (absent or null: false) */
};

/* Parse body[0..len). 0; ERR_NOTFOUND when query, webhook or secret is
 * missing (parametersMissing); ERR_INVALID with a message naming the
 * field (parameterInvalid); ERR_NOMEM. Messages are sentences fit for the
 * client. */
int api_alert_body_parse(struct arena *a, const char *body, size_t len, struct api_alert_body *out,
                         struct err *err);

/* The parameters of a stored query (query_json of api_alert_body_parse):
 * the same rules, ERR_INVALID when it is not such an object. */
int api_alert_query_parse(struct arena *a, const char *json, struct api_params *out,
                          struct err *err);

#endif
