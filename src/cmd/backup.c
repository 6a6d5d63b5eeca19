/* newsd backup: a consistent online copy of the embedded store
 * (store_backup; docs/operations.md says how to restore it). */
#include "cmd/cmd.h"
#include "cmd/common.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"

#include "util/banned.h"

static void backup_usage(FILE *f)
{
    fprintf(f,
            "usage: newsd backup [--store LOC] FILE\n"
            "  write a consistent copy of the store's database to FILE while newsd runs\n"
            "  (articles, sources, feeds, keys, usage; the search index is rebuilt on restore)\n");
}

int cmd_backup(int argc, char **argv)
{
    const char *store_opt = NULL;
    struct store *store = NULL;
    struct err err;
    int rc, status = cmd_options_store_file(argc, argv, &store_opt, backup_usage);

    if (status != CMD_GO_ON)
        return status;
    err_clear(&err);
    /* The index kind only matters to a store this call would create. */
    if (cmd_store_open(&store, cmd_store_location(store_opt), cmd_index_kind(NULL, NULL)) < 0)
        return CMD_EXIT_FAIL;
    int64_t t0 = clock_mono_ms();
    rc = store_backup(store, argv[optind], &err);
    store_close(store);
    if ((status = cmd_status_of(rc, &err, "backup")) != CMD_EXIT_OK)
        return status;
    fprintf(stderr, "backup: %s written in %.1f s\n", argv[optind],
            (double)(clock_mono_ms() - t0) / 1000.0);
    return CMD_EXIT_OK;
}
