/* A segment's term dictionary (tdict.c; segment file format 9): its terms
 * in byte order, ENG_TDICT_BLOCK to a block, each entry a few varints.
 *
 * Entry of a term: its string's length, its kind byte, df, the bytes of its
 * docid stream and of its whole postings; for a list of one block (most
 * terms: 1.42 of 1.51 million at 1 M articles) its block maxima (wf2_max,
 * dl_min) too, which are then its whole skip table and not in the
 * postings. Where a term's string and postings begin is not stored: the
 * strings are back to back in the order of the terms, and so are the
 * postings, a list of several blocks 4-byte aligned (its skip table is
 * read in place). Each block's first term has its string's and postings'
 * places in the block index (struct eng_tblock), which a lookup searches;
 * a lookup then reads at most ENG_TDICT_BLOCK entries of one block.
 *
 * The fixed 24-byte entries of format 8, plus the 8-byte skip table and
 * the alignment of every one-block list, were about 43 bytes a term before
 * its first posting (65 MB at 1 M articles: docs/performance.md, "Index
 * size at 1 M"); these entries take about 8, and the index proper at 1 M
 * is 38 MB (8.6 %) smaller.
 *
 * Every read is checked against the segment's bounds (a file's bytes are
 * hostile): an entry that runs out of its block, a string or postings past
 * their parts mark the segment damaged (eng_segment_damage), and the term
 * is not found. */
#ifndef NEWSD_INDEX_ENGINE_TDICT_H
#define NEWSD_INDEX_ENGINE_TDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eng_segment;
struct eng_term;

#define ENG_TDICT_BLOCK 16

/* Where block b of the dictionary begins. A lookup's binary search reads
 * one of these and the first term's string: two cache misses a probe. */
struct eng_tblock {
    uint64_t post_len; /* where its first term's postings begin (before any
                        * alignment) << 24 | the length of its first term */
    uint32_t str;      /* its first term's string, in the segment's strs */
    uint32_t at;       /* its entries, in the segment's tdict */
};
#define ENG_TDICT_POST_MAX ((uint64_t)1 << 40) /* postings of a segment: < 1 TiB */
static inline uint64_t eng_tblock_post(const struct eng_tblock *b)
{
    return b->post_len >> 24;
}

static inline size_t eng_tdict_blocks(size_t nterms)
{
    return (nterms + ENG_TDICT_BLOCK - 1) / ENG_TDICT_BLOCK;
}

/* --- writing: the terms in byte order, their postings and strings
 * appended in the same order ----------------------------------------- */

/* A zeroed writer is an empty one. */
struct eng_tdict_w {
    struct eng_tblock *idx;
    size_t icap;
    uint8_t *p;
    size_t n, cap; /* entry bytes */
    size_t nterms;
    uint64_t post; /* where the next term's postings begin (before alignment) */
    uint32_t str;  /* where the next term's string begins */
};

/* Where a term's postings begin after the last term's, which end at
 * post: 4-byte aligned for a list of several blocks (its skip table is
 * read in place). */
static inline uint64_t eng_tdict_off(uint64_t post, bool several_blocks)
{
    return several_blocks ? (post + 3) & ~(uint64_t)3 : post;
}

/* Append term t (its string next in the strings, its postings at
 * eng_tdict_off of the last term's end). ERR_NOMEM; ERR_INVALID when t is not where the next
 * term must be; ERR_TOO_LARGE past 4 GiB of entries or ENG_TDICT_POST_MAX
 * of postings. */
int eng_tdict_add(struct eng_tdict_w *w, const struct eng_term *t);

/* Hand w's dictionary to s (its tidx, tdict, tdict_len and nterms; s frees
 * them), w emptied. */
void eng_tdict_give(struct eng_tdict_w *w, struct eng_segment *s);

void eng_tdict_w_free(struct eng_tdict_w *w);

/* A segment over w's dictionary so far, strs[0, strs_len) and postings of
 * post_len bytes, for lookups while it is being written (no term cache,
 * nothing to free). */
void eng_tdict_view(const struct eng_tdict_w *w, const char *strs, size_t strs_len,
                    uint64_t post_len, struct eng_segment *view);

/* --- reading --------------------------------------------------------- */

/* Index of the first term >= t[0..len), that term into *out (nterms when
 * none, or when the dictionary is damaged: the segment is marked). */
size_t eng_tdict_lower(const struct eng_segment *s, const char *t, size_t len,
                       struct eng_term *out);

/* Index of term t[0..len), that term into *out; nterms when s has none. */
size_t eng_tdict_find(const struct eng_segment *s, const char *t, size_t len, struct eng_term *out);

/* Whether term t's string is str[0..len). */
bool eng_tdict_is(const struct eng_segment *s, const struct eng_term *t, const char *str,
                  size_t len);

/* Term i (< nterms) into *out; false when damaged (the segment is marked). */
bool eng_tdict_at(const struct eng_segment *s, size_t i, struct eng_term *out);

/* The terms from one on, in order. */
struct eng_term_iter {
    const struct eng_segment *s;
    size_t i;               /* the current term's index (nterms: spent) */
    const uint8_t *p, *end; /* the rest of the current block's entries */
    uint64_t post;          /* where the next term's postings begin */
    uint32_t str;           /* where the next term's string begins */
    size_t entry_bytes;     /* the current term's entry (`newsd index sizes`) */
    struct eng_term *t;     /* the current term: the caller's */
};

/* Start it at term i into *t; false when there is none (i >= nterms) or
 * the dictionary is damaged there (the segment is marked). */
bool eng_term_iter_at(struct eng_term_iter *it, const struct eng_segment *s, size_t i,
                      struct eng_term *t);
/* The next term into it->t; false when spent or damaged (the segment is
 * marked; eng_segment_damaged tells which). */
bool eng_term_iter_next(struct eng_term_iter *it);

/* The whole dictionary checked (eng_segment_check): the block index
 * where its entries say, every entry inside its block, the strings inside
 * strs, ascending and non-empty, every term's postings inside post. NULL or
 * what is wrong. */
const char *eng_tdict_check(const struct eng_segment *s);

#endif
