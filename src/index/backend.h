/* Private to src/index/: the backend vtable behind index.h. index.c picks
 * the backend that fits the store and forwards; a backend embeds struct
 * index_backend as its first member. Every operation may be called from
 * several threads at once. */
#ifndef NEWSD_INDEX_BACKEND_H
#define NEWSD_INDEX_BACKEND_H

#include "index/index.h"

struct index_backend {
    const char *kind; /* "fts5", "engine" */
    void (*free)(struct index_backend *b);
    int (*search)(struct index_backend *b, struct arena *a, const struct index_request *req,
                  struct index_result *out, struct err *err);
    int (*newest_headline)(struct index_backend *b, int64_t before, int64_t *out, struct err *err);
    int (*verify)(struct index_backend *b, struct index_verify_report *out, struct err *err);
    /* NULL: always ready. */
    bool (*ready)(struct index_backend *b);
    /* NULL: no breakdown (index_sizes: ERR_UNSUPPORTED). */
    int (*sizes)(struct index_backend *b, struct index_size_report *out, struct err *err);
    /* NULL: nothing beyond readiness to show. */
    void (*stats)(struct index_backend *b, struct index_stats *out);
    /* NULL: the index is the table (index_count_check: not compared). */
    int (*count_check)(struct index_backend *b, struct index_count_check *out, struct err *err);
    /* index_counts, index_facets (index.h) */
    int (*counts)(struct index_backend *b, struct arena *a, const struct index_request *req,
                  const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err);
    int (*facets)(struct index_backend *b, struct arena *a, const struct index_request *req,
                  unsigned mask, size_t size, struct index_facet_top *out, struct err *err);
    /* index_story_matches (index.h) */
    int (*story_matches)(struct index_backend *b, struct arena *a, const struct index_request *req,
                         size_t keep, struct index_story_matches *out, struct err *err);
    /* index_docs (index.h) from the backend's own copy of the articles,
     * and (stories not NULL) each kept one's story; NULL: read from the
     * table. */
    int (*docs)(struct index_backend *b, struct arena *a, const int64_t *ids, size_t n,
                struct index_doc *out, int64_t *stories, size_t *kept, struct err *err);
    /* index_story_members (index.h); deadline_ms as index_request's */
    int (*story_members)(struct index_backend *b, struct arena *a, int64_t story, int64_t lo,
                         int64_t hi, int64_t deadline_ms, int64_t **out, size_t *n,
                         struct err *err);
    /* The words of the index that start with p[0..len), ascending, in a:
     * at most max (*n == max: maybe more); index/prefix.c expands word*
     * with them. */
    int (*prefix_terms)(struct index_backend *b, struct arena *a, const char *p, size_t len,
                        size_t max, const char ***out, size_t *n, struct err *err);
    /* index_term_docs (index.h) */
    int (*term_docs)(struct index_backend *b, const char *const *terms, const size_t *lens,
                     size_t n, uint64_t *df, uint64_t *ndocs, struct err *err);
};

/* SQLite FTS5 over the journal's SQLite file at db_path (store/journal.h: its
 * articles_fts table, built once when the file lacks it), read through its
 * own pool of read-only connections. */
int index_fts5_new(struct index_backend **out, const char *db_path, struct err *err);

/* The purpose-built index (index/engine/, docs/engine.md) over the articles
 * table of the SQLite file at db_path (the embedded store's, or a
 * cluster node's replica): maps the segment files of <db_path>.engine/
 * (or, without usable ones, reads every article and writes them), then
 * follows the table from a thread of its own (new rows searchable within
 * ~1 s). opt: NULL for the defaults (index.h). */
int index_engine_new(struct index_backend **out, const char *db_path,
                     const struct index_engine_options *opt, struct err *err);
/* Remove the engine's index directory of db_path (<db_path>.engine) and
 * its files; 0 also when there is none. Nothing may have it open. */
int index_engine_files_remove(const char *db_path, struct err *err);

/* The same, opened by its follower thread: returns at once; until the index
 * is open (ready), searches fail with ERR_BUSY. */
int index_engine_start(struct index_backend **out, const char *db_path,
                       const struct index_engine_options *opt, struct err *err);

/* A reader of the index's log for the calling thread (index.c): the rows
 * by id that index/stories.c shows. Back with index_reader_put. */
int index_reader_get(struct index *idx, struct store_reader **out, struct err *err);
/* The backend's docs (above): 0, an error, or 1 when it has no copy of
 * the articles (the caller reads the rows). */
int index_backend_docs(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
                       struct index_doc *out, int64_t *stories, size_t *kept, struct err *err);
void index_reader_put(struct index *idx, struct store_reader *r);

#endif
