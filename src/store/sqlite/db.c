/* SQLite connections, read pool, error mapping and meta terms
 * (store/sqlite/db.h). */
#include "store/sqlite/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/columns.h"
#include "store/sqlite/bm25.h"
#include "text/text_fts5.h"
#include "util/arena.h"
#include "util/ascii.h"
#include "util/owner.h"

#include "util/banned.h"

int store_sqlite_fail(sqlite3 *db, int rc, struct err *err)
{
    int code;
    switch (rc & 0xff) {
    case SQLITE_FULL:
        code = ERR_FULL;
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        code = ERR_BUSY;
        break;
    case SQLITE_NOMEM:
        code = ERR_NOMEM;
        break;
    default:
        code = ERR_STORE;
        break;
    }
    /* errmsg describes the last call on db; without a handle, the code. */
    return err_set(err, code, "sqlite: %s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

/* Whether sql carries the mark of a kept statement (db.h). */
static bool is_kept(const char *sql)
{
    return sql && strncmp(sql, STORE_SQLITE_KEPT, strlen(STORE_SQLITE_KEPT)) == 0;
}

void store_sqlite_conn_close(sqlite3 *db)
{
    if (db == NULL)
        return;
    /* Statements kept on the connection (store_sqlite_prepare_kept), known
     * by their mark: others belong to whoever prepared them (FTS5 keeps
     * its own on the connection and finalizes them itself). */
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL), *next; st; st = next) {
        next = sqlite3_next_stmt(db, st);
        if (is_kept(sqlite3_sql(st)))
            sqlite3_finalize(st);
    }
    sqlite3_close_v2(db);
}

/* SQLite creates a database 0644 less the umask, and its -wal, -shm and
 * -journal files with the mode of the database. A store holds key hashes,
 * usage and feeds: the database is created here first, 0600 whatever the
 * umask, and the files SQLite adds follow it. An existing database keeps
 * its mode (an operator may have granted a group read, docs/security.md). */
static int file_create_private(const char *path, struct err *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        /* Root creating a store in the service's directory: the file is
         * the service's (SQLite gives the -wal and -shm the database's
         * owner itself). */
        int rc = 0;
        if (owner_fix_path(path) != 0)
            rc = err_set(err, ERR_IO, "cannot give %s its directory's owner: %s", path,
                         strerror(errno));
        close(fd);
        return rc;
    }
    if (errno == EEXIST)
        return 0;
    return err_set(err, ERR_IO, "cannot create %s: %s", path, strerror(errno));
}

/* STORE_SQLITE_AUTHOR_TERMS(author): the author's meta terms (db.h), ""
 * for NULL or a field without a word. */
static void author_terms_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const unsigned char *author = sqlite3_value_text(argv[0]);
    struct buf b;
    buf_init(&b, 0);
    if (store_meta_author_terms(&b, (const char *)author) < 0) {
        sqlite3_result_error_nomem(ctx);
    } else {
        sqlite3_result_text(ctx, b.data ? b.data : "", (int)b.len, SQLITE_TRANSIENT);
    }
    buf_release(&b);
}

int store_sqlite_conn_open(sqlite3 **out, const char *path, bool readonly, struct err *err)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_NOMUTEX; /* one thread at a time per connection: pool/mutex */
    int rc;

    *out = NULL;
    if (!readonly && (rc = file_create_private(path, err)) < 0)
        return rc;
    flags |= readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    rc = sqlite3_open_v2(path, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        goto out;
    }
    sqlite3_extended_result_codes(db, 1);
    rc = sqlite3_busy_timeout(db, STORE_SQLITE_BUSY_TIMEOUT_MS);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        goto out;
    }
    rc = text_fts5_register(db);
    if (rc < 0) {
        err_set(err, rc, "cannot register the %s tokenizer: %s", TEXT_FTS5_TOKENIZER,
                sqlite3_errmsg(db));
        goto out;
    }
    /* innocuous: the full-text triggers call it (SQLite refuses a
     * function of an untrusted schema otherwise) */
    if (sqlite3_create_function(db, STORE_SQLITE_AUTHOR_TERMS, 1,
                                SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                author_terms_fn, NULL, NULL) != SQLITE_OK) {
        rc = err_set(err, ERR_STORE, "cannot register %s: %s", STORE_SQLITE_AUTHOR_TERMS,
                     sqlite3_errmsg(db));
        goto out;
    }
    if ((rc = store_sqlite_bm25_register(db)) < 0) {
        err_set(err, rc, "cannot register %s: %s", STORE_BM25_FUNCTION, sqlite3_errmsg(db));
        goto out;
    }
    if ((rc = store_sqlite_exec(db, "PRAGMA foreign_keys=ON", err)) < 0)
        goto out;
    *out = db;
    db = NULL;
    rc = 0;
out:
    store_sqlite_conn_close(db);
    return rc;
}

int store_sqlite_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **out, struct err *err)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return store_sqlite_fail(db, rc, err);
    }
    return 0;
}

int store_sqlite_prepare_kept(sqlite3 *db, const char *sql, sqlite3_stmt **out, struct err *err)
{
    *out = NULL;
    if (!is_kept(sql))
        return err_set(err, ERR_INVALID, "a kept statement without its mark");
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st; st = sqlite3_next_stmt(db, st)) {
        const char *text = sqlite3_sql(st);
        if (!sqlite3_stmt_busy(st) && text && strcmp(text, sql) == 0) {
            *out = st;
            return 0;
        }
    }
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return store_sqlite_fail(db, rc, err);
    }
    return 0;
}

int store_sqlite_bind(sqlite3_stmt *st, const struct store_arg *args, size_t n)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        const struct store_arg *x = &args[i];
        int at = (int)i + 1;
        switch (x->kind) {
        case STORE_ARG_INT:
        case STORE_ARG_BOOL:
            rc = sqlite3_bind_int64(st, at, x->i);
            break;
        case STORE_ARG_DOUBLE:
            rc = sqlite3_bind_double(st, at, x->d);
            break;
        case STORE_ARG_TEXT:
            rc = x->p ? sqlite3_bind_text(st, at, x->p, x->len, SQLITE_STATIC)
                      : sqlite3_bind_null(st, at);
            break;
        case STORE_ARG_BLOB:
            rc = sqlite3_bind_blob(st, at, x->p, x->len, SQLITE_STATIC);
            break;
        }
    }
    return rc;
}

int store_sqlite_prepare_args(sqlite3 *db, const char *sql, const struct store_arg *args, size_t n,
                              sqlite3_stmt **st, struct err *err)
{
    int rc = store_sqlite_prepare(db, sql, st, err);
    if (rc < 0)
        return rc;
    rc = store_sqlite_bind(*st, args, n);
    if (rc != SQLITE_OK) {
        rc = store_sqlite_fail(db, rc, err);
        sqlite3_finalize(*st);
        *st = NULL;
        return rc;
    }
    return 0;
}

int store_sqlite_step_row(sqlite3 *db, sqlite3_stmt *st, struct err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : store_sqlite_fail(db, rc, err);
}

int store_sqlite_step_done(sqlite3 *db, sqlite3_stmt *st, struct err *err)
{
    int rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : store_sqlite_fail(db, rc, err);
    sqlite3_reset(st);
    return rc;
}

int store_sqlite_write(sqlite3 *db, const char *sql, const struct store_arg *args, size_t n,
                       int *changes, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_args(db, sql, args, n, &st, err);
    if (rc < 0)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        rc = 0;
    else if (rc == SQLITE_CONSTRAINT_UNIQUE)
        rc = err_set(err, ERR_EXISTS, "sqlite: %s", sqlite3_errmsg(db));
    else
        rc = store_sqlite_fail(db, rc, err);
    if (changes)
        *changes = rc == 0 ? sqlite3_changes(db) : 0;
    sqlite3_finalize(st);
    return rc;
}

/* The integer of the first column of st's first row into *out (0 when
 * there is no row or it is NULL); finalizes st. */
static int step_int(sqlite3 *db, sqlite3_stmt *st, int64_t *out, struct err *err)
{
    int rc = store_sqlite_step_row(db, st, err);
    if (rc == 1) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_query_int(sqlite3 *db, const char *sql, int64_t *out, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare(db, sql, &st, err);
    *out = 0;
    if (rc < 0)
        return rc;
    return step_int(db, st, out, err);
}

int store_sqlite_query_int_args(sqlite3 *db, const char *sql, const struct store_arg *args,
                                size_t n, int64_t *out, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_args(db, sql, args, n, &st, err);
    *out = 0;
    if (rc < 0)
        return rc;
    return step_int(db, st, out, err);
}

int store_sqlite_meta_text(sqlite3 *db, const char *key, char *out, size_t cap, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare(db, "SELECT value FROM meta WHERE key = ?1", &st, err);
    out[0] = '\0';
    if (rc < 0)
        return rc;
    store_sqlite_bind_text(st, 1, key);
    rc = store_sqlite_step_row(db, st, err);
    if (rc == 1) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        snprintf(out, cap, "%s", v ? (const char *)v : "");
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int store_sqlite_exec(sqlite3 *db, const char *sql, struct err *err)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : store_sqlite_fail(db, rc, err);
}

int store_sqlite_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s == NULL)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

int store_sqlite_column_dup(struct arena *a, sqlite3_stmt *st, int i, const char **out)
{
    const unsigned char *t;
    char *copy;

    *out = NULL;
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return 0;
    t = sqlite3_column_text(st, i);
    if (t == NULL)
        return ERR_NOMEM; /* not NULL typed, so conversion failed */
    copy = arena_strndup(a, (const char *)t, (size_t)sqlite3_column_bytes(st, i));
    if (copy == NULL)
        return ERR_NOMEM;
    *out = copy;
    return 0;
}

int store_sqlite_bind_article(sqlite3_stmt *st, const struct article *a, int64_t id, int64_t seq,
                              int64_t ingested_at, const char *meta_terms)
{
    return store_sqlite_bind(
        st,
        STORE_ARGS(STORE_INT(id), STORE_INT(seq), STORE_TEXT(a->url), STORE_TEXT(a->canonical_url),
                   STORE_TEXT(a->source_id), STORE_TEXT(a->source_name), STORE_TEXT(a->author),
                   STORE_TEXT(a->title), STORE_TEXT(a->description), STORE_TEXT(a->url_to_image),
                   STORE_INT(a->published_at), STORE_TEXT(a->content), STORE_TEXT(a->domain),
                   STORE_CODE(a->language), STORE_CODE(a->country), STORE_TEXT(a->category),
                   STORE_INT(a->headline ? 1 : 0), STORE_INT(ingested_at), STORE_TEXT(meta_terms),
                   /* 0: not assigned (a replica of rows stored before stories) */
                   a->story_id ? STORE_INT(a->story_id) : STORE_TEXT(NULL)));
}

#define FETCH_CHUNK 100 /* ids per "WHERE id IN (...)" */

#define ARTICLE_COLUMNS                                                                            \
    "id, seq, source_id, source_name, author, title, description, url, url_to_image,"              \
    " published_at, content, canonical_url, domain, language, country, category, headline,"        \
    " ingested_at, coalesce(story_id, 0)"

/* String column i of st's current row: copied into a, or (a NULL) the
 * row's own bytes, valid until st's next step or reset. NULL for SQL NULL. */
static int column_str(struct arena *a, sqlite3_stmt *st, int i, const char **out)
{
    if (a)
        return store_sqlite_column_dup(a, st, i, out);
    *out = NULL;
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return 0;
    *out = (const char *)sqlite3_column_text(st, i);
    return *out ? 0 : ERR_NOMEM; /* not NULL typed, so conversion failed */
}

/* s (NULL: nothing) into out[0..cap), cut to fit, NUL-terminated: what
 * snprintf("%s") did, without its cost on every row of an export. */
static void code_put(char *out, size_t cap, const char *s)
{
    if (!s)
        return;
    size_t n = strnlen(s, cap - 1);
    memcpy(out, s, n);
    out[n] = '\0';
}

/* The current row (ARTICLE_COLUMNS) into *out, strings as column_str. */
static int article_row(struct arena *a, sqlite3_stmt *st, struct article *out)
{
    const char *lang = NULL, *country = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    out->seq = sqlite3_column_int64(st, 1);
    const char **strs[] = {&out->source_id,   &out->source_name, &out->author,      &out->title,
                           &out->description, &out->url,         &out->url_to_image};
    for (int i = 0; i < 7 && rc == 0; i++)
        rc = column_str(a, st, 2 + i, strs[i]);
    out->published_at = sqlite3_column_int64(st, 9);
    if (rc == 0)
        rc = column_str(a, st, 10, &out->content);
    if (rc == 0)
        rc = column_str(a, st, 11, &out->canonical_url);
    if (rc == 0)
        rc = column_str(a, st, 12, &out->domain);
    lang = (const char *)sqlite3_column_text(st, 13);
    country = (const char *)sqlite3_column_text(st, 14);
    code_put(out->language, sizeof out->language, lang);
    code_put(out->country, sizeof out->country, country);
    if (rc == 0)
        rc = column_str(a, st, 15, &out->category);
    out->headline = sqlite3_column_int(st, 16) != 0;
    out->ingested_at = sqlite3_column_int64(st, 17);
    out->story_id = sqlite3_column_int64(st, 18); /* 0: stored before stories */
    return rc;
}

int store_sqlite_articles_by_id(sqlite3 *db, struct arena *a, const int64_t *ids, size_t n,
                                struct article *arts, struct err *err)
{
    char sql[sizeof "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id IN ()" + FETCH_CHUNK * 2];
    sqlite3_stmt *st = NULL;
    int rc = 0;

    for (size_t base = 0; base < n && rc == 0; base += FETCH_CHUNK) {
        size_t k = n - base < FETCH_CHUNK ? n - base : FETCH_CHUNK;
        size_t len = (size_t)snprintf(sql, sizeof sql,
                                      "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id IN (");
        /* Only placeholders are added: no value is ever part of the SQL. */
        for (size_t i = 0; i < k; i++) {
            if (i > 0)
                sql[len++] = ',';
            sql[len++] = '?';
        }
        sql[len++] = ')';
        sql[len] = '\0';
        if ((rc = store_sqlite_prepare(db, sql, &st, err)) < 0)
            break;
        for (size_t i = 0; i < k; i++)
            sqlite3_bind_int64(st, (int)i + 1, ids[base + i]);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            size_t j;
            for (j = 0; j < k && ids[base + j] != id; j++)
                ;
            if (j == k)
                continue;
            if ((rc = article_row(a, st, &arts[base + j])) < 0) {
                err_set(err, rc, "out of memory reading articles");
                break;
            }
        }
        if (rc == SQLITE_DONE)
            rc = 0;
        else if (rc > 0)
            rc = store_sqlite_fail(db, rc, err);
        sqlite3_finalize(st);
        st = NULL;
    }
    return rc;
}

#define EACH_BY_ID_SQL STORE_SQLITE_KEPT "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id = ?1"
#define EACH_RANGE_SQL                                                                             \
    STORE_SQLITE_KEPT "SELECT " ARTICLE_COLUMNS " FROM articles WHERE id BETWEEN ?1 AND ?2"        \
                      " ORDER BY id DESC"

/* The range's rows stepped over oldest first, columns unread: its leaf
 * pages read forward, in the order the kernel reads ahead. The walk below
 * goes newest first, and a backward read gets no readahead: a cold export
 * at 10 M articles read one 4 KiB page per request from disk, 26,000
 * articles/s (docs/performance.md "Export, cold"). */
#define RANGE_TOUCH_SQL STORE_SQLITE_KEPT "SELECT id FROM articles WHERE id BETWEEN ?1 AND ?2"
#define RANGE_TOUCH_MIN 64 /* fewer rows are a page or two: not worth a walk */

static int touch_range(sqlite3 *db, int64_t lo, int64_t hi, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = store_sqlite_prepare_kept(db, RANGE_TOUCH_SQL, &st, err);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        ;
    rc = step == SQLITE_DONE ? 0 : store_sqlite_fail(db, step, err);
    sqlite3_reset(st);
    return rc;
}

/* The current row of st to fn, its strings the row's own. */
static int each_row(sqlite3_stmt *st, int (*fn)(void *ctx, const struct article *a), void *ctx,
                    struct err *err)
{
    struct article art;
    int rc = article_row(NULL, st, &art);
    return rc < 0 ? err_set(err, rc, "out of memory reading articles") : fn(ctx, &art);
}

/* ids[0..n), newest first, by a walk down the id range they span: one
 * step per row instead of a search of the table per id. Rows of the range
 * that are not asked for are stepped over; once they outnumber the ids
 * (sparse matches) the walk stops and *done says how far it got. */
static int each_in_range(sqlite3 *db, const int64_t *ids, size_t n,
                         int (*fn)(void *ctx, const struct article *a), void *ctx, size_t *done,
                         struct err *err)
{
    sqlite3_stmt *st = NULL;
    size_t i = 0, passed = 0;
    int rc = 0;
    *done = 0;
    if (n >= RANGE_TOUCH_MIN && (rc = touch_range(db, ids[n - 1], ids[0], err)) < 0)
        return rc;
    if ((rc = store_sqlite_prepare_kept(db, EACH_RANGE_SQL, &st, err)) < 0)
        return rc;
    sqlite3_bind_int64(st, 1, ids[n - 1]);
    sqlite3_bind_int64(st, 2, ids[0]);
    int step = SQLITE_DONE;
    while (rc == 0 && i < n && passed <= n && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        while (i < n && ids[i] > id)
            i++; /* no row: deleted since, passed over */
        if (i < n && ids[i] == id) {
            rc = each_row(st, fn, ctx, err);
            i++;
        } else {
            passed++; /* past n of them: sparse, the rest by id */
        }
    }
    if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = store_sqlite_fail(db, step, err);
    sqlite3_reset(st);
    *done = i;
    return rc;
}

static bool descending(const int64_t *ids, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (ids[i] >= ids[i - 1])
            return false;
    return true;
}

int store_sqlite_articles_each(sqlite3 *db, const int64_t *ids, size_t n,
                               int (*fn)(void *ctx, const struct article *a), void *ctx,
                               struct err *err)
{
    size_t at = 0;
    int rc = 0;
    if (n > 1 && descending(ids, n) && (rc = each_in_range(db, ids, n, fn, ctx, &at, err)) != 0)
        return rc;
    if (at == n)
        return 0;
    /* One kept statement, an id at a time: no SQL parsed per call (an IN
     * list's was 7 % of an export's thread) and no string copied. */
    sqlite3_stmt *st = NULL;
    rc = store_sqlite_prepare_kept(db, EACH_BY_ID_SQL, &st, err);
    for (size_t i = at; i < n && rc == 0; i++) {
        sqlite3_bind_int64(st, 1, ids[i]);
        if ((rc = sqlite3_step(st)) == SQLITE_ROW)
            rc = each_row(st, fn, ctx, err);
        else if (rc == SQLITE_DONE)
            rc = 0; /* deleted since: passed over */
        else
            rc = store_sqlite_fail(db, rc, err);
        sqlite3_reset(st);
    }
    return rc;
}

int store_sqlite_fulltext_get(sqlite3 *db, bool *on, struct err *err)
{
    int64_t n = 0;
    int rc = store_sqlite_query_int(db,
                                    "SELECT count(*) FROM sqlite_master"
                                    " WHERE type = 'trigger' AND name = 'articles_fts_insert'",
                                    &n, err);
    *on = n > 0;
    return rc;
}

int store_sqlite_story_index_get(sqlite3 *db, bool *on, struct err *err)
{
    int64_t n = 0;
    int rc =
        store_sqlite_query_int(db,
                               "SELECT count(*) FROM sqlite_master"
                               " WHERE type = 'index' AND name = '" STORE_SQLITE_STORY_INDEX "'",
                               &n, err);
    *on = n > 0;
    return rc;
}

int store_sqlite_fulltext_set(sqlite3 *db, bool on, struct err *err)
{
    bool now;
    int rc;

    if ((rc = store_sqlite_exec(db, "BEGIN IMMEDIATE", err)) < 0)
        return rc;
    if ((rc = store_sqlite_fulltext_get(db, &now, err)) < 0)
        goto out;
    /* The story index of the FTS5 mode (a store whose side predates it
     * gets it too) */
    if (on && (rc = store_sqlite_exec(db, STORE_SQLITE_STORY_INDEX_SQL, err)) < 0)
        goto out;
    if (now == on)
        goto out;
    if (on) {
        /* A stale table without its triggers (dropped by hand) is rebuilt. */
        if ((rc = store_sqlite_exec(db, "DROP TABLE IF EXISTS articles_fts", err)) < 0 ||
            (rc = store_sqlite_exec(db, STORE_SQLITE_FULLTEXT_SQL, err)) < 0)
            goto out;
        rc = store_sqlite_exec(db,
                               "INSERT INTO articles_fts(rowid, title, description, content, meta)"
                               " SELECT id, " STORE_SQLITE_FTS_VALUES("") " FROM articles",
                               err);
    } else {
        rc = store_sqlite_exec(db,
                               "DROP INDEX IF EXISTS " STORE_SQLITE_STORY_INDEX ";"
                               "DROP TRIGGER IF EXISTS articles_fts_insert;"
                               "DROP TRIGGER IF EXISTS articles_fts_delete;"
                               "DROP TRIGGER IF EXISTS articles_fts_update;"
                               "DROP TABLE IF EXISTS articles_fts;",
                               err);
    }
out:
    if (rc == 0)
        return store_sqlite_exec(db, "COMMIT", err);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* store/columns.h's accessors on a statement's current row. */
static int64_t col_i64(void *st, int j)
{
    return sqlite3_column_int64(st, j);
}

static bool col_bool(void *st, int j)
{
    return sqlite3_column_int(st, j) != 0;
}

static double col_double(void *st, int j)
{
    return sqlite3_column_double(st, j);
}

static int col_str(struct arena *a, void *st, int j, const char **out)
{
    return store_sqlite_column_dup(a, st, j, out);
}

static void col_code(void *st, int j, char out[3])
{
    const unsigned char *t = sqlite3_column_text(st, j);
    if (t && sqlite3_column_bytes(st, j) == 2)
        memcpy(out, t, 2); /* out[2] stays the record's zeroed NUL */
}

static int col_hash(void *st, int j, unsigned char out[32])
{
    const void *hash = sqlite3_column_blob(st, j);
    if (hash && sqlite3_column_bytes(st, j) == 32)
        memcpy(out, hash, 32);
    return 0;
}

static const struct store_col_access column_access = {col_i64, col_bool, col_double,
                                                      col_str, col_code, col_hash};

int store_sqlite_row(struct arena *a, sqlite3_stmt *st, const struct store_record *rec, void *item)
{
    return store_row_read(&column_access, a, st, rec, item);
}

/* Step st to its end, reading every row as rec into an arena array. */
static int collect(sqlite3 *db, sqlite3_stmt *st, struct arena *a, const struct store_record *rec,
                   void **out, size_t *n_out, struct err *err)
{
    const size_t item_size = rec->size;
    const char *what = rec->what;
    unsigned char *items = NULL;
    size_t n = 0, cap = 0;
    int rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            /* The arena cannot grow in place: copy into a doubled array. */
            size_t ncap = cap ? 2 * cap : 16;
            unsigned char *grown = arena_calloc(a, ncap, item_size);
            if (grown == NULL)
                return err_set(err, ERR_NOMEM, "out of memory listing %s", what);
            if (n)
                memcpy(grown, items, n * item_size);
            items = grown;
            cap = ncap;
        }
        if ((rc = store_sqlite_row(a, st, rec, items + n * item_size)) < 0)
            return err_set(err, rc, "out of memory listing %s", what);
        n++;
    }
    if (rc != SQLITE_DONE)
        return store_sqlite_fail(db, rc, err);
    *out = items;
    *n_out = n;
    return 0;
}

/* Step st once: no row → ERR_NOTFOUND with `missing`; a row → read as
 * rec into item (skipped when item is NULL). */
static int one(sqlite3 *db, sqlite3_stmt *st, struct arena *a, const struct store_record *rec,
               void *item, const char *missing, struct err *err)
{
    int rc = store_sqlite_step_row(db, st, err);
    if (rc <= 0)
        return rc < 0 ? rc : err_set(err, ERR_NOTFOUND, "%s", missing);
    if (item == NULL)
        return 0;
    if ((rc = store_sqlite_row(a, st, rec, item)) < 0)
        return err_set(err, rc, "out of memory reading a row");
    return 0;
}

/* A kept statement back to idle: no row pending, no value bound. */
static void kept_release(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

int store_sqlite_pool_prepare(struct store_sqlite_pool *p, const char *sql,
                              const struct store_arg *args, size_t n, sqlite3 **db,
                              sqlite3_stmt **st, struct err *err)
{
    *st = NULL;
    int rc = store_sqlite_pool_get(p, db, err);
    if (rc < 0) {
        *db = NULL;
        return rc;
    }
    if (!is_kept(sql))
        return store_sqlite_prepare_args(*db, sql, args, n, st, err);
    if ((rc = store_sqlite_prepare_kept(*db, sql, st, err)) < 0)
        return rc;
    if ((rc = store_sqlite_bind(*st, args, n)) != SQLITE_OK) {
        rc = store_sqlite_fail(*db, rc, err);
        kept_release(*st);
        *st = NULL;
    }
    return rc;
}

void store_sqlite_pool_finish(struct store_sqlite_pool *p, sqlite3 *db, sqlite3_stmt *st)
{
    if (st && is_kept(sqlite3_sql(st)))
        kept_release(st);
    else
        sqlite3_finalize(st);
    store_sqlite_pool_put(p, db);
}

int store_sqlite_read_one(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, struct arena *a,
                          const struct store_record *rec, void *item, const char *missing,
                          struct err *err)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int rc = store_sqlite_pool_prepare(p, sql, args, n, &db, &st, err);
    if (rc == 0)
        rc = one(db, st, a, rec, item, missing, err);
    store_sqlite_pool_finish(p, db, st);
    return rc;
}

int store_sqlite_read_all(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, struct arena *a,
                          const struct store_record *rec, void *out, size_t *n_out, struct err *err)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    void *items = NULL;
    int rc = store_sqlite_pool_prepare(p, sql, args, n, &db, &st, err);
    if (rc == 0)
        rc = collect(db, st, a, rec, &items, n_out, err);
    store_sqlite_pool_finish(p, db, st);
    if (rc == 0)
        store_records_give(out, items);
    return rc;
}

int store_sqlite_read_int(struct store_sqlite_pool *p, const char *sql,
                          const struct store_arg *args, size_t n, int64_t *out, struct err *err)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    *out = 0;
    int rc = store_sqlite_pool_prepare(p, sql, args, n, &db, &st, err);
    if (rc == 0 && (rc = store_sqlite_step_row(db, st, err)) == 1) {
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
    }
    store_sqlite_pool_finish(p, db, st);
    return rc;
}

/* --- read pool ------------------------------------------------------------ */

int store_sqlite_pool_init(struct store_sqlite_pool *p, const char *path, struct err *err)
{
    memset(p, 0, sizeof *p);
    p->path = strdup(path);
    if (p->path == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p->path);
        p->path = NULL;
        return err_set(err, ERR_NOMEM, "cannot create a mutex");
    }
    return 0;
}

void store_sqlite_pool_release(struct store_sqlite_pool *p)
{
    if (p->path == NULL)
        return;
    for (size_t i = 0; i < p->n_idle; i++)
        store_sqlite_conn_close(p->idle[i]);
    p->n_idle = 0;
    pthread_mutex_destroy(&p->lock);
    free(p->path);
    p->path = NULL;
}

int store_sqlite_pool_get(struct store_sqlite_pool *p, sqlite3 **out, struct err *err)
{
    sqlite3 *db = NULL;

    pthread_mutex_lock(&p->lock);
    if (p->n_idle > 0)
        db = p->idle[--p->n_idle];
    pthread_mutex_unlock(&p->lock);
    if (db) {
        *out = db;
        return 0;
    }
    /* Opened outside the lock: opening reads the schema and may wait. */
    return store_sqlite_conn_open(out, p->path, true, err);
}

void store_sqlite_pool_put(struct store_sqlite_pool *p, sqlite3 *db)
{
    if (db == NULL)
        return;
    /* A connection left inside a transaction would pin an old snapshot. */
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_lock(&p->lock);
    if (p->n_idle < STORE_SQLITE_POOL_MAX) {
        p->idle[p->n_idle++] = db;
        db = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    store_sqlite_conn_close(db);
}
