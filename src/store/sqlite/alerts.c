/* Alerts of the embedded store (store.h "alerts"): the alerts table with
 * each alert's cursor and lease, alert_deliveries, the deliveries waiting
 * for their webhook (schema version 6, sqlite.c), and alert_stories, the
 * stories an alert with dedupe delivered (version 9). Writes take
 * write_lock and one transaction; reads use the read pool. */
#include "store/sqlite/internal.h"

#include <string.h>
#include <time.h>

#include "store/columns.h"

#include "util/banned.h"

int store_sqlite_alert_add(struct store_backend *b, const struct alert_record *r,
                           int64_t max_per_key, int64_t *id_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int64_t created = r->created_at ? r->created_at : (int64_t)time(NULL);
    int64_t n = 0, cursor = r->cursor_seq;
    int rc;

    if ((rc = store_sqlite_write_begin(s, err)) < 0)
        return rc;
    rc = store_sqlite_query_int_args(s->writer, "SELECT count(*) FROM keys WHERE id = ?1",
                                     STORE_ARGS(STORE_INT(r->key_id)), &n, err);
    if (rc == 0 && n == 0)
        rc = err_set(err, ERR_NOTFOUND, "no key has the id %lld", (long long)r->key_id);
    if (rc == 0 && max_per_key > 0)
        rc = store_sqlite_query_int_args(s->writer, "SELECT count(*) FROM alerts WHERE key_id = ?1",
                                         STORE_ARGS(STORE_INT(r->key_id)), &n, err);
    if (rc == 0 && max_per_key > 0 && n >= max_per_key)
        rc = err_set(err, ERR_FULL, "the key has %lld alerts, its plan's limit", (long long)n);
    /* The head: what was committed before this alert is not its to deliver. */
    if (rc == 0 && cursor < 0)
        rc = store_sqlite_query_int(
            s->writer,
            "SELECT max(coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'seq'), 0),"
            " coalesce((SELECT max(seq) FROM articles), 0))",
            &cursor, err);
    if (rc == 0)
        rc = store_sqlite_write(
            s->writer,
            "INSERT INTO alerts(key_id, query, webhook, secret, created_at, cursor_seq, state,"
            " dedupe) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            STORE_ARGS(STORE_INT(r->key_id), STORE_TEXT(r->query), STORE_TEXT(r->webhook),
                       STORE_TEXT(r->secret), STORE_INT(created), STORE_INT(cursor),
                       STORE_INT(r->state), STORE_INT(r->dedupe)),
            NULL, err);
    if (rc == 0 && id_out)
        *id_out = sqlite3_last_insert_rowid(s->writer);
    return store_sqlite_write_end(s, rc, err);
}

int store_sqlite_alerts_list(struct store_backend *b, struct arena *a, int64_t key_id,
                             struct alert_record **out, size_t *n_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_all(&s->readers,
                                 "SELECT " STORE_ALERT_COLUMNS " FROM alerts"
                                 " WHERE ?1 = 0 OR key_id = ?1 ORDER BY id",
                                 STORE_ARGS(STORE_INT(key_id)), a, &store_alert_record, out, n_out,
                                 err);
}

int store_sqlite_alert_remove(struct store_backend *b, int64_t id, int64_t key_id, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int changes = 0;
    int rc = store_sqlite_write_begin_with(
        s, "DELETE FROM alerts WHERE id = ?1 AND (?2 = 0 OR key_id = ?2)",
        STORE_ARGS(STORE_INT(id), STORE_INT(key_id)), &changes, err);
    if (rc < 0)
        return rc;
    if (changes == 0)
        rc = err_set(err, ERR_NOTFOUND, "no alert has the id %lld", (long long)id);
    /* foreign_keys is on, but say it outright: the deliveries go with it. */
    if (rc == 0)
        rc = store_sqlite_write(s->writer, "DELETE FROM alert_deliveries WHERE alert_id = ?1",
                                STORE_ARGS(STORE_INT(id)), NULL, err);
    if (rc == 0)
        rc = store_sqlite_write(s->writer, "DELETE FROM alert_stories WHERE alert_id = ?1",
                                STORE_ARGS(STORE_INT(id)), NULL, err);
    return store_sqlite_write_end(s, rc, err);
}

int store_sqlite_alerts_lease(struct store_backend *b, struct arena *a, const char *owner,
                              int64_t now_ms, int64_t until_ms, struct alert_record **out,
                              size_t *n_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int rc;

    /* One statement: each row is a compare and set under the write lock. */
    rc = store_sqlite_write_locked(
        s,
        "UPDATE alerts SET lease_owner = ?1, lease_until_ms = ?3"
        " WHERE (lease_owner = ?1 AND lease_until_ms <= ?2 + (?3 - ?2) / 2)"
        " OR lease_owner IS NULL OR lease_until_ms <= ?2",
        STORE_ARGS(STORE_TEXT(owner), STORE_INT(now_ms), STORE_INT(until_ms)), NULL, err);
    if (rc < 0)
        return rc;
    /* Ours until until_ms: no other owner can take them before this read. */
    return store_sqlite_read_all(&s->readers,
                                 "SELECT " STORE_ALERT_COLUMNS " FROM alerts WHERE lease_owner = ?1"
                                 " AND key_id IN (SELECT id FROM keys WHERE state = 0) ORDER BY id",
                                 STORE_ARGS(STORE_TEXT(owner)), a, &store_alert_record, out, n_out,
                                 err);
}

int store_sqlite_alerts_release(struct store_backend *b, const char *owner, struct err *err)
{
    return store_sqlite_write_locked(
        (struct store_sqlite *)b,
        "UPDATE alerts SET lease_owner = NULL, lease_until_ms = 0 WHERE lease_owner = ?1",
        STORE_ARGS(STORE_TEXT(owner)), NULL, err);
}

int store_sqlite_alert_advance(struct store_backend *b, int64_t alert_id, const char *owner,
                               int64_t from_seq, int64_t to_seq, int64_t copies,
                               const struct alert_delivery *d, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    int changes = 0;
    int rc = store_sqlite_write_begin_with(
        s,
        "UPDATE alerts SET cursor_seq = ?4, copies = copies + ?5"
        " WHERE id = ?1 AND lease_owner = ?2 AND cursor_seq = ?3",
        STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(owner), STORE_INT(from_seq), STORE_INT(to_seq),
                   STORE_INT(copies)),
        &changes, err);
    if (rc < 0)
        return rc;
    if (changes == 0) {
        int64_t exists = 0;
        rc = store_sqlite_query_int_args(s->writer, "SELECT count(*) FROM alerts WHERE id = ?1",
                                         STORE_ARGS(STORE_INT(alert_id)), &exists, err);
        if (rc == 0)
            rc = exists
                     ? err_set(err, ERR_BUSY, "alert %lld moved on without this node",
                               (long long)alert_id)
                     : err_set(err, ERR_NOTFOUND, "no alert has the id %lld", (long long)alert_id);
    }
    if (rc == 0 && d)
        rc = store_sqlite_write(
            s->writer,
            "INSERT INTO alert_deliveries(" STORE_DELIVERY_COLUMNS
            ") VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
            " ?7, ?8)",
            STORE_ARGS(STORE_INT(alert_id), STORE_INT(d->seq), STORE_TEXT(d->id),
                       STORE_TEXT(d->body), STORE_INT(d->attempts), STORE_INT(d->next_ms),
                       STORE_INT(d->first_failure_ms), STORE_INT(d->created_ms)),
            NULL, err);
    if (rc == ERR_EXISTS)
        rc = err_set(err, ERR_EXISTS, "the delivery %s exists", d->id);
    for (size_t i = 0; rc == 0 && d && i < d->n_stories; i++)
        rc = store_sqlite_write(
            s->writer,
            "INSERT INTO alert_stories(alert_id, story_id, seq) VALUES (?1, ?2, ?3)"
            " ON CONFLICT(alert_id, story_id) DO UPDATE SET seq = excluded.seq",
            STORE_ARGS(STORE_INT(alert_id), STORE_INT(d->stories[i]), STORE_INT(d->seq)), NULL,
            err);
    /* The oldest go: below the seq of the STORE_ALERT_STORIES_MAX-th newest. */
    if (rc == 0 && d && d->n_stories)
        rc = store_sqlite_write(
            s->writer,
            "DELETE FROM alert_stories WHERE alert_id = ?1 AND seq < (SELECT seq FROM alert_stories"
            " WHERE alert_id = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
            STORE_ARGS(STORE_INT(alert_id), STORE_INT(STORE_ALERT_STORIES_MAX - 1)), NULL, err);
    return store_sqlite_write_end(s, rc, err);
}

int store_sqlite_alert_deliveries(struct store_backend *b, struct arena *a, int64_t alert_id,
                                  size_t max, struct alert_delivery **out, size_t *n_out,
                                  struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_all(
        &s->readers,
        "SELECT " STORE_DELIVERY_COLUMNS " FROM alert_deliveries WHERE alert_id = ?1"
        " ORDER BY seq LIMIT ?2",
        STORE_ARGS(STORE_INT(alert_id),
                   STORE_INT(max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max)),
        a, &store_delivery_record, out, n_out, err);
}

int store_sqlite_alert_delivery_done(struct store_backend *b, int64_t alert_id, const char *id,
                                     struct err *err)
{
    return store_sqlite_write_locked((struct store_sqlite *)b,
                                     "DELETE FROM alert_deliveries WHERE alert_id = ?1 AND id = ?2",
                                     STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(id)), NULL, err);
}

int store_sqlite_alert_delivery_failed(struct store_backend *b, int64_t alert_id, const char *id,
                                       int64_t attempts, int64_t next_ms, int64_t first_failure_ms,
                                       struct err *err)
{
    int changes = 0;
    int rc = store_sqlite_write_locked(
        (struct store_sqlite *)b,
        "UPDATE alert_deliveries SET attempts = ?3, next_ms = ?4, first_failure_ms = ?5"
        " WHERE alert_id = ?1 AND id = ?2",
        STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(id), STORE_INT(attempts), STORE_INT(next_ms),
                   STORE_INT(first_failure_ms)),
        &changes, err);
    if (rc == 0 && changes == 0)
        rc = err_set(err, ERR_NOTFOUND, "no delivery %s", id);
    return rc;
}

int store_sqlite_alert_deliveries_count(struct store_backend *b, int64_t *out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_int(&s->readers, "SELECT count(*) FROM alert_deliveries", NULL, 0, out,
                                 err);
}

int store_sqlite_alert_stories(struct store_backend *b, struct arena *a, int64_t alert_id,
                               int64_t **out, size_t *n_out, struct err *err)
{
    struct store_sqlite *s = (struct store_sqlite *)b;
    return store_sqlite_read_all(
        &s->readers,
        "SELECT story_id FROM (SELECT story_id, seq FROM alert_stories WHERE alert_id = ?1"
        " ORDER BY seq DESC LIMIT ?2) ORDER BY seq",
        STORE_ARGS(STORE_INT(alert_id), STORE_INT(STORE_ALERT_STORIES_MAX)), a,
        &store_story_id_record, out, n_out, err);
}
