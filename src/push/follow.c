/* The log follower of push/follow.h. The file's version (SQLite's
 * data_version) is read before the rows of a poll: a commit after that read
 * moves it again, so the next wait sees it and no row is left unread. */
#include "push/follow.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/banned.h"

struct push_follow {
    struct store_reader *r;
    int64_t pos;
    int64_t version; /* the file's version at the last poll */
    bool polled;     /* version is set */
    bool more;       /* the last poll stopped before the end */
    char identity[STORE_IDENTITY_MAX];
};

int push_follow_new(struct push_follow **out, const char *path, int64_t after, struct err *err)
{
    struct push_follow *f = calloc(1, sizeof *f);
    int rc;

    *out = NULL;
    if (f == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    f->pos = after;
    if ((rc = store_reader_open(&f->r, path, err)) < 0)
        goto fail;
    if ((rc = store_reader_begin(f->r, err)) < 0)
        goto fail;
    rc = store_reader_identity(f->r, f->identity, err);
    store_reader_end(f->r, NULL);
    if (rc < 0)
        goto fail;
    *out = f;
    return 0;
fail:
    push_follow_free(f);
    return rc;
}

void push_follow_free(struct push_follow *f)
{
    if (f == NULL)
        return;
    store_reader_close(f->r);
    free(f);
}

int64_t push_follow_position(const struct push_follow *f)
{
    return f->pos;
}

int push_follow_head(struct push_follow *f, int64_t *out, struct err *err)
{
    return store_reader_head(f->r, out, err);
}

int push_follow_story(struct push_follow *f, int64_t id, int64_t *story, struct err *err)
{
    return store_reader_story_of(f->r, id, story, err);
}

/* The start of a poll or a skip: the file's version (read before the
 * rows, see the file comment), then a read transaction on the table the
 * follower was made for, its version recorded. ERR_NOTFOUND when the table
 * was replaced; on any failure no transaction is left open. */
static int follow_begin(struct push_follow *f, struct err *err)
{
    char identity[STORE_IDENTITY_MAX];
    int64_t version;
    int rc;

    if ((rc = store_reader_version(f->r, &version, err)) < 0)
        return rc;
    if ((rc = store_reader_begin(f->r, err)) < 0)
        return rc;
    if ((rc = store_reader_identity(f->r, identity, err)) == 0 &&
        strcmp(identity, f->identity) != 0)
        rc = err_set(err, ERR_NOTFOUND, "the article log was replaced");
    if (rc < 0) {
        store_reader_end(f->r, NULL);
        return rc;
    }
    f->version = version;
    f->polled = true;
    f->more = false;
    return 0;
}

int push_follow_poll(struct push_follow *f, push_follow_fn fn, void *ctx, size_t max_rows,
                     struct err *err)
{
    struct store_rows *rows = NULL;
    struct store_row row;
    int taken = 0, rc;

    if ((rc = follow_begin(f, err)) < 0)
        return rc;
    if ((rc = store_rows_after(&rows, f->r, f->pos, err)) < 0)
        goto out;
    while ((rc = store_rows_next(rows, &row, err)) == 1) {
        struct index_match_doc *doc = NULL;
        if (max_rows > 0 && (size_t)taken == max_rows) {
            f->more = true;
            break;
        }
        if ((rc = index_match_doc_new(&doc, &row, err)) < 0)
            break;
        rc = fn(&row, doc, ctx);
        index_match_doc_free(doc);
        if (rc < 0) {
            f->more = true;
            break;
        }
        f->pos = row.seq;
        taken++;
        if (rc > 0) {
            f->more = true;
            break;
        }
    }
    if (rc >= 0)
        rc = taken;
out:
    store_rows_free(rows);
    store_reader_end(f->r, NULL);
    return rc;
}

int push_follow_skip(struct push_follow *f, struct err *err)
{
    int64_t head = 0;
    int rc;

    if ((rc = follow_begin(f, err)) < 0)
        return rc;
    rc = store_reader_head(f->r, &head, err);
    store_reader_end(f->r, NULL);
    if (rc == 0 && head > f->pos)
        f->pos = head;
    return rc;
}

int push_follow_wait(struct push_follow *f, const atomic_bool *stop, int64_t ms, struct err *err)
{
    int64_t deadline = clock_mono_ms() + ms;
    for (;;) {
        int64_t version, left;
        int rc;
        if (!f->polled || f->more)
            return 1;
        if ((rc = store_reader_version(f->r, &version, err)) < 0)
            return rc;
        if (version != f->version)
            return 1;
        if (stop && atomic_load(stop))
            return 0;
        if ((left = deadline - clock_mono_ms()) <= 0)
            return 0;
        clock_sleep_ms(left < PUSH_FOLLOW_INTERVAL_MS ? left : PUSH_FOLLOW_INTERVAL_MS);
    }
}
