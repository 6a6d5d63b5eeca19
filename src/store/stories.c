/* store/stories.h. */
#include "store/stories.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "story/assign.h"
#include "store/journal.h"
#include "util/banned.h"

struct store_stories {
    pthread_mutex_t lock;
    struct story_params params;
    struct story_assigner *assigner; /* NULL until the first put */
};

int store_stories_new(struct store_stories **out, struct err *err)
{
    struct store_stories *st = calloc(1, sizeof *st);
    *out = NULL;
    if (st == NULL)
        return err_set(err, ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&st->lock, NULL) != 0) {
        free(st);
        return err_set(err, ERR_NOMEM, "cannot create a mutex");
    }
    story_params_default(&st->params);
    *out = st;
    return 0;
}

void store_stories_free(struct store_stories *st)
{
    if (st == NULL)
        return;
    story_assigner_free(st->assigner);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void store_stories_window_days(struct store_stories *st, int64_t days)
{
    if (days < 1)
        days = 1;
    if (days > STORY_WINDOW_DAYS_MAX)
        days = STORY_WINDOW_DAYS_MAX;
    pthread_mutex_lock(&st->lock);
    st->params.window_s = days * 86400;
    pthread_mutex_unlock(&st->lock);
}

void store_stories_similarity(struct store_stories *st, int64_t percent)
{
    if (percent < 10)
        percent = 10;
    if (percent > 100)
        percent = 100;
    pthread_mutex_lock(&st->lock);
    st->params.threshold = (double)percent / 100.0;
    pthread_mutex_unlock(&st->lock);
}

static int remember_row(void *ctx, const struct article *a)
{
    struct story_input in = {a->canonical_url, a->title, a->description, a->content,
                             a->published_at};
    return story_remember(ctx, &in, store_story_resolve(a->story_id, a->canonical_url, 0));
}

/* The window from the stored articles of its length before the newest. */
static int window_start(struct store_stories *st, struct store_backend *be, struct err *err)
{
    struct story_assigner *as = NULL;
    int rc = story_assigner_new(&as, &st->params);
    if (rc < 0)
        return err_set(err, rc, "out of memory");
    if (be->stories_window)
        rc = be->stories_window(be, st->params.window_s, remember_row, as, err);
    if (rc < 0) {
        if (err && err->code == 0) /* the callback's own error */
            err_set(err, rc, "cannot start the story window: out of memory");
        story_assigner_free(as);
        return rc;
    }
    st->assigner = as;
    return 0;
}

int store_stories_assign(struct store_stories *st, struct store_backend *be, struct article *arts,
                         const struct story_prep *preps, size_t n, struct err *err)
{
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    if (st->assigner == NULL)
        rc = window_start(st, be, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (arts[i].story_id != 0)
            continue;
        struct story_prep made;
        const struct story_prep *p = preps ? &preps[i] : &made;
        if (preps == NULL) {
            struct story_input in = {arts[i].canonical_url, arts[i].title, arts[i].description,
                                     arts[i].content, arts[i].published_at};
            story_prepare(&made, &in);
        }
        if ((rc = story_assign_prepared(st->assigner, p, &arts[i].story_id, NULL)) < 0)
            err_set(err, rc, "article %zu: cannot assign its story: out of memory", i);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* A backfill's pass: every stored article in publication order through a
 * window of its own (the stored stories remembered, the missing ones
 * assigned), the missing ones collected for the batch's write. */
struct backfill {
    struct story_assigner *as;
    int64_t *ids, *stories;
    size_t n;
    struct store_backfill_stats *stats;
};

static int backfill_row(void *ctx, const struct article *a)
{
    struct backfill *bf = ctx;
    struct story_input in = {a->canonical_url, a->title, a->description, a->content,
                             a->published_at};
    bf->stats->read++;
    if (a->story_id != 0)
        return story_remember(bf->as, &in, a->story_id);
    int64_t story;
    enum story_rule why;
    int rc = story_assign(bf->as, &in, &story, &why);
    if (rc < 0)
        return rc;
    if (why != STORY_RULE_NEW)
        bf->stats->joined++;
    bf->ids[bf->n] = a->id;
    bf->stories[bf->n] = story;
    bf->n++;
    return 0;
}

int store_stories_backfill_run(struct store_stories *st, struct store_backend *be, size_t batch,
                               struct store_backfill_stats *stats, struct err *err)
{
    struct backfill bf = {.stats = stats};
    struct story_params p;
    int64_t after = INT64_MIN, last;
    int rc;

    memset(stats, 0, sizeof *stats);
    if (be->stories_scan == NULL || be->stories_fill == NULL)
        return err_set(err, ERR_UNSUPPORTED,
                       "a %s store cannot be backfilled: its articles without a story keep "
                       "their own",
                       be->kind);
    if (batch == 0)
        batch = 1;
    pthread_mutex_lock(&st->lock);
    p = st->params;
    pthread_mutex_unlock(&st->lock);
    if ((rc = story_assigner_new(&bf.as, &p)) < 0)
        return err_set(err, rc, "out of memory");
    bf.ids = malloc(batch * sizeof *bf.ids);
    bf.stories = malloc(batch * sizeof *bf.stories);
    if (bf.ids == NULL || bf.stories == NULL)
        rc = err_set(err, ERR_NOMEM, "out of memory");
    while (rc == 0) {
        int64_t read = stats->read, set = 0;
        bf.n = 0;
        rc = be->stories_scan(be, after, batch, backfill_row, &bf, &last, err);
        if (rc < 0) {
            if (err && err->code == 0) /* the callback's own error */
                err_set(err, rc, "cannot assign a story: out of memory");
            break;
        }
        if (stats->read == read)
            break; /* past the newest */
        if ((rc = be->stories_fill(be, bf.ids, bf.stories, bf.n, &set, err)) < 0)
            break;
        stats->filled += set;
        after = last;
    }
    free(bf.ids);
    free(bf.stories);
    story_assigner_free(bf.as);
    return rc;
}
