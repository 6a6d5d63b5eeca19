/* libFuzzer harness: story sketching and assignment (src/story/, issue 25)
 * on arbitrary bytes. Input: articles separated by '\n', fields by '\t':
 * canonical url, title, description, content, publication time (decimal;
 * anything else reads as a number strtoll makes of it). Invariants: every
 * story id is positive; the same input gives the same ids in a second
 * assigner (every node computes the same stories); an article whose URL
 * key equals an earlier one's joins that story; a sketch is fully similar
 * to itself (or has too few shingles) and similarities lie in [0, 1]; the
 * window never holds more than it was given; the publisher's URL found in
 * an aggregator's link is the link itself or an http(s) URL that fits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "story/assign.h"
#include "story/publisher.h"
#include "story/sketch.h"

#define MAX_ARTICLES 64
#define FIELDS 5

struct rec {
    char *f[FIELDS];
};

static size_t split(char *buf, struct rec *recs)
{
    size_t n = 0;
    char *line = buf;
    while (line && n < MAX_ARTICLES) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        struct rec *r = &recs[n++];
        memset(r, 0, sizeof *r);
        char *f = line;
        for (int i = 0; i < FIELDS && f; i++) {
            char *tab = strchr(f, '\t');
            if (tab)
                *tab = '\0';
            r->f[i] = f;
            f = tab ? tab + 1 : NULL;
        }
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rec recs[MAX_ARTICLES];
    int64_t first[MAX_ARTICLES];
    struct story_params p;
    struct story_assigner *a = NULL, *b = NULL;
    char *buf = malloc(size + 1);

    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0'; /* an embedded NUL ends the input: C strings */
    size_t n = split(buf, recs);
    story_params_default(&p);
    p.window_s = 3600;
    if (story_assigner_new(&a, &p) != 0 || story_assigner_new(&b, &p) != 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        struct rec *r = &recs[i];
        struct story_input in = {r->f[0], r->f[1], r->f[2], r->f[3],
                                 r->f[4] ? strtoll(r->f[4], NULL, 10) : 0};
        struct story_sketch sk;
        enum story_rule rule;
        int64_t s1 = 0, s2 = 0;

        story_sketch_build(&sk, in.title, in.description, in.content);
        double self = story_sketch_similarity(&sk, &sk);
        if (!(self == 1.0 || (self == 0.0 && sk.shingles < STORY_SKETCH_MIN_SHINGLES)))
            abort();
        if (i > 0) {
            struct story_sketch prev;
            struct rec *q = &recs[i - 1];
            story_sketch_build(&prev, q->f[1], q->f[2], q->f[3]);
            double s = story_sketch_similarity(&sk, &prev);
            if (s < 0 || s > 1 || s != story_sketch_similarity(&prev, &sk))
                abort();
        }
        if (story_assign(a, &in, &s1, &rule) != 0 || story_assign(b, &in, &s2, NULL) != 0)
            abort();
        if (s1 <= 0 || s1 != s2)
            abort();
        first[i] = s1;
        if (in.canonical_url) {
            char pub[STORY_PUBLISHER_URL_MAX];
            const char *u = story_publisher_url(in.canonical_url, pub, sizeof pub);
            if (u != in.canonical_url &&
                (u != pub || strlen(pub) >= sizeof pub ||
                 (strncmp(pub, "http://", 7) != 0 && strncmp(pub, "https://", 8) != 0)))
                abort();
        }
        uint64_t uk = story_url_key(in.canonical_url);
        for (size_t j = 0; j < i && uk != 0; j++) {
            if (story_url_key(recs[j].f[0]) == uk) {
                /* the newest article with the key decides: the same story
                 * as the last earlier one with it */
                size_t last = j;
                for (size_t k = j + 1; k < i; k++)
                    if (story_url_key(recs[k].f[0]) == uk)
                        last = k;
                if (first[last] != s1 || rule != STORY_RULE_URL)
                    abort();
                break;
            }
        }
        if (story_assigner_size(a) > i + 1)
            abort();
    }
    story_assigner_free(a);
    story_assigner_free(b);
    free(buf);
    return 0;
}
