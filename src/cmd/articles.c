/* newsd articles: the operator's deletes (store/retention.h
 * retention_delete: in batches, so a running server keeps answering and
 * importing; its index drops the articles within a poll) and the one-time
 * switch of an older embedded store to incremental vacuum. */
#include "cmd/cmd.h"
#include "cmd/common.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ingest/ingest.h"
#include "store/retention.h"
#include "util/clock.h"
#include "util/timefmt.h"

#include "util/banned.h"

static void articles_usage(FILE *f)
{
    fprintf(
        f,
        "usage: newsd articles delete [--store LOC] [--config FILE] [--before DATE] [--source ID]\n"
        "                             [--url URL]\n"
        "       newsd articles compact [--store LOC] [--config FILE]\n"
        "  delete   delete the articles matching every option given (at least one):\n"
        "           --before DATE  published before DATE (YYYY-MM-DD or ISO 8601, UTC)\n"
        "           --source ID    of the catalogue source ID\n"
        "           --url URL      the article at URL (as imported or canonical)\n"
        "           prints how many were deleted; a running server's index follows\n"
        "  compact  rewrite the store's file once so that deletes give disk space back\n"
        "           (stores created before newsd had retention; stop newsd first)\n"
        "  the store: --store, else $NEWSD_STORE, else the [server] store of the config\n"
        "  file (--config, else $NEWSD_CONFIG, else /etc/newsd/newsd.conf when it\n"
        "  exists), else ./newsd-data; a missing store is refused\n");
}

/* The filter of the delete options; CMD_EXIT_OK or a usage status. */
static int delete_filter(struct store_delete_filter *f, struct arena *a, const char *before,
                         const char *source, const char *url)
{
    memset(f, 0, sizeof *f);
    if (!before && !source && !url) {
        cmd_fail("articles delete: give --before, --source or --url (every article would go)");
        return CMD_EXIT_USAGE;
    }
    if (before) {
        bool date_only = false;
        if (timefmt_parse_iso8601(before, strlen(before), &f->before, &date_only) < 0) {
            cmd_fail("articles delete: --before '%s' is not a date (YYYY-MM-DD or ISO 8601)",
                     before);
            return CMD_EXIT_USAGE;
        }
        f->before_set = true;
    }
    if (source) {
        if (!*source) {
            cmd_fail("articles delete: --source needs a source id");
            return CMD_EXIT_USAGE;
        }
        f->source_id = source;
    }
    if (url) {
        char *canon = NULL, *domain = NULL;
        /* The duplicate key the import computed from the same URL. */
        if (ingest_url_canonical(a, url, &canon, &domain) < 0) {
            cmd_fail("articles delete: --url '%s' is not an absolute http(s) URL", url);
            return CMD_EXIT_USAGE;
        }
        f->canonical_url = canon;
    }
    return CMD_EXIT_OK;
}

static int run_delete(const char *store_opt, const char *config_opt,
                      const struct store_delete_filter *f)
{
    struct store *store = NULL;
    struct err err;
    int64_t deleted = 0;
    err_clear(&err);
    int status = cmd_store_open_for(&store, store_opt, config_opt, 0);
    if (status != CMD_EXIT_OK)
        return status;
    int64_t t0 = clock_mono_ms();
    int rc = retention_delete(store, f, NULL, NULL, &deleted, &err);
    bool incremental = true;
    if (rc == 0 && deleted > 0)
        rc = store_space_incremental(store, &incremental, &err);
    store_close(store);
    if (rc < 0) {
        cmd_fail("articles delete: %s (%lld deleted before it)", err_msg(&err, rc),
                 (long long)deleted);
        return CMD_EXIT_FAIL;
    }
    printf("%lld\n", (long long)deleted);
    fprintf(stderr, "articles delete: %lld articles deleted in %.1f s\n", (long long)deleted,
            (double)(clock_mono_ms() - t0) / 1000.0);
    if (!incremental)
        fprintf(stderr, "articles delete: this store's file keeps the space for new articles; "
                        "`newsd articles compact` (newsd stopped) gives it back to the disk\n");
    return CMD_EXIT_OK;
}

static int run_compact(const char *store_opt, const char *config_opt)
{
    struct store *store = NULL;
    struct err err;
    err_clear(&err);
    int status = cmd_store_open_for(&store, store_opt, config_opt, 0);
    if (status != CMD_EXIT_OK)
        return status;
    int64_t t0 = clock_mono_ms();
    int rc = store_compact(store, &err);
    store_close(store);
    if ((status = cmd_status_of(rc, &err, "articles compact")) != CMD_EXIT_OK)
        return status;
    fprintf(stderr, "articles compact: done in %.1f s\n", (double)(clock_mono_ms() - t0) / 1000.0);
    return CMD_EXIT_OK;
}

int cmd_articles(int argc, char **argv)
{
    const char *store_opt = NULL, *config_opt = NULL, *before = NULL, *source = NULL, *url = NULL;
    const struct cmd_option opts[] = {
        CMD_TEXT("before", &before),
        CMD_TEXT("source", &source),
        CMD_TEXT("url", &url),
        CMD_TEXT("config", &config_opt),
        CMD_OPTIONS_END,
    };

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        articles_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CMD_EXIT_USAGE : CMD_EXIT_OK;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "delete") != 0 && strcmp(sub, "compact") != 0) {
        cmd_fail("articles: unknown subcommand '%s' (delete, compact)", sub);
        return CMD_EXIT_USAGE;
    }
    char name[32]; /* "articles delete" or "articles compact" */
    snprintf(name, sizeof name, "articles %s", sub);
    int parsed = cmd_options_only(name, argc - 1, argv + 1, opts, &store_opt, articles_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    if (!strcmp(sub, "compact")) {
        if (before || source || url) {
            cmd_fail("articles compact: takes only --store and --config");
            return CMD_EXIT_USAGE;
        }
        return run_compact(store_opt, config_opt);
    }
    struct arena a;
    struct store_delete_filter f;
    arena_init(&a, 0);
    int status = delete_filter(&f, &a, before, source, url);
    if (status == CMD_EXIT_OK)
        status = run_delete(store_opt, config_opt, &f);
    arena_release(&a);
    return status;
}
