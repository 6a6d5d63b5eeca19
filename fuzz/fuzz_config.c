/* libFuzzer harness: the config file parser (config/config.h) on arbitrary
 * bytes. Checks what must hold for any input: success or ERR_PARSE with a
 * "name:line: " message, NUL-terminated strings, plan names the plan table
 * accepts, non-negative limits and allow lists whose networks hold their
 * own addresses; a parsed config applies to an auth. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "config/config.h"
#include "util/err.h"
#include "util/netpolicy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config c;
    struct err err;
    err_clear(&err);
    config_defaults(&c);
    /* An exact-size copy, so ASan catches any read past the end. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    int rc = config_parse(text, size, "fuzz", &c, &err);
    free(text);
    if (rc != 0) {
        if (rc != ERR_PARSE || strncmp(err.msg, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    if (!memchr(c.listen, '\0', sizeof c.listen) || c.n_plans > CONFIG_PLANS_MAX ||
        c.threads > 4096 || c.live_window_seconds <= 0 || c.result_window < 0)
        abort();
    /* Every allowed network is a prefix of at most 128 bits that permits
     * its own address. */
    const struct netpolicy *np = &c.outbound.policy;
    if (np->n_allow > NETPOLICY_ALLOW_MAX)
        abort();
    for (size_t i = 0; i < np->n_allow; i++) {
        if (np->allow[i].bits > 128 || !netpolicy_permits(np, &np->allow[i].addr, NULL, 0))
            abort();
    }
    for (size_t i = 0; i < c.n_plans; i++) {
        const struct auth_plan *p = &c.plans[i];
        if (!memchr(p->name, '\0', sizeof p->name) || !p->name[0] ||
            !memchr(p->allowed_origins, '\0', sizeof p->allowed_origins))
            abort();
        if (p->requests_per_day < 0 || p->requests_per_month < 0 || p->burst_size < 0 ||
            p->result_window < 0 || p->history_days < 0 || p->delay_seconds < 0 ||
            !(p->burst_per_second >= 0))
            abort();
    }
    /* Every plan the parser accepts is one the plan table accepts. */
    struct auth *a = NULL;
    if (auth_new(&a, NULL, &err) == 0) {
        if (config_plans_apply(&c, a, &err) != 0)
            abort();
        auth_free(a);
    }
    return 0;
}
