/* fts5_baseline: the simplest thing a user could build instead of newsd, to
 * measure newsd against in the same run: one SQLite file with a plain FTS5
 * table over title, description and content (tokenize='unicode61
 * remove_diacritics 2'), an articles table with the columns the filters
 * need and B-tree indexes on them, and straightforward SQL per request:
 * MATCH + WHERE filters + ORDER BY + LIMIT/OFFSET, and a separate COUNT(*).
 *
 *   fts5_baseline build [--meta] --db FILE --sources FILE.jsonl  (articles JSONL on stdin)
 *   fts5_baseline query [--meta] --db FILE --mix FILE [--reps R] [--warmup W]
 *                       [--clients 1,2,4,16] [--seconds S]
 *
 * --meta (issue 31) is the better-tuned peer: the FTS table has a fourth
 * column of filter terms (language, source id, domain and its parents) and
 * those filters are MATCH terms instead of B-tree lookups; the date window
 * stays a range on the articles table. Its lines are named fts5-meta.
 *
 * The query language is translated to FTS5 syntax from newsd's own parse
 * tree (a user would write the same translation): words and phrases become
 * quoted FTS5 strings, AND/OR/NOT the FTS5 operators. What it does not do,
 * and newsd does: stemming, CJK bigrams, NFKC folding, upsert by canonical
 * URL (every line is a new row). Prints load/lat/tput/mem lines
 * (bench/common.h) on stdout. */
#include "common.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/query.h"
#include "util/buf.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define BATCH 2000 /* rows per transaction, as newsd's import (LIMIT_IMPORT_BATCH) */
#define MAX_BINDS 64

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS articles("
    " id INTEGER PRIMARY KEY, source_id TEXT, source_name TEXT, author TEXT, url TEXT,"
    " url_to_image TEXT, published_at INTEGER, domain TEXT, language TEXT);"
    "CREATE INDEX IF NOT EXISTS articles_published ON articles(published_at);"
    "CREATE INDEX IF NOT EXISTS articles_language ON articles(language, published_at);"
    "CREATE INDEX IF NOT EXISTS articles_source ON articles(source_id, published_at);"
    "CREATE INDEX IF NOT EXISTS articles_domain ON articles(domain, published_at);"
    "CREATE TABLE IF NOT EXISTS sources(id TEXT PRIMARY KEY, popularity REAL);";
static const char schema_fts[] =
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, description, content,"
    " tokenize='unicode61 remove_diacritics 2');";
/* --meta: the same table with a fourth column of filter terms (issue 31),
 * so that language, sources and domains are MATCH terms of the one FTS5
 * query instead of B-tree lookups joined to it. */
static const char schema_fts_meta[] =
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, description, content, meta,"
    " tokenize='unicode61 remove_diacritics 2');";

/* Which baseline this process is: plain FTS5 ("fts5") or FTS5 with the
 * filters as terms ("fts5-meta"); names its result lines. */
static bool meta_mode;
static const char *engine_name = "fts5";

static int sql_fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "fts5_baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    return -1;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* One filter term of the meta column: a one-letter kind (l language,
 * s source, d domain) and the value with every byte outside [a-z0-9]
 * written as x + two hex digits (x itself too). The tokenizer is the text
 * columns' unicode61, which splits at '-' and '.': this keeps each value
 * one token, so `s` + "bbc-news" cannot match "bbc-news-arabic", and
 * leaves the text columns tokenized exactly as the plain baseline's. */
static void meta_term(struct buf *b, char kind, const char *value)
{
    static const char hex[] = "0123456789abcdef";
    buf_putc(b, kind);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if ((*p >= 'a' && *p <= 'z' && *p != 'x') || (*p >= '0' && *p <= '9')) {
            buf_putc(b, (char)*p);
        } else {
            buf_putc(b, 'x');
            buf_putc(b, hex[*p >> 4]);
            buf_putc(b, hex[*p & 15]);
        }
    }
}

/* The meta column of one article: its language, its source id and its
 * domain with every parent domain (a domains filter matches subdomains,
 * API.md §8: "edition.cnn.com" is filed under "cnn.com" and "com" too). */
static void meta_column(struct buf *b, const char *language, const char *source_id,
                        const char *domain)
{
    buf_reset(b);
    if (language && *language) {
        meta_term(b, 'l', language);
        buf_putc(b, ' ');
    }
    if (source_id && *source_id) {
        meta_term(b, 's', source_id);
        buf_putc(b, ' ');
    }
    for (const char *d = domain; d && *d;) {
        meta_term(b, 'd', d);
        buf_putc(b, ' ');
        d = strchr(d, '.');
        d = d ? d + 1 : NULL;
    }
}

/* ---- build --------------------------------------------------------------- */

/* Where the file's bytes are, from SQLite's dbstat table (pages per table
 * and index), as size lines: the FTS5 index proper (fts_data, fts_idx,
 * fts_docsize, fts_config: what the engine's files replace), the text FTS5
 * keeps a copy of (fts_content), and the rows (articles, sources and their
 * B-tree indexes). Nothing when this SQLite has no dbstat. */
static void print_sizes(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    long long fts_index = 0, fts_content = 0, rows = 0;
    if (sqlite3_prepare_v2(db, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name", -1, &st,
                           NULL) != SQLITE_OK) {
        fprintf(stderr, "fts5_baseline: no dbstat (%s): sizes by table not measured\n",
                sqlite3_errmsg(db));
        return;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        long long bytes = sqlite3_column_int64(st, 1);
        if (name && strcmp(name, "fts_content") == 0)
            fts_content += bytes;
        else if (name && strncmp(name, "fts_", 4) == 0)
            fts_index += bytes;
        else
            rows += bytes;
    }
    sqlite3_finalize(st);
    printf("size\t%s\tfts-index\t%lld\n", engine_name, fts_index);
    printf("size\t%s\tfts-content\t%lld\n", engine_name, fts_content);
    printf("size\t%s\trows\t%lld\n", engine_name, rows);
}

static int load_sources(sqlite3 *db, const char *path)
{
    FILE *f = fopen(path, "r");
    sqlite3_stmt *st = NULL;
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;

    if (f == NULL) {
        fprintf(stderr, "fts5_baseline: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO sources(id, popularity) VALUES(?1, ?2)", -1,
                           &st, NULL) != SQLITE_OK) {
        rc = sql_fail(db, "sources");
        goto out;
    }
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        const char *id = jstr(o, "id");
        if (id) {
            sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
            sqlite3_bind_double(st, 2, json_number_value(json_object_get(o, "popularity")));
            if (sqlite3_step(st) != SQLITE_DONE) {
                json_decref(o);
                rc = sql_fail(db, "sources insert");
                goto out;
            }
            sqlite3_reset(st);
        }
        json_decref(o);
    }
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(db, "commit");
out:
    sqlite3_finalize(st);
    free(line);
    fclose(f);
    return rc;
}

static int cmd_build(const char *db_path, const char *sources_path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *ins_a = NULL, *ins_f = NULL;
    char *line = NULL, domain[256];
    struct buf meta = BUF_INIT;
    size_t cap = 0;
    long long n = 0, bad = 0;
    int rc = -1;
    double t0 = bench_now(), built = 0;

    if (sqlite3_open(db_path, &db) != SQLITE_OK || sqlite3_exec(db, schema, NULL, NULL, NULL) ||
        sqlite3_exec(db, meta_mode ? schema_fts_meta : schema_fts, NULL, NULL, NULL))
        return sql_fail(db, db_path);
    if (load_sources(db, sources_path) < 0)
        goto out;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO articles(source_id, source_name, author, url,"
                           " url_to_image, published_at, domain, language)"
                           " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                           -1, &ins_a, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           meta_mode ? "INSERT INTO fts(rowid, title, description, content, meta)"
                                       " VALUES(?1, ?2, ?3, ?4, ?5)"
                                     : "INSERT INTO fts(rowid, title, description, content)"
                                       " VALUES(?1, ?2, ?3, ?4)",
                           -1, &ins_f, NULL) != SQLITE_OK) {
        sql_fail(db, "prepare");
        goto out;
    }
    while (getline(&line, &cap, stdin) > 0) {
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        const json_t *src = json_object_get(o, "source");
        const char *published = jstr(o, "publishedAt"), *url = jstr(o, "url");
        int64_t t = 0;
        if (!json_is_object(o) || !published || !url ||
            timefmt_parse_iso8601(published, strlen(published), &t, NULL) < 0) {
            bad++;
            json_decref(o);
            continue;
        }
        if (n % BATCH == 0 && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
            json_decref(o);
            sql_fail(db, "begin");
            goto out;
        }
        bench_url_domain(url, domain, sizeof domain);
        sqlite3_bind_text(ins_a, 1, jstr(src, "id"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_a, 2, jstr(src, "name"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_a, 3, jstr(o, "author"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_a, 4, url, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_a, 5, jstr(o, "urlToImage"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(ins_a, 6, t);
        sqlite3_bind_text(ins_a, 7, domain, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_a, 8, jstr(o, "language"), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins_a) != SQLITE_DONE) {
            json_decref(o);
            sql_fail(db, "insert article");
            goto out;
        }
        sqlite3_reset(ins_a);
        sqlite3_bind_int64(ins_f, 1, sqlite3_last_insert_rowid(db));
        sqlite3_bind_text(ins_f, 2, jstr(o, "title"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_f, 3, jstr(o, "description"), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins_f, 4, jstr(o, "content"), -1, SQLITE_TRANSIENT);
        if (meta_mode) {
            meta_column(&meta, jstr(o, "language"), jstr(src, "id"), domain);
            if (buf_error(&meta)) {
                json_decref(o);
                fprintf(stderr, "fts5_baseline: out of memory\n");
                goto out;
            }
            sqlite3_bind_text(ins_f, 5, meta.data ? meta.data : "", -1, SQLITE_TRANSIENT);
        }
        if (sqlite3_step(ins_f) != SQLITE_DONE) {
            json_decref(o);
            sql_fail(db, "insert fts");
            goto out;
        }
        sqlite3_reset(ins_f);
        json_decref(o);
        if (++n % BATCH == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            sql_fail(db, "commit");
            goto out;
        }
    }
    if (n % BATCH != 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sql_fail(db, "commit");
        goto out;
    }
    /* Fold the WAL into the file so its size is the database's. */
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    built = bench_now() - t0;
    print_sizes(db);
    rc = 0;
out:
    sqlite3_finalize(ins_a);
    sqlite3_finalize(ins_f);
    sqlite3_close(db);
    free(line);
    buf_release(&meta);
    if (rc == 0) {
        char wal[4096];
        snprintf(wal, sizeof wal, "%s-wal", db_path);
        printf("run\tsqlite\t%s\n", sqlite3_libversion());
        printf("load\t%s\t%lld\t%.3f\t%lld\n", engine_name, n, built,
               file_size(db_path) + file_size(wal));
        if (bad)
            fprintf(stderr, "fts5_baseline: %lld lines skipped\n", bad);
    }
    return rc;
}

/* ---- query ----------------------------------------------------------------- */

/* One request as SQL: the MATCH expression and the WHERE filters, with
 * their values, for a COUNT(*) and a page query. */
struct prepared {
    char *count_sql, *page_sql;
    const char *binds[MAX_BINDS]; /* text values; ?1 .. ?n */
    int n_binds;
    int64_t from, to; /* bound after the text values when windowed */
    bool windowed;
    int64_t limit, offset;
};

/* newsd's tree in FTS5 syntax: "((a AND b) NOT c)", '"' doubled. */
static const struct bench_query_syntax fts5_syntax = {
    .and_open = "((", .and_sep = " AND ", .and_mid = ")", .not_sep = " NOT ", .escape = '"'};

static void fts_expr(struct buf *b, const struct query_node *n)
{
    bench_query_text(b, n, &fts5_syntax);
}

static int bind_add(struct prepared *p, struct arena *a, const char *v)
{
    if (p->n_binds >= MAX_BINDS)
        return -1;
    p->binds[p->n_binds] = arena_strdup(a, v);
    return p->binds[p->n_binds] ? ++p->n_binds : -1;
}

/* The filters as SQL on the articles table (the plain baseline): language,
 * sources and domains through their B-tree indexes. */
static void where_filters(struct buf *where, struct arena *a, struct prepared *p,
                          const struct index_request *req)
{
    if (req->language) {
        bind_add(p, a, req->language);
        buf_printf(where, " AND a.language = ?%d", p->n_binds);
    }
    if (req->n_sources) {
        buf_puts(where, " AND a.source_id IN (");
        for (size_t i = 0; i < req->n_sources; i++) {
            bind_add(p, a, req->sources[i]);
            buf_printf(where, "%s?%d", i ? ", " : "", p->n_binds);
        }
        buf_putc(where, ')');
    }
    if (req->n_domains) {
        /* A domain matches itself and its subdomains (API.md §8). */
        buf_puts(where, " AND (");
        for (size_t i = 0; i < req->n_domains; i++) {
            char *like = arena_printf(a, "%%.%s", req->domains[i]);
            bind_add(p, a, req->domains[i]);
            bind_add(p, a, like ? like : "");
            buf_printf(where, "%sa.domain = ?%d OR a.domain LIKE ?%d", i ? " OR " : "",
                       p->n_binds - 1, p->n_binds);
        }
        buf_putc(where, ')');
    }
}

/* One filter as MATCH terms of the meta column: "meta : (t1 OR t2)". */
static void meta_any(struct buf *match, char kind, const char *const *values, size_t n)
{
    if (match->len)
        buf_puts(match, " AND ");
    buf_puts(match, "meta : (");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            buf_puts(match, " OR ");
        meta_term(match, kind, values[i]);
    }
    buf_putc(match, ')');
}

/* The filters as MATCH terms (--meta): what build filed in the meta column. */
static void meta_filters(struct buf *match, const struct index_request *req)
{
    if (req->language) {
        const char *one[1] = {req->language};
        meta_any(match, 'l', one, 1);
    }
    if (req->n_sources)
        meta_any(match, 's', req->sources, req->n_sources);
    if (req->n_domains)
        meta_any(match, 'd', req->domains, req->n_domains);
}

static int prepare_request(struct arena *a, const char *params, struct prepared *p, struct err *err)
{
    struct index_request req;
    struct buf match = BUF_INIT, where = BUF_INIT, from = BUF_INIT, sql = BUF_INIT;
    int rc;

    memset(p, 0, sizeof *p);
    if ((rc = bench_request_build(a, params, &req, err)) < 0)
        return rc;
    if (req.q) {
        if (req.q_fields != INDEX_FIELD_ALL) {
            buf_puts(&match, "{");
            if (req.q_fields & INDEX_FIELD_TITLE)
                buf_puts(&match, " title");
            if (req.q_fields & INDEX_FIELD_DESCRIPTION)
                buf_puts(&match, " description");
            if (req.q_fields & INDEX_FIELD_CONTENT)
                buf_puts(&match, " content");
            buf_puts(&match, "} : ");
        } else if (meta_mode) {
            /* the text columns by name: a bare word would match filter terms too */
            buf_puts(&match, "{title description content} : ");
        }
        fts_expr(&match, req.q);
    }
    if (req.q_title) {
        if (req.q)
            buf_puts(&match, " AND ");
        buf_puts(&match, "title : ");
        fts_expr(&match, req.q_title);
    }
    if (meta_mode)
        meta_filters(&match, &req);
    bool text = match.len > 0;
    if (text) {
        bind_add(p, a, match.data ? match.data : "");
        buf_puts(&where, " AND fts MATCH ?1");
    }
    if (!meta_mode)
        where_filters(&where, a, p, &req);
    if (req.from != INT64_MIN || req.to != INT64_MAX) {
        p->windowed = true;
        p->from = req.from;
        p->to = req.to;
        buf_printf(&where, " AND a.published_at BETWEEN ?%d AND ?%d", p->n_binds + 1,
                   p->n_binds + 2);
    }
    p->limit = (int64_t)req.limit;
    p->offset = (int64_t)req.offset;

    /* FROM: the FTS table drives when there is text to match. CROSS JOIN
     * says so to the planner: left to itself it walks a filter's B-tree
     * index and runs the MATCH once per row, seconds per query at 20,000
     * articles (the one tuning a user of this baseline soon learns). */
    if (text)
        buf_puts(&from, "fts CROSS JOIN articles a ON a.id = fts.rowid");
    else
        buf_puts(&from, "articles a JOIN fts ON fts.rowid = a.id");
    if (req.sort == INDEX_SORT_POPULARITY)
        buf_puts(&from, " LEFT JOIN sources s ON s.id = a.source_id");
    const char *w = where.data ? where.data + 5 : "1"; /* drop the first " AND " */

    buf_printf(&sql, "SELECT count(*) FROM %s WHERE %s",
               text ? (where.len > strlen(" AND fts MATCH ?1")
                           ? "fts CROSS JOIN articles a ON a.id = fts.rowid"
                           : "fts")
                    : "articles a",
               w);
    if (!buf_error(&sql))
        p->count_sql = arena_strdup(a, sql.data);
    buf_reset(&sql);
    const char *order = "a.published_at DESC";
    if (req.sort == INDEX_SORT_RELEVANCY && text)
        /* the meta column weighs nothing: the same ranking as the plain table */
        order = meta_mode ? "bm25(fts, 1, 1, 1, 0), a.published_at DESC"
                          : "bm25(fts), a.published_at DESC";
    else if (req.sort == INDEX_SORT_POPULARITY)
        order = "coalesce(s.popularity, -1) DESC, a.published_at DESC";
    else if (req.sort == INDEX_SORT_PUBLISHED_ASC)
        order = "a.published_at ASC";
    buf_printf(&sql,
               "SELECT a.source_id, a.source_name, a.author, fts.title, fts.description, a.url,"
               " a.url_to_image, a.published_at, fts.content FROM %s WHERE %s ORDER BY %s"
               " LIMIT %lld OFFSET %lld",
               from.data, w, order, (long long)p->limit, (long long)p->offset);
    if (!buf_error(&sql))
        p->page_sql = arena_strdup(a, sql.data);
    rc = (!p->count_sql || !p->page_sql || p->n_binds >= MAX_BINDS || buf_error(&match) ||
          buf_error(&where))
             ? err_set(err, ERR_NOMEM, "cannot build the SQL")
             : 0;
    buf_release(&match);
    buf_release(&where);
    buf_release(&from);
    buf_release(&sql);
    return rc;
}

struct qctx {
    const char *db_path;
    const struct mix *m;
};

struct qstate {
    sqlite3 *db;
    struct arena a;
    struct prepared *p;
};

static void q_done(void *state)
{
    struct qstate *st = state;
    if (st == NULL)
        return;
    sqlite3_close(st->db);
    arena_release(&st->a);
    free(st->p);
    free(st);
}

static void *q_init(void *arg)
{
    const struct qctx *c = arg;
    struct qstate *st = calloc(1, sizeof *st);
    struct err err;
    if (st == NULL)
        return NULL;
    arena_init(&st->a, 0);
    st->p = calloc(c->m->n, sizeof *st->p);
    if (st->p == NULL ||
        sqlite3_open_v2(c->db_path, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK) {
        sql_fail(st->db, c->db_path);
        q_done(st);
        return NULL;
    }
    /* Readers opening a WAL file at the same time may meet a lock briefly. */
    sqlite3_busy_timeout(st->db, 5000);
    for (size_t i = 0; i < c->m->n; i++) {
        err_clear(&err);
        if (prepare_request(&st->a, c->m->q[i].params, &st->p[i], &err) < 0) {
            fprintf(stderr, "fts5_baseline: %s: %s\n", c->m->q[i].id, err.msg);
            q_done(st);
            return NULL;
        }
    }
    return st;
}

static void bind_all(sqlite3_stmt *s, const struct prepared *p)
{
    for (int i = 0; i < p->n_binds; i++)
        sqlite3_bind_text(s, i + 1, p->binds[i], -1, SQLITE_STATIC);
    if (p->windowed) {
        sqlite3_bind_int64(s, p->n_binds + 1, p->from);
        sqlite3_bind_int64(s, p->n_binds + 2, p->to);
    }
}

/* The timed part: prepare, bind and step the COUNT(*) and the page query,
 * reading every column of the page as an application would. */
static int q_run(void *state, const struct mix_query *q, size_t qi, uint64_t *total,
                 struct err *err)
{
    struct qstate *st = state;
    const struct prepared *p = &st->p[qi];
    sqlite3_stmt *s = NULL;
    size_t bytes = 0;
    int rc;

    (void)q;
    if (sqlite3_prepare_v2(st->db, p->count_sql, -1, &s, NULL) != SQLITE_OK)
        goto fail;
    bind_all(s, p);
    if (sqlite3_step(s) != SQLITE_ROW)
        goto fail;
    *total = (uint64_t)sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(st->db, p->page_sql, -1, &s, NULL) != SQLITE_OK)
        goto fail;
    bind_all(s, p);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int c = 0; c < 9; c++) {
            const unsigned char *t = sqlite3_column_text(s, c);
            bytes += t ? (size_t)sqlite3_column_bytes(s, c) : 0;
        }
    }
    if (rc != SQLITE_DONE)
        goto fail;
    sqlite3_finalize(s);
    return bytes == (size_t)-1; /* keeps the reads from being optimised away */
fail:
    err_set(err, ERR_STORE, "%s", sqlite3_errmsg(st->db));
    sqlite3_finalize(s);
    return ERR_STORE;
}

static int cmd_query(const char *db_path, const struct bench_mix_opts *o)
{
    struct mix m;
    struct qctx c = {.db_path = db_path};
    int rc;

    if (mix_load(&m, o->mix) < 0)
        return -1;
    c.m = &m;
    struct bench_engine e = {
        .name = engine_name, .ctx = &c, .thread_init = q_init, .thread_done = q_done, .run = q_run};
    printf("mem\t%s\topened\t%ld\n", engine_name, bench_status_kb(0, "VmRSS"));
    rc = bench_run_mix(&e, &m, o, stdout);
    printf("mem\t%s\tpeak\t%ld\n", engine_name, bench_status_kb(0, "VmHWM"));
    mix_free(&m);
    return rc;
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: fts5_baseline build [--meta] --db FILE --sources FILE.jsonl   (articles on stdin)\n"
        "       fts5_baseline query [--meta] --db FILE --mix FILE [--reps R] [--warmup W]\n"
        "                           [--clients 1,2,4,16] [--seconds S]\n");
}

int main(int argc, char **argv)
{
    const char *db = NULL, *sources = NULL;
    struct bench_mix_opts o = BENCH_MIX_OPTS_INIT;

    if (argc < 2) {
        usage();
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--meta") == 0) {
            meta_mode = true;
            engine_name = "fts5-meta";
            continue;
        }
        if (v && strcmp(argv[i], "--db") == 0)
            db = v;
        else if (v && strcmp(argv[i], "--sources") == 0)
            sources = v;
        else if (!bench_mix_opt(&o, argv[i], v)) {
            usage();
            return 2;
        }
        i++;
    }
    if (strcmp(argv[1], "build") == 0 && db && sources)
        return cmd_build(db, sources) < 0;
    if (strcmp(argv[1], "query") == 0 && db && o.mix)
        return cmd_query(db, &o) < 0;
    usage();
    return 2;
}
