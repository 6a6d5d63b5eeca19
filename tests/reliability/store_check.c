/* store_check: does the full-text index of an embedded store agree with its
 * articles table? Used by the crash-safety and disk-full tests, which
 * cannot query articles_fts themselves (it needs the newsd tokenizer).
 *
 *   store_check DB [WORD...] [=TOKEN...]
 *
 * Prints one "name value" line per figure, then "ok" or exits 1:
 *   integrity   FTS5 'integrity-check' (structure of the index): ok or the error
 *   quick_check PRAGMA quick_check of the whole file: ok or the first problem
 *   articles    rows of the articles table
 *   dup_urls    canonical urls held by more than one row (the UNIQUE index
 *               says 0; counted by a scan that does not use it)
 *   fts_rows    rows of the index (the meta term every article carries)
 *   missing     article ids the index does not hold
 *   stale       index rowids without an article (left over from a delete)
 *   word W T N  W: articles whose title holds the word (LIKE) and those the
 *               index finds for it in the title column (MATCH): equal
 *   token T IDS the index rowids of title token T (the tests look them up) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/db.h"

#include "util/banned.h"

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "store_check: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    return 1;
}

/* The single integer a query returns, or -1. */
static long long scalar(sqlite3 *db, const char *sql, const char *bind)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fail(db, sql);
        return -1;
    }
    if (bind)
        sqlite3_bind_text(st, 1, bind, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fail(db, sql);
    sqlite3_finalize(st);
    return v;
}

/* First text row of a statement ("" when none), into out. */
static void text_row(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    snprintf(out, cap, "error");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(out, cap, "%s", sqlite3_errmsg(db));
        return;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, cap, "%s", t ? (const char *)t : "");
    } else if (rc == SQLITE_DONE) {
        snprintf(out, cap, "ok");
    } else {
        snprintf(out, cap, "%s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
}

int main(int argc, char **argv)
{
    sqlite3 *db = NULL;
    struct err err;
    char msg[512];
    int bad = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: store_check DB [WORD...] [=TOKEN...]\n");
        return 2;
    }
    err_clear(&err);
    /* Read-write: integrity-check is an INSERT into the index (it writes
     * nothing). Opening also recovers a WAL left by a killed writer. */
    if (store_sqlite_conn_open(&db, argv[1], false, &err) < 0) {
        fprintf(stderr, "store_check: cannot open %s: %s\n", argv[1], err_msg(&err, -1));
        return 1;
    }

    if (sqlite3_exec(db, "INSERT INTO articles_fts(articles_fts) VALUES('integrity-check')", NULL,
                     NULL, NULL) == SQLITE_OK) {
        printf("integrity ok\n");
    } else {
        printf("integrity %s\n", sqlite3_errmsg(db));
        bad = 1;
    }
    text_row(db, "PRAGMA quick_check", msg, sizeof msg);
    printf("quick_check %s\n", msg);
    bad |= strcmp(msg, "ok") != 0;

    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "BEGIN");
    long long articles = scalar(db, "SELECT count(*) FROM articles", NULL);
    /* NOT INDEXED: count duplicates from the rows, not from the index that
     * forbids them. */
    long long dups = scalar(db,
                            "SELECT count(*) FROM (SELECT canonical_url FROM articles NOT INDEXED"
                            " GROUP BY canonical_url HAVING count(*) > 1)",
                            NULL);
    long long fts_rows =
        scalar(db, "SELECT count(*) FROM articles_fts WHERE articles_fts MATCH 'meta : a'", NULL);
    long long missing = scalar(db,
                               "SELECT count(*) FROM articles WHERE id NOT IN (SELECT rowid FROM"
                               " articles_fts WHERE articles_fts MATCH 'meta : a')",
                               NULL);
    long long stale = scalar(db,
                             "SELECT count(*) FROM articles_fts WHERE articles_fts MATCH 'meta : a'"
                             " AND rowid NOT IN (SELECT id FROM articles)",
                             NULL);
    printf("articles %lld\ndup_urls %lld\nfts_rows %lld\nmissing %lld\nstale %lld\n", articles,
           dups, fts_rows, missing, stale);
    bad |= articles < 0 || dups != 0 || fts_rows != articles || missing != 0 || stale != 0;

    for (int i = 2; i < argc; i++) {
        char match[300];
        if (argv[i][0] == '=') {
            sqlite3_stmt *st = NULL;
            snprintf(match, sizeof match, "title : %s", argv[i] + 1);
            if (sqlite3_prepare_v2(db, "SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?1",
                                   -1, &st, NULL) != SQLITE_OK)
                return fail(db, "token query");
            sqlite3_bind_text(st, 1, match, -1, SQLITE_TRANSIENT);
            printf("token %s", argv[i] + 1);
            while (sqlite3_step(st) == SQLITE_ROW)
                printf(" %lld", (long long)sqlite3_column_int64(st, 0));
            printf("\n");
            sqlite3_finalize(st);
            continue;
        }
        char like[300];
        snprintf(match, sizeof match, "title : %s", argv[i]);
        snprintf(like, sizeof like, "%% %s", argv[i]);
        long long by_table = scalar(db, "SELECT count(*) FROM articles WHERE title LIKE ?1", like);
        long long by_index =
            scalar(db, "SELECT count(*) FROM articles_fts WHERE articles_fts MATCH ?1", match);
        printf("word %s %lld %lld\n", argv[i], by_table, by_index);
        bad |= by_table < 0 || by_table != by_index;
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close_v2(db);
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad;
}
