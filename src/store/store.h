/* The state of newsd: articles (with an ingest sequence), sources, keys and
 * usage (DESIGN.md). One opaque handle, backends chosen by location: a
 * directory is the embedded SQLite store (store/sqlite/), a postgresql://
 * URI the cluster store (store/pg/, later). Every function is safe to call
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
    int64_t id;               /* time-ordered: published_at << 20 | n; set by the store */
    int64_t seq;              /* ingest sequence; set by the store */
    const char *source_id;    /* NULL when the publisher is not in the catalogue */
    const char *source_name;
    const char *author;
    const char *title;
    const char *description;
    const char *url;          /* as imported */
    const char *url_to_image;
    int64_t published_at;     /* UTC seconds */
    const char *content;      /* whole; the API truncates on output */
    const char *canonical_url; /* duplicate key (ingest/ computes it) */
    const char *domain;       /* host without www., lower case */
    char language[3];         /* "" unknown */
    char country[3];          /* "" none */
    const char *category;     /* NULL none */
    bool headline;            /* shown by /v2/top-headlines */
    int64_t ingested_at;
};

/* Article ids: time in the high bits so newest-first is id-descending. */
#define STORE_ID_SHIFT 20
#define STORE_ID_MIN_FOR_TIME(t) ((int64_t)(t) * ((int64_t)1 << STORE_ID_SHIFT))
#define STORE_ID_MAX_FOR_TIME(t) (STORE_ID_MIN_FOR_TIME(t) + (((int64_t)1 << STORE_ID_SHIFT) - 1))

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
    int state;        /* enum key_state */
    int64_t created_at;
    int64_t last_used; /* 0 never */
    unsigned char hash[32]; /* SHA-256 of the key; the key itself is never stored */
};

struct store_put_stats {
    size_t inserted;
    size_t updated;
};

/* Open (creating when missing) the store at loc: a directory (embedded) or a
 * postgresql:// URI. Returns 0, ERR_IO/ERR_STORE with err set, or
 * ERR_UNSUPPORTED for a backend this build lacks. */
int store_open(struct store **out, const char *loc, struct err *err);
void store_close(struct store *s);

/* "sqlite" or "pg". */
const char *store_kind(const struct store *s);

/* Path of the SQLite database file of an embedded store, else NULL
 * (the FTS5 index lives in it). */
const char *store_sqlite_path(const struct store *s);

/* --- articles ---------------------------------------------------------- */

/* Upsert n articles in one transaction, keyed by canonical_url: a new url is
 * inserted, a known one replaced (flags included). Assigns id and seq (the
 * array is updated in place). stats may be NULL. */
int store_articles_put(struct store *s, struct article *arts, size_t n,
                       struct store_put_stats *stats, struct err *err);

/* Number of stored articles. */
int store_articles_count(struct store *s, int64_t *out, struct err *err);

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

/* --- keys and usage ---------------------------------------------------- */

int store_key_insert(struct store *s, const struct key_record *k, int64_t *id_out,
                     struct err *err);
/* By hash; ERR_NOTFOUND when absent. */
int store_key_find(struct store *s, struct arena *a, const unsigned char hash[32],
                   struct key_record *out, struct err *err);
int store_keys_list(struct store *s, struct arena *a, struct key_record **out, size_t *n_out,
                    struct err *err);
/* Change plan (NULL keeps it) and/or state (-1 keeps it). ERR_NOTFOUND. */
int store_key_update(struct store *s, int64_t id, const char *plan, int state,
                     struct err *err);
int store_key_delete(struct store *s, int64_t id, struct err *err);

/* Add n requests to key_id's count for UTC day `day` (days since epoch) and
 * record last_used. Batched by callers; one statement per call. */
int store_usage_add(struct store *s, int64_t key_id, int64_t day, int64_t n, int64_t last_used,
                    struct err *err);
/* Sum of requests of key_id over days [day_from, day_to]. */
int store_usage_sum(struct store *s, int64_t key_id, int64_t day_from, int64_t day_to,
                    int64_t *out, struct err *err);

#endif
