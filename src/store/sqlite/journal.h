/* Reading a journal's file (store/journal.h): the embedded store's own
 * file or a cluster node's replica, which share one schema (sqlite.c), so
 * the journal has this one format. Private to src/store/: the root's
 * journal.c forwards journal.h's readers here one for one (same contracts,
 * same types); every query run against a journal, the full-text side's
 * included, is in sqlite/journal.c. */
#ifndef NEWSD_STORE_SQLITE_JOURNAL_H
#define NEWSD_STORE_SQLITE_JOURNAL_H

#include "store/journal.h"

int store_sqlite_reader_open(struct store_reader **out, const char *path, struct err *err);
int store_sqlite_reader_open_scan(struct store_reader **out, const char *path, struct err *err);
void store_sqlite_reader_close(struct store_reader *r);
int store_sqlite_reader_version(struct store_reader *r, int64_t *out, struct err *err);
int store_sqlite_reader_begin(struct store_reader *r, struct err *err);
int store_sqlite_reader_end(struct store_reader *r, struct err *err);
int store_sqlite_reader_identity(struct store_reader *r, char out[STORE_IDENTITY_MAX],
                                 struct err *err);
int store_sqlite_reader_head(struct store_reader *r, int64_t *out, struct err *err);
int store_sqlite_reader_count(struct store_reader *r, int64_t *out, struct err *err);
int store_sqlite_reader_ids(struct store_reader *r, int64_t **ids, size_t *n, struct err *err);
int store_sqlite_reader_deletions(struct store_reader *r, int64_t after, int64_t **ids, size_t *n,
                                  int64_t *last, struct err *err);
int store_sqlite_reader_sources(struct store_reader *r, store_source_fn fn, void *ctx,
                                struct err *err);
int store_sqlite_reader_articles(struct store_reader *r, struct arena *a, const int64_t *ids,
                                 size_t n, struct article *arts, struct err *err);
int store_sqlite_reader_articles_each(struct store_reader *r, const int64_t *ids, size_t n,
                                      store_article_fn fn, void *ctx, struct err *err);
int store_sqlite_reader_newest_headline(struct store_reader *r, int64_t id_hi, int64_t *out,
                                        struct err *err);
int store_sqlite_reader_match_count(struct store_reader *r, const struct store_match *m,
                                    int64_t *out, struct err *err);
int store_sqlite_reader_match_per_second(struct store_reader *r, const struct store_match *m,
                                         int (*each)(void *ctx, int64_t second, uint64_t n),
                                         void *ctx, struct err *err);
int store_sqlite_reader_match_values(
    struct store_reader *r, const struct store_match *m, enum store_match_column column,
    int (*each)(void *ctx, const char *value, size_t len, uint64_t n), void *ctx, struct err *err);
int store_sqlite_reader_match_ranked(struct store_reader *r, const struct store_match *m,
                                     enum store_match_order order,
                                     const struct store_match_ranked *rk, size_t max, int64_t *ids,
                                     double *keys, size_t *n, struct store_match_stats *used,
                                     struct err *err);
int store_sqlite_reader_match_ids(struct store_reader *r, const struct store_match *m,
                                  enum store_match_order order, size_t offset, size_t max,
                                  int64_t *ids, size_t *n, struct err *err);

int store_sqlite_rows_after(struct store_rows **out, struct store_reader *r, int64_t after,
                            struct err *err);
int store_sqlite_rows_all(struct store_rows **out, struct store_reader *r, struct err *err);
int store_sqlite_rows_next(struct store_rows *c, struct store_row *row, struct err *err);
int store_sqlite_rows_by_id(struct store_rows **out, struct store_reader *r, struct err *err);
int store_sqlite_rows_get(struct store_rows *c, int64_t id, struct store_row *row, struct err *err);
void store_sqlite_rows_free(struct store_rows *c);

int store_sqlite_readers_new(struct store_readers **out, const char *path, struct err *err);
void store_sqlite_readers_free(struct store_readers *p);
int store_sqlite_readers_get(struct store_readers *p, struct store_reader **out, struct err *err);
void store_sqlite_readers_put(struct store_readers *p, struct store_reader *r);

int store_sqlite_journal_fulltext_verify(const char *path, int64_t *rows, char *detail, size_t cap,
                                         struct err *err);
int store_sqlite_journal_fulltext_ensure(const char *path, struct err *err);

int store_sqlite_reader_stories(struct store_reader *r, int64_t lo, int64_t hi, store_story_fn fn,
                                void *ctx, struct err *err);
int store_sqlite_reader_story_members(struct store_reader *r, struct arena *a, int64_t story,
                                      int64_t lo, int64_t hi, int64_t **ids, size_t *n,
                                      struct err *err);
int store_sqlite_reader_article_by_url(struct store_reader *r, const char *canonical_url,
                                       int64_t *id, struct err *err);
int store_sqlite_reader_match_stories(struct store_reader *r, const struct store_match *m,
                                      store_story_fn fn, void *ctx, struct err *err);
int store_sqlite_reader_term_docs(struct store_reader *r, const char *const *terms,
                                  const size_t *lens, size_t n, uint64_t *df, struct err *err);
int store_sqlite_reader_prefix_terms(struct store_reader *r, struct arena *a, const char *p,
                                     size_t len, size_t max, const char ***out, size_t *n,
                                     struct err *err);

#endif
