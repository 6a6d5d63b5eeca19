/* Private to the engine's writer (index/engine/): the single writer that
 * loads the log into segments and follows it, on one thread (the
 * follower's, engine.c). Its jobs have a file each, in this order from the
 * bottom (each calls only the files above it in this list, and those below
 * writer.h in internal.h's list):
 *   state.c      the writer's segment list; publishing it as a snapshot
 *   sources.c    source-id interning and the sources' popularity
 *   deletions.c  deletion sets, copy-on-write per poll
 *   checkpoint.c segment files, the manifest, loading them at open
 *   rows.c       reading new rows into segments
 *   build.c      a build from nothing on every core
 *   reconcile.c  rows deleted without a replacement
 *   mergeterms.c a merge's terms, each merged once (merge.h)
 *   merge.c      the merge policy and the merge
 *   writer.c     a poll (the above in one read snapshot), open and close */
#ifndef NEWSD_INDEX_ENGINE_WRITER_H
#define NEWSD_INDEX_ENGINE_WRITER_H

#include "index/engine/internal.h"
#include "store/journal.h"
#include "util/strtab.h"

/* Documents per segment built at open, and the size past which a segment
 * is no longer merged with others (only rewritten when a quarter is
 * deleted): a bounded builder keeps the build's hash table and peak memory
 * small, at the cost of visiting N / SEGMENT_FULL segments per query. */
#define ENG_SEGMENT_FULL 131072
/* Live documents past which merges stop (merge.c): a merge holds its
 * output in RAM until it is written - postings about 0.75 KB and the
 * documents' JSON about 0.85 KB per NewsAPI-sized article, ~1.7 GB at the
 * cap. */
#define ENG_MERGE_MAX (1u << 20)

struct eng_merge;

struct eng_writer {
    struct store_reader *db;
    char *db_path;                       /* the log's file; the index directory is beside it */
    struct eng_slot *slot;               /* where snapshots are published (the engine's) */
    struct eng_count_cache *count_cache; /* the engine's count cache, for the snapshots; NULL */
    int64_t data_version;
    int64_t applied_seq;
    int64_t covered;                /* the log's head as of the last successful poll */
    char epoch[STORE_IDENTITY_MAX]; /* the table's identity the segments belong to */
    bool loaded;                    /* opened from the index directory's files */
    /* persistence: the index directory, NULL when there is none */
    char *dir;
    int lock_fd;   /* <dir>/lock, flock()ed by the one process that writes */
    bool writable; /* this process holds the lock */
    bool dirty;    /* changes since the last manifest */
    uint64_t next_file;
    int64_t last_checkpoint_ms;
    int64_t checkpoint_retry_ms; /* after a failed checkpoint: not before this */
    int64_t checkpoint_ms;
    bool persist; /* the index directory may be used */
    bool staged;  /* it is the staged one (index_engine_options.staged) */
    bool files_only; /* index_engine_options.files_only */
    /* interned source ids: srcs[k] is number k of src_ids, which finds it */
    char **srcs;
    size_t nsrc, srccap;
    struct strtab src_ids;
    double *pop;                 /* by interned id */
    uint32_t seg_full;           /* ENG_SEGMENT_FULL unless the options say otherwise */
    uint32_t tier_min_df;        /* ENG_TIER_MIN_DF unless they do (tiers.h) */
    const atomic_bool *stopping; /* the engine is being freed: a long read ends */
    atomic_bool count_pending;   /* the row count check is still to be made (eng_writer_poll) */
    int64_t counted_ms;          /* when it was last made (clock_mono_ms) */
    int64_t count_every_ms;      /* when the next is due after it */
    /* merges (merge.c) */
    struct eng_merge *merge; /* the one running, NULL none */
    uint64_t merge_file;     /* its output's file id: the sweep leaves it alone */
    uint32_t merge_max;      /* ENG_MERGE_MAX */
    uint64_t *pinned;        /* gens of segments that cannot be merged from postings */
    size_t npinned;
    /* the writer's copy of what it last published */
    size_t nseg;
    struct eng_segment **segs;
    struct eng_deletions **deletions;
};

/* --- state.c ---------------------------------------------------------------- */

/* Live documents of the writer's segments. */
uint64_t eng_writer_live(const struct eng_writer *w);
/* A snapshot of the writer's state (new references throughout) into the
 * slot. 0 or ERR_NOMEM. */
int eng_writer_publish(struct eng_writer *w);
/* Append a segment (the writer takes the reference). 0 or ERR_NOMEM. */
int eng_writer_append(struct eng_writer *w, struct eng_segment *seg);
/* Drop every segment: the table is read again from seq 0. */
void eng_writer_drop_all(struct eng_writer *w);

/* --- sources.c -------------------------------------------------------------- */

/* The interned number of source id s (interned now when new). ERR_NOMEM. */
int eng_src_intern(struct eng_writer *w, const char *s, uint32_t *out);
/* Popularity of every catalogue source (coalesce(popularity, -1) of fts5.c). */
int eng_sources_load(struct eng_writer *w, struct err *err);

/* --- deletions.c ----------------------------------------------------------- */

/* A poll's deletions, adopted into the writer only when it succeeds. */
struct eng_pending {
    struct eng_deletions **deletions; /* per segment: the writer's new set, or NULL = unchanged */
    size_t n; /* segments when the poll began (later ones have no deletions) */
    bool changed;
};
int eng_pending_mark(struct eng_writer *w, struct eng_pending *p, size_t si, uint32_t doc);
/* The deletions of segment si as the poll sees them. */
const struct eng_deletions *eng_pending_deletions(const struct eng_writer *w,
                                                  const struct eng_pending *p, size_t si);
/* Delete the live document of article id, wherever it is. */
int eng_pending_delete_id(struct eng_writer *w, struct eng_pending *p, int64_t id);
/* Delete the live documents whose canonical URL hashes to h. */
int eng_pending_delete_url(struct eng_writer *w, struct eng_pending *p, uint64_t h);
/* Adopt the pending sets into the writer's state / drop them. */
void eng_pending_apply(struct eng_writer *w, struct eng_pending *p);
void eng_pending_drop(struct eng_writer *w, struct eng_pending *p);

/* --- checkpoint.c ------------------------------------------------------------- */

/* Write segment i to its file and put the mapped file in its place. */
int eng_segment_persist(struct eng_writer *w, size_t i, struct err *err);
/* Where segment file id lives: 0, or -1 when the path does not fit. */
int eng_segment_path(const struct eng_writer *w, uint64_t id, char *out, size_t cap);
/* eng_segment_persist in two steps, for the threads that write segments
 * beside the writer's (the first build's workers, merges): seg written to
 * path as file id and mapped into *mapped, its size read back; then, on
 * the writer's thread, the mapped file's columns checked against the
 * interned sources and put in place of segment i (mapped is taken, and
 * dropped on failure). */
int eng_segment_write_mapped(const struct eng_segment *seg, const char *path, uint64_t id,
                             struct eng_segment **mapped, struct err *err);
int eng_segment_install_mapped(struct eng_writer *w, size_t i, struct eng_segment *mapped,
                               struct err *err);
/* eng_segment_write_mapped to file id's path (eng_segment_path). */
int eng_segment_write_file(const struct eng_writer *w, const struct eng_segment *seg, uint64_t id,
                           struct eng_segment **mapped, struct err *err);
/* Write what is only in RAM, then replace the manifest. */
int eng_checkpoint(struct eng_writer *w, struct err *err);
/* A checkpoint when one is due (failures logged and retried later). */
void eng_checkpoint_maybe(struct eng_writer *w);
/* Remove from the index directory what the manifest does not name. */
void eng_dir_sweep(const struct eng_writer *w);
/* Find (create) the index directory and take its lock when free. */
void eng_persist_open(struct eng_writer *w);
/* <db_path>.engine.v<segment format>: where newsd index build writes an
 * index ahead of an upgrade (index_engine_staged_dir). */
int eng_staged_dir(const char *db_path, char *out, size_t n, struct err *err);
/* Map what the manifest names; false (nothing kept) when it cannot be used. */
bool eng_persist_load(struct eng_writer *w);

/* --- rows.c ------------------------------------------------------------------- */

/* The hash of the row's canonical URL (0 for none). */
uint64_t eng_row_url_hash(const struct store_row *row);
struct buf;
/* The row's NewsAPI JSON, as the API would render it (the document store's
 * copy); json->err set when out of memory. */
void eng_row_json(const struct store_row *row, struct buf *out);
/* The builder's view of a row, its interned source and its JSON (strings
 * borrowed). */
void eng_row_view(const struct store_row *row, uint64_t url_hash, uint32_t src,
                  const struct buf *json, struct eng_row *out);
/* One row into the builder. 0 or ERR_NOMEM. */
int eng_row_add(struct eng_writer *w, struct eng_builder *b, const struct store_row *row,
                uint64_t url_hash);
/* New rows (seq > applied) into b, deleting the documents they replace. */
int eng_rows_read_new(struct eng_writer *w, struct eng_builder *b, struct eng_pending *p,
                      struct err *err);

/* --- build.c ------------------------------------------------------------------- */

/* Worker threads for reading the whole table (a build from nothing) on
 * every core, 0 when this is not such a build or there is one core. */
unsigned eng_build_workers(const struct eng_writer *w);
/* Every row (seq > applied) into segments built by that many workers,
 * each written to its file; nothing is kept on failure. */
int eng_build_parallel(struct eng_writer *w, unsigned workers, struct err *err);

/* --- reconcile.c -------------------------------------------------------------- */

/* Rows deleted without a replacement: every live id checked against the table. */
int eng_reconcile(struct eng_writer *w, struct eng_pending *p, struct err *err);
/* Every segment marked damaged (eng_segment_damage) built again from the
 * table's rows of its ids; when its ids are damaged too, every segment is
 * dropped and *reread set: the next poll must read the whole table. */
int eng_repair(struct eng_writer *w, bool *reread, struct err *err);
/* The deletions the store recorded since the last poll (store_reader_deletions). */
int eng_deletions_apply(struct eng_writer *w, struct eng_pending *p, struct err *err);

/* --- merge.c ------------------------------------------------------------------ */

/* Install a finished background merge; start one when a tier holds
 * MERGE_FAN segments or a segment is more than a quarter deleted. */
int eng_merge_maybe(struct eng_writer *w, struct err *err);
/* End a running merge (its work is dropped) and wait for its thread. */
void eng_merge_stop(struct eng_writer *w);
/* Merge threads running now, in every engine of the process. */
int eng_merges_running(void);
/* The live documents of in[0..k) (deletions[i]: deleted docids of in[i], NULL
 * none) as one new heap segment, on the caller's thread (tests, fuzzing):
 * the same segment a build of those rows gives. ERR_UNSUPPORTED when a
 * field holds more than ENG_POS_MAX occurrences of one word. */
int eng_merge_segments(struct eng_segment *const *in, struct eng_deletions *const *deletions,
                       size_t k, struct eng_segment **out, struct err *err);
/* The same, terms of tier_min_df documents or more given a tier (tiers.h;
 * eng_merge_segments: ENG_TIER_MIN_DF) and residuals kept by resid_min_df
 * (resid.h; eng_merge_segments: ENG_RESID_MIN_DF). */
int eng_merge_segments_tiered(struct eng_segment *const *in, struct eng_deletions *const *deletions,
                              size_t k, uint32_t tier_min_df, uint32_t resid_min_df,
                              struct eng_segment **out, struct err *err);

#endif
