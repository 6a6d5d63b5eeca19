/* Facets (index_facets, index.h) over a snapshot: per segment, a column
 * per facet holding each docid's value as a small integer (facet_cols.c),
 * so that a match costs one array read and one increment per facet; the
 * segments' counts are then merged by value (index_facet_acc). */
#include "index/engine/internal.h"
#include "index/engine/columns.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "article/json_author.h"
#include "store/meta.h"
#include "util/ascii.h"
#include "util/strtab.h"
#include "util/banned.h"

#define NO_VALUE ENG_FACET_NO_VALUE

/* A segment's matches are gathered first, then each facet's column is read
 * at them with the reads issued ahead (prefetch): the matches of a common
 * word are scattered over the segment, and reading five columns per match
 * as it comes was a cache miss per column per match (8.7 ms for five
 * facets over 33,000 matches at 1 M documents). */
#define PREFETCH_AHEAD 16

struct facets_run {
    const struct eng_facet_col **col; /* [segment * INDEX_FACET_N + f]; NULL: not asked */
    uint64_t **cnt;                   /* the same, counts per value number */
    uint32_t si;                      /* the segment docs are of */
    uint32_t *docs;                   /* its matches so far, ascending */
    size_t n, cap;
    bool nomem;
};

static void facets_flush(struct facets_run *r)
{
    for (int f = 0; r->n > 0 && f < INDEX_FACET_N; f++) {
        size_t k = (size_t)r->si * INDEX_FACET_N + (size_t)f;
        if (r->col[k] == NULL)
            continue;
        const uint32_t *v = r->col[k]->v;
        uint64_t *cnt = r->cnt[k];
        for (size_t i = 0; i < r->n; i++) {
            if (i + PREFETCH_AHEAD < r->n)
                __builtin_prefetch(&v[r->docs[i + PREFETCH_AHEAD]]);
            uint32_t x = v[r->docs[i]];
            if (x != NO_VALUE)
                cnt[x]++;
        }
    }
    r->n = 0;
}

static void facet_doc(void *ctx, uint32_t si, uint32_t doc)
{
    struct facets_run *r = ctx;
    if (si != r->si) {
        facets_flush(r);
        r->si = si;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4096;
        uint32_t *grown = realloc(r->docs, cap * sizeof *grown);
        if (grown == NULL) {
            r->nomem = true;
            return;
        }
        r->docs = grown;
        r->cap = cap;
    }
    r->docs[r->n++] = doc;
}

/* Facet f's top size over the segments' counts. Each segment numbers its
 * values on its own, so a value's counts are summed under its number in one
 * table of strings, hashed once a (segment, value): summing by sorting every
 * segment's pairs by their bytes was two fifths of five facets over a
 * common word at 10 M articles in 15 segments (memcmp and qsort in the
 * profile). The segments' strings are lent: the snapshot holds them until
 * the top is copied out. */
static int facet_top(const struct eng_snap *s, const struct facets_run *r, struct arena *a, int f,
                     size_t size, struct index_facet_top *out)
{
    struct strtab seen;
    struct index_facet_acc acc = {0}; /* acc.v[i]: the value numbered i in seen */
    int rc = 0;

    strtab_init(&seen);
    for (size_t si = 0; rc == 0 && si < s->nseg; si++) {
        size_t k = si * INDEX_FACET_N + (size_t)f;
        const struct strtab *vals = &r->col[k]->vals;
        for (size_t i = 0; rc == 0 && i < vals->n; i++) {
            size_t num;
            int added;
            if (r->cnt[k][i] == 0)
                continue;
            const char *v = strtab_str(vals, i);
            size_t len = strtab_len(vals, i);
            if ((rc = strtab_add(&seen, v, len, &num, &added)) < 0)
                break;
            if (added)
                rc = index_facet_acc_add(&acc, a, v, len, r->cnt[k][i]);
            else
                acc.v[num].count += r->cnt[k][i];
        }
    }
    strtab_release(&seen);
    return rc < 0 ? rc : index_facet_acc_top(&acc, a, size, out);
}

int eng_facets_run(const struct eng_snap *s, struct arena *a, const struct index_request *req,
                   unsigned mask, size_t size, struct index_facet_top *out, struct err *err)
{
    struct facets_run r = {.si = 0};
    struct eng_visit v = {.doc = facet_doc, .term = NULL, .ctx = &r};
    size_t slots = s->nseg * INDEX_FACET_N;
    uint64_t total;
    int rc;

    r.col = arena_calloc(a, slots ? slots : 1, sizeof *r.col);
    r.cnt = arena_calloc(a, slots ? slots : 1, sizeof *r.cnt);
    if (r.col == NULL || r.cnt == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for facets");
    for (size_t si = 0; si < s->nseg; si++) {
        for (int f = 0; f < INDEX_FACET_N; f++) {
            size_t k = si * INDEX_FACET_N + (size_t)f;
            if (!(mask >> f & 1))
                continue;
            if ((rc = eng_facet_column(s->segs[si], (enum index_facet)f, &r.col[k])) < 0) {
                if (rc == ERR_PARSE)
                    eng_segment_damage(s->segs[si], "a facet column could not be read");
                return err_set(err, rc == ERR_NOMEM ? ERR_NOMEM : ERR_STORE,
                               "facet column of a segment: %s", err_name(rc));
            }
            size_t nv = r.col[k]->vals.n;
            if ((r.cnt[k] = arena_calloc(a, nv ? nv : 1, sizeof **r.cnt)) == NULL)
                return err_set(err, ERR_NOMEM, "out of memory for facets");
        }
    }
    rc = eng_search_visit(s, a, req, &v, &total, err);
    if (rc == 0)
        facets_flush(&r);
    free(r.docs);
    if (rc < 0)
        return rc;
    if (r.nomem)
        return err_set(err, ERR_NOMEM, "out of memory for facets");
    for (int f = 0; f < INDEX_FACET_N; f++) {
        if ((mask >> f & 1) && facet_top(s, &r, a, f, size, &out[f]) < 0)
            return err_set(err, ERR_NOMEM, "out of memory for facets");
    }
    return 0;
}
