/* libFuzzer harness: OPML feed lists (ingest/feeds/feeds.h) on arbitrary bytes
 * through libxml2 (no network, DOCTYPE refused). Invariants: a success
 * gives at most OPML_MAX_OUTLINES feeds, each with a url, every string
 * non-empty valid UTF-8, a folder category one of NewsAPI's; a failure is
 * one of the documented codes with a message and no feeds; what
 * opml_write makes of the feeds parses again to as many feeds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/feeds/feeds.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/utf8.h"
#include "util/vocab.h"

static void check_str(const char *s)
{
    if (s)
        CHECK(*s && utf8_valid(s, strlen(s)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena a;
    arena_init(&a, 256 << 20);
    struct opml_feed *feeds = NULL;
    size_t n = 0;
    struct err e;
    err_clear(&e);
    (void)opml_sniff((const char *)data, size);
    int rc = opml_parse(&a, (const char *)data, size, &feeds, &n, &e);
    if (rc == 0) {
        CHECK(n <= OPML_MAX_OUTLINES);
        struct feed_record *recs = n ? calloc(n, sizeof *recs) : NULL;
        CHECK(n == 0 || recs);
        for (size_t i = 0; i < n; i++) {
            const struct opml_feed *f = &feeds[i];
            CHECK(f->url);
            const char *strs[] = {f->url,      f->title,    f->html_url,  f->source,   f->country,
                                  f->category, f->language, f->headlines, f->interval, f->paused};
            for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
                check_str(strs[k]);
            if (f->folder_category)
                CHECK(vocab_category(f->folder_category) == f->folder_category);
            recs[i].url = f->url;
            recs[i].title = f->title;
            recs[i].site_url = f->html_url;
            recs[i].source_id = f->source;
            recs[i].enabled = true;
        }
        /* Written back, the same number of feeds, the same urls. */
        struct buf b;
        buf_init(&b, 0);
        opml_write(&b, recs, n);
        CHECK(!buf_error(&b));
        struct opml_feed *again = NULL;
        size_t n2 = 0;
        CHECK(opml_parse(&a, b.data, b.len, &again, &n2, &e) == 0);
        CHECK(n2 == n);
        for (size_t i = 0; i < n; i++)
            CHECK(strcmp(again[i].url, feeds[i].url) == 0 || strchr(feeds[i].url, 0x7f));
        buf_release(&b);
        free(recs);
    } else {
        CHECK(rc == ERR_PARSE || rc == ERR_TOO_LARGE || rc == ERR_NOMEM);
        CHECK(feeds == NULL && n == 0 && e.msg[0] != '\0');
    }
    arena_release(&a);
    return 0;
}
