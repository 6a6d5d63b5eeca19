/* API keys and their usage in the embedded store. Only the SHA-256 of a key
 * is stored; usage rows go when their key is deleted (ON DELETE CASCADE). */
#include "store/sqlite/internal.h"

#include <string.h>

#include "util/banned.h"

#define KEY_COLUMNS "id, hash, name, plan, state, created_at, last_used"

int store_sqlite_key_insert(struct store_backend *b, const struct key_record *k, int64_t *id_out,
                            struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO keys(hash, name, plan, state, created_at, last_used)"
                              " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                              &st, err);
    if (rc < 0)
        goto out;
    sqlite3_bind_blob(st, 1, k->hash, sizeof k->hash, SQLITE_STATIC);
    store_sqlite_bind_text(st, 2, k->name);
    store_sqlite_bind_text(st, 3, k->plan);
    sqlite3_bind_int(st, 4, k->state);
    sqlite3_bind_int64(st, 5, k->created_at);
    sqlite3_bind_int64(st, 6, k->last_used);
    rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT_UNIQUE) {
        rc = err_set(err, ERR_EXISTS, "a key with this hash already exists");
    } else if (rc != SQLITE_DONE) {
        rc = store_sqlite_fail(s->writer, rc, err);
    } else {
        rc = 0;
        if (id_out)
            *id_out = sqlite3_last_insert_rowid(s->writer);
    }
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

/* The current row (KEY_COLUMNS) into *out. */
static int key_row(struct arena *a, sqlite3_stmt *st, struct key_record *out)
{
    const void *hash;
    int rc;

    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    hash = sqlite3_column_blob(st, 1);
    if (hash && sqlite3_column_bytes(st, 1) == (int)sizeof out->hash)
        memcpy(out->hash, hash, sizeof out->hash);
    rc = store_sqlite_column_dup(a, st, 2, &out->name);
    if (rc == 0)
        rc = store_sqlite_column_dup(a, st, 3, &out->plan);
    out->state = sqlite3_column_int(st, 4);
    out->created_at = sqlite3_column_int64(st, 5);
    out->last_used = sqlite3_column_int64(st, 6);
    return rc;
}

static int key_row_any(struct arena *a, sqlite3_stmt *st, void *out)
{
    return key_row(a, st, out);
}

int store_sqlite_key_find(struct store_backend *b, struct arena *a, const unsigned char hash[32],
                          struct key_record *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_pool_get(&s->readers, &db, err)) < 0)
        goto out;
    rc = store_sqlite_prepare(db, "SELECT " KEY_COLUMNS " FROM keys WHERE hash = ?1", &st, err);
    if (rc < 0)
        goto out;
    sqlite3_bind_blob(st, 1, hash, 32, SQLITE_STATIC);
    rc = store_sqlite_one(db, st, a, key_row_any, out, "no such key", err);
out:
    sqlite3_finalize(st);
    store_sqlite_pool_put(&s->readers, db);
    return rc;
}

int store_sqlite_keys_list(struct store_backend *b, struct arena *a, struct key_record **out,
                           size_t *n_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    void *items = NULL;
    int rc;

    if ((rc = store_sqlite_pool_get(&s->readers, &db, err)) < 0)
        goto out;
    if ((rc = store_sqlite_prepare(db, "SELECT " KEY_COLUMNS " FROM keys ORDER BY id", &st, err)) <
        0)
        goto out;
    if ((rc = store_sqlite_collect(db, st, a, sizeof **out, key_row_any, &items, n_out, "keys",
                                   err)) == 0)
        *out = items;
out:
    sqlite3_finalize(st);
    store_sqlite_pool_put(&s->readers, db);
    return rc;
}

/* Run a one-row write on the writer; ERR_NOTFOUND when it changed nothing. */
static int write_one(struct store_sqlite *s, sqlite3_stmt *st, struct err *err)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return store_sqlite_fail(s->writer, rc, err);
    if (sqlite3_changes(s->writer) == 0)
        return err_set(err, ERR_NOTFOUND, "no such key");
    return 0;
}

int store_sqlite_key_update(struct store_backend *b, int64_t id, const char *plan, int state,
                            struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    rc = store_sqlite_prepare(s->writer,
                              "UPDATE keys SET plan = coalesce(?2, plan),"
                              " state = CASE WHEN ?3 < 0 THEN state ELSE ?3 END WHERE id = ?1",
                              &st, err);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    store_sqlite_bind_text(st, 2, plan);
    sqlite3_bind_int(st, 3, state);
    rc = write_one(s, st, err);
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_key_delete(struct store_backend *b, int64_t id, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *st = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    if ((rc = store_sqlite_prepare(s->writer, "DELETE FROM keys WHERE id = ?1", &st, err)) < 0)
        goto out;
    sqlite3_bind_int64(st, 1, id);
    rc = write_one(s, st, err);
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

/* Counts of a key deleted meanwhile are dropped (returns 0): there is
 * nothing left to charge, and a flush must not retry them for ever. */
int store_sqlite_usage_add(struct store_backend *b, int64_t key_id, int64_t day, int64_t n,
                           int64_t last_used, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3_stmt *touch = NULL, *add = NULL;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    if ((rc = store_sqlite_begin(s, err)) < 0)
        goto unlock;
    rc = store_sqlite_prepare(
        s->writer, "UPDATE keys SET last_used = max(last_used, ?2) WHERE id = ?1", &touch, err);
    if (rc < 0)
        goto end;
    sqlite3_bind_int64(touch, 1, key_id);
    sqlite3_bind_int64(touch, 2, last_used);
    rc = write_one(s, touch, err);
    if (rc == ERR_NOTFOUND) {
        rc = 0;
        goto end;
    }
    if (rc < 0)
        goto end;
    rc = store_sqlite_prepare(s->writer,
                              "INSERT INTO usage(key_id, day, n) VALUES (?1, ?2, ?3)"
                              " ON CONFLICT(key_id, day) DO UPDATE SET n = n + excluded.n",
                              &add, err);
    if (rc < 0)
        goto end;
    sqlite3_bind_int64(add, 1, key_id);
    sqlite3_bind_int64(add, 2, day);
    sqlite3_bind_int64(add, 3, n);
    rc = sqlite3_step(add);
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(s->writer, rc, err);
end:
    sqlite3_finalize(touch);
    sqlite3_finalize(add);
    rc = store_sqlite_end(s, rc, err);
unlock:
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_usage_sum(struct store_backend *b, int64_t key_id, int64_t day_from,
                           int64_t day_to, int64_t *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    *out = 0;
    if ((rc = store_sqlite_pool_get(&s->readers, &db, err)) < 0)
        goto out;
    rc = store_sqlite_prepare(db,
                              "SELECT coalesce(sum(n), 0) FROM usage"
                              " WHERE key_id = ?1 AND day BETWEEN ?2 AND ?3",
                              &st, err);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, day_from);
    sqlite3_bind_int64(st, 3, day_to);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    } else {
        rc = store_sqlite_fail(db, rc, err);
    }
out:
    sqlite3_finalize(st);
    store_sqlite_pool_put(&s->readers, db);
    return rc;
}
