/* newsd restore: put a backup (newsd backup's file) in place of an
 * embedded store's database, with newsd stopped. The steps, in the store
 * directory itself (never moved: with systemd's DynamicUser= it is a
 * symlink into /var/lib/private): take the server lock, so no newsd serves
 * the store meanwhile; stage the copy beside newsd.db and check it
 * (store_restore_stage: SQLite quick_check, the newsd schema, the store
 * directory's owner); remove the old search index (it belongs to the old
 * table; the next start rebuilds it from the restored one); swap the copy
 * in (store_restore_commit). */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/lock.h"
#include "index/index.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

#include "util/banned.h"

#define RESTORE_DB_FILE "newsd.db" /* the embedded store's file in its directory */

static void restore_usage(FILE *f)
{
    fprintf(f, "usage: newsd restore [--store DIR] BACKUP\n"
               "  replace the store's database with BACKUP (a file newsd backup wrote), with\n"
               "  newsd stopped: BACKUP is checked, copied into DIR with DIR's owner, and\n"
               "  swapped in; the search index is rebuilt at the next start\n");
}

static int restore_run(const char *dir, const char *backup)
{
    char db_path[4096], lock_path[4096];
    struct err err;
    int lock_fd = -1, rc, status = CMD_EXIT_FAIL;
    err_clear(&err);
    if ((size_t)snprintf(db_path, sizeof db_path, "%s/" RESTORE_DB_FILE, dir) >= sizeof db_path ||
        (size_t)snprintf(lock_path, sizeof lock_path, "%s" CMD_LOCK_SUFFIX, db_path) >=
            sizeof lock_path) {
        cmd_fail("restore: the store's path is too long");
        return CMD_EXIT_FAIL;
    }
    if (access(dir, F_OK) != 0) {
        cmd_fail("restore: %s does not exist: create the store directory first (as the service "
                 "would: systemctl start newsd once, or install -d -m 0700)",
                 dir);
        return CMD_EXIT_FAIL;
    }
    if (cmd_lock_take(&lock_fd, lock_path, "restore") < 0)
        return CMD_EXIT_FAIL;
    int64_t t0 = clock_mono_ms();
    if ((rc = store_restore_stage(dir, backup, &err)) < 0) {
        cmd_fail("restore: %s", err_msg(&err, rc));
        goto out;
    }
    if ((rc = index_files_remove(db_path, &err)) < 0 ||
        (rc = store_restore_commit(dir, &err)) < 0) {
        store_restore_abort(dir);
        cmd_fail("restore: %s", err_msg(&err, rc));
        goto out;
    }
    fprintf(stderr,
            "restore: %s restored as %s in %.1f s; the search index is rebuilt when newsd "
            "starts\n",
            backup, db_path, (double)(clock_mono_ms() - t0) / 1000.0);
    status = CMD_EXIT_OK;
out:
    close(lock_fd); /* last: the swap is done, a server may start */
    return status;
}

int cmd_restore(int argc, char **argv)
{
    const char *store_opt = NULL;
    int status = cmd_options_store_file(argc, argv, &store_opt, restore_usage);

    if (status != CMD_GO_ON)
        return status;
    const char *dir = cmd_store_location(store_opt); /* --store, $NEWSD_STORE, the config's */
    if (!dir)
        return CMD_EXIT_FAIL; /* the config could not be read: said on stderr */
    if (store_location_is_pg(dir)) {
        cmd_fail("restore: a PostgreSQL store is restored with PostgreSQL's tools (pg_restore)");
        return CMD_EXIT_FAIL;
    }
    return restore_run(dir, argv[optind]);
}
