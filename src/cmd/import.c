/* newsd import and newsd sources import (API.md §7, §8). */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "util/vocab.h"

#include "util/banned.h"

static void import_usage(FILE *f)
{
    fprintf(f, "usage: newsd import [--store LOC] [--create] [--config FILE] [--headlines]\n"
               "                    [--country CC] [--category CAT] [--language LL] [--progress]\n"
               "                    FILE...   (- = stdin)\n"
               "       newsd import --warc [--store LOC] [--create] [--config FILE]\n"
               "                    [--progress-every SECONDS] FILE...\n"
               "  --store           the store (else $NEWSD_STORE, else the config file's\n"
               "                    [server] store, else ./newsd-data)\n"
               "  --create          make the store when it does not exist (needed for a\n"
               "                    --store or $NEWSD_STORE path: a typo must not become a store)\n"
               "  --config          the config file (else $NEWSD_CONFIG, else\n"
               "                    /etc/newsd/newsd.conf when it exists)\n"
               "  --progress        print \"committed N\" on stderr after each committed batch\n"
               "  --warc            FILEs are WARC (0.17 to 1.1) or ARC files (plain or .gz,\n"
               "                    e.g. Common Crawl's CC-NEWS): each HTML page that holds an\n"
               "                    article is imported\n"
               "  --progress-every  seconds between progress lines of a WARC import (5)\n");
}

static int valid_two_letters(const char *s)
{
    return strlen(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z';
}

/* --progress-every SECONDS into the int64_t milliseconds at to. */
static int take_progress_every(const char *value, void *to)
{
    char *end = NULL;
    double secs = strtod(value, &end);
    if (!end || *end || !(secs > 0 && secs <= 86400)) {
        cmd_fail("import: --progress-every must be a number of seconds, e.g. 5");
        return CMD_EXIT_USAGE;
    }
    int64_t ms = (int64_t)(secs * 1000.0 + 0.5);
    *(int64_t *)to = ms == 0 ? 1 : ms;
    return CMD_EXIT_OK;
}

int cmd_import(int argc, char **argv)
{
    const char *store_opt = NULL, *config_opt = NULL;
    struct ingest_options io = {0};
    bool warc = false, progress = false, create = false;
    const struct cmd_option opts[] = {
        CMD_FLAG("headlines", &io.headlines),
        CMD_TEXT("country", &io.country),
        CMD_TEXT("category", &io.category),
        CMD_TEXT("language", &io.language),
        CMD_FLAG("progress", &progress),
        CMD_FLAG("warc", &warc),
        {"progress-every", true, take_progress_every, &io.progress_ms},
        CMD_FLAG("create", &create),
        CMD_TEXT("config", &config_opt),
        CMD_OPTIONS_END,
    };
    int parsed = cmd_options_parse(argc, argv, opts, &store_opt, import_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    if (progress)
        io.progress = stderr;
    if (optind >= argc) {
        cmd_fail("import: no FILE given");
        import_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    if (io.country && !valid_two_letters(io.country)) {
        cmd_fail("import: --country must be 2 lower-case letters, e.g. us");
        return CMD_EXIT_USAGE;
    }
    if (io.language && !valid_two_letters(io.language)) {
        cmd_fail("import: --language must be 2 lower-case letters, e.g. en");
        return CMD_EXIT_USAGE;
    }
    if (io.category) {
        io.category = vocab_category(io.category);
        if (io.category == NULL) {
            cmd_fail("import: --category must be one of " VOCAB_CATEGORY_LIST);
            return CMD_EXIT_USAGE;
        }
    }

    struct store *s;
    int status = cmd_store_open_for(&s, store_opt, config_opt, cmd_open_making(create));
    if (status != CMD_EXIT_OK)
        return status;
    struct ingest_stats total = {0};
    for (int i = optind; i < argc; i++) {
        struct ingest_stats st = {0};
        struct err err;
        err_clear(&err);
        int rc = warc ? ingest_import_warc(s, argv[i], &io, &st, &err)
                      : ingest_import_file(s, argv[i], &io, &st, &err);
        total.imported += st.imported;
        total.updated += st.updated;
        total.skipped += st.skipped;
        total.images_dropped += st.images_dropped;
        if (rc == ERR_FULL) {
            /* The one failure an operator fixes outside newsd: say what is
             * kept and what to do. */
            cmd_fail("import %s: no space left on the store's disk (%s); %zu articles of this "
                     "file were stored and are kept; free some space and import the file "
                     "again (stored articles are updated, not duplicated)",
                     argv[i], err_msg(&err, rc), st.imported + st.updated);
            status = CMD_EXIT_FAIL;
            break;
        }
        if (rc < 0) {
            cmd_fail("import %s: %s", argv[i], err_msg(&err, rc));
            status = CMD_EXIT_FAIL;
            break;
        }
    }
    /* On failure the one line above says why; the summary is for runs that finish. */
    if (status == CMD_EXIT_OK) {
        fprintf(stderr, "imported %zu, updated %zu, skipped %zu", total.imported, total.updated,
                total.skipped);
        if (total.images_dropped)
            fprintf(stderr, ", %zu image URL%s dropped (not http(s))", total.images_dropped,
                    total.images_dropped == 1 ? "" : "s");
        fputc('\n', stderr);
        /* A script that imports a day's file must learn that none of it
         * went in (wrong format, every line refused); an empty input is
         * not a failure. */
        if (total.imported + total.updated == 0 && total.skipped > 0) {
            cmd_fail("import: nothing was imported: all %zu records were skipped (the lines "
                     "above say why)",
                     total.skipped);
            status = CMD_EXIT_FAIL;
        }
    }
    store_close(s);
    return status;
}

static void sources_usage(FILE *f)
{
    fprintf(f, "usage: newsd sources import [--store LOC] [--create] [--config FILE] FILE"
               "   (- = stdin)\n"
               "  --create  make the store when it does not exist (needed for a --store or\n"
               "            $NEWSD_STORE path)\n");
}

int cmd_sources(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "import")) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            sources_usage(stdout);
            return CMD_EXIT_OK;
        }
        sources_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    argc--;
    argv++;
    const char *store_opt = NULL, *config_opt = NULL;
    bool create = false;
    const struct cmd_option opts[] = {
        CMD_FLAG("create", &create),
        CMD_TEXT("config", &config_opt),
        CMD_OPTIONS_END,
    };
    int parsed = cmd_options_parse(argc, argv, opts, &store_opt, sources_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    if (optind + 1 != argc) {
        cmd_fail("sources import: exactly one FILE expected");
        return CMD_EXIT_USAGE;
    }
    struct store *s;
    int status = cmd_store_open_for(&s, store_opt, config_opt, cmd_open_making(create));
    if (status != CMD_EXIT_OK)
        return status;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    int rc = ingest_sources_import(s, argv[optind], &n, &err);
    store_close(s);
    if (rc < 0) {
        cmd_fail("sources import %s: %s", argv[optind], err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    fprintf(stderr, "imported %zu sources\n", n);
    return CMD_EXIT_OK;
}
