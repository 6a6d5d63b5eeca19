/* The embedded store (store/backend.h): one SQLite file <dir>/newsd.db in WAL
 * mode. This file opens and closes it and owns the schema.
 *
 * Schema versions: meta(key, value) holds schema_version; migrations[i]
 * brings version i to i+1 and is written so that running it twice is
 * harmless (IF NOT EXISTS). Version 1:
 *   meta      key → value: schema_version, seq (the last ingest sequence)
 *   sources   the catalogue, ordered by id in byte order
 *   articles  id = published_at << 20 | n (time-ordered), seq, fields of
 *             struct article, meta_terms (db.h: the filter terms, computed
 *             at insert time)
 *   articles_fts  contentless FTS5 (tokenizer "newsd") over title,
 *             description, content and meta; rowid = article id. Triggers
 *             keep it in step: text columns carry "\x1F" language "\x1F" so
 *             the tokenizer stems in the article's language, meta is "\x1E"
 *             meta_terms; a delete repeats exactly the inserted values, as a
 *             contentless table requires.
 *   keys, usage  API keys (hash only) and requests per key and UTC day.
 * Version 2 (feeds.c):
 *   feeds       publishers' feeds and their fetch state; feeds_due indexes
 *               the crawler's question (enabled, next_fetch_at)
 *   feed_items  per feed, the items already stored: canonical url, a
 *               fingerprint of the item, the publication time it was
 *               stored with, when the feed last listed it
 * Version 3: meta articles_epoch (schema_v3).
 * Version 4 (delete.c): article_deletions  seq → id of each article
 *               deleted (store_articles_delete), for the indexes that
 *               follow the file (store/journal.h store_reader_deletions).
 * Version 5 (feeds.c): feeds.pages, a feed's page-fetch setting.
 * Version 6 (alerts.c; ids never reused: a delivery names its alert):
 *   alerts      saved searches POSTed to a webhook: the owning key, the
 *               query (JSON), webhook, secret, the cursor in the article
 *               log, the lease (owner, until)
 *   alert_deliveries  per alert, the deliveries waiting for the webhook,
 *               body as sent, in seq order
 * Version 7: keys rebuilt with AUTOINCREMENT (schema_v7): SQLite gave the
 *   highest deleted rowid out again, and a new key inherited the deleted
 *   key's usage, open streams and log identity. Ids are now never reused.
 * Version 8: articles.story_id, the story of each article (story/assign.h;
 *   NULL for the articles stored before it). Not indexed: an index over
 *   random story ids cost imports 30 % of their rate (every insert a
 *   random B-tree page); the search index holds the column per document.
 * Version 9 (alerts.c): alerts.dedupe (a story delivered once),
 *   alerts.copies (the later copies counted instead) and alert_stories,
 *   per alert the stories delivered (the newest STORE_ALERT_STORIES_MAX)
 *   with the seq of the delivery that sent each.
 * Version 10: the full-text side's meta column carries the author's terms
 *   (db.h): a store with the side has articles_fts made again (schema_v10).
 * A new file is made with auto_vacuum=INCREMENTAL (set before its first
 * table), so deleted articles' pages can be given back
 * (store_space_release); an older file keeps auto_vacuum=NONE until
 * store_compact (`newsd articles compact`) rewrites it. */
#include "store/sqlite/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "text/text_fts5.h"
#include "util/banned.h"

_Static_assert(TEXT_FTS5_LANG_MARK == 31, "the triggers write char(31)");
_Static_assert(TEXT_FTS5_META_MARK == 30, "the triggers write char(30)");

/* clang-format off */
static const char schema_v1[] =
    "CREATE TABLE IF NOT EXISTS sources("
    " id TEXT PRIMARY KEY, name TEXT, description TEXT, url TEXT, category TEXT,"
    " language TEXT, country TEXT, headlines INTEGER NOT NULL DEFAULT 0,"
    " popularity REAL NOT NULL DEFAULT 0, feed_url TEXT);"
    "CREATE TABLE IF NOT EXISTS articles("
    " id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, url TEXT,"
    " canonical_url TEXT UNIQUE NOT NULL, source_id TEXT, source_name TEXT, author TEXT,"
    " title TEXT, description TEXT, url_to_image TEXT, published_at INTEGER NOT NULL,"
    " content TEXT, domain TEXT, language TEXT NOT NULL DEFAULT '',"
    " country TEXT NOT NULL DEFAULT '', category TEXT, headline INTEGER NOT NULL DEFAULT 0,"
    " ingested_at INTEGER NOT NULL DEFAULT 0, meta_terms TEXT NOT NULL DEFAULT 'a');"
    "CREATE INDEX IF NOT EXISTS articles_by_seq ON articles(seq);"
    "CREATE INDEX IF NOT EXISTS articles_by_headline ON articles(headline, id);"
    STORE_SQLITE_FULLTEXT_SQL
    "CREATE TABLE IF NOT EXISTS keys("
    " id INTEGER PRIMARY KEY, hash BLOB UNIQUE NOT NULL, name TEXT, plan TEXT NOT NULL,"
    " state INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL DEFAULT 0,"
    " last_used INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS usage("
    " key_id INTEGER NOT NULL REFERENCES keys(id) ON DELETE CASCADE, day INTEGER NOT NULL,"
    " n INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(key_id, day)) WITHOUT ROWID;";

static const char schema_v2[] =
    "CREATE TABLE IF NOT EXISTS feeds("
    " id INTEGER PRIMARY KEY, url TEXT UNIQUE NOT NULL, source_id TEXT,"
    " country TEXT NOT NULL DEFAULT '', category TEXT, language TEXT NOT NULL DEFAULT '',"
    " headline INTEGER NOT NULL DEFAULT 0, title TEXT, site_url TEXT, etag TEXT,"
    " last_modified TEXT, last_status INTEGER NOT NULL DEFAULT 0, last_error TEXT,"
    " last_fetch_at INTEGER NOT NULL DEFAULT 0, last_success_at INTEGER NOT NULL DEFAULT 0,"
    " last_new_item_at INTEGER NOT NULL DEFAULT 0, next_fetch_at INTEGER NOT NULL DEFAULT 0,"
    " interval_s INTEGER NOT NULL DEFAULT 300, consecutive_errors INTEGER NOT NULL DEFAULT 0,"
    " items_last INTEGER NOT NULL DEFAULT 0, items_total INTEGER NOT NULL DEFAULT 0,"
    " enabled INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS feeds_due ON feeds(enabled, next_fetch_at);"
    "CREATE TABLE IF NOT EXISTS feed_items("
    " feed_id INTEGER NOT NULL REFERENCES feeds(id) ON DELETE CASCADE, key TEXT NOT NULL,"
    " hash INTEGER NOT NULL, published_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL,"
    " PRIMARY KEY(feed_id, key)) WITHOUT ROWID;";
/* clang-format on */

/* The articles table's epoch: a random token that names this table's
 * history. A search index kept on disk beside the file (index/engine/)
 * belongs to one epoch; a replica rebuilt from its origin gets a new one
 * (replica.c), so no index of the old history is mistaken for it. */
static const char schema_v3[] =
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('articles_epoch', lower(hex(randomblob(16))));";

/* The writer's page cache (KiB, negative as SQLite wants it): an upsert
 * looks its canonical URL up in a B-tree that outgrows SQLite's default 2 MB
 * after ~100 k articles, and every miss is a pread through the kernel.
 * Allocated only as pages are used. */
#define STORE_SQLITE_WRITER_CACHE "-262144"
/* The size the WAL is cut back to when the writer restarts it. SQLite
 * checkpoints automatically past 1000 pages (~4 MiB), so a WAL in steady
 * use cycles within ~4 MiB plus one transaction; a limit below that would
 * truncate and regrow the file on every cycle. Four times it leaves a
 * steady import alone and gives back what a burst (one large transaction,
 * a reader holding an old snapshot during an import) grew. An idle store
 * makes no restart: idle.c truncates its WAL to zero. */
#define STORE_SQLITE_WAL_LIMIT "16777216"

static const char schema_v4[] =
    "CREATE TABLE IF NOT EXISTS article_deletions("
    " seq INTEGER PRIMARY KEY, id INTEGER NOT NULL, deleted_at INTEGER NOT NULL DEFAULT 0);";

/* A column added to a table: SQLite has no ADD COLUMN IF NOT EXISTS, so
 * the step looks first (a migration may run again over what it made: the
 * version row lost, test_store). A step's columns end with {NULL}. */
struct column_add {
    const char *table, *column, *decl;
};

/* Per feed, which new items get their page fetched (NULL: the crawler's
 * setting; ingest/crawl.h). */
static const struct column_add schema_v5[] = {{"feeds", "pages", "TEXT"}, {NULL, NULL, NULL}};

/* clang-format off */
static const char schema_v6[] =
    "CREATE TABLE IF NOT EXISTS alerts("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " key_id INTEGER NOT NULL REFERENCES keys(id) ON DELETE CASCADE,"
    " query TEXT NOT NULL, webhook TEXT NOT NULL, secret TEXT NOT NULL,"
    " created_at INTEGER NOT NULL DEFAULT 0, cursor_seq INTEGER NOT NULL DEFAULT 0,"
    " state INTEGER NOT NULL DEFAULT 0, lease_owner TEXT,"
    " lease_until_ms INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS alerts_by_key ON alerts(key_id);"
    "CREATE TABLE IF NOT EXISTS alert_deliveries("
    " alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE, seq INTEGER NOT NULL,"
    " id TEXT UNIQUE NOT NULL, body TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
    " next_ms INTEGER NOT NULL DEFAULT 0, first_failure_ms INTEGER NOT NULL DEFAULT 0,"
    " created_ms INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(alert_id, seq)) WITHOUT ROWID;";
/* clang-format on */

/* SQLite cannot add AUTOINCREMENT to a table: the table is made again
 * (the procedure of SQLite's "ALTER TABLE" page), with the same ids, while
 * schema_migrate has foreign keys off, so that dropping the old table
 * deletes no usage or alert of its keys; foreign_key_check runs before the
 * commit. Running it again rebuilds the table again, harmlessly. */
/* clang-format off */
static const char schema_v7[] =
    "DROP TABLE IF EXISTS keys_v7;"
    "CREATE TABLE keys_v7("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, hash BLOB UNIQUE NOT NULL, name TEXT,"
    " plan TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL DEFAULT 0,"
    " last_used INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO keys_v7(id, hash, name, plan, state, created_at, last_used)"
    " SELECT id, hash, name, plan, state, created_at, last_used FROM keys;"
    "DROP TABLE keys;"
    "ALTER TABLE keys_v7 RENAME TO keys;";
/* clang-format on */

/* The story of each article (issue 25). */
static const struct column_add schema_v8[] = {{"articles", "story_id", "INTEGER"},
                                              {NULL, NULL, NULL}};

/* An alert that delivers a story once (push/webhook.h), the later copies
 * it counted instead of delivering, and the stories it delivered. */
static const struct column_add schema_v9_columns[] = {
    {"alerts", "dedupe", "INTEGER NOT NULL DEFAULT 0"},
    {"alerts", "copies", "INTEGER NOT NULL DEFAULT 0"},
    {NULL, NULL, NULL}};
static const char schema_v9[] =
    "CREATE TABLE IF NOT EXISTS alert_stories("
    " alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,"
    " story_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " PRIMARY KEY(alert_id, story_id)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS alert_stories_by_seq ON alert_stories(alert_id, seq);";

/* The author's terms in the full-text side's meta column (db.h,
 * store/meta.h): a store with the side has its table made again and
 * filled from every article (the old triggers' deletes would not remove
 * the new values: a contentless table must be given what it was given). */
static int schema_v10(struct store_sqlite *s, struct err *err)
{
    bool on = false;
    int rc = store_sqlite_fulltext_get(s->writer, &on, err);
    if (rc < 0 || !on)
        return rc;
    if ((rc = store_sqlite_exec(s->writer,
                                "DROP TRIGGER IF EXISTS articles_fts_insert;"
                                "DROP TRIGGER IF EXISTS articles_fts_delete;"
                                "DROP TRIGGER IF EXISTS articles_fts_update;"
                                "DROP TABLE IF EXISTS articles_fts;",
                                err)) < 0 ||
        (rc = store_sqlite_exec(s->writer, STORE_SQLITE_FULLTEXT_SQL, err)) < 0)
        return rc;
    return store_sqlite_exec(s->writer,
                             "INSERT INTO articles_fts(rowid, title, description, content, meta)"
                             " SELECT id, " STORE_SQLITE_FTS_VALUES("") " FROM articles",
                             err);
}

/* Each step: its columns to add, then its statements, then its function. */
static const struct migration {
    const char *sql;
    const struct column_add *column;
    int (*fn)(struct store_sqlite *s, struct err *err);
} migrations[] = {
    {schema_v1, NULL, NULL}, {schema_v2, NULL, NULL}, {schema_v3, NULL, NULL},
    {schema_v4, NULL, NULL}, {NULL, schema_v5, NULL}, {schema_v6, NULL, NULL},
    {schema_v7, NULL, NULL}, {NULL, schema_v8, NULL}, {schema_v9, schema_v9_columns, NULL},
    {NULL, NULL, schema_v10}};
#define SCHEMA_VERSION ((int64_t)(sizeof migrations / sizeof migrations[0]))

static int schema_version_get(sqlite3 *db, int64_t *out, struct err *err)
{
    return store_sqlite_query_int(db, "SELECT value FROM meta WHERE key = 'schema_version'", out,
                                  err);
}

static int schema_version_set(sqlite3 *db, int64_t v, struct err *err)
{
    return store_sqlite_write(db,
                              "INSERT INTO meta(key, value) VALUES ('schema_version', ?1)"
                              " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                              STORE_ARGS(STORE_INT(v)), NULL, err);
}

int store_sqlite_schema_check(sqlite3 *db, struct err *err)
{
    int64_t version = 0, tables = 0;
    int rc = store_sqlite_query_int(db,
                                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                    "name IN ('meta', 'articles', 'sources', 'keys')",
                                    &tables, err);
    if (rc < 0)
        return rc;
    if (tables != 4)
        return err_set(err, ERR_INVALID, "not a newsd store (no newsd tables)");
    if ((rc = schema_version_get(db, &version, err)) < 0)
        return rc;
    if (version < 1 || version > SCHEMA_VERSION)
        return err_set(err, ERR_UNSUPPORTED,
                       "store schema version %lld: this newsd reads versions 1 to %lld",
                       (long long)version, (long long)SCHEMA_VERSION);
    return 0;
}

/* Add c unless its table has it already. */
static int column_ensure(struct store_sqlite *s, const struct column_add *c, struct err *err)
{
    /* The names are this file's constants, never input. */
    char sql[256];
    int64_t have = 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
             c->table, c->column);
    int rc = store_sqlite_query_int(s->writer, sql, &have, err);
    if (rc < 0 || have > 0)
        return rc;
    snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s;", c->table, c->column, c->decl);
    return store_sqlite_exec(s->writer, sql, err);
}

/* The references between tables hold (foreign_key_check finds nothing). */
static int foreign_keys_check(struct store_sqlite *s, struct err *err)
{
    int64_t bad = 0;
    int rc = store_sqlite_query_int(s->writer, "SELECT count(*) FROM pragma_foreign_key_check",
                                    &bad, err);
    if (rc == 0 && bad > 0)
        rc = err_set(err, ERR_STORE, "the migration left %lld rows without their parent",
                     (long long)bad);
    return rc;
}

/* Foreign keys back on after the migration; rc, or the failure to. */
static int foreign_keys_on(struct store_sqlite *s, int rc, struct err *err)
{
    struct err ignored;
    int on = store_sqlite_exec(s->writer, "PRAGMA foreign_keys=ON", rc < 0 ? &ignored : err);
    return rc < 0 ? rc : on;
}

int64_t store_sqlite_schema_version(void)
{
    return SCHEMA_VERSION;
}

/* Bring the schema to SCHEMA_VERSION in one transaction, with foreign keys
 * off (they cannot change inside a transaction: a migration that makes a
 * table again, schema_v7, must not cascade its drop into the children):
 * always for a new file, for an older one only when opt->migrate (else
 * ERR_OUTDATED and the transaction rolled back: the file stays as it was). */
static int schema_migrate(struct store_sqlite *s, const struct store_options *opt, struct err *err)
{
    int64_t version = 0;
    int rc;

    if ((rc = store_sqlite_exec(s->writer, "PRAGMA foreign_keys=OFF", err)) < 0)
        return rc;
    if ((rc = store_sqlite_begin(s, err)) < 0)
        goto on;
    rc = store_sqlite_exec(s->writer,
                           "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value)", err);
    if (rc < 0)
        goto out;
    if ((rc = schema_version_get(s->writer, &version, err)) < 0)
        goto out;
    if (version > SCHEMA_VERSION) {
        rc = err_set(err, ERR_UNSUPPORTED,
                     "store schema version %lld is newer than this newsd supports (%lld)",
                     (long long)version, (long long)SCHEMA_VERSION);
        goto out;
    }
    s->base.schema = (struct store_schema){.opened = version, .current = version};
    if (version == SCHEMA_VERSION)
        goto out;
    if (version > 0 && !opt->migrate && opt->read_outdated)
        goto out; /* left as it is: the transaction changed nothing */
    if (version > 0 && !opt->migrate) {
        rc = err_set(err, ERR_OUTDATED, "store schema version %lld needs migrating to %lld",
                     (long long)version, (long long)SCHEMA_VERSION);
        goto out;
    }
    for (int64_t v = version < 0 ? 0 : version; v < SCHEMA_VERSION; v++) {
        const struct migration *m = &migrations[v];
        /* a column first: the statements of the same step may index it */
        rc = 0;
        for (const struct column_add *c = m->column; c && c->table && rc == 0; c++)
            rc = column_ensure(s, c, err);
        if (rc == 0 && m->sql)
            rc = store_sqlite_exec(s->writer, m->sql, err);
        if (rc == 0 && m->fn)
            rc = m->fn(s, err);
        if (rc < 0)
            goto out;
    }
    if ((rc = foreign_keys_check(s, err)) < 0)
        goto out;
    rc = schema_version_set(s->writer, SCHEMA_VERSION, err);
    s->base.schema.current = SCHEMA_VERSION;
    /* schema_v1 made the full-text side; a new store drops it unless asked
     * (the same transaction: no other process sees it in between). */
    if (rc == 0 && version <= 0 && !opt->fulltext_when_new)
        rc = store_sqlite_exec(s->writer,
                               "DROP TRIGGER articles_fts_insert; DROP TRIGGER articles_fts_delete;"
                               " DROP TRIGGER articles_fts_update; DROP TABLE articles_fts;",
                               err);
out:
    rc = store_sqlite_end(s, rc, err);
on:
    return foreign_keys_on(s, rc, err);
}

/* Switch to WAL (persistent in the file) and check it took. */
static int wal_enable(sqlite3 *db, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_prepare(db, "PRAGMA journal_mode=WAL", &st, err)) < 0)
        goto out;
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        rc = store_sqlite_fail(db, rc, err);
        goto out;
    }
    const unsigned char *mode = sqlite3_column_text(st, 0);
    if (mode == NULL || strcmp((const char *)mode, "wal") != 0) {
        rc = err_set(err, ERR_STORE, "cannot switch the database to WAL mode");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* The store directory: created (0700) when missing, its parent must exist. */
static int dir_ensure(const char *dir, struct err *err)
{
    struct stat sb;

    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            return err_set(err, ERR_IO, "%s is not a directory", dir);
        return 0;
    }
    if (errno != ENOENT)
        return err_set(err, ERR_IO, "cannot access %s: %s", dir, strerror(errno));
    if (mkdir(dir, 0700) != 0)
        return err_set(err, ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    return 0;
}

static const char *sqlite_path(const struct store_backend *b)
{
    return ((const struct store_sqlite *)b)->path;
}

static int sqlite_fulltext_get(struct store_backend *b, bool *on, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    pthread_mutex_lock(&s->write_lock);
    int rc = store_sqlite_fulltext_get(s->writer, on, err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

static int sqlite_fulltext_set(struct store_backend *b, bool on, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    pthread_mutex_lock(&s->write_lock);
    int rc = store_sqlite_fulltext_set(s->writer, on, err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

static void sqlite_free(struct store_backend *b)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    if (s == NULL)
        return;
    store_sqlite_idle_stop(s);
    store_sqlite_pool_release(&s->readers);
    store_sqlite_conn_close(s->rowcount.db);
    pthread_mutex_destroy(&s->rowcount.lock);
    if (s->writer) {
        store_sqlite_conn_close(s->writer);
        pthread_mutex_destroy(&s->write_lock);
    }
    free(s->path);
    free(s);
}

int store_sqlite_new(struct store_backend **out, const char *dir, const struct store_options *opt,
                     struct err *err)
{
    struct store_sqlite *s = NULL;
    size_t len;
    int rc;

    *out = NULL;
    if ((rc = dir_ensure(dir, err)) < 0)
        goto out;
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if (pthread_mutex_init(&s->rowcount.lock, NULL) != 0) {
        free(s);
        s = NULL;
        rc = err_set(err, ERR_NOMEM, "cannot create a mutex");
        goto out;
    }
    s->base = (struct store_backend){
        .kind = "sqlite",
        .free = sqlite_free,
        .sqlite_path = sqlite_path,
        .backup = store_sqlite_backup,
        .stories_scan = store_sqlite_stories_scan,
        .stories_fill = store_sqlite_stories_fill,
        .space_release = store_sqlite_space_release,
        .space_incremental = store_sqlite_space_incremental,
        .compact = store_sqlite_compact,
        .fulltext_get = sqlite_fulltext_get,
        .fulltext_set = sqlite_fulltext_set,
        STORE_BACKEND_OPS(STORE_BACKEND_ENTRY, sqlite) /* each entry with its comma */
    };
    len = strlen(dir) + sizeof "/" STORE_SQLITE_FILE;
    s->path = malloc(len);
    if (s->path == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(s->path, len, "%s/%s", dir, STORE_SQLITE_FILE);
    if ((rc = store_sqlite_conn_open(&s->writer, s->path, false, err)) < 0)
        goto out;
    if (pthread_mutex_init(&s->write_lock, NULL) != 0) {
        store_sqlite_conn_close(s->writer);
        s->writer = NULL;
        rc = err_set(err, ERR_NOMEM, "cannot create a mutex");
        goto out;
    }
    /* Before anything creates a table: only a new file takes it (an older
     * one ignores it until store_compact). Not set on an existing file,
     * which it would write to even when unchanged: a command that refuses
     * a store (ERR_OUTDATED) leaves its file as it was. */
    int64_t tables = 0;
    if ((rc = store_sqlite_query_int(s->writer, "SELECT count(*) FROM sqlite_master", &tables,
                                     err)) < 0 ||
        (tables == 0 &&
         (rc = store_sqlite_exec(s->writer, "PRAGMA auto_vacuum=INCREMENTAL", err)) < 0) ||
        (rc = wal_enable(s->writer, err)) < 0 ||
        (rc = store_sqlite_exec(s->writer, "PRAGMA synchronous=NORMAL", err)) < 0 ||
        (rc = store_sqlite_exec(s->writer, "PRAGMA journal_size_limit=" STORE_SQLITE_WAL_LIMIT,
                                err)) < 0 ||
        (rc = store_sqlite_exec(s->writer, "PRAGMA cache_size=" STORE_SQLITE_WRITER_CACHE, err)) <
            0 ||
        (rc = schema_migrate(s, opt, err)) < 0 ||
        (rc = store_sqlite_pool_init(&s->readers, s->path, err)) < 0 ||
        (rc = store_sqlite_idle_start(s, err)) < 0)
        goto out;
    *out = &s->base;
    s = NULL;
out:
    if (s)
        sqlite_free(&s->base);
    return rc;
}
