/* The writer's transactions (store/sqlite/internal.h): every write of the
 * embedded store goes through the one writer connection under write_lock,
 * one transaction per call. Apart from sqlite.c so that the files of the
 * operations, which sqlite.c's vtable names, call nothing back in it. */
#include "store/sqlite/internal.h"

#include "util/banned.h"

int store_sqlite_begin(struct store_sqlite *s, struct err *err)
{
    return store_sqlite_exec(s->writer, "BEGIN IMMEDIATE", err);
}

int store_sqlite_write_begin(struct store_sqlite *s, struct err *err)
{
    pthread_mutex_lock(&s->write_lock);
    int rc = store_sqlite_begin(s, err);
    if (rc < 0)
        pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_write_end(struct store_sqlite *s, int rc, struct err *err)
{
    rc = store_sqlite_end(s, rc, err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_end(struct store_sqlite *s, int rc, struct err *err)
{
    if (rc == 0) {
        rc = store_sqlite_exec(s->writer, "COMMIT", err);
        if (rc == 0)
            return 0;
    }
    /* A failed COMMIT (e.g. SQLITE_BUSY) leaves the transaction open. */
    if (!sqlite3_get_autocommit(s->writer))
        sqlite3_exec(s->writer, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int store_sqlite_write_begin_with(struct store_sqlite *s, const char *sql,
                                  const struct store_arg *args, size_t n, int *changes,
                                  struct err *err)
{
    int rc = store_sqlite_write_begin(s, err);
    if (rc < 0)
        return rc;
    if ((rc = store_sqlite_write(s->writer, sql, args, n, changes, err)) < 0)
        return store_sqlite_write_end(s, rc, err);
    return 0;
}

int store_sqlite_write_locked(struct store_sqlite *s, const char *sql, const struct store_arg *args,
                              size_t n, int *changes, struct err *err)
{
    pthread_mutex_lock(&s->write_lock);
    int rc = store_sqlite_write(s->writer, sql, args, n, changes, err);
    pthread_mutex_unlock(&s->write_lock);
    return rc;
}

int store_sqlite_write_each(struct store_sqlite *s, const char *sql, size_t n,
                            int (*bind)(sqlite3_stmt *st, size_t i, const void *ctx,
                                        struct err *err),
                            const void *ctx, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    rc = store_sqlite_prepare(s->writer, sql, &st, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = bind(st, i, ctx, err);
        if (rc > 0) { /* nothing to write for this item */
            rc = 0;
            continue;
        }
        if (rc == 0)
            rc = store_sqlite_step_done(s->writer, st, err);
    }
    sqlite3_finalize(st);
    return store_sqlite_write_end(s, rc, err);
}
