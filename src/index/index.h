/* The search seam (DESIGN.md): the only thing api/ sees of search. An index
 * answers a typed request with the exact number of matches and one page of
 * articles, each as its NewsAPI JSON. It is local to the node and reads the
 * store's article journal (store/journal.h). Two backends behind this header: the purpose-built
 * engine of docs/engine.md (index/engine/, the default) and SQLite FTS5 (index/fts5/, `--index
 * fts5`, the tests' oracle); both give the same answers. Thread-safe: any number of concurrent
 * searches. */
#ifndef NEWSD_INDEX_INDEX_H
#define NEWSD_INDEX_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/query.h"
#include "store/journal.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

struct index;

enum index_field {
    INDEX_FIELD_TITLE = 1 << 0,
    INDEX_FIELD_DESCRIPTION = 1 << 1,
    INDEX_FIELD_CONTENT = 1 << 2,
    INDEX_FIELD_ALL = 7,
};

enum index_sort {
    INDEX_SORT_PUBLISHED_DESC, /* newest first (publishedAt) */
    INDEX_SORT_PUBLISHED_ASC,  /* earliest first (top-headlines default) */
    INDEX_SORT_RELEVANCY,      /* BM25, title weighted, ties newest first */
    INDEX_SORT_POPULARITY,     /* source popularity, ties newest first */
};

/* Scored leaves of a query that a relevancy cursor can freeze the
 * statistics of (each one's document count travels in the cursor). */
#define INDEX_RANK_LEAVES_MAX 64

/* What relevancy (FTS5's bm25) reads of the collection: its documents,
 * their tokens, and per scored leaf (phrase) the documents it matches. */
struct index_rank_stats {
    int64_t nrow, ntoken;
    size_t nleaves;
    int64_t hits[INDEX_RANK_LEAVES_MAX];
};

struct index_request {
    const struct query_node *q;       /* NULL: no text condition */
    unsigned q_fields;                /* enum index_field mask for q (searchIn) */
    const struct query_node *q_title; /* qInTitle, titles only; NULL none */
    const char *const *sources;       /* exact source ids; any of them */
    size_t n_sources;
    const char *const *domains; /* lower case, no www.; a domain matches its subdomains */
    size_t n_domains;
    const char *const *exclude_domains;
    size_t n_exclude_domains;
    const char *language; /* NULL any; canonical (sv, not se) */
    const char *country;  /* NULL any; lower case */
    const char *category; /* NULL any; lower case */
    bool headlines_only;
    int64_t from, to; /* inclusive UTC seconds; INT64_MIN / INT64_MAX = open */
    /* Cursor paging (api/cursor.h): only articles whose id is below
     * id_below. Ids order articles as publishedAt does, so this is the
     * rest of a newest-first walk. */
    bool below;
    int64_t id_below;
    /* Cursor paging in a ranked order (relevancy, popularity): the page
     * holds only matches ranked after the cursor's place, a lower key
     * (score or popularity) or the same key and a lower id; the count
     * stays the whole search's. */
    bool after;
    double after_key;
    int64_t after_id;
    /* Relevancy's collection statistics: NULL ranks with the index's own
     * as of now; else with these (a cursor walk's, frozen at its first
     * page, so that a document's score is a function of the document). */
    const struct index_rank_stats *stats;
    bool walk; /* a cursor page: index_result.keys (and .stats) filled */
    enum index_sort sort;
    size_t offset;       /* (page-1)*pageSize */
    size_t limit;        /* pageSize */
    int64_t deadline_ms; /* CLOCK_MONOTONIC ms after which the search gives up
                          * with ERR_TIMEOUT; 0 = no time budget */
    /* The page's ids alone (docs[i].json NULL): for a caller that reads
     * the rows itself (an export) or only the ids (dedupe's and
     * similarTo's walks), which has no use for the page's JSON
     * (decompressing it was 8 % of an export's thread). */
    bool ids_only;
    /* The page without the count of every match: total then counts only
     * the matches looked at to fill the page (at least the page's; more
     * may follow whenever the page is full). For a walk that stops at a
     * page that is not full (an export): counting every match below each
     * of its pages made a whole walk quadratic in its matches. */
    bool no_total;
};

/* The highest article id req admits: its `to` second's last id, or below
 * the cursor's (index_request.below). Every backend bounds its ids so. */
static inline int64_t index_request_id_hi(const struct index_request *req)
{
    int64_t hi = store_id_hi(req->to);
    if (req->below && (req->id_below == INT64_MIN || req->id_below - 1 < hi))
        hi = req->id_below == INT64_MIN ? INT64_MIN : req->id_below - 1;
    return hi;
}

/* Whether a list filter of a request (sources, domains, excludeDomains)
 * names anything: a list of only NULLs filters nothing, and every backend
 * skips it alike. */
static inline bool index_request_names_any(const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (values[i] != NULL)
            return true;
    }
    return false;
}

/* One article of a page: its JSON object exactly as the API writes it
 * (article/json.h), not NUL-terminated. */
struct index_doc {
    int64_t id;
    const char *json; /* arena-owned */
    size_t len;
};

struct index_result {
    uint64_t total;         /* exact number of matches */
    size_t n;               /* articles in this page */
    struct index_doc *docs; /* arena-owned */
    /* index_request.walk in a ranked order: each doc's sort key (relevancy
     * score, higher first; popularity), arena-owned; and relevancy's
     * statistics the page was ranked with (req->stats, or the index's). */
    double *keys;
    struct index_rank_stats stats;
};

/* What `newsd index verify` found (index_verify). */
struct index_verify_report {
    uint64_t rows;    /* articles in the table */
    uint64_t indexed; /* live documents in the index */
    uint64_t missing; /* rows the index does not have */
    uint64_t extra;   /* documents with no row, or a second copy of one */
    size_t segments;  /* engine: segments checked (CRC and structure) */
    size_t files;     /* engine: of them, files in the index directory */
    uint64_t bytes;   /* engine: bytes of those files */
    bool from_files;  /* engine: opened from its files, not rebuilt */
    char detail[256]; /* the first problem met, for the operator */
};

/* Where the engine's segment files' bytes go (`newsd index sizes`, the
 * benchmark's size table): the index proper, then the document store (each
 * article's NewsAPI JSON: a copy of the rows, like FTS5's fts_content, not
 * an index). Summed over the segments of the current snapshot. */
struct index_size_report {
    size_t segments, files; /* segments; of them, files in the index directory */
    uint64_t file_bytes;    /* bytes of those files */
    uint64_t docs, terms, postings, positions;
    /* the index */
    uint64_t header;          /* segment headers and 8-byte alignment */
    uint64_t columns;         /* per document: id, row size, source */
    uint64_t url_table;       /* (canonical-URL hash, docid) pairs: upserts by URL */
    uint64_t dictionary;      /* the term entries */
    uint64_t term_strs;       /* the term strings */
    uint64_t skip;            /* skip tables: block last docid, offsets, block maxima */
    uint64_t docids;          /* docid gaps */
    uint64_t freqs;           /* field masks and term frequencies */
    uint64_t positions_bytes; /* position deltas (exact terms) */
    uint64_t pairs;           /* of the above, the pair terms' (a next-word index) */
    uint64_t tiers;           /* frequent terms' tiers (relevancy's first candidates) */
    /* the document store */
    uint64_t store_offsets, store_dict, store_frames;
};
/* Bytes of the index proper (everything but the document store). Inline:
 * the engine's segfile.c sums its parts with it and calls nothing above. */
static inline uint64_t index_size_index_bytes(const struct index_size_report *r)
{
    return r->header + r->columns + r->url_table + r->dictionary + r->term_strs + r->skip +
           r->docids + r->freqs + r->positions_bytes + r->tiers;
}
/* Bytes of the document store. */
static inline uint64_t index_size_store_bytes(const struct index_size_report *r)
{
    return r->store_offsets + r->store_dict + r->store_frames;
}

/* How the purpose-built index runs; all zero: the defaults. src/cmd/ fills
 * them from the environment (cmd_engine_options, cmd/common.h), as bench/
 * does; tests set them directly. The index itself reads no environment. */
/* When one search may use a second thread (index_engine_options.split). */
enum index_split {
    INDEX_SPLIT_IDLE,   /* the default: a heavy search while no other one runs */
    INDEX_SPLIT_NEVER,  /* NEWSD_ENGINE_SPLIT=0: one thread per search */
    INDEX_SPLIT_ALWAYS, /* tests, NEWSD_ENGINE_SPLIT=always: every search over
                         * two segments or more, whatever its cost */
};

struct index_engine_options {
    bool no_count_cache;    /* NEWSD_ENGINE_COUNT_CACHE=0: no count cache (the
                             * benchmarks' cold figures, docs/performance.md) */
    bool no_files;          /* NEWSD_ENGINE_PERSIST=0: never read or write the index
                             * directory (everything in RAM) */
    enum index_split split; /* NEWSD_ENGINE_SPLIT: searches on a second thread */
    int64_t build_delay_ms; /* tests, NEWSD_ENGINE_BUILD_DELAY_MS: wait this long
                             * before the first build (a slow build, ended by a stop) */
    uint32_t segment_docs;  /* tests, NEWSD_ENGINE_SEGMENT_DOCS: documents per segment
                             * at open (many small segments); 0: the default */
    uint32_t tier_min_df;   /* tests and benchmarks, NEWSD_ENGINE_TIER_MIN_DF: a term
                             * of this many documents of a segment or more gets a
                             * tier (docs/engine.md "Tiers"); 0: the default */
    int64_t checkpoint_ms;  /* tests, NEWSD_ENGINE_CHECKPOINT_MS: time between
                             * checkpoints; 0: the default (5 s),
                             * INDEX_CHECKPOINT_ALWAYS: after every change */
    uint32_t warm_min_docs; /* tests: a segment of this many documents or more gets
                             * the columns searches asked for before (facets,
                             * stories) made in the background, at open and once
                             * built (docs/engine.md "A column made off the
                             * request's thread"); 0: the default, 65,536 */
    bool files_only;        /* newsd index sizes: only what the index directory's
                             * files hold; where it has none this version reads,
                             * the open fails (ERR_NOTFOUND) and builds nothing
                             * from the table (nor makes the directory) */
    bool staged;            /* newsd index build: the files go to the staged
                             * directory of this build's segment format
                             * (index_engine_staged_dir) beside the live one,
                             * which a running server of another version keeps
                             * using; the next process to write the live
                             * directory adopts the staged one in its place */
};
#define INDEX_CHECKPOINT_ALWAYS (-1)

/* What index_open_with opens. */
struct index_options {
    const char *kind;      /* INDEX_KIND_*; NULL: INDEX_KIND_DEFAULT */
    const char *local_dir; /* a PostgreSQL store's node-local directory (below);
                            * NULL: INDEX_LOCAL_DIR_DEFAULT */
    bool no_follow;        /* a PostgreSQL store's replica is opened as it is and
                            * not kept in step (newsd index verify: what this
                            * node holds, and how far behind the store it is) */
    struct index_engine_options engine;
};

/* Open the default index (INDEX_KIND_DEFAULT) over the store's journal. */
int index_open(struct index **out, struct store *s, struct err *err);

/* Open the index opt describes (NULL: index_open's). ERR_INVALID for an
 * unknown kind. */
int index_open_with(struct index **out, struct store *s, const struct index_options *opt,
                    struct err *err);
void index_close(struct index *idx);

/* What /metrics shows of the index. */
struct index_stats {
    bool engine;         /* the purpose-built index (the rest is for it only) */
    bool ready;          /* opened (index_ready) */
    uint64_t documents;  /* live documents */
    uint64_t segments;   /* segments searched */
    uint64_t file_bytes; /* bytes of the segment files mapped */
    uint64_t merging;    /* segment merges running now */
    uint64_t cache_hits; /* count cache */
    uint64_t cache_misses;
    uint64_t split_searches; /* searches run over two threads */
};
void index_stats(struct index *idx, struct index_stats *out);

/* The index's live documents against the table's rows (/healthz): a
 * server whose table was replaced or edited behind it answers searches
 * from an index that no longer matches (issue 30: a backup written over
 * the live database, every search 0 results). Compared only on a snapshot
 * that covers the table's head, after giving the follower a moment to
 * catch up (a count that differs while articles are being imported is
 * lag, not disagreement); a mismatch is looked at again after the
 * follower's next poll, which reconciles deletions. */
struct index_count_check {
    bool compared;     /* false: the table kept moving, or the index is not ready */
    int64_t rows;      /* the articles table's rows */
    int64_t documents; /* the index's live documents */
};
/* 0 with *out filled (a backend that is the table itself, FTS5: compared
 * false), or ERR_* when the table cannot be read. */
int index_count_check(struct index *idx, struct index_count_check *out, struct err *err);

/* Check the index against the articles table: every row indexed exactly
 * once and nothing else, and (engine) every segment's checksum and
 * structure. 0 with the counts in *out (missing + extra == 0: agreed), or
 * an ERR_* when the check itself could not run. */
int index_verify(struct index *idx, struct index_verify_report *out, struct err *err);

/* Where the index's bytes go (engine only: ERR_UNSUPPORTED otherwise). */
int index_sizes(struct index *idx, struct index_size_report *out, struct err *err);

/* Where the node-local index of a PostgreSQL store lives when no directory
 * is given (relative: the working directory): a replica of the store's
 * articles, kept in step by a thread (store/journal.h). The embedded store's
 * index lives beside its own file. */
#define INDEX_LOCAL_DIR_DEFAULT STORE_JOURNAL_LOCAL_DIR_DEFAULT

/* Remove the index files kept beside the SQLite file db_path (the
 * engine's directory; FTS5 lives in the file itself): newsd restore, so
 * that the next open rebuilds from the restored table. 0 also when there
 * are none; nothing may have them open. */
int index_files_remove(const char *db_path, struct err *err);

/* Backend kinds for index_open_kind: "fts5" (SQLite FTS5) or "engine" (the
 * purpose-built index, docs/engine.md). */
#define INDEX_KIND_FTS5 "fts5"
#define INDEX_KIND_ENGINE "engine"
#define INDEX_KIND_ENV "NEWSD_INDEX" /* the environment variable src/cmd/ reads for it */
#define INDEX_KIND_DEFAULT INDEX_KIND_ENGINE

/* kind when given (not empty), else INDEX_KIND_DEFAULT (not checked:
 * opening refuses an unknown kind). */
const char *index_kind_resolve(const char *kind);

/* index_open_with, with kind and local_dir and the engine's defaults. */
int index_open_kind(struct index **out, struct store *s, const char *local_dir, const char *kind,
                    struct err *err);

/* index_open_with for a server: the engine opens (maps its files, or
 * builds them from the store: minutes for millions of articles) on its own
 * thread, so the caller can listen at once; until index_ready, searches
 * fail with ERR_BUSY. */
int index_open_background(struct index **out, struct store *s, const struct index_options *opt,
                          struct err *err);
/* False while a background open is still running. */
bool index_ready(struct index *idx);
/* Wait up to ms for index_ready; its value at the end. */
bool index_wait_ready(struct index *idx, int64_t ms);

/* The journal the index follows (store/journal.h): a replica of a PostgreSQL
 * store, or the embedded store's own file. Whoever else follows the
 * articles on this node (live streams, src/push/) reads it too. */
struct store_journal *index_journal(struct index *idx);

/* The format version of the engine's segment files this build writes and
 * reads (docs/engine.md): a store's index directory of another version is
 * rebuilt from the store when opened. */
uint32_t index_engine_segment_version(void);

/* The staged index directory of this build's segment format for the
 * store file db_path (index_engine_options.staged) into out: 0, or
 * ERR_INVALID when it does not fit in n bytes. */
int index_engine_staged_dir(const char *db_path, char *out, size_t n, struct err *err);

/* The backend in use ("fts5", "engine"). */
const char *index_kind(const struct index *idx);

/* How far a node-local index trails its store (cluster mode): its
 * journal's status (a zeroed one for an index without a journal). */
void index_replica_status(struct index *idx, struct store_journal_status *out);

/* Run a request. ERR_NOMEM, ERR_STORE (err set) on failure; ERR_TIMEOUT
 * when req->deadline_ms passes before the search is done. */
int index_search(struct index *idx, struct arena *a, const struct index_request *req,
                 struct index_result *out, struct err *err);

/* Publication time of the newest headline article at or before `before`
 * (the end of the top-headlines live window); ERR_NOTFOUND when none. */
int index_newest_headline(struct index *idx, int64_t before, int64_t *out, struct err *err);

/* --- coverage over time and facets (issue 26, docs/api.md §counts) ------- */

/* Matches per bucket: counts[i] = matches of req (its page ignored) whose
 * publishedAt is in [bounds[i], bounds[i + 1]) and in [req->from,
 * req->to]; bounds ascending, nbuckets + 1 of them. Exact: every bucket
 * counted, none sampled. Errors as index_search. */
int index_counts(struct index *idx, struct arena *a, const struct index_request *req,
                 const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err);

/* What a match is grouped by. The value of each, as both backends file it
 * (store/meta.h's spelling, decoded): source = the article's source id;
 * domain = its domain, ASCII lower case, leading dots dropped; language =
 * lower case, "se" filed as "sv"; country, category = lower case; author =
 * the author string as stored. An article without one (no source id, no
 * author ...) is in no bucket of that facet. */
enum index_facet {
    INDEX_FACET_SOURCE,
    INDEX_FACET_DOMAIN,
    INDEX_FACET_LANGUAGE,
    INDEX_FACET_COUNTRY,
    INDEX_FACET_CATEGORY,
    INDEX_FACET_AUTHOR,
    INDEX_FACET_N
};
#define INDEX_FACET_SIZE_MAX 100

/* "source" ... "author" (index order). */
const char *index_facet_name(enum index_facet f);

struct index_facet_value {
    const char *value; /* arena-owned, NUL-terminated (may hold no NUL) */
    size_t len;
    uint64_t count;
};

/* One facet's top values: count descending, ties by value's bytes
 * ascending (memcmp, the shorter first), so the order is the same on both
 * backends and from one call to the next. */
struct index_facet_top {
    size_t n;
    struct index_facet_value *v;
};

/* The exact top `size` (1..INDEX_FACET_SIZE_MAX) values of every facet in
 * mask (1 << enum index_facet) over all of req's matches (its page
 * ignored) into out[f]. Errors as index_search. */
int index_facets(struct index *idx, struct arena *a, const struct index_request *req, unsigned mask,
                 size_t size, struct index_facet_top out[INDEX_FACET_N], struct err *err);

/* --- for the backends (index/facet.c) --- */

/* (value, count) pairs of one facet, merged and cut to its top. */
struct index_facet_acc {
    struct index_facet_value *v;
    size_t n, cap;
    bool repeats; /* a value may come in several pairs (from several segments) */
};
/* Add count to value, which is borrowed (it must stay valid until
 * index_facet_acc_top). 0 or ERR_NOMEM. */
int index_facet_acc_add(struct index_facet_acc *acc, struct arena *a, const char *value, size_t len,
                        uint64_t count);
/* The top size into *out (the order of index_facet_top), the chosen values
 * copied into a; pairs of one value summed when acc->repeats. 0 or
 * ERR_NOMEM. */
int index_facet_acc_top(struct index_facet_acc *acc, struct arena *a, size_t size,
                        struct index_facet_top *out);
/* --- stories: one story, many copies (issue 25, docs/api.md §9 "Stories") ---------- */

/* One match of a request and its story (store_story_resolve). */
struct index_story_match {
    int64_t id, story;
};

/* The matches of a request by story (index_story_matches). A match alone
 * in its story in the whole index is a story of its own whatever the
 * query: a backend that knows which matches are (the engine) counts them
 * without listing them, and lists only the first keep of them at each end
 * of time, which is all a page by time can show of them. */
struct index_story_matches {
    struct index_story_match *m; /* the matches not counted in alone, any order */
    size_t n;
    uint64_t alone;                   /* matches alone in their story (not in m) */
    struct index_story_match *newest; /* the keep newest of those, newest first */
    struct index_story_match *oldest; /* the keep earliest of those, earliest first */
    size_t nnewest, noldest;
};
/* keep for a caller that wants every match in m (alone 0). */
#define INDEX_STORY_ALL SIZE_MAX
/* req's matches (its page ignored) with their stories into *out (arena):
 * every match is in m, or counted in alone. Both backends give the same
 * stories. Errors as index_search. */
int index_story_matches(struct index *idx, struct arena *a, const struct index_request *req,
                        size_t keep, struct index_story_matches *out, struct err *err);

/* A page of articles, one per story (index/stories.c): the stories among
 * req's matches in req's order, each shown by its first member in that
 * order (newest first: its newest matching member; earliest first: its
 * earliest; relevancy, popularity: its best). total: the exact number of
 * stories among the matches; size[i]: how many of the matches are
 * docs[i]'s story. */
struct index_dedupe_result {
    uint64_t total;
    size_t n;
    struct index_doc *docs;
    int64_t *story;
    uint64_t *size;
};
int index_search_dedupe(struct index *idx, struct arena *a, const struct index_request *req,
                        struct index_dedupe_result *out, struct err *err);

/* One story among a request's matches: its members there, their
 * publication times' span, and the one shown for it (the newest). */
struct index_story {
    int64_t story;
    uint64_t size;             /* matching members */
    int64_t first_id, last_id; /* the earliest and newest matching member */
    struct index_doc doc;      /* the newest matching member's article */
    const int64_t *members;    /* every matching member's id, newest first */
};
enum index_story_sort {
    INDEX_STORY_NEWEST, /* by the newest matching member, newest first */
    INDEX_STORY_SIZE,   /* most matching members first; ties newest first */
};
struct index_story_page {
    uint64_t total; /* stories among the matches */
    size_t n;
    struct index_story *s;
};
/* The stories among req's matches, one page of them (req's offset and
 * limit count stories) in the order sort says. */
int index_stories(struct index *idx, struct arena *a, const struct index_request *req,
                  enum index_story_sort sort, struct index_story_page *out, struct err *err);

/* The articles of ids, as a page shows them (article/json.h), read from
 * the log; an id without a row is left out (*kept: how many remain). */
int index_docs(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
               struct index_doc *out, size_t *kept, struct err *err);
/* The whole articles of ids (source names ...), in order; an id without a
 * row leaves its slot's id 0 (store_reader_articles). */
int index_articles(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
                   struct article *arts, struct err *err);
/* Every article of story with lo <= id <= hi (store_id_lo/hi of a
 * window of publication times), newest first (ids in the arena); *n = 0
 * for a story nobody has. Not a scan of the table: the engine reads its
 * story columns (8 bytes a document, in memory), FTS5 an index on
 * articles.story_id. deadline_ms as index_request's. */
int index_story_members(struct index *idx, struct arena *a, int64_t story, int64_t lo, int64_t hi,
                        int64_t deadline_ms, int64_t **ids, size_t *n, struct err *err);

/* The story of article id (store_story_resolve); ERR_NOTFOUND when the
 * log has no such article. One lookup by the primary key. */
int index_story_of(struct index *idx, int64_t id, int64_t *story, struct err *err);

/* --- similarTo: more like this (docs/api.md §9 "More like this") ------------ */

/* The article stored under canonical_url (ingest_url_canonical of an
 * address), whole, in *art (arena); ERR_NOTFOUND when none. */
int index_article_by_url(struct index *idx, struct arena *a, const char *canonical_url,
                         struct article *art, struct err *err);

/* How many documents hold each of terms[0..n) (folded tokens, text/text.h)
 * in df[i], and the documents there are (an upper bound), from the
 * backend's own dictionary: the inputs of an idf. */
int index_term_docs(struct index *idx, const char *const *terms, const size_t *lens, size_t n,
                    uint64_t *df, uint64_t *ndocs, struct err *err);

/* The terms a topic of art is searched by: its heaviest INDEX_SIMILAR_TERMS
 * folded tokens by tf (title 3, description 1.5, content 1, as relevancy
 * weighs the fields) times BM25's idf, heaviest first, in *terms (arena). */
#define INDEX_SIMILAR_TERMS 10
int index_similar_terms(struct index *idx, struct arena *a, const struct article *art,
                        const char ***terms, size_t *n, struct err *err);

/* The articles most like art among req's time window (req's other
 * filters, q and sort are not used; its page and deadline are): first the
 * other articles of art's story, newest first, then the matches of an OR
 * of index_similar_terms ranked by relevancy, the story's articles and art
 * left out. total: exactly how many there are in both parts. */
int index_similar(struct index *idx, struct arena *a, const struct index_request *req,
                  const struct article *art, struct index_result *out, struct err *err);

#endif
