/* libFuzzer harness: one JSONL line → struct article → normalisation,
 * without a store (ingest_article_from_json + ingest_normalize(NULL, ...)).
 * Invariants: an accepted article has url and title, a canonical url that
 * is its own canonical form, a time in range and not in the future, a
 * language that is "" or two lower-case letters, fields within
 * LIMIT_FIELD_BYTES, an image URL that is NULL or an absolute http(s) URL
 * without tabs or line breaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "ingest/imports/imports_internal.h"
#include "ingest/ingest.h"
#include "util/arena.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/vocab.h"

#define FUZZ_NOW ((int64_t)1700000000)

static void check_len(const char *s)
{
    if (s && strlen(s) > LIMIT_FIELD_BYTES)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *v = json_loadb((const char *)data, size, 0, &jerr);
    if (!v)
        return 0;
    struct arena a;
    arena_init(&a, 64 << 20);
    struct article art;
    struct err err;
    err_clear(&err);
    struct ingest_options opt = {0};
    opt.now = FUZZ_NOW;
    if (ingest_article_from_json(&a, v, &art, &err) == 0 &&
        ingest_normalize(NULL, &a, &art, &opt, &err) == 0) {
        if (!art.url || !art.title || !art.canonical_url || !art.domain)
            abort();
        char *again;
        if (ingest_url_canonical(&a, art.canonical_url, &again, NULL) != 0 ||
            strcmp(again, art.canonical_url) != 0)
            abort();
        if (art.published_at < TIMEFMT_MIN || art.published_at > FUZZ_NOW + 86400)
            abort();
        if (art.language[0] &&
            (art.language[0] < 'a' || art.language[0] > 'z' || art.language[1] < 'a' ||
             art.language[1] > 'z' || art.language[2] != '\0'))
            abort();
        if (art.category && !vocab_is_category(art.category))
            abort();
        const char *img = art.url_to_image;
        if (img && (strpbrk(img, "\t\r\n") || ingest_url_canonical(&a, img, NULL, NULL) != 0))
            abort();
        while (img && *img == ' ')
            img++;
        if (img && strncasecmp(img, "http://", 7) != 0 && strncasecmp(img, "https://", 8) != 0)
            abort();
        check_len(art.title);
        check_len(art.description);
        check_len(art.content);
        check_len(art.author);
        check_len(art.source_name);
    }
    arena_release(&a);
    json_decref(v);
    return 0;
}
