/* store/stories.h. */
#include "store/stories.h"

#include <pthread.h>
#include <stdlib.h>

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
