/* A segment's in-memory columns freed with it (columns.h). */
#include "index/engine/columns.h"
#include "index/engine/internal.h"

#include <stdlib.h>

#include "util/banned.h"

void eng_facet_col_free(struct eng_facet_col *c)
{
    if (c == NULL)
        return;
    free(c->v);
    strtab_release(&c->vals);
    for (uint32_t i = 0; i < atomic_load(&c->nset); i++)
        free(c->set[i]);
    free(c);
}

void eng_facet_cols_free(struct eng_segment *s)
{
    struct eng_facet_cols *f = atomic_load(&s->facets);
    if (f == NULL)
        return;
    for (int i = 0; i < INDEX_FACET_N; i++)
        eng_facet_col_free(atomic_load(&f->col[i]));
    struct eng_source_docs *sd = atomic_load(&f->by_source);
    if (sd) {
        free(sd->off);
        free(sd->docs);
        free(sd);
    }
    free(atomic_load(&f->norm));
    free(f);
}

void eng_story_col_free(struct eng_segment *s)
{
    struct eng_story_alone *al = atomic_load(&s->alone);
    if (al) {
        free((void *)al->bits);
        free(al->slot);
        free(al->paired);
        free(al);
    }
    free(atomic_load(&s->story));
}
