/* Subcommands of newsd; each takes (argc, argv) with argv[0] = its name and
 * returns the process exit status (API.md §7: 0 ok, 1 failure, 2 usage). */
#ifndef NEWSD_CMD_CMD_H
#define NEWSD_CMD_CMD_H

#define CMD_EXIT_OK 0
#define CMD_EXIT_FAIL 1
#define CMD_EXIT_USAGE 2

int cmd_serve(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_sources(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_feeds(int argc, char **argv);
int cmd_crawl(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_backup(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_articles(int argc, char **argv);
int cmd_alerts(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_stories(int argc, char **argv);

#endif
