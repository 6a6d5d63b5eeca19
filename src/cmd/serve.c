/* newsd serve: open the store and its index, start the HTTP server, and wait
 * for SIGTERM/SIGINT to stop gracefully (finish in-flight requests, flush
 * usage counts, close the store) with exit status 0. */
#include "api/api.h"
#include "api/metrics.h"
#include "auth/auth.h"
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "config/config.h"
#include "http/http.h"
#include "index/index.h"
#include "ingest/crawl.h"
#include "store/store.h"
#include "util/log.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/banned.h"

/* How long serve waits for the search index before listening anyway. */
#define SERVE_INDEX_GRACE_MS 5000

static void serve_usage(FILE *f)
{
    fprintf(f, "usage: newsd serve [--store LOC] [--listen HOST:PORT] [--threads N]\n"
               "                   [--config FILE] [--no-crawl] [--quiet]\n"
               "                   [--query-timeout-ms MS] [--user USER]\n"
               "                   [--metrics-listen HOST:PORT] [--index-dir DIR]\n"
               "                   [--index fts5|engine]\n"
               "  --listen   default 127.0.0.1:8080 (or $NEWSD_LISTEN); port 0 = any free port\n"
               "  --threads  HTTP worker threads (default: number of cores)\n"
               "  --quiet    no access log\n"
               "  --metrics-listen  serve /metrics (Prometheus) on this address only;\n"
               "             without it /metrics is on --listen, without a key\n"
               "  --query-timeout-ms  time budget of one search, past it HTTP 503\n"
               "             (default 5000; 0 = none)\n"
               "  --user     started as root: open the store and run as USER, keeping\n"
               "             root only to bind the port\n"
               "  --index-dir  with a postgresql:// store: this node's local search index\n"
               "             (default ./" INDEX_LOCAL_DIR_DEFAULT ")\n"
               "  --index    search backend: engine (default), the purpose-built index\n"
               "             (docs/engine.md), or fts5 (SQLite FTS5); also $" INDEX_KIND_ENV "\n"
               "             or [server] index\n");
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

/* --user: the account serve runs as. While the store is opened only the
 * effective ids are USER's (files it creates belong to USER, access is
 * checked as USER); root stays the saved id so the port can be bound, then
 * every id becomes USER's for good. */
struct run_as {
    uid_t uid;
    gid_t gid;
    bool active; /* root switched its effective ids: finish must drop */
};

static int run_as_begin(struct run_as *r, const char *user)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    int e = getpwnam_r(user, &pw, buf, sizeof buf, &found);
    if (e != 0 || found == NULL) {
        cmd_fail("serve: --user %s: no such user", user);
        return -1;
    }
    r->uid = pw.pw_uid;
    r->gid = pw.pw_gid;
    if (geteuid() != 0) {
        if (geteuid() == pw.pw_uid)
            return 0; /* already that user: nothing to drop */
        cmd_fail("serve: --user %s needs newsd to be started as root", user);
        return -1;
    }
    if (initgroups(user, pw.pw_gid) < 0 || setegid(pw.pw_gid) < 0 || seteuid(pw.pw_uid) < 0) {
        cmd_fail("serve: --user %s: cannot switch to it: %s", user, strerror(errno));
        return -1;
    }
    r->active = true;
    return 0;
}

/* Root back for binding (before http_server_start). */
static int run_as_bind(const struct run_as *r)
{
    if (r->active && seteuid(0) < 0) {
        cmd_fail("serve: cannot regain root to bind: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Every id (real, effective, saved; supplementary groups since begin)
 * becomes USER's; then root must be out of reach. */
static int run_as_finish(const struct run_as *r)
{
    if (!r->active)
        return 0;
    if (setgid(r->gid) < 0 || setuid(r->uid) < 0) {
        cmd_fail("serve: cannot drop root privileges: %s", strerror(errno));
        return -1;
    }
    if (r->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
        cmd_fail("serve: root privileges could be regained after dropping them");
        return -1;
    }
    log_info("running as uid %u gid %u", (unsigned)r->uid, (unsigned)r->gid);
    return 0;
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

/* "metrics on http://host:port/metrics": where --metrics-listen answers. */
static void print_metrics_ready(const char *listen, uint16_t port)
{
    const char *colon = strrchr(listen, ':');
    int host_len = colon ? (int)(colon - listen) : (int)strlen(listen);
    const char *host = listen;
    if (host_len == 0 || (host_len == 7 && !strncmp(host, "0.0.0.0", 7))) {
        host = "127.0.0.1";
        host_len = 9;
    }
    printf("metrics on http://%.*s:%u/metrics\n", host_len, host, port);
    fflush(stdout);
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"store", required_argument, NULL, 's'},
        {"listen", required_argument, NULL, 'l'},
        {"threads", required_argument, NULL, 't'},
        {"config", required_argument, NULL, 'c'},
        {"no-crawl", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"query-timeout-ms", required_argument, NULL, 'T'},
        {"metrics-listen", required_argument, NULL, 'M'},
        {"user", required_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},
        {"index-dir", required_argument, NULL, 'I'},
        {"index", required_argument, NULL, 'X'},
        {NULL, 0, NULL, 0},
    };
    const char *store_opt = NULL, *listen = NULL, *config_path = NULL;
    const char *user = NULL;
    const char *metrics_listen = NULL;
    const char *index_dir = NULL, *index_kind_opt = NULL;
    long threads = 0;
    long long query_timeout_ms = -1; /* -1: not given */
    bool quiet = false, crawl = true;
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
            crawl = false;
            break;
        case 'q':
            quiet = true;
            break;
        case 'T': {
            char *end;
            errno = 0;
            query_timeout_ms = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || query_timeout_ms < 0 ||
                query_timeout_ms > 3600 * 1000) {
                cmd_fail("serve: --query-timeout-ms must be a number from 0 to 3600000");
                return CMD_EXIT_USAGE;
            }
            break;
        }
        case 'u':
            user = optarg;
            break;
        case 'M':
            metrics_listen = optarg;
            break;
        case 'I':
            index_dir = optarg;
            break;
        case 'X':
            if (strcmp(optarg, INDEX_KIND_FTS5) != 0 && strcmp(optarg, INDEX_KIND_ENGINE) != 0) {
                cmd_fail("serve: --index must be fts5 or engine");
                return CMD_EXIT_USAGE;
            }
            index_kind_opt = optarg;
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
    /* --index, else $NEWSD_INDEX, else the config file's. */
    index_kind_opt = cmd_index_kind(index_kind_opt);
    if (!index_kind_opt && cfg.index[0])
        index_kind_opt = cfg.index;

    struct api_config acfg = {0};
    acfg.live_window_seconds = cfg.live_window_seconds;
    acfg.result_window = cfg.result_window;
    acfg.query_timeout_ms = query_timeout_ms >= 0 ? query_timeout_ms : cfg.query_timeout_ms;
    acfg.metrics_elsewhere = metrics_listen != NULL;
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
    struct http_server *metrics_server = NULL;
    struct crawler *crawler = NULL;
    struct run_as run_as = {0};
    struct err err;
    err_clear(&err);
    int rc;

    if (user && run_as_begin(&run_as, user) < 0)
        goto out;
    if (!user && geteuid() == 0)
        log_warn("running as root: use --user USER to drop root privileges after binding");
    if (cmd_store_open(&store, cmd_store_location(store_opt)) < 0)
        goto out;
    /* The embedded store keeps its FTS5 side only for the fts5 index: the
     * engine drops it (imports get several times faster), fts5 builds it. */
    const char *kind = index_kind_resolve(index_kind_opt);
    if (store_sqlite_path(store) != NULL) {
        bool fulltext = false;
        bool want = strcmp(kind, INDEX_KIND_FTS5) == 0;
        if ((rc = store_fulltext_get(store, &fulltext, &err)) == 0 && fulltext != want) {
            log_info("store: %s its FTS5 side for the %s index", want ? "building" : "dropping",
                     kind);
            rc = store_fulltext_set(store, want, &err);
        }
        if (rc < 0) {
            cmd_fail("cannot prepare the store for the %s index: %s", kind, err_msg(&err, rc));
            goto out;
        }
    }
    /* Listening does not wait long for the index: the first start on a
     * large store builds it for minutes (healthz says "starting" and
     * searches answer 503 meanwhile). A few seconds' grace covers every
     * open from the index's files, so clients of a restart see no 503. */
    struct index_options iopt = {.kind = kind, .local_dir = index_dir};
    cmd_engine_options(&iopt.engine);
    if ((rc = index_open_background(&index, store, &iopt, &err)) < 0) {
        cmd_fail("cannot open the search index: %s", err_msg(&err, rc));
        goto out;
    }
    if (!index_wait_ready(index, SERVE_INDEX_GRACE_MS))
        log_info("search index: still being built; serving meanwhile (searches answer 503 "
                 "until it is ready)");
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
    if (run_as_bind(&run_as) < 0)
        goto out;
    if ((rc = http_server_start(&server, &hcfg, api_handle, api, &err)) < 0) {
        cmd_fail("cannot listen on %s: %s", listen, err_msg(&err, rc));
        goto out;
    }
    /* --metrics-listen: a second, small server that answers only /metrics,
     * so the exposition can stay on an internal address. */
    if (metrics_listen) {
        struct http_config mcfg = {.listen = metrics_listen, .threads = 1, .access_log = !quiet};
        if ((rc = http_server_start(&metrics_server, &mcfg, api_metrics_handle, api, &err)) < 0) {
            cmd_fail("cannot listen on %s: %s", metrics_listen, err_msg(&err, rc));
            goto out;
        }
    }
    if (run_as_finish(&run_as) < 0)
        goto out;
    /* The crawler polls the due feeds in a thread of its own (--no-crawl:
     * not at all); what it stores is searchable as soon as it commits. */
    if (crawl && ((rc = crawl_new(&crawler, store, NULL, &err)) < 0 ||
                  (rc = crawl_start(crawler, &err)) < 0)) {
        cmd_fail("cannot start the crawler: %s", err_msg(&err, rc));
        goto out;
    }
    print_ready(listen, http_server_port(server));
    if (metrics_server)
        print_metrics_ready(metrics_listen, http_server_port(metrics_server));
    char shown[512];
    log_info("newsd serving %s store %s", store_kind(store),
             store_location_redacted(cmd_store_location(store_opt), shown, sizeof shown));

    int sig = 0;
    sigwait(&stop_signals, &sig);
    log_info("signal %d: stopping", sig);
    status = CMD_EXIT_OK;
out:
    http_server_stop(metrics_server);
    http_server_stop(server);
    api_free(api);
    auth_free(auth);
    crawl_free(crawler); /* stops it: before the store closes */
    index_close(index);
    store_close(store);
    return status;
}
