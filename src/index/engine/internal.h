/* Private to src/index/engine/: the purpose-built index (docs/engine.md).
 *
 * Invariants:
 *  - a segment is immutable once built; its docids run 0..n-1 in article id
 *    order, newest first (id DESC = FTS5's rowid DESC, and ids are
 *    time-ordered: published_at << 20 | n), so a date window is a docid
 *    interval and newest-first is "first k matches";
 *  - a snapshot (segments, their delete sets, source popularity, BM25
 *    totals) is immutable and refcounted; the follower thread is the only
 *    writer and publishes a new snapshot by swapping a pointer;
 *  - terms are the strings the FTS5 tokenizer gives FTS5 (text/text_fts5.h): exact tokens (with
 *    positions), "~stem" (without), meta terms (store/meta.h) after ENG_META_MARK, one dictionary.
 *
 * Files, bottom to top; each calls only files above it in this list (checked
 * by scripts/check-structure.py, engine_calls_downward: `make structure-check`):
 *   docs.c       the document store: each article's NewsAPI JSON, compressed
 *   columns.c    a segment's in-memory columns (facets, stories): their memory
 *   snapshot.c   generations; reference counts of segments, deletion sets and
 *                snapshots; the slot holding the current snapshot
 *   varint.c     numbers as bytes: varints, bit-packed runs (varint.h)
 *   heads.c      a block's posting heads: field masks and tfs (heads.h)
 *   tiers.c      a frequent term's tier: its best postings for relevancy (tiers.h)
 *   postings.c   the postings codec: docid blocks, the encoder, cursors
 *   tdict.c      a segment's term dictionary: blocks of varint entries (tdict.h)
 *   segment.c    looking terms, ids and URLs up; the merge's segment writer
 *   bdict.c      the builder's dictionary: term strings to numbers (bdict.h)
 *   resid.c      residuals: which a segment being built keeps (resid.h)
 *   segbuild.c   the builder: rows tokenized into a segment
 *   segcheck.c   what a search reads of a file, checked where it first reads it
 *   segfile.c    segment files: write, map, the full check, where the bytes go
 *   manifest.c   the index directory's table of contents
 *   count_cache.c the count cache
 *   facet_cols.c facet columns filled on first use (columns.h)
 *   iter.c       search: document-at-a-time iterators over a segment
 *   tierpage.c   search: a relevancy page decided from the terms' tiers
 *   rank.c       search: relevancy (FTS5's bm25), scores into the page
 *   bounds.c     search: a relevancy page's bounds when its plan is not plain
 *   sets.c       search: the set evaluator (bitsets of a docid window)
 *   run.c        search: one segment counted and its page share kept
 *   split.c      search: every segment, on one thread or two
 *   search.c     search: the driver (eng_search_ids); search.h their state
 *   counts.c     matches per time bucket (index_counts) over the driver's visits
 *   facets.c     a facet's top values over the driver's visits (index_facets)
 *   stories.c    each match's story; a story's documents (index_story_*)
 *   warm.c       the columns of a whole pass made off the request's thread (warm.h)
 *   prefix.c     the exact words of the dictionaries that start with a prefix
 *   page.c       the page from the segments' document stores
 *   the writer   state, sources, deletions, checkpoint, rows, reconcile, merge,
 *                writer.c (writer.h lists them in their own order)
 *   engine.c     the backend: vtable, the follower thread, read-your-writes
 * The postings layout: postings.c. */
#ifndef NEWSD_INDEX_ENGINE_INTERNAL_H
#define NEWSD_INDEX_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/backend.h"
#include "index/plan.h"
#include "index/engine/pairs.h"
#include "index/engine/tdict.h"
#include "index/engine/varint.h" /* postings.c's varints */
#include "util/bits.h"

#define ENG_BLOCK 128
#define ENG_END UINT32_MAX           /* docid past the end of every list */
#define ENG_META_MARK PLAN_META_MARK /* first byte of a meta term in the dictionary */
#define ENG_RESID_NONE UINT32_MAX    /* eng_bterm.resid1 of a residual left out (resid.h) */
#define ENG_NO_SOURCE UINT32_MAX
#define ENG_FIELDS PLAN_FIELDS /* title, description, content */

enum eng_term_kind {
    ENG_TERM_EXACT, /* text token: field tfs and positions */
    ENG_TERM_STEM,  /* "~stem": field tfs only */
    ENG_TERM_META,  /* filter term: docids only */
    ENG_TERM_PAIR,  /* a pair of exact terms (pairs.h): field tfs only */
};

/* FTS5's bm25() parameters (sqlite ext/fts5/fts5_aux.c): relevancy's
 * (search.h eng_bm25_term) and a tier's choice of postings (tiers.c). */
#define ENG_BM25_K1 1.2
#define ENG_BM25_B 0.75

struct eng_skip {
    uint32_t last;     /* last docid of the block */
    uint32_t doc_off;  /* block's docid bytes, from the term's docid stream */
    uint32_t data_off; /* block's data bytes, from the term's data stream */
    /* Block max for relevancy: the inputs of a bound on any posting's bm25
     * term (search.c), exact so that `newsd index verify` can check them. */
    uint32_t wf2_max; /* largest posting wf2 (eng_heads_wf2) of the block; 0: meta */
    uint32_t dl_min;  /* smallest dl of the block's documents */
};

/* Twice bm25's column weights (title 3, description 1.5, content 1: the
 * weights index/fts5/fts5.c gives FTS5's bm25), so that a posting's weighted
 * frequency is an integer: eng_heads_wf2 (heads.h). */
static const uint32_t eng_wf2[ENG_FIELDS] = {6, 3, 2};

/* A block's posting heads decoded (heads.h): each posting's tf per field,
 * 0 in a field outside its mask (eng_heads_mask). */
struct eng_heads {
    uint32_t tf[ENG_FIELDS][ENG_BLOCK];
};

/* A term of a segment's dictionary, as tdict.c reads it from its entry. */
struct eng_term {
    uint64_t off;      /* postings, in segment post: skip table (several blocks, 4-byte aligned) */
    uint32_t str;      /* in segment strs */
    uint32_t len : 24; /* bytes of the string, <= ENG_TERM_LEN_MAX */
    uint32_t kind : 8; /* enum eng_term_kind */
    uint32_t df;
    uint32_t docs_len;        /* bytes of the docid stream */
    uint32_t bytes;           /* bytes of the postings from off */
    uint32_t idx;             /* its index in the dictionary */
    uint32_t wf2_max, dl_min; /* a one-block list's skip entry (its block maxima) */
    uint32_t tier_bytes;      /* ENG_TERM_TIERED: its tier (tiers.h) after the postings */
};
/* A longer token is left out of the dictionary: no query (500 characters) reaches it. */
#define ENG_TERM_LEN_MAX ((1u << 24) - 1)
static inline uint32_t eng_term_nblocks(const struct eng_term *t)
{
    return t->df / ENG_BLOCK + (t->df % ENG_BLOCK != 0);
}
/* Bytes of the term's skip table in its postings (a one-block list's is
 * its dictionary entry's maxima, tdict.h). */
static inline uint64_t eng_term_skip_bytes(const struct eng_term *t)
{
    uint32_t nb = eng_term_nblocks(t);
    return nb == 1 ? 0 : (uint64_t)nb * sizeof(struct eng_skip);
}

/* Where a segment's arrays live. */
enum eng_seg_home {
    ENG_SEG_HEAP,     /* built here: each array malloc()ed */
    ENG_SEG_MAPPED,   /* a segment file, mmap()ed (segfile.c) */
    ENG_SEG_BORROWED, /* bytes the caller keeps alive (fuzzing) */
};

struct eng_story_alone; /* stories.c */

struct eng_segment {
    atomic_int ref;
    uint64_t gen;         /* eng_next_gen(): names this segment in the count cache */
    uint8_t home;         /* enum eng_seg_home */
    uint64_t file_id;     /* its file in the index directory; 0 = not written yet */
    const uint8_t *image; /* MAPPED, BORROWED: the file's bytes */
    size_t image_len;
    uint32_t n;             /* documents */
    int64_t *ids;           /* article ids, descending (each its published_at: store_id_time) */
    uint32_t *dl;           /* FTS5 row size in tokens (all four columns) */
    uint32_t *src;          /* interned source id, ENG_NO_SOURCE */
    uint64_t ntoken;        /* sum of dl */
    struct eng_tblock *tidx; /* the term dictionary (tdict.h): its block index */
    uint8_t *tdict;          /* and its entries */
    size_t tdict_len, nterms;
    char *strs;
    size_t strs_len; /* bytes of strs: the terms' strings, back to back */
    uint8_t *post;
    size_t post_len;
    uint64_t *pk_hash; /* canonical-URL hashes, ascending (hash_bytes64) */
    uint32_t *pk_doc;  /* the docid of each */
    /* the document store (docs.c): docid d's NewsAPI JSON is the LZ4 frame
     * dz[doc_off[d], doc_off[d+1]), compressed with the dictionary dict */
    uint64_t *doc_off; /* n + 1 offsets */
    uint8_t *dz;
    size_t dz_len;
    uint8_t *dict;
    size_t dict_len; /* 0: the frames need none */
    /* A file's bytes are checked where a search first reads them: each
     * term's postings once (eng_segment_term_open), one bit per term once it
     * passed; NULL for a segment built in this process (trusted). */
    _Atomic uint64_t *term_ok;
    atomic_bool damaged; /* a check failed: searches fail, the writer rebuilds it */
    _Atomic(_Atomic uint64_t *) term_cache; /* segment.c: recent lookups; NULL until one */
    /* The facet columns (facets.c), built the first time a search asks for
     * them; NULL until then. Freed with the segment. */
    _Atomic(struct eng_facet_cols *) facets;
    /* Each docid's story (stories.c), read from the table the first time a
     * search asks for stories; NULL until then. Freed with the segment. */
    _Atomic(int64_t *) story;
    /* Which docids are alone in their story among every segment they were
     * checked against (stories.c); NULL until a search asks. */
    _Atomic(struct eng_story_alone *) alone;
    /* The columns a thread of warm.c is making (bit f: facet f; bit
     * INDEX_FACET_N: the story column), under warm.c's lock. */
    unsigned warming;
};

/* Deleted docids of one segment; immutable, shared between snapshots. */
struct eng_deletions {
    atomic_int ref;
    uint64_t gen;    /* eng_next_gen(); a set that changes is a new set */
    uint32_t n;      /* deleted docs */
    uint64_t ntoken; /* their dl, summed */
    uint64_t *bits;  /* one bit per doc of the segment */
};

struct eng_snap {
    atomic_int ref;
    size_t nseg;
    struct eng_segment **segs;
    struct eng_deletions **deletions; /* per segment; NULL = none deleted */
    double *pop;                      /* popularity by interned source id */
    size_t npop, nlisted;
    uint32_t *listed;      /* the sources with a popularity (not -1), the most popular first */
    uint64_t nrow, ntoken; /* live documents and their tokens (BM25) */
    int64_t covered;       /* the journal's head (store/journal.h) this snapshot shows */
    struct eng_count_cache *count_cache; /* the engine's count cache (not owned); NULL none */
    bool score_all; /* relevancy scores every match, no pruning: the tests' reference */
    /* Every query document at a time, no match sets (search.c): the
     * reference that fuzzing compares the set evaluator with. */
    bool doc_at_a_time;
};

/* --- docs.c: the document store (the bottom layer) ------------------------- */

/* Build s's store from its documents' JSON: doc d (docid order) is
 * blob[off[order[d]], off[order[d] + 1]). A dictionary is trained on a
 * sample when the segment is big enough for one to pay; one of under
 * ENG_DOCS_OWN_DICT_DOCS documents takes reuse[0, reuse_len) instead when
 * given (another segment's of the same table; NULL: none): past that its
 * own pays for the training. 0, ERR_NOMEM,
 * ERR_BUSY once *cancel (NULL: none) is set, or ERR_INVALID for a document
 * over the store's limit (LIMIT_RESPONSE_BYTES: the renderer's limits keep
 * every article under it). */
#define ENG_DOCS_OWN_DICT_DOCS 16384
int eng_docs_build(struct eng_segment *s, const char *blob, const uint64_t *off,
                   const uint32_t *order, const atomic_bool *cancel, const uint8_t *reuse,
                   size_t reuse_len);
/* Ready the store of a segment attached to a file image; ERR_PARSE when
 * the dictionary is unusable. */
int eng_docs_attach(struct eng_segment *s, struct err *err);
/* Free what eng_docs_build made. */
void eng_docs_release(struct eng_segment *s);
/* Docid doc's JSON, decompressed into the arena (*json not NUL-terminated).
 * ERR_NOMEM, or ERR_PARSE for a frame that does not decode or fails its
 * checksum. Thread-safe: decoding needs no context. */
int eng_docs_get(const struct eng_segment *s, uint32_t doc, struct arena *a, const char **json,
                 size_t *len);
/* eng_docs_get in two steps, so that a page allocates once: the JSON's
 * length (from the frame's header), then the JSON into out[0..size). */
int eng_docs_size(const struct eng_segment *s, uint32_t doc, size_t *size);
/* Starts loading doc's offsets and the first bytes of its frame into the
 * CPU cache (a hint: nothing is checked or read). */
void eng_docs_prefetch(const struct eng_segment *s, uint32_t doc);
int eng_docs_read(const struct eng_segment *s, uint32_t doc, char *out, size_t size);
/* Every document decodes within its bounds (eng_segment_check). */
int eng_docs_check(const struct eng_segment *s, struct err *err);

/* --- facets.c, counts.c: coverage over time and facets (issue 26) ------- */

struct eng_facet_cols;
/* Free s's facet columns (the segment's last reference going). */
void eng_facet_cols_free(struct eng_segment *s);
/* index_counts and index_facets over snapshot s (index.h). */
int eng_counts_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   const int64_t *bounds, size_t nbuckets, uint64_t *counts, struct err *err);
int eng_facets_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   unsigned mask, size_t size, struct index_facet_top *out, struct err *err);
/* --- stories.c: each match's story (issue 25) ------------------------------ */

/* Free s's story column and alone set (the segment's last reference going). */
void eng_story_col_free(struct eng_segment *s);
/* s's story column (*out: a story per docid), read from the table the
 * first time it is asked for. */
int eng_story_column(struct eng_segment *s, struct store_readers *readers, const int64_t **out,
                     struct err *err);
/* Every segment of s with its story column and its set of the docids
 * alone in their story, checked against every other segment of s (what a
 * request for stories that may count matches as alone makes first). */
int eng_story_alone_ready(const struct eng_snap *s, struct store_readers *readers, struct err *err);
/* index_story_matches over snapshot s (index.h); readers: the table the
 * story columns are read from. */
int eng_story_matches_run(const struct eng_snap *s, struct store_readers *readers, struct arena *a,
                          const struct index_request *req, size_t keep,
                          struct index_story_matches *out, struct err *err);
/* index_story_members over snapshot s (index.h): the live docids of story
 * with lo <= id <= hi, from the story columns. */
int eng_story_members_run(const struct eng_snap *s, struct store_readers *readers, struct arena *a,
                          int64_t story, int64_t lo, int64_t hi, int64_t **out, size_t *n,
                          struct err *err);
/* index_term_docs over snapshot s (index.h): each term's document count
 * from the segments' dictionaries, and the live documents. */
/* --- prefix.c: word* (index/prefix.h) ------------------------------------------ */

/* The distinct exact words of s's dictionaries that start with p[0..len),
 * ascending, copied into a; at most max of them (*n == max: maybe more).
 * ERR_NOMEM. */
int eng_prefix_terms(const struct eng_snap *s, struct arena *a, const char *p, size_t len,
                     size_t max, const char ***out, size_t *n);

void eng_term_docs_run(const struct eng_snap *s, const char *const *terms, const size_t *lens,
                       size_t n, uint64_t *df, uint64_t *ndocs);

/* --- snapshot.c ----------------------------------------------------------- */

/* A number never handed out before (segments' and deletion sets' gen). */
uint64_t eng_next_gen(void);

/* Mark s damaged (a check of its bytes failed: why): searches of it fail
 * with ERR_STORE until the writer has rebuilt it from the table. Logged and
 * counted (newsd_index_corrupt_total) once per segment. Any thread. */
void eng_segment_damage(const struct eng_segment *s, const char *why);
/* Register the counter, so that /metrics shows it at 0 before any damage. */
void eng_segment_damage_init(void);
static inline bool eng_segment_damaged(const struct eng_segment *s)
{
    return atomic_load_explicit(&s->damaged, memory_order_relaxed);
}

/* Drop a reference; the last one frees (a mapped segment is unmapped). */
void eng_segment_unref(struct eng_segment *s);
void eng_deletions_unref(struct eng_deletions *d);
void eng_snap_unref(struct eng_snap *s);

/* An empty deletion set for a segment of n documents (one reference, a new
 * gen); NULL when out of memory. */
struct eng_deletions *eng_deletions_new(uint32_t n);
static inline bool eng_deletions_has(const struct eng_deletions *d, uint32_t doc)
{
    return d && bits_get(d->bits, doc);
}

/* The current snapshot: a search takes a reference under a mutex held for a
 * pointer copy, so readers never wait for the writer's work. */
struct eng_slot {
    pthread_mutex_t lock;
    struct eng_snap *cur; /* NULL before the first publication */
};
void eng_slot_init(struct eng_slot *s);
/* Drops the current snapshot. */
void eng_slot_release(struct eng_slot *s);
/* A new reference to the current snapshot. */
struct eng_snap *eng_slot_get(struct eng_slot *s);
/* Publish snap (the slot takes the caller's reference); the old one is
 * freed when the last search holding it ends. */
void eng_slot_publish(struct eng_slot *s, struct eng_snap *snap);

/* --- count_cache.c: the count cache ---------------------------------------- */

struct eng_count_cache;
struct eng_count_cache_key {
    uint64_t seg_gen, del_gen; /* del_gen 0: no deletions */
    uint32_t lo, hi;           /* docid window */
    const char *plan;          /* fingerprint of the plan (search.c) */
    size_t len;
};
#define ENG_COUNT_CACHE_BYTES ((size_t)32 << 20)
int eng_count_cache_new(struct eng_count_cache **out, size_t max_bytes);
void eng_count_cache_free(struct eng_count_cache *c);
/* Thread-safe. */
bool eng_count_cache_get(struct eng_count_cache *c, const struct eng_count_cache_key *k,
                         uint64_t *count);
void eng_count_cache_put(struct eng_count_cache *c, const struct eng_count_cache_key *k,
                         uint64_t count);
void eng_count_cache_stats(struct eng_count_cache *c, uint64_t *hits, uint64_t *misses,
                           size_t *bytes);

/* --- segbuild.c: the builder; segment.c: lookups ----------------------- */

struct eng_builder;

/* The article columns a segment is built from (the author's meta terms made by the builder). */
struct eng_row {
    int64_t id, seq; /* the id holds published_at (store_id_time) */
    const char *title, *description, *content, *language, *meta_terms, *author;
    uint32_t src;
    uint64_t url_hash; /* hash_bytes64 (util/hash.h) of the canonical URL: on disk */
    const char *json;  /* the article as the API writes it (article/json.h) */
    size_t json_len;
};

int eng_builder_new(struct eng_builder **out);
void eng_builder_free(struct eng_builder *b);
/* Terms of min_df documents or more get a tier (tiers.h; ENG_TIER_MIN_DF
 * until this is called; 0: none). */
void eng_builder_tiers(struct eng_builder *b, uint32_t min_df);
/* The residuals it keeps: eng_resid_kept with min_df (ENG_RESID_MIN_DF). */
void eng_builder_resid(struct eng_builder *b, uint32_t min_df);
/* Tokenize one article into the builder (docs may come in any order). */
int eng_builder_add(struct eng_builder *b, const struct eng_row *r);
size_t eng_builder_count(const struct eng_builder *b);
/* The document dictionary of a segment of the same table, for the next
 * segment this builder finishes when it is small (eng_docs_build): a
 * poll's segment of a thousand articles spent more time training its own
 * (50 ms, a sixth of the poll) than its documents' compression took.
 * Borrowed, not copied: dict stays valid until eng_builder_finish, which
 * copies it into the segment and forgets it. */
void eng_builder_docs_dict(struct eng_builder *b, const uint8_t *dict, size_t len);
/* Sort the documents newest first and encode the postings. The builder is
 * emptied. */
int eng_builder_finish(struct eng_builder *b, struct eng_segment **out);

/* The term t[0..len) into *out; false when s has none. */
bool eng_segment_term(const struct eng_segment *s, const char *t, size_t len, struct eng_term *out);
/* First docid whose id <= hi (ids descending); n when none. */
uint32_t eng_segment_first_le(const struct eng_segment *s, int64_t hi);
/* docid of id, or ENG_END. */
uint32_t eng_segment_find(const struct eng_segment *s, int64_t id);
/* Index in pk_hash of the first hash >= hash (n when none). */
uint32_t eng_segment_pk_first(const struct eng_segment *s, uint64_t hash);
/* s's URL table from each new docid's canonical-URL hash (url[i] of the
 * document newdoc[i]). 0 or ERR_NOMEM. */
int eng_segment_pk_build(struct eng_segment *s, size_t n, const uint64_t *url,
                         const uint32_t *newdoc);

/* --- segfile.c: segment files --------------------------------------------- */

/* The format version segment files are written in and the only one read. */
uint32_t eng_segment_version(void);

/* Write s to path: path.tmp, fsync, rename (the caller fsyncs the
 * directory). */
int eng_segment_write(const struct eng_segment *s, const char *path, struct err *err);
/* The segment file at path, mapped read-only. Only the header is checked
 * (magic, version, layout, sizes against the file's length): the rest is
 * checked where it is first read (eng_segment_check_columns at open,
 * eng_segment_term_open, each document's zstd checksum), the whole file's CRC and
 * every structure by eng_segment_check (`newsd index verify`). */
int eng_segment_map(const char *path, uint64_t file_id, struct eng_segment **out, struct err *err);
/* A segment over a file image in memory that the caller keeps alive
 * (header checks as eng_segment_map). */
int eng_segment_from_image(const uint8_t *p, size_t len, struct eng_segment **out, struct err *err);
/* The file image of s, malloc()ed (fuzzing, tests). */
int eng_segment_image(const struct eng_segment *s, uint8_t **out, size_t *len);
/* Recompute an image's checksum after changing it (fuzzing, tests). */
void eng_segment_seal(uint8_t *p, size_t len);
/* Term str of s into *out, ready for a cursor: 1, or 0 when s has none. A
 * file's term has its postings checked whole the first time it is opened
 * (check_term, as eng_segment_check), so that the decoders need no check
 * in their loops. ERR_PARSE when s is damaged (eng_segment_damage). */
int eng_segment_term_open(const struct eng_segment *s, const char *str, size_t len,
                          struct eng_term *out);
/* Term t (of s's dictionary) checked as eng_segment_term_open does, for a
 * caller that walks the dictionary (the merge). 0 or ERR_PARSE. */
int eng_segment_term_ready(const struct eng_segment *s, const struct eng_term *t);
/* t's docids, a block at a time, to fn, each block checked as it is read
 * (the list inside the segment's postings, each block's width and bytes,
 * the docids ascending and below n): what a facet column reads of a meta
 * term, without the rest of check_term (the skip table, the blocks'
 * maxima: a cursor's business, so t stays unchecked for cursors). 0, or
 * ERR_PARSE with s marked damaged (eng_segment_damage). */
int eng_segment_term_docids(const struct eng_segment *s, const struct eng_term *t,
                            void (*fn)(void *ctx, const uint32_t *ids, uint32_t n), void *ctx);
/* t's postings (post[off, off + bytes)) decodable inside them with docids
 * < n and the skip table's entries exact: segcheck.c's check of a term,
 * the first time it is opened and in eng_segment_check. 0 or ERR_PARSE
 * (err says what). */
int eng_segment_check_term(const struct eng_segment *s, const struct eng_term *t, struct err *err);
/* The columns a search reads by docid, checked (O(n), at open): ids
 * descending, source ids < nsrc, the URL table, the document offsets, the
 * row sizes' total. */
int eng_segment_check_columns(const struct eng_segment *s, uint32_t nsrc, struct err *err);
/* The ids part still has the CRC it was written with (always true for a
 * segment built here): a damaged segment is rebuilt from the rows they
 * name, else the whole index from the table. */
bool eng_segment_ids_intact(const struct eng_segment *s);
/* Everything a search reads, checked: CRC of the image, ids descending,
 * dictionary sorted and in bounds, every postings list decodable inside
 * its bytes with docids < n, source ids < nsrc, pk sorted. A segment that
 * passes cannot make a search read outside it. */
int eng_segment_check(const struct eng_segment *s, uint32_t nsrc, struct err *err);
/* eng_segment_check on every segment of s; the sound ones' live ids into *docs (malloc'd),
 * a damaged one's count added to *bad and its damage into an empty detail. 0 or ERR_NOMEM. */
int eng_snap_check_live(const struct eng_snap *s, int64_t **docs, size_t *n, uint64_t *bad,
                        char *detail, size_t detail_size);

/* Add s's bytes, part by part, to r (`newsd index sizes`). Reads every
 * postings list: seconds at a million documents. */
void eng_segment_sizes(const struct eng_segment *s, struct index_size_report *r);

/* --- manifest.c: the index directory's table of contents ------------------ */

struct eng_manifest_seg {
    uint64_t file_id;
    uint32_t n;    /* documents (checked against the file) */
    uint32_t ndel; /* deleted docids, ascending */
    uint32_t *del;
};

struct eng_manifest {
    char epoch[64];      /* the articles table's epoch (meta 'articles_epoch') */
    int64_t applied_seq; /* rows with seq <= applied are in the segments */
    int64_t covered;     /* the log's head when they were read */
    uint64_t next_file;  /* the next segment file id */
    uint32_t nsrc;
    char **srcs; /* interned source ids, in intern order */
    uint32_t nseg;
    struct eng_manifest_seg *segs;
};

#define ENG_MANIFEST_NAME "MANIFEST"
/* Parse a manifest image (CRC and every length checked). */
int eng_manifest_parse(const uint8_t *p, size_t len, struct eng_manifest *m, struct err *err);
/* Recompute a manifest image's checksum after changing it (fuzzing). */
void eng_manifest_seal(uint8_t *p, size_t len);
/* The image of m, malloc()ed. */
int eng_manifest_image(const struct eng_manifest *m, uint8_t **out, size_t *len);
/* Read <dir>/MANIFEST; ERR_NOTFOUND when there is none. */
int eng_manifest_read(const char *dir, struct eng_manifest *m, struct err *err);
/* Replace <dir>/MANIFEST atomically: MANIFEST.tmp, fsync, rename, fsync
 * of the directory. */
int eng_manifest_write(const char *dir, const struct eng_manifest *m, struct err *err);
void eng_manifest_clear(struct eng_manifest *m);
/* Bytes to a file: path.tmp, fsync, rename (shared by both file kinds). */
int eng_file_replace(const char *path, const uint8_t *p, size_t len, struct err *err);
int eng_dir_sync(const char *dir, struct err *err);

/* --- postings.c ----------------------------------------------------------- */

/* Field f's tf of a posting whose field mask is mask (f in it), appended to a posting's data at
 * p: the mask goes with the lowest field's tf. tf < 2^29 (a field holds fewer tokens than
 * SQLite's longest value has bytes / 2). Returns the bytes written (at most 5). */
static inline size_t eng_posting_tf_put(uint8_t *p, unsigned mask, unsigned f, uint32_t tf)
{
    if (f == (unsigned)__builtin_ctz(mask))
        return eng_varint_put(p, (tf - 1) << 3 | mask);
    return eng_varint_put(p, tf - 1);
}
/* A posting's first varint: its field mask and its lowest field's tf. */
static inline const uint8_t *eng_posting_head(const uint8_t *p, unsigned *mask, uint32_t *tf)
{
    uint32_t v;
    p = eng_varint_get1(p, &v);
    *mask = v & 7;
    *tf = (v >> 3) + 1;
    return p;
}
/* Field f's tf after the head (f not the lowest field of the mask). */
static inline const uint8_t *eng_posting_tf_next(const uint8_t *p, uint32_t *tf)
{
    p = eng_varint_get1(p, tf);
    *tf += 1;
    return p;
}

/* Bytes of the largest docid block. */
#define ENG_BLOCK_MAX_BYTES (1 + ENG_BLOCK * 4)
/* A block of n <= ENG_BLOCK docid gaps (each minus one) is eng_pack's run
 * of them (varint.h): the width of the largest, then the gaps packed. */
/* The n docids of the block at p (its width byte first, w <= 32, the
 * block's bytes in bounds) after docid prev (UINT32_MAX: none) into ids. */
void eng_block_decode(const uint8_t *p, uint32_t n, uint32_t prev, uint32_t *ids);

/* A per-document array (a length, a new docid) read at each posting of a
 * decoded block ids[0, nin): its entry ENG_AHEAD postings past k asked of
 * memory now, and at k == 0 the block's first ENG_AHEAD too. Read one at a
 * time at each posting, such loads were a cache miss each for any list
 * sparser than one document in 16 (perf annotate of a 1 M merge: 85 % of
 * merge_build's samples, 78 % of the encoder's, 92 % of the check's). */
#define ENG_AHEAD 16
/* always_inline: GCC 12 at -O2 finds a function whose only effect is a
 * loop of prefetches pure and drops its calls (seen: no prefetcht0 left in
 * merge.o; the 1 M merge 40 s instead of 26). */
static inline __attribute__((always_inline)) void
eng_prefetch_ahead(const uint32_t *a, const uint32_t *ids, uint32_t k, uint32_t nin)
{
    /* (the address as an integer: a damaged block's docid ahead, not yet
     * checked, may lie past the array; a prefetch of any address is
     * harmless, a pointer past the array is not) */
    uint32_t end = k + ENG_AHEAD < nin ? k + ENG_AHEAD + 1 : nin;
    for (uint32_t j = k ? k + ENG_AHEAD : 0; j < end; j++)
        __builtin_prefetch((const void *)((uintptr_t)a + (uintptr_t)ids[j] * sizeof *a));
}

/* Reads one term's postings. */
struct eng_cursor {
    const struct eng_term *t;
    const struct eng_skip *skip;
    const uint8_t *docs, *data;
    uint32_t blk;      /* current block, nblocks when exhausted */
    uint32_t nin;      /* docs in the current block, all decoded into ids */
    uint32_t i;        /* index in the block */
    uint32_t doc;      /* current docid, ENG_END */
    const uint8_t *hp; /* the block's heads, decoded into h on its first data read */
    bool decoded;
    uint32_t di;       /* exact terms: pp is at posting di's positions */
    const uint8_t *pp;
    struct eng_skip one; /* the skip entry of a one-block list (skip points here) */
    uint32_t ids[ENG_BLOCK];
    struct eng_heads h;
};

void eng_cursor_init(struct eng_cursor *c, const struct eng_segment *s, const struct eng_term *t);
/* Move to the first posting with docid >= target; its docid or ENG_END. */
uint32_t eng_cursor_seek(struct eng_cursor *c, uint32_t target);
/* Field data of the current posting: mask, tf per field and, for exact
 * terms when pos != NULL, positions per field (pos[f] gets tf[f] entries,
 * caller-sized by ENG_POS_MAX; extra positions dropped, *capped set). */
#define ENG_POS_MAX 4096
void eng_cursor_data(struct eng_cursor *c, unsigned *mask, uint32_t tf[ENG_FIELDS],
                     uint32_t (*pos)[ENG_POS_MAX]);
/* Postings with docid in [lo, hi): skip table for whole blocks. */
uint32_t eng_cursor_count_range(struct eng_cursor *c, uint32_t lo, uint32_t hi);
/* Sets the bit (docid - base) in bits of every posting of t with docid in
 * [lo, hi) (base <= lo, a multiple of 64): the set evaluator's term
 * (search.c), one sequential decode with no cursor. Returns how many. _in:
 * only the postings in a field of cols (a column-restricted term), heads read. */
uint32_t eng_postings_fill(const struct eng_segment *s, const struct eng_term *t, uint32_t lo,
                           uint32_t hi, uint64_t *bits, uint32_t base);
uint32_t eng_postings_fill_in(const struct eng_segment *s, const struct eng_term *t, unsigned cols,
                              uint32_t lo, uint32_t hi, uint64_t *bits, uint32_t base);
/* The skip entry of the cursor's current block. */
static inline const struct eng_skip *eng_cursor_block(const struct eng_cursor *c)
{
    return &c->skip[c->blk];
}

/* A posting being built: one array, so that appending one is one write. */
struct eng_bpost {
    uint32_t doc; /* builder-local doc number */
    uint32_t off; /* its data's offset in the term's data */
};

/* The encoder. A term's postings as the builder (segbuild.c) collects them
 * and the merge (eng_segw) hands them over: docs in any order, each
 * posting's data as eng_posting_tf_put and eng_varint_put write it. */
struct eng_bterm {
    char *s;
    uint32_t len;
    uint8_t kind;
    /* An exact term's stem, made once per language (segbuild.c): stem1 is the
     * "~stem" term + 1 (0: none) in the builder's language stem_lang (0: not made). */
    uint8_t stem_lang;
    uint32_t stem1;
    uint32_t n, cap; /* postings */
    /* An exact term's residual (resid.h), begun at its first occurrence with
     * a stem beside it: that term + 1 (0: none yet), and its postings before
     * (each without). A residual's resid1: ENG_RESID_NONE when left out. */
    uint32_t resid1, resid_from;
    struct eng_bpost *pst; /* insertion order */
    uint8_t *data;
    uint32_t dlen, dcap;
};

/* A growing byte buffer of the encoder's output. */
struct eng_obuf {
    uint8_t *p;
    size_t n, cap;
};
int eng_obuf_put(struct eng_obuf *o, const void *p, size_t n);

/* The streams eng_postings_encode writes one term's postings into, reused from
 * term to term. */
struct eng_enc_bufs {
    struct eng_obuf docs, data;
    struct eng_heads h;         /* the block's heads, encoded at its end */
    struct eng_obuf pos;        /* an exact term's block: its positions, after the heads */
    struct eng_skip *skip;      /* the term's skip table */
    size_t skipcap;
    /* Tiers (tiers.h): a term of tier_min_df documents or more (0: none
     * tiered) gets one, chosen at the segment's average length avgdl from
     * its postings' wf2, kept in docid order while they are encoded (their
     * docids are the sorted keys'). */
    uint32_t tier_min_df;
    double avgdl;
    uint32_t *tier_wf2;
    size_t tier_wf2_cap;
};
void eng_enc_bufs_free(struct eng_enc_bufs *e);

/* Encode term t (postings remapped by newdoc, NULL: already in their final
 * docids; dl by new docid; keys: room for t->n) into post, where dict's
 * next term's postings begin; its entry into out (for eng_tdict_add, its
 * string next in dict's strings). */
int eng_postings_encode(struct eng_obuf *post, struct eng_enc_bufs *e, const struct eng_bterm *t,
                        const uint32_t *newdoc, const uint32_t *dl, uint64_t *keys,
                        const struct eng_tdict_w *dict, struct eng_term *out);
/* Room for need elements of size bytes in *p (*cap of them now), doubling
 * (util/array.h's array_reserve): 0 or ERR_NOMEM (*p unchanged). */
int eng_grow(void **p, size_t *cap, size_t need, size_t size);

/* --- the writer (writer.h): loading and following the log --------------- */

struct eng_writer;
struct eng_writer_config {
    const char *db_path;                    /* the log's file */
    const struct index_engine_options *opt; /* files, segment size, checkpoints */
    struct eng_slot *slot;                  /* where snapshots are published */
    struct eng_count_cache *count_cache;    /* the snapshots' count cache; NULL none */
    const atomic_bool *stopping; /* set when the engine is being freed: a long read ends */
};
/* Open the writer's reader, map the index directory's files or read every
 * article, and publish. On failure nothing is left open. */
int eng_writer_open(struct eng_writer **out, const struct eng_writer_config *cfg, struct err *err);
/* Apply new / deleted rows once and publish them; 0 or an ERR_*. The
 * caller makes the checkpoint (eng_checkpoint_maybe) once it has told the
 * searches waiting for these rows (read-your-writes) that they are in. */
int eng_writer_poll(struct eng_writer *w, struct err *err);
/* The log's head (store_reader_head) the last successful poll read in the
 * same snapshot as the rows it applied (read it on the writer's thread). */
int64_t eng_writer_covered(const struct eng_writer *w);
/* True until the first poll after an open from the files has compared the
 * row count (rows deleted while newsd was stopped); any thread. */
bool eng_writer_count_pending(const struct eng_writer *w);
/* Opened from the index directory's files, not rebuilt. */
bool eng_writer_loaded(const struct eng_writer *w);
/* The index directory, NULL when there is none (no_files, or none could
 * be had). */
const char *eng_writer_dir(const struct eng_writer *w);
/* Close; first write what is only in RAM when checkpoint (not after a
 * half-done open), so that the next start reads nothing again. NULL: no-op. */
void eng_writer_close(struct eng_writer *w, bool checkpoint);

/* --- search.c ------------------------------------------------------------- */

/* Whether a search may give part of its segments to a second thread. */
enum eng_split {
    ENG_SPLIT_NEVER,  /* one thread: the server is busy, or NEWSD_ENGINE_SPLIT=0 */
    ENG_SPLIT_HEAVY,  /* two when the postings it would read pay for the thread */
    ENG_SPLIT_ALWAYS, /* two whenever there are segments for both (tests, fuzzing) */
};

/* Where a document is in the snapshot a search ran on. */
struct eng_doc_ref {
    uint32_t seg; /* index in eng_snap.segs */
    uint32_t doc; /* docid in that segment */
};

/* Count and page of ids (page order) for req over snapshot s, and (refs
 * not NULL) where each id's document is in s. The answer is the same
 * whatever split says. */
int eng_search_ids(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   enum eng_split split, uint64_t *total, int64_t **ids, struct eng_doc_ref **refs,
                   size_t *n, struct err *err);
/* eng_search_ids for a cursor page (index_request.walk) in a ranked
 * order: also each id's sort key into *keys (arena-owned) and, for
 * relevancy, the statistics it ranked with into *stats. ERR_TOO_LARGE:
 * more scored leaves than a cursor holds; ERR_INVALID: req->stats do not
 * fit the query (err set for both). */
int eng_search_walk(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                    enum eng_split split, uint64_t *total, int64_t **ids, struct eng_doc_ref **refs,
                    double **keys, struct index_rank_stats *stats, size_t *n, struct err *err);
/* A search's matches handed over one by one (counts.c, facets.c): doc
 * for every live match of segment si (index in the snapshot), in
 * ascending docid order within a segment. term, when not NULL, is called
 * instead for a plan that is one unfiltered term over a segment without
 * deletions: its matches are t's postings in the docid window [lo, hi),
 * which the caller counts from the skip table. */
struct eng_visit {
    void (*doc)(void *ctx, uint32_t si, uint32_t doc);
    void (*term)(void *ctx, uint32_t si, const struct eng_term *t, uint32_t lo, uint32_t hi);
    /* set, when not NULL, is called instead of doc for a segment the set
     * evaluator ran (sets.c), and the evaluator runs for any plan where it
     * pays: the live matches as bits, bit i docid base + i (nw words). */
    void (*set)(void *ctx, uint32_t si, uint32_t base, uint32_t nw, const uint64_t *v);
    void *ctx;
};
/* eng_search_ids's matches of req (its page ignored) handed to v, on this
 * thread; *total: how many. */
int eng_search_visit(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                     const struct eng_visit *v, uint64_t *total, struct err *err);
/* Searches eng_search_ids ran over two threads in this process, so far. */
uint64_t eng_split_searches(void);

/* --- page.c --------------------------------------------------------------- */

/* The page of ids[0..n) (ids of s's live documents) from the segments'
 * document stores into docs (same order; *kept = documents found); refs
 * (from eng_search_ids, or NULL: looked up by id) says where each is. */
int eng_page_docs(const struct eng_snap *s, struct arena *a, const int64_t *ids,
                  const struct eng_doc_ref *refs, size_t n, struct index_doc *docs, size_t *kept,
                  struct err *err);
/* Each of docs[0..n)'s story (docs from eng_page_docs over s), from the
 * story columns. */
int eng_page_stories(const struct eng_snap *s, struct store_readers *readers,
                     const struct index_doc *docs, size_t n, int64_t *stories, struct err *err);

/* --- engine.c: the backend ------------------------------------------------ */

struct index_engine {
    struct index_backend base; /* first: the vtable */
    char *db_path;
    struct eng_slot slot; /* the current snapshot */
    struct eng_writer *w; /* the follower thread's alone */
    pthread_t thread;
    bool started;
    pthread_mutex_t stop_lock; /* guards stop, pub_seq and both conditions */
    pthread_cond_t stop_cond;  /* wakes the follower: stop, or a search wants news */
    pthread_cond_t pub_cond;   /* the follower published */
    bool stop;
    int64_t pub_seq;                     /* highest seq the current snapshot covers */
    struct store_readers *readers;       /* page rows, the head */
    int64_t opened_ms, built_ms;         /* open time and initial build time */
    bool loaded;                         /* opened from the index directory's files */
    bool background;                     /* opened by the follower thread (index_engine_start) */
    atomic_bool ready;                   /* opened: searches are answered */
    atomic_bool stopping;                /* engine_free began: a build in progress ends */
    struct eng_count_cache *count_cache; /* NULL with opt.no_count_cache */
    atomic_int searching;                /* searches running now (idle: a search may split) */
    atomic_uint warm_kinds; /* columns searches have asked for (warm.h's kinds), kept made */
    char *warm_dir;         /* the index directory, set before ready; NULL: none */
    struct index_engine_options opt;
};

#endif
