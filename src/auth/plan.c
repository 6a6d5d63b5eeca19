/* The plan table of an auth (auth.h: auth_plan_set, auth_plan_get): the
 * built-in plans of API.md §6, replaced or extended by the config file. */
#include "auth/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

#define DAY_SECONDS 86400

/* API.md §6. "5 years of history" counts one leap day. */
static const struct auth_plan builtin_plans[] = {
    {.name = "unlimited", .streams = AUTH_PLAN_STREAMS_DEFAULT, .alerts = AUTH_PLAN_ALERTS_DEFAULT},
    {
        .name = "developer",
        .requests_per_day = 100,
        .result_window = 100,
        .history_days = 30,
        .delay_seconds = DAY_SECONDS,
        .streams = AUTH_PLAN_STREAMS_DEFAULT,
        .alerts = AUTH_PLAN_ALERTS_DEFAULT,
        .export_per_day = AUTH_PLAN_DEVELOPER_EXPORT_PER_DAY,
    },
    {
        .name = "business",
        .requests_per_month = 250000,
        .result_window = 10000,
        .history_days = 5 * 365 + 1,
        .streams = AUTH_PLAN_STREAMS_DEFAULT,
        .alerts = AUTH_PLAN_ALERTS_DEFAULT,
    },
};

int auth_plans_init(struct auth *a, struct err *err)
{
    size_t n = sizeof builtin_plans / sizeof builtin_plans[0];
    a->plans = calloc(AUTH_PLANS_MAX, sizeof *a->plans);
    if (!a->plans)
        return err_set(err, ERR_NOMEM, "out of memory for plans");
    memcpy(a->plans, builtin_plans, sizeof builtin_plans);
    a->n_plans = n;
    return 0;
}

void auth_plans_release(struct auth *a)
{
    free(a->plans);
    a->plans = NULL;
    a->n_plans = 0;
}

/* A plan name is 1..63 bytes, printable ASCII without spaces, so it fits a
 * config section header and a `keys list` column. */
static bool plan_name_valid(const char *name)
{
    size_t len = strnlen(name, AUTH_PLAN_NAME_MAX);
    if (len == 0 || len == AUTH_PLAN_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7f || c == '[' || c == ']')
            return false;
    }
    return true;
}

int auth_plan_set(struct auth *a, const struct auth_plan *p, struct err *err)
{
    if (!plan_name_valid(p->name))
        return err_set(err, ERR_INVALID, "invalid plan name");
    if (p->requests_per_day < 0 || p->requests_per_month < 0 || p->burst_size < 0 ||
        p->result_window < 0 || p->history_days < 0 || p->delay_seconds < 0 || p->streams < 0 ||
        p->alerts < 0 || p->export_per_day < 0 || !isfinite(p->burst_per_second) ||
        p->burst_per_second < 0)
        return err_set(err, ERR_INVALID, "plan %s: limits must be zero or positive", p->name);
    if (!memchr(p->allowed_origins, '\0', sizeof p->allowed_origins))
        return err_set(err, ERR_INVALID, "plan %s: allowed_origins is not terminated", p->name);

    int rc = 0;
    pthread_rwlock_wrlock(&a->plans_lock);
    size_t i;
    for (i = 0; i < a->n_plans; i++) {
        if (!strcmp(a->plans[i].name, p->name))
            break;
    }
    if (i == a->n_plans) {
        if (a->n_plans == AUTH_PLANS_MAX) {
            rc = err_set(err, ERR_TOO_LARGE, "more than %d plans", AUTH_PLANS_MAX);
            goto out;
        }
        a->n_plans++;
    }
    a->plans[i] = *p;
out:
    pthread_rwlock_unlock(&a->plans_lock);
    return rc;
}

int auth_plan_get(struct auth *a, const char *name, struct auth_plan *out)
{
    if (!name)
        return ERR_NOTFOUND;
    int rc = ERR_NOTFOUND;
    pthread_rwlock_rdlock(&a->plans_lock);
    for (size_t i = 0; i < a->n_plans; i++) {
        if (!strcmp(a->plans[i].name, name)) {
            if (out)
                *out = a->plans[i];
            rc = 0;
            break;
        }
    }
    pthread_rwlock_unlock(&a->plans_lock);
    return rc;
}
