/* A merge's state (merge.c), shared with mergeterms.c, which merges its
 * inputs' terms. Private to the engine's writer. */
#ifndef NEWSD_INDEX_ENGINE_MERGE_H
#define NEWSD_INDEX_ENGINE_MERGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "index/engine/internal.h"
#include "index/engine/segw.h"

#define MAP_LOADED UINT32_MAX /* an input's docids renumbered through its map */

struct eng_merge {
    pthread_t thread;
    size_t k;
    struct eng_segment **in;          /* references */
    struct eng_deletions **deletions; /* references: deletions when the merge began */
    uint32_t **map;                   /* per input: old docid -> new docid, ENG_END dropped */
    uint32_t *shift;                  /* per input: map[d] == d + shift, else MAP_LOADED */
    uint64_t *from;                   /* per new docid: its input << 32 | its docid there */
    uint32_t nfrom;
    struct eng_segment *out;
    uint32_t tier_min_df;  /* the writer's (tiers.h) */
    uint32_t resid_min_df; /* ENG_RESID_MIN_DF but in tests (resid.h) */
    uint64_t file_id;      /* 0: not written (no index directory) */
    char path[4096];
    int rc;
    struct err err;
    uint32_t docs; /* documents of the output */
    int64_t ms;    /* the merge's time */
    atomic_bool done;
    atomic_bool cancel;
    const atomic_bool *stopping;
};

static inline bool eng_merge_stopped(const struct eng_merge *m)
{
    return atomic_load(&m->cancel) || (m->stopping && atomic_load(m->stopping));
}

/* Every term of m's inputs in byte order into w, each merged once, a word's
 * residual right after it (mergeterms.c). 0, ERR_NOMEM, ERR_PARSE (an input
 * marked damaged), ERR_UNSUPPORTED (positions past ENG_POS_MAX), ERR_BUSY
 * (stopped). */
int eng_merge_terms(struct eng_merge *m, struct eng_segw *w);

#endif
