/* The state of newsd: articles (with an ingest sequence), sources, feeds,
 * keys and usage (DESIGN.md). One opaque handle, backends chosen by location: a
 * directory is the embedded SQLite store (store/sqlite/), a postgresql://
 * URI the cluster store (store/pg/). What a search index reads of it is
 * store/journal.h. Every function is safe to call
 * from several threads at once; writes are serialised by the backend.
 * Strings returned through an arena are owned by that arena. */
#ifndef NEWSD_STORE_STORE_H
#define NEWSD_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

struct store;

/* An article as stored. Strings may be NULL where API.md §3 allows null. */
struct article {
    int64_t id;            /* time-ordered: published_at << 20 | n; set by the store */
    int64_t seq;           /* ingest sequence; set by the store */
    const char *source_id; /* NULL when the publisher is not in the catalogue */
    const char *source_name;
    const char *author;
    const char *title;
    const char *description;
    const char *url; /* as imported */
    const char *url_to_image;
    int64_t published_at;      /* UTC seconds */
    const char *content;       /* whole; the API truncates on output */
    const char *canonical_url; /* duplicate key (ingest/ computes it) */
    const char *domain;        /* host without www., lower case */
    char language[3];          /* "" unknown */
    char country[3];           /* "" none */
    const char *category;      /* NULL none */
    bool headline;             /* shown by /v2/top-headlines */
    int64_t ingested_at;
    /* The story it belongs to (story/assign.h): store_articles_put assigns
     * it when 0; read back as stored (0 for an article stored before
     * stories, whose story is then story_id_for_url of its canonical url). */
    int64_t story_id;
};

/* Article ids: time in the high bits so newest-first is id-descending. */
#define STORE_ID_SHIFT 20
#define STORE_ID_MIN_FOR_TIME(t) ((int64_t)(t) * ((int64_t)1 << STORE_ID_SHIFT))
#define STORE_ID_MAX_FOR_TIME(t) (STORE_ID_MIN_FOR_TIME(t) + (((int64_t)1 << STORE_ID_SHIFT) - 1))
/* published_at range whose ids fit in an int64 (±139,000 years). */
#define STORE_ID_TIME_MIN (-((int64_t)1 << 42))
#define STORE_ID_TIME_MAX (((int64_t)1 << 42) - 1)

/* Smallest / largest article id of second t, clamped to int64 (for open
 * bounds such as INT64_MIN / INT64_MAX): a time window as an id range.
 * Inline: the backends use them too, and they call nothing above them. */
static inline int64_t store_id_lo(int64_t t)
{
    if (t < STORE_ID_TIME_MIN)
        return INT64_MIN;
    if (t > STORE_ID_TIME_MAX)
        return INT64_MAX;
    return STORE_ID_MIN_FOR_TIME(t);
}

/* The second an article id was given in: its published_at (an id is
 * always in its article's second: sqlite/articles.c, pg/articles.c), the
 * inverse of STORE_ID_MIN_FOR_TIME, rounding down for times before 1970. */
static inline int64_t store_id_time(int64_t id)
{
    int64_t per = (int64_t)1 << STORE_ID_SHIFT;
    return (id - (id < 0 ? per - 1 : 0)) / per;
}

static inline int64_t store_id_hi(int64_t t)
{
    int64_t lo = store_id_lo(t);
    return lo == INT64_MIN || lo == INT64_MAX ? lo : STORE_ID_MAX_FOR_TIME(t);
}

struct source {
    const char *id;
    const char *name;
    const char *description;
    const char *url;
    const char *category;
    const char *language;
    const char *country;
    bool headlines;    /* listed by /v2/top-headlines/sources */
    double popularity; /* higher = more popular; 0 when unknown */
};

struct source_filter {
    const char *category; /* NULL = any; compared case-insensitively */
    const char *language;
    const char *country;
    bool headlines_only;
};

enum key_state { KEY_ACTIVE = 0, KEY_DISABLED = 1 };

struct key_record {
    int64_t id;
    const char *name; /* may be NULL */
    const char *plan;
    int state; /* enum key_state */
    int64_t created_at;
    int64_t last_used;      /* 0 never */
    unsigned char hash[32]; /* SHA-256 of the key; the key itself is never stored */
};

struct store_put_stats {
    size_t inserted;
    size_t updated;
};

/* Open (creating when missing) the store at loc: a directory (embedded) or a
 * postgresql:// URI, migrating its schema when older than this build's.
 * Returns 0, ERR_IO/ERR_STORE with err set, or ERR_UNSUPPORTED for a
 * backend this build lacks or a schema newer than this build's. */
int store_open(struct store **out, const char *loc, struct err *err);

struct store_options {
    /* A new embedded store starts with the FTS5 side (store_fulltext_set)
     * only when this is set; store_open sets it. */
    bool fulltext_when_new;
    /* A PostgreSQL store that cannot be reached opens anyway (newsd serve:
     * a cluster node starts while its database is down and becomes ready
     * when it is back); the schema is brought up to date at the first
     * connection, and every call fails with ERR_BUSY until then. Without
     * it, store_open fails with ERR_BUSY. */
    bool start_unreachable;
    /* Whether an existing store whose schema is older than this build's
     * may be migrated. Unset, such a store is refused with ERR_OUTDATED
     * and left as it was: a migration must not happen under a running
     * server of the old version (only `newsd serve` and `newsd migrate`
     * set it). store_open sets it; a new store is always given the
     * current schema. */
    bool migrate;
    /* With migrate unset: an older schema is left as it is and the store
     * opened all the same, for reading its articles only (newsd index
     * build, ahead of an upgrade, beside the old version's running
     * server). Nothing may be written through such a store. */
    bool read_outdated;
};

/* Whether loc names a PostgreSQL store (postgresql:// or postgres://). */
bool store_location_is_pg(const char *loc);

/* The schema versions of an open store: at open, and now (differing when
 * the open migrated it; 0 at open for a new store). */
struct store_schema {
    int64_t opened;
    int64_t current;
};
void store_schema_get(const struct store *s, struct store_schema *out);

/* The schema version this build writes for a store of kind ("sqlite" or
 * "pg"); 0 for an unknown kind. */
int64_t store_schema_version(const char *kind);

/* store_open with options (NULL: store_open's). */
int store_open_with(struct store **out, const char *loc, const struct store_options *opt,
                    struct err *err);
void store_close(struct store *s);

/* A consistent copy of the whole store (articles, sources, feeds, keys,
 * usage) at dest, taken while other processes read and write it: one
 * committed state, written beside dest and renamed into place (mode 0600).
 * The search index is not copied: it is rebuilt from the copy when a
 * server opens it. ERR_UNSUPPORTED for a PostgreSQL store (pg_dump is the
 * tool there). */
int store_backup(struct store *s, const char *dest, struct err *err);

/* newsd restore (src/store/sqlite/restore.c says how, and why the store
 * directory itself is never moved): stage copies the embedded-store
 * database file backup into the store directory dir beside newsd.db,
 * gives it the directory's owner and checks it (SQLite quick_check, the
 * newsd schema); ERR_INVALID saying why for a file that is no sound
 * store, nothing left behind. commit retires the old database (its WAL
 * checkpointed, -wal and -shm removed) and renames the copy over it;
 * abort removes a staged copy. The caller holds the store's lock (no
 * server has it open). */
int store_restore_stage(const char *dir, const char *backup, struct err *err);
int store_restore_commit(const char *dir, struct err *err);
void store_restore_abort(const char *dir);

/* loc fit for logs and error messages: the password of a postgresql://
 * URI (user:PASSWORD@ or ?password=) replaced by "***". Writes at most n
 * bytes (NUL included) to buf and returns buf. */
char *store_location_redacted(const char *loc, char *buf, size_t n);

/* The database file of the embedded store at directory loc (whether it
 * exists or not) into out; ERR_INVALID for a URI or a path that does not
 * fit in n bytes. */
int store_sqlite_path_at(const char *loc, char *out, size_t n, struct err *err);

/* "sqlite" or "pg". */
const char *store_kind(const struct store *s);

/* Path of the SQLite database file of an embedded store, else NULL
 * (the FTS5 index lives in it). */
const char *store_sqlite_path(const struct store *s);

/* The embedded store can keep SQLite FTS5 in step with its articles (the
 * fts5 index searches it; the engine index does without, and imports are
 * then several times faster). store_fulltext_set creates it (filling it
 * from every article: minutes for millions) or drops it; nothing when it
 * already is as asked. ERR_UNSUPPORTED for a PostgreSQL store. */
int store_fulltext_get(struct store *s, bool *on, struct err *err);
int store_fulltext_set(struct store *s, bool on, struct err *err);

/* --- articles ---------------------------------------------------------- */

/* Upsert n articles in one transaction, keyed by canonical_url: a new url is
 * inserted, a known one replaced (flags included). Assigns id and seq (the
 * array is updated in place), and story_id where it is 0 (story/assign.h).
 * stats may be NULL. */
int store_articles_put(struct store *s, struct article *arts, size_t n,
                       struct store_put_stats *stats, struct err *err);

/* store_articles_put with each article's story inputs made already
 * (story/assign.h story_prepare; preps[i] for arts[i], NULL: made here):
 * an import makes them on its parsing thread, off the writer's. */
struct story_prep;
int store_articles_put_prepared(struct store *s, struct article *arts,
                                const struct story_prep *preps, size_t n,
                                struct store_put_stats *stats, struct err *err);

/* The story window of this process's puts, in days of publication time
 * (story/assign.h; clamped to 1..60, default 3): an article is compared
 * with the articles published up to this long before it. Set before the
 * first put: the window starts from the stored articles then. */
void store_stories_window_set(struct store *s, int64_t days);

/* The sketch similarity at which this process's puts join an article to
 * a story, in percent (story/assign.h; clamped to 10..100, default
 * STORY_THRESHOLD_DEFAULT). Set before the first put. */
void store_stories_similarity_set(struct store *s, int64_t percent);

/* What store_stories_backfill did. */
struct store_backfill_stats {
    int64_t read;   /* stored articles replayed */
    int64_t filled; /* stories written (articles that had none) */
    int64_t joined; /* of those, joined to an earlier article's story */
};

/* Give every stored article without a story (stored before stories:
 * schema < 8) the one the assigner gives it now, replaying every article
 * in publication order through a window of this process's settings (the
 * window needs the articles before each one; those with a story are
 * remembered with it), batch articles a read and a write. Idempotent: a
 * second run finds none without a story. The rows are changed in place
 * (backend.h stories_fill: no new seq, so nothing is re-indexed or sent
 * to webhooks again); a running server's engine keeps the stories it has
 * read, so run it with the server stopped (newsd stories backfill takes
 * the server's lock). ERR_UNSUPPORTED for a PostgreSQL store. */
int store_stories_backfill(struct store *s, size_t batch, struct store_backfill_stats *stats,
                           struct err *err);

/* Number of stored articles. */
int store_articles_count(struct store *s, int64_t *out, struct err *err);

/* Which articles store_articles_delete removes: those matching every
 * field set (the retention policy, store/retention.h, and `newsd articles
 * delete`). All unset matches every article. */
struct store_delete_filter {
    bool before_set;
    int64_t before;            /* published_at < before (UTC seconds) */
    const char *source_id;     /* NULL: any source */
    const char *canonical_url; /* NULL: any (ingest_url_canonical of a URL) */
};

/* *hi = the highest article id f's before bound lets a delete reach
 * (INT64_MAX without one); false when nothing can match, a bound before
 * the first representable second. Inline: both backends start from it. */
static inline bool store_delete_max_id(const struct store_delete_filter *f, int64_t *hi)
{
    *hi = INT64_MAX;
    if (f->before_set) {
        int64_t lo = store_id_lo(f->before);
        if (lo == INT64_MIN)
            return false;
        *hi = lo - 1;
    }
    return true;
}

/* Delete up to max articles matching f, oldest first (by publication
 * time), in one transaction; *deleted gets how many (0: none left). A
 * caller deleting many repeats it with a pause between batches, so that
 * imports and the index follower get the writer in between. Each delete
 * is in the store's log: the embedded store records (seq, id) in
 * article_deletions (store_reader_deletions), PostgreSQL a tombstone,
 * which replicas apply. */
int store_articles_delete(struct store *s, const struct store_delete_filter *f, size_t max,
                          int64_t *deleted, struct err *err);

/* Give up to max_pages free pages of the embedded store's file back to the
 * file system (SQLite's incremental vacuum; a store created before newsd
 * had it must be switched once with store_compact). *left (may be NULL)
 * gets the free pages still in the file. A no-op for PostgreSQL, whose
 * autovacuum does this. */
int store_space_release(struct store *s, int64_t max_pages, int64_t *left, struct err *err);

/* Rewrite the embedded store's file (VACUUM), switching it to incremental
 * vacuum on the way: takes the write lock for as long as the copy takes
 * (minutes for millions of articles) and needs free disk as large as the
 * file. ERR_UNSUPPORTED for PostgreSQL (VACUUM FULL is its own). */
int store_compact(struct store *s, struct err *err);

/* The file's vacuum mode: true when incremental (store_space_release
 * gives space back), false when a store_compact is needed first; always
 * true for PostgreSQL. */
int store_space_incremental(struct store *s, bool *on, struct err *err);

/* --- sources ----------------------------------------------------------- */

/* Insert or replace sources by id, in one transaction. */
int store_sources_put(struct store *s, const struct source *src, size_t n, struct err *err);

/* Register source ids seen on imported articles that the catalogue lacks, as
 * non-headline entries (no-op for known ids). */
int store_sources_ensure(struct store *s, const char *const *ids, const char *const *names,
                         size_t n, struct err *err);

/* Sources matching f, ordered by id (byte order). */
int store_sources_list(struct store *s, struct arena *a, const struct source_filter *f,
                       struct source **out, size_t *n_out, struct err *err);

/* One source by exact id; ERR_NOTFOUND when absent. out may be NULL. */
int store_source_get(struct store *s, struct arena *a, const char *id, struct source *out,
                     struct err *err);

/* --- feeds ------------------------------------------------------------- */
/* Publishers' feeds polled by the crawler (ingest/crawl.h), with their
 * fetch state, and per feed a memory of the items already stored (so an
 * unchanged item is not rewritten and an undated item keeps the time it was
 * first seen). Times are UTC seconds, 0 = never. */

#define STORE_FEED_DEFAULT_INTERVAL 300 /* seconds between polls of a new feed */

struct feed_record {
    int64_t id;
    const char *url;       /* what is fetched; unique */
    const char *source_id; /* catalogue source of its articles, or NULL */
    char country[3];       /* "" none: the source's */
    const char *category;  /* NULL: the source's */
    char language[3];      /* "" : the document's, else the source's, else detected */
    bool headline;         /* its articles are live headlines */
    const char *title;     /* the document's own title, from the last 200; NULL before */
    const char *site_url;  /* the document's site link, from the last 200 */
    const char *etag;      /* validators of the last 200, sent back (conditional GET) */
    const char *last_modified;
    int last_status;        /* HTTP status of the last fetch; 0 none (network error) */
    const char *last_error; /* one line; NULL when the last fetch succeeded */
    int64_t last_fetch_at;
    int64_t last_success_at;  /* last 200 parsed or 304 */
    int64_t last_new_item_at; /* last fetch that brought a new article */
    int64_t next_fetch_at;    /* due from then on */
    int64_t interval_s;       /* current polling interval (the crawler adapts it) */
    int64_t consecutive_errors;
    int64_t items_last;  /* items in the last parsed document */
    int64_t items_total; /* new articles stored from this feed, ever */
    bool enabled;
    int64_t created_at;
    const char *pages; /* which new items get their page fetched: "missing",
                        * "always" or "never"; NULL: the crawler's setting */
};

/* What one item of a feed looked like when it was last stored. */
struct feed_item_mark {
    const char *key;      /* canonical url of the item's article */
    int64_t hash;         /* fingerprint of the item's fields as the feed gave them */
    int64_t published_at; /* publication time the article was stored with */
    bool known;           /* store_feed_items_get found it */
};

/* The result of one fetch of a feed, for store_feed_fetch_record. */
struct feed_fetch_outcome {
    int64_t fetched_at;
    int status;          /* HTTP status, 0 when none */
    const char *error;   /* NULL: success (a 200 that parsed, or a 304) */
    bool new_validators; /* a 200: replace etag and last_modified by these */
    const char *etag;    /* may be NULL */
    const char *last_modified;
    const char *title;    /* NULL keeps the stored one */
    const char *site_url; /* NULL keeps the stored one */
    int64_t items;        /* items in the document; < 0 keeps items_last */
    int64_t new_items;    /* added to items_total; > 0 sets last_new_item_at */
    int64_t interval_s;
    int64_t consecutive_errors;
    int64_t next_fetch_at;
    const struct feed_item_mark *marks; /* items of the document: remembered */
    size_t n_marks;
    int64_t forget_before; /* marks of this feed last seen before this go; 0 keeps all */
};

/* Add a feed: url (required), source_id, country, category, language,
 * headline, interval_s (<= 0: STORE_FEED_DEFAULT_INTERVAL), enabled,
 * created_at (0: now) and next_fetch_at (0: created_at, i.e. due at once);
 * the fetch state starts empty. ERR_EXISTS when the url is already a feed,
 * ERR_INVALID without a url. *id_out (may be NULL) gets the new id. */
int store_feed_add(struct store *s, const struct feed_record *f, int64_t *id_out, struct err *err);

/* Every feed, ordered by id. */
int store_feeds_list(struct store *s, struct arena *a, struct feed_record **out, size_t *n_out,
                     struct err *err);

/* One feed by id; ERR_NOTFOUND when absent. */
int store_feed_get(struct store *s, struct arena *a, int64_t id, struct feed_record *out,
                   struct err *err);

/* Remove a feed and its item memory (its articles stay). ERR_NOTFOUND. */
int store_feed_remove(struct store *s, int64_t id, struct err *err);

/* Settings of a feed for store_feed_change; a field at its "keep" value
 * is left as it is. */
struct feed_change {
    int64_t interval_s;   /* > 0: the current polling interval (the crawler
                             adapts it from there); 0 keeps */
    const char *country;  /* NULL keeps, "" clears (the source's applies), else 2 letters */
    const char *category; /* NULL keeps, "" clears */
    const char *language; /* NULL keeps, "" clears */
    int headline;         /* -1 keeps, 0 or 1 */
    int enabled;          /* -1 keeps; 0 pauses (never due); 1 resumes: a paused
                             feed is due at now */
    const char *pages;    /* NULL keeps, "" clears (the crawler's setting), else
                             "missing", "always" or "never" */
    int64_t now;          /* for a resume and a shorter interval */
};

/* Change feed id's settings in one statement. A shorter interval_s brings
 * the next poll forward to no later than last_fetch_at + interval_s (and
 * not before now); a longer one takes effect after the next poll. A paused
 * feed keeps its fetch state and item memory. ERR_NOTFOUND. */
int store_feed_change(struct store *s, int64_t id, const struct feed_change *c, struct err *err);

/* Up to max enabled feeds with next_fetch_at <= now, earliest due first
 * (ties by id). Only a read: a caller that fetches them claims them first
 * with store_feeds_claim. */
int store_feeds_due(struct store *s, struct arena *a, int64_t now, size_t max,
                    struct feed_record **out, size_t *n_out, struct err *err);

/* Claim feeds for fetching: for each ids[i] that is still enabled and due
 * at now, set next_fetch_at = until (a lease: nobody else takes it until
 * then, and a crawler that dies mid-fetch only delays the feed to until)
 * and set claimed[i]; others get claimed[i] = false. A compare-and-set per
 * feed, so two crawlers (threads, or newsd nodes sharing a PostgreSQL
 * store, which does it as UPDATE ... WHERE next_fetch_at <= now RETURNING)
 * never fetch a feed twice in one round. */
int store_feeds_claim(struct store *s, const int64_t *ids, size_t n, int64_t now, int64_t until,
                      bool *claimed, struct err *err);

/* Set a feed's next_fetch_at (e.g. give back a claimed feed that was not
 * fetched). ERR_NOTFOUND. */
int store_feed_schedule(struct store *s, int64_t id, int64_t next_fetch_at, struct err *err);

/* Record the outcome of a fetch of feed id in one transaction: last_fetch_at
 * = fetched_at, last_status, last_error = error, last_success_at when no
 * error, validators when new_validators, title/site_url when given, items,
 * items_total += new_items, last_new_item_at, interval_s,
 * consecutive_errors, next_fetch_at; the marks are remembered (inserted or
 * replaced, last seen at fetched_at) and marks older than forget_before
 * forgotten. ERR_NOTFOUND when the feed is gone. */
int store_feed_fetch_record(struct store *s, int64_t id, const struct feed_fetch_outcome *o,
                            struct err *err);

/* Look up marks[i].key among feed id's remembered items: a known one gets
 * known = true, its hash and published_at; others get known = false. */
int store_feed_items_get(struct store *s, int64_t id, struct feed_item_mark *marks, size_t n,
                         struct err *err);

/* --- keys and usage ---------------------------------------------------- */

int store_key_insert(struct store *s, const struct key_record *k, int64_t *id_out, struct err *err);
/* By hash; ERR_NOTFOUND when absent. */
int store_key_find(struct store *s, struct arena *a, const unsigned char hash[32],
                   struct key_record *out, struct err *err);
int store_keys_list(struct store *s, struct arena *a, struct key_record **out, size_t *n_out,
                    struct err *err);
/* Change plan (NULL keeps it) and/or state (-1 keeps it). ERR_NOTFOUND. */
int store_key_update(struct store *s, int64_t id, const char *plan, int state, struct err *err);
int store_key_delete(struct store *s, int64_t id, struct err *err);

/* Add n requests to key_id's count for UTC day `day` (days since epoch) and
 * record last_used. Batched by callers; one statement per call. */
int store_usage_add(struct store *s, int64_t key_id, int64_t day, int64_t n, int64_t last_used,
                    struct err *err);
/* Sum of requests of key_id over days [day_from, day_to]. */
int store_usage_sum(struct store *s, int64_t key_id, int64_t day_from, int64_t day_to, int64_t *out,
                    struct err *err);

/* Count one request of key_id on UTC day `day` only if that keeps the key
 * within limit_day requests that day and limit_month over days
 * [month_from, day] (0 = no limit), as one atomic step across every process
 * sharing the store, recording last_used when counted. *taken says whether
 * it was; *day_n and *month_n get the totals after the step. For stores
 * shared by several nodes (PostgreSQL), where per-process counting would
 * let each node spend the whole quota; ERR_UNSUPPORTED for the embedded
 * store, whose only process counts in memory (auth/quota.c). */
int store_usage_take(struct store *s, int64_t key_id, int64_t day, int64_t month_from,
                     int64_t limit_day, int64_t limit_month, int64_t last_used, bool *taken,
                     int64_t *day_n, int64_t *month_n, struct err *err);

/* --- alerts ------------------------------------------------------------ */
/* Saved searches whose new matches are POSTed to a webhook (src/push/):
 * each alert keeps a cursor in the article log, and the deliveries built
 * from it wait here, exactly as they are sent, until the webhook takes
 * them, so a restart (or a SIGKILL) loses none and resends them unchanged.
 * A node delivers an alert only while it holds the alert's lease (a
 * cluster's nodes share the alerts, each alert is delivered by one node at
 * a time). Times: *_at are UTC seconds, *_ms UTC milliseconds. */

enum alert_state { ALERT_ACTIVE = 0 };

struct alert_record {
    int64_t id;
    int64_t key_id;      /* the key that owns it */
    const char *query;   /* the /v2/everything parameters as a JSON object */
    const char *webhook; /* http(s) URL */
    const char *secret;  /* HMAC key of X-Newsd-Signature */
    int64_t created_at;
    int64_t cursor_seq;      /* the last article seq delivered or queued */
    int state;               /* enum alert_state */
    const char *lease_owner; /* the node that delivers it; NULL none */
    int64_t lease_until_ms;  /* its lease ends then */
    bool dedupe;             /* a story is delivered once (push/webhook.h) */
    int64_t copies;          /* dedupe: later copies of a story counted, not delivered */
};

/* A delivery waiting for its webhook: the body is kept byte for byte, so
 * every retry sends the same bytes under the same id. */
struct alert_delivery {
    int64_t alert_id;
    int64_t seq;              /* the alert's cursor after it: deliveries go in seq order */
    const char *id;           /* X-Newsd-Delivery: unique, the same on every retry */
    const char *body;         /* JSON, NUL-terminated */
    int64_t attempts;         /* sent so far */
    int64_t next_ms;          /* not sent again before then */
    int64_t first_failure_ms; /* 0: never failed */
    int64_t created_ms;
    /* Written only (store_alert_advance): the stories it delivers first,
     * for an alert with dedupe, remembered with it (store_alert_stories). */
    const int64_t *stories;
    size_t n_stories;
};

/* The stories remembered per alert with dedupe: the newest this many (by
 * the delivery that sent them first; a few more when ties). */
#define STORE_ALERT_STORIES_MAX 4096

/* Add an alert (id and the lease are set by the store): key_id, query,
 * webhook and secret required. cursor_seq < 0: the log's head now (only
 * articles committed from now on are delivered). max_per_key > 0: the
 * key's alerts may not exceed it (ERR_FULL, checked in the same
 * transaction as the insert). *id_out (may be NULL) gets the new id. */
int store_alert_add(struct store *s, const struct alert_record *a, int64_t max_per_key,
                    int64_t *id_out, struct err *err);

/* The alerts of key_id (0: every key), ordered by id. */
int store_alerts_list(struct store *s, struct arena *a, int64_t key_id, struct alert_record **out,
                      size_t *n_out, struct err *err);

/* Remove alert id with its waiting deliveries; key_id > 0: only when that
 * key owns it. ERR_NOTFOUND otherwise. */
int store_alert_remove(struct store *s, int64_t id, int64_t key_id, struct err *err);

/* Take the lease of every alert whose lease has ended at now_ms, and renew
 * owner's leases that are past half their length (a caller may ask often:
 * a row is written about twice per lease), until until_ms; *out gets the alerts owner holds after
 * the step (ordered by id) whose key is active: a disabled key's alerts
 * are paused (their cursors wait). Two nodes never hold one alert's lease
 * at the same time (a compare and set per alert). */
int store_alerts_lease(struct store *s, struct arena *a, const char *owner, int64_t now_ms,
                       int64_t until_ms, struct alert_record **out, size_t *n_out, struct err *err);

/* Give up every lease owner holds (a node that stops), so that another
 * node, or the next process, takes the alerts over at once. */
int store_alerts_release(struct store *s, const char *owner, struct err *err);

/* In one transaction, while owner holds alert_id's lease and its cursor is
 * still from_seq: set the cursor to d->seq (to_seq when d is NULL), keep
 * d, and add copies (the story copies met on the way, not delivered) to
 * the alert's count. ERR_BUSY when the lease or the cursor moved (another
 * node took the alert: nothing is written), ERR_NOTFOUND when the alert
 * is gone. */
int store_alert_advance(struct store *s, int64_t alert_id, const char *owner, int64_t from_seq,
                        int64_t to_seq, int64_t copies, const struct alert_delivery *d,
                        struct err *err);

/* The stories alert_id delivered (alert_delivery.stories), the newest
 * STORE_ALERT_STORIES_MAX, oldest first, into an arena array. They move
 * with the cursor in one transaction: what a node taking the alert up
 * reads is exactly what was delivered up to the stored cursor. */
int store_alert_stories(struct store *s, struct arena *a, int64_t alert_id, int64_t **out,
                        size_t *n_out, struct err *err);

/* Up to max waiting deliveries of alert_id, oldest (lowest seq) first. */
int store_alert_deliveries(struct store *s, struct arena *a, int64_t alert_id, size_t max,
                           struct alert_delivery **out, size_t *n_out, struct err *err);

/* The webhook took delivery id of alert_id (or it expired): forget it. No
 * error when it is already gone. */
int store_alert_delivery_done(struct store *s, int64_t alert_id, const char *id, struct err *err);

/* A failed attempt: record attempts, next_ms and first_failure_ms.
 * ERR_NOTFOUND when it is gone. */
int store_alert_delivery_failed(struct store *s, int64_t alert_id, const char *id, int64_t attempts,
                                int64_t next_ms, int64_t first_failure_ms, struct err *err);

/* Deliveries waiting, over every alert. */
int store_alert_deliveries_count(struct store *s, int64_t *out, struct err *err);

#endif
