/* index.h dispatcher: the backend that fits the store (index/backend.h).
 * The embedded store is searched in its own file; a PostgreSQL store
 * through a node-local replica that a follower keeps in step
 * (index/follow/), searched by the same FTS5 backend. */
#include "index/index.h"
#include "index/backend.h"
#include "index/follow/follow.h"
#include "store/pg/pg.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

struct index {
    struct index_backend *be;
    struct index_follow *follow; /* PostgreSQL store: the replica's follower */
};

/* The FTS5 index over a replica of the PostgreSQL store, and its follower. */
static int index_open_replica(struct index *idx, const char *uri, const char *dir, struct err *err)
{
    int rc;
    if ((rc = index_follow_new(&idx->follow, uri, dir ? dir : INDEX_LOCAL_DIR_DEFAULT, err)) < 0)
        return rc;
    if ((rc = index_fts5_new(&idx->be, index_follow_db_path(idx->follow), err)) < 0)
        return rc;
    return index_follow_start(idx->follow, err);
}

int index_open(struct index **out, struct store *s, struct err *err)
{
    return index_open_local(out, s, NULL, err);
}

int index_open_local(struct index **out, struct store *s, const char *local_dir, struct err *err)
{
    struct index *idx = NULL;
    int rc;

    *out = NULL;
    if (store_pg_conninfo(s) != NULL) {
        idx = calloc(1, sizeof *idx);
        if (idx == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = index_open_replica(idx, store_pg_conninfo(s), local_dir, err)) < 0)
            goto out;
        *out = idx;
        idx = NULL;
        goto out;
    }
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
    index_close(idx);
    return rc;
}

void index_close(struct index *idx)
{
    if (idx == NULL)
        return;
    /* The follower stops before the file's readers go. */
    index_follow_free(idx->follow);
    if (idx->be)
        idx->be->free(idx->be);
    free(idx);
}

void index_replica_status(struct index *idx, struct index_replica_status *out)
{
    memset(out, 0, sizeof *out);
    if (idx->follow)
        index_follow_status(idx->follow, out);
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
