/* The article journal: what a node-local search index (src/index/) and
 * the live streams and webhooks (src/push/) read of the store, and all
 * they read: the articles in ingest order, rows by id, the row count, the
 * table's identity and its head, and the full-text side's matches. Nothing
 * outside src/store/ names a store backend; this header is the floor the
 * readers stand on. ("The log" elsewhere is util/log.h, the logger.)
 *
 * The journal lives in a SQLite file on this node (store_journal_path):
 * the embedded store's own file, or for a PostgreSQL store a replica of
 * its articles and sources that a thread started by store_journal_start
 * keeps in step with PostgreSQL's article log (store/replicate.h). The
 * store's root (journal.c) opens it and starts the replication; either way
 * readers use read-only connections (struct store_reader), so no search
 * waits on PostgreSQL.
 *
 * Sequence numbers: every insert or update of an article gives it the next
 * seq; a reader that has seen seq s has seen every change below s. The
 * head (store_reader_head) is the highest seq the table has handed out or,
 * in a replica, applied (a delete applied moves it too): one number that
 * moves whenever the articles change, which a follower compares with what
 * it has read. The identity (store_reader_identity) changes when the table
 * is replaced (a replica started over, a store rebuilt), so that files made
 * from one table are never taken for another's.
 *
 * Threads: a struct store_journal is shared; a struct store_reader belongs
 * to one thread at a time. Strings a reader returns are valid until the
 * next call on it (or on the cursor that returned them). */
#ifndef NEWSD_STORE_JOURNAL_H
#define NEWSD_STORE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

/* --- the journal: where this node's index reads ------------------------------ */

struct store_journal;

/* Where a PostgreSQL store's replica lives when no directory is given
 * (relative: the working directory). */
#define STORE_JOURNAL_LOCAL_DIR_DEFAULT "newsd-index"

/* The journal of store s for a local index. local_dir: where a PostgreSQL
 * store's replica is kept (created, mode 0700; NULL:
 * STORE_JOURNAL_LOCAL_DIR_DEFAULT), unused for the embedded store, whose
 * own file is the journal. ERR_UNSUPPORTED for a store with neither. */
int store_journal_open(struct store_journal **out, struct store *s, const char *local_dir,
                       struct err *err);

/* Start keeping the journal in step (a replica's thread; nothing for the
 * embedded store). Separate from store_journal_open so that the index
 * opens the file before the first change is applied to it. */
int store_journal_start(struct store_journal *j, struct err *err);

/* Stop the replica's thread (it finishes the batch in hand) and close.
 * NULL: no-op. */
void store_journal_close(struct store_journal *j);

/* The SQLite file the readers open (an index may keep files beside it). */
const char *store_journal_path(const struct store_journal *j);

/* How far a replica trails its store. */
struct store_journal_status {
    bool replica;         /* false: the journal is the store's own file; nothing below */
    bool caught_up;       /* has held every committed change at least once since it opened */
    bool store_reachable; /* the replica's connection to the store is up */
    int64_t applied_seq;  /* last change applied */
    int64_t head_seq;     /* last change known in the store */
    int64_t lag_seq;      /* head_seq - applied_seq */
    double lag_seconds;   /* 0 when in step, else time since it last was */
    int64_t articles;     /* articles the replica holds */
};
void store_journal_status(struct store_journal *j, struct store_journal_status *out);

/* --- readers ---------------------------------------------------------------- */

struct store_reader;

#define STORE_IDENTITY_MAX 64 /* bytes of a table identity, NUL included */

/* A read-only connection to the journal's file at path (store_journal_path). */
int store_reader_open(struct store_reader **out, const char *path, struct err *err);
/* The same for one long walk over many rows, each read once (an export):
 * the connection reads the file through a memory map (SQLite's mmap_size,
 * up to SQLite's own limit: 2 GB in Debian's build), where every page read
 * was a pread(2) of its own, a third of an export's CPU (perf, 1 M
 * articles). Not for the readers kept open: the map's pages count in the
 * process's resident memory while it lasts. */
int store_reader_open_scan(struct store_reader **out, const char *path, struct err *err);
void store_reader_close(struct store_reader *r);

/* A number that changes whenever another connection commits to the file
 * (SQLite's data_version): a follower that sees it unchanged has nothing
 * to read. */
int store_reader_version(struct store_reader *r, int64_t *out, struct err *err);

/* Begin / end one read snapshot: every read between them sees the same
 * state of the file (the identity, the rows and the count agree).
 * store_reader_end's error is that of the commit of a read, which the
 * caller may ignore (err may then be NULL). */
int store_reader_begin(struct store_reader *r, struct err *err);
int store_reader_end(struct store_reader *r, struct err *err);

/* The table's identity (meta 'articles_epoch'; "" when it has none). */
int store_reader_identity(struct store_reader *r, char out[STORE_IDENTITY_MAX], struct err *err);

/* The head (see the file comment): max of the rows' seq, the store's
 * counter and a replica's position. */
int store_reader_head(struct store_reader *r, int64_t *out, struct err *err);

/* Number of articles. */
int store_reader_count(struct store_reader *r, int64_t *out, struct err *err);

/* Every article id, ascending, in *ids (malloc()ed; NULL when none). */
int store_reader_ids(struct store_reader *r, int64_t **ids, size_t *n, struct err *err);

/* The ids of the articles deleted by store_articles_delete (or, in a
 * replica, by its store) with seq > after, in seq order, in *ids
 * (malloc()ed; NULL when none); *last gets the highest such seq (after
 * when none). A follower that has read the journal up to a head h and asks
 * with after = h learns every deletion since, without comparing ids
 * (the records of the embedded store are kept for a week: a follower
 * further behind sees the row count differ and compares ids once). A
 * deleted id may come back later under a higher seq (the same article
 * imported again): a deletion applies only to what was read before it. */
int store_reader_deletions(struct store_reader *r, int64_t after, int64_t **ids, size_t *n,
                           int64_t *last, struct err *err);

/* Called per catalogue source with its popularity (-1 when unknown: below
 * every source that has one); non-zero stops with that code. */
typedef int (*store_source_fn)(void *ctx, const char *id, double popularity);
int store_reader_sources(struct store_reader *r, store_source_fn fn, void *ctx, struct err *err);

/* Fill arts[0..n) with the whole articles of ids[0..n), in that order (an
 * id without a row leaves its slot's id 0); strings in the arena. Both
 * search backends read a results page this way, so they give
 * byte-identical articles. */
int store_reader_articles(struct store_reader *r, struct arena *a, const int64_t *ids, size_t n,
                          struct article *arts, struct err *err);
/* The same articles handed to fn one by one, in ids' order, nothing
 * copied: a's strings are valid during the call only (a whole export
 * streams through this). An id without a row is passed over; fn's first
 * non-zero return stops the walk and is returned. */
typedef int (*store_article_fn)(void *ctx, const struct article *a);
int store_reader_articles_each(struct store_reader *r, const int64_t *ids, size_t n,
                               store_article_fn fn, void *ctx, struct err *err);

/* Publication time of the newest headline article with id <= id_hi
 * (index_newest_headline of the fts5 index); ERR_NOTFOUND when none. */
int store_reader_newest_headline(struct store_reader *r, int64_t id_hi, int64_t *out,
                                 struct err *err);

/* --- rows: the columns an index is built from --------------------------------- */

/* One article as an index builds it: views into the reader, valid until
 * the next call on the cursor. */
struct store_row {
    int64_t id, seq, published_at;
    const char *title, *description, *content; /* NULL when absent */
    const char *language;                      /* "" unknown */
    const char *meta_terms;                    /* store/meta.h */
    const char *source_id;                     /* NULL outside the catalogue */
    const char *canonical_url;
    /* the rest of what the API shows (article/json.h), NULL when absent */
    const char *source_name, *author, *url, *url_to_image;
    int64_t ingested_at; /* unix seconds the row was written (inserted or updated) */
};

/* The article of a row: the fields a row carries (strings borrowed from
 * it), the others zero. What a reader of the journal renders with
 * article_json, as the engine's document store and the live streams do. */
void store_row_article(const struct store_row *row, struct article *out);

struct store_rows;

/* The rows with seq > after, in seq order, read one at a time with
 * store_rows_next (the journal's batches are the caller's to cut). */
int store_rows_after(struct store_rows **out, struct store_reader *r, int64_t after,
                     struct err *err);
/* Every row, in the table's own order (by id), each with its seq: a scan
 * of the table where store_rows_after(0) looks each row up through the
 * seq index, for a reader that wants all of them in any order (the
 * engine's first build). One statement: one snapshot. */
int store_rows_all(struct store_rows **out, struct store_reader *r, struct err *err);
/* 1 and *row set, 0 at the end, or an ERR_*. */
int store_rows_next(struct store_rows *c, struct store_row *row, struct err *err);

/* A cursor for rows looked up by id with store_rows_get. */
int store_rows_by_id(struct store_rows **out, struct store_reader *r, struct err *err);
/* 1 and *row set, 0 when there is no row with that id, or an ERR_*. */
int store_rows_get(struct store_rows *c, int64_t id, struct store_row *row, struct err *err);

void store_rows_free(struct store_rows *c);

/* --- a pool of readers -------------------------------------------------------- */

struct store_readers;

int store_readers_new(struct store_readers **out, const char *path, struct err *err);
void store_readers_free(struct store_readers *p);
/* A reader for the calling thread alone until it is put back. */
int store_readers_get(struct store_readers *p, struct store_reader **out, struct err *err);
/* Give it back (a snapshot left open is ended); NULL is a no-op. */
void store_readers_put(struct store_readers *p, struct store_reader *r);

/* --- the full-text side: what the fts5 index searches ------------------------ */
/* articles_fts, the FTS5 table of the journal's file (the store's
 * full-text side, store_fulltext_set), is read here and nowhere else: the
 * fts5 index (src/index/fts5/) writes the MATCH expression, the journal
 * runs it, as SQLite's own fts5_storage.c alone owns its tables. */

/* One search of the full-text side. */
struct store_match {
    const char *expr;     /* an FTS5 MATCH expression (its syntax: the caller's) */
    int64_t id_lo, id_hi; /* only articles with ids in [id_lo, id_hi] (a time window) */
    int64_t deadline_ms;  /* util/clock.h clock_mono_ms() at which a running search
                           * stops with ERR_TIMEOUT; 0: none */
};

/* The order of store_reader_match_ids; ties go newest first. */
enum store_match_order {
    STORE_MATCH_NEWEST,     /* id descending: ids are time-ordered, nothing to sort */
    STORE_MATCH_OLDEST,     /* id ascending */
    STORE_MATCH_RELEVANCE,  /* FTS5's bm25: title counts most, the meta column not at all */
    STORE_MATCH_POPULARITY, /* the source's popularity; outside the catalogue: last */
};

/* Phrases of a MATCH expression whose statistics a ranked page can be
 * given (store_reader_match_ranked). */
#define STORE_MATCH_PHRASES_MAX 64

/* What FTS5's bm25 reads of the collection: its rows, their tokens, and
 * per phrase of the expression the rows it matches. */
struct store_match_stats {
    int64_t nrow, ntoken;
    size_t nphrases;
    int64_t hits[STORE_MATCH_PHRASES_MAX];
};

/* A page of a ranked order (STORE_MATCH_RELEVANCE, STORE_MATCH_POPULARITY)
 * that cursor paging continues: each match's key goes with it (-bm25, or
 * the popularity), and the page starts after a place in the order. */
struct store_match_ranked {
    bool after; /* only matches ranked after (key, id): a lower key, or the same and a lower id */
    double key;
    int64_t id;
    /* relevance: rank with these statistics (a walk's, frozen at its first
     * page); NULL: FTS5's own, as of now */
    const struct store_match_stats *stats;
};

/* How many articles m matches. ERR_TIMEOUT when its deadline passes. */
int store_reader_match_count(struct store_reader *r, const struct store_match *m, int64_t *out,
                             struct err *err);

/* The ids of the articles m matches, in order, skipping the first offset:
 * at most max of them into ids[0..*n). ERR_TIMEOUT when its deadline
 * passes. A page and its count agree inside one read snapshot
 * (store_reader_begin). */
int store_reader_match_ids(struct store_reader *r, const struct store_match *m,
                           enum store_match_order order, size_t offset, size_t max, int64_t *ids,
                           size_t *n, struct err *err);

/* The first max matches of m in order after rk's place (ranked orders
 * only): ids[0..*n) and their keys[0..*n); relevance ranks with rk->stats
 * or FTS5's own, and *used says which (ignored for popularity).
 * ERR_INVALID: rk->stats do not fit the expression's phrases;
 * ERR_TOO_LARGE: more phrases than STORE_MATCH_PHRASES_MAX (err set);
 * ERR_TIMEOUT as store_reader_match_ids. */
int store_reader_match_ranked(struct store_reader *r, const struct store_match *m,
                              enum store_match_order order, const struct store_match_ranked *rk,
                              size_t max, int64_t *ids, double *keys, size_t *n,
                              struct store_match_stats *used, struct err *err);

/* How many articles m matches in each second of publication: each(ctx,
 * second, n) for every second with matches (ids carry their second:
 * store_id_lo), in no particular order. each returning < 0 stops the walk
 * with that code. ERR_TIMEOUT when the deadline passes. */
int store_reader_match_per_second(struct store_reader *r, const struct store_match *m,
                                  int (*each)(void *ctx, int64_t second, uint64_t n), void *ctx,
                                  struct err *err);

/* A column of the matches that can be counted by value (the facets). The
 * values come decoded from the stored spelling: domains lower case without
 * leading dots, languages lower case with "se" filed as "sv", countries
 * and categories lower case, source ids and authors as stored. */
enum store_match_column {
    STORE_MATCH_SOURCE,
    STORE_MATCH_DOMAIN,
    STORE_MATCH_LANGUAGE,
    STORE_MATCH_COUNTRY,
    STORE_MATCH_CATEGORY,
    STORE_MATCH_AUTHOR,
    STORE_MATCH_COLUMNS
};

/* How many articles m matches with each non-empty value of column:
 * each(ctx, value, len, n) once per value (the value lasts until each
 * returns). each returning < 0 stops the walk with that code. ERR_TIMEOUT
 * when the deadline passes. */
int store_reader_match_values(struct store_reader *r, const struct store_match *m,
                              enum store_match_column column,
                              int (*each)(void *ctx, const char *value, size_t len, uint64_t n),
                              void *ctx, struct err *err);

/* FTS5's own integrity check of the full-text side of the file at path
 * (every entry of articles_fts agrees with the rows it was made from) and
 * its row count in *rows. A disagreement is no error: it is described in
 * detail[0..cap) ("" when none). The check is an FTS5 command written as
 * an INSERT, so it opens a read-write connection; it writes nothing. */
int store_journal_fulltext_verify(const char *path, int64_t *rows, char *detail, size_t cap,
                                  struct err *err);

/* Give the file at path its full-text side when it lacks it (filling
 * articles_fts from every article: minutes for millions) and the side's
 * story index (STORE_SQLITE_STORY_INDEX, a sort of the story ids);
 * nothing when it has both. */
int store_journal_fulltext_ensure(const char *path, struct err *err);

/* --- stories: each article's story as an index reads it back (issue 25) ------ */

/* The story an article belongs to: its story_id, or, for an article
 * stored before stories (story_id NULL, passed as 0), the story it would
 * have founded, story_id_for_url(canonical_url) (story/sketch.h): its
 * own. Both search backends and every node resolve it so. */
int64_t store_story_resolve(int64_t story_id, const char *canonical_url, int64_t id);

/* Called per article with its id and resolved story; non-zero stops with
 * that code. */
typedef int (*store_story_fn)(void *ctx, int64_t id, int64_t story);
/* Every article with lo <= id <= hi, ascending id (a range of the primary
 * key: the engine's per-segment story column). */
int store_reader_stories(struct store_reader *r, int64_t lo, int64_t hi, store_story_fn fn,
                         void *ctx, struct err *err);
/* The story of article id (0 and ERR_NOTFOUND when there is no such
 * article): store_reader_stories over that one id. */
int store_reader_story_of(struct store_reader *r, int64_t id, int64_t *story, struct err *err);
/* The ids of every article of story with lo <= id <= hi, newest first,
 * into *ids (arena); *n = 0 when there is none. By the index
 * articles_story_id, which only the FTS5 mode keeps
 * (store_journal_fulltext_ensure; the engine reads its story columns): a scan
 * of the table without it. */
int store_reader_story_members(struct store_reader *r, struct arena *a, int64_t story, int64_t lo,
                               int64_t hi, int64_t **ids, size_t *n, struct err *err);
/* The id of the article stored under canonical_url (ingest_url_canonical
 * of an address; the table's unique key), ERR_NOTFOUND when none. */
int store_reader_article_by_url(struct store_reader *r, const char *canonical_url, int64_t *id,
                                struct err *err);

/* The id and resolved story of every article m matches (the full-text
 * side), in no particular order; fn non-zero stops with that code.
 * ERR_TIMEOUT when m's deadline passes. */
int store_reader_match_stories(struct store_reader *r, const struct store_match *m,
                               store_story_fn fn, void *ctx, struct err *err);
/* Each term's document count on the full-text side (FTS5's statistics,
 * terms as FTS5 stores them) into df[0..n). */
int store_reader_term_docs(struct store_reader *r, const char *const *terms, const size_t *lens,
                           size_t n, uint64_t *df, struct err *err);
/* The full-text side's words that start with p[0..len), ascending, copied
 * into a: at most max of them (*n == max: maybe more). */
int store_reader_prefix_terms(struct store_reader *r, struct arena *a, const char *p, size_t len,
                              size_t max, const char ***out, size_t *n, struct err *err);

#endif
