/* store.h dispatcher: picks the backend from the location and forwards
 * every call to it (store/backend.h). */
#include "store/store.h"
#include "store/backend.h"
#include "store/sqlite/db.h"
#include "store/stories.h"
#include "util/urlview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/banned.h"

struct store {
    struct store_backend *be;
    struct store_stories *stories; /* the story of each article put */
};

bool store_location_is_pg(const char *loc)
{
    return strncasecmp(loc, "postgresql://", 13) == 0 || strncasecmp(loc, "postgres://", 11) == 0;
}

char *store_location_redacted(const char *loc, char *buf, size_t n)
{
    /* A path is shown as it is; a URI through the one redaction. */
    if (loc && !store_location_is_pg(loc)) {
        if (n > 0)
            snprintf(buf, n, "%s", loc);
        return buf;
    }
    return urlview_redacted(loc, URLVIEW_REDACT_PASSWORDS, buf, n);
}

int store_sqlite_path_at(const char *loc, char *out, size_t n, struct err *err)
{
    if (store_location_is_pg(loc))
        return err_set(err, ERR_INVALID, "a PostgreSQL store has no database file");
    if ((size_t)snprintf(out, n, "%s/%s", loc, STORE_SQLITE_FILE) >= n)
        return err_set(err, ERR_INVALID, "store path too long");
    return 0;
}

int store_open(struct store **out, const char *loc, struct err *err)
{
    return store_open_with(out, loc, NULL, err);
}

int store_open_with(struct store **out, const char *loc, const struct store_options *opt,
                    struct err *err)
{
    static const struct store_options defaults = {.fulltext_when_new = true, .migrate = true};
    struct store *s = NULL;
    struct store_backend *be = NULL;
    int rc;

    *out = NULL;
    if (loc == NULL || loc[0] == '\0') {
        rc = err_set(err, ERR_INVALID, "empty store location");
        goto out;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if (!opt)
        opt = &defaults;
    if (store_location_is_pg(loc))
        rc = store_pg_new(&be, loc, opt, err);
    else
        rc = store_sqlite_new(&be, loc, opt, err);
    if (rc < 0)
        goto out;
    if ((rc = store_stories_new(&s->stories, err)) < 0) {
        be->free(be);
        goto out;
    }
    s->be = be;
    *out = s;
    s = NULL;
out:
    free(s);
    return rc;
}

void store_close(struct store *s)
{
    if (s == NULL)
        return;
    store_stories_free(s->stories);
    s->be->free(s->be);
    free(s);
}

void store_schema_get(const struct store *s, struct store_schema *out)
{
    *out = s->be->schema;
}

int64_t store_schema_version(const char *kind)
{
    if (strcmp(kind, "sqlite") == 0)
        return store_sqlite_schema_version();
    if (strcmp(kind, "pg") == 0)
        return store_pg_schema_version();
    return 0;
}

const char *store_kind(const struct store *s)
{
    return s->be->kind;
}

const char *store_sqlite_path(const struct store *s)
{
    return s->be->sqlite_path ? s->be->sqlite_path(s->be) : NULL;
}

struct store_backend *store_backend_get(struct store *s)
{
    return s->be;
}

int store_articles_put(struct store *s, struct article *arts, size_t n,
                       struct store_put_stats *stats, struct err *err)
{
    return store_articles_put_prepared(s, arts, NULL, n, stats, err);
}

int store_articles_put_prepared(struct store *s, struct article *arts,
                                const struct story_prep *preps, size_t n,
                                struct store_put_stats *stats, struct err *err)
{
    if (stats) {
        stats->inserted = 0;
        stats->updated = 0;
    }
    if (n == 0)
        return 0;
    if (arts == NULL)
        return err_set(err, ERR_INVALID, "no articles");
    /* Checked before a story is assigned: an article refused here never
     * enters the story window (the backends store what passes). */
    for (size_t i = 0; i < n; i++) {
        if (arts[i].canonical_url == NULL || arts[i].canonical_url[0] == '\0')
            return err_set(err, ERR_INVALID, "article %zu has no canonical url", i);
        if (arts[i].published_at < STORE_ID_TIME_MIN || arts[i].published_at > STORE_ID_TIME_MAX)
            return err_set(err, ERR_INVALID, "article %zu has an out-of-range publication time", i);
    }
    int rc = store_stories_assign(s->stories, s->be, arts, preps, n, err);
    if (rc < 0)
        return rc;
    return s->be->articles_put(s->be, arts, n, stats, err);
}

void store_stories_similarity_set(struct store *s, int64_t percent)
{
    store_stories_similarity(s->stories, percent);
}

void store_stories_window_set(struct store *s, int64_t days)
{
    store_stories_window_days(s->stories, days);
}

int store_stories_backfill(struct store *s, size_t batch, struct store_backfill_stats *stats,
                           struct err *err)
{
    return store_stories_backfill_run(s->stories, s->be, batch, stats, err);
}

int store_backup(struct store *s, const char *dest, struct err *err)
{
    if (s->be->backup == NULL)
        return err_set(err, ERR_UNSUPPORTED,
                       "a %s store is backed up with its own tools (for PostgreSQL: pg_dump)",
                       s->be->kind);
    return s->be->backup(s->be, dest, err);
}

int store_fulltext_get(struct store *s, bool *on, struct err *err)
{
    *on = false;
    if (s->be->fulltext_get == NULL)
        return err_set(err, ERR_UNSUPPORTED, "a %s store has no full-text side", s->be->kind);
    return s->be->fulltext_get(s->be, on, err);
}

int store_fulltext_set(struct store *s, bool on, struct err *err)
{
    if (s->be->fulltext_set == NULL)
        return err_set(err, ERR_UNSUPPORTED, "a %s store has no full-text side", s->be->kind);
    return s->be->fulltext_set(s->be, on, err);
}

int store_articles_count(struct store *s, int64_t *out, struct err *err)
{
    return s->be->articles_count(s->be, out, err);
}

int store_articles_delete(struct store *s, const struct store_delete_filter *f, size_t max,
                          int64_t *deleted, struct err *err)
{
    static const struct store_delete_filter all = {0};
    *deleted = 0;
    if (max == 0)
        return 0;
    return s->be->articles_delete(s->be, f ? f : &all, max, deleted, err);
}

int store_space_release(struct store *s, int64_t max_pages, int64_t *left, struct err *err)
{
    if (left)
        *left = 0;
    if (s->be->space_release == NULL || max_pages <= 0)
        return 0;
    return s->be->space_release(s->be, max_pages, left, err);
}

int store_space_incremental(struct store *s, bool *on, struct err *err)
{
    *on = true;
    if (s->be->space_incremental == NULL)
        return 0;
    return s->be->space_incremental(s->be, on, err);
}

int store_compact(struct store *s, struct err *err)
{
    if (s->be->compact == NULL)
        return err_set(err, ERR_UNSUPPORTED,
                       "a %s store is compacted by its own tools (PostgreSQL: VACUUM FULL)",
                       s->be->kind);
    return s->be->compact(s->be, err);
}

int store_sources_put(struct store *s, const struct source *src, size_t n, struct err *err)
{
    if (n == 0)
        return 0;
    if (src == NULL)
        return err_set(err, ERR_INVALID, "no sources");
    return s->be->sources_put(s->be, src, n, err);
}

int store_sources_ensure(struct store *s, const char *const *ids, const char *const *names,
                         size_t n, struct err *err)
{
    if (n == 0)
        return 0;
    if (ids == NULL)
        return err_set(err, ERR_INVALID, "no source ids");
    return s->be->sources_ensure(s->be, ids, names, n, err);
}

int store_sources_list(struct store *s, struct arena *a, const struct source_filter *f,
                       struct source **out, size_t *n_out, struct err *err)
{
    static const struct source_filter none = {0};
    *out = NULL;
    *n_out = 0;
    return s->be->sources_list(s->be, a, f ? f : &none, out, n_out, err);
}

int store_source_get(struct store *s, struct arena *a, const char *id, struct source *out,
                     struct err *err)
{
    if (id == NULL)
        return err_set(err, ERR_NOTFOUND, "no such source");
    return s->be->source_get(s->be, a, id, out, err);
}

/* --- feeds ------------------------------------------------------------- */

int store_feed_add(struct store *s, const struct feed_record *f, int64_t *id_out, struct err *err)
{
    if (f == NULL || f->url == NULL || f->url[0] == '\0')
        return err_set(err, ERR_INVALID, "a feed needs a url");
    return s->be->feed_add(s->be, f, id_out, err);
}

int store_feeds_list(struct store *s, struct arena *a, struct feed_record **out, size_t *n_out,
                     struct err *err)
{
    *out = NULL;
    *n_out = 0;
    return s->be->feeds_list(s->be, a, out, n_out, err);
}

int store_feed_get(struct store *s, struct arena *a, int64_t id, struct feed_record *out,
                   struct err *err)
{
    return s->be->feed_get(s->be, a, id, out, err);
}

int store_feed_remove(struct store *s, int64_t id, struct err *err)
{
    return s->be->feed_remove(s->be, id, err);
}

int store_feed_change(struct store *s, int64_t id, const struct feed_change *c, struct err *err)
{
    if (c == NULL || c->headline < -1 || c->headline > 1 || c->enabled < -1 || c->enabled > 1 ||
        c->interval_s < 0)
        return err_set(err, ERR_INVALID, "no valid feed change");
    return s->be->feed_change(s->be, id, c, err);
}

int store_feeds_due(struct store *s, struct arena *a, int64_t now, size_t max,
                    struct feed_record **out, size_t *n_out, struct err *err)
{
    *out = NULL;
    *n_out = 0;
    if (max == 0)
        return 0;
    return s->be->feeds_due(s->be, a, now, max, out, n_out, err);
}

int store_feeds_claim(struct store *s, const int64_t *ids, size_t n, int64_t now, int64_t until,
                      bool *claimed, struct err *err)
{
    if (n == 0)
        return 0;
    if (ids == NULL || claimed == NULL)
        return err_set(err, ERR_INVALID, "no feeds to claim");
    if (until <= now)
        return err_set(err, ERR_INVALID, "a claim must end after now");
    return s->be->feeds_claim(s->be, ids, n, now, until, claimed, err);
}

int store_feed_schedule(struct store *s, int64_t id, int64_t next_fetch_at, struct err *err)
{
    return s->be->feed_schedule(s->be, id, next_fetch_at, err);
}

int store_feed_fetch_record(struct store *s, int64_t id, const struct feed_fetch_outcome *o,
                            struct err *err)
{
    if (o == NULL || (o->n_marks > 0 && o->marks == NULL))
        return err_set(err, ERR_INVALID, "no fetch outcome");
    return s->be->feed_fetch_record(s->be, id, o, err);
}

int store_feed_items_get(struct store *s, int64_t id, struct feed_item_mark *marks, size_t n,
                         struct err *err)
{
    if (n == 0)
        return 0;
    if (marks == NULL)
        return err_set(err, ERR_INVALID, "no items");
    return s->be->feed_items_get(s->be, id, marks, n, err);
}

int store_key_insert(struct store *s, const struct key_record *k, int64_t *id_out, struct err *err)
{
    if (k == NULL || k->plan == NULL)
        return err_set(err, ERR_INVALID, "a key needs a plan");
    return s->be->key_insert(s->be, k, id_out, err);
}

int store_key_find(struct store *s, struct arena *a, const unsigned char hash[32],
                   struct key_record *out, struct err *err)
{
    return s->be->key_find(s->be, a, hash, out, err);
}

int store_keys_list(struct store *s, struct arena *a, struct key_record **out, size_t *n_out,
                    struct err *err)
{
    *out = NULL;
    *n_out = 0;
    return s->be->keys_list(s->be, a, out, n_out, err);
}

int store_key_update(struct store *s, int64_t id, const char *plan, int state, struct err *err)
{
    if (state != -1 && state != KEY_ACTIVE && state != KEY_DISABLED)
        return err_set(err, ERR_INVALID, "invalid key state %d", state);
    return s->be->key_update(s->be, id, plan, state, err);
}

int store_key_delete(struct store *s, int64_t id, struct err *err)
{
    return s->be->key_delete(s->be, id, err);
}

int store_usage_add(struct store *s, int64_t key_id, int64_t day, int64_t n, int64_t last_used,
                    struct err *err)
{
    return s->be->usage_add(s->be, key_id, day, n, last_used, err);
}

int store_usage_sum(struct store *s, int64_t key_id, int64_t day_from, int64_t day_to, int64_t *out,
                    struct err *err)
{
    return s->be->usage_sum(s->be, key_id, day_from, day_to, out, err);
}

int store_usage_take(struct store *s, int64_t key_id, int64_t day, int64_t month_from,
                     int64_t limit_day, int64_t limit_month, int64_t last_used, bool *taken,
                     int64_t *day_n, int64_t *month_n, struct err *err)
{
    *taken = false;
    *day_n = 0;
    *month_n = 0;
    if (s->be->usage_take == NULL)
        return err_set(err, ERR_UNSUPPORTED, "the %s store counts usage per process", s->be->kind);
    return s->be->usage_take(s->be, key_id, day, month_from, limit_day, limit_month, last_used,
                             taken, day_n, month_n, err);
}

/* --- alerts ------------------------------------------------------------- */

int store_alert_add(struct store *s, const struct alert_record *a, int64_t max_per_key,
                    int64_t *id_out, struct err *err)
{
    if (a == NULL || a->key_id <= 0 || a->query == NULL || a->webhook == NULL || a->secret == NULL)
        return err_set(err, ERR_INVALID, "an alert needs a key, a query, a webhook and a secret");
    return s->be->alert_add(s->be, a, max_per_key, id_out, err);
}

int store_alerts_list(struct store *s, struct arena *a, int64_t key_id, struct alert_record **out,
                      size_t *n_out, struct err *err)
{
    *out = NULL;
    *n_out = 0;
    return s->be->alerts_list(s->be, a, key_id, out, n_out, err);
}

int store_alert_remove(struct store *s, int64_t id, int64_t key_id, struct err *err)
{
    return s->be->alert_remove(s->be, id, key_id, err);
}

int store_alerts_lease(struct store *s, struct arena *a, const char *owner, int64_t now_ms,
                       int64_t until_ms, struct alert_record **out, size_t *n_out, struct err *err)
{
    *out = NULL;
    *n_out = 0;
    if (owner == NULL || owner[0] == '\0' || until_ms <= now_ms)
        return err_set(err, ERR_INVALID, "a lease needs an owner and an end after now");
    return s->be->alerts_lease(s->be, a, owner, now_ms, until_ms, out, n_out, err);
}

int store_alerts_release(struct store *s, const char *owner, struct err *err)
{
    if (owner == NULL || owner[0] == '\0')
        return err_set(err, ERR_INVALID, "no lease owner");
    return s->be->alerts_release(s->be, owner, err);
}

int store_alert_advance(struct store *s, int64_t alert_id, const char *owner, int64_t from_seq,
                        int64_t to_seq, int64_t copies, const struct alert_delivery *d,
                        struct err *err)
{
    if (owner == NULL)
        return err_set(err, ERR_INVALID, "no lease owner");
    if (d && (d->id == NULL || d->body == NULL))
        return err_set(err, ERR_INVALID, "a delivery needs an id and a body");
    if (d)
        to_seq = d->seq;
    if (to_seq < from_seq)
        return err_set(err, ERR_INVALID, "an alert's cursor only moves forward");
    if (copies < 0)
        return err_set(err, ERR_INVALID, "an alert's count of copies only grows");
    return s->be->alert_advance(s->be, alert_id, owner, from_seq, to_seq, copies, d, err);
}

int store_alert_deliveries(struct store *s, struct arena *a, int64_t alert_id, size_t max,
                           struct alert_delivery **out, size_t *n_out, struct err *err)
{
    *out = NULL;
    *n_out = 0;
    if (max == 0)
        return 0;
    return s->be->alert_deliveries(s->be, a, alert_id, max, out, n_out, err);
}

int store_alert_delivery_done(struct store *s, int64_t alert_id, const char *id, struct err *err)
{
    if (id == NULL)
        return err_set(err, ERR_INVALID, "no delivery id");
    return s->be->alert_delivery_done(s->be, alert_id, id, err);
}

int store_alert_delivery_failed(struct store *s, int64_t alert_id, const char *id, int64_t attempts,
                                int64_t next_ms, int64_t first_failure_ms, struct err *err)
{
    if (id == NULL)
        return err_set(err, ERR_INVALID, "no delivery id");
    return s->be->alert_delivery_failed(s->be, alert_id, id, attempts, next_ms, first_failure_ms,
                                        err);
}

int store_alert_deliveries_count(struct store *s, int64_t *out, struct err *err)
{
    *out = 0;
    return s->be->alert_deliveries_count(s->be, out, err);
}

int store_alert_stories(struct store *s, struct arena *a, int64_t alert_id, int64_t **out,
                        size_t *n_out, struct err *err)
{
    *out = NULL;
    *n_out = 0;
    return s->be->alert_stories(s->be, a, alert_id, out, n_out, err);
}
