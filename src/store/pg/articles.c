/* Articles of the PostgreSQL store: upsert by canonical url, one
 * transaction and a handful of statements per batch, whatever its size.
 *
 * A batch holds the advisory lock STORE_PG_LOCK_ARTICLES from its first
 * statement to its commit: writers of every node take turns, which keeps
 * seq in commit order (pg.h) and makes id allocation a plain read. Ids are
 * allocated as the embedded store does (store/sqlite/articles.c): one past
 * the highest id of the article's second, a hole only when the second's
 * last n is taken; an update keeps its id unless published_at changed.
 * The batch is read (known urls, highest id of each second), resolved here
 * in input order (a url repeated in a batch updates its earlier self), and
 * written by one INSERT ... ON CONFLICT over arrays, which returns the seq
 * the trigger gave each row. */
#include "store/pg/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/args.h"
#include "util/hash.h"

#include "util/banned.h"

static const struct pg_sql sql_lock = {PG_ST_ARTICLES_LOCK,
                                       "SELECT pg_advisory_xact_lock(" STORE_PG_LOCK_ARTICLES ")"};
static const struct pg_sql sql_known = {
    PG_ST_ARTICLES_KNOWN,
    "SELECT canonical_url, id, published_at FROM articles WHERE canonical_url = ANY($1::text[])"};
static const struct pg_sql sql_maxid = {
    PG_ST_ARTICLES_MAXID, "SELECT s, (SELECT max(id) FROM articles WHERE id BETWEEN s * 1048576 AND"
                          " s * 1048576 + 1048575) FROM unnest($1::bigint[]) AS s"};
/* The lowest free id of a second that none of $3 takes either. */
static const struct pg_sql sql_scan = {
    PG_ST_ARTICLES_SCAN,
    "SELECT min(g) FROM generate_series($1::bigint, $2::bigint) AS g"
    " WHERE NOT EXISTS (SELECT 1 FROM articles WHERE id = g) AND g <> ALL($3::bigint[])"};
static const struct pg_sql sql_upsert = {
    PG_ST_ARTICLES_UPSERT,
    "INSERT INTO articles(id, seq, url, canonical_url, source_id, source_name, author, title,"
    " description, url_to_image, published_at, content, domain, language, country, category,"
    " headline, ingested_at, story_id)"
    " SELECT u.id, 0, u.url, u.curl, u.source_id, u.source_name, u.author, u.title,"
    " u.description, u.url_to_image, u.published_at, u.content, u.domain, u.language,"
    " u.country, u.category, u.headline, u.ingested_at, nullif(u.story_id, 0)"
    " FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],"
    " $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[],"
    " $14::text[], $15::text[], $16::boolean[], $17::bigint[], $18::bigint[])"
    " AS u(id, url, curl, source_id, source_name, author, title, description, url_to_image,"
    " published_at, content, domain, language, country, category, headline, ingested_at,"
    " story_id)"
    " ON CONFLICT (canonical_url) DO UPDATE SET id = EXCLUDED.id, url = EXCLUDED.url,"
    " source_id = EXCLUDED.source_id, source_name = EXCLUDED.source_name,"
    " author = EXCLUDED.author, title = EXCLUDED.title, description = EXCLUDED.description,"
    " url_to_image = EXCLUDED.url_to_image, published_at = EXCLUDED.published_at,"
    " content = EXCLUDED.content, domain = EXCLUDED.domain, language = EXCLUDED.language,"
    " country = EXCLUDED.country, category = EXCLUDED.category, headline = EXCLUDED.headline,"
    " ingested_at = EXCLUDED.ingested_at, story_id = EXCLUDED.story_id"
    " RETURNING canonical_url, id, seq"};
static const struct pg_sql sql_count = {PG_ST_ARTICLES_COUNT, "SELECT count(*) FROM articles"};
/* The story window's start (backend.h stories_window): ids are
 * time-ordered, so the window is an id range of the primary key. */
static const struct pg_sql sql_stories_window = {
    PG_ST_STORIES_WINDOW,
    "SELECT canonical_url, title, description, content, published_at, coalesce(story_id, 0)"
    " FROM articles WHERE id >= (SELECT (coalesce(max(id), 0) >> 20) - $1 FROM articles) * 1048576"
    " ORDER BY id"};
/* Deletes (store_articles_delete): the trigger gives each row a tombstone,
 * which every node's replica applies. By canonical URL through its unique
 * index; else the oldest first, through the primary key. */
static const struct pg_sql sql_delete_oldest = {
    PG_ST_ARTICLES_DELETE_OLDEST,
    "DELETE FROM articles WHERE id IN (SELECT id FROM articles WHERE id <= $1"
    " AND ($2::text IS NULL OR source_id = $2) ORDER BY id LIMIT $3)"};
static const struct pg_sql sql_delete_url = {
    PG_ST_ARTICLES_DELETE_URL, "DELETE FROM articles WHERE canonical_url = $3 AND id <= $1"
                               " AND ($2::text IS NULL OR source_id = $2)"};

/* One distinct canonical url of the batch. */
struct put_entry {
    const char *url;
    int64_t id; /* current id (the database's, then this batch's) */
    int64_t published_at;
    int64_t seq;
    size_t last; /* index of the article whose values are written */
    bool known;  /* a row exists (in the database or earlier in the batch) */
};

/* The next id to try in one second. */
struct put_second {
    int64_t t;
    int64_t next;
    bool used;
    bool listed; /* asked for its highest id */
};

struct put_batch {
    struct put_entry *entries;
    size_t n_entries;
    size_t *slots; /* open addressing over entries, + 1 (0 = empty) */
    size_t n_slots;
    struct put_second *seconds;
    size_t n_seconds; /* slots of the table (a power of two) */
    int64_t *vacated; /* ids given up by articles that moved to another second */
    size_t n_vacated;
    size_t *entry_of; /* article index → entry index */
};

static size_t pow2_at_least(size_t n)
{
    size_t p = 16;
    while (p < n)
        p <<= 1;
    return p;
}

/* The entry of url, added when missing (*added). */
static struct put_entry *entry_get(struct put_batch *pb, const char *url, bool add, bool *added)
{
    size_t mask = pb->n_slots - 1;
    for (size_t i = hash_bytes64(url, strlen(url)) & mask;; i = (i + 1) & mask) {
        size_t k = pb->slots[i];
        if (k == 0) {
            if (!add)
                return NULL;
            struct put_entry *e = &pb->entries[pb->n_entries];
            memset(e, 0, sizeof *e);
            e->url = url;
            pb->slots[i] = ++pb->n_entries;
            if (added)
                *added = true;
            return e;
        }
        if (!strcmp(pb->entries[k - 1].url, url))
            return &pb->entries[k - 1];
    }
}

static struct put_second *second_get(struct put_batch *pb, int64_t t)
{
    size_t mask = pb->n_seconds - 1;
    for (size_t i = hash_fib((uint64_t)t, 7) & mask;; i = (i + 1) & mask) {
        if (!pb->seconds[i].used) {
            pb->seconds[i].used = true;
            pb->seconds[i].t = t;
            pb->seconds[i].next = STORE_ID_MIN_FOR_TIME(t);
            return &pb->seconds[i];
        }
        if (pb->seconds[i].t == t)
            return &pb->seconds[i];
    }
}

static void batch_free(struct put_batch *pb)
{
    free(pb->entries);
    free(pb->slots);
    free(pb->seconds);
    free(pb->vacated);
    free(pb->entry_of);
}

static int batch_init(struct put_batch *pb, size_t n, struct err *err)
{
    memset(pb, 0, sizeof *pb);
    pb->n_slots = pow2_at_least(2 * n);
    pb->n_seconds = pow2_at_least(2 * n);
    pb->entries = calloc(n, sizeof *pb->entries);
    pb->slots = calloc(pb->n_slots, sizeof *pb->slots);
    pb->seconds = calloc(pb->n_seconds, sizeof *pb->seconds);
    pb->vacated = calloc(n, sizeof *pb->vacated);
    pb->entry_of = calloc(n, sizeof *pb->entry_of);
    if (!pb->entries || !pb->slots || !pb->seconds || !pb->vacated || !pb->entry_of) {
        batch_free(pb);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    return 0;
}

/* Run q, whose one parameter is the array literal arr (opened by the
 * caller, released here); *r its result, for the caller to clear. */
static int run_on_array(struct pg_conn *c, const struct pg_sql *q, struct buf *arr, PGresult **r,
                        struct err *err)
{
    struct pg_params p;
    store_pg_params_init(&p);
    int rc = store_pg_param_array(&p, arr, err);
    if (rc == 0)
        rc = store_pg_run(c, q, &p, r, err);
    buf_release(arr);
    return rc;
}

/* The database's rows of the batch's urls. */
static int load_known(struct pg_conn *c, struct put_batch *pb, struct err *err)
{
    struct buf arr;
    PGresult *r = NULL;

    store_pg_array_begin(&arr);
    for (size_t i = 0; i < pb->n_entries; i++)
        store_pg_array_text(&arr, pb->entries[i].url);
    int rc = run_on_array(c, &sql_known, &arr, &r, err);
    if (rc < 0)
        return rc;
    for (int i = 0; i < PQntuples(r); i++) {
        struct put_entry *e = entry_get(pb, PQgetvalue(r, i, 0), false, NULL);
        if (e == NULL)
            continue; /* cannot happen: = ANY of our own urls */
        e->known = true;
        e->id = store_pg_get_int(r, i, 1);
        e->published_at = store_pg_get_int(r, i, 2);
    }
    PQclear(r);
    return 0;
}

/* The highest id of every second the batch publishes in. */
static int load_seconds(struct pg_conn *c, struct put_batch *pb, const struct article *arts,
                        size_t n, struct err *err)
{
    struct buf arr;
    PGresult *r = NULL;

    store_pg_array_begin(&arr);
    for (size_t i = 0; i < n; i++) {
        struct put_second *sec = second_get(pb, arts[i].published_at);
        if (!sec->listed) {
            store_pg_array_int(&arr, sec->t);
            sec->listed = true;
        }
    }
    int rc = run_on_array(c, &sql_maxid, &arr, &r, err);
    if (rc < 0)
        return rc;
    for (int i = 0; i < PQntuples(r); i++) {
        struct put_second *sec = second_get(pb, store_pg_get_int(r, i, 0));
        sec->next =
            PQgetisnull(r, i, 1) ? STORE_ID_MIN_FOR_TIME(sec->t) : store_pg_get_int(r, i, 1) + 1;
    }
    PQclear(r);
    return 0;
}

/* A free id in second t: past the highest, else the lowest hole that no
 * row and no article of this batch (placed or moved away) holds. */
static int id_alloc(struct pg_conn *c, struct put_batch *pb, int64_t t, int64_t *out,
                    struct err *err)
{
    struct put_second *sec = second_get(pb, t);
    int64_t lo = STORE_ID_MIN_FOR_TIME(t), hi = STORE_ID_MAX_FOR_TIME(t);
    struct pg_params p;
    struct buf arr;
    PGresult *r = NULL;
    int rc;

    if (sec->next <= hi) {
        *out = sec->next++;
        return 0;
    }
    store_pg_array_begin(&arr);
    for (size_t i = 0; i < pb->n_entries; i++) {
        if (pb->entries[i].known && pb->entries[i].id >= lo && pb->entries[i].id <= hi)
            store_pg_array_int(&arr, pb->entries[i].id);
    }
    for (size_t i = 0; i < pb->n_vacated; i++)
        store_pg_array_int(&arr, pb->vacated[i]);
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(lo), STORE_INT(hi)));
    if ((rc = store_pg_param_array(&p, &arr, err)) < 0)
        goto out;
    if ((rc = store_pg_run(c, &sql_scan, &p, &r, err)) < 0)
        goto out;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        rc = err_set(err, ERR_TOO_LARGE, "more than %lld articles published in one second",
                     (long long)1 << STORE_ID_SHIFT);
        goto out;
    }
    *out = store_pg_get_int(r, 0, 0);
out:
    PQclear(r);
    buf_release(&arr);
    return rc;
}

/* Resolve every article in input order: ids, insert or update. */
static int resolve(struct pg_conn *c, struct put_batch *pb, const struct article *arts, size_t n,
                   size_t *inserted, size_t *updated, struct err *err)
{
    int rc;
    for (size_t i = 0; i < n; i++) {
        struct put_entry *e = &pb->entries[pb->entry_of[i]];
        int64_t id;
        if (e->known) {
            (*updated)++;
            if (e->published_at == arts[i].published_at) {
                id = e->id;
            } else {
                pb->vacated[pb->n_vacated++] = e->id;
                if ((rc = id_alloc(c, pb, arts[i].published_at, &id, err)) < 0)
                    return rc;
            }
        } else {
            (*inserted)++;
            if ((rc = id_alloc(c, pb, arts[i].published_at, &id, err)) < 0)
                return rc;
        }
        e->known = true;
        e->id = id;
        e->published_at = arts[i].published_at;
        e->last = i;
    }
    return 0;
}

/* A char[3] code as a NUL-terminated string. */
static void code_str(char out[3], const char code[3])
{
    size_t n = strnlen(code, 2);
    memcpy(out, code, n);
    out[n] = '\0';
}

/* The upsert, with the seq of each row read back. */
static int write_rows(struct pg_conn *c, struct put_batch *pb, const struct article *arts,
                      struct err *err)
{
    enum { N_COLS = 18 };
    struct buf col[N_COLS];
    struct pg_params p;
    PGresult *r = NULL;
    int64_t now = (int64_t)time(NULL);
    int rc = 0;

    for (int k = 0; k < N_COLS; k++)
        store_pg_array_begin(&col[k]);
    for (size_t i = 0; i < pb->n_entries; i++) {
        const struct put_entry *e = &pb->entries[i];
        const struct article *a = &arts[e->last];
        char lang[3], country[3];
        code_str(lang, a->language);
        code_str(country, a->country);
        store_pg_array_int(&col[0], e->id);
        store_pg_array_text(&col[1], a->url);
        store_pg_array_text(&col[2], a->canonical_url);
        store_pg_array_text(&col[3], a->source_id);
        store_pg_array_text(&col[4], a->source_name);
        store_pg_array_text(&col[5], a->author);
        store_pg_array_text(&col[6], a->title);
        store_pg_array_text(&col[7], a->description);
        store_pg_array_text(&col[8], a->url_to_image);
        store_pg_array_int(&col[9], a->published_at);
        store_pg_array_text(&col[10], a->content);
        store_pg_array_text(&col[11], a->domain);
        store_pg_array_text(&col[12], lang);
        store_pg_array_text(&col[13], country);
        store_pg_array_text(&col[14], a->category);
        store_pg_array_bool(&col[15], a->headline);
        store_pg_array_int(&col[16], a->ingested_at ? a->ingested_at : now);
        store_pg_array_int(&col[17], a->story_id);
    }
    store_pg_params_init(&p);
    for (int k = 0; k < N_COLS; k++) {
        if ((rc = store_pg_param_array(&p, &col[k], err)) < 0)
            goto out;
    }
    if ((rc = store_pg_run(c, &sql_upsert, &p, &r, err)) < 0)
        goto out;
    for (int i = 0; i < PQntuples(r); i++) {
        struct put_entry *e = entry_get(pb, PQgetvalue(r, i, 0), false, NULL);
        if (e)
            e->seq = store_pg_get_int(r, i, 2);
    }
out:
    PQclear(r);
    for (int k = 0; k < N_COLS; k++)
        buf_release(&col[k]);
    return rc;
}

int store_pg_articles_put(struct store_backend *b, struct article *arts, size_t n,
                          struct store_put_stats *stats, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct put_batch pb;
    struct pg_conn *c = NULL;
    size_t inserted = 0, updated = 0;
    int rc;

    if ((rc = batch_init(&pb, n, err)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct put_entry *e = entry_get(&pb, arts[i].canonical_url, true, NULL);
        pb.entry_of[i] = (size_t)(e - pb.entries);
    }

    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        goto out;
    if ((rc = store_pg_exec(c->c, "BEGIN", err)) < 0)
        goto out;
    if ((rc = store_pg_run(c, &sql_lock, NULL, NULL, err)) < 0 ||
        (rc = load_known(c, &pb, err)) < 0 || (rc = load_seconds(c, &pb, arts, n, err)) < 0 ||
        (rc = resolve(c, &pb, arts, n, &inserted, &updated, err)) < 0 ||
        (rc = write_rows(c, &pb, arts, err)) < 0) {
        rc = store_pg_end(c, rc, err);
        goto out;
    }
    if ((rc = store_pg_end(c, 0, err)) < 0)
        goto out;
    /* Ids and seqs are handed back only once the batch is committed. */
    for (size_t i = 0; i < n; i++) {
        arts[i].id = pb.entries[pb.entry_of[i]].id;
        arts[i].seq = pb.entries[pb.entry_of[i]].seq;
    }
    if (stats) {
        stats->inserted = inserted;
        stats->updated = updated;
    }
out:
    store_pg_pool_put(&s->pool, c);
    batch_free(&pb);
    return rc;
}

int store_pg_articles_count(struct store_backend *b, int64_t *out, struct err *err)
{
    return store_pg_query_int((struct store_pg *)b, &sql_count, NULL, out, err);
}

int store_pg_articles_delete(struct store_backend *b, const struct store_delete_filter *f,
                             size_t max, int64_t *deleted, struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    struct pg_conn *c = NULL;
    PGresult *r = NULL;
    int64_t hi;
    int rc;

    *deleted = 0;
    if (!store_delete_max_id(f, &hi))
        return 0;
    store_pg_params_set(&p, STORE_ARGS(STORE_INT(hi), STORE_TEXT(f->source_id)));
    if (f->canonical_url) /* unique: one row at most, whatever max */
        store_pg_param_text(&p, f->canonical_url);
    else
        store_pg_param_int(&p, max > (size_t)INT32_MAX ? INT32_MAX : (int64_t)max);
    if ((rc = store_pg_pool_get(&s->pool, &c, err)) < 0)
        return rc;
    /* One statement: its own transaction. Not retried (a write). */
    rc = store_pg_run(c, f->canonical_url ? &sql_delete_url : &sql_delete_oldest, &p, &r, err);
    if (rc == 0) {
        *deleted = strtoll(PQcmdTuples(r), NULL, 10);
        PQclear(r);
    }
    store_pg_pool_put(&s->pool, c);
    return rc;
}

int store_pg_stories_window(struct store_backend *b, int64_t window_s,
                            int (*fn)(void *ctx, const struct article *a), void *ctx,
                            struct err *err)
{
    struct store_pg *s = (struct store_pg *)b;
    struct pg_params p;
    PGresult *r = NULL;
    int rc;

    store_pg_params_set(&p, STORE_ARGS(STORE_INT(window_s)));
    if ((rc = store_pg_query(s, &sql_stories_window, &p, &r, err)) < 0)
        return rc;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        struct article a = {0};
        a.canonical_url = PQgetisnull(r, i, 0) ? NULL : PQgetvalue(r, i, 0);
        a.title = PQgetisnull(r, i, 1) ? NULL : PQgetvalue(r, i, 1);
        a.description = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2);
        a.content = PQgetisnull(r, i, 3) ? NULL : PQgetvalue(r, i, 3);
        a.published_at = store_pg_get_int(r, i, 4);
        a.story_id = store_pg_get_int(r, i, 5);
        rc = fn(ctx, &a);
    }
    PQclear(r);
    return rc;
}
