/* libFuzzer harness: the request-parameter path — query-string splitting and
 * decoding, list splitting, and content rendering of the decoded values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/params.h"
#include "api/render.h"
#include "article/json.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    arena_init(&a, 1 << 20);
    struct api_params p;
    if (api_params_parse(&a, (const char *)data, size, &p) == 0) {
        for (size_t i = 0; i < p.n; i++) {
            if (!p.items[i].len || !p.items[i].name[0])
                abort(); /* empty values and names are dropped */
            for (const char *c = p.items[i].name; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                    abort(); /* names are lower case */
            const char **items;
            size_t n;
            api_list_split(&a, p.items[i].value, &items, &n);
            if (utf8_valid(p.items[i].value, p.items[i].len)) {
                struct buf b;
                buf_init(&b, 0);
                article_json_content(&b, p.items[i].value);
                buf_release(&b);
            }
        }
        if (p.n)
            api_params_joined(&a, &p, p.items[0].name, ",");
    }
    arena_release(&a);
    return 0;
}
