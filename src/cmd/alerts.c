/* newsd alerts (docs/api.md §7): list, add and remove the webhook alerts
 * of the store, the operator's side of /v2/alerts. An alert added here is
 * validated exactly as POST /v2/alerts validates it (api_alert_add), but
 * no plan limits the operator. */
#include "api/api.h"
#include "auth/auth.h"
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "config/config.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/jw.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/timefmt.h"
#include "util/urlview.h"

#include "util/banned.h"

static void alerts_usage(FILE *f)
{
    fprintf(f,
            "usage: newsd alerts list [--store LOC] [--config FILE] [--key-id ID]\n"
            "       newsd alerts add [--store LOC] [--config FILE] --key-id ID --webhook URL\n"
            "                        [--secret SECRET] [--q Q] [--qintitle Q] [--search-in LIST]\n"
            "                        [--sources LIST] [--domains LIST] [--exclude-domains LIST]\n"
            "                        [--language LL] [--dedupe]\n"
            "       newsd alerts remove [--store LOC] [--config FILE] [--key-id ID] ALERT_ID\n"
            "  --key-id  the key (an id of `keys list`) that owns the alert; with list and\n"
            "            remove: only that key's alerts\n"
            "  --secret  the HMAC key of X-Newsd-Signature; without it one is made up and\n"
            "            printed\n"
            "  --q ... --language  the /v2/everything filters of the saved search\n"
            "  --dedupe  deliver a story once: its later copies are counted (COPIES in\n"
            "            list), not delivered\n"
            "  --config  the config file (else $NEWSD_CONFIG, else /etc/newsd/newsd.conf when\n"
            "            it exists): its [server] store when there is no --store or\n"
            "            $NEWSD_STORE; its [outbound] rules refuse a webhook at a forbidden\n"
            "            address\n");
}

struct alerts_opts {
    const char *store, *config, *webhook, *secret;
    int64_t key_id; /* 0: none given */
    bool dedupe;    /* --dedupe: a story is delivered once */
    /* the query, in the order of alert_body.c's names */
    const char *q, *qintitle, *search_in, *sources, *domains, *exclude_domains, *language;
};

static int64_t parse_id(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        return -1;
    return v;
}

/* --key-id ID into the int64_t at to. */
static int take_key_id(const char *value, void *to)
{
    int64_t id = parse_id(value);
    *(int64_t *)to = id;
    if (id >= 0)
        return CMD_EXIT_OK;
    cmd_fail("alerts: --key-id must be a key's id (a positive number)");
    return CMD_EXIT_USAGE;
}

static int alerts_list(struct store *s, const struct alerts_opts *o)
{
    struct arena ar;
    struct alert_record *list = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    arena_init(&ar, 0);
    int rc = store_alerts_list(s, &ar, o->key_id, &list, &n, &err);
    if (rc < 0) {
        cmd_fail("alerts list: %s", err_msg(&err, rc));
        arena_release(&ar);
        return CMD_EXIT_FAIL;
    }
    printf("%-6s %-6s %-20s %-10s %-8s %-40s %s\n", "ID", "KEY", "CREATED", "CURSOR", "COPIES",
           "WEBHOOK", "QUERY");
    for (size_t i = 0; i < n; i++) {
        char created[TIMEFMT_ISO_LEN], shown[512], copies[24] = "-"; /* -: no dedupe */
        timefmt_iso8601(list[i].created_at, created);
        urlview_redacted(list[i].webhook, URLVIEW_REDACT_ALL, shown, sizeof shown);
        if (list[i].dedupe)
            snprintf(copies, sizeof copies, "%lld", (long long)list[i].copies);
        printf("%-6lld %-6lld %-20s %-10lld %-8s %-40s %s\n", (long long)list[i].id,
               (long long)list[i].key_id, created, (long long)list[i].cursor_seq, copies,
               cmd_table_cell(&ar, shown), cmd_table_cell(&ar, list[i].query));
    }
    arena_release(&ar);
    return CMD_EXIT_OK;
}

/* The POST /v2/alerts body of the options. */
static int body_build(struct buf *b, const struct alerts_opts *o, const char *secret)
{
    static const char *const names[] = {"q",       "qInTitle",       "searchIn", "sources",
                                        "domains", "excludeDomains", "language"};
    const char *values[] = {o->q,       o->qintitle,        o->search_in, o->sources,
                            o->domains, o->exclude_domains, o->language};
    struct jw w;
    jw_init(&w, b);
    jw_obj_begin(&w);
    jw_key(&w, "query");
    jw_obj_begin(&w);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!values[i])
            continue;
        jw_key(&w, names[i]);
        jw_str(&w, values[i]);
    }
    jw_obj_end(&w);
    jw_key(&w, "webhook");
    jw_str(&w, o->webhook);
    jw_key(&w, "secret");
    jw_str(&w, secret);
    if (o->dedupe) {
        jw_key(&w, "dedupe");
        jw_bool(&w, true);
    }
    jw_obj_end(&w);
    return buf_error(b);
}

static int alerts_add(struct store *s, const struct alerts_opts *o)
{
    struct config cfg;
    struct api *api = NULL;
    struct buf body;
    struct err err;
    char made[AUTH_KEY_CHARS + 1];
    int64_t id = 0;
    int status, rc;

    err_clear(&err);
    buf_init(&body, 0);
    if (o->key_id <= 0 || !o->webhook) {
        cmd_fail("alerts add: --key-id and --webhook are required");
        return CMD_EXIT_USAGE;
    }
    if ((status = cmd_config_load(&cfg, cmd_config_path(o->config))) != CMD_EXIT_OK)
        return status;
    status = CMD_EXIT_FAIL;
    const char *secret = o->secret;
    if (!secret) {
        /* 128 random bits as hex, as a key is made. */
        if ((rc = auth_key_generate(made, &err)) < 0) {
            cmd_fail("alerts add: %s", err_msg(&err, rc));
            goto out;
        }
        secret = made;
    }
    if (body_build(&body, o, secret) < 0) {
        cmd_fail("alerts add: out of memory");
        goto out;
    }
    struct api_config acfg = {.outbound = &cfg.outbound.policy};
    if ((rc = api_new(&api, s, NULL, NULL, &acfg, &err)) < 0) {
        cmd_fail("alerts add: %s", err_msg(&err, rc));
        goto out;
    }
    rc = api_alert_add(api, o->key_id, 0, body.data, body.len, &id, &err);
    if (rc == ERR_INVALID || rc == ERR_NOTFOUND) {
        cmd_fail("alerts add: %s", err_msg(&err, rc));
        status = CMD_EXIT_USAGE;
        goto out;
    }
    if (rc < 0) {
        cmd_fail("alerts add: %s", err_msg(&err, rc));
        goto out;
    }
    printf("%lld\n", (long long)id);
    if (!o->secret)
        printf("secret: %s\n", secret);
    status = fflush(stdout) == 0 ? CMD_EXIT_OK : CMD_EXIT_FAIL;
out:
    api_free(api);
    buf_release(&body);
    return status;
}

static int alerts_remove(struct store *s, const struct alerts_opts *o, const char *arg)
{
    struct err err;
    err_clear(&err);
    int64_t id = parse_id(arg);
    if (id < 0) {
        cmd_fail("alerts remove: '%s' is not an alert id", arg);
        return CMD_EXIT_USAGE;
    }
    return cmd_status_of(store_alert_remove(s, id, o->key_id, &err), &err, "alerts remove");
}

int cmd_alerts(int argc, char **argv)
{
    struct alerts_opts o = {0};
    const struct cmd_option opts[] = {
        CMD_TEXT("config", &o.config),
        {"key-id", true, take_key_id, &o.key_id},
        CMD_TEXT("webhook", &o.webhook),
        CMD_TEXT("secret", &o.secret),
        CMD_TEXT("q", &o.q),
        CMD_TEXT("qintitle", &o.qintitle),
        CMD_TEXT("search-in", &o.search_in),
        CMD_TEXT("sources", &o.sources),
        CMD_TEXT("domains", &o.domains),
        CMD_TEXT("exclude-domains", &o.exclude_domains),
        CMD_TEXT("language", &o.language),
        CMD_FLAG("dedupe", &o.dedupe),
        CMD_OPTIONS_END,
    };
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        alerts_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CMD_EXIT_USAGE : CMD_EXIT_OK;
    }
    const char *sub = argv[1];
    int parsed = cmd_options_parse(argc - 1, argv + 1, opts, &o.store, alerts_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    int rest = argc - 1 - optind; /* operands after the options */
    char **args = argv + 1 + optind;
    bool is_list = !strcmp(sub, "list"), is_add = !strcmp(sub, "add"),
         is_remove = !strcmp(sub, "remove");
    if (!is_list && !is_add && !is_remove) {
        cmd_fail("alerts: unknown subcommand '%s' (list, add, remove)", sub);
        return CMD_EXIT_USAGE;
    }
    if (rest != (is_remove ? 1 : 0)) {
        alerts_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    struct store *s = NULL;
    int open_status = cmd_store_open_for(&s, o.store, o.config, 0);
    if (open_status != CMD_EXIT_OK)
        return open_status;
    int status = is_list  ? alerts_list(s, &o)
                 : is_add ? alerts_add(s, &o)
                          : alerts_remove(s, &o, args[0]);
    store_close(s);
    return status;
}
