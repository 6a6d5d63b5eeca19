/* The PostgreSQL store (store/backend.h store_pg_new): lifecycle and schema.
 *
 * Schema versions: newsd_meta(key, value) holds schema_version; migrations[i]
 * brings version i to i+1. Every node runs them at open under a session
 * advisory lock, each in its own transaction, so nodes starting together
 * migrate once and a node never sees half a migration. Version 1:
 *   newsd_meta  schema_version; origin (random id of this database's article
 *               log); sources_rev (grows with every change to sources)
 *   articles    as the embedded store's (sqlite.c) without meta_terms (each
 *               node's index derives them); seq from article_seq, unique
 *   article_tombstones  seq, id, canonical_url of each deleted article, so
 *               followers see deletes in the log
 *   trigger newsd_articles_stamp: every inserted or updated row gets the next
 *               seq and every deleted one a tombstone, under the transaction
 *               advisory lock STORE_PG_LOCK_ARTICLES (see pg.h: seq order is
 *               commit order); newsd_articles_notify: NOTIFY newsd_articles
 *               once per statement; a TRUNCATE gives the log a new origin
 *   sources     the catalogue; id in "C" collation (byte order, like the
 *               embedded store); a change bumps sources_rev, NOTIFY
 *               newsd_sources
 *   keys, usage, feeds, feed_items  as the embedded store's
 *   newsd_usage_take()  store_usage_take in one round trip
 * Version 2 (feeds.c): feeds.pages, a feed's page-fetch setting.
 * Version 3 (alerts.c):
 *   alerts, alert_deliveries  as the embedded store's (sqlite.c, version 6)
 *   newsd_alert_add()  store_alert_add in one round trip: the key's row
 *               lock makes the per-key limit exact across nodes
 * Version 4: articles.story_id, the story of each article (story/assign.h;
 *   NULL for the articles stored before it), replicated with the row.
 * Version 5 (alerts.c): alerts.dedupe, alerts.copies and alert_stories as
 *   the embedded store's (version 9); newsd_alert_add() with a ninth
 *   argument, dedupe. */
#include "store/pg/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/banned.h"

/* clang-format off */
static const char *const schema_v1[] = {
    "INSERT INTO newsd_meta(key, value) VALUES"
    " ('origin', md5(random()::text || clock_timestamp()::text)), ('sources_rev', '0')"
    " ON CONFLICT (key) DO NOTHING;"
    "CREATE SEQUENCE IF NOT EXISTS article_seq;",
    "CREATE TABLE IF NOT EXISTS sources("
    " id TEXT COLLATE \"C\" PRIMARY KEY, name TEXT, description TEXT, url TEXT, category TEXT,"
    " language TEXT, country TEXT, headlines BOOLEAN NOT NULL DEFAULT false,"
    " popularity DOUBLE PRECISION NOT NULL DEFAULT 0, feed_url TEXT);"
    "CREATE TABLE IF NOT EXISTS articles("
    " id BIGINT PRIMARY KEY, seq BIGINT NOT NULL, url TEXT,"
    " canonical_url TEXT NOT NULL UNIQUE, source_id TEXT, source_name TEXT, author TEXT,"
    " title TEXT, description TEXT, url_to_image TEXT, published_at BIGINT NOT NULL,"
    " content TEXT, domain TEXT, language TEXT NOT NULL DEFAULT '',"
    " country TEXT NOT NULL DEFAULT '', category TEXT, headline BOOLEAN NOT NULL DEFAULT false,"
    " ingested_at BIGINT NOT NULL DEFAULT 0);"
    "CREATE UNIQUE INDEX IF NOT EXISTS articles_by_seq ON articles(seq);"
    "CREATE TABLE IF NOT EXISTS article_tombstones("
    " seq BIGINT PRIMARY KEY, id BIGINT NOT NULL, canonical_url TEXT,"
    " deleted_at BIGINT NOT NULL DEFAULT 0);",
    "CREATE OR REPLACE FUNCTION newsd_articles_stamp() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN"
    "  PERFORM pg_advisory_xact_lock(" STORE_PG_LOCK_ARTICLES ");"
    "  IF TG_OP = 'DELETE' THEN"
    "   INSERT INTO article_tombstones(seq, id, canonical_url, deleted_at)"
    "   VALUES (nextval('article_seq'), OLD.id, OLD.canonical_url,"
    "           extract(epoch FROM now())::bigint);"
    "   RETURN OLD;"
    "  END IF;"
    "  NEW.seq := nextval('article_seq');"
    "  RETURN NEW;"
    " END $f$;"
    "CREATE OR REPLACE TRIGGER articles_stamp BEFORE INSERT OR UPDATE OR DELETE ON articles"
    " FOR EACH ROW EXECUTE FUNCTION newsd_articles_stamp();"
    "CREATE OR REPLACE FUNCTION newsd_articles_notify() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN"
    "  IF TG_OP = 'TRUNCATE' THEN"
    "   UPDATE newsd_meta SET value = md5(random()::text || clock_timestamp()::text)"
    "   WHERE key = 'origin';"
    "  END IF;"
    "  PERFORM pg_notify('newsd_articles', '');"
    "  RETURN NULL;"
    " END $f$;"
    "CREATE OR REPLACE TRIGGER articles_notify AFTER INSERT OR UPDATE OR DELETE ON articles"
    " FOR EACH STATEMENT EXECUTE FUNCTION newsd_articles_notify();"
    "CREATE OR REPLACE TRIGGER articles_truncate AFTER TRUNCATE ON articles"
    " FOR EACH STATEMENT EXECUTE FUNCTION newsd_articles_notify();",
    /* Only statements that changed rows move sources_rev (an ensure that
     * found every id known changes nothing): the transition table says. */
    "CREATE OR REPLACE FUNCTION newsd_sources_notify() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN"
    "  IF EXISTS (SELECT 1 FROM changed) THEN"
    "   UPDATE newsd_meta SET value = (value::bigint + 1)::text WHERE key = 'sources_rev';"
    "   PERFORM pg_notify('newsd_sources', '');"
    "  END IF;"
    "  RETURN NULL;"
    " END $f$;"
    "CREATE OR REPLACE FUNCTION newsd_sources_truncated() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN"
    "  UPDATE newsd_meta SET value = (value::bigint + 1)::text WHERE key = 'sources_rev';"
    "  PERFORM pg_notify('newsd_sources', '');"
    "  RETURN NULL;"
    " END $f$;"
    "CREATE OR REPLACE TRIGGER sources_inserted AFTER INSERT ON sources"
    " REFERENCING NEW TABLE AS changed FOR EACH STATEMENT"
    " EXECUTE FUNCTION newsd_sources_notify();"
    "CREATE OR REPLACE TRIGGER sources_updated AFTER UPDATE ON sources"
    " REFERENCING NEW TABLE AS changed FOR EACH STATEMENT"
    " EXECUTE FUNCTION newsd_sources_notify();"
    "CREATE OR REPLACE TRIGGER sources_deleted AFTER DELETE ON sources"
    " REFERENCING OLD TABLE AS changed FOR EACH STATEMENT"
    " EXECUTE FUNCTION newsd_sources_notify();"
    "CREATE OR REPLACE TRIGGER sources_truncated AFTER TRUNCATE ON sources"
    " FOR EACH STATEMENT EXECUTE FUNCTION newsd_sources_truncated();",
    "CREATE TABLE IF NOT EXISTS keys("
    " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, hash BYTEA UNIQUE NOT NULL,"
    " name TEXT, plan TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0,"
    " created_at BIGINT NOT NULL DEFAULT 0, last_used BIGINT NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS usage("
    " key_id BIGINT NOT NULL REFERENCES keys(id) ON DELETE CASCADE, day BIGINT NOT NULL,"
    " n BIGINT NOT NULL DEFAULT 0, PRIMARY KEY(key_id, day));",
    /* store_usage_take: the key's row lock makes check-and-count one step
     * across nodes; the totals are read under it. */
    "CREATE OR REPLACE FUNCTION newsd_usage_take(k BIGINT, d BIGINT, m BIGINT, lim_d BIGINT,"
    " lim_m BIGINT, t BIGINT, OUT taken BOOLEAN, OUT day_n BIGINT, OUT month_n BIGINT)"
    " LANGUAGE plpgsql AS $f$"
    " BEGIN"
    "  taken := false;"
    "  PERFORM 1 FROM keys WHERE id = k FOR UPDATE;"
    "  IF NOT FOUND THEN day_n := 0; month_n := 0; RETURN; END IF;"
    "  SELECT coalesce(sum(n) FILTER (WHERE day = d), 0), coalesce(sum(n), 0)"
    "   INTO day_n, month_n FROM usage WHERE key_id = k AND day BETWEEN m AND d;"
    "  IF (lim_d > 0 AND day_n >= lim_d) OR (lim_m > 0 AND month_n >= lim_m) THEN RETURN; END IF;"
    "  INSERT INTO usage(key_id, day, n) VALUES (k, d, 1)"
    "   ON CONFLICT (key_id, day) DO UPDATE SET n = usage.n + 1;"
    "  UPDATE keys SET last_used = greatest(last_used, t) WHERE id = k;"
    "  taken := true; day_n := day_n + 1; month_n := month_n + 1;"
    " END $f$;",
    "CREATE TABLE IF NOT EXISTS feeds("
    " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, url TEXT UNIQUE NOT NULL,"
    " source_id TEXT, country TEXT NOT NULL DEFAULT '', category TEXT,"
    " language TEXT NOT NULL DEFAULT '', headline BOOLEAN NOT NULL DEFAULT false, title TEXT,"
    " site_url TEXT, etag TEXT, last_modified TEXT, last_status INTEGER NOT NULL DEFAULT 0,"
    " last_error TEXT, last_fetch_at BIGINT NOT NULL DEFAULT 0,"
    " last_success_at BIGINT NOT NULL DEFAULT 0, last_new_item_at BIGINT NOT NULL DEFAULT 0,"
    " next_fetch_at BIGINT NOT NULL DEFAULT 0, interval_s BIGINT NOT NULL DEFAULT 300,"
    " consecutive_errors BIGINT NOT NULL DEFAULT 0, items_last BIGINT NOT NULL DEFAULT 0,"
    " items_total BIGINT NOT NULL DEFAULT 0, enabled BOOLEAN NOT NULL DEFAULT true,"
    " created_at BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS feeds_due ON feeds(next_fetch_at, id) WHERE enabled;"
    "CREATE TABLE IF NOT EXISTS feed_items("
    " feed_id BIGINT NOT NULL REFERENCES feeds(id) ON DELETE CASCADE, key TEXT NOT NULL,"
    " hash BIGINT NOT NULL, published_at BIGINT NOT NULL, last_seen_at BIGINT NOT NULL,"
    " PRIMARY KEY(feed_id, key));",
    NULL};
/* clang-format on */

/* Per feed, which new items get their page fetched (NULL: the crawler's
 * setting; ingest/crawl.h). */
static const char *const schema_v2[] = {"ALTER TABLE feeds ADD COLUMN IF NOT EXISTS pages TEXT;",
                                        NULL};

/* clang-format off */
static const char *const schema_v3[] = {
    "CREATE TABLE IF NOT EXISTS alerts("
    " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    " key_id BIGINT NOT NULL REFERENCES keys(id) ON DELETE CASCADE,"
    " query TEXT NOT NULL, webhook TEXT NOT NULL, secret TEXT NOT NULL,"
    " created_at BIGINT NOT NULL DEFAULT 0, cursor_seq BIGINT NOT NULL DEFAULT 0,"
    " state INTEGER NOT NULL DEFAULT 0, lease_owner TEXT,"
    " lease_until_ms BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS alerts_by_key ON alerts(key_id);"
    "CREATE TABLE IF NOT EXISTS alert_deliveries("
    " alert_id BIGINT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE, seq BIGINT NOT NULL,"
    " id TEXT UNIQUE NOT NULL, body TEXT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0,"
    " next_ms BIGINT NOT NULL DEFAULT 0, first_failure_ms BIGINT NOT NULL DEFAULT 0,"
    " created_ms BIGINT NOT NULL DEFAULT 0, PRIMARY KEY(alert_id, seq));",
    /* The head a new alert starts from: seq is commit order (pg.h), so
     * what is committed now has a seq at most this. */
    "CREATE OR REPLACE FUNCTION newsd_alert_add(k BIGINT, lim BIGINT, q TEXT, w TEXT, sec TEXT,"
    " t BIGINT, cur BIGINT, st INTEGER) RETURNS BIGINT LANGUAGE plpgsql AS $f$"
    " DECLARE n BIGINT; new_id BIGINT;"
    " BEGIN"
    "  PERFORM 1 FROM keys WHERE id = k FOR UPDATE;"
    "  IF NOT FOUND THEN RETURN -1; END IF;"
    "  IF lim > 0 THEN"
    "   SELECT count(*) INTO n FROM alerts WHERE key_id = k;"
    "   IF n >= lim THEN RETURN -2; END IF;"
    "  END IF;"
    "  IF cur < 0 THEN"
    "   SELECT greatest(coalesce((SELECT max(seq) FROM articles), 0),"
    "                   coalesce((SELECT max(seq) FROM article_tombstones), 0)) INTO cur;"
    "  END IF;"
    "  INSERT INTO alerts(key_id, query, webhook, secret, created_at, cursor_seq, state)"
    "  VALUES (k, q, w, sec, t, cur, st) RETURNING id INTO new_id;"
    "  RETURN new_id;"
    " END $f$;",
    NULL};
/* clang-format on */

static const char *const schema_v4[] = {
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS story_id BIGINT;", NULL};

/* clang-format off */
static const char *const schema_v5[] = {
    "ALTER TABLE alerts ADD COLUMN IF NOT EXISTS dedupe INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE alerts ADD COLUMN IF NOT EXISTS copies BIGINT NOT NULL DEFAULT 0;"
    "CREATE TABLE IF NOT EXISTS alert_stories("
    " alert_id BIGINT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,"
    " story_id BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY(alert_id, story_id));"
    "CREATE INDEX IF NOT EXISTS alert_stories_by_seq ON alert_stories(alert_id, seq);",
    /* version 3's (8 arguments), then dedupe, in the same statement */
    "CREATE OR REPLACE FUNCTION newsd_alert_add(k BIGINT, lim BIGINT, q TEXT, w TEXT, sec TEXT,"
    " t BIGINT, cur BIGINT, st INTEGER, dd INTEGER) RETURNS BIGINT LANGUAGE plpgsql AS $f$"
    " DECLARE new_id BIGINT;"
    " BEGIN"
    "  new_id := newsd_alert_add(k, lim, q, w, sec, t, cur, st);"
    "  IF new_id > 0 AND dd <> 0 THEN UPDATE alerts SET dedupe = dd WHERE id = new_id; END IF;"
    "  RETURN new_id;"
    " END $f$;",
    NULL};
/* clang-format on */

/* Each migration: its statements (each under C's 4095-byte literal limit). */
static const char *const *const migrations[] = {schema_v1, schema_v2, schema_v3, schema_v4,
                                                schema_v5};
#define SCHEMA_VERSION ((int64_t)(sizeof migrations / sizeof migrations[0]))

int64_t store_pg_schema_version(void)
{
    return SCHEMA_VERSION;
}

/* One migration step from `from` in a transaction, unless another node did
 * it meanwhile (re-read under the lock). The first step records the
 * version found in *schema; one that would change an existing schema is
 * refused (ERR_OUTDATED) unless migrate. */
static int migrate_step(PGconn *c, int64_t from, bool migrate, bool read_outdated,
                        struct store_schema *schema, bool *done, struct err *err)
{
    PGresult *r = NULL;
    int64_t version = 0;
    char v[24];
    int rc;

    *done = false;
    if ((rc = store_pg_exec(c, "BEGIN", err)) < 0)
        return rc;
    r = PQexec(c, "SELECT value FROM newsd_meta WHERE key = 'schema_version'");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = store_pg_fail(c, r, err);
        goto out;
    }
    if (PQntuples(r) > 0)
        version = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    r = NULL;
    if (version > SCHEMA_VERSION) {
        rc = err_set(err, ERR_UNSUPPORTED,
                     "store schema version %lld is newer than this newsd supports (%lld)",
                     (long long)version, (long long)SCHEMA_VERSION);
        goto out;
    }
    if (from == 0)
        *schema = (struct store_schema){.opened = version, .current = version};
    if (version != from) {
        *done = version >= SCHEMA_VERSION;
        goto out;
    }
    /* What this open found decides (schema->opened): a new store is given
     * every step, each in its own transaction. */
    if (schema->opened > 0 && !migrate && read_outdated) {
        *done = true; /* left as it is (store_options.read_outdated) */
        goto out;
    }
    if (schema->opened > 0 && !migrate) {
        rc = err_set(err, ERR_OUTDATED, "store schema version %lld needs migrating to %lld",
                     (long long)version, (long long)SCHEMA_VERSION);
        goto out;
    }
    for (const char *const *part = migrations[from]; *part; part++) {
        if ((rc = store_pg_exec(c, *part, err)) < 0)
            goto out;
    }
    /* The version is a number the program made: no outside value in SQL. */
    snprintf(v, sizeof v, "%lld", (long long)(from + 1));
    const char *vals[1] = {v};
    r = PQexecParams(c,
                     "INSERT INTO newsd_meta(key, value) VALUES ('schema_version', $1)"
                     " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                     1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = store_pg_fail(c, r, err);
        r = NULL;
        goto out;
    }
    PQclear(r);
    r = NULL;
    schema->current = from + 1;
    *done = from + 1 >= SCHEMA_VERSION;
out:
    PQclear(r);
    if (rc == 0)
        return store_pg_exec(c, "COMMIT", err);
    r = PQexec(c, "ROLLBACK");
    PQclear(r);
    return rc;
}

/* Bring the schema to SCHEMA_VERSION under the migration lock (an
 * existing one only when migrate). */
static int schema_migrate(const char *uri, const struct store_options *opt,
                          struct store_schema *schema, struct err *err);

/* The migration a node started without PostgreSQL owes (store_options
 * start_unreachable, which only `newsd serve` sets, and serve migrates),
 * run at its first connection. */
static int schema_migrate_deferred(const char *uri, struct err *err)
{
    static const struct store_options serve = {.migrate = true};
    struct store_schema schema;
    return schema_migrate(uri, &serve, &schema, err);
}

static int schema_migrate(const char *uri, const struct store_options *opt,
                          struct store_schema *schema, struct err *err)
{
    PGconn *c = NULL;
    PGresult *r = NULL;
    bool locked = false, done = false;
    int rc;

    if ((rc = store_pg_connect(&c, uri, err)) < 0)
        return rc;
    /* Quiet the NOTICEs of IF NOT EXISTS. */
    if ((rc = store_pg_exec(c, "SET client_min_messages = warning", err)) < 0)
        goto out;
    if ((rc = store_pg_exec(c, "SELECT pg_advisory_lock(" STORE_PG_LOCK_MIGRATE ")", err)) < 0)
        goto out;
    locked = true;
    rc = store_pg_exec(c,
                       "CREATE TABLE IF NOT EXISTS newsd_meta("
                       "key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                       err);
    if (rc < 0)
        goto out;
    for (int64_t v = 0; v < SCHEMA_VERSION && !done && rc == 0; v++)
        rc = migrate_step(c, v, opt->migrate, opt->read_outdated, schema, &done, err);
    if (rc == 0 && SCHEMA_VERSION == 0)
        done = true;
out:
    if (locked && PQstatus(c) == CONNECTION_OK) {
        r = PQexec(c, "SELECT pg_advisory_unlock(" STORE_PG_LOCK_MIGRATE ")");
        PQclear(r);
    }
    PQfinish(c);
    return rc;
}

static void pg_free(struct store_backend *b)
{
    struct store_pg *s = (struct store_pg *)b;
    if (s == NULL)
        return;
    store_pg_sources_release(s);
    store_pg_keys_release(s);
    pthread_mutex_destroy(&s->sources_mu);
    pthread_mutex_destroy(&s->keys_mu);
    store_pg_pool_release(&s->pool);
    free(s);
}

/* A node's index reads a local replica that a thread keeps in step with
 * this store's article log (store/journal.c starts it). */
static const char *pg_replica_origin(const struct store_backend *b, bool *offline_ok)
{
    const struct store_pg *s = (const struct store_pg *)b;
    *offline_ok = s->start_unreachable;
    return s->pool.uri;
}

int store_pg_new(struct store_backend **out, const char *uri, const struct store_options *opt,
                 struct err *err)
{
    struct store_pg *s = NULL;
    int rc;

    *out = NULL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    s->base = (struct store_backend){
        .kind = "pg",
        .free = pg_free,
        .sqlite_path = NULL,
        .replica_origin = pg_replica_origin,
        .usage_take = store_pg_usage_take,
        STORE_BACKEND_OPS(STORE_BACKEND_ENTRY, pg) /* each entry with its comma */
    };
    pthread_mutex_init(&s->sources_mu, NULL);
    pthread_mutex_init(&s->keys_mu, NULL);
    arena_init(&s->sources.arena, 0);
    if ((rc = store_pg_pool_init(&s->pool, uri, err)) < 0)
        goto out;
    s->start_unreachable = opt->start_unreachable;
    s->pool.migrate = schema_migrate_deferred;
    if ((rc = schema_migrate(uri, opt, &s->base.schema, err)) == ERR_BUSY &&
        opt->start_unreachable) {
        /* Down or not there yet (a restart of both, a unit ordering that
         * cannot wait): the node starts and says so; the first connection
         * that works migrates. */
        log_warn("PostgreSQL is unreachable: %s; starting without it (not ready until it is "
                 "back)",
                 err_msg(err, rc));
        s->pool.migrate_pending = true;
        err_clear(err);
        rc = 0;
    }
    if (rc < 0)
        goto out;
    *out = &s->base;
    s = NULL;
out:
    if (s)
        pg_free(&s->base);
    return rc;
}
