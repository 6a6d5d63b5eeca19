/* newsd crawl (API.md §7): poll the feeds that are due (ingest/feeds/feeds.h).
 * --once: one round over every feed due now, then a summary line on stdout
 * and exit; without it, keep polling until SIGTERM or SIGINT (what `newsd
 * serve` does in the background, for a node that only ingests). Feed
 * failures are recorded on the feeds (`newsd feeds list`), not exit
 * statuses; a store failure is. --config FILE: its [outbound] section says
 * which special-use networks the feeds may be fetched from. */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "ingest/feeds/feeds.h"
#include "store/store.h"
#include "util/log.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "util/banned.h"

static void crawl_usage(FILE *f)
{
    fprintf(f, "usage: newsd crawl [--store LOC] [--config FILE] [--once]\n"
               "                   [--pages missing|always|never]\n"
               "  --once    poll every feed due now once, print a summary and exit\n"
               "            (without it: keep polling until SIGTERM/SIGINT)\n"
               "  --store   the store (else $NEWSD_STORE, else the config file's [server]\n"
               "            store, else ./newsd-data); a missing store is refused\n"
               "  --config  the config file (else $NEWSD_CONFIG, else /etc/newsd/newsd.conf\n"
               "            when it exists); its [outbound] section: allow_networks lets\n"
               "            feeds on those special-use networks (loopback, private, ...) be\n"
               "            fetched, user_agent and proxy say how requests are made\n"
               "  --pages   which new items get their page fetched for their text, image\n"
               "            and author: those missing one (default), all, none\n");
}

/* --pages MODE into the enum crawl_pages_mode at to. */
static int take_pages(const char *value, void *to)
{
    if (crawl_pages_mode_parse(value, to))
        return CMD_EXIT_OK;
    cmd_fail("crawl: --pages must be missing, always or never");
    return CMD_EXIT_USAGE;
}

int cmd_crawl(int argc, char **argv)
{
    const char *store_opt = NULL, *config_path = NULL;
    bool once = false;
    struct crawl_options co;
    memset(&co, 0, sizeof co);
    const struct cmd_option opts[] = {
        CMD_FLAG("once", &once),
        CMD_TEXT("config", &config_path),
        {"pages", true, take_pages, &co.pages},
        CMD_OPTIONS_END,
    };
    int parsed = cmd_options_only("crawl", argc, argv, opts, &store_opt, crawl_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    static struct config cfg; /* static: it is large */
    config_path = cmd_config_path(config_path);
    int cstatus = cmd_config_load(&cfg, config_path);
    if (cstatus != CMD_EXIT_OK)
        return cstatus;
    struct cmd_store_where where;
    cmd_store_where_from(&where, store_opt, &cfg, config_path);

    /* Block the stop signals before the crawler thread starts, so only
     * sigwait below receives them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    if (!once)
        pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

    struct store *s = NULL;
    struct crawler *c = NULL;
    struct err err;
    err_clear(&err);
    int status = CMD_EXIT_FAIL;
    int rc;
    if (cmd_store_open_where(&s, &where, cmd_index_kind(NULL, cfg.index), 0) != 0)
        goto out;
    cmd_crawl_options(&co, &cfg);
    if ((rc = crawl_new(&c, s, &co, &err)) < 0) {
        cmd_fail("crawl: %s", err_msg(&err, rc));
        goto out;
    }
    if (once) {
        struct crawl_stats st;
        rc = crawl_once(c, &st, &err);
        printf("feeds fetched %zu, not modified %zu, failed %zu; articles new %zu, updated %zu; "
               "pages fetched %zu, failed %zu, without an article %zu; articles completed %zu; "
               "page retries %zu\n",
               st.fetched, st.not_modified, st.failed, st.articles_new, st.articles_updated,
               st.pages_fetched, st.pages_failed, st.pages_no_article, st.articles_filled,
               st.pages_retried);
        fflush(stdout);
        if (rc < 0) {
            cmd_fail("crawl: %s", err_msg(&err, rc));
            goto out;
        }
        status = CMD_EXIT_OK;
        goto out;
    }
    if ((rc = crawl_start(c, &err)) < 0) {
        cmd_fail("crawl: %s", err_msg(&err, rc));
        goto out;
    }
    char shown[512];
    log_info("newsd crawling %s store %s", store_kind(s),
             store_location_redacted(where.loc, shown, sizeof shown));
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_info("signal %d: stopping", sig);
    status = CMD_EXIT_OK;
out:
    crawl_free(c);
    store_close(s);
    return status;
}
