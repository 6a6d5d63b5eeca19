/* libFuzzer harness: the body of POST /v2/alerts (api/alert_body.h) —
 * hostile JSON into parameters and the canonical query, which must read
 * back as the same parameters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/alert_body.h"
#include "check.h"
#include "util/arena.h"
#include "util/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    struct api_alert_body body;
    struct api_params again;
    struct err err;
    if (size > LIMIT_ALERT_BODY_BYTES)
        return 0; /* the HTTP layer reads no more */
    arena_init(&a, 1 << 22);
    err_clear(&err);
    int rc = api_alert_body_parse(&a, (const char *)data, size, &body, &err);
    CHECK(rc == 0 || rc == ERR_INVALID || rc == ERR_NOTFOUND || rc == ERR_NOMEM);
    if (rc == 0) {
        CHECK(body.webhook && body.webhook[0] && body.secret && body.secret[0]);
        for (size_t i = 0; i < body.query.n; i++) {
            CHECK(body.query.items[i].len > 0);
            CHECK(strlen(body.query.items[i].value) == body.query.items[i].len);
            for (const char *c = body.query.items[i].name; *c; c++)
                CHECK(!(*c >= 'A' && *c <= 'Z')); /* names are lower case */
        }
        /* What the store keeps reads back as the same parameters. */
        CHECK(api_alert_query_parse(&a, body.query_json, &again, &err) == 0);
        CHECK(again.n == body.query.n);
        for (size_t i = 0; i < again.n; i++) {
            size_t j = 0;
            while (j < body.query.n && (strcmp(again.items[i].name, body.query.items[j].name) ||
                                        strcmp(again.items[i].value, body.query.items[j].value)))
                j++;
            CHECK(j < body.query.n);
        }
    }
    arena_release(&a);
    return 0;
}
