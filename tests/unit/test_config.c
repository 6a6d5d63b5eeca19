/* config/: the config file — valid files, overrides of the built-in plans,
 * and a table of malformed files whose errors must name the line. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth/auth.h"
#include "config/config.h"
#include "ingest/feeds/feeds.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/netpolicy.h"

static int parse(const char *text, struct config *c, struct err *err)
{
    config_defaults(c);
    err_clear(err);
    return config_parse(text, strlen(text), "test.conf", c, err);
}

static const struct auth_plan *find_plan(const struct config *c, const char *name, unsigned *fields)
{
    for (size_t i = 0; i < c->n_plans; i++) {
        if (!strcmp(c->plans[i].name, name)) {
            if (fields)
                *fields = c->plan_fields[i];
            return &c->plans[i];
        }
    }
    return NULL;
}

static void defaults_leave_listen_and_threads_unset(void **state)
{
    (void)state;
    struct config c;
    memset(&c, 0x5a, sizeof c);
    config_defaults(&c);
    assert_string_equal(c.listen, "");
    assert_int_equal(c.threads, 0);
    assert_int_equal(c.live_window_seconds, LIMIT_LIVE_WINDOW_SECONDS);
    assert_int_equal(c.result_window, LIMIT_RESULT_WINDOW);
    assert_int_equal(c.n_plans, 0);
}

static void a_full_file_sets_every_field(void **state)
{
    (void)state;
    static const char text[] =
        "\xEF\xBB\xBF# newsd configuration\r\n"
        "\n"
        "[server]\r\n"
        "  listen = 0.0.0.0:9090  \r\n"
        "threads=8\n"
        "live_window_hours = 24\n"
        "result_window = 5000\n"
        "; plans\n"
        "[ plan gold ]\n"
        "requests_per_day = 1000\n"
        "requests_per_month = 20000\n"
        "burst_per_second = 2.5\n"
        "burst_size = 10\n"
        "result_window = 500\n"
        "history_days = 90\n"
        "delay_seconds = 3600\n"
        "allowed_origins = https://a.example,  https://b.example\thttp://c.example:8080\n"
        "\n"
        "[outbound]\n"
        "allow_networks = 127.0.0.0/8, ::1  10.20.0.0/16\n"
        "[plan free-tier.v2]\n"
        "requests_per_day = 0"; /* no final newline */
    struct config c;
    struct err err;
    int rc = parse(text, &c, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(c.listen, "0.0.0.0:9090");
    assert_int_equal(c.threads, 8);
    assert_int_equal(c.live_window_seconds, 24 * 3600);
    assert_int_equal(c.result_window, 5000);
    assert_int_equal(c.n_plans, 2);
    unsigned fields = 0;
    const struct auth_plan *g = find_plan(&c, "gold", &fields);
    assert_non_null(g);
    assert_int_equal(g->requests_per_day, 1000);
    assert_int_equal(g->requests_per_month, 20000);
    assert_true(g->burst_per_second == 2.5);
    assert_int_equal(g->burst_size, 10);
    assert_int_equal(g->result_window, 500);
    assert_int_equal(g->history_days, 90);
    assert_int_equal(g->delay_seconds, 3600);
    assert_string_equal(g->allowed_origins,
                        "https://a.example https://b.example http://c.example:8080");
    assert_int_equal(fields, 0xff);
    const struct auth_plan *free_tier = find_plan(&c, "free-tier.v2", &fields);
    assert_non_null(free_tier);
    assert_int_equal(fields, CONFIG_PLAN_REQUESTS_PER_DAY);
    /* [outbound]: the networks, each allowing its addresses. */
    assert_int_equal(c.outbound.policy.n_allow, 3);
    static const struct {
        const char *addr;
        bool allowed;
    } want[] = {{"127.0.0.1", true},
                {"::1", true},
                {"10.20.1.2", true},
                {"10.21.0.1", false},
                {"192.168.0.1", false}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct netpolicy_addr a;
        assert_true(netpolicy_addr_from_host(&a, want[i].addr, strlen(want[i].addr)));
        assert_int_equal(netpolicy_permits(&c.outbound.policy, &a, NULL, 0), want[i].allowed);
    }
}

static void user_agent_and_proxy_are_read_with_or_without_quotes(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[server]\nthreads = 2\n", &c, &err), 0);
    assert_string_equal(c.outbound.user_agent, ""); /* "": the fetcher's default */
    assert_string_equal(c.outbound.proxy, "");
    assert_int_equal(parse("[outbound]\nuser_agent = \"newsd/0.14 (+https://news.example.org; "
                           "ops@example.org)\"\nproxy = http://user:pw@proxy.lan:3128\n",
                           &c, &err),
                     0);
    assert_string_equal(c.outbound.user_agent,
                        "newsd/0.14 (+https://news.example.org; ops@example.org)");
    assert_string_equal(c.outbound.proxy, "http://user:pw@proxy.lan:3128");
    assert_int_equal(c.outbound.timeout_seconds, 0); /* 0: each fetcher's default */
    assert_int_equal(parse("[outbound]\ntimeout_seconds = 7\n", &c, &err), 0);
    assert_int_equal(c.outbound.timeout_seconds, 7);
    assert_int_equal(
        parse("[outbound]\nuser_agent = MyNews/1.0 (+mailto:me@example.org)\n", &c, &err), 0);
    assert_string_equal(c.outbound.user_agent, "MyNews/1.0 (+mailto:me@example.org)");
    /* The longest value that fits, and one byte more. */
    char text[400];
    snprintf(text, sizeof text, "[outbound]\nuser_agent = %0*d\n", CONFIG_USER_AGENT_MAX - 1, 0);
    assert_int_equal(parse(text, &c, &err), 0);
    assert_int_equal(strlen(c.outbound.user_agent), CONFIG_USER_AGENT_MAX - 1);
    snprintf(text, sizeof text, "[outbound]\nuser_agent = %0*d\n", CONFIG_USER_AGENT_MAX, 0);
    assert_int_equal(parse(text, &c, &err), ERR_PARSE);
    assert_non_null(strstr(err.msg, "longer than 256 bytes"));
}

/* A proxy URL (or a postgresql:// store) may carry user:password@:
 * however it is wrong, the error names the key and the line, never the
 * value. */
static void a_bad_proxy_is_refused_without_echoing_its_password(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[outbound]\nproxy = http://user:PW5ECRET@bad host:3128\n",
        "[outbound]\nproxy = socks5://user:PW5ECRET@proxy.lan:1080\n",
        "[outbound]\nproxy = user:PW5ECRET@proxy.lan:3128\n",
        "[outbound]\nproxy = http://user:PW5ECRET\x01@proxy.lan:3128\n",
        "[outbound]\nproxy = http://user:PW5ECRET\xC3\xA9@proxy.lan:3128\n",
        "[outbound]\nproxy = \"http://user:PW5\"ECRET@proxy.lan:3128\"\n",
        "[outbound]\nproxy = http:///user:PW5ECRET@proxy.lan:3128\n",
        /* A PostgreSQL store's location holds one too. */
        "[server]\nstore = \"postgresql://newsd:PW5ECRET@db\x01/newsd\"\n",
        "[server]\nstore = postgresql://newsd:PW5ECRET@db/\"newsd\"\n",
    };
    struct config c;
    struct err err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(bad[i], &c, &err), ERR_PARSE);
        if (strstr(err.msg, "PW5") || strstr(err.msg, "ECRET"))
            fail_msg("'%s' echoes the password: %s", bad[i], err.msg);
        assert_true(strstr(err.msg, "test.conf:2: proxy") || strstr(err.msg, "test.conf:2: store"));
        assert_string_equal(c.outbound.proxy, "");
    }
}

static void without_outbound_no_special_network_is_allowed(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[server]\nthreads = 2\n", &c, &err), 0);
    assert_int_equal(c.outbound.policy.n_allow, 0);
    struct netpolicy_addr a;
    assert_true(netpolicy_addr_from_host(&a, "127.0.0.1", 9));
    assert_false(netpolicy_permits(&c.outbound.policy, &a, NULL, 0));
    /* An empty list is allowed and allows nothing. */
    assert_int_equal(parse("[outbound]\nallow_networks =\n", &c, &err), 0);
    assert_int_equal(c.outbound.policy.n_allow, 0);
}

static void retention_keys_are_read_and_default_to_off(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[server]\nthreads = 2\n", &c, &err), 0);
    assert_int_equal(c.retention.max_age_days, 0);
    assert_int_equal(c.retention.max_articles, 0);
    assert_int_equal(c.retention.period_seconds, 0);
    assert_int_equal(c.retention.batch_size, 0);
    int rc = parse("[retention]\nmax_age_days = 90\nmax_articles = 1000000\n"
                   "period_seconds = 1\nbatch_size = 500\n",
                   &c, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.retention.max_age_days, 90);
    assert_int_equal(c.retention.max_articles, 1000000);
    assert_int_equal(c.retention.period_seconds, 1);
    assert_int_equal(c.retention.batch_size, 500);
}

static void an_empty_file_and_comments_only_change_nothing(void **state)
{
    (void)state;
    struct config c, d;
    struct err err;
    config_defaults(&d);
    assert_int_equal(parse("", &c, &err), 0);
    assert_memory_equal(&c, &d, sizeof c);
    assert_int_equal(parse("# a\n; b\n   \n\t# c\n", &c, &err), 0);
    assert_memory_equal(&c, &d, sizeof c);
}

static void an_override_keeps_the_builtin_fields_it_does_not_name(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[plan developer]\nrequests_per_day = 50\n"
                           "[plan business]\nallowed_origins = https://x.example\n"
                           "[plan gold]\nburst_per_second = 1\n",
                           &c, &err),
                     0);
    struct auth *a = NULL;
    /* No store: only the plan table is used. */
    assert_int_equal(auth_new(&a, NULL, &err), 0);
    assert_int_equal(config_plans_apply(&c, a, &err), 0);
    struct auth_plan p;
    assert_int_equal(auth_plan_get(a, "developer", &p), 0);
    assert_int_equal(p.requests_per_day, 50);
    assert_int_equal(p.result_window, 100);
    assert_int_equal(p.delay_seconds, 86400);
    assert_int_equal(p.history_days, 30);
    assert_int_equal(auth_plan_get(a, "business", &p), 0);
    assert_int_equal(p.requests_per_month, 250000);
    assert_string_equal(p.allowed_origins, "https://x.example");
    assert_int_equal(auth_plan_get(a, "gold", &p), 0);
    assert_true(p.burst_per_second == 1.0);
    assert_int_equal(p.requests_per_day + p.requests_per_month + p.result_window, 0);
    assert_int_equal(auth_plan_get(a, "unlimited", &p), 0);
    assert_int_equal(p.requests_per_day, 0);
    auth_free(a);
}

static void an_override_may_lift_a_builtin_limit_with_zero(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[plan developer]\ndelay_seconds = 0\nresult_window=0\n", &c, &err), 0);
    struct auth *a = NULL;
    assert_int_equal(auth_new(&a, NULL, &err), 0);
    assert_int_equal(config_plans_apply(&c, a, &err), 0);
    struct auth_plan p;
    assert_int_equal(auth_plan_get(a, "developer", &p), 0);
    assert_int_equal(p.delay_seconds, 0);
    assert_int_equal(p.result_window, 0);
    assert_int_equal(p.requests_per_day, 100);
    auth_free(a);
}

static void a_plans_alerts_default_to_ten_and_may_be_set(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[plan developer]\nalerts = 2\n[plan gold]\nrequests_per_day = 5\n"
                           "[plan free]\nalerts = 0\n",
                           &c, &err),
                     0);
    struct auth *a = NULL;
    assert_int_equal(auth_new(&a, NULL, &err), 0);
    assert_int_equal(config_plans_apply(&c, a, &err), 0);
    struct auth_plan p;
    assert_int_equal(auth_plan_get(a, "developer", &p), 0);
    assert_int_equal(p.alerts, 2);
    assert_int_equal(auth_plan_get(a, "gold", &p), 0); /* new, without the key */
    assert_int_equal(p.alerts, AUTH_PLAN_ALERTS_DEFAULT);
    assert_int_equal(auth_plan_get(a, "free", &p), 0); /* 0: no limit */
    assert_int_equal(p.alerts, 0);
    assert_int_equal(auth_plan_get(a, "business", &p), 0);
    assert_int_equal(p.alerts, 10);
    auth_free(a);
    assert_true(parse("[plan x]\nalerts = -1\n", &c, &err) < 0);
}

static void streams_default_to_five_per_key_and_are_set_per_plan(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    assert_int_equal(parse("[server]\nstream_keepalive_seconds = 2\n"
                           "stream_replay_window_seconds = 60\nstream_buffer_bytes = 4096\n"
                           "[plan developer]\nstreams = 1\n[plan gold]\nburst_size = 3\n"
                           "[plan free]\nstreams = 0\n",
                           &c, &err),
                     0);
    assert_int_equal(c.stream_keepalive_ms, 2000);
    assert_int_equal(c.stream_replay_window_s, 60);
    assert_int_equal(c.stream_buffer_bytes, 4096);
    struct auth *a = NULL;
    assert_int_equal(auth_new(&a, NULL, &err), 0);
    assert_int_equal(config_plans_apply(&c, a, &err), 0);
    struct auth_plan p;
    assert_int_equal(auth_plan_get(a, "developer", &p), 0);
    assert_int_equal(p.streams, 1);
    assert_int_equal(auth_plan_get(a, "business", &p), 0);
    assert_int_equal(p.streams, AUTH_PLAN_STREAMS_DEFAULT);
    assert_int_equal(auth_plan_get(a, "gold", &p), 0); /* a new plan: 5 too */
    assert_int_equal(p.streams, AUTH_PLAN_STREAMS_DEFAULT);
    assert_int_equal(auth_plan_get(a, "free", &p), 0); /* 0: no limit */
    assert_int_equal(p.streams, 0);
    auth_free(a);
    assert_int_not_equal(parse("[server]\nstream_keepalive_seconds = 0\n", &c, &err), 0);
    assert_int_not_equal(parse("[server]\nstream_buffer_bytes = 10\n", &c, &err), 0);
    assert_int_not_equal(parse("[plan x]\nstreams = -1\n", &c, &err), 0);
}

static const struct bad_case {
    const char *text;
    size_t line;
    const char *says; /* a part of the message */
} bad_cases[] = {
    {"listen = x:1\n", 1, "outside a section"},
    {"[server]\nlisten = a:1\nport = 80\n", 3, "unknown key 'port'"},
    {"[server]\nthreads = 8\nthreads = 9\n", 3, "set twice"},
    {"[server]\nthreads = 8\n[server]\nthreads = 9\n", 4, "set twice"},
    {"[server]\nthreads = -1\n", 2, "not a whole number"},
    {"[server]\nthreads = 4097\n", 2, "out of range"},
    {"[server]\nthreads = 1e2\n", 2, "not a whole number"},
    {"[server]\nthreads = 0x10\n", 2, "not a whole number"},
    {"[server]\nthreads = 8 # eight\n", 2, "not a whole number"},
    {"[server]\nthreads =\n", 2, "needs a value"},
    {"[server]\nlive_window_hours = 0\n", 2, "out of range"},
    {"[server]\nresult_window = 99999999999999999999999\n", 2, "not a whole number"},
    {"[server]\nlisten =\n", 2, "listen needs HOST:PORT"},
    {"[server]\nlisten = a b:1\n", 2, "not HOST:PORT"},
    {"[server]\n= 5\n", 2, "key is missing"},
    {"[server]\njust words\n", 2, "expected 'key = value'"},
    {"\n\n[servers]\n", 3, "unknown section [servers]"},
    {"[planet x]\n", 1, "unknown section"},
    {"[server\n", 1, "ends with ']'"},
    {"[plan]\n", 1, "needs a name"},
    {"[plan a b]\n", 1, "may only use"},
    {"[plan g/old]\n", 1, "may only use"},
    {"[plan aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n", 1, "longer than"},
    {"[plan gold]\n[plan gold]\n", 2, "appears twice"},
    {"[plan gold]\nrequests_per_hour = 5\n", 2, "unknown key 'requests_per_hour'"},
    {"[plan gold]\nrequests_per_day = 5\nrequests_per_day = 6\n", 3, "set twice"},
    {"[plan gold]\nrequests_per_day = five\n", 2, "not a whole number"},
    {"[plan gold]\nrequests_per_day = 2.5\n", 2, "not a whole number"},
    {"[plan gold]\nrequests_per_day = +5\n", 2, "not a whole number"},
    {"[plan gold]\nburst_per_second = .5\n", 2, "not a number"},
    {"[plan gold]\nburst_per_second = 5.\n", 2, "not a number"},
    {"[plan gold]\nburst_per_second = 1.2.3\n", 2, "not a number"},
    {"[plan gold]\nburst_per_second = -1\n", 2, "not a number"},
    {"[plan gold]\nburst_per_second = 0.0000000001\n", 2, "not a number"},
    {"[plan gold]\nburst_per_second = 2000000000\n", 2, "out of range"},
    {"[plan gold]\nburst_per_second =\n", 2, "needs a value"},
    {"[plan gold]\nhistory_days = 1000001\n", 2, "out of range"},
    {"[plan gold]\nallowed_origins = https://caf\xC3\xA9.example\n", 2, "printable ASCII"},
    {"[server]\ncrawl = maybe\n", 2, "crawl: 'maybe' is not true or false"},
    {"[server]\naccess_log =\n", 2, "not true or false"},
    {"[server]\nlog_format = xml\n", 2, "log_format: 'xml' is not text or json"},
    {"[server]\npages = sometimes\n", 2, "pages: 'sometimes' is not missing, always or never"},
    {"[server]\ntrusted_proxies = 10.0.0.1/8\n", 2, "trusted_proxies:"},
    {"[server]\nmetrics_allow_networks = example.com\n", 2, "metrics_allow_networks:"},
    {"[server]\nuser = a b\n", 2, "user: 'a b' may only hold printable ASCII without blanks"},
    {"[server]\nstore = a\x01b\n", 2, "store may not hold control bytes"},
    {"[server]\nmetrics_listen = a b:1\n", 2, "not HOST:PORT"},
    {"[server]\ncrawl = no\ncrawl = yes\n", 3, "set twice"},
    {"[outbound]\nallow_network = 10.0.0.0/8\n", 2,
     "unknown key 'allow_network' in [outbound] (allow_networks, user_agent, proxy, "
     "timeout_seconds)"},
    {"[outbound]\ntimeout_seconds = 0\n", 2, "timeout_seconds: 0 is out of range (1 to 3600)"},
    {"[outbound]\ntimeout_seconds = 3601\n", 2, "out of range"},
    {"[outbound]\ntimeout_seconds = 1.5\n", 2, "not a whole number"},
    {"[outbound]\ntimeout_seconds = 5\ntimeout_seconds = 6\n", 3, "set twice"},
    {"[outbound]\nuser_agent =\n", 2, "user_agent needs a value"},
    {"[outbound]\nuser_agent = \"\"\n", 2, "user_agent needs a value"},
    {"[outbound]\nuser_agent = newsd (caf\xC3\xA9)\n", 2, "printable ASCII"},
    {"[outbound]\nuser_agent = a \"b\" c\n", 2, "printable ASCII"},
    {"[outbound]\nuser_agent = a\nuser_agent = b\n", 3, "set twice"},
    {"[outbound]\nproxy = 10.0.0.1:3128\n", 2, "not an http:// URL"},
    {"[outbound]\nproxy = socks5://10.0.0.1:1080\n", 2, "not an http:// URL"},
    {"[outbound]\nproxy = http://\n", 2, "names no host"},
    {"[outbound]\nproxy = http://a b:1\n", 2, "names no host"},
    {"[outbound]\nallow_networks = ::1\nallow_networks = ::1\n", 3, "set twice"},
    {"[outbound]\nallow_networks = ::1\n[outbound]\nallow_networks = ::1\n", 4, "set twice"},
    {"[outbound]\nallow_networks = 127.0.0.1/8\n", 2,
     "allow_networks: '127.0.0.1/8' has bits set past its prefix length: write 127.0.0.0/8"},
    {"[outbound]\nallow_networks = 10.0.0.0/8 localhost\n", 2,
     "allow_networks: 'localhost' is not a network"},
    {"[outbound]\nallow_networks = 10.0.0.0/40\n", 2, "prefix length"},
    {"[outbound]\nlisten = a:1\n", 2, "unknown key 'listen' in [outbound]"},
    {"[outbounds]\n", 1, "unknown section [outbounds] (expected [server], [outbound]"},
    {"[retention]\nmax_days = 5\n", 2,
     "unknown key 'max_days' in [retention] (max_age_days, max_articles"},
    {"[retention]\nmax_age_days = 5\nmax_age_days = 6\n", 3, "set twice"},
    {"[retention]\nmax_age_days = 5\n[retention]\nmax_age_days = 6\n", 4, "set twice"},
    {"[retention]\nmax_age_days = -1\n", 2, "not a whole number"},
    {"[retention]\nmax_age_days = 1000001\n", 2, "out of range"},
    {"[retention]\nperiod_seconds = 0\n", 2, "out of range"},
    {"[retention]\nbatch_size = 100001\n", 2, "out of range"},
    {"[retention]\nmax_articles =\n", 2, "needs a value"},
    {"[retentions]\n", 1, "[retention]"},
};

/* Every setting of newsd serve has a [server] key (issue 18): the flags'
 * values written in the file land in the fields serve reads. */
static void every_serve_setting_has_a_server_key(void **state)
{
    (void)state;
    static const char text[] = "[server]\n"
                               "store = /var/lib/news d\n"
                               "index_dir = /var/cache/newsd-index\n"
                               "metrics_listen = 127.0.0.1:9108\n"
                               "user = newsd\n"
                               "crawl = off\n"
                               "access_log = yes\n"
                               "log_format = json\n"
                               "trusted_proxies = 127.0.0.1 10.0.0.0/8\n"
                               "metrics_allow_networks = 192.168.0.0/16, ::1\n"
                               "index = fts5\n"
                               "pages = never\n";
    struct config c;
    struct err err;
    assert_int_equal(parse(text, &c, &err), 0);
    assert_string_equal(c.store, "/var/lib/news d");
    assert_string_equal(c.index_dir, "/var/cache/newsd-index");
    assert_string_equal(c.metrics_listen, "127.0.0.1:9108");
    assert_string_equal(c.user, "newsd");
    assert_int_equal(c.crawl, 0);
    assert_int_equal(c.access_log, 1);
    assert_int_equal(c.log_format_json, 1);
    assert_string_equal(c.index, "fts5");
    assert_int_equal(c.crawl_pages, CRAWL_PAGES_NEVER);
    struct netpolicy_addr a;
    assert_true(netpolicy_addr_from_host(&a, "10.9.8.7", 8));
    assert_true(netpolicy_holds(&c.trusted_proxies, &a));
    assert_false(netpolicy_holds(&c.metrics_allow_networks, &a));
    assert_true(netpolicy_addr_from_host(&a, "::1", 3));
    assert_true(netpolicy_holds(&c.metrics_allow_networks, &a));
    assert_true(netpolicy_addr_from_host(&a, "127.0.0.2", 9));
    assert_false(netpolicy_holds(&c.trusted_proxies, &a));
    /* Not given: "not set" (flags, environment and defaults decide). */
    assert_int_equal(parse("[server]\nthreads = 2\n", &c, &err), 0);
    assert_int_equal(c.crawl, -1);
    assert_int_equal(c.access_log, -1);
    assert_int_equal(c.log_format_json, -1);
    assert_int_equal(c.crawl_pages, -1);
    assert_string_equal(c.store, "");
    assert_int_equal(c.trusted_proxies.n_allow, 0);
}

static void malformed_files_fail_with_their_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *bc = &bad_cases[i];
        struct config c;
        struct err err;
        int rc = parse(bc->text, &c, &err);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "test.conf:%zu: ", bc->line);
        if (rc != ERR_PARSE || strncmp(err.msg, prefix, strlen(prefix)) ||
            !strstr(err.msg, bc->says))
            fail_msg("case %zu (%s): rc %d, message '%s'; wanted '%s...%s'", i, bc->text, rc,
                     err.msg, prefix, bc->says);
    }
}

static void nul_bytes_and_overlong_lines_are_errors(void **state)
{
    (void)state;
    struct config c;
    struct err err;
    static const char with_nul[] = "[server]\nthreads = 8\0\n";
    config_defaults(&c);
    assert_int_equal(config_parse(with_nul, sizeof with_nul - 1, "f", &c, &err), ERR_PARSE);
    assert_non_null(strstr(err.msg, "f:2: NUL"));

    size_t n = CONFIG_LINE_MAX + 100;
    char *longline = malloc(n + 1);
    assert_non_null(longline);
    memcpy(longline, "# ", 2);
    memset(longline + 2, 'x', n - 2);
    longline[n] = '\0';
    assert_int_equal(parse(longline, &c, &err), ERR_PARSE);
    assert_non_null(strstr(err.msg, "test.conf:1: line longer"));
    free(longline);

    /* allowed_origins past its buffer. */
    char origins[1200];
    int len = snprintf(origins, sizeof origins, "[plan o]\nallowed_origins =");
    while (len < 1100)
        len += snprintf(origins + len, sizeof origins - (size_t)len, " https://o.example");
    assert_int_equal(parse(origins, &c, &err), ERR_PARSE);
    assert_non_null(strstr(err.msg, "test.conf:2: allowed_origins is longer"));
}

static void every_prefix_of_a_valid_file_parses_or_fails_cleanly(void **state)
{
    (void)state;
    static const char text[] = "[server]\nlisten = 127.0.0.1:1\nthreads = 12\n"
                               "[plan p]\nburst_per_second = 12.75\nallowed_origins = a b\n";
    for (size_t n = 0; n <= sizeof text - 1; n++) {
        char *copy = malloc(n ? n : 1); /* exact size: ASan sees any over-read */
        assert_non_null(copy);
        memcpy(copy, text, n);
        struct config c;
        struct err err;
        err_clear(&err);
        config_defaults(&c);
        int rc = config_parse(copy, n, "p", &c, &err);
        assert_true(rc == 0 || rc == ERR_PARSE);
        if (rc == ERR_PARSE)
            assert_int_equal(strncmp(err.msg, "p:", 2), 0);
        if (n == sizeof text - 1) {
            assert_int_equal(rc, 0);
            assert_true(c.plans[0].burst_per_second == 12.75);
        }
        free(copy);
    }
}

static void config_load_reads_a_file_and_reports_missing_or_huge_ones(void **state)
{
    (void)state;
    char path[] = "/tmp/newsd-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char body[] = "[server]\nresult_window = 123\n[plan x]\nhistory_days = 7\n";
    assert_int_equal(write(fd, body, sizeof body - 1), (ssize_t)(sizeof body - 1));
    close(fd);
    struct config c;
    struct err err;
    err_clear(&err);
    assert_int_equal(config_load(path, &c, &err), 0);
    assert_int_equal(c.result_window, 123);
    assert_int_equal(c.n_plans, 1);
    assert_int_equal(c.plans[0].history_days, 7);
    assert_int_equal(c.live_window_seconds, LIMIT_LIVE_WINDOW_SECONDS);

    /* An error names the file. */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[server]\n\nthreads = many\n", f);
    fclose(f);
    assert_int_equal(config_load(path, &c, &err), ERR_PARSE);
    char want[64];
    snprintf(want, sizeof want, "%s:3: ", path);
    assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);

    f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i <= CONFIG_FILE_MAX_BYTES / 10; i++)
        fputs("#23456789\n", f);
    fclose(f);
    assert_int_equal(config_load(path, &c, &err), ERR_TOO_LARGE);
    unlink(path);
    assert_int_equal(config_load(path, &c, &err), ERR_IO);
    assert_non_null(strstr(err.msg, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_leave_listen_and_threads_unset),
        cmocka_unit_test(a_full_file_sets_every_field),
        cmocka_unit_test(without_outbound_no_special_network_is_allowed),
        cmocka_unit_test(user_agent_and_proxy_are_read_with_or_without_quotes),
        cmocka_unit_test(a_bad_proxy_is_refused_without_echoing_its_password),
        cmocka_unit_test(retention_keys_are_read_and_default_to_off),
        cmocka_unit_test(an_empty_file_and_comments_only_change_nothing),
        cmocka_unit_test(an_override_keeps_the_builtin_fields_it_does_not_name),
        cmocka_unit_test(an_override_may_lift_a_builtin_limit_with_zero),
        cmocka_unit_test(a_plans_alerts_default_to_ten_and_may_be_set),
        cmocka_unit_test(every_serve_setting_has_a_server_key),
        cmocka_unit_test(streams_default_to_five_per_key_and_are_set_per_plan),
        cmocka_unit_test(malformed_files_fail_with_their_line),
        cmocka_unit_test(nul_bytes_and_overlong_lines_are_errors),
        cmocka_unit_test(every_prefix_of_a_valid_file_parses_or_fails_cleanly),
        cmocka_unit_test(config_load_reads_a_file_and_reports_missing_or_huge_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
