/* API keys and their usage in the PostgreSQL store. Only the SHA-256 of a
 * key is stored (bytea, sent in binary). Usage counts are added with one
 * INSERT ... ON CONFLICT DO UPDATE SET n = usage.n + EXCLUDED.n, so counts
 * from any number of nodes add up exactly.
 *
 * Each key found is also remembered here (up to STORE_PG_KEY_CACHE_MAX):
 * when the server cannot be reached, store_key_find answers from that
 * memory, so a node keeps serving the keys it has seen while PostgreSQL
 * restarts. A key never seen by this node fails as the server does. */
#include "store/pg/internal.h"

#include <stdlib.h>
#include <string.h>

#include "store/args.h"
#include "store/columns.h"

#include "util/banned.h"

static const struct pg_sql sql_insert = {
    PG_ST_KEY_INSERT, "INSERT INTO keys(hash, name, plan, state, created_at, last_used)"
                      " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id"};
static const struct pg_sql sql_find = {PG_ST_KEY_FIND,
                                       "SELECT " STORE_KEY_COLUMNS " FROM keys WHERE hash = $1"};
static const struct pg_sql sql_list = {PG_ST_KEYS_LIST,
                                       "SELECT " STORE_KEY_COLUMNS " FROM keys ORDER BY id"};
static const struct pg_sql sql_update = {
    PG_ST_KEY_UPDATE, "UPDATE keys SET plan = coalesce($2, plan),"
                      " state = CASE WHEN $3::int < 0 THEN state ELSE $3::int END WHERE id = $1"};
static const struct pg_sql sql_delete = {PG_ST_KEY_DELETE, "DELETE FROM keys WHERE id = $1"};
/* A deleted key's counts are dropped (nothing is charged, and a flush must
 * not retry them for ever): the insert takes its row from the touched key. */
static const struct pg_sql sql_usage_add = {
    PG_ST_USAGE_ADD,
    "WITH k AS (UPDATE keys SET last_used = greatest(last_used, $4) WHERE id = $1 RETURNING id)"
    " INSERT INTO usage(key_id, day, n) SELECT id, $2, $3 FROM k"
    " ON CONFLICT (key_id, day) DO UPDATE SET n = usage.n + EXCLUDED.n"};
static const struct pg_sql sql_usage_sum = {
    PG_ST_USAGE_SUM,
    "SELECT coalesce(sum(n), 0) FROM usage WHERE key_id = $1 AND day BETWEEN $2 AND $3"};
static const struct pg_sql sql_usage_take = {
    PG_ST_USAGE_TAKE, "SELECT taken, day_n, month_n FROM newsd_usage_take($1, $2, $3, $4, $5, $6)"};

int store_pg_key_insert(struct store_backend *b, const struct key_record *k, int64_t *id_out,
                        struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_conn *c = NULL;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(&p,
                        STORE_ARGS(STORE_BLOB(k->hash, (int)sizeof k->hash), STORE_TEXT(k->name),
                                   STORE_TEXT(k->plan), STORE_INT(k->state),
                                   STORE_INT(k->created_at), STORE_INT(k->last_used)));
    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    rc = store_pg_run(c, &sql_insert, &p, &r, err);
    if (rc == ERR_EXISTS)
        rc = err_set(err, ERR_EXISTS, "a key with this hash already exists");
    else if (rc == 0 && id_out)
        *id_out = PQntuples(r) == 1 ? store_pg_get_int(r, 0, 0) : 0;
    PQclear(r);
    store_pg_pool_put(&s->pool, c);
    return rc;
}

/* --- the memory of keys found -------------------------------------------------- */

static struct pg_key_cached *cached_find(struct store_pg *s, const unsigned char hash[32])
{
    for (struct pg_key_cached *k = s->keys; k; k = k->next)
        if (!memcmp(k->rec.hash, hash, 32))
            return k;
    return NULL;
}

static void cached_unlink(struct store_pg *s, struct pg_key_cached *k)
{
    for (struct pg_key_cached **p = &s->keys; *p; p = &(*p)->next) {
        if (*p == k) {
            *p = k->next;
            s->n_keys--;
            return;
        }
    }
}

/* Remember rec (replacing what was known of its hash); best effort. */
static void cached_put(struct store_pg *s, const struct key_record *rec)
{
    size_t name_len = rec->name ? strlen(rec->name) + 1 : 0;
    size_t plan_len = rec->plan ? strlen(rec->plan) + 1 : 0;
    struct pg_key_cached *k = malloc(sizeof *k + name_len + plan_len);
    if (k == NULL)
        return;
    k->rec = *rec;
    char *p = (char *)(k + 1);
    if (rec->name) {
        memcpy(p, rec->name, name_len);
        k->rec.name = p;
        p += name_len;
    }
    if (rec->plan) {
        memcpy(p, rec->plan, plan_len);
        k->rec.plan = p;
    }
    pthread_mutex_lock(&s->keys_mu);
    struct pg_key_cached *old = cached_find(s, rec->hash);
    if (old) {
        cached_unlink(s, old);
        free(old);
    }
    if (s->n_keys >= STORE_PG_KEY_CACHE_MAX) {
        /* Full: start over rather than track ages; it only serves outages. */
        store_pg_keys_release(s);
    }
    k->next = s->keys;
    s->keys = k;
    s->n_keys++;
    pthread_mutex_unlock(&s->keys_mu);
}

static void cached_forget(struct store_pg *s, const unsigned char hash[32])
{
    pthread_mutex_lock(&s->keys_mu);
    struct pg_key_cached *old = cached_find(s, hash);
    if (old) {
        cached_unlink(s, old);
        free(old);
    }
    pthread_mutex_unlock(&s->keys_mu);
}

/* The remembered record of hash, copied into the arena; false when none. */
static bool cached_get(struct store_pg *s, struct arena *a, const unsigned char hash[32],
                       struct key_record *out)
{
    bool found = false;
    pthread_mutex_lock(&s->keys_mu);
    struct pg_key_cached *k = cached_find(s, hash);
    if (k) {
        *out = k->rec;
        out->name = k->rec.name ? arena_strdup(a, k->rec.name) : NULL;
        out->plan = k->rec.plan ? arena_strdup(a, k->rec.plan) : NULL;
        found = (k->rec.name == NULL || out->name) && (k->rec.plan == NULL || out->plan);
    }
    pthread_mutex_unlock(&s->keys_mu);
    return found;
}

void store_pg_keys_release(struct store_pg *s)
{
    struct pg_key_cached *k = s->keys;
    while (k) {
        struct pg_key_cached *next = k->next;
        free(k);
        k = next;
    }
    s->keys = NULL;
    s->n_keys = 0;
}

int store_pg_key_find(struct store_backend *b, struct arena *a, const unsigned char hash[32],
                      struct key_record *out, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(&p, STORE_ARGS(STORE_BLOB(hash, 32)));
    rc = store_pg_query(s, &sql_find, &p, &r, err);
    if (rc == ERR_BUSY && cached_get(s, a, hash, out))
        return 0; /* unreachable server: the last known record */
    if (rc < 0)
        return rc;
    if (PQntuples(r) == 0) {
        cached_forget(s, hash);
        rc = err_set(err, ERR_NOTFOUND, "no such key");
    } else if ((rc = store_pg_row(a, r, 0, &store_key_record, out)) < 0) {
        err_set(err, rc, "out of memory reading a key");
    } else {
        cached_put(s, out);
    }
    PQclear(r);
    return rc;
}

int store_pg_keys_list(struct store_backend *b, struct arena *a, struct key_record **out,
                       size_t *n_out, struct err *err)
{
    return store_pg_read_all((struct store_pg *)b, &sql_list, NULL, a, &store_key_record, out,
                             n_out, err);
}

/* A one-row write to a key; ERR_NOTFOUND when it changed nothing. The
 * keys remembered for an outage are forgotten after it: a remembered copy
 * would hide the change while the server cannot be reached. */
static int write_one(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                     struct err *err)
{
    long changed = 0;
    int rc = store_pg_write(s, q, p, &changed, NULL, err);
    if (rc == 0 && changed == 0)
        rc = err_set(err, ERR_NOTFOUND, "no such key");
    if (rc == 0) {
        pthread_mutex_lock(&s->keys_mu);
        store_pg_keys_release(s);
        pthread_mutex_unlock(&s->keys_mu);
    }
    return rc;
}

int store_pg_key_update(struct store_backend *b, int64_t id, const char *plan, int state,
                        struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(id), STORE_TEXT(plan), STORE_INT(state)));
    return write_one((struct store_pg *)b, &sql_update, &p, err);
}

int store_pg_key_delete(struct store_backend *b, int64_t id, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(id)));
    return write_one((struct store_pg *)b, &sql_delete, &p, err);
}

int store_pg_usage_add(struct store_backend *b, int64_t key_id, int64_t day, int64_t n,
                       int64_t last_used, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_conn *c = NULL;
    struct pg_params p;
    int rc;

    store_pg_params_set(
        &p, STORE_ARGS(STORE_INT(key_id), STORE_INT(day), STORE_INT(n), STORE_INT(last_used)));
    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    rc = store_pg_run(c, &sql_usage_add, &p, NULL, err);
    store_pg_pool_put(&s->pool, c);
    return rc;
}

int store_pg_usage_sum(struct store_backend *b, int64_t key_id, int64_t day_from, int64_t day_to,
                       int64_t *out, struct err *err)
{
    struct pg_params p;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(key_id), STORE_INT(day_from), STORE_INT(day_to)));
    return store_pg_query_int((struct store_pg *)b, &sql_usage_sum, &p, out, err);
}

int store_pg_usage_take(struct store_backend *b, int64_t key_id, int64_t day, int64_t month_from,
                        int64_t limit_day, int64_t limit_month, int64_t last_used, bool *taken,
                        int64_t *day_n, int64_t *month_n, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_conn *c = NULL;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(&p, STORE_ARGS(STORE_INT(key_id), STORE_INT(day), STORE_INT(month_from),
                                       STORE_INT(limit_day), STORE_INT(limit_month),
                                       STORE_INT(last_used)));
    /* A write: not retried on a dead connection (it may have counted). */
    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    if ((rc = store_pg_run(c, &sql_usage_take, &p, &r, err)) == 0 && PQntuples(r) == 1) {
        *taken = store_pg_get_bool(r, 0, 0);
        *day_n = store_pg_get_int(r, 0, 1);
        *month_n = store_pg_get_int(r, 0, 2);
    }
    PQclear(r);
    store_pg_pool_put(&s->pool, c);
    return rc;
}
