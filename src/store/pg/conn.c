/* Connections of the PostgreSQL store (store/pg/internal.h): the pool with
 * its reconnection backoff, prepared statements run by number, parameters
 * and array literals, result getters, and SQLSTATE → ERR_*. */
#include "store/pg/internal.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/args.h"
#include "store/columns.h"
#include "util/clock.h"
#include "util/log.h"

#include "util/banned.h"

/* The first line of a libpq message (they end with a newline). */
static void first_line(char *dst, size_t cap, const char *msg)
{
    size_t n = 0;
    if (msg == NULL)
        msg = "";
    while (msg[n] && msg[n] != '\n' && n + 1 < cap)
        n++;
    memcpy(dst, msg, n);
    dst[n] = '\0';
}

/* --- errors ------------------------------------------------------------------ */

static int code_of_sqlstate(const char *st)
{
    if (st == NULL)
        return ERR_STORE;
    /* 08: connection exception; 57P0x: admin/crash shutdown, cannot connect
     * now; 40001/40P01: serialization failure, deadlock; 55P03: lock not
     * available. All pass when tried again. */
    if (!strncmp(st, "08", 2) || !strncmp(st, "57P0", 4) || !strcmp(st, "40001") ||
        !strcmp(st, "40P01") || !strcmp(st, "55P03"))
        return ERR_BUSY;
    if (!strcmp(st, "23505"))
        return ERR_EXISTS;
    if (!strcmp(st, "53100"))
        return ERR_FULL;
    if (!strcmp(st, "53200"))
        return ERR_NOMEM;
    return ERR_STORE;
}

int store_pg_fail(PGconn *c, PGresult *r, struct err *err)
{
    char msg[200];
    int code;

    if (c == NULL || PQstatus(c) == CONNECTION_BAD) {
        first_line(msg, sizeof msg, c ? PQerrorMessage(c) : "no connection");
        PQclear(r);
        return err_set(err, ERR_BUSY, "postgresql: connection lost: %s",
                       msg[0] ? msg : "server closed the connection");
    }
    if (r != NULL) {
        code = code_of_sqlstate(PQresultErrorField(r, PG_DIAG_SQLSTATE));
        first_line(msg, sizeof msg, PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
        if (msg[0] == '\0')
            first_line(msg, sizeof msg, PQresultErrorMessage(r));
    } else {
        /* No result at all: out of memory in libpq, or the connection. */
        code = ERR_STORE;
        first_line(msg, sizeof msg, PQerrorMessage(c));
    }
    PQclear(r);
    return err_set(err, code, "postgresql: %s", msg[0] ? msg : "unknown error");
}

bool store_pg_conn_broken(const struct pg_conn *c)
{
    return c == NULL || c->c == NULL || PQstatus(c->c) == CONNECTION_BAD;
}

/* --- connections ------------------------------------------------------------- */

/* libpq's default notice processor prints what the server says outside a
 * query's result (a NOTICE, a WARNING, the FATAL of a server shutting
 * down) raw on stderr: lines in no format of ours, which break
 * --log-format json. They go through our log instead, one line each. */
static void notice_to_log(void *ctx, const char *message)
{
    char line[200];
    (void)ctx;
    first_line(line, sizeof line, message);
    log_warn("postgresql: %s", line);
}

int store_pg_connect(PGconn **out, const char *uri, struct err *err)
{
    /* Defaults first: the URI (expanded at "dbname") overrides them. */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {STORE_PG_CONNECT_TIMEOUT, "newsd", uri, NULL};
    char msg[200];
    PGconn *c;

    *out = NULL;
    c = PQconnectdbParams(keys, vals, 1);
    if (c == NULL)
        return err_set(err, ERR_NOMEM, "postgresql: out of memory connecting");
    if (PQstatus(c) != CONNECTION_OK) {
        first_line(msg, sizeof msg, PQerrorMessage(c));
        PQfinish(c);
        return err_set(err, ERR_BUSY, "cannot connect to PostgreSQL: %s", msg);
    }
    PQsetNoticeProcessor(c, notice_to_log, NULL);
    if (PQsetClientEncoding(c, "UTF8") != 0) {
        first_line(msg, sizeof msg, PQerrorMessage(c));
        PQfinish(c);
        return err_set(err, ERR_STORE, "postgresql: cannot use UTF8: %s", msg);
    }
    *out = c;
    return 0;
}

static void conn_free(struct pg_conn *c)
{
    if (c == NULL)
        return;
    PQfinish(c->c);
    free(c);
}

int store_pg_pool_init(struct pg_pool *p, const char *uri, struct err *err)
{
    memset(p, 0, sizeof *p);
    p->uri = strdup(uri);
    if (p->uri == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    /* Waits are timed on the monotonic clock. */
    if (clock_cond_init(&p->cv) != 0) {
        free(p->uri);
        p->uri = NULL;
        return err_set(err, ERR_NOMEM, "cannot create a condition variable");
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        pthread_cond_destroy(&p->cv);
        free(p->uri);
        p->uri = NULL;
        return err_set(err, ERR_NOMEM, "cannot create a mutex");
    }
    return 0;
}

void store_pg_pool_release(struct pg_pool *p)
{
    if (p->uri == NULL)
        return;
    for (size_t i = 0; i < p->n_idle; i++)
        conn_free(p->idle[i]);
    p->n_idle = 0;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->uri);
    p->uri = NULL;
}

/* Wait up to wait_ms for a free slot; false on timeout. */
static bool pool_wait(struct pg_pool *p, int64_t wait_ms)
{
    struct timespec ts = clock_mono_in(wait_ms);
    while (p->n_idle == 0 && p->n_out >= STORE_PG_POOL_MAX) {
        if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT)
            return p->n_idle > 0 || p->n_out < STORE_PG_POOL_MAX;
    }
    return true;
}

/* A failed attempt to reach the server: the next one waits (doubling up
 * to STORE_PG_BACKOFF_MAX_MS). mu held. */
static void pool_backoff(struct pg_pool *p, const struct err *err)
{
    p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : STORE_PG_BACKOFF_MIN_MS;
    if (p->backoff_ms > STORE_PG_BACKOFF_MAX_MS)
        p->backoff_ms = STORE_PG_BACKOFF_MAX_MS;
    p->retry_at_ms = clock_mono_ms() + p->backoff_ms;
    first_line(p->last_error, sizeof p->last_error, err ? err->msg : "cannot connect");
}

/* The migration a store opened offline still owes, before any connection
 * is used. mu held: one thread runs it, the others wait for its outcome. */
static int pool_migrate(struct pg_pool *p, struct err *err)
{
    int rc = p->migrate(p->uri, err);
    if (rc < 0) {
        pool_backoff(p, err);
        return rc;
    }
    p->migrate_pending = false;
    p->backoff_ms = 0;
    p->retry_at_ms = 0;
    log_info("store: PostgreSQL is reachable; its schema is up to date");
    return 0;
}

int store_pg_pool_get(struct pg_pool *p, struct pg_conn **out, struct err *err)
{
    struct pg_conn *c = NULL;
    int64_t now = clock_mono_ms();
    int rc;

    *out = NULL;
    pthread_mutex_lock(&p->mu);
    if (!pool_wait(p, STORE_PG_POOL_WAIT_MS)) {
        pthread_mutex_unlock(&p->mu);
        return err_set(err, ERR_BUSY, "postgresql: every connection of this node is busy");
    }
    if (p->migrate_pending && now >= p->retry_at_ms && (rc = pool_migrate(p, err)) < 0) {
        pthread_mutex_unlock(&p->mu);
        return rc;
    }
    if (p->n_idle > 0) {
        *out = p->idle[--p->n_idle];
        p->n_out++;
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    if (now < p->retry_at_ms) {
        rc = err_set(err, ERR_BUSY, "PostgreSQL is unreachable (%s); retrying in %lld ms",
                     p->last_error, (long long)(p->retry_at_ms - now));
        pthread_mutex_unlock(&p->mu);
        return rc;
    }
    p->n_out++;
    pthread_mutex_unlock(&p->mu);

    /* Connecting takes a round trip or a timeout: not under the lock. */
    c = calloc(1, sizeof *c);
    if (c == NULL)
        rc = err_set(err, ERR_NOMEM, "out of memory");
    else
        rc = store_pg_connect(&c->c, p->uri, err);

    pthread_mutex_lock(&p->mu);
    if (rc < 0) {
        p->n_out--;
        pool_backoff(p, err);
        pthread_cond_signal(&p->cv);
        free(c);
        c = NULL;
    } else {
        p->backoff_ms = 0;
        p->retry_at_ms = 0;
        *out = c;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void store_pg_pool_put(struct pg_pool *p, struct pg_conn *c)
{
    struct pg_conn *drop[STORE_PG_POOL_MAX];
    size_t n_drop = 0;

    if (c == NULL)
        return;
    /* A connection left inside a transaction (an error path that could not
     * roll back) is not reused. */
    if (!store_pg_conn_broken(c) && PQtransactionStatus(c->c) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->c, "ROLLBACK");
        PQclear(r);
    }
    bool broken = store_pg_conn_broken(c) || PQtransactionStatus(c->c) != PQTRANS_IDLE;
    pthread_mutex_lock(&p->mu);
    p->n_out--;
    if (broken) {
        /* The server went away or restarted: the idle ones are as dead. */
        memcpy(drop, p->idle, p->n_idle * sizeof *drop);
        n_drop = p->n_idle;
        p->n_idle = 0;
    } else if (p->n_idle < STORE_PG_POOL_MAX) {
        p->idle[p->n_idle++] = c;
        c = NULL;
    }
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    conn_free(c);
    for (size_t i = 0; i < n_drop; i++)
        conn_free(drop[i]);
}

/* --- statements -------------------------------------------------------------- */

int store_pg_exec(PGconn *c, const char *sql, struct err *err)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (r != NULL && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)) {
        PQclear(r);
        return 0;
    }
    return store_pg_fail(c, r, err);
}

int store_pg_run(struct pg_conn *c, const struct pg_sql *q, const struct pg_params *p,
                 PGresult **out, struct err *err)
{
    char name[24];
    PGresult *r;
    int n = p ? p->n : 0;

    if (out)
        *out = NULL;
    snprintf(name, sizeof name, "newsd_%d", (int)q->id);
    if (!(c->prepared & ((uint64_t)1 << q->id))) {
        r = PQprepare(c->c, name, q->text, 0, NULL);
        if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK)
            return store_pg_fail(c->c, r, err);
        PQclear(r);
        c->prepared |= (uint64_t)1 << q->id;
    }
    r = PQexecPrepared(c->c, name, n, p ? p->values : NULL, p ? p->lengths : NULL,
                       p ? p->formats : NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (r == NULL || (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK))
        return store_pg_fail(c->c, r, err);
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

int store_pg_end(struct pg_conn *c, int rc, struct err *err)
{
    if (rc == 0)
        return store_pg_exec(c->c, "COMMIT", err);
    if (!store_pg_conn_broken(c) && PQtransactionStatus(c->c) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->c, "ROLLBACK");
        PQclear(r);
    }
    return rc;
}

int store_pg_query(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                   PGresult **out, struct err *err)
{
    struct pg_conn *c = NULL;
    int rc;

    for (int attempt = 0; attempt < 2; attempt++) {
        if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
            return rc;
        rc = store_pg_run(c, q, p, out, err);
        bool broken = store_pg_conn_broken(c);
        store_pg_pool_put(&s->pool, c);
        c = NULL;
        if (rc == 0 || !broken)
            break;
    }
    return rc;
}

/* The integer in the first column of r's first row (0 when there is no
 * row or it is NULL); r is cleared. */
static int64_t first_int(PGresult *r)
{
    int64_t v = PQntuples(r) == 1 ? store_pg_get_int(r, 0, 0) : 0;
    PQclear(r);
    return v;
}

int store_pg_run_int(struct pg_conn *c, const struct pg_sql *q, const struct pg_params *p,
                     int64_t *out, struct err *err)
{
    PGresult *r = NULL;
    int rc = store_pg_run(c, q, p, &r, err);
    *out = rc == 0 ? first_int(r) : 0;
    return rc;
}

int store_pg_query_int(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                       int64_t *out, struct err *err)
{
    PGresult *r = NULL;
    int rc = store_pg_query(s, q, p, &r, err);
    *out = rc == 0 ? first_int(r) : 0;
    return rc;
}

int store_pg_write_row(struct store_backend *b, const struct pg_sql *q,
                       const struct store_arg *args, size_t n, const char *what, int64_t id,
                       struct err *err)
{
    struct pg_params p;
    long changed = 0;
    store_pg_params_set(&p, args, n);
    int rc = store_pg_write((struct store_pg *)b, q, &p, &changed, NULL, err);
    if (rc == 0 && changed == 0)
        rc = err_set(err, ERR_NOTFOUND, "no %s has the id %lld", what, (long long)id);
    return rc;
}

long store_pg_changed(PGresult *r)
{
    const char *t = PQcmdTuples(r);
    return t && *t ? strtol(t, NULL, 10) : 0;
}

int store_pg_write(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                   long *changed, PGresult **out, struct err *err)
{
    struct pg_conn *c = NULL;
    PGresult *r = NULL;
    int rc;

    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    rc = store_pg_run(c, q, p, &r, err);
    if (rc == 0 && changed)
        *changed = store_pg_changed(r);
    if (rc == 0 && out) {
        *out = r;
        r = NULL;
    }
    PQclear(r);
    store_pg_pool_put(&s->pool, c);
    return rc;
}

/* store/columns.h's accessors on row i of a result. */
struct result_row {
    const PGresult *r;
    int i;
};

static int64_t col_i64(void *src, int j)
{
    const struct result_row *x = src;
    return store_pg_get_int(x->r, x->i, j);
}

static bool col_bool(void *src, int j)
{
    const struct result_row *x = src;
    return store_pg_get_bool(x->r, x->i, j);
}

static double col_double(void *src, int j)
{
    const struct result_row *x = src;
    return store_pg_get_double(x->r, x->i, j);
}

static int col_str(struct arena *a, void *src, int j, const char **out)
{
    const struct result_row *x = src;
    return store_pg_get_str(a, x->r, x->i, j, out);
}

static void col_code(void *src, int j, char out[3])
{
    const struct result_row *x = src;
    store_pg_get_code(x->r, x->i, j, out);
}

/* bytea comes as text ("\x…"): unescaped, kept when 32 bytes. */
static int col_hash(void *src, int j, unsigned char out[32])
{
    const struct result_row *x = src;
    size_t len = 0;
    unsigned char *raw = PQunescapeBytea((const unsigned char *)PQgetvalue(x->r, x->i, j), &len);
    if (raw == NULL)
        return ERR_NOMEM;
    if (len == 32)
        memcpy(out, raw, 32);
    PQfreemem(raw);
    return 0;
}

static const struct store_col_access column_access = {col_i64, col_bool, col_double,
                                                      col_str, col_code, col_hash};

int store_pg_row(struct arena *a, const PGresult *r, int i, const struct store_record *rec,
                 void *item)
{
    struct result_row x = {r, i};
    return store_row_read(&column_access, a, &x, rec, item);
}

int store_pg_rows(struct arena *a, const PGresult *r, const struct store_record *rec, void **out,
                  size_t *n_out)
{
    size_t n = (size_t)PQntuples(r);
    unsigned char *items = arena_calloc(a, n ? n : 1, rec->size);
    if (items == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = store_pg_row(a, r, (int)i, rec, items + i * rec->size);
        if (rc < 0)
            return rc;
    }
    *out = items;
    *n_out = n;
    return 0;
}

int store_pg_read_all(struct store_pg *s, const struct pg_sql *q, const struct pg_params *p,
                      struct arena *a, const struct store_record *rec, void *out, size_t *n_out,
                      struct err *err)
{
    PGresult *r = NULL;
    void *items = NULL;
    int rc;

    if ((rc = store_pg_query(s, q, p, &r, err)) < 0)
        return rc;
    if ((rc = store_pg_rows(a, r, rec, &items, n_out)) < 0)
        err_set(err, rc, "out of memory listing %s", rec->what);
    else
        store_records_give(out, items);
    PQclear(r);
    return rc;
}

/* --- parameters -------------------------------------------------------------- */

void store_pg_params_init(struct pg_params *p)
{
    p->n = 0;
}

/* The next slot; running out is a programmer error. */
static int param_slot(struct pg_params *p)
{
    assert(p->n < PG_PARAMS_MAX);
    int i = p->n++;
    p->lengths[i] = 0;
    p->formats[i] = 0;
    return i;
}

void store_pg_param_text(struct pg_params *p, const char *s)
{
    int i = param_slot(p);
    p->values[i] = s;
}

void store_pg_param_int(struct pg_params *p, int64_t v)
{
    int i = param_slot(p);
    snprintf(p->num[i], sizeof p->num[i], "%" PRId64, v);
    p->values[i] = p->num[i];
}

void store_pg_param_double(struct pg_params *p, double v)
{
    int i = param_slot(p);
    snprintf(p->num[i], sizeof p->num[i], "%.17g", v);
    p->values[i] = p->num[i];
}

void store_pg_param_bool(struct pg_params *p, bool v)
{
    int i = param_slot(p);
    p->values[i] = v ? "t" : "f";
}

void store_pg_param_code(struct pg_params *p, const char code[3])
{
    int i = param_slot(p);
    size_t n = strnlen(code, 2);
    memcpy(p->num[i], code, n);
    p->num[i][n] = '\0';
    p->values[i] = p->num[i];
}

void store_pg_param_bytes(struct pg_params *p, const void *data, int len)
{
    int i = param_slot(p);
    p->values[i] = data;
    p->lengths[i] = len;
    p->formats[i] = 1;
}

void store_pg_params_set(struct pg_params *p, const struct store_arg *args, size_t n)
{
    store_pg_params_init(p);
    for (size_t k = 0; k < n; k++) {
        const struct store_arg *x = &args[k];
        switch (x->kind) {
        case STORE_ARG_INT:
            store_pg_param_int(p, x->i);
            break;
        case STORE_ARG_DOUBLE:
            store_pg_param_double(p, x->d);
            break;
        case STORE_ARG_BOOL:
            store_pg_param_bool(p, x->i != 0);
            break;
        case STORE_ARG_TEXT:
            if (x->p == NULL || x->len < 0) {
                store_pg_param_text(p, x->p);
            } else { /* counted bytes (a code): text parameters end at a NUL */
                int i = param_slot(p);
                assert((size_t)x->len < sizeof p->num[i]);
                memcpy(p->num[i], x->p, (size_t)x->len);
                p->num[i][x->len] = '\0';
                p->values[i] = p->num[i];
            }
            break;
        case STORE_ARG_BLOB:
            store_pg_param_bytes(p, x->p, x->len);
            break;
        }
    }
}

/* --- results ----------------------------------------------------------------- */

int64_t store_pg_get_int(const PGresult *r, int i, int j)
{
    if (PQgetisnull(r, i, j))
        return 0;
    return strtoll(PQgetvalue(r, i, j), NULL, 10);
}

double store_pg_get_double(const PGresult *r, int i, int j)
{
    if (PQgetisnull(r, i, j))
        return 0;
    return strtod(PQgetvalue(r, i, j), NULL);
}

bool store_pg_get_bool(const PGresult *r, int i, int j)
{
    return !PQgetisnull(r, i, j) && PQgetvalue(r, i, j)[0] == 't';
}

void store_pg_get_code(const PGresult *r, int i, int j, char out[3])
{
    out[0] = '\0';
    if (!PQgetisnull(r, i, j) && PQgetlength(r, i, j) == 2) {
        memcpy(out, PQgetvalue(r, i, j), 2);
        out[2] = '\0';
    }
}

int store_pg_get_str(struct arena *a, const PGresult *r, int i, int j, const char **out)
{
    *out = NULL;
    if (PQgetisnull(r, i, j))
        return 0;
    char *copy = arena_strndup(a, PQgetvalue(r, i, j), (size_t)PQgetlength(r, i, j));
    if (copy == NULL)
        return ERR_NOMEM;
    *out = copy;
    return 0;
}

/* --- array literals ------------------------------------------------------------ */

void store_pg_array_begin(struct buf *b)
{
    buf_init(b, 0);
    buf_putc(b, '{');
}

/* A separator unless the element is the first. */
static void array_sep(struct buf *b)
{
    if (b->len > 0 && b->data[b->len - 1] != '{')
        buf_putc(b, ',');
}

void store_pg_array_text(struct buf *b, const char *s)
{
    array_sep(b);
    if (s == NULL) {
        buf_puts(b, "NULL");
        return;
    }
    /* Quoted, so any text (empty, "NULL", braces, commas) is one element. */
    buf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_putc(b, '\\');
        buf_putc(b, *p);
    }
    buf_putc(b, '"');
}

void store_pg_array_int(struct buf *b, int64_t v)
{
    array_sep(b);
    buf_printf(b, "%" PRId64, v);
}

void store_pg_array_bool(struct buf *b, bool v)
{
    array_sep(b);
    buf_putc(b, v ? 't' : 'f');
}

static void array_end(struct buf *b)
{
    buf_putc(b, '}');
}

int store_pg_param_array(struct pg_params *p, struct buf *arr, struct err *err)
{
    array_end(arr);
    int rc = buf_error(arr);
    if (rc < 0)
        return err_set(err, rc, "out of memory");
    store_pg_param_text(p, arr->data);
    return 0;
}
