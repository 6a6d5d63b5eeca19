/* libFuzzer harness: the framing of the file importers (issue 29 item 5) —
 * what splits a file into records before a record parser (fuzz_jsonl.c,
 * fuzz_opml.c) sees one: lines (LF, CRLF, blank, over-long, unterminated
 * last line), one JSON response object instead of lines, and what is
 * reported and skipped. On a real store in a temporary directory, built
 * once per process.
 * Input: byte 0 picks the importer, the rest is the file:
 *   0  newsd import: JSONL articles or a NewsAPI response (ingest_import_file)
 *   1  newsd sources import: {"sources":[...]} or JSONL (ingest_sources_import)
 *   2  newsd feeds import: JSONL or OPML (cmd_feeds_import, src/cmd/feeds_io.c)
 * Invariants: an article import returns 0 (the file is readable and the
 * store works) and the store then holds exactly `imported` more articles;
 * the others return and leave the store working. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd/feeds_internal.h"
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/netpolicy.h"

#define FUZZ_NOW ((int64_t)1700000000)
#define FUZZ_IMPORT_MAX (1 << 20)

static char dir[64];
static char file[96];
static struct store *store;
static FILE *devnull;

static void fuzz_teardown(void)
{
    char cmd[128];
    store_close(store);
    if (devnull)
        fclose(devnull);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_import: could not remove %s\n", dir);
}

static void fuzz_setup(void)
{
    struct err err;
    err_clear(&err);
    snprintf(dir, sizeof dir, "/tmp/newsd-fuzz-import-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(file, sizeof file, "%s/input", dir);
    CHECK(store_open(&store, dir, &err) == 0);
    devnull = fopen("/dev/null", "w");
    CHECK(devnull != NULL);
    atexit(fuzz_teardown);
}

static int64_t articles(void)
{
    int64_t n = -1;
    struct err err;
    err_clear(&err);
    CHECK(store_articles_count(store, &n, &err) == 0);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!store)
        fuzz_setup();
    if (size == 0 || size > FUZZ_IMPORT_MAX)
        return 0;
    FILE *f = fopen(file, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data + 1, 1, size - 1, f) == size - 1);
    CHECK(fclose(f) == 0);

    struct err err;
    err_clear(&err);
    switch (data[0] % 3) {
    case 0: {
        struct ingest_options io = {.headlines = true, .now = FUZZ_NOW, .report = devnull};
        struct ingest_stats st = {0};
        int64_t before = articles();
        CHECK(ingest_import_file(store, file, &io, &st, &err) == 0);
        CHECK(articles() == before + (int64_t)st.imported);
        break;
    }
    case 1: {
        size_t n = 0;
        if (ingest_sources_import(store, file, &n, &err) == 0)
            CHECK(n <= size);
        break;
    }
    default: {
        struct arena ar;
        struct netpolicy policy;
        netpolicy_init(&policy);
        arena_init(&ar, 1 << 16);
        (void)cmd_feeds_import(store, &ar, &policy, file);
        arena_release(&ar);
        break;
    }
    }
    (void)articles(); /* the store still answers */
    return 0;
}
