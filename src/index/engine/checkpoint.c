/* Checkpoints (index/engine/writer.h): the segments built since the last
 * one are written to files and mapped in place of their heap copies, then
 * the manifest is replaced; at open, what a manifest names is mapped. Only
 * the process holding <dir>/lock writes. */
#include "index/engine/writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/owner.h"

#include "util/banned.h"

#define CHECKPOINT_DOCS 65536
#define CHECKPOINT_RETRY_MS 60000

/* The index directory and its files get the store directory's owner when
 * root writes them there for another user (util/owner.h: a root-run
 * `newsd index verify` on the service's store). Once at open (the
 * directory and its lock) and after each checkpoint (its segments, a
 * merge's, the manifest): the one place the engine's files are owned. */
static void dir_own(const struct eng_writer *w)
{
    struct owner o;
    if (w->dir && owner_of_path_dir(&o, w->db_path) && owner_apply_dir(w->dir, &o) != 0)
        log_msg(LOG_WARN, "search index: cannot give %s to uid %u: %s", w->dir, (unsigned)o.uid,
                strerror(errno));
}

int eng_segment_path(const struct eng_writer *w, uint64_t id, char *out, size_t cap)
{
    return (size_t)snprintf(out, cap, "%s/seg-%016" PRIx64 ".seg", w->dir, id) < cap ? 0 : -1;
}

/* Remove what the manifest does not name: segments a crash left behind or
 * a merge replaced, and half-written .tmp files. */
void eng_dir_sweep(const struct eng_writer *w)
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        uint64_t id = 0;
        char tail[8] = "";
        bool keep = true;
        size_t len = strlen(de->d_name);
        if (w->merge_file != 0 && sscanf(de->d_name, "seg-%16" SCNx64, &id) == 1 &&
            id == w->merge_file) {
            continue; /* a running merge's output (merge.c), .tmp or not */
        } else if (len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0) {
            keep = false;
        } else if (sscanf(de->d_name, "seg-%16" SCNx64 "%7s", &id, tail) == 2 &&
                   strcmp(tail, ".seg") == 0) {
            keep = false;
            for (size_t i = 0; i < w->nseg && !keep; i++)
                keep = w->segs[i]->file_id == id;
        }
        if (!keep) {
            char path[4096];
            if ((size_t)snprintf(path, sizeof path, "%s/%s", w->dir, de->d_name) < sizeof path)
                unlink(path);
        }
    }
    closedir(d);
}

int eng_segment_write_mapped(const struct eng_segment *seg, const char *path, uint64_t id,
                             struct eng_segment **mapped, struct err *err)
{
    int rc;

    *mapped = NULL;
    if ((rc = eng_segment_write(seg, path, err)) < 0 ||
        (rc = eng_segment_map(path, id, mapped, err)) < 0)
        return rc;
    if ((*mapped)->n != seg->n || (*mapped)->nterms != seg->nterms) {
        eng_segment_unref(*mapped);
        *mapped = NULL;
        return err_set(err, ERR_IO, "%s reads back different from what was written", path);
    }
    return 0;
}

int eng_segment_install_mapped(struct eng_writer *w, size_t i, struct eng_segment *mapped,
                               struct err *err)
{
    /* (its columns checked as at open: what is mapped is what searches read;
     * here, where the interned sources are the writer's to read) */
    if (eng_segment_check_columns(mapped, (uint32_t)w->nsrc, NULL) < 0) {
        uint64_t id = mapped->file_id;
        eng_segment_unref(mapped);
        return err_set(err, ERR_IO,
                       "segment file %016" PRIx64 " reads back different from "
                       "what was written",
                       id);
    }
    eng_segment_unref(w->segs[i]);
    w->segs[i] = mapped;
    return 0;
}

/* Write segment i to its file and put the mapped file in its place (the
 * heap copy goes with the last snapshot that holds it). */
int eng_segment_persist(struct eng_writer *w, size_t i, struct err *err)
{
    struct eng_segment *mapped;
    int rc = eng_segment_write_file(w, w->segs[i], w->next_file++, &mapped, err);
    return rc < 0 ? rc : eng_segment_install_mapped(w, i, mapped, err);
}

int eng_segment_write_file(const struct eng_writer *w, const struct eng_segment *seg, uint64_t id,
                           struct eng_segment **mapped, struct err *err)
{
    char path[4096];
    if (eng_segment_path(w, id, path, sizeof path) < 0)
        return err_set(err, ERR_INVALID, "index path too long");
    return eng_segment_write_mapped(seg, path, id, mapped, err);
}

/* Write the segments only in RAM, map them in place of their heap copies,
 * then replace the manifest: a crash anywhere leaves the old manifest and
 * files it names, or the new ones. */
int eng_checkpoint(struct eng_writer *w, struct err *err)
{
    struct eng_manifest m = {0};
    bool wrote = false;
    int rc = 0;

    if (!w->writable)
        return 0;
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        if (w->segs[i]->file_id != 0)
            continue;
        if ((rc = eng_segment_persist(w, i, err)) == 0)
            wrote = true;
    }
    if (wrote) /* the snapshot then searches the mapped files, not the heap copies */
        eng_writer_publish(w);
    /* The segment files' names are durable before a manifest names them. */
    if (rc == 0)
        rc = eng_dir_sync(w->dir, err);
    if (rc < 0)
        return rc;

    snprintf(m.epoch, sizeof m.epoch, "%s", w->epoch);
    m.applied_seq = w->applied_seq;
    m.covered = w->covered;
    m.next_file = w->next_file;
    m.nsrc = (uint32_t)w->nsrc;
    m.srcs = w->srcs; /* borrowed: not cleared below */
    m.nseg = (uint32_t)w->nseg;
    m.segs = calloc(w->nseg + 1, sizeof *m.segs);
    if (m.segs == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < w->nseg && rc == 0; i++) {
        const struct eng_deletions *d = w->deletions[i];
        struct eng_manifest_seg *ms = &m.segs[i];
        ms->file_id = w->segs[i]->file_id;
        ms->n = w->segs[i]->n;
        if ((ms->del = malloc(((size_t)(d ? d->n : 0) + 1) * sizeof *ms->del)) == NULL) {
            rc = err_set(err, ERR_NOMEM, "out of memory");
            break;
        }
        for (uint32_t k = 0; d && k < w->segs[i]->n; k++) {
            if (eng_deletions_has(d, k))
                ms->del[ms->ndel++] = k;
        }
    }
    if (rc == 0)
        rc = eng_manifest_write(w->dir, &m, err);
    for (size_t i = 0; i < w->nseg; i++)
        free(m.segs[i].del);
    free(m.segs);
    if (rc < 0)
        return rc;
    w->dirty = false;
    w->last_checkpoint_ms = clock_mono_ms();
    eng_dir_sweep(w);
    dir_own(w);
    return 0;
}

/* A checkpoint when one is due. A failed one (a full disk) is logged once
 * and retried after CHECKPOINT_RETRY_MS, not at every poll: the index keeps
 * serving from RAM meanwhile, and the next start reads more rows again. */
void eng_checkpoint_maybe(struct eng_writer *w)
{
    uint64_t heap_docs = 0;
    int64_t now = clock_mono_ms();
    if (!w->writable || !w->dirty || now < w->checkpoint_retry_ms)
        return;
    for (size_t i = 0; i < w->nseg; i++) {
        if (w->segs[i]->file_id == 0)
            heap_docs += w->segs[i]->n;
    }
    if (heap_docs < CHECKPOINT_DOCS && now - w->last_checkpoint_ms < w->checkpoint_ms)
        return;
    struct err err;
    err_clear(&err);
    int rc = eng_checkpoint(w, &err);
    if (rc < 0 && w->checkpoint_retry_ms == 0)
        log_msg(LOG_WARN, "search index: cannot write %s: %s (kept in memory; retrying every %d s)",
                w->dir, err_msg(&err, rc), CHECKPOINT_RETRY_MS / 1000);
    else if (rc == 0 && w->checkpoint_retry_ms != 0)
        log_msg(LOG_INFO, "search index: %s written again", w->dir);
    w->checkpoint_retry_ms = rc < 0 ? now + CHECKPOINT_RETRY_MS : 0;
}

int eng_staged_dir(const char *db_path, char *out, size_t n, struct err *err)
{
    if ((size_t)snprintf(out, n, "%s.engine.v%u", db_path, (unsigned)eng_segment_version()) >= n)
        return err_set(err, ERR_INVALID, "index path too long");
    return 0;
}

/* Remove dir and the files in it (an index directory has no
 * subdirectories). A missing dir is nothing to do. err NULL: quietly, as
 * far as it goes; else the first failure, ERR_IO. */
static int dir_remove(const char *dir, struct err *err)
{
    char path[4096];
    struct dirent *de;
    int rc = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT || !err
                   ? 0
                   : err_set(err, ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path) {
            if (err && rc == 0)
                rc = err_set(err, ERR_INVALID, "index path too long");
        } else if (unlink(path) != 0 && errno != ENOENT && err && rc == 0) {
            rc = err_set(err, ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        }
    }
    closedir(d);
    if (rmdir(dir) != 0 && errno != ENOENT && err && rc == 0)
        rc = err_set(err, ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
    return rc;
}

/* The staged directory that newsd index build wrote ahead of an upgrade
 * (while the old version's server kept the live one) takes the live one's
 * place. Only the holder of the live directory's lock gets here, and only
 * once the build has let go of the staged one's lock; the live directory
 * goes aside first, so a crash in between leaves one of the two whole.
 * Afterwards the index catches up from its manifest as after any restart. */
static void staged_adopt(struct eng_writer *w)
{
    char staged[4096], aside[4096], lock[4200];
    struct err err;
    if (eng_staged_dir(w->db_path, staged, sizeof staged, NULL) < 0 ||
        (size_t)snprintf(aside, sizeof aside, "%s.old", w->dir) >= sizeof aside ||
        (size_t)snprintf(lock, sizeof lock, "%s/lock", staged) >= sizeof lock)
        return;
    int fd = open(lock, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return; /* nothing staged */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        log_msg(LOG_WARN,
                "search index: %s is still being built (newsd index build); not "
                "adopted",
                staged);
        close(fd);
        return;
    }
    dir_remove(aside, NULL); /* what an interrupted adoption left */
    if (rename(w->dir, aside) != 0 || rename(staged, w->dir) != 0) {
        log_msg(LOG_WARN, "search index: cannot put %s in place of %s (%s)", staged, w->dir,
                strerror(errno));
        if (access(w->dir, F_OK) != 0)
            (void)rename(aside, w->dir);
        close(fd);
        return;
    }
    close(w->lock_fd);
    w->lock_fd = fd; /* the staged directory's lock, now the live one's */
    dir_remove(aside, NULL);
    /* The renames are entries of the store's directory: make them last. */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", w->dir);
    char *slash = strrchr(parent, '/');
    if (slash)
        *slash = '\0';
    err_clear(&err);
    (void)eng_dir_sync(slash ? parent : ".", &err);
    log_msg(LOG_INFO, "search index: adopted the index built ahead in %s (segment format %u)",
            staged, (unsigned)eng_segment_version());
}

/* The index directory beside the database file: <db>.engine (or the
 * staged one, eng_staged_dir). Only the process that holds its lock writes
 * there; another one (a second process on the same store) reads the
 * manifest and keeps its changes in RAM. */
void eng_persist_open(struct eng_writer *w)
{
    size_t n = strlen(w->db_path) + sizeof ".engine.v4294967295";
    char path[4096];

    w->lock_fd = -1;
    if (!w->persist || (w->dir = malloc(n)) == NULL)
        return;
    if (w->staged)
        (void)eng_staged_dir(w->db_path, w->dir, n, NULL);
    else
        snprintf(w->dir, n, "%s.engine", w->db_path);
    struct stat st;
    if (w->files_only && stat(w->dir, &st) != 0) { /* (a report makes no directory) */
        free(w->dir);
        w->dir = NULL;
        return;
    }
    if (mkdir(w->dir, 0700) != 0 && errno != EEXIST) {
        log_msg(LOG_WARN, "search index: cannot create %s (%s): the index stays in memory", w->dir,
                strerror(errno));
        free(w->dir);
        w->dir = NULL;
        return;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/lock", w->dir) >= sizeof path)
        return;
    w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    w->writable = w->lock_fd >= 0 && flock(w->lock_fd, LOCK_EX | LOCK_NB) == 0;
    dir_own(w);
    if (w->writable && !w->staged)
        staged_adopt(w);
}

/* A manifest that is not used is removed (and the removal made durable)
 * before the rebuild writes any segment file: the rebuild's files reuse
 * names, and an old manifest read at the next start must not find them. */
static void manifest_retire(struct eng_writer *w)
{
    char path[4096];
    struct err err;
    if (!w->writable ||
        (size_t)snprintf(path, sizeof path, "%s/%s", w->dir, ENG_MANIFEST_NAME) >= sizeof path)
        return;
    if (unlink(path) == 0)
        (void)eng_dir_sync(w->dir, &err);
}

/* Map what the manifest names; false (and nothing kept) when it cannot be
 * used, and the table is then read whole. */
bool eng_persist_load(struct eng_writer *w)
{
    struct eng_manifest m;
    struct err err;
    char epoch[STORE_IDENTITY_MAX];
    bool ok = false;

    err_clear(&err);
    if (w->dir == NULL)
        return false;
    int rc = eng_manifest_read(w->dir, &m, &err);
    if (rc == ERR_NOTFOUND)
        return false;
    if (rc < 0) {
        log_msg(LOG_WARN, "search index: %s; rebuilding from the table", err_msg(&err, rc));
        manifest_retire(w);
        return false;
    }
    if (store_reader_identity(w->db, epoch, &err) < 0 || epoch[0] == '\0' ||
        strcmp(epoch, m.epoch) != 0) {
        log_msg(LOG_WARN, "search index: %s belongs to another articles table; rebuilding", w->dir);
        goto out;
    }
    /* A table behind the files (the store restored from an older backup):
     * its next rows would reuse seqs the files already cover. */
    int64_t head = 0;
    if (store_reader_head(w->db, &head, &err) < 0 || head < m.applied_seq) {
        log_msg(LOG_WARN,
                "search index: the articles table is behind %s (restored from a backup?); "
                "rebuilding",
                w->dir);
        goto out;
    }
    for (uint32_t i = 0; i < m.nsrc; i++) {
        uint32_t id;
        if (eng_src_intern(w, m.srcs[i], &id) < 0 || id != i)
            goto out;
    }
    for (uint32_t i = 0; i < m.nseg; i++) {
        char path[4096];
        struct eng_segment *seg = NULL;
        if (eng_segment_path(w, m.segs[i].file_id, path, sizeof path) < 0)
            goto out;
        /* The columns a search reads by docid are checked here, once
         * (O(n)); the postings when a search first opens each term. */
        if ((rc = eng_segment_map(path, m.segs[i].file_id, &seg, &err)) < 0 ||
            seg->n != m.segs[i].n || (rc = eng_segment_check_columns(seg, m.nsrc, &err)) < 0) {
            log_msg(LOG_WARN, "search index: %s; rebuilding from the table",
                    rc < 0 ? err_msg(&err, rc) : "a segment disagrees with the manifest");
            eng_segment_unref(seg);
            goto out;
        }
        if (eng_writer_append(w, seg) < 0) {
            eng_segment_unref(seg);
            goto out;
        }
        if (m.segs[i].ndel == 0)
            continue;
        struct eng_deletions *d = eng_deletions_new(seg->n);
        if (d == NULL)
            goto out;
        for (uint32_t k = 0; k < m.segs[i].ndel; k++) {
            uint32_t doc = m.segs[i].del[k];
            d->bits[doc >> 6] |= (uint64_t)1 << (doc & 63);
            d->ntoken += seg->dl[doc];
        }
        d->n = m.segs[i].ndel;
        w->deletions[w->nseg - 1] = d;
    }
    snprintf(w->epoch, sizeof w->epoch, "%s", m.epoch);
    w->applied_seq = m.applied_seq;
    w->covered = m.covered;
    w->next_file = m.next_file;
    w->dirty = false;
    ok = true;
out:
    if (!ok) {
        eng_writer_drop_all(w);
        w->epoch[0] = '\0';
        if (m.next_file > w->next_file)
            w->next_file = m.next_file;
        manifest_retire(w);
    }
    eng_manifest_clear(&m);
    return ok;
}

/* The index directory and every file in it removed (newsd restore: the
 * files belong to the table being replaced, and a backup of the same
 * store has the same table identity, so they would be taken for the
 * restored table's), and with it a staged index (newsd index build, built
 * from the table being replaced, which the next server would adopt) and a
 * live directory set aside by an adoption. */
int index_engine_files_remove(const char *db_path, struct err *err)
{
    char live[4096], staged[4096], aside[4200];
    if ((size_t)snprintf(live, sizeof live, "%s.engine", db_path) >= sizeof live ||
        eng_staged_dir(db_path, staged, sizeof staged, err) < 0 ||
        (size_t)snprintf(aside, sizeof aside, "%s.old", live) >= sizeof aside)
        return err_set(err, ERR_INVALID, "index path too long");
    int rc = dir_remove(live, err);
    if (rc == 0)
        rc = dir_remove(staged, err);
    if (rc == 0)
        rc = dir_remove(aside, err);
    return rc;
}
