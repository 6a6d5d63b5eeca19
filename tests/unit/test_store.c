/* store/: the embedded SQLite store on real files in a temporary directory —
 * lifecycle and schema, article upsert, ids and ingest sequence, sources,
 * keys and usage, and clean failures. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_tmpdir.h"
#include <sqlite3.h>

#include "store/journal.h"
#include "store/sqlite/db.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"

#include "store_alerts_scenario.h"

#define T0 ((int64_t)1709251200) /* 2024-03-01T00:00:00Z */

struct fixture {
    char dir[64];   /* temporary directory */
    char store[96]; /* dir/store: the store location (created by store_open) */
    char db[128];   /* dir/store/newsd.db */
    struct store *s;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-store-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->store, sizeof f->store, "%s/store", f->dir);
    snprintf(f->db, sizeof f->db, "%s/newsd.db", f->store);
    err_clear(&err);
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    remove_tree(f->dir);
    free(f);
    return 0;
}

static struct article make_article(const char *curl, int64_t published, const char *title)
{
    struct article a;
    memset(&a, 0, sizeof a);
    a.canonical_url = curl;
    a.url = curl;
    a.title = title;
    a.description = "description";
    a.content = "content";
    a.published_at = published;
    a.source_id = "bbc-news";
    a.source_name = "BBC News";
    a.domain = "bbc.co.uk";
    memcpy(a.language, "en", 3);
    memcpy(a.country, "gb", 3);
    a.category = "general";
    a.ingested_at = T0 + 100000;
    return a;
}

/* Read one integer with plain SQLite (no tokenizer needed for these tables). */
static int64_t sql_int(const char *db_path, const char *sql, const char *arg)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Text of the first column of the first row, copied into out. */
static void sql_text(const char *db_path, const char *sql, const char *arg, char *out, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void sql_exec(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static int64_t count_articles(struct store *s)
{
    int64_t n = -1;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_articles_count(s, &n, &err), 0);
    return n;
}

/* The row count is kept between calls and counted again after any
 * connection's commit: the store's own writes, another process's, a
 * DELETE made by hand (/healthz and /metrics ask at every probe). */
static void the_row_count_follows_every_commit(void **state)
{
    struct fixture *f = *state;
    struct err err;
    err_clear(&err);
    assert_int_equal(count_articles(f->s), 0);
    struct article a = make_article("https://x.test/c1", T0, "one");
    struct article b = make_article("https://x.test/c2", T0 + 60, "two");
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    assert_int_equal(count_articles(f->s), 1);
    assert_int_equal(count_articles(f->s), 1);
    assert_int_equal(store_articles_put(f->s, &b, 1, NULL, &err), 0);
    assert_int_equal(count_articles(f->s), 2);
    /* by hand, on a connection of the store's kind (its FTS5 triggers
     * need the tokenizer it registers) */
    sqlite3 *db;
    assert_int_equal(store_sqlite_conn_open(&db, f->db, false, &err), 0);
    assert_int_equal(
        sqlite3_exec(db, "DELETE FROM articles WHERE url = 'https://x.test/c1'", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(count_articles(f->s), 1);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM articles", NULL, NULL, NULL), SQLITE_OK);
    store_sqlite_conn_close(db);
    assert_int_equal(count_articles(f->s), 0);
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    assert_int_equal(count_articles(f->s), 1);
}

/* --- lifecycle and schema ------------------------------------------------- */

static void opening_creates_a_private_directory_and_reopening_keeps_the_data(void **state)
{
    struct fixture *f = *state;
    struct stat sb;
    struct err err;
    struct article a = make_article("https://x.test/1", T0, "kept");

    assert_int_equal(stat(f->store, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_string_equal(store_kind(f->s), "sqlite");
    assert_string_equal(store_sqlite_path(f->s), f->db);

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    assert_int_equal(count_articles(f->s), 1);
    char title[64];
    sql_text(f->db, "SELECT title FROM articles WHERE canonical_url = ?1", "https://x.test/1",
             title, sizeof title);
    assert_string_equal(title, "kept");
    /* The database is in WAL mode. */
    sql_text(f->db, "PRAGMA journal_mode", NULL, title, sizeof title);
    assert_string_equal(title, "wal");
}

static void the_schema_is_versioned_and_migrations_are_idempotent(void **state)
{
    struct fixture *f = *state;
    struct err err;
    const char *objects = "SELECT count(*) FROM sqlite_master";
    struct article a = make_article("https://x.test/1", T0, "t");

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    /* Version 2 added the feeds tables (store/sqlite/feeds.c), version 3
     * the articles table's epoch (a random token, index/engine/), version
     * 4 the deletion log (store/sqlite/delete.c), version 5 feeds.pages,
     * version 6 the alerts (store/sqlite/alerts.c), version 7 keys with
     * AUTOINCREMENT, version 8 articles.story_id (story/): the store is at
     * this build's version, whatever number that is. */
    assert_int_equal(sql_int(f->db, "SELECT value FROM meta WHERE key = 'schema_version'", NULL),
                     store_schema_version("sqlite"));
    assert_int_equal(sql_int(f->db,
                             "SELECT count(*) FROM meta WHERE key = 'articles_epoch'"
                             " AND length(value) = 32",
                             NULL),
                     1);
    int64_t before = sql_int(f->db, objects, NULL);
    assert_true(before > 8);

    /* Reopening changes nothing. */
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    assert_int_equal(sql_int(f->db, objects, NULL), before);

    /* A crash between the migration and the version write: running the
     * migration again over the existing tables is harmless. */
    store_close(f->s);
    f->s = NULL;
    sql_exec(f->db, "DELETE FROM meta WHERE key = 'schema_version'");
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    assert_int_equal(sql_int(f->db, objects, NULL), before);
    assert_int_equal(sql_int(f->db, "SELECT value FROM meta WHERE key = 'schema_version'", NULL),
                     store_schema_version("sqlite"));
    assert_int_equal(count_articles(f->s), 1);

    /* Running the migrations again keeps the epoch: an index on disk stays
     * valid across upgrades. */
    store_close(f->s);
    f->s = NULL;
    sql_exec(f->db, "CREATE TABLE epoch_before AS SELECT value FROM meta"
                    " WHERE key = 'articles_epoch'");
    sql_exec(f->db, "DELETE FROM meta WHERE key = 'schema_version'");
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    assert_int_equal(sql_int(f->db,
                             "SELECT count(*) FROM meta JOIN epoch_before USING(value)"
                             " WHERE key = 'articles_epoch'",
                             NULL),
                     1);
}

static void a_store_written_by_a_newer_version_is_refused(void **state)
{
    struct fixture *f = *state;
    struct err err;
    store_close(f->s);
    f->s = NULL;
    sql_exec(f->db, "UPDATE meta SET value = 999 WHERE key = 'schema_version'");
    err_clear(&err);
    assert_int_equal(store_open(&f->s, f->store, &err), ERR_UNSUPPORTED);
    assert_null(f->s);
    assert_non_null(strstr(err.msg, "999"));
}

/* Issue 30 item 1: only serve and migrate migrate (store_options.migrate);
 * any other opener of an older store gets ERR_OUTDATED and the file stays
 * at its version; index build reads it as it is (read_outdated). */
static void an_older_store_is_migrated_only_when_asked(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct store_schema sc;
    const char *version = "SELECT value FROM meta WHERE key = 'schema_version'";
    int64_t current = store_schema_version("sqlite");
    struct store_options refuse = {.fulltext_when_new = true};
    struct store_options read = {.fulltext_when_new = true, .read_outdated = true};
    struct store_options migrate = {.fulltext_when_new = true, .migrate = true};

    store_schema_get(f->s, &sc);
    assert_int_equal(sc.opened, 0); /* made new by setup */
    assert_int_equal(sc.current, current);
    store_close(f->s);
    f->s = NULL;
    sql_exec(f->db, "UPDATE meta SET value = 4 WHERE key = 'schema_version'");

    err_clear(&err);
    assert_int_equal(store_open_with(&f->s, f->store, &refuse, &err), ERR_OUTDATED);
    assert_null(f->s);
    assert_non_null(strstr(err.msg, "version 4 needs migrating"));
    assert_int_equal(sql_int(f->db, version, NULL), 4);

    assert_int_equal(store_open_with(&f->s, f->store, &read, &err), 0);
    store_schema_get(f->s, &sc);
    assert_int_equal(sc.opened, 4);
    assert_int_equal(sc.current, 4);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(sql_int(f->db, version, NULL), 4);

    assert_int_equal(store_open_with(&f->s, f->store, &migrate, &err), 0);
    store_schema_get(f->s, &sc);
    assert_int_equal(sc.opened, 4);
    assert_int_equal(sc.current, current);
    assert_int_equal(sql_int(f->db, version, NULL), current);
}

/* Issue 14 item 9: the database, its WAL and shared memory are 0600 and the
 * directory 0700 under any umask (SQLite's own default is 0644 less the
 * umask); an existing database keeps the mode an operator gave it. */
static void a_new_store_is_private_whatever_the_umask(void **state)
{
    struct fixture *f = *state;
    static const mode_t umasks[] = {022, 0};
    static const char *const files[] = {"", "-wal", "-shm"};
    struct stat sb;
    struct err err;
    char store[128], path[160];

    for (size_t u = 0; u < 2; u++) {
        struct store *s = NULL;
        mode_t old = umask(umasks[u]);
        snprintf(store, sizeof store, "%s/private-%zu", f->dir, u);
        err_clear(&err);
        int rc = store_open(&s, store, &err);
        umask(old);
        assert_int_equal(rc, 0);
        struct store_put_stats st;
        struct article a = make_article("https://x.test/mode", T0, "title");
        assert_int_equal(store_articles_put(s, &a, 1, &st, &err), 0);
        assert_int_equal(stat(store, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0700);
        for (size_t i = 0; i < 3; i++) { /* the WAL and shm exist while the store is open */
            snprintf(path, sizeof path, "%s/newsd.db%s", store, files[i]);
            assert_int_equal(stat(path, &sb), 0);
            assert_int_equal(sb.st_mode & 0777, 0600);
        }
        store_close(s);
    }

    /* A database an operator opened to a group stays so, its WAL too. */
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(chmod(f->db, 0640), 0);
    err_clear(&err);
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    struct store_put_stats st;
    struct article a = make_article("https://x.test/group", T0, "title");
    assert_int_equal(store_articles_put(f->s, &a, 1, &st, &err), 0);
    assert_int_equal(stat(f->db, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    snprintf(path, sizeof path, "%s-wal", f->db);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
}

static void bad_locations_fail_cleanly(void **state)
{
    struct fixture *f = *state;
    struct store *s = (struct store *)0x1;
    struct err err;
    char path[256];

    /* Missing parent: only the last component is created. */
    snprintf(path, sizeof path, "%s/missing/store", f->dir);
    err_clear(&err);
    assert_int_equal(store_open(&s, path, &err), ERR_IO);
    assert_null(s);
    assert_non_null(strstr(err.msg, "cannot create"));

    /* A regular file where the directory should be. */
    snprintf(path, sizeof path, "%s/file", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    err_clear(&err);
    assert_int_equal(store_open(&s, path, &err), ERR_IO);
    assert_non_null(strstr(err.msg, "not a directory"));

    /* A directory where the database file should be. */
    snprintf(path, sizeof path, "%s/odd", f->dir);
    assert_int_equal(mkdir(path, 0700), 0);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/newsd.db", path);
    assert_int_equal(mkdir(inner, 0700), 0);
    err_clear(&err);
    assert_int_equal(store_open(&s, path, &err), ERR_STORE);
    assert_null(s);
    assert_true(strlen(err.msg) > 0);

    /* Read-only places: a read-only file system, and (when not root, who
     * ignores permissions) a read-only directory. */
    err_clear(&err);
    assert_int_equal(store_open(&s, "/proc/newsd-store-test", &err), ERR_IO);
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/ro", f->dir);
        assert_int_equal(mkdir(path, 0500), 0);
        err_clear(&err);
        assert_true(store_open(&s, path, &err) < 0);
        assert_null(s);
        chmod(path, 0700);
    }

    err_clear(&err);
    /* No server there (db.example never resolves): busy, try again later. */
    assert_int_equal(store_open(&s, "postgresql://db.example/newsd", &err), ERR_BUSY);
    assert_null(s);
    assert_non_null(strstr(err.msg, "PostgreSQL"));
    err_clear(&err);
    assert_int_equal(store_open(&s, "", &err), ERR_INVALID);
}

/* --- articles ------------------------------------------------------------- */

static void putting_the_same_url_twice_replaces_the_article_flags_included(void **state)
{
    struct fixture *f = *state;
    struct store_put_stats st;
    struct err err;
    struct article a = make_article("https://x.test/same", T0 + 5, "first title");
    struct article other = make_article("https://x.test/other", T0 + 5, "other");

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &a, 1, &st, &err), 0);
    assert_int_equal(st.inserted, 1);
    assert_int_equal(st.updated, 0);
    assert_int_equal(store_articles_put(f->s, &other, 1, &st, &err), 0);
    int64_t first_id = a.id, first_seq = a.seq;

    struct article b = make_article("https://x.test/same", T0 + 5, "second title");
    b.url = "https://x.test/same?utm=1";
    b.headline = true;
    b.category = "sports";
    b.author = "Someone";
    memcpy(b.country, "us", 3);
    assert_int_equal(store_articles_put(f->s, &b, 1, &st, &err), 0);
    assert_int_equal(st.inserted, 0);
    assert_int_equal(st.updated, 1);
    assert_int_equal(count_articles(f->s), 2);
    assert_int_equal(b.id, first_id); /* same second: the id is kept */
    assert_true(b.seq > first_seq);

    char txt[128];
    sql_text(f->db, "SELECT title FROM articles WHERE canonical_url = ?1", b.canonical_url, txt,
             sizeof txt);
    assert_string_equal(txt, "second title");
    sql_text(f->db, "SELECT url FROM articles WHERE canonical_url = ?1", b.canonical_url, txt,
             sizeof txt);
    assert_string_equal(txt, "https://x.test/same?utm=1");
    sql_text(f->db,
             "SELECT category || '/' || country || '/' || author FROM articles"
             " WHERE canonical_url = ?1",
             b.canonical_url, txt, sizeof txt);
    assert_string_equal(txt, "sports/us/Someone");
    assert_int_equal(
        sql_int(f->db, "SELECT headline FROM articles WHERE canonical_url = ?1", b.canonical_url),
        1);

    /* Flags can be cleared too. */
    struct article c = make_article("https://x.test/same", T0 + 5, "third");
    c.headline = false;
    c.category = NULL;
    assert_int_equal(store_articles_put(f->s, &c, 1, &st, &err), 0);
    assert_int_equal(
        sql_int(f->db, "SELECT headline FROM articles WHERE canonical_url = ?1", c.canonical_url),
        0);
    assert_int_equal(sql_int(f->db,
                             "SELECT category IS NULL FROM articles WHERE canonical_url = ?1",
                             c.canonical_url),
                     1);

    /* A new publication time moves the article to that second. */
    struct article d = make_article("https://x.test/same", T0 + 50, "moved");
    assert_int_equal(store_articles_put(f->s, &d, 1, &st, &err), 0);
    assert_int_equal(st.updated, 1);
    assert_int_equal(d.id, STORE_ID_MIN_FOR_TIME(T0 + 50));
    assert_int_equal(count_articles(f->s), 2);
    char idtxt[32];
    snprintf(idtxt, sizeof idtxt, "%lld", (long long)first_id);
    assert_int_equal(
        sql_int(f->db, "SELECT count(*) FROM articles WHERE id = CAST(?1 AS INTEGER)", idtxt), 0);
}

static void the_same_url_twice_in_one_batch_keeps_the_later_one(void **state)
{
    struct fixture *f = *state;
    struct store_put_stats st;
    struct err err;
    struct article batch[2] = {make_article("https://x.test/dup", T0, "early"),
                               make_article("https://x.test/dup", T0, "late")};
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, batch, 2, &st, &err), 0);
    assert_int_equal(st.inserted, 1);
    assert_int_equal(st.updated, 1);
    assert_int_equal(count_articles(f->s), 1);
    assert_int_equal(batch[0].id, batch[1].id);
    char txt[32];
    sql_text(f->db, "SELECT title FROM articles WHERE canonical_url = ?1", "https://x.test/dup",
             txt, sizeof txt);
    assert_string_equal(txt, "late");
}

static void ids_are_time_ordered_and_unique_within_a_second(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct article batch[5] = {
        make_article("https://x.test/a", T0 + 10, "a"),
        make_article("https://x.test/b", T0 + 10, "b"),
        make_article("https://x.test/c", T0 + 5, "c"),
        make_article("https://x.test/d", T0 + 10, "d"),
        make_article("https://x.test/e", T0 - 3600, "e"),
    };
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, batch, 5, NULL, &err), 0);
    /* Articles of one second are numbered in ingest order from 0. */
    assert_int_equal(batch[0].id, STORE_ID_MIN_FOR_TIME(T0 + 10));
    assert_int_equal(batch[1].id, STORE_ID_MIN_FOR_TIME(T0 + 10) + 1);
    assert_int_equal(batch[3].id, STORE_ID_MIN_FOR_TIME(T0 + 10) + 2);
    assert_int_equal(batch[2].id, STORE_ID_MIN_FOR_TIME(T0 + 5));
    assert_int_equal(batch[4].id, STORE_ID_MIN_FOR_TIME(T0 - 3600));
    for (int i = 0; i < 5; i++) {
        assert_true(batch[i].id >= STORE_ID_MIN_FOR_TIME(batch[i].published_at));
        assert_true(batch[i].id <= STORE_ID_MAX_FOR_TIME(batch[i].published_at));
        for (int j = 0; j < i; j++)
            assert_true(batch[i].id != batch[j].id);
    }
    /* A second batch continues the numbering of that second. */
    struct article more = make_article("https://x.test/f", T0 + 10, "f");
    assert_int_equal(store_articles_put(f->s, &more, 1, NULL, &err), 0);
    assert_int_equal(more.id, STORE_ID_MIN_FOR_TIME(T0 + 10) + 3);
    /* Before the epoch too. */
    struct article old = make_article("https://x.test/old", -86400, "1969");
    assert_int_equal(store_articles_put(f->s, &old, 1, NULL, &err), 0);
    assert_int_equal(old.id, STORE_ID_MIN_FOR_TIME(-86400));
    assert_true(old.id < batch[4].id);
}

static void the_ingest_sequence_grows_with_every_insert_and_update(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct article batch[3] = {make_article("https://x.test/1", T0 + 3, "1"),
                               make_article("https://x.test/2", T0 + 1, "2"),
                               make_article("https://x.test/3", T0 + 2, "3")};
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, batch, 3, NULL, &err), 0);
    assert_true(batch[0].seq >= 1);
    assert_int_equal(batch[1].seq, batch[0].seq + 1);
    assert_int_equal(batch[2].seq, batch[1].seq + 1);
    struct article upd = make_article("https://x.test/2", T0 + 1, "2 again");
    assert_int_equal(store_articles_put(f->s, &upd, 1, NULL, &err), 0);
    assert_int_equal(upd.seq, batch[2].seq + 1);
    /* The sequence survives a reopen and never reuses a value. */
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    struct article next = make_article("https://x.test/4", T0, "4");
    assert_int_equal(store_articles_put(f->s, &next, 1, NULL, &err), 0);
    assert_int_equal(next.seq, upd.seq + 1);
    assert_int_equal(sql_int(f->db, "SELECT max(seq) FROM articles", NULL), next.seq);
}

static void an_invalid_article_rolls_back_the_whole_batch(void **state)
{
    struct fixture *f = *state;
    struct store_put_stats st = {7, 7};
    struct err err;
    struct article batch[3] = {make_article("https://x.test/1", T0, "1"),
                               make_article(NULL, T0, "no url"),
                               make_article("https://x.test/3", T0, "3")};
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, batch, 3, &st, &err), ERR_INVALID);
    assert_non_null(strstr(err.msg, "article 1"));
    assert_int_equal(count_articles(f->s), 0);
    assert_int_equal(batch[0].id, 0); /* ids are only handed back on commit */

    batch[1].canonical_url = "https://x.test/2";
    batch[1].published_at = INT64_MAX / 2;
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, batch, 3, &st, &err), ERR_INVALID);
    assert_int_equal(count_articles(f->s), 0);

    batch[1].published_at = T0;
    assert_int_equal(store_articles_put(f->s, batch, 3, &st, &err), 0);
    assert_int_equal(st.inserted, 3);
    assert_int_equal(count_articles(f->s), 3);
    assert_int_equal(store_articles_put(f->s, batch, 0, &st, &err), 0);
    assert_int_equal(st.inserted, 0);
}

static void null_fields_are_stored_as_null(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct article a;
    memset(&a, 0, sizeof a);
    a.canonical_url = "https://x.test/bare";
    a.published_at = T0;
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    assert_int_equal(sql_int(f->db,
                             "SELECT (title IS NULL) + (author IS NULL) + (source_id IS NULL) +"
                             " (content IS NULL) + (language = '') + (country = '')"
                             " FROM articles WHERE canonical_url = ?1",
                             a.canonical_url),
                     6);
    /* The store stamps an ingest time when the caller gave none. */
    assert_true(sql_int(f->db, "SELECT ingested_at FROM articles WHERE canonical_url = ?1",
                        a.canonical_url) > T0);
}

/* --- deletes ---------------------------------------------------------------- */

static int64_t reader_head(struct store_reader *r)
{
    int64_t head = -1;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_reader_head(r, &head, &err), 0);
    return head;
}

/* The ids the log says were deleted after seq `after`. */
static size_t deleted_after(struct store_reader *r, int64_t after, int64_t *out, size_t cap,
                            int64_t *last)
{
    int64_t *ids = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_reader_deletions(r, after, &ids, &n, last, &err), 0);
    assert_true(n <= cap);
    if (n)
        memcpy(out, ids, n * sizeof *ids);
    free(ids);
    return n;
}

static void deletes_go_oldest_first_and_are_in_the_log_by_seq(void **state)
{
    struct fixture *f = *state;
    struct store_reader *r = NULL;
    struct store_delete_filter all = {0};
    struct err err;
    int64_t n = -1, got[8], last = 0;
    struct article a[5] = {
        make_article("https://x.test/0", T0 + 40, "t0"),
        make_article("https://x.test/1", T0 + 10, "t1"),
        make_article("https://x.test/2", T0 + 30, "t2"),
        make_article("https://x.test/3", T0 + 20, "t3"),
        make_article("https://x.test/4", T0 + 50, "t4"),
    };
    a[3].source_id = "reuters";

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, a, 5, NULL, &err), 0);
    assert_int_equal(store_reader_open(&r, f->db, &err), 0);
    int64_t head0 = reader_head(r);
    assert_int_equal(head0, 5);

    /* Published before T0+25: articles 1 and 3, oldest first. */
    struct store_delete_filter before = {.before_set = true, .before = T0 + 25};
    assert_int_equal(store_articles_delete(f->s, &before, 100, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(count_articles(f->s), 3);
    assert_int_equal(deleted_after(r, head0, got, 8, &last), 2);
    assert_int_equal(got[0], a[1].id);
    assert_int_equal(got[1], a[3].id);
    /* Each delete took a seq: the head moved, and covers the records. */
    assert_int_equal(last, head0 + 2);
    assert_int_equal(reader_head(r), head0 + 2);
    assert_int_equal(deleted_after(r, last, got, 8, &last), 0);
    assert_int_equal(last, head0 + 2);

    /* No filter, a limit: the oldest left (article 2). */
    assert_int_equal(store_articles_delete(f->s, &all, 1, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(deleted_after(r, head0 + 2, got, 8, &last), 1);
    assert_int_equal(got[0], a[2].id);

    /* By canonical URL, and with a source that does not match it. */
    struct store_delete_filter url = {.canonical_url = "https://x.test/4", .source_id = "reuters"};
    assert_int_equal(store_articles_delete(f->s, &url, 100, &n, &err), 0);
    assert_int_equal(n, 0);
    url.source_id = "bbc-news";
    assert_int_equal(store_articles_delete(f->s, &url, 100, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(count_articles(f->s), 1);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM articles WHERE canonical_url = ?1",
                             "https://x.test/0"),
                     1);

    /* A deleted article imported again comes back under a higher seq than
     * its deletion: a follower applying the log in order keeps it. */
    int64_t before_put = reader_head(r);
    struct article again = make_article("https://x.test/1", T0 + 10, "t1 again");
    assert_int_equal(store_articles_put(f->s, &again, 1, NULL, &err), 0);
    assert_int_equal(again.id, a[1].id);
    assert_true(again.seq > before_put);

    /* Nothing matches: nothing happens, the head stays. */
    int64_t head = reader_head(r);
    struct store_delete_filter none = {.before_set = true, .before = T0};
    assert_int_equal(store_articles_delete(f->s, &none, 100, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(reader_head(r), head);
    store_reader_close(r);
}

/* --- the journal's full-text side ----------------------------------------- */

/* ids[0..n) of a match in order (INT64 window unless given). */
static size_t match_page(struct store_reader *r, const struct store_match *m,
                         enum store_match_order order, size_t offset, size_t max, int64_t *ids)
{
    size_t n = 99;
    struct err err;
    err_clear(&err);
    assert_int_equal(store_reader_match_ids(r, m, order, offset, max, ids, &n, &err), 0);
    assert_true(n <= max);
    return n;
}

/* What store_reader_articles_each handed over: ids and titles, in order. */
struct each_seen {
    size_t n, stop_at; /* stop_at: the call that returns -42 (0: none) */
    int64_t ids[64];
    char titles[64][16];
};

static int each_record(void *ctx, const struct article *a)
{
    struct each_seen *e = ctx;
    assert_true(e->n < 64);
    e->ids[e->n] = a->id;
    snprintf(e->titles[e->n], sizeof e->titles[0], "%s", a->title);
    assert_string_equal(a->content, "content");
    assert_string_equal(a->source_name, "BBC News");
    return ++e->n == e->stop_at ? -42 : 0;
}

/* ids[0..n) through store_reader_articles_each, checked against
 * store_reader_articles (the copying reader): the same rows, in order,
 * the deleted ones (id 0 there) left out. */
static void each_matches_articles(struct store_reader *r, const int64_t *ids, size_t n)
{
    struct arena a;
    struct err err;
    struct article arts[64];
    struct each_seen seen = {0};
    size_t k = 0;
    err_clear(&err);
    arena_init(&a, 1 << 20);
    memset(arts, 0, sizeof arts); /* a slot without a row keeps its id 0 */
    assert_int_equal(store_reader_articles(r, &a, ids, n, arts, &err), 0);
    assert_int_equal(store_reader_articles_each(r, ids, n, each_record, &seen, &err), 0);
    for (size_t i = 0; i < n; i++) {
        if (arts[i].id == 0)
            continue;
        assert_true(k < seen.n);
        assert_int_equal(seen.ids[k], arts[i].id);
        assert_string_equal(seen.titles[k], arts[i].title);
        k++;
    }
    assert_int_equal(k, seen.n);
    arena_release(&a);
}

/* Forty articles a minute apart, their URLs and titles numbered under
 * kind, stored; their ids into ids, newest first (as an export asks). */
struct forty {
    struct article a[40];
    char urls[40][32], titles[40][16];
    int64_t ids[40];
};

static void put_forty(struct fixture *f, const char *kind, struct forty *o)
{
    struct err err;
    err_clear(&err);
    for (int i = 0; i < 40; i++) {
        snprintf(o->urls[i], sizeof o->urls[i], "https://x.test/%s/%d", kind, i);
        snprintf(o->titles[i], sizeof o->titles[i], "%c%d", kind[0], i);
        o->a[i] = make_article(o->urls[i], T0 + i * 60, o->titles[i]);
    }
    assert_int_equal(store_articles_put(f->s, o->a, 40, NULL, &err), 0);
    for (int i = 0; i < 40; i++)
        o->ids[i] = o->a[39 - i].id;
}

static void each_article_comes_in_the_order_asked_dense_sparse_or_any(void **state)
{
    struct fixture *f = *state;
    struct store_reader *r = NULL;
    struct err err;
    struct forty o;
    const int64_t *ids = o.ids;
    char(*urls)[32] = o.urls;
    int64_t pick[40], n = 0;

    err_clear(&err);
    put_forty(f, "each", &o);
    for (int i = 1; i < 40; i++)
        assert_true(ids[i] < ids[i - 1]);
    /* Gaps: two rows deleted inside the range. */
    struct store_delete_filter gone = {.canonical_url = urls[30]};
    assert_int_equal(store_articles_delete(f->s, &gone, 10, &n, &err), 0);
    gone.canonical_url = urls[12];
    assert_int_equal(store_articles_delete(f->s, &gone, 10, &n, &err), 0);
    assert_int_equal(store_reader_open(&r, f->db, &err), 0);
    assert_int_equal(store_reader_begin(r, &err), 0);

    /* Dense: the whole range, walked down. */
    each_matches_articles(r, ids, 40);
    /* Sparse: one id in ten, past more rows than ids, then by id. */
    size_t m = 0;
    for (int i = 0; i < 40; i += 10)
        pick[m++] = ids[i];
    each_matches_articles(r, pick, m);
    /* Half dense then sparse: the walk gives up part way. */
    m = 0;
    for (int i = 0; i < 40; i++)
        if (i < 8 || i % 9 == 0)
            pick[m++] = ids[i];
    each_matches_articles(r, pick, m);
    /* Any other order: each by id, in the order given. */
    int64_t mixed[] = {ids[5], ids[20], ids[1], ids[30], ids[2]};
    each_matches_articles(r, mixed, 5);
    each_matches_articles(r, ids, 1);
    each_matches_articles(r, ids, 0);
    /* fn's non-zero return stops the walk and is returned. */
    struct each_seen stop = {.stop_at = 3};
    assert_int_equal(store_reader_articles_each(r, ids, 40, each_record, &stop, &err), -42);
    assert_int_equal(stop.n, 3);
    struct each_seen stop2 = {.stop_at = 2};
    assert_int_equal(store_reader_articles_each(r, mixed, 5, each_record, &stop2, &err), -42);
    assert_int_equal(stop2.n, 2);
    store_reader_end(r, NULL);
    store_reader_close(r);
}

/* Whether the file at path (absolute) is mapped into this process. */
static bool file_mapped(const char *path)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    size_t n = strlen(path);
    bool found = false;
    assert_non_null(maps);
    while (fgets(line, sizeof line, maps)) {
        size_t len = strcspn(line, "\n");
        line[len] = '\0';
        if (len > n && line[len - n - 1] == ' ' && strcmp(line + len - n, path) == 0)
            found = true;
    }
    fclose(maps);
    return found;
}

/* An export's reader (store_reader_open_scan) reads what a reader reads,
 * through a map of the file that a reader does not make. */
static void a_scan_reader_reads_what_a_reader_reads_through_a_map(void **state)
{
    struct fixture *f = *state;
    struct store_reader *r = NULL, *scan = NULL;
    struct err err;
    struct forty o;
    const int64_t *ids = o.ids;

    err_clear(&err);
    put_forty(f, "scan", &o);
    /* Into the file itself: pages still in the WAL are read from there. */
    sql_exec(f->db, "PRAGMA wal_checkpoint(TRUNCATE)");
    assert_true(f->db[0] == '/');
    assert_int_equal(store_reader_open(&r, f->db, &err), 0);
    assert_int_equal(store_reader_begin(r, &err), 0);
    each_matches_articles(r, ids, 40);
    assert_false(file_mapped(f->db));

    assert_int_equal(store_reader_open_scan(&scan, f->db, &err), 0);
    assert_int_equal(store_reader_begin(scan, &err), 0);
    each_matches_articles(scan, ids, 40);
    struct each_seen plain = {0}, mapped = {0};
    assert_int_equal(store_reader_articles_each(r, ids, 40, each_record, &plain, &err), 0);
    assert_int_equal(store_reader_articles_each(scan, ids, 40, each_record, &mapped, &err), 0);
    assert_int_equal(mapped.n, 40);
    assert_memory_equal(&mapped, &plain, sizeof plain);
    assert_true(file_mapped(f->db));
    store_reader_end(scan, NULL);
    store_reader_close(scan);
    assert_false(file_mapped(f->db)); /* closed with its connection */
    store_reader_end(r, NULL);
    store_reader_close(r);
}

static void the_full_text_side_counts_and_pages_matches_in_each_order(void **state)
{
    struct fixture *f = *state;
    struct store_reader *r = NULL;
    struct err err;
    int64_t total = -1, ids[8];
    struct article a[3] = {
        make_article("https://x.test/old", T0 + 10, "storm over the sea"),
        make_article("https://x.test/mid", T0 + 20, "calm sea"),
        make_article("https://x.test/new", T0 + 30, "storm warning"),
    };
    struct store_match m = {.expr = "{title} : \"storm\"", .id_lo = INT64_MIN, .id_hi = INT64_MAX};

    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, a, 3, NULL, &err), 0);
    assert_int_equal(store_reader_open(&r, f->db, &err), 0);
    assert_int_equal(store_reader_begin(r, &err), 0);
    assert_int_equal(store_reader_match_count(r, &m, &total, &err), 0);
    assert_int_equal(total, 2);
    assert_int_equal(match_page(r, &m, STORE_MATCH_NEWEST, 0, 8, ids), 2);
    assert_int_equal(ids[0], a[2].id);
    assert_int_equal(ids[1], a[0].id);
    assert_int_equal(match_page(r, &m, STORE_MATCH_OLDEST, 0, 8, ids), 2);
    assert_int_equal(ids[0], a[0].id);
    assert_int_equal(ids[1], a[2].id);
    /* Popularity ties (no catalogue here) and an offset: newest first. */
    assert_int_equal(match_page(r, &m, STORE_MATCH_POPULARITY, 1, 8, ids), 1);
    assert_int_equal(ids[0], a[0].id);
    assert_int_equal(match_page(r, &m, STORE_MATCH_RELEVANCE, 0, 1, ids), 1);
    assert_int_equal(match_page(r, &m, STORE_MATCH_NEWEST, 0, 0, ids), 0);
    /* A time window is an id range. */
    m.id_lo = store_id_lo(T0 + 25);
    assert_int_equal(store_reader_match_count(r, &m, &total, &err), 0);
    assert_int_equal(total, 1);
    assert_int_equal(match_page(r, &m, STORE_MATCH_OLDEST, 0, 8, ids), 1);
    assert_int_equal(ids[0], a[2].id);
    /* FTS5 syntax errors are the caller's: an error, not a crash. */
    m.expr = "\"unbalanced";
    assert_true(store_reader_match_count(r, &m, &total, &err) < 0);
    assert_int_equal(store_reader_end(r, NULL), 0);
    store_reader_close(r);

    char detail[256] = "x";
    int64_t rows = -1;
    assert_int_equal(store_journal_fulltext_verify(f->db, &rows, detail, sizeof detail, &err), 0);
    assert_int_equal(rows, 3);
    assert_string_equal(detail, "");
}

static void a_spent_deadline_stops_a_match_and_the_reader_goes_on(void **state)
{
    struct fixture *f = *state;
    struct store_reader *r = NULL;
    struct err err;
    enum { N = 2000, BATCH = 500 }; /* enough rows for SQLite's progress handler to be asked */
    static char urls[N][32];
    struct article a[BATCH];
    int64_t total = -1, ids[4];
    size_t n = 0;
    struct store_match m = {
        .expr = "\"description\"",
        .id_lo = INT64_MIN,
        .id_hi = INT64_MAX,
        .deadline_ms = clock_mono_ms() - 1,
    };

    err_clear(&err);
    for (int b = 0; b < N / BATCH; b++) {
        for (int i = 0; i < BATCH; i++) {
            snprintf(urls[b * BATCH + i], sizeof urls[0], "https://many.test/%d", b * BATCH + i);
            a[i] = make_article(urls[b * BATCH + i], T0 + b * BATCH + i, "many");
        }
        assert_int_equal(store_articles_put(f->s, a, BATCH, NULL, &err), 0);
    }
    assert_int_equal(store_reader_open(&r, f->db, &err), 0);
    assert_int_equal(store_reader_match_count(r, &m, &total, &err), ERR_TIMEOUT);
    assert_int_equal(store_reader_match_ids(r, &m, STORE_MATCH_RELEVANCE, 0, 4, ids, &n, &err),
                     ERR_TIMEOUT);
    /* The budget went with the search: the next one on the reader runs. */
    m.deadline_ms = 0;
    assert_int_equal(store_reader_match_count(r, &m, &total, &err), 0);
    assert_int_equal(total, N);
    m.deadline_ms = clock_mono_ms() + 60000;
    assert_int_equal(store_reader_match_ids(r, &m, STORE_MATCH_RELEVANCE, 0, 4, ids, &n, &err), 0);
    assert_int_equal(n, 4);
    store_reader_close(r);
}

static void a_new_store_gives_deleted_space_back(void **state)
{
    struct fixture *f = *state;
    struct err err;
    bool incremental = false;
    int64_t n = 0, left = -1;
    char url[64], *body = malloc(20000);
    assert_non_null(body);
    memset(body, 'x', 19999);
    body[19999] = '\0';
    err_clear(&err);
    assert_int_equal(store_space_incremental(f->s, &incremental, &err), 0);
    assert_true(incremental);
    assert_int_equal(sql_int(f->db, "PRAGMA auto_vacuum", NULL), 2);
    for (int i = 0; i < 200; i++) {
        snprintf(url, sizeof url, "https://big.test/%d", i);
        struct article a = make_article(url, T0 + i, "big");
        a.content = body;
        assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    }
    int64_t pages = sql_int(f->db, "PRAGMA page_count", NULL);
    struct store_delete_filter all = {0};
    assert_int_equal(store_articles_delete(f->s, &all, 1000, &n, &err), 0);
    assert_int_equal(n, 200);
    assert_true(sql_int(f->db, "PRAGMA freelist_count", NULL) > 0);
    assert_int_equal(store_space_release(f->s, 1000000, &left, &err), 0);
    assert_int_equal(left, 0);
    assert_true(sql_int(f->db, "PRAGMA page_count", NULL) < pages / 4);
    free(body);
}

/* --- sources -------------------------------------------------------------- */

static void sources_are_listed_in_byte_order_and_filtered_case_insensitively(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena ar;
    struct source *out;
    size_t n;
    const struct source src[] = {
        {"b", "B", "desc b", "https://b.test", "business", "en", "us", true, 0.5},
        {"\xc3\xa4rzte", "Ä", NULL, NULL, "health", "de", "de", true, 0},
        {"a-b", "A-B", NULL, NULL, "Business", "EN", "GB", true, 1},
        {"B", "Upper B", NULL, NULL, "sports", "en", "us", false, 0},
        {"a", "A", NULL, NULL, "general", "se", "se", true, 2.5},
    };
    arena_init(&ar, 0);
    err_clear(&err);
    assert_int_equal(store_sources_put(f->s, src, 5, &err), 0);

    assert_int_equal(store_sources_list(f->s, &ar, NULL, &out, &n, &err), 0);
    assert_int_equal(n, 5);
    const char *order[] = {"B", "a", "a-b", "b", "\xc3\xa4rzte"};
    for (size_t i = 0; i < n; i++)
        assert_string_equal(out[i].id, order[i]);
    assert_string_equal(out[3].description, "desc b");
    assert_string_equal(out[3].url, "https://b.test");
    assert_null(out[0].description);
    assert_true(out[1].popularity > 2.4 && out[1].popularity < 2.6);
    assert_false(out[0].headlines);
    assert_true(out[1].headlines);

    struct source_filter fl = {.category = "BUSINESS"};
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].id, "a-b");
    assert_string_equal(out[1].id, "b");

    fl = (struct source_filter){.language = "en", .country = "us"};
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].id, "B");
    assert_string_equal(out[1].id, "b");

    fl.headlines_only = true;
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].id, "b");

    /* Values are stored verbatim: "se" is not rewritten. */
    fl = (struct source_filter){.language = "se"};
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].language, "se");

    fl = (struct source_filter){.country = "zz"};
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 0);

    /* Putting again replaces by id. The lookup's statement is kept on its
     * read connection between calls (db.h STORE_SQLITE_KEPT): it reads
     * each call's own id, and no read of it outlives the call (the put
     * between two lookups is seen). */
    struct source one;
    assert_int_equal(store_source_get(f->s, &ar, "b", &one, &err), 0);
    assert_string_equal(one.name, "B");
    assert_int_equal(store_source_get(f->s, &ar, "a", &one, &err), 0);
    assert_string_equal(one.name, "A");
    struct source again = {"b", "B2", NULL, NULL, "science", "fr", "fr", false, 0.1};
    assert_int_equal(store_sources_put(f->s, &again, 1, &err), 0);
    assert_int_equal(store_source_get(f->s, &ar, "b", &one, &err), 0);
    assert_string_equal(one.name, "B2");
    assert_string_equal(one.category, "science");
    assert_false(one.headlines);
    assert_int_equal(store_source_get(f->s, &ar, "nope", &one, &err), ERR_NOTFOUND);
    assert_int_equal(store_source_get(f->s, &ar, "B", NULL, &err), 0);
    assert_int_equal(store_source_get(f->s, &ar, "A", NULL, &err), ERR_NOTFOUND);

    struct source bad = {NULL, "no id", NULL, NULL, NULL, NULL, NULL, false, 0};
    assert_int_equal(store_sources_put(f->s, &bad, 1, &err), ERR_INVALID);
    arena_release(&ar);
}

static void ensure_registers_unknown_sources_as_non_headline_entries(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena ar;
    struct source *out, one;
    size_t n;
    const struct source known = {"known", "Known", NULL, NULL, "general", "en", "us", true, 1};
    const char *ids[] = {"known", "new-one", NULL, "new-two"};
    const char *names[] = {"Renamed?", "New One", "x", NULL};

    arena_init(&ar, 0);
    err_clear(&err);
    assert_int_equal(store_sources_put(f->s, &known, 1, &err), 0);
    assert_int_equal(store_sources_ensure(f->s, ids, names, 4, &err), 0);
    assert_int_equal(store_sources_list(f->s, &ar, NULL, &out, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(store_source_get(f->s, &ar, "known", &one, &err), 0);
    assert_string_equal(one.name, "Known"); /* known ids are left alone */
    assert_true(one.headlines);
    assert_int_equal(store_source_get(f->s, &ar, "new-one", &one, &err), 0);
    assert_string_equal(one.name, "New One");
    assert_false(one.headlines);
    assert_int_equal(store_source_get(f->s, &ar, "new-two", &one, &err), 0);
    assert_null(one.name);

    struct source_filter fl = {.headlines_only = true};
    assert_int_equal(store_sources_list(f->s, &ar, &fl, &out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].id, "known");
    /* names may be NULL as a whole. */
    const char *more[] = {"third"};
    assert_int_equal(store_sources_ensure(f->s, more, NULL, 1, &err), 0);
    assert_int_equal(store_source_get(f->s, &ar, "third", NULL, &err), 0);
    arena_release(&ar);
}

/* --- keys and usage ------------------------------------------------------- */

static struct key_record make_key(unsigned char fill, const char *name, const char *plan)
{
    struct key_record k;
    memset(&k, 0, sizeof k);
    memset(k.hash, fill, sizeof k.hash);
    k.name = name;
    k.plan = plan;
    k.state = KEY_ACTIVE;
    k.created_at = T0;
    return k;
}

static void keys_can_be_inserted_found_listed_updated_and_deleted(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena ar;
    struct key_record k1 = make_key(0x11, "alice", "developer"),
                      k2 = make_key(0x22, NULL, "unlimited");
    struct key_record got, *list;
    int64_t id1 = 0, id2 = 0;
    size_t n;
    unsigned char missing[32];

    arena_init(&ar, 0);
    err_clear(&err);
    assert_int_equal(store_key_insert(f->s, &k1, &id1, &err), 0);
    assert_int_equal(store_key_insert(f->s, &k2, &id2, &err), 0);
    assert_true(id1 > 0 && id2 > id1);
    assert_int_equal(store_key_insert(f->s, &k1, NULL, &err), ERR_EXISTS);

    assert_int_equal(store_key_find(f->s, &ar, k1.hash, &got, &err), 0);
    assert_int_equal(got.id, id1);
    assert_string_equal(got.name, "alice");
    assert_string_equal(got.plan, "developer");
    assert_int_equal(got.state, KEY_ACTIVE);
    assert_int_equal(got.created_at, T0);
    assert_int_equal(got.last_used, 0);
    assert_memory_equal(got.hash, k1.hash, 32);
    memset(missing, 0x33, sizeof missing);
    assert_int_equal(store_key_find(f->s, &ar, missing, &got, &err), ERR_NOTFOUND);

    assert_int_equal(store_keys_list(f->s, &ar, &list, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(list[0].id, id1);
    assert_int_equal(list[1].id, id2);
    assert_null(list[1].name);

    assert_int_equal(store_key_update(f->s, id1, "business", -1, &err), 0);
    assert_int_equal(store_key_update(f->s, id1, NULL, KEY_DISABLED, &err), 0);
    assert_int_equal(store_key_find(f->s, &ar, k1.hash, &got, &err), 0);
    assert_string_equal(got.plan, "business");
    assert_int_equal(got.state, KEY_DISABLED);
    assert_int_equal(store_key_update(f->s, id1, NULL, KEY_ACTIVE, &err), 0);
    assert_int_equal(store_key_find(f->s, &ar, k1.hash, &got, &err), 0);
    assert_int_equal(got.state, KEY_ACTIVE);
    assert_string_equal(got.plan, "business");
    assert_int_equal(store_key_update(f->s, id2 + 100, "x", -1, &err), ERR_NOTFOUND);
    assert_int_equal(store_key_update(f->s, id1, NULL, 7, &err), ERR_INVALID);

    assert_int_equal(store_key_delete(f->s, id1, &err), 0);
    assert_int_equal(store_key_delete(f->s, id1, &err), ERR_NOTFOUND);
    assert_int_equal(store_key_find(f->s, &ar, k1.hash, &got, &err), ERR_NOTFOUND);
    assert_int_equal(store_keys_list(f->s, &ar, &list, &n, &err), 0);
    assert_int_equal(n, 1);
    arena_release(&ar);
}

/* Issue 23 item 6: SQLite gave the highest deleted rowid out again, and
 * the new key inherited the deleted key's usage (apiKeyExhausted on its
 * first request), open streams and log identity. */
static void key_ids_are_never_reused_after_a_delete(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct key_record a = make_key(0x61, "a", "developer"), b = make_key(0x62, "b", "developer"),
                      c = make_key(0x63, "c", "developer");
    int64_t ida = 0, idb = 0, idc = 0, sum = -1;
    const int64_t day = T0 / 86400;

    err_clear(&err);
    assert_int_equal(store_key_insert(f->s, &a, &ida, &err), 0);
    assert_int_equal(store_key_insert(f->s, &b, &idb, &err), 0);
    assert_int_equal(store_key_delete(f->s, idb, &err), 0);
    /* a count that arrives late for the deleted key */
    assert_int_equal(store_usage_add(f->s, idb, day, 5, T0, &err), 0);
    assert_int_equal(store_key_insert(f->s, &c, &idc, &err), 0);
    assert_true(idc > idb);
    assert_int_equal(store_usage_sum(f->s, idc, day, day, &sum, &err), 0);
    assert_int_equal(sum, 0);
    /* the same with every key gone, and across a reopen */
    assert_int_equal(store_key_delete(f->s, ida, &err), 0);
    assert_int_equal(store_key_delete(f->s, idc, &err), 0);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    int64_t idd = 0;
    assert_int_equal(store_key_insert(f->s, &b, &idd, &err), 0);
    assert_true(idd > idc);
}

/* A store of schema version 6 (keys without AUTOINCREMENT) is migrated
 * with its keys' ids, usage and alerts kept, and no id is reused after. */
static void a_version_6_store_is_migrated_keeping_its_keys_usage_and_alerts(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct key_record a = make_key(0x71, "a", "developer"), b = make_key(0x72, "b", "developer"),
                      c = make_key(0x73, "c", "developer");
    int64_t ida = 0, idb = 0, idc = 0, sum = -1;
    const int64_t day = T0 / 86400;
    char sql[128];

    err_clear(&err);
    assert_int_equal(store_key_insert(f->s, &a, &ida, &err), 0);
    assert_int_equal(store_key_insert(f->s, &b, &idb, &err), 0);
    assert_int_equal(store_usage_add(f->s, idb, day, 7, T0, &err), 0);
    store_close(f->s);
    f->s = NULL;
    /* Back to version 6's keys table (plain sqlite3: foreign keys off). */
    sql_exec(f->db,
             "CREATE TABLE k6 AS SELECT * FROM keys; DROP TABLE keys;"
             "CREATE TABLE keys(id INTEGER PRIMARY KEY, hash BLOB UNIQUE NOT NULL, name TEXT,"
             " plan TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0,"
             " created_at INTEGER NOT NULL DEFAULT 0, last_used INTEGER NOT NULL DEFAULT 0);"
             "INSERT INTO keys SELECT * FROM k6; DROP TABLE k6;"
             "UPDATE meta SET value = 6 WHERE key = 'schema_version'");
    snprintf(sql, sizeof sql,
             "INSERT INTO alerts(key_id, query, webhook, secret) VALUES (%lld, '{}', 'h', 's')",
             (long long)idb);
    sql_exec(f->db, sql);
    assert_int_equal(sql_int(f->db,
                             "SELECT count(*) FROM sqlite_master WHERE name = 'keys'"
                             " AND sql LIKE '%AUTOINCREMENT%'",
                             NULL),
                     0);
    assert_int_equal(store_open(&f->s, f->store, &err), 0);
    assert_int_equal(sql_int(f->db, "SELECT value FROM meta WHERE key = 'schema_version'", NULL),
                     store_schema_version("sqlite")); /* migrated to the latest */
    assert_int_equal(sql_int(f->db,
                             "SELECT count(*) FROM sqlite_master WHERE name = 'keys'"
                             " AND sql LIKE '%AUTOINCREMENT%'",
                             NULL),
                     1);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM keys", NULL), 2);
    assert_int_equal(store_usage_sum(f->s, idb, day, day, &sum, &err), 0);
    assert_int_equal(sum, 7);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM alerts", NULL), 1);
    /* the foreign keys work again: deleting b takes its usage and alert */
    assert_int_equal(store_key_delete(f->s, idb, &err), 0);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM alerts", NULL), 0);
    assert_int_equal(store_usage_sum(f->s, idb, day, day, &sum, &err), 0);
    assert_int_equal(sum, 0);
    assert_int_equal(store_key_insert(f->s, &c, &idc, &err), 0);
    assert_true(idc > idb);
}

static void alerts_keep_their_cursor_lease_and_deliveries(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct article arts[2] = {make_article("https://x.test/a1", T0, "one"),
                              make_article("https://x.test/a2", T0 + 1, "two")};
    err_clear(&err);
    assert_int_equal(store_articles_put(f->s, arts, 2, NULL, &err), 0);
    store_alerts_scenario(f->s, arts[1].seq);
}

static void usage_adds_up_per_day_and_goes_with_its_key(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena ar;
    struct key_record k = make_key(0x44, "u", "developer"), other = make_key(0x55, "o", "x"), got;
    int64_t id = 0, oid = 0, sum = -1;
    const int64_t day = T0 / 86400;

    arena_init(&ar, 0);
    err_clear(&err);
    assert_int_equal(store_key_insert(f->s, &k, &id, &err), 0);
    assert_int_equal(store_key_insert(f->s, &other, &oid, &err), 0);
    assert_int_equal(store_usage_add(f->s, id, day, 3, T0 + 10, &err), 0);
    assert_int_equal(store_usage_add(f->s, id, day, 4, T0 + 20, &err), 0);
    assert_int_equal(store_usage_add(f->s, id, day + 1, 10, T0 + 86400, &err), 0);
    assert_int_equal(store_usage_add(f->s, id, day - 40, 100, T0 - 40 * 86400, &err), 0);
    assert_int_equal(store_usage_add(f->s, oid, day, 1000, T0, &err), 0);

    assert_int_equal(store_usage_sum(f->s, id, day, day, &sum, &err), 0);
    assert_int_equal(sum, 7);
    assert_int_equal(store_usage_sum(f->s, id, day, day + 1, &sum, &err), 0);
    assert_int_equal(sum, 17);
    assert_int_equal(store_usage_sum(f->s, id, day - 40, day + 1, &sum, &err), 0);
    assert_int_equal(sum, 117);
    assert_int_equal(store_usage_sum(f->s, id, day + 2, day + 9, &sum, &err), 0);
    assert_int_equal(sum, 0);

    /* last_used never goes back. */
    assert_int_equal(store_key_find(f->s, &ar, k.hash, &got, &err), 0);
    assert_int_equal(got.last_used, T0 + 86400);

    assert_int_equal(store_key_delete(f->s, id, &err), 0);
    assert_int_equal(store_usage_sum(f->s, id, day - 40, day + 1, &sum, &err), 0);
    assert_int_equal(sum, 0);
    /* Late counts for a deleted key are dropped, not an error. */
    assert_int_equal(store_usage_add(f->s, id, day, 5, T0, &err), 0);
    assert_int_equal(store_usage_sum(f->s, id, day, day, &sum, &err), 0);
    assert_int_equal(sum, 0);
    assert_int_equal(store_usage_sum(f->s, oid, day, day, &sum, &err), 0);
    assert_int_equal(sum, 1000);
    arena_release(&ar);
}

/* --- concurrency ---------------------------------------------------------- */

struct reader_arg {
    struct store *s;
    int failures;
};

static void *reader_main(void *p)
{
    struct reader_arg *r = p;
    struct arena ar;
    for (int i = 0; i < 50; i++) {
        struct err err;
        struct source *out;
        size_t n;
        int64_t count;
        arena_init(&ar, 0);
        err_clear(&err);
        if (store_sources_list(r->s, &ar, NULL, &out, &n, &err) < 0 || n != 1)
            r->failures++;
        if (store_articles_count(r->s, &count, &err) < 0 || count < 0)
            r->failures++;
        arena_release(&ar);
    }
    return NULL;
}

static void readers_and_a_writer_can_work_at_the_same_time(void **state)
{
    struct fixture *f = *state;
    struct err err;
    pthread_t th[4];
    struct reader_arg args[4];
    const struct source src = {"s", "S", NULL, NULL, NULL, NULL, NULL, true, 0};
    char urls[40][48];

    err_clear(&err);
    assert_int_equal(store_sources_put(f->s, &src, 1, &err), 0);
    for (int i = 0; i < 4; i++) {
        args[i] = (struct reader_arg){f->s, 0};
        assert_int_equal(pthread_create(&th[i], NULL, reader_main, &args[i]), 0);
    }
    for (int i = 0; i < 40; i++) {
        snprintf(urls[i], sizeof urls[i], "https://x.test/c%d", i);
        struct article a = make_article(urls[i], T0 + i % 3, "concurrent");
        assert_int_equal(store_articles_put(f->s, &a, 1, NULL, &err), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(count_articles(f->s), 40);
}

static void passwords_are_redacted_from_shown_locations(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(
        store_location_redacted("postgresql://newsd:s3cret@db.example:5432/newsd", buf, sizeof buf),
        "postgresql://newsd:***@db.example:5432/newsd");
    assert_string_equal(
        store_location_redacted("postgres://db/newsd?user=a&password=p%40ss&x=1", buf, sizeof buf),
        "postgres://db/newsd?user=a&password=***&x=1");
    assert_string_equal(store_location_redacted("postgresql://newsd@db/newsd", buf, sizeof buf),
                        "postgresql://newsd@db/newsd");
    /* An '@' in the path is not a user part. */
    assert_string_equal(store_location_redacted("postgresql://db/a:b@c", buf, sizeof buf),
                        "postgresql://db/a:b@c");
    assert_string_equal(store_location_redacted("/var/lib/newsd", buf, sizeof buf),
                        "/var/lib/newsd");
    char tiny[8];
    assert_string_equal(store_location_redacted("postgresql://u:p@h", tiny, sizeof tiny),
                        "postgre");
    assert_null(strstr(store_location_redacted("postgresql://u:pw@h", buf, sizeof buf), "pw"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            opening_creates_a_private_directory_and_reopening_keeps_the_data, setup, teardown),
        cmocka_unit_test_setup_teardown(the_schema_is_versioned_and_migrations_are_idempotent,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_store_written_by_a_newer_version_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(an_older_store_is_migrated_only_when_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bad_locations_fail_cleanly, setup, teardown),
        cmocka_unit_test_setup_teardown(the_row_count_follows_every_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(a_new_store_is_private_whatever_the_umask, setup, teardown),
        cmocka_unit_test_setup_teardown(
            putting_the_same_url_twice_replaces_the_article_flags_included, setup, teardown),
        cmocka_unit_test_setup_teardown(the_same_url_twice_in_one_batch_keeps_the_later_one, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(ids_are_time_ordered_and_unique_within_a_second, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_ingest_sequence_grows_with_every_insert_and_update,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(an_invalid_article_rolls_back_the_whole_batch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(null_fields_are_stored_as_null, setup, teardown),
        cmocka_unit_test_setup_teardown(
            sources_are_listed_in_byte_order_and_filtered_case_insensitively, setup, teardown),
        cmocka_unit_test_setup_teardown(ensure_registers_unknown_sources_as_non_headline_entries,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(key_ids_are_never_reused_after_a_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_version_6_store_is_migrated_keeping_its_keys_usage_and_alerts, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_can_be_inserted_found_listed_updated_and_deleted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(alerts_keep_their_cursor_lease_and_deliveries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(usage_adds_up_per_day_and_goes_with_its_key, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(readers_and_a_writer_can_work_at_the_same_time, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(deletes_go_oldest_first_and_are_in_the_log_by_seq, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_new_store_gives_deleted_space_back, setup, teardown),
        cmocka_unit_test_setup_teardown(each_article_comes_in_the_order_asked_dense_sparse_or_any,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_scan_reader_reads_what_a_reader_reads_through_a_map,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_full_text_side_counts_and_pages_matches_in_each_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_spent_deadline_stops_a_match_and_the_reader_goes_on,
                                        setup, teardown),
        cmocka_unit_test(passwords_are_redacted_from_shown_locations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
