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

int cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {
        CMD_OPTION_STORE,
        {"headlines", no_argument, NULL, 'H'},
        {"country", required_argument, NULL, 'c'},
        {"category", required_argument, NULL, 'k'},
        {"language", required_argument, NULL, 'l'},
        {"progress", no_argument, NULL, 'p'},
        {"warc", no_argument, NULL, 'w'},
        {"progress-every", required_argument, NULL, 'e'},
        {"create", no_argument, NULL, 'C'},
        {"config", required_argument, NULL, 'f'},
        CMD_OPTIONS_END,
    };
    const char *store_opt = NULL, *config_opt = NULL;
    unsigned open_flags = CMD_OPEN_MAY_CREATE;
    struct ingest_options io = {0};
    bool warc = false;
    int ch;
    optind = 1;
    while ((ch = cmd_next_option(argc, argv, opts, &store_opt)) != -1) {
        switch (ch) {
        case 'H':
            io.headlines = true;
            break;
        case 'c':
            io.country = optarg;
            break;
        case 'k':
            io.category = optarg;
            break;
        case 'l':
            io.language = optarg;
            break;
        case 'p':
            io.progress = stderr;
            break;
        case 'w':
            warc = true;
            break;
        case 'C':
            open_flags |= CMD_OPEN_CREATE;
            break;
        case 'f':
            config_opt = optarg;
            break;
        case 'e': {
            char *end = NULL;
            double secs = strtod(optarg, &end);
            if (!end || *end || !(secs > 0 && secs <= 86400)) {
                cmd_fail("import: --progress-every must be a number of seconds, e.g. 5");
                return CMD_EXIT_USAGE;
            }
            io.progress_ms = (int64_t)(secs * 1000.0 + 0.5);
            if (io.progress_ms == 0)
                io.progress_ms = 1;
            break;
        }
        default:
            return cmd_option_end(ch, import_usage);
        }
    }
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
    int status = cmd_store_open_for(&s, store_opt, config_opt, open_flags);
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
    static const struct option opts[] = {
        CMD_OPTION_STORE,
        {"create", no_argument, NULL, 'C'},
        {"config", required_argument, NULL, 'f'},
        CMD_OPTIONS_END,
    };
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
    unsigned open_flags = CMD_OPEN_MAY_CREATE;
    int ch;
    optind = 1;
    while ((ch = cmd_next_option(argc, argv, opts, &store_opt)) != -1) {
        switch (ch) {
        case 'C':
            open_flags |= CMD_OPEN_CREATE;
            break;
        case 'f':
            config_opt = optarg;
            break;
        default:
            return cmd_option_end(ch, sources_usage);
        }
    }
    if (optind + 1 != argc) {
        cmd_fail("sources import: exactly one FILE expected");
        return CMD_EXIT_USAGE;
    }
    struct store *s;
    int status = cmd_store_open_for(&s, store_opt, config_opt, open_flags);
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
