/* store/sqlite/db.h's single statements on a real SQLite file: every kind
 * of argument reaches its placeholder, writes count their changes and tell
 * a UNIQUE conflict apart, reads give one row, every row or one integer
 * through the read pool, and a missing row is ERR_NOTFOUND. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_tmpdir.h"

#include "store/columns.h"
#include "store/sqlite/db.h"
#include "util/arena.h"
#include "util/err.h"

struct fixture {
    char dir[64];
    char path[96];
    sqlite3 *db; /* read-write, like the store's writer */
    struct store_sqlite_pool readers;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-rows-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    assert_int_equal(store_sqlite_conn_open(&f->db, f->path, false, &err), 0);
    assert_int_equal(store_sqlite_exec(f->db,
                                       "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE,"
                                       " code TEXT, score REAL, raw BLOB, note TEXT)",
                                       &err),
                     0);
    assert_int_equal(store_sqlite_pool_init(&f->readers, f->path, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_sqlite_pool_release(&f->readers);
    store_sqlite_conn_close(f->db);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* A record read through a store/columns.h table: every kind of column. */
struct row {
    int64_t id;
    const char *name, *code, *note, *raw_hex;
    double score;
    int raw_len;
    char code2[3];
    bool positive;
    unsigned char hash[32];
};

static const struct store_col row_cols[] = {
    STORE_COL(I64, struct row, id),        STORE_COL(STR, struct row, name),
    STORE_COL(STR, struct row, code),      STORE_COL(DOUBLE, struct row, score),
    STORE_COL(STR, struct row, raw_hex),   STORE_COL(INT, struct row, raw_len),
    STORE_COL(STR, struct row, note),      STORE_COL(CODE, struct row, code2),
    STORE_COL(BOOL, struct row, positive), STORE_COL(HASH, struct row, hash),
};
static const struct store_record row_record = STORE_RECORD(struct row, row_cols, "rows");

#define INSERT "INSERT INTO t(id, name, code, score, raw, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
#define SELECT                                                                                     \
    "SELECT id, name, code, score, hex(raw), length(raw), note, code, score > 0,"                  \
    " CASE WHEN length(raw) = 3 THEN zeroblob(31) || x'07' END FROM t"

static void every_kind_of_argument_reaches_its_placeholder(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena a;
    arena_init(&a, 0);
    const unsigned char raw[3] = {0x00, 0xFF, 0x10};
    const char code[3] = "gb", empty[3] = "";
    int changes = -1;
    assert_int_equal(store_sqlite_write(f->db, INSERT,
                                        STORE_ARGS(STORE_INT(INT64_C(1) << 40), STORE_TEXT("alpha"),
                                                   STORE_CODE(code), STORE_DOUBLE(2.5),
                                                   STORE_BLOB(raw, sizeof raw), STORE_TEXT(NULL)),
                                        &changes, &err),
                     0);
    assert_int_equal(changes, 1);
    assert_int_equal(
        store_sqlite_write(f->db, INSERT,
                           STORE_ARGS(STORE_INT(7), STORE_TEXT("beta"), STORE_CODE(empty),
                                      STORE_DOUBLE(-1), STORE_BLOB(raw, 1), STORE_TEXT("n")),
                           NULL, &err),
        0);

    struct row r;
    memset(&r, 0, sizeof r);
    assert_int_equal(store_sqlite_read_one(&f->readers, SELECT " WHERE name = ?1",
                                           STORE_ARGS(STORE_TEXT("alpha")), &a, &row_record, &r,
                                           "none", &err),
                     0);
    assert_true(r.id == (INT64_C(1) << 40));
    assert_string_equal(r.name, "alpha");
    assert_string_equal(r.code, "gb");
    assert_string_equal(r.code2, "gb");
    assert_true(r.score == 2.5);
    assert_true(r.positive);
    assert_int_equal(r.raw_len, 3);
    assert_string_equal(r.raw_hex, "00FF10");
    assert_int_equal(r.hash[31], 7); /* a 32-byte blob is a hash */
    assert_null(r.note);
    int64_t nulls = -1; /* NULL text is SQL NULL */
    assert_int_equal(store_sqlite_read_int(&f->readers, "SELECT count(*) FROM t WHERE note IS NULL",
                                           NULL, 0, &nulls, &err),
                     0);
    assert_int_equal(nulls, 1);

    memset(&r, 0, sizeof r);
    assert_int_equal(store_sqlite_read_one(&f->readers, SELECT " WHERE id = ?1",
                                           STORE_ARGS(STORE_INT(7)), &a, &row_record, &r, "none",
                                           &err),
                     0);
    assert_string_equal(r.code, ""); /* an empty code is '', not NULL */
    assert_string_equal(r.code2, "");
    assert_false(r.positive);
    assert_int_equal(r.raw_len, 1);
    assert_int_equal(r.hash[31], 0); /* NULL is no hash */
    assert_string_equal(r.note, "n");
    arena_release(&a);
}

static void writes_count_changes_and_name_a_unique_conflict(void **state)
{
    struct fixture *f = *state;
    struct err err;
    for (int i = 1; i <= 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        assert_int_equal(store_sqlite_write(f->db, "INSERT INTO t(id, name) VALUES (?1, ?2)",
                                            STORE_ARGS(STORE_INT(i), STORE_TEXT(name)), NULL, &err),
                         0);
    }
    int changes = -1;
    assert_int_equal(store_sqlite_write(f->db, "UPDATE t SET score = ?1 WHERE id >= ?2",
                                        STORE_ARGS(STORE_DOUBLE(1), STORE_INT(2)), &changes, &err),
                     0);
    assert_int_equal(changes, 2);
    assert_int_equal(store_sqlite_write(f->db, "DELETE FROM t WHERE id = ?1",
                                        STORE_ARGS(STORE_INT(99)), &changes, &err),
                     0);
    assert_int_equal(changes, 0);
    /* The same name again: a UNIQUE conflict, which the caller words. */
    assert_int_equal(store_sqlite_write(f->db, "INSERT INTO t(id, name) VALUES (?1, ?2)",
                                        STORE_ARGS(STORE_INT(4), STORE_TEXT("n1")), NULL, &err),
                     ERR_EXISTS);
    /* Other failures are store errors. */
    assert_int_equal(store_sqlite_write(f->db, "INSERT INTO t(id, name) VALUES (?1, ?2)",
                                        STORE_ARGS(STORE_INT(1), STORE_TEXT("other")), NULL, &err),
                     ERR_STORE); /* the primary key, not a UNIQUE column */
    assert_int_equal(
        store_sqlite_write(f->db, "INSERT INTO nowhere VALUES (1)", NULL, 0, NULL, &err),
        ERR_STORE);
}

static void reads_give_every_row_one_integer_or_not_found(void **state)
{
    struct fixture *f = *state;
    struct err err;
    struct arena a;
    arena_init(&a, 0);
    int64_t n = -1;
    assert_int_equal(store_sqlite_read_int(&f->readers, "SELECT max(id) FROM t", NULL, 0, &n, &err),
                     0);
    assert_int_equal(n, 0); /* NULL reads as 0 */
    for (int i = 0; i < 40; i++)
        assert_int_equal(store_sqlite_write(f->db, "INSERT INTO t(id, score) VALUES (?1, ?2)",
                                            STORE_ARGS(STORE_INT(100 - i), STORE_DOUBLE(i)), NULL,
                                            &err),
                         0);
    assert_int_equal(store_sqlite_read_int(&f->readers, "SELECT count(*) FROM t WHERE id > ?1",
                                           STORE_ARGS(STORE_INT(90)), &n, &err),
                     0);
    assert_int_equal(n, 10);

    void *items = NULL;
    size_t count = 0;
    assert_int_equal(store_sqlite_read_all(&f->readers, SELECT " WHERE id <= ?1 ORDER BY id",
                                           STORE_ARGS(STORE_INT(80)), &a, &row_record, &items,
                                           &count, &err),
                     0);
    assert_int_equal(count, 20); /* ids 61..100 were written */
    struct row *rows = items;
    for (size_t i = 0; i < count; i++)
        assert_int_equal(rows[i].id, 61 + (int64_t)i);

    struct row r;
    assert_int_equal(store_sqlite_read_one(&f->readers, SELECT " WHERE id = ?1",
                                           STORE_ARGS(STORE_INT(5)), &a, &row_record, &r,
                                           "no row 5", &err),
                     ERR_NOTFOUND);
    assert_string_equal(err.msg, "no row 5");
    /* A row exists: with no item, only that is answered. */
    assert_int_equal(store_sqlite_read_one(&f->readers, SELECT " WHERE id = ?1",
                                           STORE_ARGS(STORE_INT(70)), &a, &row_record, NULL, "none",
                                           &err),
                     0);
    /* Bad SQL fails cleanly and gives the connection back. */
    for (int i = 0; i < STORE_SQLITE_POOL_MAX + 2; i++)
        assert_int_equal(
            store_sqlite_read_int(&f->readers, "SELECT nothing FROM t", NULL, 0, &n, &err),
            ERR_STORE);
    assert_int_equal(f->readers.n_idle, 1); /* the one connection, back each time */
    arena_release(&a);
}

static void step_done_resets_for_the_next_binding(void **state)
{
    struct fixture *f = *state;
    struct err err;
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        store_sqlite_prepare(f->db, "INSERT INTO t(id, name) VALUES (?1, ?2)", &st, &err), 0);
    for (int i = 1; i <= 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        assert_int_equal(store_sqlite_bind(st, STORE_ARGS(STORE_INT(i), STORE_TEXT(name))),
                         SQLITE_OK);
        assert_int_equal(store_sqlite_step_done(f->db, st, &err), 0);
    }
    /* A conflicting row fails, and the statement is usable again after. */
    store_sqlite_bind(st, STORE_ARGS(STORE_INT(3), STORE_TEXT("x")));
    assert_int_equal(store_sqlite_step_done(f->db, st, &err), ERR_STORE);
    store_sqlite_bind(st, STORE_ARGS(STORE_INT(6), STORE_TEXT("m6")));
    assert_int_equal(store_sqlite_step_done(f->db, st, &err), 0);
    sqlite3_finalize(st);
    int64_t n = 0;
    assert_int_equal(store_sqlite_query_int(f->db, "SELECT count(*) FROM t", &n, &err), 0);
    assert_int_equal(n, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_kind_of_argument_reaches_its_placeholder, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(writes_count_changes_and_name_a_unique_conflict, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reads_give_every_row_one_integer_or_not_found, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(step_done_resets_for_the_next_binding, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
