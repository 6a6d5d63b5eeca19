/* newsd serve: open the store and its index, start the HTTP server, and wait
 * for SIGTERM/SIGINT to stop gracefully (finish in-flight requests, flush
 * usage counts, close the store) with exit status 0. */
#include "api/api.h"
#include "auth/auth.h"
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "config/config.h"
#include "http/http.h"
#include "index/index.h"
#include "store/store.h"
#include "util/log.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

static void serve_usage(FILE *f)
{
    fprintf(f, "usage: newsd serve [--store LOC] [--listen HOST:PORT] [--threads N]\n"
               "                   [--config FILE] [--no-crawl] [--quiet]\n"
               "  --listen   default 127.0.0.1:8080 (or $NEWSD_LISTEN); port 0 = any free port\n"
               "  --threads  HTTP worker threads (default: number of cores)\n"
               "  --quiet    no access log\n");
}

/* Parse a positive integer option; -1 when malformed. */
static long parse_count(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 4096)
        return -1;
    return v;
}

/* "host:port" of the listen spec with the real port, for the ready line. */
static void print_ready(const char *listen, uint16_t port)
{
    const char *colon = strrchr(listen, ':');
    int host_len = colon ? (int)(colon - listen) : (int)strlen(listen);
    const char *host = listen;
    if (host_len == 0 || (host_len == 7 && !strncmp(host, "0.0.0.0", 7))) {
        host = "127.0.0.1";
        host_len = 9;
    }
    printf("listening on http://%.*s:%u\n", host_len, host, port);
    fflush(stdout);
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"store", required_argument, NULL, 's'},  {"listen", required_argument, NULL, 'l'},
        {"threads", required_argument, NULL, 't'}, {"config", required_argument, NULL, 'c'},
        {"no-crawl", no_argument, NULL, 'n'},     {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *store_opt = NULL, *listen = NULL, *config_path = NULL;
    long threads = 0;
    bool quiet = false;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 's':
            store_opt = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 't':
            threads = parse_count(optarg);
            if (threads < 0) {
                cmd_fail("serve: --threads must be a number from 0 to 4096");
                return CMD_EXIT_USAGE;
            }
            break;
        case 'c':
            config_path = optarg;
            break;
        case 'n':
            break; /* the crawler is not part of serve yet */
        case 'q':
            quiet = true;
            break;
        case 'h':
            serve_usage(stdout);
            return CMD_EXIT_OK;
        default:
            serve_usage(stderr);
            return CMD_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cmd_fail("serve: unexpected argument '%s'", argv[optind]);
        return CMD_EXIT_USAGE;
    }
    /* Precedence: flag, then environment, then config file, then default. */
    static struct config cfg;
    config_defaults(&cfg);
    if (config_path) {
        struct err cerr;
        err_clear(&cerr);
        int crc = config_load(config_path, &cfg, &cerr);
        if (crc < 0) {
            cmd_fail("%s", err_msg(&cerr, crc));
            return crc == ERR_PARSE ? CMD_EXIT_USAGE : CMD_EXIT_FAIL;
        }
    }
    if (!listen)
        listen = getenv("NEWSD_LISTEN");
    if ((!listen || !*listen) && cfg.listen[0])
        listen = cfg.listen;
    if (!listen || !*listen)
        listen = "127.0.0.1:8080";
    if (!threads && cfg.threads)
        threads = cfg.threads;

    struct api_config acfg = {0};
    acfg.live_window_seconds = cfg.live_window_seconds;
    acfg.result_window = cfg.result_window;
    const char *fixed_now = getenv("NEWSD_NOW");
    if (fixed_now && *fixed_now) {
        char *end;
        acfg.fixed_now = strtoll(fixed_now, &end, 10);
        if (*end || acfg.fixed_now <= 0) {
            cmd_fail("serve: NEWSD_NOW must be unix seconds");
            return CMD_EXIT_USAGE;
        }
    }

    /* Block the stop signals before any thread starts, so every thread
     * inherits the mask and only sigwait below receives them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    int status = CMD_EXIT_FAIL;
    struct store *store = NULL;
    struct index *index = NULL;
    struct auth *auth = NULL;
    struct api *api = NULL;
    struct http_server *server = NULL;
    struct err err;
    err_clear(&err);
    int rc;

    if (cmd_store_open(&store, cmd_store_location(store_opt)) < 0)
        goto out;
    if ((rc = index_open(&index, store, &err)) < 0) {
        cmd_fail("cannot open the search index: %s", err_msg(&err, rc));
        goto out;
    }
    if ((rc = auth_new(&auth, store, &err)) < 0) {
        cmd_fail("cannot start key checks: %s", err_msg(&err, rc));
        goto out;
    }
    if ((rc = config_plans_apply(&cfg, auth, &err)) < 0) {
        cmd_fail("config: %s", err_msg(&err, rc));
        goto out;
    }
    if ((rc = api_new(&api, store, index, auth, &acfg, &err)) < 0) {
        cmd_fail("%s", err_msg(&err, rc));
        goto out;
    }
    struct http_config hcfg = {
        .listen = listen,
        .threads = (unsigned)threads,
        .access_log = !quiet,
    };
    if ((rc = http_server_start(&server, &hcfg, api_handle, api, &err)) < 0) {
        cmd_fail("cannot listen on %s: %s", listen, err_msg(&err, rc));
        goto out;
    }
    print_ready(listen, http_server_port(server));
    log_info("newsd serving %s store %s", store_kind(store), cmd_store_location(store_opt));

    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_info("signal %d: stopping", sig);
    status = CMD_EXIT_OK;
out:
    http_server_stop(server);
    api_free(api);
    auth_free(auth);
    index_close(index);
    store_close(store);
    return status;
}
