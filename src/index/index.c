/* index.h dispatcher: the backend that fits the store (index/backend.h).
 * The embedded store is searched in its own file; a PostgreSQL store
 * through a node-local replica that a follower keeps in step
 * (index/follow/), searched by the same backend: the purpose-built engine
 * unless "fts5" is asked for (index_open_kind, $NEWSD_INDEX). */
#include "index/index.h"
#include "index/backend.h"
#include "index/follow/follow.h"
#include "store/pg/pg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/banned.h"

struct index {
    struct index_backend *be;
    struct index_follow *follow; /* PostgreSQL store: the replica's follower */
};

/* The backend of `kind` over the SQLite file at db_path; the engine opened
 * by its own thread when background. */
static int backend_new(struct index_backend **out, bool engine, bool background,
                       const char *db_path, const char *dir, struct err *err)
{
    if (engine && background)
        return index_engine_start(out, db_path, err);
    if (engine)
        return index_engine_new(out, db_path, dir, err);
    return index_fts5_new(out, db_path, err);
}

/* The index over a replica of the PostgreSQL store, and its follower. */
static int index_open_replica(struct index *idx, bool engine, bool background, const char *uri,
                              const char *dir, struct err *err)
{
    int rc;
    if ((rc = index_follow_new(&idx->follow, uri, dir ? dir : INDEX_LOCAL_DIR_DEFAULT, err)) < 0)
        return rc;
    if ((rc = backend_new(&idx->be, engine, background, index_follow_db_path(idx->follow),
                          dir ? dir : INDEX_LOCAL_DIR_DEFAULT, err)) < 0)
        return rc;
    return index_follow_start(idx->follow, err);
}

int index_open(struct index **out, struct store *s, struct err *err)
{
    return index_open_local(out, s, NULL, err);
}

int index_open_local(struct index **out, struct store *s, const char *local_dir, struct err *err)
{
    return index_open_kind(out, s, local_dir, NULL, err);
}

const char *index_kind_resolve(const char *kind)
{
    if (kind == NULL || kind[0] == '\0')
        kind = getenv(INDEX_KIND_ENV);
    if (kind == NULL || kind[0] == '\0')
        kind = INDEX_KIND_DEFAULT;
    return kind;
}

const char *index_kind(const struct index *idx)
{
    return idx->be->kind;
}

static int open_with(struct index **out, struct store *s, const char *local_dir, const char *kind,
                     bool background, struct err *err)
{
    struct index *idx = NULL;
    bool engine;
    int rc;

    *out = NULL;
    kind = index_kind_resolve(kind);
    if (strcmp(kind, INDEX_KIND_ENGINE) == 0)
        engine = true;
    else if (strcmp(kind, INDEX_KIND_FTS5) == 0)
        engine = false;
    else
        return err_set(err, ERR_INVALID, "unknown search index \"%s\" (fts5 or engine)", kind);
    if (store_pg_conninfo(s) != NULL) {
        idx = calloc(1, sizeof *idx);
        if (idx == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = index_open_replica(idx, engine, background, store_pg_conninfo(s), local_dir,
                                     err)) < 0)
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
    if ((rc = backend_new(&idx->be, engine, background, store_sqlite_path(s), NULL, err)) < 0)
        goto out;
    *out = idx;
    idx = NULL;
out:
    index_close(idx);
    return rc;
}

int index_open_kind(struct index **out, struct store *s, const char *local_dir, const char *kind,
                    struct err *err)
{
    return open_with(out, s, local_dir, kind, false, err);
}

int index_open_background(struct index **out, struct store *s, const char *local_dir,
                          const char *kind, struct err *err)
{
    return open_with(out, s, local_dir, kind, true, err);
}

bool index_ready(struct index *idx)
{
    return idx->be->ready == NULL || idx->be->ready(idx->be);
}

void index_stats(struct index *idx, struct index_stats *out)
{
    memset(out, 0, sizeof *out);
    out->ready = index_ready(idx);
    if (idx->be->stats)
        idx->be->stats(idx->be, out);
}

bool index_wait_ready(struct index *idx, int64_t ms)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int64_t waited = 0; !index_ready(idx) && waited < ms; waited += 10)
        nanosleep(&tick, NULL);
    return index_ready(idx);
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

int index_verify(struct index *idx, struct index_verify_report *out, struct err *err)
{
    return idx->be->verify(idx->be, out, err); /* each backend zeroes *out */
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
