/* API keys and their usage in the embedded store. Only the SHA-256 of a key
 * is stored; usage rows go when their key is deleted (ON DELETE CASCADE). */
#include "store/sqlite/internal.h"

#include <string.h>

#include "store/columns.h"

#include "util/banned.h"

int store_sqlite_key_insert(struct store_backend *b, const struct key_record *k, int64_t *id_out,
                            struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int rc;

    pthread_mutex_lock(&s->write_lock);
    rc = store_sqlite_write(s->writer,
                            "INSERT INTO keys(hash, name, plan, state, created_at, last_used)"
                            " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            STORE_ARGS(STORE_BLOB(k->hash, sizeof k->hash), STORE_TEXT(k->name),
                                       STORE_TEXT(k->plan), STORE_INT(k->state),
                                       STORE_INT(k->created_at), STORE_INT(k->last_used)),
                            NULL, err);
    if (rc == ERR_EXISTS)
        rc = err_set(err, ERR_EXISTS, "a key with this hash already exists");
    else if (rc == 0 && id_out)
        *id_out = sqlite3_last_insert_rowid(s->writer);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_key_find(struct store_backend *b, struct arena *a, const unsigned char hash[32],
                          struct key_record *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    /* Kept: asked on every request whose key is not in auth's cache, so
     * on every request with an unknown key (one that sprays them pays no
     * statement parse each). */
    return store_sqlite_read_one(
        &s->readers, STORE_SQLITE_KEPT "SELECT " STORE_KEY_COLUMNS " FROM keys WHERE hash = ?1",
        STORE_ARGS(STORE_BLOB(hash, 32)), a, &store_key_record, out, "no such key", err);
}

int store_sqlite_keys_list(struct store_backend *b, struct arena *a, struct key_record **out,
                           size_t *n_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_all(&s->readers, "SELECT " STORE_KEY_COLUMNS " FROM keys ORDER BY id",
                                 NULL, 0, a, &store_key_record, out, n_out, err);
}

/* Run sql with args on the writer; ERR_NOTFOUND when it changed no key. */
static int write_key(struct store_sqlite *s, const char *sql, const struct store_arg *args,
                     size_t n, struct err *err)
{
    int changes = 0;
    int rc = store_sqlite_write(s->writer, sql, args, n, &changes, err);
    if (rc == 0 && changes == 0)
        rc = err_set(err, ERR_NOTFOUND, "no such key");
    return rc;
}

int store_sqlite_key_update(struct store_backend *b, int64_t id, const char *plan, int state,
                            struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    pthread_mutex_lock(&s->write_lock);
    int rc = write_key(s,
                       "UPDATE keys SET plan = coalesce(?2, plan),"
                       " state = CASE WHEN ?3 < 0 THEN state ELSE ?3 END WHERE id = ?1",
                       STORE_ARGS(STORE_INT(id), STORE_TEXT(plan), STORE_INT(state)), err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_key_delete(struct store_backend *b, int64_t id, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    pthread_mutex_lock(&s->write_lock);
    int rc = write_key(s, "DELETE FROM keys WHERE id = ?1", STORE_ARGS(STORE_INT(id)), err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

/* Counts of a key deleted meanwhile are dropped (returns 0): there is
 * nothing left to charge, and a flush must not retry them for ever. */
int store_sqlite_usage_add(struct store_backend *b, int64_t key_id, int64_t day, int64_t n,
                           int64_t last_used, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    rc = write_key(s, "UPDATE keys SET last_used = max(last_used, ?2) WHERE id = ?1",
                   STORE_ARGS(STORE_INT(key_id), STORE_INT(last_used)), err);
    if (rc == ERR_NOTFOUND) {
        rc = 0;
        goto end;
    }
    if (rc < 0)
        goto end;
    rc = store_sqlite_write(s->writer,
                            "INSERT INTO usage(key_id, day, n) VALUES (?1, ?2, ?3)"
                            " ON CONFLICT(key_id, day) DO UPDATE SET n = n + excluded.n",
                            STORE_ARGS(STORE_INT(key_id), STORE_INT(day), STORE_INT(n)), NULL, err);
end:
    rc = store_sqlite_write_end(s, rc, err);
    return rc;
}

int store_sqlite_usage_sum(struct store_backend *b, int64_t key_id, int64_t day_from,
                           int64_t day_to, int64_t *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_int(
        &s->readers,
        "SELECT coalesce(sum(n), 0) FROM usage"
        " WHERE key_id = ?1 AND day BETWEEN ?2 AND ?3",
        STORE_ARGS(STORE_INT(key_id), STORE_INT(day_from), STORE_INT(day_to)), out, err);
}
