/* story/assign.h: the rules in order over the window of story/lsh.h. */
#include "story/assign.h"

#include <stdlib.h>

#include "story/lsh.h"
#include "util/err.h"
#include "util/banned.h"

struct story_assigner {
    struct story_params p;
    struct story_lsh *lsh;
};

void story_params_default(struct story_params *p)
{
    p->window_s = (int64_t)STORY_WINDOW_DAYS_DEFAULT * 86400;
    p->title_window_s = STORY_TITLE_WINDOW_S_DEFAULT;
    p->threshold = STORY_THRESHOLD_DEFAULT;
}

int story_assigner_new(struct story_assigner **out, const struct story_params *p)
{
    struct story_assigner *a = calloc(1, sizeof *a);
    *out = NULL;
    if (a == NULL)
        return ERR_NOMEM;
    if (p)
        a->p = *p;
    else
        story_params_default(&a->p);
    int rc = story_lsh_new(&a->lsh, a->p.window_s);
    if (rc < 0) {
        free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void story_assigner_free(struct story_assigner *a)
{
    if (a == NULL)
        return;
    story_lsh_free(a->lsh);
    free(a);
}

size_t story_assigner_size(const struct story_assigner *a)
{
    return story_lsh_size(a->lsh);
}

int story_assign(struct story_assigner *a, const struct story_input *in, int64_t *story,
                 enum story_rule *rule)
{
    struct story_sketch sk;
    uint64_t uk = story_url_key(in->canonical_url);
    uint64_t tk = story_title_key(in->title);
    uint64_t hk = story_host_key(in->canonical_url);
    enum story_rule why = STORY_RULE_NEW;
    double sim = 0;
    int64_t s = story_lsh_find_url(a->lsh, uk);

    story_sketch_build(&sk, in->title, in->description, in->content);
    if (s != 0)
        why = STORY_RULE_URL;
    else if ((s = story_lsh_find_title(a->lsh, tk, in->published_at, a->p.title_window_s)) != 0)
        why = STORY_RULE_TITLE;
    else if ((s = story_lsh_find_similar(a->lsh, &sk, hk, in->published_at, a->p.threshold,
                                         &sim)) != 0)
        why = STORY_RULE_SIMILAR;
    else
        s = story_id_for_url(in->canonical_url);
    *story = s;
    if (rule)
        *rule = why;
    return story_lsh_add(a->lsh, in->published_at, s, hk, uk, tk, &sk);
}

int story_remember(struct story_assigner *a, const struct story_input *in, int64_t story)
{
    struct story_sketch sk;
    story_sketch_build(&sk, in->title, in->description, in->content);
    return story_lsh_add(a->lsh, in->published_at, story, story_host_key(in->canonical_url),
                         story_url_key(in->canonical_url), story_title_key(in->title), &sk);
}
