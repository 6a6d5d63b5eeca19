/* newsd: dispatch to one subcommand (src/cmd/). */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

static const struct cmd_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"serve", cmd_serve, "serve the NewsAPI v2 interface"},
    {"import", cmd_import, "import articles (JSONL or NewsAPI response JSON)"},
    {"sources", cmd_sources, "sources import: load the sources catalogue"},
    {"keys", cmd_keys, "create, list, disable, enable, delete API keys"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: newsd COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nnewsd COMMAND --help shows a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CMD_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "newsd: unknown command '%s' (see newsd --help)\n", argv[1]);
    return CMD_EXIT_USAGE;
}
