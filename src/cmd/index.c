/* newsd index verify: check the search index against the articles table
 * (docs/engine.md "Persistence"). Opening the index brings it up to date
 * first (the engine maps its files and reads the rows past them, or
 * rebuilds); then every row must be indexed exactly once and nothing
 * else, and every engine segment must pass its checksum and structure
 * checks. Exit 0 when they agree, 1 when not (or the check failed). */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "index/index.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "util/banned.h"

static void index_usage(FILE *f)
{
    fprintf(f, "usage: newsd index verify [--store LOC] [--index engine|fts5] [--index-dir DIR]\n"
               "  check the search index against the articles table; exit 1 if they disagree\n");
}

int cmd_index(int argc, char **argv)
{
    static const struct option opts[] = {
        {"store", required_argument, NULL, 's'},
        {"index", required_argument, NULL, 'i'},
        {"index-dir", required_argument, NULL, 'I'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *store_opt = NULL, *kind = NULL, *dir = NULL;
    struct store *store = NULL;
    struct index *idx = NULL;
    struct index_verify_report r;
    struct err err;
    int ch, rc, status = CMD_EXIT_FAIL;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 's':
            store_opt = optarg;
            break;
        case 'i':
            kind = optarg;
            break;
        case 'I':
            dir = optarg;
            break;
        case 'h':
            index_usage(stdout);
            return CMD_EXIT_OK;
        default:
            index_usage(stderr);
            return CMD_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || strcmp(argv[optind], "verify") != 0) {
        index_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    err_clear(&err);
    kind = cmd_index_kind(kind, NULL);
    if (cmd_store_open(&store, cmd_store_location(store_opt), kind) < 0)
        return CMD_EXIT_FAIL;
    if ((rc = index_open_kind(&idx, store, dir, kind, &err)) < 0) {
        cmd_fail("cannot open the search index: %s", err_msg(&err, rc));
        goto out;
    }
    if ((rc = index_verify(idx, &r, &err)) < 0) {
        cmd_fail("index verify: %s", err_msg(&err, rc));
        goto out;
    }
    printf("index: %s", index_kind(idx));
    if (strcmp(index_kind(idx), "engine") == 0)
        printf(", %s, %zu segments (%zu files, %llu bytes)",
               r.from_files ? "opened from its files" : "built from the table", r.segments, r.files,
               (unsigned long long)r.bytes);
    printf("\nrows %llu, indexed %llu, missing %llu, extra %llu\n", (unsigned long long)r.rows,
           (unsigned long long)r.indexed, (unsigned long long)r.missing,
           (unsigned long long)r.extra);
    if (r.missing || r.extra) {
        printf("DISAGREE: %s\n", r.detail);
        if (strcmp(index_kind(idx), "engine") == 0)
            printf("stop newsd and remove the index directory (newsd.db.engine beside the store's "
                   "database): the next start rebuilds it from the store\n");
        goto out;
    }
    printf("ok\n");
    status = CMD_EXIT_OK;
out:
    index_close(idx);
    store_close(store);
    return status;
}
