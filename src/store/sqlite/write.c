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
