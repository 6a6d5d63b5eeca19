/* newsd migrate: bring a store's schema to this build's version, the one
 * step of an upgrade besides starting the new server (docs/operations.md
 * "Upgrading"). Every other admin command refuses a store that needs it:
 * a migration must not happen under a running server of the old version,
 * which would then refuse to start or import. Like serve, migrate takes
 * the store's server lock first, so it fails while a server runs. */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/banned.h"

static void migrate_usage(FILE *f)
{
    fprintf(f, "usage: newsd migrate [--store LOC] [--config FILE]\n"
               "  bring the store's schema up to this newsd's version (logged with its from\n"
               "  and to versions); stop the running newsd server of the old version first.\n"
               "  newsd serve migrates too; every other command refuses a store that needs it.\n"
               "  the store: --store, else $NEWSD_STORE, else the config file's [server]\n"
               "  store (--config, else $NEWSD_CONFIG, else /etc/newsd/newsd.conf when it\n"
               "  exists), else ./newsd-data\n");
}

int cmd_migrate(int argc, char **argv)
{
    const char *store_opt = NULL, *config_opt = NULL;
    struct cmd_store_where where;
    struct store *s = NULL;
    struct store_schema schema;
    const struct cmd_option opts[] = {CMD_TEXT("config", &config_opt), CMD_OPTIONS_END};
    int status = cmd_options_only("migrate", argc, argv, opts, &store_opt, migrate_usage);

    if (status != CMD_GO_ON)
        return status;
    const char *config_path = cmd_config_path(config_opt);
    status = cmd_store_where_get(&where, store_opt, config_path);
    if (status != CMD_EXIT_OK)
        return status;
    /* Held until exit, so that no server starts on the store halfway
     * through the migration. */
    int lock = cmd_lock_store(where.loc, "migrate");
    if (lock == -1)
        return CMD_EXIT_FAIL;
    /* The index kind only matters for a new store, which migrate never makes. */
    if (cmd_store_open_where(&s, &where, INDEX_KIND_DEFAULT, CMD_OPEN_MIGRATE) != 0) {
        if (lock >= 0)
            close(lock);
        return CMD_EXIT_FAIL;
    }
    store_schema_get(s, &schema);
    char shown[512];
    store_location_redacted(where.loc, shown, sizeof shown);
    if (schema.opened == schema.current)
        printf("store %s: schema version %lld, nothing to migrate\n", shown,
               (long long)schema.current);
    else
        printf("store %s: schema migrated from version %lld to %lld\n", shown,
               (long long)schema.opened, (long long)schema.current);
    store_close(s);
    if (lock >= 0)
        close(lock);
    return CMD_EXIT_OK;
}
