/* libFuzzer harness: feed parsing (ingest/feeds/feeds.h) on arbitrary bytes —
 * XML (RSS, RDF, Atom) through libxml2 in recover mode, JSON Feed through
 * jansson, gzip bodies, encodings. Invariants: every string the parser
 * returns is non-empty valid UTF-8 within its FEED_MAX_* bound, links are
 * http(s), counts are bounded, and a failure leaves the feed zeroed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/feeds/feeds.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/utf8.h"

static void check_str(const char *s, size_t max)
{
    if (!s)
        return;
    size_t n = strlen(s);
    if (n == 0 || n > max || !utf8_valid(s, n))
        abort();
}

static void check_url(const char *u)
{
    if (!u)
        return;
    check_str(u, FEED_MAX_URL_BYTES);
    if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    arena_init(&a, 64 << 20);
    struct feed f;
    struct err e;
    err_clear(&e);
    int rc =
        feed_parse(&a, (const char *)data, size, NULL, "http://example.com/dir/feed.xml", &f, &e);
    if (rc == 0) {
        if (f.format == FEED_FORMAT_UNKNOWN || f.n_items > FEED_MAX_ITEMS)
            abort();
        check_str(f.title, FEED_MAX_TITLE_BYTES);
        check_str(f.language, FEED_MAX_NAME_BYTES);
        check_url(f.link);
        for (size_t i = 0; i < f.n_items; i++) {
            const struct feed_item *it = &f.items[i];
            check_str(it->title, FEED_MAX_TITLE_BYTES);
            check_str(it->description, FEED_MAX_DESCRIPTION_BYTES);
            check_str(it->content, FEED_MAX_CONTENT_BYTES);
            check_str(it->author, FEED_MAX_NAME_BYTES);
            check_str(it->guid, FEED_MAX_GUID_BYTES);
            check_url(it->link);
            check_url(it->image_url);
        }
    } else if (rc != ERR_PARSE && rc != ERR_TOO_LARGE && rc != ERR_NOMEM) {
        abort();
    } else if (f.n_items || f.items || f.title || e.msg[0] == '\0') {
        abort();
    }
    arena_release(&a);
    return 0;
}
