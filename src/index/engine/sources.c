/* Source-id interning and popularity (index/engine/writer.h): a segment
 * names a document's source by a small number, the snapshot's popularity
 * table is indexed by it, and the manifest lists the ids in intern order. */
#include "index/engine/writer.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#include "util/banned.h"

int eng_src_intern(struct eng_writer *w, const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    if ((w->nsrc + 1) * 2 > w->shcap) {
        size_t cap = w->shcap ? w->shcap * 2 : 256;
        uint32_t *h = calloc(cap, sizeof *h);
        if (h == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < w->nsrc; i++) {
            size_t j = hash_bytes64(w->srcs[i], strlen(w->srcs[i])) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(w->shash);
        w->shash = h;
        w->shcap = cap;
    }
    size_t j = hash_bytes64(s, n) & (w->shcap - 1);
    while (w->shash[j]) {
        if (strcmp(w->srcs[w->shash[j] - 1], s) == 0) {
            *out = w->shash[j] - 1;
            return 0;
        }
        j = (j + 1) & (w->shcap - 1);
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
    if ((w->srcs[w->nsrc] = strdup(s)) == NULL)
        return ERR_NOMEM;
    w->pop[w->nsrc] = -1.0; /* not in the catalogue: below every source (fts5.c) */
    w->shash[j] = (uint32_t)w->nsrc + 1;
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
