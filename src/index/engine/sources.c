/* Source-id interning and popularity (index/engine/writer.h): a segment
 * names a document's source by a small number, the snapshot's popularity
 * table is indexed by it, and the manifest lists the ids in intern order. */
#include "index/engine/writer.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

int eng_src_intern(struct eng_writer *w, const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    int64_t known = strtab_find(&w->src_ids, s, n);
    if (known >= 0) {
        *out = (uint32_t)known;
        return 0;
    }
    if (w->nsrc == w->srccap) {
        size_t cap = w->srccap ? w->srccap * 2 : 256;
        char **v = realloc(w->srcs, cap * sizeof *v);
        double *p = v ? realloc(w->pop, cap * sizeof *p) : NULL;
        if (v)
            w->srcs = v;
        if (p == NULL)
            return ERR_NOMEM;
        w->pop = p;
        w->srccap = cap;
    }
    /* The table numbers strings in the order they come: this one is nsrc. */
    char *copy = strdup(s);
    size_t k;
    int added;
    if (copy == NULL || strtab_add(&w->src_ids, s, n, &k, &added) < 0) {
        free(copy);
        return ERR_NOMEM;
    }
    w->srcs[w->nsrc] = copy;
    w->pop[w->nsrc] = -1.0; /* not in the catalogue: below every source (fts5.c) */
    *out = (uint32_t)w->nsrc++;
    return 0;
}

static int source_seen(void *ctx, const char *id, double popularity)
{
    struct eng_writer *w = ctx;
    uint32_t k;
    int rc = eng_src_intern(w, id, &k);
    if (rc == 0)
        w->pop[k] = popularity;
    return rc;
}

/* Popularity of every catalogue source (coalesce(popularity, -1) of fts5.c). */
int eng_sources_load(struct eng_writer *w, struct err *err)
{
    for (size_t i = 0; i < w->nsrc; i++)
        w->pop[i] = -1.0;
    int rc = store_reader_sources(w->db, source_seen, w, err);
    if (rc == ERR_NOMEM)
        return err_set(err, rc, "out of memory");
    return rc;
}
