/* Private to src/store/: the backend vtable behind store.h (after libgit2's
 * odb_backend.h). store.c checks arguments common to every backend and
 * forwards; a backend embeds struct store_backend as its first member and
 * implements each operation with store.h's contract. Every operation may be
 * called from several threads at once. */
#ifndef NEWSD_STORE_BACKEND_H
#define NEWSD_STORE_BACKEND_H

#include "store/store.h"

/* The operations both backends implement, each X(kind, name, (parameters))
 * with an int result: written once here for the vtable's members
 * (STORE_BACKEND_MEMBER), each backend's prototypes of its
 * store_<kind>_<name> (STORE_BACKEND_DECLARE, its internal.h) and its vtable
 * entries (STORE_BACKEND_ENTRY), so that the three cannot drift apart. The
 * operations only one backend has are members of their own below. */
/* clang-format off */
#define STORE_BACKEND_OPS(X, kind)                                                                 \
    /* articles (store.h) */                                                                       \
    X(kind, articles_put,                                                                          \
      (struct store_backend *b, struct article *arts, size_t n, struct store_put_stats *stats,     \
       struct err *err))                                                                           \
    X(kind, articles_count, (struct store_backend *b, int64_t *out, struct err *err))              \
    /* The articles published at most window_s before the newest stored                            \
     * one, oldest first, each passed to fn with canonical_url, title,                             \
     * description, content, published_at and story_id set (0 when stored                          \
     * before stories); fn's non-zero return stops and is returned. What a                         \
     * process's story window starts from (store.c). */                                            \
    X(kind, stories_window,                                                                        \
      (struct store_backend *b, int64_t window_s, int (*fn)(void *ctx, const struct article *a),   \
       void *ctx, struct err *err))                                                                \
    X(kind, articles_delete,                                                                       \
      (struct store_backend *b, const struct store_delete_filter *f, size_t max,                   \
       int64_t *deleted, struct err *err))                                                         \
    /* sources */                                                                                  \
    X(kind, sources_put,                                                                           \
      (struct store_backend *b, const struct source *src, size_t n, struct err *err))              \
    X(kind, sources_ensure,                                                                        \
      (struct store_backend *b, const char *const *ids, const char *const *names, size_t n,        \
       struct err *err))                                                                           \
    X(kind, sources_list,                                                                          \
      (struct store_backend *b, struct arena *a, const struct source_filter *f,                    \
       struct source **out, size_t *n_out, struct err *err))                                       \
    X(kind, source_get,                                                                            \
      (struct store_backend *b, struct arena *a, const char *id, struct source *out,               \
       struct err *err))                                                                           \
    /* feeds */                                                                                    \
    X(kind, feed_add,                                                                              \
      (struct store_backend *b, const struct feed_record *f, int64_t *id_out, struct err *err))    \
    X(kind, feeds_list,                                                                            \
      (struct store_backend *b, struct arena *a, struct feed_record **out, size_t *n_out,          \
       struct err *err))                                                                           \
    X(kind, feed_get,                                                                              \
      (struct store_backend *b, struct arena *a, int64_t id, struct feed_record *out,              \
       struct err *err))                                                                           \
    X(kind, feed_remove, (struct store_backend *b, int64_t id, struct err *err))                   \
    X(kind, feed_change,                                                                           \
      (struct store_backend *b, int64_t id, const struct feed_change *c, struct err *err))         \
    X(kind, feeds_due,                                                                             \
      (struct store_backend *b, struct arena *a, int64_t now, size_t max,                          \
       struct feed_record **out, size_t *n_out, struct err *err))                                  \
    X(kind, feeds_claim,                                                                           \
      (struct store_backend *b, const int64_t *ids, size_t n, int64_t now, int64_t until,          \
       bool *claimed, struct err *err))                                                            \
    X(kind, feed_schedule,                                                                         \
      (struct store_backend *b, int64_t id, int64_t next_fetch_at, struct err *err))               \
    X(kind, feed_fetch_record,                                                                     \
      (struct store_backend *b, int64_t id, const struct feed_fetch_outcome *o, struct err *err))  \
    X(kind, feed_items_get,                                                                        \
      (struct store_backend *b, int64_t id, struct feed_item_mark *marks, size_t n,                \
       struct err *err))                                                                           \
    /* keys and their usage */                                                                     \
    X(kind, key_insert,                                                                            \
      (struct store_backend *b, const struct key_record *k, int64_t *id_out, struct err *err))     \
    X(kind, key_find,                                                                              \
      (struct store_backend *b, struct arena *a, const unsigned char hash[32],                     \
       struct key_record *out, struct err *err))                                                   \
    X(kind, keys_list,                                                                             \
      (struct store_backend *b, struct arena *a, struct key_record **out, size_t *n_out,           \
       struct err *err))                                                                           \
    X(kind, key_update,                                                                            \
      (struct store_backend *b, int64_t id, const char *plan, int state, struct err *err))         \
    X(kind, key_delete, (struct store_backend *b, int64_t id, struct err *err))                    \
    X(kind, usage_add,                                                                             \
      (struct store_backend *b, int64_t key_id, int64_t day, int64_t n, int64_t last_used,         \
       struct err *err))                                                                           \
    X(kind, usage_sum,                                                                             \
      (struct store_backend *b, int64_t key_id, int64_t day_from, int64_t day_to, int64_t *out,    \
       struct err *err))                                                                           \
    /* alerts */                                                                                   \
    X(kind, alert_add,                                                                             \
      (struct store_backend *b, const struct alert_record *a, int64_t max_per_key,                 \
       int64_t *id_out, struct err *err))                                                          \
    X(kind, alerts_list,                                                                           \
      (struct store_backend *b, struct arena *a, int64_t key_id, struct alert_record **out,        \
       size_t *n_out, struct err *err))                                                            \
    X(kind, alert_remove, (struct store_backend *b, int64_t id, int64_t key_id, struct err *err))  \
    X(kind, alerts_lease,                                                                          \
      (struct store_backend *b, struct arena *a, const char *owner, int64_t now_ms,                \
       int64_t until_ms, struct alert_record **out, size_t *n_out, struct err *err))               \
    X(kind, alerts_release, (struct store_backend *b, const char *owner, struct err *err))         \
    X(kind, alert_advance,                                                                         \
      (struct store_backend *b, int64_t alert_id, const char *owner, int64_t from_seq,             \
       int64_t to_seq, int64_t copies, const struct alert_delivery *d, struct err *err))           \
    X(kind, alert_deliveries,                                                                      \
      (struct store_backend *b, struct arena *a, int64_t alert_id, size_t max,                     \
       struct alert_delivery **out, size_t *n_out, struct err *err))                               \
    X(kind, alert_delivery_done,                                                                   \
      (struct store_backend *b, int64_t alert_id, const char *id, struct err *err))                \
    X(kind, alert_delivery_failed,                                                                 \
      (struct store_backend *b, int64_t alert_id, const char *id, int64_t attempts,                \
       int64_t next_ms, int64_t first_failure_ms, struct err *err))                                \
    X(kind, alert_deliveries_count, (struct store_backend *b, int64_t *out, struct err *err))      \
    X(kind, alert_stories,                                                                         \
      (struct store_backend *b, struct arena *a, int64_t alert_id, int64_t **out, size_t *n_out,   \
       struct err *err))
/* clang-format on */

#define STORE_BACKEND_MEMBER(kind, name, params) int(*name) params;
#define STORE_BACKEND_DECLARE(kind, name, params) int store_##kind##_##name params;
#define STORE_BACKEND_ENTRY(kind, name, params) .name = store_##kind##_##name,

struct store_backend {
    const char *kind;           /* "sqlite", "pg" */
    struct store_schema schema; /* filled by the backend's open */
    void (*free)(struct store_backend *b);
    /* The store's own SQLite file, which is also its journal (store/journal.h);
     * NULL: not SQLite. */
    const char *(*sqlite_path)(const struct store_backend *b);
    /* The URI of the store a node-local replica of the journal follows
     * (journal.c starts its replication, store/replicate.h), and whether
     * it may start while the store cannot be reached; NULL: a store
     * without a replica (sqlite_path). Data only: a backend never opens
     * the journal or starts the replication itself. */
    const char *(*replica_origin)(const struct store_backend *b, bool *offline_ok);
    /* NULL: the backend has its own tools (pg_dump) */
    int (*backup)(struct store_backend *b, const char *dest, struct err *err);
    STORE_BACKEND_OPS(STORE_BACKEND_MEMBER, _)

    /* Up to max articles with id > after, ascending id (publication
     * order), each passed to fn as stories_window passes them, with id
     * set too; *last: the id of the last one passed (after when none).
     * What store_stories_backfill replays. */
    int (*stories_scan)(struct store_backend *b, int64_t after, size_t max,
                        int (*fn)(void *ctx, const struct article *a), void *ctx, int64_t *last,
                        struct err *err);
    /* Give each article ids[i] that still has no story stories[i], in one
     * transaction, in place: no new seq, so no index re-reads the row and
     * no webhook alert or live stream is sent it again (the story is no
     * index's data: docs/stories.md "Backfill"); *set: the rows changed.
     * NULL with stories_scan: the backend cannot backfill (PostgreSQL, whose
     * nodes learn a row's change only from a new entry of its log). */
    int (*stories_fill)(struct store_backend *b, const int64_t *ids, const int64_t *stories,
                        size_t n, int64_t *set, struct err *err);
    /* NULL: the backend gives space back by itself (PostgreSQL's autovacuum) */
    int (*space_release)(struct store_backend *b, int64_t max_pages, int64_t *left,
                         struct err *err);
    int (*space_incremental)(struct store_backend *b, bool *on, struct err *err);
    int (*compact)(struct store_backend *b, struct err *err);
    /* NULL: the backend has no full-text side (store_fulltext_set) */
    int (*fulltext_get)(struct store_backend *b, bool *on, struct err *err);
    int (*fulltext_set)(struct store_backend *b, bool on, struct err *err);

    /* NULL: the backend is not shared between processes (store_usage_take). */
    int (*usage_take)(struct store_backend *b, int64_t key_id, int64_t day, int64_t month_from,
                      int64_t limit_day, int64_t limit_month, int64_t last_used, bool *taken,
                      int64_t *day_n, int64_t *month_n, struct err *err);
};

/* The backend of s (for the root's other files: journal.c). */
struct store_backend *store_backend_get(struct store *s);

/* The embedded store in directory dir (created, mode 0700, when missing;
 * its parent must exist; with the FTS5 side when opt->fulltext_when_new;
 * migrated only when opt->migrate, else ERR_OUTDATED). */
int store_sqlite_new(struct store_backend **out, const char *dir, const struct store_options *opt,
                     struct err *err);
/* The schema version store_sqlite_new writes. */
int64_t store_sqlite_schema_version(void);

/* The PostgreSQL store at a postgresql:// (or postgres://) URI: connect,
 * create or migrate the schema (under an advisory lock, so nodes starting
 * together migrate once). ERR_BUSY when the server cannot be reached,
 * unless opt->start_unreachable: then the migration waits for the first
 * connection, and the node's replica starts from what it holds. */
int store_pg_new(struct store_backend **out, const char *uri, const struct store_options *opt,
                 struct err *err);
/* The schema version store_pg_new writes. */
int64_t store_pg_schema_version(void);

#endif
