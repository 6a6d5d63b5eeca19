/* A story for every article, at ingest (issue 25; docs/stories.md): an
 * article joins the story of an earlier article in the window when
 *   1. their URLs are variants of one URL (story_url_key), or
 *   2. their titles are the same after normalisation (story_title_key) and
 *      they were published within title_window_s of each other, or
 *   3. they come from different hosts and their sketches' similarity is at
 *      least threshold (story/lsh.h finds the candidates);
 * else it founds a story whose id is story_id_for_url(its canonical url).
 * Rules are tried in that order, the cheap and sure ones first. The
 * assigner remembers what it assigned; a process that starts feeds it the
 * window's stored articles with story_remember. Not thread-safe. */
#ifndef NEWSD_STORY_ASSIGN_H
#define NEWSD_STORY_ASSIGN_H

#include <stdint.h>

#include "story/sketch.h"

#define STORY_WINDOW_DAYS_DEFAULT 3
#define STORY_WINDOW_DAYS_MAX 60
#define STORY_TITLE_WINDOW_S_DEFAULT (12 * 3600)
/* Chosen on the labelled real set (bench/stories_quality.py,
 * docs/stories.md "Quality"): the best F1 there; above it precision
 * hardly rises while recall falls ([stories] similarity_percent). */
#define STORY_THRESHOLD_DEFAULT 0.4

struct story_params {
    int64_t window_s;       /* sketches compared within this (publication time) */
    int64_t title_window_s; /* same titles within this */
    double threshold;       /* sketch similarity that joins a story */
};

void story_params_default(struct story_params *p);

/* What an article is judged by; strings may be NULL. */
struct story_input {
    const char *canonical_url;
    const char *title;
    const char *description;
    const char *content;
    int64_t published_at;
};

enum story_rule { STORY_RULE_NEW = 0, STORY_RULE_URL, STORY_RULE_TITLE, STORY_RULE_SIMILAR };

/* What the rules compare of an article, made from its text alone: the
 * costly part of an assignment (the words of the text), so an import makes
 * it on its parsing thread and leaves the writer only the window's look-ups
 * (store_articles_put_prepared). Pure and thread-safe. */
struct story_prep {
    struct story_sketch sk;
    uint64_t url_key, title_key, site_key;
    int64_t founded; /* story_id_for_url(canonical_url): the id it founds */
    int64_t published_at;
};

void story_prepare(struct story_prep *out, const struct story_input *in);

struct story_assigner;

int story_assigner_new(struct story_assigner **out, const struct story_params *p);
void story_assigner_free(struct story_assigner *a);

/* The story of in (*story > 0), remembered for the articles after it;
 * *rule (may be NULL) says which rule decided. ERR_NOMEM. */
int story_assign(struct story_assigner *a, const struct story_input *in, int64_t *story,
                 enum story_rule *rule);

/* story_assign with the article prepared already (story_prepare). */
int story_assign_prepared(struct story_assigner *a, const struct story_prep *p, int64_t *story,
                          enum story_rule *rule);

/* Remember an article whose story is already known (a stored one). */
int story_remember(struct story_assigner *a, const struct story_input *in, int64_t story);

/* Articles the window holds. */
size_t story_assigner_size(const struct story_assigner *a);

#endif
