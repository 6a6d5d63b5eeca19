/* newsd serve: open the store and its index, start the HTTP server, and wait
 * for SIGTERM/SIGINT to stop gracefully (finish in-flight requests, flush
 * usage counts, close the store) with exit status 0.
 * cmd_serve reads as its steps: parse (the flags as given) → resolve (flag,
 * environment, config file, default → one options struct per module) →
 * start → wait → stop. Only resolve reads the environment. */
#include "api/api.h"
#include "api/metrics.h"
#include "auth/auth.h"
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "config/config.h"
#include "http/http.h"
#include "index/index.h"
#include "ingest/feeds/feeds.h"
#include "push/webhook.h"
#include "store/retention.h"
#include "store/store.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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
               "                   [--index fts5|engine] [--log-format text|json]\n"
               "                   [--pages missing|always|never]\n"
               "  --store    the store (else $NEWSD_STORE, else the config file's [server]\n"
               "             store, else ./newsd-data); made when missing; an older schema\n"
               "             is migrated once this server holds the store's lock\n"
               "  --config   the config file (else $NEWSD_CONFIG, else /etc/newsd/newsd.conf\n"
               "             when it exists)\n"
               "  --listen   default 127.0.0.1:8080 (or $NEWSD_LISTEN); port 0 = any free port\n"
               "  --threads  HTTP worker threads (default: number of cores)\n"
               "  --quiet    no access log\n"
               "  --pages    which new feed items get their page fetched for their text,\n"
               "             image and author, for feeds without a setting of their own:\n"
               "             those missing one (default), all, none\n"
               "  --log-format  the access log: text (default, one line of fields) or\n"
               "             json (one object per line)\n"
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

/* "<what> http://host:port<path>": where a listener answers, for the
 * readiness lines scripts and tests wait for. A wildcard host prints as
 * 127.0.0.1, the address a local client reaches it on. */
static void print_address(const char *what, const char *listen, uint16_t port, const char *path)
{
    const char *colon = strrchr(listen, ':');
    int host_len = colon ? (int)(colon - listen) : (int)strlen(listen);
    const char *host = listen;
    if (host_len == 0 || (host_len == 7 && !strncmp(host, "0.0.0.0", 7))) {
        host = "127.0.0.1";
        host_len = 9;
    }
    printf("%s http://%.*s:%u%s\n", what, host_len, host, port, path);
    fflush(stdout);
}

/* ---- parse: the command line as given ------------------------------------ */

/* The flags; NULL / -1 / 0 where not given. */
struct serve_flags {
    const char *store, *listen, *config_path, *user, *metrics_listen;
    const char *index_dir, *index_kind;
    long threads;               /* 0: not given */
    long long query_timeout_ms; /* -1: not given */
    bool quiet, no_crawl;
    int log_format; /* enum log_format; -1: not given */
    int pages;      /* enum crawl_pages_mode; -1: not given */
};

#define SERVE_GO CMD_GO_ON /* parse and resolve: carry on (else an exit status) */

/* The takes of the flags checked as they are read (cmd_option). */
static int take_threads(const char *value, void *to)
{
    long *threads = to;
    *threads = parse_count(value);
    if (*threads >= 0)
        return CMD_EXIT_OK;
    cmd_fail("serve: --threads must be a number from 0 to 4096");
    return CMD_EXIT_USAGE;
}

static int take_log_format(const char *value, void *to)
{
    int *format = to;
    if (!strcmp(value, "text")) {
        *format = LOG_FORMAT_TEXT;
    } else if (!strcmp(value, "json")) {
        *format = LOG_FORMAT_JSON;
    } else {
        cmd_fail("serve: --log-format must be text or json");
        return CMD_EXIT_USAGE;
    }
    return CMD_EXIT_OK;
}

static int take_pages(const char *value, void *to)
{
    enum crawl_pages_mode m;
    if (!crawl_pages_mode_parse(value, &m)) {
        cmd_fail("serve: --pages must be missing, always or never");
        return CMD_EXIT_USAGE;
    }
    *(int *)to = (int)m;
    return CMD_EXIT_OK;
}

static int take_query_timeout(const char *value, void *to)
{
    long long *ms = to;
    char *end;
    errno = 0;
    *ms = strtoll(value, &end, 10);
    if (errno || end == value || *end || *ms < 0 || *ms > 3600 * 1000) {
        cmd_fail("serve: --query-timeout-ms must be a number from 0 to 3600000");
        return CMD_EXIT_USAGE;
    }
    return CMD_EXIT_OK;
}

static int take_index_kind(const char *value, void *to)
{
    if (strcmp(value, INDEX_KIND_FTS5) != 0 && strcmp(value, INDEX_KIND_ENGINE) != 0) {
        cmd_fail("serve: --index must be fts5 or engine");
        return CMD_EXIT_USAGE;
    }
    *(const char **)to = value;
    return CMD_EXIT_OK;
}

static int serve_parse(struct serve_flags *f, int argc, char **argv)
{
    const struct cmd_option opts[] = {
        CMD_TEXT("listen", &f->listen),
        {"threads", true, take_threads, &f->threads},
        CMD_TEXT("config", &f->config_path),
        CMD_FLAG("no-crawl", &f->no_crawl),
        CMD_FLAG("quiet", &f->quiet),
        {"query-timeout-ms", true, take_query_timeout, &f->query_timeout_ms},
        CMD_TEXT("metrics-listen", &f->metrics_listen),
        CMD_TEXT("user", &f->user),
        CMD_TEXT("index-dir", &f->index_dir),
        {"index", true, take_index_kind, &f->index_kind},
        {"log-format", true, take_log_format, &f->log_format},
        {"pages", true, take_pages, &f->pages},
        CMD_OPTIONS_END,
    };
    memset(f, 0, sizeof *f);
    f->query_timeout_ms = -1;
    f->log_format = -1;
    f->pages = -1;
    return cmd_options_only("serve", argc, argv, opts, &f->store, serve_usage);
}

/* ---- resolve: flags, environment, config file, defaults ------------------- */

/* Every setting serve starts with, each module's in its options struct.
 * Precedence: flag, then environment, then config file, then default. */
struct serve_settings {
    struct config cfg;            /* the config file (plans are applied from it) */
    struct cmd_store_where where; /* the store, and where its location came from */
    const char *store;            /* location (where.loc) */
    const char *user;             /* --user; NULL: stay who we are */
    const char *index_dir;        /* --index-dir; NULL: the index's default */
    const char *index_kind;       /* fts5 or engine (not checked yet when from $NEWSD_INDEX) */
    struct index_engine_options index_engine; /* the NEWSD_ENGINE_* variables */
    bool crawl;
    enum crawl_pages_mode crawl_pages;
    struct http_config http;    /* the main listener */
    struct http_config metrics; /* --metrics-listen; .listen NULL: none */
    struct api_config api;
    struct auth_options auth;
    struct push_webhook_options alerts; /* journal_path, compile: set at start */
};

/* NEWSD_NOW (test hook): the api's clock fixed at these unix seconds. */
static int resolve_fixed_now(int64_t *out)
{
    *out = 0;
    const char *s = getenv("NEWSD_NOW");
    if (!s || !*s)
        return 0;
    char *end;
    *out = strtoll(s, &end, 10);
    if (*end || *out <= 0) {
        cmd_fail("serve: NEWSD_NOW must be unix seconds");
        return -1;
    }
    return 0;
}

/* A time in ms from the environment (test hooks): dflt when unset. A bad
 * value (not a number from lo to hi) is warned about and dflt kept, as a
 * typo must not stop a server. */
static int64_t resolve_env_ms(const char *name, long long lo, long long hi, int64_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        log_warn("%s=%s is not %lld..%lld milliseconds; using the default", name, s, lo, hi);
        return dflt;
    }
    return v;
}

#define DAY_MS (86400 * 1000LL)

static int serve_resolve(struct serve_settings *set, const struct serve_flags *f)
{
    memset(set, 0, sizeof *set);
    const char *config_path = cmd_config_path(f->config_path);
    int cstatus = cmd_config_load(&set->cfg, config_path);
    if (cstatus != CMD_EXIT_OK)
        return cstatus;
    const struct config *cfg = &set->cfg;
    const char *listen = f->listen;
    if (!listen)
        listen = getenv("NEWSD_LISTEN");
    if ((!listen || !*listen) && cfg->listen[0])
        listen = cfg->listen;
    if (!listen || !*listen)
        listen = "127.0.0.1:8080";

    cmd_store_where_from(&set->where, f->store, cfg, config_path);
    set->store = set->where.loc;
    set->user = f->user ? f->user : cfg->user[0] ? cfg->user : NULL;
    set->index_dir = f->index_dir ? f->index_dir : cfg->index_dir[0] ? cfg->index_dir : NULL;
    set->index_kind = cmd_index_kind(f->index_kind, cfg->index);
    cmd_engine_options(&set->index_engine);
    set->crawl = !f->no_crawl && cfg->crawl != 0;
    set->crawl_pages = f->pages >= 0           ? (enum crawl_pages_mode)f->pages
                       : cfg->crawl_pages >= 0 ? (enum crawl_pages_mode)cfg->crawl_pages
                                               : CRAWL_PAGES_MISSING;
    bool access_log = !f->quiet && cfg->access_log != 0;
    set->http = (struct http_config){
        .listen = listen,
        .threads = (unsigned)(f->threads ? f->threads : cfg->threads),
        .access_log = access_log,
        .trusted_proxies = &cfg->trusted_proxies,
        .body_limit = api_body_limit,
    };
    log_set_format(f->log_format >= 0          ? (enum log_format)f->log_format
                   : cfg->log_format_json == 1 ? LOG_FORMAT_JSON
                                               : LOG_FORMAT_TEXT);
    /* --metrics-listen: a second, small server that answers only /metrics,
     * so the exposition can stay on an internal address. */
    const char *metrics_listen = f->metrics_listen        ? f->metrics_listen
                                 : cfg->metrics_listen[0] ? cfg->metrics_listen
                                                          : NULL;
    set->metrics = (struct http_config){.listen = metrics_listen,
                                        .threads = 1,
                                        .access_log = access_log,
                                        .trusted_proxies = &cfg->trusted_proxies};
    set->api.metrics_allow = &cfg->metrics_allow_networks;
    set->api.outbound = &cfg->outbound.policy;
    set->api.live_window_seconds = cfg->live_window_seconds;
    set->api.result_window = cfg->result_window;
    set->api.query_timeout_ms =
        f->query_timeout_ms >= 0 ? f->query_timeout_ms : cfg->query_timeout_ms;
    set->api.metrics_elsewhere = metrics_listen != NULL;
    set->api.stream_keepalive_ms = cfg->stream_keepalive_ms;
    set->api.stream_replay_window_s = cfg->stream_replay_window_s;
    set->api.stream_buffer_bytes = (size_t)cfg->stream_buffer_bytes;
    /* Test hook: every search sleeps this long first, so that tests can
     * fill the request queue on demand (tests/reliability/test_http_hardening.py). */
    const char *delay = getenv("NEWSD_TEST_SEARCH_DELAY_MS");
    if (delay && *delay)
        set->api.test_search_delay_ms = strtoll(delay, NULL, 10);
    if (resolve_fixed_now(&set->api.fixed_now) < 0)
        return CMD_EXIT_USAGE;
    /* NEWSD_KEY_CACHE_TTL_MS (docs/configuration.md): how long a looked-up
     * key is trusted; 0 turns the cache off. */
    set->auth.key_cache_ttl_ms = resolve_env_ms(
        "NEWSD_KEY_CACHE_TTL_MS", 0, AUTH_KEY_CACHE_TTL_MS_MAX, AUTH_KEY_CACHE_TTL_MS_DEFAULT);
    /* Webhooks are outgoing requests: [outbound] applies (docs/security.md).
     * The NEWSD_ALERTS_* times (test hooks, docs/operations.md): 0, the
     * default, when unset. */
    cmd_fetch_options(&set->alerts.fetch, cfg);
    /* But not timeout_seconds: a webhook has its own 10 s (docs/api.md). */
    set->alerts.fetch.timeout_ms = 0;
    set->alerts.lease_ms = resolve_env_ms("NEWSD_ALERTS_LEASE_MS", 1, DAY_MS, 0);
    set->alerts.retry_min_ms = resolve_env_ms("NEWSD_ALERTS_RETRY_MIN_MS", 1, DAY_MS, 0);
    set->alerts.retry_max_ms = resolve_env_ms("NEWSD_ALERTS_RETRY_MAX_MS", 1, DAY_MS, 0);
    set->alerts.expire_ms = resolve_env_ms("NEWSD_ALERTS_EXPIRE_MS", 1, DAY_MS, 0);
    return SERVE_GO;
}

/* ---- start: store, index, keys, api, listeners, crawler -------------------- */

/* What serve runs; stopped in the reverse order by serve_stop. */
struct serve_parts {
    struct store *store;
    struct index *index;
    struct auth *auth;
    struct api *api;
    struct http_server *server;
    struct http_server *metrics_server;
    struct crawler *crawler;
    struct push_webhook *alerts;
    struct retention *retention;
    struct run_as run_as;
    int lock_fd; /* the one-server-per-store lock (serve_lock_take); -1: none */
};

/* ---- one server per store ------------------------------------------------------ */

/* Two servers on one store would share its index directory: two processes'
 * checkpoints, merges and file deletions with nothing ordering them. The
 * engine's own lock only turns the second one into a reader that keeps its
 * changes in memory, which an operator never notices (a test server left
 * beside the service for 45 minutes). So serve takes the store's lock
 * (cmd/lock.h), like PostgreSQL's postmaster.pid, and a second serve is
 * refused naming the first. */

/* Where the lock of this store lives: beside an embedded store's database
 * file, in a PostgreSQL store's node-local index directory (each node of a
 * cluster has its own). */
static int serve_lock_path(char *out, size_t n, const char *loc, const char *index_dir)
{
    char db[4096];
    size_t len;
    if (!store_location_is_pg(loc)) {
        if (store_sqlite_path_at(loc, db, sizeof db, NULL) < 0) {
            cmd_fail("the store's path is too long");
            return -1;
        }
        len = (size_t)snprintf(out, n, "%s" CMD_LOCK_SUFFIX, db);
    } else {
        const char *dir = index_dir ? index_dir : INDEX_LOCAL_DIR_DEFAULT;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            cmd_fail("cannot create the index directory %s: %s", dir, strerror(errno));
            return -1;
        }
        len = (size_t)snprintf(out, n, "%s/" CMD_LOCK_NAME, dir);
    }
    if (len >= n) {
        cmd_fail("the store's path is too long");
        return -1;
    }
    return 0;
}

static int serve_lock_take(struct serve_parts *p, const struct serve_settings *set)
{
    char path[4096];
    if (serve_lock_path(path, sizeof path, set->store, set->index_dir) < 0)
        return -1;
    return cmd_lock_take(&p->lock_fd, path,
                         "start this one; two servers must not share one "
                         "store's index");
}

/* The store, with its FTS5 side fitted to the index (cmd_store_fit_index),
 * then the index. Listening does not wait long for the index: the first
 * start on a large store builds it for minutes (healthz says "starting" and
 * searches answer 503 meanwhile). A few seconds' grace covers every open
 * from the index's files, so clients of a restart see no 503. */
static int start_store_and_index(struct serve_parts *p, const struct serve_settings *set)
{
    struct err err;
    err_clear(&err);
    int rc;
    /* A store of an older schema is migrated only once this server holds
     * the store's lock: never under the old version's running server. A
     * cluster node starts while PostgreSQL is down (with the unit's restart
     * policy a refusal became a permanent failure): /livez answers,
     * /healthz says "database unreachable" until it is back. */
    const unsigned flags = CMD_OPEN_CREATE | CMD_OPEN_MIGRATE | CMD_OPEN_START_UNREACHABLE;
    rc = cmd_store_open_where(&p->store, &set->where, set->index_kind,
                              flags | CMD_OPEN_OUTDATED_QUIET);
    if (rc < 0 || serve_lock_take(p, set) < 0)
        return -1;
    if (rc == 1 && cmd_store_open_where(&p->store, &set->where, set->index_kind, flags) < 0)
        return -1;
    if (cmd_store_fit_index(p->store, set->index_kind) < 0)
        return -1;
    struct index_options iopt = {
        .kind = set->index_kind, .local_dir = set->index_dir, .engine = set->index_engine};
    if ((rc = index_open_background(&p->index, p->store, &iopt, &err)) < 0) {
        cmd_fail("cannot open the search index: %s", err_msg(&err, rc));
        return -1;
    }
    if (!index_wait_ready(p->index, SERVE_INDEX_GRACE_MS))
        log_info("search index: still being built; serving meanwhile (searches answer 503 "
                 "until it is ready)");
    return 0;
}

/* Key checks with the config file's plans, and the api over everything. */
static int start_api(struct serve_parts *p, const struct serve_settings *set)
{
    struct err err;
    err_clear(&err);
    int rc;
    if ((rc = auth_new_with(&p->auth, p->store, &set->auth, &err)) < 0) {
        cmd_fail("cannot start key checks: %s", err_msg(&err, rc));
        return -1;
    }
    if ((rc = config_plans_apply(&set->cfg, p->auth, &err)) < 0) {
        cmd_fail("config: %s", err_msg(&err, rc));
        return -1;
    }
    if ((rc = api_new(&p->api, p->store, p->index, p->auth, &set->api, &err)) < 0) {
        cmd_fail("%s", err_msg(&err, rc));
        return -1;
    }
    return 0;
}

static int start_listener(struct http_server **out, const struct http_config *cfg,
                          http_handler handler, struct api *api)
{
    struct err err;
    err_clear(&err);
    int rc = http_server_start(out, cfg, handler, api, &err);
    if (rc < 0) {
        cmd_fail("cannot listen on %s: %s", cfg->listen, err_msg(&err, rc));
        return -1;
    }
    return 0;
}

/* Bind with root's help when --user dropped it, then drop it for good. */
static int start_listeners(struct serve_parts *p, const struct serve_settings *set)
{
    if (run_as_bind(&p->run_as) < 0 ||
        start_listener(&p->server, &set->http, api_handle, p->api) < 0)
        return -1;
    if (set->metrics.listen &&
        start_listener(&p->metrics_server, &set->metrics, api_metrics_handle, p->api) < 0)
        return -1;
    return run_as_finish(&p->run_as);
}

/* The crawler polls the due feeds in a thread of its own (--no-crawl: not
 * at all); what it stores is searchable as soon as it commits. Its metrics
 * are shown either way (at 0 without it). */
static int start_crawler(struct serve_parts *p, const struct serve_settings *set)
{
    crawl_metrics_init();
    if (!set->crawl) {
        /* Said once, so that an operator (and a test) sees that no crawler
         * runs, rather than inferring it from feeds left unpolled. */
        log_info("crawler: off (--no-crawl or crawl = false): no feed is polled");
        return 0;
    }
    struct err err;
    err_clear(&err);
    int rc;
    /* Outgoing requests obey [outbound] (docs/security.md). */
    struct crawl_options copt = {0};
    cmd_crawl_options(&copt, &set->cfg);
    copt.pages = set->crawl_pages;
    if ((rc = crawl_new(&p->crawler, p->store, &copt, &err)) < 0 ||
        (rc = crawl_start(p->crawler, &err)) < 0) {
        cmd_fail("cannot start the crawler: %s", err_msg(&err, rc));
        return -1;
    }
    return 0;
}

static int compile_alert(void *ctx, const char *query_json, struct index_matcher **out,
                         struct err *err)
{
    return api_alert_matcher(ctx, query_json, out, err);
}

/* The webhook alerts' delivery worker (push/webhook.h): it follows the log
 * this node's index follows, and compiles each saved query through the
 * api's validators. */
static int start_alerts(struct serve_parts *p, struct serve_settings *set)
{
    push_webhook_metrics_init();
    struct err err;
    err_clear(&err);
    set->alerts.journal_path = store_journal_path(index_journal(p->index));
    set->alerts.compile = compile_alert;
    set->alerts.compile_ctx = p->api;
    int rc = push_webhook_start(&p->alerts, p->store, &set->alerts, &err);
    if (rc < 0) {
        cmd_fail("cannot start the alerts' delivery: %s", err_msg(&err, rc));
        return -1;
    }
    return 0;
}

/* [retention]: the articles past its limits are deleted in the
 * background, in batches (store/retention.h); nothing without limits. */
static int start_retention(struct serve_parts *p, const struct serve_settings *set)
{
    const struct config_retention *c = &set->cfg.retention;
    struct retention_options o = {
        .max_age_days = c->max_age_days,
        .max_articles = c->max_articles,
        .period_s = c->period_seconds,
        .pace = {.batch = c->batch_size},
    };
    struct err err;
    err_clear(&err);
    int rc = retention_start(&p->retention, p->store, &o, &err);
    if (rc < 0) {
        cmd_fail("%s", err_msg(&err, rc));
        return -1;
    }
    if (p->retention)
        log_info("retention: articles older than %lld days / beyond the newest %lld are deleted "
                 "(0 = no such limit)",
                 (long long)o.max_age_days, (long long)o.max_articles);
    return 0;
}

static int serve_start(struct serve_parts *p, struct serve_settings *set)
{
    if (set->user && run_as_begin(&p->run_as, set->user) < 0)
        return -1;
    if (!set->user && geteuid() == 0)
        log_warn("running as root: use --user USER to drop root privileges after binding");
    if (start_store_and_index(p, set) < 0 || start_api(p, set) < 0 || start_listeners(p, set) < 0 ||
        start_crawler(p, set) < 0 || start_alerts(p, set) < 0 || start_retention(p, set) < 0)
        return -1;
    print_address("listening on", set->http.listen, http_server_port(p->server), "");
    if (p->metrics_server)
        print_address("metrics on", set->metrics.listen, http_server_port(p->metrics_server),
                      "/metrics");
    char shown[512];
    log_info("newsd serving %s store %s", store_kind(p->store),
             store_location_redacted(set->store, shown, sizeof shown));
    return 0;
}

/* ---- wait and stop ----------------------------------------------------------- */

/* Block the signals serve_wait takes before any thread starts, so every
 * thread inherits the mask and only serve_wait receives them. SIGHUP is
 * among them: its default action would end the server without a word (an
 * operator's `kill -HUP`, or a reload by habit from nginx or PostgreSQL). */
static void block_stop_signals(sigset_t *stop_signals)
{
    sigemptyset(stop_signals);
    sigaddset(stop_signals, SIGTERM);
    sigaddset(stop_signals, SIGINT);
    sigaddset(stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Until SIGTERM or SIGINT. SIGHUP is logged and changes nothing: the log
 * goes to stderr (nothing to reopen) and the configuration is read at
 * start, which the message says. */
static void serve_wait(const sigset_t *stop_signals)
{
    int sig = 0;
    for (;;) {
        if (sigwait(stop_signals, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            break;
        log_info("signal %d (SIGHUP): nothing to reopen (the log goes to stderr) and the "
                 "configuration is read at start: restart newsd to apply a changed one",
                 sig);
    }
    log_info("signal %d: stopping", sig);
}

/* Finish in-flight requests, flush usage counts, stop the crawler before
 * the store closes. Parts never started are NULL (no-ops). */
static void serve_stop(struct serve_parts *p)
{
    http_server_stop(p->metrics_server);
    http_server_stop(p->server);
    push_webhook_stop(p->alerts); /* it compiles queries through the api */
    api_free(p->api);
    auth_free(p->auth);
    retention_stop(p->retention);
    crawl_free(p->crawler);
    index_close(p->index);
    store_close(p->store);
    if (p->lock_fd >= 0)
        close(p->lock_fd); /* last: the store is closed and the next server may start */
}

int cmd_serve(int argc, char **argv)
{
    static struct serve_flags flags;
    static struct serve_settings settings; /* a struct config is large */
    int status = serve_parse(&flags, argc, argv);
    if (status == SERVE_GO)
        status = serve_resolve(&settings, &flags);
    if (status != SERVE_GO)
        return status;

    sigset_t stop_signals;
    block_stop_signals(&stop_signals);
    struct serve_parts parts = {.lock_fd = -1};
    status = CMD_EXIT_FAIL;
    if (serve_start(&parts, &settings) == 0) {
        serve_wait(&stop_signals);
        status = CMD_EXIT_OK;
    }
    serve_stop(&parts);
    return status;
}
