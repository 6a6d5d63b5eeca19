/* The records both backends read from rows of the same columns (sources,
 * keys, feeds, alerts, deliveries): each one's SELECT list and, beside it,
 * a table of where each column goes in the record, in the list's order.
 * Both backends read these records with store_row_read, one loop over the
 * table given the backend's column accessors, instead of a hand-written
 * reader per record and backend, so the list, its order and the fields
 * are kept in step in this one place. Included by the backends only; it
 * calls nothing but the accessors a backend hands it. */
#ifndef NEWSD_STORE_COLUMNS_H
#define NEWSD_STORE_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/store.h"
#include "util/arena.h"

/* How a column's value is kept in the record. */
enum store_col_kind {
    STORE_COL_I64,    /* int64_t; SQL NULL reads as 0 */
    STORE_COL_INT,    /* int (the 64-bit value's low bits) */
    STORE_COL_BOOL,   /* bool: non-zero (sqlite) or 't' (pg) */
    STORE_COL_DOUBLE, /* double */
    STORE_COL_STR,    /* const char *, copied into the arena; NULL for SQL NULL */
    STORE_COL_CODE,   /* char[3]: a two-letter code, "" unless the value has two bytes */
    STORE_COL_HASH,   /* unsigned char[32]: a key's SHA-256 (blob / bytea) */
};

struct store_col {
    enum store_col_kind kind;
    size_t offset; /* of the field in the record */
};

/* One table entry: how column `field` of record type `type` is kept. */
#define STORE_COL(kind, type, field)                                                               \
    {                                                                                              \
        STORE_COL_##kind, offsetof(type, field)                                                    \
    }

/* A record as the row readers take it: its size (the reader zeroes it
 * first), its columns, and what its rows are called in an out-of-memory
 * message ("feeds"). */
struct store_record {
    size_t size;
    const struct store_col *cols;
    size_t n_cols;
    const char *what;
};
/* *out = items, out being the address of a reader's typed array pointer
 * (a struct feed_record **, passed as void *), so that one row reader
 * serves every record with no wrapper per type to convert its void *.
 * Object pointers have void *'s representation on every platform newsd
 * builds for; memcpy keeps the write clear of the aliasing rules. */
static inline void store_records_give(void *out, void *items)
{
    memcpy(out, &items, sizeof items);
}

#define STORE_RECORD(type, table, what)                                                            \
    {                                                                                              \
        sizeof(type), (table), sizeof(table) / sizeof((table)[0]), (what)                          \
    }

/* A backend's way to read column j of its current row src (a SQLite
 * statement, a PostgreSQL result and row number): one accessor a kind.
 * str copies into the arena (NULL for SQL NULL); str and hash return 0 or
 * ERR_NOMEM. */
struct store_col_access {
    int64_t (*i64)(void *src, int j);
    bool (*boolean)(void *src, int j);
    double (*dbl)(void *src, int j);
    int (*str)(struct arena *a, void *src, int j, const char **out);
    void (*code)(void *src, int j, char out[3]);
    int (*hash)(void *src, int j, unsigned char out[32]);
};

/* Read the row src into *item, a record as rec describes it: zeroed, then
 * column j into rec->cols[j] with acc. 0 or ERR_NOMEM. */
static inline int store_row_read(const struct store_col_access *acc, struct arena *a, void *src,
                                 const struct store_record *rec, void *item)
{
    unsigned char *base = item;
    memset(item, 0, rec->size);
    for (size_t k = 0; k < rec->n_cols; k++) {
        void *field = base + rec->cols[k].offset;
        int j = (int)k, rc = 0;
        switch (rec->cols[k].kind) {
        case STORE_COL_I64:
            *(int64_t *)field = acc->i64(src, j);
            break;
        case STORE_COL_INT:
            *(int *)field = (int)acc->i64(src, j);
            break;
        case STORE_COL_BOOL:
            *(bool *)field = acc->boolean(src, j);
            break;
        case STORE_COL_DOUBLE:
            *(double *)field = acc->dbl(src, j);
            break;
        case STORE_COL_STR:
            rc = acc->str(a, src, j, field);
            break;
        case STORE_COL_CODE:
            acc->code(src, j, field);
            break;
        case STORE_COL_HASH:
            rc = acc->hash(src, j, field);
            break;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

#define STORE_SOURCE_COLUMNS                                                                       \
    "id, name, description, url, category, language, country, headlines, popularity"
static const struct store_col store_source_cols[] = {
    STORE_COL(STR, struct source, id),
    STORE_COL(STR, struct source, name),
    STORE_COL(STR, struct source, description),
    STORE_COL(STR, struct source, url),
    STORE_COL(STR, struct source, category),
    STORE_COL(STR, struct source, language),
    STORE_COL(STR, struct source, country),
    STORE_COL(BOOL, struct source, headlines),
    STORE_COL(DOUBLE, struct source, popularity),
};
static const struct store_record store_source_record =
    STORE_RECORD(struct source, store_source_cols, "sources");

#define STORE_KEY_COLUMNS "id, hash, name, plan, state, created_at, last_used"
static const struct store_col store_key_cols[] = {
    STORE_COL(I64, struct key_record, id),        STORE_COL(HASH, struct key_record, hash),
    STORE_COL(STR, struct key_record, name),      STORE_COL(STR, struct key_record, plan),
    STORE_COL(INT, struct key_record, state),     STORE_COL(I64, struct key_record, created_at),
    STORE_COL(I64, struct key_record, last_used),
};
static const struct store_record store_key_record =
    STORE_RECORD(struct key_record, store_key_cols, "keys");

#define STORE_FEED_COLUMNS                                                                         \
    "id, url, source_id, country, category, language, headline, title, site_url, etag,"            \
    " last_modified, last_status, last_error, last_fetch_at, last_success_at,"                     \
    " last_new_item_at, next_fetch_at, interval_s, consecutive_errors, items_last,"                \
    " items_total, enabled, created_at, pages"
static const struct store_col store_feed_cols[] = {
    STORE_COL(I64, struct feed_record, id),
    STORE_COL(STR, struct feed_record, url),
    STORE_COL(STR, struct feed_record, source_id),
    STORE_COL(CODE, struct feed_record, country),
    STORE_COL(STR, struct feed_record, category),
    STORE_COL(CODE, struct feed_record, language),
    STORE_COL(BOOL, struct feed_record, headline),
    STORE_COL(STR, struct feed_record, title),
    STORE_COL(STR, struct feed_record, site_url),
    STORE_COL(STR, struct feed_record, etag),
    STORE_COL(STR, struct feed_record, last_modified),
    STORE_COL(INT, struct feed_record, last_status),
    STORE_COL(STR, struct feed_record, last_error),
    STORE_COL(I64, struct feed_record, last_fetch_at),
    STORE_COL(I64, struct feed_record, last_success_at),
    STORE_COL(I64, struct feed_record, last_new_item_at),
    STORE_COL(I64, struct feed_record, next_fetch_at),
    STORE_COL(I64, struct feed_record, interval_s),
    STORE_COL(I64, struct feed_record, consecutive_errors),
    STORE_COL(I64, struct feed_record, items_last),
    STORE_COL(I64, struct feed_record, items_total),
    STORE_COL(BOOL, struct feed_record, enabled),
    STORE_COL(I64, struct feed_record, created_at),
    STORE_COL(STR, struct feed_record, pages),
};
static const struct store_record store_feed_record =
    STORE_RECORD(struct feed_record, store_feed_cols, "feeds");

/* dedupe is an integer column in both backends: read as a boolean
 * expression, which each backend's boolean accessor reads. */
#define STORE_ALERT_COLUMNS                                                                        \
    "id, key_id, query, webhook, secret, created_at, cursor_seq, state, lease_owner,"              \
    " lease_until_ms, dedupe <> 0, copies"
static const struct store_col store_alert_cols[] = {
    STORE_COL(I64, struct alert_record, id),
    STORE_COL(I64, struct alert_record, key_id),
    STORE_COL(STR, struct alert_record, query),
    STORE_COL(STR, struct alert_record, webhook),
    STORE_COL(STR, struct alert_record, secret),
    STORE_COL(I64, struct alert_record, created_at),
    STORE_COL(I64, struct alert_record, cursor_seq),
    STORE_COL(INT, struct alert_record, state),
    STORE_COL(STR, struct alert_record, lease_owner),
    STORE_COL(I64, struct alert_record, lease_until_ms),
    STORE_COL(BOOL, struct alert_record, dedupe),
    STORE_COL(I64, struct alert_record, copies),
};
static const struct store_record store_alert_record =
    STORE_RECORD(struct alert_record, store_alert_cols, "alerts");

/* The stories an alert with dedupe has sent (alert_stories): one story id
 * a row. */
static const struct store_col store_story_id_cols[] = {{STORE_COL_I64, 0}};
static const struct store_record store_story_id_record =
    STORE_RECORD(int64_t, store_story_id_cols, "stories");

#define STORE_DELIVERY_COLUMNS                                                                     \
    "alert_id, seq, id, body, attempts, next_ms, first_failure_ms, created_ms"
static const struct store_col store_delivery_cols[] = {
    STORE_COL(I64, struct alert_delivery, alert_id),
    STORE_COL(I64, struct alert_delivery, seq),
    STORE_COL(STR, struct alert_delivery, id),
    STORE_COL(STR, struct alert_delivery, body),
    STORE_COL(I64, struct alert_delivery, attempts),
    STORE_COL(I64, struct alert_delivery, next_ms),
    STORE_COL(I64, struct alert_delivery, first_failure_ms),
    STORE_COL(I64, struct alert_delivery, created_ms),
};
static const struct store_record store_delivery_record =
    STORE_RECORD(struct alert_delivery, store_delivery_cols, "deliveries");

#endif
