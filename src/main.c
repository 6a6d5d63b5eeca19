/* newsd: dispatch to one subcommand (src/cmd/). The libraries with
 * process-wide state (libxml2, libcurl) are initialised here, once, before
 * any command starts threads. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

#include "index/index.h"
#include "store/store.h"
#include "util/version.h"

#include <curl/curl.h>
#include <libxml/parser.h>

static const struct cmd_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
#define CMD_ENTRY(name, summary) {#name, cmd_##name, summary},
    CMD_COMMANDS(CMD_ENTRY)
#undef CMD_ENTRY
};

static void usage(FILE *f)
{
    fprintf(f, "usage: newsd COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nnewsd COMMAND --help shows a command's options; newsd --version the build.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CMD_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("newsd %s (commit %s)\n", version_release(), version_commit());
        /* What an upgrade changes on disk (docs/operations.md "Upgrading"). */
        printf("store schema version %lld (embedded), %lld (PostgreSQL); engine segment "
               "format %u\n",
               (long long)store_schema_version("sqlite"), (long long)store_schema_version("pg"),
               (unsigned)index_engine_segment_version());
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            xmlInitParser();
            if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                fprintf(stderr, "newsd: cannot initialise libcurl\n");
                return CMD_EXIT_FAIL;
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "newsd: unknown command '%s' (see newsd --help)\n", argv[1]);
    return CMD_EXIT_USAGE;
}
