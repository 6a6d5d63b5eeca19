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

void story_prepare(struct story_prep *out, const struct story_input *in)
{
    out->title_key = story_sketch_build_titled(&out->sk, in->title, in->description, in->content);
    out->url_key = story_url_key(in->canonical_url);
    out->site_key = story_site_key(in->canonical_url);
    out->founded = story_id_for_url(in->canonical_url);
    out->published_at = in->published_at;
}

int story_assign_prepared(struct story_assigner *a, const struct story_prep *p, int64_t *story,
                          enum story_rule *rule)
{
    enum story_rule why = STORY_RULE_NEW;
    double sim = 0;
    int64_t s;

    story_lsh_prefetch(a->lsh, p->url_key, p->title_key, &p->sk);
    if ((s = story_lsh_find_url(a->lsh, p->url_key)) != 0)
        why = STORY_RULE_URL;
    else if ((s = story_lsh_find_title(a->lsh, p->title_key, p->published_at,
                                       a->p.title_window_s)) != 0)
        why = STORY_RULE_TITLE;
    else if ((s = story_lsh_find_similar(a->lsh, &p->sk, p->site_key, p->published_at,
                                         a->p.threshold, &sim)) != 0)
        why = STORY_RULE_SIMILAR;
    else
        s = p->founded;
    *story = s;
    if (rule)
        *rule = why;
    return story_lsh_add(a->lsh, p->published_at, s, p->site_key, p->url_key, p->title_key, &p->sk);
}

int story_assign(struct story_assigner *a, const struct story_input *in, int64_t *story,
                 enum story_rule *rule)
{
    struct story_prep p;
    story_prepare(&p, in);
    return story_assign_prepared(a, &p, story, rule);
}

int story_remember(struct story_assigner *a, const struct story_input *in, int64_t story)
{
    struct story_prep p;
    story_prepare(&p, in);
    return story_lsh_add(a->lsh, p.published_at, story, p.site_key, p.url_key, p.title_key, &p.sk);
}
