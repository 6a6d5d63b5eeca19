/* newsd index verify: check the search index against the articles table
 * (docs/engine.md "Persistence"). Opening the index brings it up to date
 * first (the engine maps its files and reads the rows past them, or
 * rebuilds); then every row must be indexed exactly once and nothing
 * else, and every engine segment must pass its checksum and structure
 * checks. Exit 0 when they agree, 1 when not (or the check failed).
 *
 * newsd index sizes: where the engine's segment files' bytes go, part by
 * part, the index proper apart from the document store (docs/engine.md
 * "Persistence"; the benchmark's size table reads it). */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "index/index.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "util/banned.h"

static void index_usage(FILE *f)
{
    fprintf(f, "usage: newsd index verify|sizes|build [--store LOC] [--config FILE]\n"
               "                                      [--index engine|fts5] [--index-dir DIR]\n"
               "  the store, index and index directory: the options, else as newsd serve finds\n"
               "  them ($NEWSD_STORE, $NEWSD_INDEX, the config file's [server] section)\n"
               "  verify: check the search index against the articles table; exit 1 if they "
               "disagree\n"
               "  sizes:  the engine's index files part by part, the document store apart\n"
               "  build:  ahead of an upgrade, with the new binary while the old server runs:\n"
               "          build the index in this version's segment format beside the live\n"
               "          one (newsd.db.engine.vN); the new server adopts it at its start\n"
               "          instead of rebuilding (embedded store, engine index)\n");
}

static void size_line(const char *name, uint64_t bytes, uint64_t docs, uint64_t total)
{
    printf("%-16s %12llu %9.1f %6.1f%%\n", name, (unsigned long long)bytes,
           docs ? (double)bytes / (double)docs : 0.0,
           total ? 100.0 * (double)bytes / (double)total : 0.0);
}

/* One line per part: name, bytes, bytes per document, share of all (the
 * benchmark parses the first two columns). */
static int print_sizes(struct index *idx)
{
    struct index_size_report r;
    struct err err;
    int rc;

    err_clear(&err);
    if ((rc = index_sizes(idx, &r, &err)) < 0) {
        cmd_fail("index sizes: %s", err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    uint64_t index = index_size_index_bytes(&r), store = index_size_store_bytes(&r);
    uint64_t all = index + store;
    printf("segments %zu (%zu files, %llu bytes); documents %llu, terms %llu, postings %llu, "
           "positions %llu\n",
           r.segments, r.files, (unsigned long long)r.file_bytes, (unsigned long long)r.docs,
           (unsigned long long)r.terms, (unsigned long long)r.postings,
           (unsigned long long)r.positions);
    printf("%-16s %12s %9s %7s\n", "part", "bytes", "per doc", "share");
    size_line("header+align", r.header, r.docs, all);
    size_line("columns", r.columns, r.docs, all);
    size_line("url-table", r.url_table, r.docs, all);
    size_line("dictionary", r.dictionary, r.docs, all);
    size_line("term-strings", r.term_strs, r.docs, all);
    size_line("skip-tables", r.skip, r.docs, all);
    size_line("docids", r.docids, r.docs, all);
    size_line("frequencies", r.freqs, r.docs, all);
    size_line("positions", r.positions_bytes, r.docs, all);
    size_line("of-it-pairs", r.pairs, r.docs, all);
    size_line("tiers", r.tiers, r.docs, all);
    size_line("index", index, r.docs, all);
    size_line("store-offsets", r.store_offsets, r.docs, all);
    size_line("store-dict", r.store_dict, r.docs, all);
    size_line("store-frames", r.store_frames, r.docs, all);
    size_line("store", store, r.docs, all);
    size_line("total", all, r.docs, all);
    return CMD_EXIT_OK;
}

/* A cluster node's index is checked against its replica of the store's
 * articles, as the node holds it (not brought up to date first), and that
 * replica may trail PostgreSQL: say by how much, in articles and in
 * changes of the article log, rather than a plain "ok" (issue 30: "ok"
 * while the node was 10 articles behind). true when it trails. */
static bool print_replica_lag(struct index *idx, struct store *store,
                              const struct index_verify_report *r)
{
    struct store_journal_status rs;
    struct err err;
    int64_t there = 0;
    index_replica_status(idx, &rs);
    if (!rs.replica)
        return false;
    err_clear(&err);
    int rc = store_articles_count(store, &there, &err);
    printf("PostgreSQL: log head seq %lld, this node's index at seq %lld: %lld changes behind",
           (long long)rs.head_seq, (long long)rs.applied_seq, (long long)rs.lag_seq);
    if (rc < 0) {
        printf("; its article count cannot be read: %s\n", err_msg(&err, rc));
        return rs.lag_seq > 0;
    }
    long long behind = (long long)there - (long long)r->rows;
    printf("; %lld articles there, %llu here (%lld %s)\n", (long long)there,
           (unsigned long long)r->rows, behind < 0 ? -behind : behind,
           behind < 0 ? "more here: deletions not yet applied" : "behind");
    return rs.lag_seq > 0 || behind != 0;
}

/* index build is for the engine over an embedded store: a cluster node's
 * index follows its own local replica, which the running server writes. */
static bool build_possible(const char *loc, const char *kind)
{
    if (strcmp(kind, INDEX_KIND_ENGINE) != 0) {
        cmd_fail("index build: the %s index has no files to build ahead (only the engine)", kind);
        return false;
    }
    if (store_location_is_pg(loc)) {
        cmd_fail("index build: only for the embedded store; a cluster is upgraded node by node "
                 "(docs/operations.md \"Upgrading\")");
        return false;
    }
    return true;
}

/* What index build made, or why it is not to be used. */
static int build_report(struct store *store, const struct index_verify_report *r)
{
    char dir[4096];
    struct err err;
    err_clear(&err);
    if (index_engine_staged_dir(store_sqlite_path(store), dir, sizeof dir, &err) < 0) {
        cmd_fail("index build: %s", err_msg(&err, ERR_INVALID));
        return CMD_EXIT_FAIL;
    }
    if (r->missing || r->extra) {
        cmd_fail("index build: the index in %s disagrees with the table (%s)", dir, r->detail);
        return CMD_EXIT_FAIL;
    }
    if (r->rows > 0 && r->files == 0) {
        cmd_fail("index build: nothing was written to %s (is another index build running?)", dir);
        return CMD_EXIT_FAIL;
    }
    printf("index built ahead in %s: segment format %u, %llu articles, %zu segments (%zu files, "
           "%llu bytes)\n",
           dir, (unsigned)index_engine_segment_version(), (unsigned long long)r->rows, r->segments,
           r->files, (unsigned long long)r->bytes);
    printf("the next newsd serve of this version adopts it and reads only the articles added "
           "since\n");
    return CMD_EXIT_OK;
}

int cmd_index(int argc, char **argv)
{
    const char *store_opt = NULL, *kind = NULL, *dir = NULL, *config_opt = NULL;
    struct store *store = NULL;
    struct index *idx = NULL;
    struct index_verify_report r;
    struct err err;
    int rc;
    const struct cmd_option opts[] = {
        CMD_TEXT("index", &kind),
        CMD_TEXT("index-dir", &dir),
        CMD_TEXT("config", &config_opt),
        CMD_OPTIONS_END,
    };
    int status = cmd_options_parse(argc, argv, opts, &store_opt, index_usage);

    if (status != CMD_GO_ON)
        return status;
    status = CMD_EXIT_FAIL;
    if (optind + 1 != argc ||
        (strcmp(argv[optind], "verify") != 0 && strcmp(argv[optind], "sizes") != 0 &&
         strcmp(argv[optind], "build") != 0)) {
        index_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    bool sizes = strcmp(argv[optind], "sizes") == 0;
    bool build = strcmp(argv[optind], "build") == 0;
    err_clear(&err);
    static struct config cfg; /* static: it is large */
    struct cmd_store_where where;
    const char *config_path = cmd_config_path(config_opt);
    if ((status = cmd_config_load(&cfg, config_path)) != CMD_EXIT_OK)
        return status;
    status = CMD_EXIT_FAIL;
    kind = cmd_index_kind(kind, cfg.index);
    if (!dir && cfg.index_dir[0])
        dir = cfg.index_dir;
    cmd_store_where_from(&where, store_opt, &cfg, config_path);
    if (build && !build_possible(where.loc, kind))
        return CMD_EXIT_FAIL;
    /* The build reads the articles of a store the old server still runs,
     * whose schema may be the old one: it migrates nothing. */
    if (cmd_store_open_where(&store, &where, kind, build ? CMD_OPEN_READ_OUTDATED : 0) != 0)
        return CMD_EXIT_FAIL;
    /* As the node holds it: verify reports how far that is behind. */
    struct index_options iopt = {.kind = kind, .local_dir = dir, .no_follow = true};
    cmd_engine_options(&iopt.engine);
    iopt.engine.staged = build;
    iopt.engine.files_only = sizes; /* a report: never a build of the whole table */
    if ((rc = index_open_with(&idx, store, &iopt, &err)) < 0) {
        cmd_fail("cannot open the search index: %s", err_msg(&err, rc));
        goto out;
    }
    if (sizes) {
        status = print_sizes(idx);
        goto out;
    }
    if ((rc = index_verify(idx, &r, &err)) < 0) {
        cmd_fail("index %s: %s", build ? "build" : "verify", err_msg(&err, rc));
        goto out;
    }
    if (build) {
        status = build_report(store, &r);
        goto out;
    }
    struct store_schema schema;
    store_schema_get(store, &schema);
    printf("store: %s, schema version %lld\n", store_kind(store), (long long)schema.current);
    printf("index: %s", index_kind(idx));
    if (strcmp(index_kind(idx), "engine") == 0)
        printf(", segment format %u, %s, %zu segments (%zu files, %llu bytes)",
               (unsigned)index_engine_segment_version(),
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
    if (print_replica_lag(idx, store, &r))
        printf("ok: the index agrees with this node's copy of the articles, which is behind "
               "PostgreSQL (a serving node catches up by itself)\n");
    else
        printf("ok\n");
    status = CMD_EXIT_OK;
out:
    index_close(idx);
    store_close(store);
    return status;
}
