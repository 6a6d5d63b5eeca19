/* Subcommands of newsd; each takes (argc, argv) with argv[0] = its name and
 * returns the process exit status (API.md §7: 0 ok, 1 failure, 2 usage). */
#ifndef NEWSD_CMD_CMD_H
#define NEWSD_CMD_CMD_H

#define CMD_EXIT_OK 0
#define CMD_EXIT_FAIL 1
#define CMD_EXIT_USAGE 2

/* Every command once, in the order newsd --help lists them: X(NAME,
 * SUMMARY) for `newsd NAME`, run by cmd_NAME. The declarations below and
 * main.c's table of commands are made from it. */
#define CMD_COMMANDS(X)                                                                            \
    X(serve, "serve the NewsAPI v2 interface")                                                     \
    X(import, "import articles (JSONL or NewsAPI response JSON)")                                  \
    X(sources, "sources import: load the sources catalogue")                                       \
    X(keys, "create, list, disable, enable, delete API keys")                                      \
    X(feeds, "add, import, list, remove the feeds to crawl")                                       \
    X(crawl, "poll the feeds that are due (--once: one round)")                                    \
    X(index, "index verify: check the search index against the articles; index sizes")             \
    X(backup, "a consistent copy of the store, taken while newsd runs")                            \
    X(restore, "put a backup in place of the store's database (newsd stopped)")                    \
    X(articles, "delete articles (by date, source, URL); compact the store")                       \
    X(alerts, "list, add, remove webhook alerts (saved searches)")                                 \
    X(migrate, "bring the store's schema up to this version (server stopped)")                     \
    X(stories, "stories backfill: older articles get their stories (newsd stopped)")

#define CMD_DECLARE(name, summary) int cmd_##name(int argc, char **argv);
CMD_COMMANDS(CMD_DECLARE)
#undef CMD_DECLARE

#endif
