/* index.h dispatcher: the backend asked for (index/backend.h) over the
 * store's journal (store/journal.h): the embedded store's own file, or a
 * PostgreSQL store's node-local replica, searched alike — by the
 * purpose-built engine unless "fts5" is asked for (struct index_options). */
#include "index/index.h"
#include "index/backend.h"
#include "index/prefix.h"
#include "store/journal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/banned.h"

struct index {
    struct index_backend *be;
    struct store_journal
        *journal; /* what the backend reads (a replica kept in step, or the store) */
    struct store_readers *readers; /* the journal's rows by id (index_docs, stories) */
};

/* The backend of `kind` over the SQLite file at db_path; the engine opened
 * by its own thread when background. */
static int backend_new(struct index_backend **out, bool engine, bool background,
                       const char *db_path, const struct index_engine_options *eo, struct err *err)
{
    if (engine && background)
        return index_engine_start(out, db_path, eo, err);
    if (engine)
        return index_engine_new(out, db_path, eo, err);
    return index_fts5_new(out, db_path, err);
}

int index_open(struct index **out, struct store *s, struct err *err)
{
    return index_open_with(out, s, NULL, err);
}

const char *index_kind_resolve(const char *kind)
{
    return kind && kind[0] ? kind : INDEX_KIND_DEFAULT;
}

const char *index_kind(const struct index *idx)
{
    return idx->be->kind;
}

static int open_with(struct index **out, struct store *s, const struct index_options *opt,
                     bool background, struct err *err)
{
    static const struct index_options defaults = {0};
    struct index *idx = NULL;
    bool engine;
    int rc;

    *out = NULL;
    if (opt == NULL)
        opt = &defaults;
    const char *kind = index_kind_resolve(opt->kind);
    if (strcmp(kind, INDEX_KIND_ENGINE) == 0)
        engine = true;
    else if (strcmp(kind, INDEX_KIND_FTS5) == 0)
        engine = false;
    else
        return err_set(err, ERR_INVALID, "unknown search index \"%s\" (fts5 or engine)", kind);
    idx = calloc(1, sizeof *idx);
    if (idx == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_journal_open(&idx->journal, s, opt->local_dir, err)) < 0 ||
        (rc = backend_new(&idx->be, engine, background, store_journal_path(idx->journal),
                          &opt->engine, err)) < 0 ||
        (rc = store_readers_new(&idx->readers, store_journal_path(idx->journal), err)) < 0 ||
        (!opt->no_follow && (rc = store_journal_start(idx->journal, err)) < 0))
        goto out;
    *out = idx;
    idx = NULL;
out:
    index_close(idx);
    return rc;
}

int index_open_with(struct index **out, struct store *s, const struct index_options *opt,
                    struct err *err)
{
    return open_with(out, s, opt, false, err);
}

int index_open_kind(struct index **out, struct store *s, const char *local_dir, const char *kind,
                    struct err *err)
{
    struct index_options opt = {.kind = kind, .local_dir = local_dir};
    return open_with(out, s, &opt, false, err);
}

int index_open_background(struct index **out, struct store *s, const struct index_options *opt,
                          struct err *err)
{
    return open_with(out, s, opt, true, err);
}

bool index_ready(struct index *idx)
{
    return idx->be->ready == NULL || idx->be->ready(idx->be);
}

void index_stats(struct index *idx, struct index_stats *out)
{
    memset(out, 0, sizeof *out);
    out->ready = index_ready(idx);
    if (idx->be->stats)
        idx->be->stats(idx->be, out);
}

int index_files_remove(const char *db_path, struct err *err)
{
    return index_engine_files_remove(db_path, err);
}

int index_count_check(struct index *idx, struct index_count_check *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    if (idx->be->count_check == NULL || !index_ready(idx))
        return 0;
    return idx->be->count_check(idx->be, out, err);
}

bool index_wait_ready(struct index *idx, int64_t ms)
{
    for (int64_t waited = 0; !index_ready(idx) && waited < ms; waited += 10)
        clock_sleep_ms(10);
    return index_ready(idx);
}

void index_close(struct index *idx)
{
    if (idx == NULL)
        return;
    /* A replica's thread stops before the file's readers go. */
    store_journal_close(idx->journal);
    if (idx->be)
        idx->be->free(idx->be);
    if (idx->readers)
        store_readers_free(idx->readers);
    free(idx);
}

void index_replica_status(struct index *idx, struct store_journal_status *out)
{
    memset(out, 0, sizeof *out);
    if (idx->journal)
        store_journal_status(idx->journal, out);
}

int index_verify(struct index *idx, struct index_verify_report *out, struct err *err)
{
    return idx->be->verify(idx->be, out, err); /* each backend zeroes *out */
}

int index_sizes(struct index *idx, struct index_size_report *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    if (idx->be->sizes == NULL)
        return err_set(err, ERR_UNSUPPORTED, "the %s index has no size breakdown", idx->be->kind);
    return idx->be->sizes(idx->be, out, err);
}

int index_search(struct index *idx, struct arena *a, const struct index_request *req,
                 struct index_result *out, struct err *err)
{
    int rc;
    memset(out, 0, sizeof *out);
    if ((rc = index_prefix_expand(idx->be, a, req, &req, err)) < 0)
        return rc;
    return idx->be->search(idx->be, a, req, out, err);
}

int index_newest_headline(struct index *idx, int64_t before, int64_t *out, struct err *err)
{
    return idx->be->newest_headline(idx->be, before, out, err);
}

struct store_journal *index_journal(struct index *idx)
{
    return idx->journal;
}

int index_counts(struct index *idx, struct arena *a, const struct index_request *req,
                 const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err)
{
    int rc;
    memset(counts, 0, nbuckets * sizeof *counts);
    if ((rc = index_prefix_expand(idx->be, a, req, &req, err)) < 0)
        return rc;
    return idx->be->counts(idx->be, a, req, bounds, nbuckets, counts, err);
}

int index_facets(struct index *idx, struct arena *a, const struct index_request *req, unsigned mask,
                 size_t size, struct index_facet_top out[INDEX_FACET_N], struct err *err)
{
    int rc;
    memset(out, 0, INDEX_FACET_N * sizeof *out);
    if ((rc = index_prefix_expand(idx->be, a, req, &req, err)) < 0)
        return rc;
    if (size < 1)
        size = 1;
    if (size > INDEX_FACET_SIZE_MAX)
        size = INDEX_FACET_SIZE_MAX;
    return idx->be->facets(idx->be, a, req, mask & ((1u << INDEX_FACET_N) - 1), size, out, err);
}

int index_story_matches(struct index *idx, struct arena *a, const struct index_request *req,
                        size_t keep, struct index_story_matches *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    if (req->from > req->to)
        return 0; /* an empty window: nothing matches */
    if (idx->be->story_matches == NULL)
        return err_set(err, ERR_UNSUPPORTED, "this index has no stories");
    int rc = index_prefix_expand(idx->be, a, req, &req, err);
    if (rc < 0)
        return rc;
    return idx->be->story_matches(idx->be, a, req, keep, out, err);
}

int index_story_members(struct index *idx, struct arena *a, int64_t story, int64_t lo, int64_t hi,
                        int64_t deadline_ms, int64_t **ids, size_t *n, struct err *err)
{
    *ids = NULL;
    *n = 0;
    if (lo > hi)
        return 0;
    if (idx->be->story_members == NULL)
        return err_set(err, ERR_UNSUPPORTED, "this index has no stories");
    return idx->be->story_members(idx->be, a, story, lo, hi, deadline_ms, ids, n, err);
}

int index_term_docs(struct index *idx, const char *const *terms, const size_t *lens, size_t n,
                    uint64_t *df, uint64_t *ndocs, struct err *err)
{
    if (idx->be->term_docs == NULL)
        return err_set(err, ERR_UNSUPPORTED, "this index has no term statistics");
    return idx->be->term_docs(idx->be, terms, lens, n, df, ndocs, err);
}

/* A reader of the log for this thread (back with store_readers_put). */
int index_backend_docs(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
                       struct index_doc *out, int64_t *stories, size_t *kept, struct err *err)
{
    if (idx->be->docs == NULL)
        return 1;
    return idx->be->docs(idx->be, a, ids, n, out, stories, kept, err);
}

int index_reader_get(struct index *idx, struct store_reader **out, struct err *err)
{
    return store_readers_get(idx->readers, out, err);
}

void index_reader_put(struct index *idx, struct store_reader *r)
{
    store_readers_put(idx->readers, r);
}
