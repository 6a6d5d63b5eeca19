/* index.h dispatcher: the backend that fits the store (index/backend.h). */
#include "index/index.h"
#include "index/backend.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

struct index {
    struct index_backend *be;
};

int index_open(struct index **out, struct store *s, struct err *err)
{
    struct index *idx = NULL;
    int rc;

    *out = NULL;
    if (strcmp(store_kind(s), "sqlite") != 0 || store_sqlite_path(s) == NULL) {
        rc = err_set(err, ERR_UNSUPPORTED, "no search index for a %s store in this build",
                     store_kind(s));
        goto out;
    }
    idx = calloc(1, sizeof *idx);
    if (idx == NULL) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = index_fts5_new(&idx->be, store_sqlite_path(s), err)) < 0)
        goto out;
    *out = idx;
    idx = NULL;
out:
    free(idx);
    return rc;
}

void index_close(struct index *idx)
{
    if (idx == NULL)
        return;
    idx->be->free(idx->be);
    free(idx);
}

int index_search(struct index *idx, struct arena *a, const struct index_request *req,
                 struct index_result *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    return idx->be->search(idx->be, a, req, out, err);
}

int index_newest_headline(struct index *idx, int64_t before, int64_t *out, struct err *err)
{
    return idx->be->newest_headline(idx->be, before, out, err);
}
