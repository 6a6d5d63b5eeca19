/* Alerts of the PostgreSQL store (store.h "alerts"; schema version 3,
 * dedupe, copies and alert_stories version 5, pg.c). A lease is UPDATE ... SET lease_owner = me
 * WHERE the lease ended or is mine: two nodes leasing at once queue on each row's lock, and the
 * second re-reads the row after the first commits, finds it leased and
 * leaves it, so one node delivers an alert at a time. A node that lost
 * the lease (it stalled past it) cannot move the cursor any more: the
 * advance is a compare and set on owner and cursor. */
#include "store/pg/internal.h"

#include <string.h>
#include <time.h>

#include "store/args.h"
#include "store/columns.h"
#include "util/buf.h"
#include "util/banned.h"

/* $1 key, $2 max per key (0 none), $3 query, $4 webhook, $5 secret,
 * $6 created_at, $7 cursor (< 0: the head), $8 state, $9 dedupe (0, 1).
 * newsd_alert_add answers the new id, -1 without such a key, -2 when the
 * key is full. */
static const struct pg_sql sql_add = {
    PG_ST_ALERT_ADD, "SELECT newsd_alert_add($1, $2, $3, $4, $5, $6, $7, $8, $9::integer)"};
static const struct pg_sql sql_list = {PG_ST_ALERTS_LIST,
                                       "SELECT " STORE_ALERT_COLUMNS " FROM alerts"
                                       " WHERE $1::bigint = 0 OR key_id = $1 ORDER BY id"};
static const struct pg_sql sql_remove = {
    PG_ST_ALERT_REMOVE, "DELETE FROM alerts WHERE id = $1 AND ($2::bigint = 0 OR key_id = $2)"};
static const struct pg_sql sql_lease = {
    PG_ST_ALERTS_LEASE,
    "UPDATE alerts SET lease_owner = $1, lease_until_ms = $3"
    " WHERE (lease_owner = $1 AND lease_until_ms <= $2::bigint + ($3::bigint - $2::bigint) / 2)"
    " OR lease_owner IS NULL OR lease_until_ms <= $2"};
static const struct pg_sql sql_leased = {PG_ST_ALERTS_LEASED,
                                         "SELECT " STORE_ALERT_COLUMNS " FROM alerts"
                                         " WHERE lease_owner = $1"
                                         " AND key_id IN (SELECT id FROM keys WHERE state = 0)"
                                         " ORDER BY id"};
static const struct pg_sql sql_release = {
    PG_ST_ALERTS_RELEASE,
    "UPDATE alerts SET lease_owner = NULL, lease_until_ms = 0 WHERE lease_owner = $1"};
static const struct pg_sql sql_advance = {
    PG_ST_ALERT_ADVANCE, "UPDATE alerts SET cursor_seq = $4, copies = copies + $5"
                         " WHERE id = $1 AND lease_owner = $2 AND cursor_seq = $3"};
static const struct pg_sql sql_exists = {PG_ST_ALERT_EXISTS,
                                         "SELECT count(*) FROM alerts WHERE id = $1"};
static const struct pg_sql sql_delivery_put = {
    PG_ST_ALERT_DELIVERY_PUT, "INSERT INTO alert_deliveries(" STORE_DELIVERY_COLUMNS
                              ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"};
static const struct pg_sql sql_deliveries = {
    PG_ST_ALERT_DELIVERIES, "SELECT " STORE_DELIVERY_COLUMNS " FROM alert_deliveries"
                            " WHERE alert_id = $1 ORDER BY seq LIMIT $2"};
static const struct pg_sql sql_done = {PG_ST_ALERT_DELIVERY_DONE,
                                       "DELETE FROM alert_deliveries"
                                       " WHERE alert_id = $1 AND id = $2"};
static const struct pg_sql sql_failed = {
    PG_ST_ALERT_DELIVERY_FAILED,
    "UPDATE alert_deliveries SET attempts = $3, next_ms = $4, first_failure_ms = $5"
    " WHERE alert_id = $1 AND id = $2"};
static const struct pg_sql sql_count = {PG_ST_ALERT_DELIVERIES_COUNT,
                                        "SELECT count(*) FROM alert_deliveries"};
/* $1 alert, $2 the stories as an array literal ("{1,2}"), $3 seq. */
static const struct pg_sql sql_stories_put = {
    PG_ST_ALERT_STORIES_PUT, "INSERT INTO alert_stories(alert_id, story_id, seq)"
                             " SELECT DISTINCT $1::bigint, unnest($2::bigint[]), $3::bigint"
                             " ON CONFLICT (alert_id, story_id) DO UPDATE SET seq = excluded.seq"};
/* The oldest go: below the seq of the $2+1-th newest. */
static const struct pg_sql sql_stories_trim = {
    PG_ST_ALERT_STORIES_TRIM,
    "DELETE FROM alert_stories WHERE alert_id = $1 AND seq < (SELECT seq FROM alert_stories"
    " WHERE alert_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)"};
static const struct pg_sql sql_stories = {
    PG_ST_ALERT_STORIES,
    "SELECT story_id FROM (SELECT story_id, seq FROM alert_stories WHERE alert_id = $1"
    " ORDER BY seq DESC LIMIT $2) AS newest ORDER BY seq"};

static int alert_rows(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                      struct arena *a, struct alert_record **out, size_t *n_out, struct err *err)
{
    return store_pg_read_all(s, q, p, a, &store_alert_record, out, n_out, err);
}

int store_pg_alert_add(struct store_backend *b, const struct alert_record *a, int64_t max_per_key,
                       int64_t *id_out, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(
        &p, STORE_ARGS(STORE_INT(a->key_id), STORE_INT(max_per_key > 0 ? max_per_key : 0),
                       STORE_TEXT(a->query), STORE_TEXT(a->webhook), STORE_TEXT(a->secret),
                       STORE_INT(a->created_at ? a->created_at : (int64_t)time(NULL)),
                       STORE_INT(a->cursor_seq), STORE_INT(a->state), STORE_INT(a->dedupe)));
    if ((rc = store_pg_write(s, &sql_add, &p, NULL, &r, err)) < 0)
        return rc;
    int64_t id = PQntuples(r) == 1 ? store_pg_get_int(r, 0, 0) : 0;
    PQclear(r);
    if (id == -1)
        return err_set(err, ERR_NOTFOUND, "no key has the id %lld", (long long)a->key_id);
    if (id == -2)
        return err_set(err, ERR_FULL, "the key has %lld alerts, its plan's limit",
                       (long long)max_per_key);
    if (id <= 0)
        return err_set(err, ERR_STORE, "the alert was not added");
    if (id_out)
        *id_out = id;
    return 0;
}

int store_pg_alerts_list(struct store_backend *b, struct arena *a, int64_t key_id,
                         struct alert_record **out, size_t *n_out, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(key_id)));
    return alert_rows((struct store_pg *)b, &sql_list, &p, a, out, n_out, err);
}

int store_pg_alert_remove(struct store_backend *b, int64_t id, int64_t key_id, struct err *err)
{
    /* Its deliveries go with it (ON DELETE CASCADE). */
    return store_pg_write_row(b, &sql_remove, STORE_ARGS(STORE_INT(id), STORE_INT(key_id)), "alert",
                              id, err);
}

int store_pg_alerts_lease(struct store_backend *b, struct arena *a, const char *owner,
                          int64_t now_ms, int64_t until_ms, struct alert_record **out,
                          size_t *n_out, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_TEXT(owner), STORE_INT(now_ms), STORE_INT(until_ms)));
    int rc = store_pg_write(s, &sql_lease, &p, NULL, NULL, err);
    if (rc < 0)
        return rc;
    store_pg_params_set(&p, STORE_ARGS(STORE_TEXT(owner)));
    return alert_rows(s, &sql_leased, &p, a, out, n_out, err);
}

int store_pg_alerts_release(struct store_backend *b, const char *owner, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_TEXT(owner)));
    return store_pg_write((struct store_pg *)b, &sql_release, &p, NULL, NULL, err);
}

/* d's stories into alert_stories, the oldest beyond STORE_ALERT_STORIES_MAX out. */
static int stories_put(struct pg_conn *c, int64_t alert_id, const struct alert_delivery *d,
                       struct err *err)
{
    struct pg_params p;
    struct buf list;
    store_pg_array_begin(&list);
    for (size_t i = 0; i < d->n_stories; i++)
        store_pg_array_int(&list, d->stories[i]);
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id)));
    int rc = store_pg_param_array(&p, &list, err);
    store_pg_param_int(&p, d->seq);
    if (rc == 0)
        rc = store_pg_run(c, &sql_stories_put, &p, NULL, err);
    buf_release(&list);
    if (rc == 0) {
        store_pg_params_set(
            &p, STORE_ARGS(STORE_INT(alert_id), STORE_INT(STORE_ALERT_STORIES_MAX - 1)));
        rc = store_pg_run(c, &sql_stories_trim, &p, NULL, err);
    }
    return rc;
}

int store_pg_alert_advance(struct store_backend *b, int64_t alert_id, const char *owner,
                           int64_t from_seq, int64_t to_seq, int64_t copies,
                           const struct alert_delivery *d, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_conn *c = NULL;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    if ((rc = store_pg_exec(c->c, "BEGIN", err)) < 0)
        goto out;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(owner), STORE_INT(from_seq),
                                       STORE_INT(to_seq), STORE_INT(copies)));
    rc = store_pg_run(c, &sql_advance, &p, &r, err);
    long changed = rc == 0 ? store_pg_changed(r) : 0;
    PQclear(r);
    r = NULL;
    if (rc == 0 && changed == 0) {
        store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id)));
        rc = store_pg_run(c, &sql_exists, &p, &r, err);
        if (rc == 0)
            rc = PQntuples(r) == 1 && store_pg_get_int(r, 0, 0) > 0
                     ? err_set(err, ERR_BUSY, "alert %lld moved on without this node",
                               (long long)alert_id)
                     : err_set(err, ERR_NOTFOUND, "no alert has the id %lld", (long long)alert_id);
        PQclear(r);
        r = NULL;
    }
    if (rc == 0 && d) {
        store_pg_params_set(
            &p, STORE_ARGS(STORE_INT(alert_id), STORE_INT(d->seq), STORE_TEXT(d->id),
                           STORE_TEXT(d->body), STORE_INT(d->attempts), STORE_INT(d->next_ms),
                           STORE_INT(d->first_failure_ms), STORE_INT(d->created_ms)));
        rc = store_pg_run(c, &sql_delivery_put, &p, NULL, err);
    }
    if (rc == 0 && d && d->n_stories)
        rc = stories_put(c, alert_id, d, err);
    rc = store_pg_end(c, rc, err);
out:
    store_pg_pool_put(&s->pool, c);
    return rc;
}

int store_pg_alert_deliveries(struct store_backend *b, struct arena *a, int64_t alert_id,
                              size_t max, struct alert_delivery **out, size_t *n_out,
                              struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p,
                        STORE_ARGS(STORE_INT(alert_id),
                                   STORE_INT(max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max)));
    return store_pg_read_all((struct store_pg *)b, &sql_deliveries, &p, a, &store_delivery_record,
                             out, n_out, err);
}

int store_pg_alert_delivery_done(struct store_backend *b, int64_t alert_id, const char *id,
                                 struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(id)));
    return store_pg_write((struct store_pg *)b, &sql_done, &p, NULL, NULL, err);
}

int store_pg_alert_delivery_failed(struct store_backend *b, int64_t alert_id, const char *id,
                                   int64_t attempts, int64_t next_ms, int64_t first_failure_ms,
                                   struct err *err)
{
    struct pg_params p;
    long changed = 0;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id), STORE_TEXT(id), STORE_INT(attempts),
                                       STORE_INT(next_ms), STORE_INT(first_failure_ms)));
    int rc = store_pg_write((struct store_pg *)b, &sql_failed, &p, &changed, NULL, err);
    if (rc == 0 && changed == 0)
        rc = err_set(err, ERR_NOTFOUND, "no delivery %s", id);
    return rc;
}

int store_pg_alert_deliveries_count(struct store_backend *b, int64_t *out, struct err *err)
{
    return store_pg_query_int((struct store_pg *)b, &sql_count, NULL, out, err);
}

int store_pg_alert_stories(struct store_backend *b, struct arena *a, int64_t alert_id,
                           int64_t **out, size_t *n_out, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(alert_id), STORE_INT(STORE_ALERT_STORIES_MAX)));
    return store_pg_read_all((struct store_pg *)b, &sql_stories, &p, a, &store_story_id_record, out,
                             n_out, err);
}
