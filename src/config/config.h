/* The config file of `newsd serve --config FILE` (and `newsd keys`,
 * `crawl` and `feeds` with --config FILE): server settings, plans and how
 * newsd makes outgoing requests. The format is a small INI dialect,
 * documented in docs/configuration.md and in config.c:
 *
 *     # comment
 *     [server]
 *     listen = 0.0.0.0:8080
 *     [plan developer]
 *     requests_per_day = 50
 *     [outbound]
 *     allow_networks = 10.0.0.0/8
 *     [retention]
 *     max_age_days = 90
 *     [stories]
 *     window_days = 3
 *
 * A [plan NAME] section for a built-in plan changes only the fields it
 * names; config_plans_apply merges that way. Errors name file:line. The
 * parser reads from memory, allocates nothing and never reads past len. */
#ifndef NEWSD_CONFIG_CONFIG_H
#define NEWSD_CONFIG_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "auth/auth.h"
#include "util/err.h"
#include "util/netpolicy.h"

#define CONFIG_PLANS_MAX 32
#define CONFIG_LISTEN_MAX 256
#define CONFIG_PATH_MAX 1024
#define CONFIG_FILE_MAX_BYTES (1024 * 1024)
#define CONFIG_LINE_MAX 4096

/* Fields a [plan] section set (bits of config.plan_fields[i]). */
enum config_plan_field {
    CONFIG_PLAN_REQUESTS_PER_DAY = 1 << 0,
    CONFIG_PLAN_REQUESTS_PER_MONTH = 1 << 1,
    CONFIG_PLAN_BURST_PER_SECOND = 1 << 2,
    CONFIG_PLAN_BURST_SIZE = 1 << 3,
    CONFIG_PLAN_RESULT_WINDOW = 1 << 4,
    CONFIG_PLAN_HISTORY_DAYS = 1 << 5,
    CONFIG_PLAN_DELAY_SECONDS = 1 << 6,
    CONFIG_PLAN_ALLOWED_ORIGINS = 1 << 7,
    CONFIG_PLAN_STREAMS = 1 << 8,
    CONFIG_PLAN_ALERTS = 1 << 9,
    CONFIG_PLAN_EXPORT_PER_DAY = 1 << 10,
};

/* [outbound]: every request newsd makes (feeds now; pages and webhooks to
 * come). A key added here gets a row in config.c's outbound_keys. */
#define CONFIG_USER_AGENT_MAX 257          /* user_agent: 256 bytes and the NUL */
#define CONFIG_PROXY_MAX 513               /* proxy: 512 bytes and the NUL */
#define CONFIG_OUTBOUND_TIMEOUT_MAX_S 3600 /* timeout_seconds: at most an hour */
struct config_outbound {
    struct netpolicy policy; /* allow_networks: special-use networks allowed */
    /* user_agent: the User-Agent header, printable ASCII; "" = the
     * default (fetch/fetch.h FETCH_DEFAULT_USER_AGENT) */
    char user_agent[CONFIG_USER_AGENT_MAX];
    /* proxy: http://[user:password@]host:port every request goes through;
     * "" = none (proxies named by the environment are never used) */
    char proxy[CONFIG_PROXY_MAX];
    /* timeout_seconds: the whole time of one feed or page request,
     * counted from its own start; 0 = the fetcher's default (webhooks keep
     * their own) */
    int64_t timeout_seconds;
};

/* [retention]: which articles `newsd serve` deletes (store/retention.h);
 * 0 = no such limit. A key added here gets a row in config.c's
 * retention_keys. */
struct config_retention {
    int64_t max_age_days;   /* published longer ago than this */
    int64_t max_articles;   /* beyond this many, the oldest */
    int64_t period_seconds; /* between runs; 0 = the default (300) */
    int64_t batch_size;     /* articles per transaction; 0 = the default (1000) */
};

/* [crawl]: the feed crawler's scheduling (ingest/feeds/feeds.h); 0 = the
 * default. A key added here gets a row in config.c's crawl_keys. */
struct config_crawl {
    int64_t max_interval_s;           /* longest wait between two polls of a feed */
    int64_t headlines_max_interval_s; /* the same for a feed marked headlines */
};

/* [stories]: how articles are grouped into stories at ingest
 * (story/assign.h, store_stories_window_set); 0 = the default. */
struct config_stories {
    int64_t window_days;        /* articles compared within this many days */
    int64_t similarity_percent; /* sketch similarity that joins a story, in % */
};

struct config {
    char listen[CONFIG_LISTEN_MAX]; /* HOST:PORT; "" = not set (flag, env, default) */
    unsigned threads;               /* HTTP workers; 0 = not set (number of cores) */
    int64_t live_window_seconds;    /* top-headlines live window */
    int64_t result_window;          /* page*pageSize cap for plans without one; 0 = none */
    int64_t query_timeout_ms;       /* time budget of one search; 0 = none */
    /* Live streams (api/api.h); 0 = the defaults. */
    int64_t stream_keepalive_ms;
    int64_t stream_replay_window_s;
    int64_t stream_buffer_bytes;
    char index[8]; /* search backend "fts5" / "engine"; "" = not set */
    /* The rest of serve's settings ("" / -1 = not set: flag, env, default). */
    char store[CONFIG_PATH_MAX];
    char index_dir[CONFIG_PATH_MAX];
    char metrics_listen[CONFIG_LISTEN_MAX];
    char user[64];
    int crawl, access_log; /* 0 / 1, -1 = not set */
    int crawl_pages;       /* pages: enum crawl_pages_mode (ingest/feeds/feeds.h), -1 = not set */
    int log_format_json;   /* 0 text, 1 json, -1 = not set */
    /* X-Forwarded-For is believed only from these peers (none by default). */
    struct netpolicy trusted_proxies;
    /* /metrics answers only clients in these networks (none set: anyone). */
    struct netpolicy metrics_allow_networks;
    struct auth_plan plans[CONFIG_PLANS_MAX]; /* in file order; unset fields are 0 */
    unsigned plan_fields[CONFIG_PLANS_MAX];   /* enum config_plan_field bits given */
    size_t n_plans;
    struct config_outbound outbound;
    struct config_retention retention;
    struct config_crawl crawl_cfg; /* "crawl" is [server]'s on/off */
    struct config_stories stories;
};

/* Values used when there is no config file (or it leaves them out): listen
 * "" and threads 0 (not set), the 48 h live window, a result window of
 * 10,000, a 5 s query time budget, no plans beyond the built-in ones, no
 * special-use network allowed for outgoing requests. */
void config_defaults(struct config *c);

/* Parse text[0..len) over c (which config_defaults prepared); name is used in
 * messages ("name:line: ..."). Returns 0, or ERR_PARSE with err naming the
 * line and the problem; c is then partly updated and should be dropped. */
int config_parse(const char *text, size_t len, const char *name, struct config *c, struct err *err);

/* config_defaults, then read and parse the file at path (at most
 * CONFIG_FILE_MAX_BYTES). ERR_IO when unreadable, ERR_TOO_LARGE, ERR_PARSE. */
int config_load(const char *path, struct config *c, struct err *err);

/* Define the config's plans in a: a plan that a already knows (the built-in
 * ones) keeps the fields the file did not set; a new plan starts unlimited. */
int config_plans_apply(const struct config *c, struct auth *a, struct err *err);

#endif
