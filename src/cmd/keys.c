/* newsd keys (API.md §7, §8): create, list, disable, enable, delete and
 * set-plan of API keys. A new key is printed once, alone on stdout; the store
 * keeps only its hash. ID is the number `keys list` prints, or a key's name
 * when exactly one key has it (a number is tried as an id first). */
#include "auth/auth.h"
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "config/config.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/timefmt.h"

#include "util/banned.h"

#define KEYS_ARENA_BYTES (64 * 1024 * 1024)
#define KEYS_NAME_MAX 200

static void keys_usage(FILE *f)
{
    fprintf(f, "usage: newsd keys create [--store LOC] [--create] [--name NAME] [--plan PLAN]\n"
               "                         [--config FILE]\n"
               "       newsd keys list [--store LOC] [--config FILE]\n"
               "       newsd keys disable|enable|delete ID [--store LOC] [--config FILE]\n"
               "       newsd keys set-plan ID PLAN [--store LOC] [--config FILE]\n"
               "  The store: --store, else $NEWSD_STORE, else the config file's [server] store,\n"
               "  else ./newsd-data; the config file: --config, else $NEWSD_CONFIG, else\n"
               "  /etc/newsd/newsd.conf when it exists. keys create makes a missing store only\n"
               "  with --create when the path comes from --store or $NEWSD_STORE.\n"
               "  ID is the id shown by `keys list`, or a key's name when it is unique.\n"
               "  Plans: unlimited (default), developer, business, and those of --config FILE.\n");
}

struct keys_opts {
    const char *store;
    const char *name;
    const char *plan;
    const char *config;
    bool create; /* --create */
};

/* Exit status for an unknown plan (2), a bad config (1 or 2), or 0. */
static int plan_check(const char *plan, const char *config_path)
{
    struct config cfg;
    struct auth *a = NULL;
    struct err err;
    err_clear(&err);
    int status = cmd_config_load(&cfg, config_path);
    int rc;
    if (status != CMD_EXIT_OK)
        return status;
    status = CMD_EXIT_FAIL;
    /* No store: this auth only answers plan lookups. */
    if ((rc = auth_new(&a, NULL, &err)) < 0 || (rc = config_plans_apply(&cfg, a, &err)) < 0) {
        cmd_fail("%s", err_msg(&err, rc));
        goto out;
    }
    if (auth_plan_get(a, plan, NULL) < 0) {
        cmd_fail("keys: unknown plan '%s' (built in: unlimited, developer, business; others "
                 "come from --config FILE)",
                 plan);
        status = CMD_EXIT_USAGE;
        goto out;
    }
    status = CMD_EXIT_OK;
out:
    auth_free(a);
    return status;
}

static int keys_create(struct store *s, const struct keys_opts *o)
{
    char key[AUTH_KEY_CHARS + 1];
    struct err err;
    err_clear(&err);
    int64_t id = 0;
    int rc = auth_key_create(s, o->name, o->plan ? o->plan : "unlimited", key, &id, &err);
    int status = cmd_status_of(rc, &err, "keys create");
    if (status != CMD_EXIT_OK)
        return status;
    printf("%s\n", key);
    if (fflush(stdout) != 0) {
        cmd_fail("keys create: cannot write the key to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

struct row {
    char id[24], created[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN], today[24], month[24];
    const char *name, *plan, *state;
};

/* Every key of the store into *out, or "keys VERB: why" on stderr; the
 * exit status. */
static int all_keys(struct store *s, struct arena *ar, const char *verb, struct key_record **out,
                    size_t *n)
{
    struct err err;
    err_clear(&err);
    return cmd_status_of(store_keys_list(s, ar, out, n, &err), &err, "keys %s", verb);
}

static int keys_list(struct store *s, struct arena *ar)
{
    struct key_record *keys = NULL;
    size_t n = 0;
    int status = all_keys(s, ar, "list", &keys, &n);
    if (status != CMD_EXIT_OK)
        return status;
    struct row *rows = arena_calloc(ar, n ? n : 1, sizeof *rows);
    if (!rows) {
        cmd_fail("keys list: out of memory");
        return CMD_EXIT_FAIL;
    }
    struct err err;
    err_clear(&err);
    int rc;
    int64_t day = timefmt_day((int64_t)time(NULL));
    int64_t y;
    unsigned m, d;
    timefmt_civil_from_days(day, &y, &m, &d);
    int64_t month_first = timefmt_days_from_civil(y, m, 1);

    /* Column widths start at the headers'. */
    size_t w[8] = {2, 4, 4, 5, 7, 9, 5, 5};
    for (size_t i = 0; i < n; i++) {
        const struct key_record *k = &keys[i];
        struct row *r = &rows[i];
        int64_t today = 0, month = 0;
        if ((rc = store_usage_sum(s, k->id, day, day, &today, &err)) < 0 ||
            (rc = store_usage_sum(s, k->id, month_first, day, &month, &err)) < 0) {
            cmd_fail("keys list: %s", err_msg(&err, rc));
            return CMD_EXIT_FAIL;
        }
        snprintf(r->id, sizeof r->id, "%lld", (long long)k->id);
        r->name = cmd_table_cell(ar, k->name);
        r->plan = cmd_table_cell(ar, k->plan);
        r->state = k->state == KEY_ACTIVE ? "active" : "disabled";
        timefmt_iso8601(k->created_at, r->created);
        if (k->last_used > 0)
            timefmt_iso8601(k->last_used, r->last);
        else
            snprintf(r->last, sizeof r->last, "never");
        snprintf(r->today, sizeof r->today, "%lld", (long long)today);
        snprintf(r->month, sizeof r->month, "%lld", (long long)month);
        const char *cols[8] = {r->id,      r->name, r->plan,  r->state,
                               r->created, r->last, r->today, r->month};
        for (size_t c = 0; c < 8; c++) {
            size_t len = strlen(cols[c]);
            if (len > w[c])
                w[c] = len;
        }
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %*s  %*s\n", (int)w[0], "ID", (int)w[1], "NAME",
           (int)w[2], "PLAN", (int)w[3], "STATE", (int)w[4], "CREATED", (int)w[5], "LAST USED",
           (int)w[6], "TODAY", (int)w[7], "MONTH");
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %*s  %*s\n", (int)w[0], r->id, (int)w[1],
               r->name, (int)w[2], r->plan, (int)w[3], r->state, (int)w[4], r->created, (int)w[5],
               r->last, (int)w[6], r->today, (int)w[7], r->month);
    }
    if (fflush(stdout) != 0) {
        cmd_fail("keys list: cannot write to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* The id of the key that `ref` names; exit status on failure (1), else 0. */
static int key_resolve(struct store *s, struct arena *ar, const char *verb, const char *ref,
                       int64_t *out)
{
    struct key_record *keys = NULL;
    size_t n = 0;
    int status = all_keys(s, ar, verb, &keys, &n);
    if (status != CMD_EXIT_OK)
        return status;
    int64_t id = cmd_parse_digits(ref, 18); /* any id fits */
    for (size_t i = 0; id >= 0 && i < n; i++) {
        if (keys[i].id == id) {
            *out = id;
            return CMD_EXIT_OK;
        }
    }
    size_t matches = 0;
    int64_t first = 0, second = 0;
    for (size_t i = 0; i < n; i++) {
        if (keys[i].name && !strcmp(keys[i].name, ref)) {
            if (matches == 0)
                first = keys[i].id;
            else if (matches == 1)
                second = keys[i].id;
            matches++;
        }
    }
    if (matches == 0) {
        cmd_fail("keys %s: no key has the id or name '%s' (see newsd keys list)", verb, ref);
        return CMD_EXIT_FAIL;
    }
    if (matches > 1) {
        cmd_fail("keys %s: %zu keys are named '%s' (ids %lld, %lld%s); give the id", verb, matches,
                 ref, (long long)first, (long long)second, matches > 2 ? ", ..." : "");
        return CMD_EXIT_FAIL;
    }
    *out = first;
    return CMD_EXIT_OK;
}

/* disable, enable, delete, set-plan of one key. */
static int keys_change(struct store *s, struct arena *ar, const char *verb, const char *ref,
                       const char *plan)
{
    int64_t id = 0;
    int status = key_resolve(s, ar, verb, ref, &id);
    if (status != CMD_EXIT_OK)
        return status;
    struct err err;
    err_clear(&err);
    int rc;
    if (!strcmp(verb, "delete"))
        rc = store_key_delete(s, id, &err);
    else if (!strcmp(verb, "set-plan"))
        rc = store_key_update(s, id, plan, -1, &err);
    else
        rc = store_key_update(s, id, NULL, !strcmp(verb, "disable") ? KEY_DISABLED : KEY_ACTIVE,
                              &err);
    if (rc < 0) {
        cmd_fail("keys %s: key %lld: %s", verb, (long long)id, err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

int cmd_keys(int argc, char **argv)
{
    struct keys_opts o = {0};
    const struct cmd_option opts[] = {
        CMD_TEXT("name", &o.name),     CMD_TEXT("plan", &o.plan), CMD_TEXT("config", &o.config),
        CMD_FLAG("create", &o.create), CMD_OPTIONS_END,
    };
    int parsed = cmd_options_parse(argc, argv, opts, &o.store, keys_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    if (optind >= argc) {
        cmd_fail("keys: which command? create, list, disable, enable, delete or set-plan");
        keys_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    const char *verb = argv[optind];
    char **args = argv + optind + 1;
    int n_args = argc - optind - 1;
    int want;
    if (!strcmp(verb, "create") || !strcmp(verb, "list")) {
        want = 0;
    } else if (!strcmp(verb, "disable") || !strcmp(verb, "enable") || !strcmp(verb, "delete")) {
        want = 1;
    } else if (!strcmp(verb, "set-plan")) {
        want = 2;
    } else {
        cmd_fail("keys: unknown command '%s' (create, list, disable, enable, delete, set-plan)",
                 verb);
        return CMD_EXIT_USAGE;
    }
    if (n_args != want) {
        cmd_fail("keys %s: expected %s", verb,
                 want == 0   ? "no argument"
                 : want == 1 ? "one argument, ID"
                             : "two arguments, ID and PLAN");
        return CMD_EXIT_USAGE;
    }
    if (strcmp(verb, "create") && (o.name || o.plan)) {
        cmd_fail("keys %s: --name and --plan belong to keys create", verb);
        return CMD_EXIT_USAGE;
    }
    if (o.create && strcmp(verb, "create")) {
        cmd_fail("keys %s: --create belongs to keys create", verb);
        return CMD_EXIT_USAGE;
    }
    if (o.name && !cmd_name_valid(o.name, KEYS_NAME_MAX, true)) {
        cmd_fail("keys create: --name must be 1 to %d characters without control characters",
                 KEYS_NAME_MAX);
        return CMD_EXIT_USAGE;
    }
    const char *plan = !strcmp(verb, "set-plan") ? args[1] : o.plan;
    const char *config_path = cmd_config_path(o.config);
    if (plan || (config_path && (!strcmp(verb, "create") || !strcmp(verb, "set-plan")))) {
        int status = plan_check(plan ? plan : "unlimited", config_path);
        if (status != CMD_EXIT_OK)
            return status;
    }

    struct store *s = NULL;
    struct arena ar;
    arena_init(&ar, KEYS_ARENA_BYTES);
    unsigned flags = 0;
    if (!strcmp(verb, "create"))
        flags = cmd_open_making(o.create);
    int status = cmd_store_open_for(&s, o.store, o.config, flags);
    if (status != CMD_EXIT_OK)
        goto out;
    status = CMD_EXIT_FAIL;
    if (!strcmp(verb, "create"))
        status = keys_create(s, &o);
    else if (!strcmp(verb, "list"))
        status = keys_list(s, &ar);
    else
        status = keys_change(s, &ar, verb, args[0], plan);
out:
    arena_release(&ar);
    if (s)
        store_close(s);
    return status;
}
