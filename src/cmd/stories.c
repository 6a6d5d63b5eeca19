/* newsd stories backfill: the stories of the articles stored before
 * stories (schema < 8, story_id NULL), each then its own story
 * (docs/stories.md "Backfill"; store_stories_backfill). It takes the
 * server's lock: a running server's engine keeps the story columns it has
 * read, and its own story window took those articles as their own
 * stories, so the backfill runs with the server stopped, like migrate, and
 * the next server reads the new stories. */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/lock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

#include "util/banned.h"

/* Articles a read and a write: the write transaction stays short, and a
 * batch's articles (with their text) are all that is held at once. */
#define BACKFILL_BATCH_DEFAULT 2000
#define BACKFILL_BATCH_MAX 1000000

static void stories_usage(FILE *f)
{
    fprintf(f,
            "usage: newsd stories backfill [--store LOC] [--config FILE] [--batch N]\n"
            "  backfill  give the articles stored before stories (newsd before 0.15: no\n"
            "            story yet, each its own story) the story the rules give them now:\n"
            "            every stored article is replayed in publication order with the\n"
            "            [stories] settings of the config; copies among them and of later\n"
            "            articles then share a story. Run it after `newsd migrate`, with the\n"
            "            server stopped (it takes the server's lock); a second run changes\n"
            "            nothing. --batch N: articles read and written at a time (default %d).\n"
            "            Prints the number of articles given a story. Embedded stores only.\n"
            "  the store: --store, else $NEWSD_STORE, else the [server] store of the config\n"
            "  file (--config, else $NEWSD_CONFIG, else /etc/newsd/newsd.conf when it\n"
            "  exists), else ./newsd-data; a missing store is refused\n",
            BACKFILL_BATCH_DEFAULT);
}

static int run_backfill(const char *store_opt, const char *config_opt, size_t batch)
{
    struct cmd_store_where where;
    struct store *store = NULL;
    struct store_backfill_stats stats;
    struct err err;

    err_clear(&err);
    int status = cmd_store_where_get(&where, store_opt, cmd_config_path(config_opt));
    if (status != CMD_EXIT_OK)
        return status;
    if (store_location_is_pg(where.loc)) {
        cmd_fail("stories backfill: a PostgreSQL store cannot be backfilled yet (its nodes "
                 "learn a change only from the store's log); its older articles keep their "
                 "own stories");
        return CMD_EXIT_FAIL;
    }
    int lock = cmd_lock_store(where.loc, "backfill the stories");
    if (lock == -1)
        return CMD_EXIT_FAIL;
    if (cmd_store_open_where(&store, &where, INDEX_KIND_DEFAULT, 0) != 0) {
        if (lock >= 0)
            close(lock);
        return CMD_EXIT_FAIL;
    }
    int64_t t0 = clock_mono_ms();
    int rc = store_stories_backfill(store, batch, &stats, &err);
    store_close(store);
    if (lock >= 0)
        close(lock);
    if (rc < 0) {
        cmd_fail("stories backfill: %s (%lld articles given a story before it)", err_msg(&err, rc),
                 (long long)stats.filled);
        return CMD_EXIT_FAIL;
    }
    printf("%lld\n", (long long)stats.filled);
    fprintf(stderr,
            "stories backfill: %lld articles read, %lld given a story (%lld joined an earlier "
            "article's) in %.1f s\n",
            (long long)stats.read, (long long)stats.filled, (long long)stats.joined,
            (double)(clock_mono_ms() - t0) / 1000.0);
    return CMD_EXIT_OK;
}

/* --batch N: a number from 1 to BACKFILL_BATCH_MAX into the size_t at to. */
static int take_batch(const char *value, void *to)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (errno || end == value || *end || v < 1 || v > BACKFILL_BATCH_MAX) {
        cmd_fail("stories backfill: --batch '%s' is not a number from 1 to %d", value,
                 BACKFILL_BATCH_MAX);
        return CMD_EXIT_USAGE;
    }
    *(size_t *)to = (size_t)v;
    return CMD_EXIT_OK;
}

int cmd_stories(int argc, char **argv)
{
    const char *store_opt = NULL, *config_opt = NULL;
    size_t batch = BACKFILL_BATCH_DEFAULT;
    const struct cmd_option opts[] = {
        CMD_TEXT("config", &config_opt),
        {"batch", true, take_batch, &batch},
        CMD_OPTIONS_END,
    };

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        stories_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CMD_EXIT_USAGE : CMD_EXIT_OK;
    }
    if (strcmp(argv[1], "backfill") != 0) {
        cmd_fail("stories: unknown subcommand '%s' (backfill)", argv[1]);
        return CMD_EXIT_USAGE;
    }
    int parsed =
        cmd_options_only("stories backfill", argc - 1, argv + 1, opts, &store_opt, stories_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    return run_backfill(store_opt, config_opt, batch);
}
