/* The article journal (store/journal.h), owned by the store's root: which
 * file it is (the embedded store's own, or a PostgreSQL store's replica
 * whose replication this file starts, store/replicate.h), and its readers,
 * forwarded to the one format a journal has (store/sqlite/journal.h). The
 * backends only say where their articles are (store/backend.h); they never
 * call back up here. */
#include "store/journal.h"
#include "store/backend.h"
#include "store/replicate.h"
#include "store/sqlite/journal.h"

#include <stdlib.h>
#include <string.h>

#include "story/sketch.h"
#include "util/banned.h"

struct store_journal {
    char *path;
    struct store_replicate *rep; /* NULL: the store's own file */
};

/* A journal over the SQLite file at path, kept in step by rep (started by
 * store_journal_start, freed with the journal); on failure rep is freed
 * too. */
static int journal_new(struct store_journal **out, const char *path, struct store_replicate *rep,
                       struct err *err)
{
    struct store_journal *j = calloc(1, sizeof *j);

    *out = NULL;
    if (j == NULL || (j->path = strdup(path)) == NULL) {
        free(j);
        store_replicate_free(rep);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    j->rep = rep;
    *out = j;
    return 0;
}

int store_journal_open(struct store_journal **out, struct store *s, const char *local_dir,
                       struct err *err)
{
    const struct store_backend *be = store_backend_get(s);
    struct store_replicate *rep = NULL;
    bool offline_ok = false;
    int rc;

    *out = NULL;
    if (be->sqlite_path) /* the embedded store's own file */
        return journal_new(out, be->sqlite_path(be), NULL, err);
    if (be->replica_origin == NULL)
        return err_set(err, ERR_UNSUPPORTED, "no search index for a %s store in this build",
                       be->kind);
    /* A node's index reads a local replica that a thread keeps in step
     * with the store's article log. */
    const char *uri = be->replica_origin(be, &offline_ok);
    if ((rc =
             store_replicate_new(&rep, uri, local_dir ? local_dir : STORE_JOURNAL_LOCAL_DIR_DEFAULT,
                                 offline_ok, err)) < 0)
        return rc;
    return journal_new(out, store_replicate_path(rep), rep, err);
}

int store_journal_start(struct store_journal *j, struct err *err)
{
    return j->rep ? store_replicate_start(j->rep, err) : 0;
}

void store_journal_close(struct store_journal *j)
{
    if (j == NULL)
        return;
    store_replicate_free(j->rep);
    free(j->path);
    free(j);
}

const char *store_journal_path(const struct store_journal *j)
{
    return j->path;
}

void store_journal_status(struct store_journal *j, struct store_journal_status *out)
{
    memset(out, 0, sizeof *out);
    if (j->rep)
        store_replicate_status(j->rep, out);
}

void store_row_article(const struct store_row *row, struct article *out)
{
    *out = (struct article){
        .id = row->id,
        .seq = row->seq,
        .source_id = row->source_id,
        .source_name = row->source_name,
        .author = row->author,
        .title = row->title,
        .description = row->description,
        .url = row->url,
        .url_to_image = row->url_to_image,
        .published_at = row->published_at,
        .content = row->content,
    };
}

/* --- readers: the journal's file is SQLite (store/sqlite/journal.h) ---------- */

int store_reader_open(struct store_reader **out, const char *path, struct err *err)
{
    return store_sqlite_reader_open(out, path, err);
}

int store_reader_open_scan(struct store_reader **out, const char *path, struct err *err)
{
    return store_sqlite_reader_open_scan(out, path, err);
}

void store_reader_close(struct store_reader *r)
{
    store_sqlite_reader_close(r);
}

int store_reader_version(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_reader_version(r, out, err);
}

int store_reader_begin(struct store_reader *r, struct err *err)
{
    return store_sqlite_reader_begin(r, err);
}

int store_reader_end(struct store_reader *r, struct err *err)
{
    return store_sqlite_reader_end(r, err);
}

int store_reader_identity(struct store_reader *r, char out[STORE_IDENTITY_MAX], struct err *err)
{
    return store_sqlite_reader_identity(r, out, err);
}

int store_reader_head(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_reader_head(r, out, err);
}

int store_reader_count(struct store_reader *r, int64_t *out, struct err *err)
{
    return store_sqlite_reader_count(r, out, err);
}

int store_reader_ids(struct store_reader *r, int64_t **ids, size_t *n, struct err *err)
{
    return store_sqlite_reader_ids(r, ids, n, err);
}

int store_reader_deletions(struct store_reader *r, int64_t after, int64_t **ids, size_t *n,
                           int64_t *last, struct err *err)
{
    return store_sqlite_reader_deletions(r, after, ids, n, last, err);
}

int store_reader_sources(struct store_reader *r, store_source_fn fn, void *ctx, struct err *err)
{
    return store_sqlite_reader_sources(r, fn, ctx, err);
}

int store_reader_articles(struct store_reader *r, struct arena *a, const int64_t *ids, size_t n,
                          struct article *arts, struct err *err)
{
    return store_sqlite_reader_articles(r, a, ids, n, arts, err);
}

int store_reader_articles_each(struct store_reader *r, const int64_t *ids, size_t n,
                               store_article_fn fn, void *ctx, struct err *err)
{
    return store_sqlite_reader_articles_each(r, ids, n, fn, ctx, err);
}

int store_reader_newest_headline(struct store_reader *r, int64_t id_hi, int64_t *out,
                                 struct err *err)
{
    return store_sqlite_reader_newest_headline(r, id_hi, out, err);
}

int store_rows_after(struct store_rows **out, struct store_reader *r, int64_t after,
                     struct err *err)
{
    return store_sqlite_rows_after(out, r, after, err);
}

int store_rows_all(struct store_rows **out, struct store_reader *r, struct err *err)
{
    return store_sqlite_rows_all(out, r, err);
}

int store_rows_next(struct store_rows *c, struct store_row *row, struct err *err)
{
    return store_sqlite_rows_next(c, row, err);
}

int store_rows_by_id(struct store_rows **out, struct store_reader *r, struct err *err)
{
    return store_sqlite_rows_by_id(out, r, err);
}

int store_rows_get(struct store_rows *c, int64_t id, struct store_row *row, struct err *err)
{
    return store_sqlite_rows_get(c, id, row, err);
}

void store_rows_free(struct store_rows *c)
{
    store_sqlite_rows_free(c);
}

int store_readers_new(struct store_readers **out, const char *path, struct err *err)
{
    return store_sqlite_readers_new(out, path, err);
}

void store_readers_free(struct store_readers *p)
{
    store_sqlite_readers_free(p);
}

int store_readers_get(struct store_readers *p, struct store_reader **out, struct err *err)
{
    return store_sqlite_readers_get(p, out, err);
}

void store_readers_put(struct store_readers *p, struct store_reader *r)
{
    store_sqlite_readers_put(p, r);
}

/* --- the full-text side -------------------------------------------------------- */

int store_reader_match_count(struct store_reader *r, const struct store_match *m, int64_t *out,
                             struct err *err)
{
    return store_sqlite_reader_match_count(r, m, out, err);
}

int store_reader_match_ids(struct store_reader *r, const struct store_match *m,
                           enum store_match_order order, size_t offset, size_t max, int64_t *ids,
                           size_t *n, struct err *err)
{
    return store_sqlite_reader_match_ids(r, m, order, offset, max, ids, n, err);
}

int store_reader_match_ranked(struct store_reader *r, const struct store_match *m,
                              enum store_match_order order, const struct store_match_ranked *rk,
                              size_t max, int64_t *ids, double *keys, size_t *n,
                              struct store_match_stats *used, struct err *err)
{
    return store_sqlite_reader_match_ranked(r, m, order, rk, max, ids, keys, n, used, err);
}

int store_reader_match_per_second(struct store_reader *r, const struct store_match *m,
                                  int (*each)(void *ctx, int64_t second, uint64_t n), void *ctx,
                                  struct err *err)
{
    return store_sqlite_reader_match_per_second(r, m, each, ctx, err);
}

int store_reader_match_values(struct store_reader *r, const struct store_match *m,
                              enum store_match_column column,
                              int (*each)(void *ctx, const char *value, size_t len, uint64_t n),
                              void *ctx, struct err *err)
{
    return store_sqlite_reader_match_values(r, m, column, each, ctx, err);
}

int store_journal_fulltext_verify(const char *path, int64_t *rows, char *detail, size_t cap,
                                  struct err *err)
{
    return store_sqlite_journal_fulltext_verify(path, rows, detail, cap, err);
}

int store_journal_fulltext_ensure(const char *path, struct err *err)
{
    return store_sqlite_journal_fulltext_ensure(path, err);
}

/* --- stories ------------------------------------------------------------------ */

int64_t store_story_resolve(int64_t story_id, const char *canonical_url, int64_t id)
{
    if (story_id != 0)
        return story_id;
    /* (canonical_url is NOT NULL in the schema; the id keeps a damaged
     * row its own story all the same) */
    return canonical_url ? story_id_for_url(canonical_url) : id;
}

int store_reader_stories(struct store_reader *r, int64_t lo, int64_t hi, store_story_fn fn,
                         void *ctx, struct err *err)
{
    return store_sqlite_reader_stories(r, lo, hi, fn, ctx, err);
}

static int story_one(void *ctx, int64_t id, int64_t story)
{
    (void)id;
    *(int64_t *)ctx = story;
    return 0;
}

int store_reader_story_of(struct store_reader *r, int64_t id, int64_t *story, struct err *err)
{
    *story = 0;
    int rc = store_reader_stories(r, id, id, story_one, story, err);
    if (rc == 0 && *story == 0)
        rc = err_set(err, ERR_NOTFOUND, "no article %lld", (long long)id);
    return rc;
}

int store_reader_story_members(struct store_reader *r, struct arena *a, int64_t story, int64_t lo,
                               int64_t hi, int64_t **ids, size_t *n, struct err *err)
{
    return store_sqlite_reader_story_members(r, a, story, lo, hi, ids, n, err);
}

int store_reader_article_by_url(struct store_reader *r, const char *canonical_url, int64_t *id,
                                struct err *err)
{
    return store_sqlite_reader_article_by_url(r, canonical_url, id, err);
}

int store_reader_match_stories(struct store_reader *r, const struct store_match *m,
                               store_story_fn fn, void *ctx, struct err *err)
{
    return store_sqlite_reader_match_stories(r, m, fn, ctx, err);
}

int store_reader_term_docs(struct store_reader *r, const char *const *terms, const size_t *lens,
                           size_t n, uint64_t *df, struct err *err)
{
    return store_sqlite_reader_term_docs(r, terms, lens, n, df, err);
}

int store_reader_prefix_terms(struct store_reader *r, struct arena *a, const char *p, size_t len,
                              size_t max, const char ***out, size_t *n, struct err *err)
{
    return store_sqlite_reader_prefix_terms(r, a, p, len, max, out, n, err);
}
