/* src/story/ (issue 25): the keys and sketches, and the assignment against
 * a brute-force oracle that applies the same rules by comparing every pair
 * (no LSH index, no key table) on small generated corpora: the stories
 * must be the same (same partition, same ids). Plus a store round trip:
 * store_articles_put gives every article its story, copies share it, and
 * a second process (a new store handle) starts its window from the stored
 * articles, so a copy put later still joins. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "story/assign.h"
#include "story/lsh.h"
#include "story/sketch.h"
#include "store/store.h"
#include "test_tmpdir.h"

static void url_variants_share_a_key(void **state)
{
    (void)state;
    uint64_t k = story_url_key("https://www.example.com/news/a-1");
    const char *same[] = {
        "http://example.com/news/a-1",      "https://m.example.com/news/a-1/",
        "https://amp.example.com/news/a-1", "https://www.example.com/news/a-1/amp",
        "https://example.com/amp/news/a-1", "https://example.com/news/a-1?amp=1",
        "https://EXAMPLE.com/news/a-1#top"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        assert_int_equal(story_url_key(same[i]), k);
    assert_int_equal(story_url_key("https://example.com/news/a-1.amp.html"),
                     story_url_key("https://example.com/news/a-1.html"));
    const char *other[] = {"https://example.com/news/a-2", "https://example.org/news/a-1",
                           "https://example.com/news/a-1?id=3", "https://example.com/news"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        assert_int_not_equal(story_url_key(other[i]), k);
    /* the query is part of the key (news1.kr/articles/?4366531) */
    assert_int_not_equal(story_url_key("https://n.example/articles/?1"),
                         story_url_key("https://n.example/articles/?2"));
    assert_int_equal(story_url_key(NULL), 0);
    assert_int_equal(story_url_key(""), 0);
}

static void sites_ignore_subdomains_and_suffixes(void **state)
{
    (void)state;
    uint64_t bbc = story_site_key("https://www.bbc.co.uk/news/a");
    assert_int_not_equal(bbc, 0);
    assert_int_equal(story_site_key("http://bbc.com/x"), bbc);
    assert_int_equal(story_site_key("https://m.bbc.co.uk/"), bbc);
    assert_int_equal(story_site_key("https://news.yahoo.com/a"),
                     story_site_key("https://ca.style.yahoo.com/b"));
    assert_int_equal(story_site_key("https://www.derstandard.at/story/1"),
                     story_site_key("https://www.derstandard.de/story/2"));
    assert_int_equal(story_site_key("https://abcnews.go.com/x"),
                     story_site_key("https://abcnews.com/y"));
    assert_int_equal(story_site_key("https://sport.blic.rs/a"),
                     story_site_key("https://blic.rs/b"));
    assert_int_not_equal(story_site_key("https://www.abc.net.au/news/1"),
                         story_site_key("https://abcnews.go.com/1"));
    assert_int_not_equal(story_site_key("https://cnn.com/a"), bbc);
    assert_int_equal(story_site_key("https://localhost/a"),
                     story_site_key("http://localhost:8080"));
    assert_int_equal(story_site_key(""), 0);
    assert_int_equal(story_site_key(NULL), 0);
    /* a Google News link is its publisher's page: its URL and its site */
    const char *gn = "https://news.google.com/__i/rss/rd/articles/"
                     "CBMiK2h0dHBzOi8vd3d3LnlvdXR1YmUuY29tL3dhdGNoP3Y9ZmI1c0FlcENING_SAQA?oc=5";
    assert_int_equal(story_site_key(gn), story_site_key("https://youtube.com/x"));
    assert_int_equal(story_url_key(gn),
                     story_url_key("https://www.youtube.com/watch?v=fb5sAepCH4o"));
    assert_int_not_equal(story_site_key(gn), story_site_key("https://news.google.com/"));
    /* an id that holds no URL leaves the link as it is */
    assert_int_equal(story_site_key("https://news.google.com/rss/articles/AAAA"),
                     story_site_key("https://news.google.com/"));
    assert_int_not_equal(story_url_key("https://news.google.com/rss/articles/AAAA"), 0);
}

static void titles_lose_their_publisher_tail(void **state)
{
    (void)state;
    uint64_t k = story_title_key("New virus surge sends younger patients to Spain's hospitals");
    assert_int_not_equal(k, 0);
    assert_int_equal(
        story_title_key("New virus surge sends younger patients to Spain's hospitals - CTV News"),
        k);
    assert_int_equal(
        story_title_key("NEW VIRUS SURGE sends younger patients to Spain’s hospitals | AP"), k);
    assert_int_not_equal(
        story_title_key("New virus surge sends older patients to Spain's hospitals"), k);
    assert_int_equal(story_title_key("Live updates - CNN"), 0); /* too short to be sure */
    /* a short body with a long tail is keyed whole */
    uint64_t m = story_title_key("Moodle 3.9.1 - Produce/manage educational sites. (Free)");
    assert_int_not_equal(m, 0);
    assert_int_not_equal(
        m, story_title_key("Moodle 3.9.2 - Produce/manage educational sites. (Free)"));
    struct story_sketch sk;
    assert_int_equal(
        story_sketch_build_titled(&sk, "Moodle 3.9.1 - Produce/manage educational sites. (Free)",
                                  NULL, NULL),
        m);
    assert_int_equal(story_title_key(NULL), 0);
}

static void sketches_measure_overlap(void **state)
{
    (void)state;
    struct story_sketch a, b, c;
    const char *text = "the committee voted on tuesday to approve the new budget for schools "
                       "roads and hospitals after a long debate in the regional parliament";
    story_sketch_build(&a, "Budget approved", NULL, text);
    story_sketch_build(&b, "Budget approved - Daily", NULL, text);
    story_sketch_build(&c, "Storm hits coast", NULL,
                       "a powerful storm brought heavy rain and strong winds to the northern "
                       "coast on sunday cutting power to thousands of homes near the harbour");
    assert_true(story_sketch_similarity(&a, &b) == 1.0);
    assert_true(story_sketch_similarity(&a, &c) < 0.2);
    /* the NewsAPI tail differs between copies and is left out */
    story_sketch_build(&b, "Budget approved", NULL,
                       "the committee voted on tuesday to approve the new budget for schools "
                       "roads and hospitals after a long debate in the regional parliament"
                       "… [+1234 chars]");
    assert_true(story_sketch_similarity(&a, &b) == 1.0);
    story_sketch_build(&c, "x", NULL, NULL);
    assert_true(story_sketch_similarity(&c, &c) == 0.0); /* too little text */
}

/* --- the oracle ------------------------------------------------------------------ */

struct doc {
    char url[96], title[160], desc[400], content[600];
    int64_t t;
};

static int64_t dt_abs(int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

/* Whether two sketches agree on a whole band: what makes a pair a
 * candidate of the LSH index (story/lsh.h), part of the method (a pair at
 * the threshold, 0.4, is one with probability 0.94), so the oracle applies
 * it too and the test checks the index, the window and the rules. */
static bool share_band(const struct story_sketch *a, const struct story_sketch *b)
{
    for (unsigned band = 0; band < STORY_LSH_BANDS; band++) {
        bool all = true;
        for (unsigned r = 0; r < STORY_LSH_ROWS; r++)
            all &= a->slot[band * STORY_LSH_ROWS + r] == b->slot[band * STORY_LSH_ROWS + r];
        if (all)
            return true;
    }
    return false;
}

/* The rules of story/assign.h over every earlier article: the newest with
 * the URL key, else the newest with the title key within the title
 * window, else the most similar candidate from another site (ties: the
 * newest), unless a candidate of its own site is as similar (its text is
 * then the site's boiler-plate) or candidates of two stories are (text
 * they share). */
static void oracle(const struct doc *d, size_t n, const struct story_params *p, int64_t *out)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t uk = story_url_key(d[i].url), tk = story_title_key(d[i].title);
        uint64_t hk = story_site_key(d[i].url);
        struct story_sketch si;
        int64_t s = 0;
        story_sketch_build(&si, d[i].title, d[i].desc, d[i].content);
        for (size_t j = i; j-- > 0 && s == 0;)
            if (uk && story_url_key(d[j].url) == uk)
                s = out[j];
        for (size_t j = i; j-- > 0 && s == 0;)
            if (tk && story_title_key(d[j].title) == tk &&
                dt_abs(d[j].t, d[i].t) <= p->title_window_s)
                s = out[j];
        double best = -1;
        int64_t bs = 0;
        bool boilerplate = false;
        for (size_t j = i; j-- > 0 && s == 0;) {
            struct story_sketch sj;
            if (dt_abs(d[j].t, d[i].t) > p->window_s)
                continue;
            story_sketch_build(&sj, d[j].title, d[j].desc, d[j].content);
            if (!share_band(&si, &sj))
                continue;
            double sim = story_sketch_similarity(&si, &sj);
            if (story_site_key(d[j].url) == hk) {
                boilerplate |= sim >= p->threshold;
                continue;
            }
            if (sim >= p->threshold && best >= p->threshold && out[j] != bs)
                boilerplate = true;
            if (sim > best) {
                best = sim;
                bs = out[j];
            }
        }
        if (s == 0 && best >= p->threshold && !boilerplate)
            s = bs;
        out[i] = s ? s : story_id_for_url(d[i].url);
    }
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void words(char *out, size_t cap, uint64_t *rng, size_t n, unsigned base, unsigned edit_pct)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used + 16 < cap; i++) {
        unsigned w = base + (unsigned)i; /* the story's own words, in its order */
        if (rng_next(rng) % 100 < edit_pct)
            w = 50000 + (unsigned)(rng_next(rng) % 1000); /* an edit */
        used += (size_t)snprintf(out + used, cap - used, "%sw%u", i ? " " : "", w);
    }
}

/* Stories of generated copies: each base story gets up to 4 copies on
 * other hosts, exact or with a share of words replaced, sometimes with
 * the same title, sometimes days apart; plus AMP variants of a URL. */
static size_t corpus(struct doc *d, size_t cap, uint64_t seed)
{
    uint64_t rng = seed | 1;
    size_t n = 0;
    for (unsigned story = 0; story < 24 && n + 6 < cap; story++) {
        unsigned copies = 1 + (unsigned)(rng_next(&rng) % 5);
        int64_t t0 = 1600000000 + (int64_t)(rng_next(&rng) % (10 * 86400));
        for (unsigned c = 0; c < copies; c++) {
            struct doc *x = &d[n++];
            unsigned edit = c == 0 ? 0 : (unsigned)(rng_next(&rng) % 4) * 10; /* 0..30 % */
            snprintf(x->url, sizeof x->url, "https://host%u.example/s%u/c%u",
                     (unsigned)(rng_next(&rng) % 6), story, c);
            words(x->title, sizeof x->title, &rng, 7, story * 1000, edit);
            words(x->desc, sizeof x->desc, &rng, 25, story * 1000 + 100, edit);
            words(x->content, sizeof x->content, &rng, 40, story * 1000 + 200, edit);
            x->t = t0 + (int64_t)(rng_next(&rng) % (5 * 86400));
            if (c > 0 && rng_next(&rng) % 5 == 0) /* the same page again */
                snprintf(x->url, sizeof x->url, "http://www.host%u.example/s%u/c0/amp",
                         (unsigned)(d[n - 1 - c].url[12] - '0'), story);
        }
    }
    return n;
}

static void assignment_matches_brute_force(void **state)
{
    (void)state;
    static struct doc d[200];
    int64_t got[200], want[200];
    struct story_params p;
    story_params_default(&p);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        size_t n = corpus(d, 200, seed * 7919);
        struct story_assigner *a;
        assert_int_equal(story_assigner_new(&a, &p), 0);
        for (size_t i = 0; i < n; i++) {
            struct story_input in = {d[i].url, d[i].title, d[i].desc, d[i].content, d[i].t};
            assert_int_equal(story_assign(a, &in, &got[i], NULL), 0);
        }
        story_assigner_free(a);
        oracle(d, n, &p, want);
        size_t joined = 0;
        for (size_t i = 0; i < n; i++) {
            if (got[i] != want[i])
                fail_msg("seed %llu article %zu (%s): story %lld, the oracle says %lld",
                         (unsigned long long)seed, i, d[i].url, (long long)got[i],
                         (long long)want[i]);
            joined += got[i] != story_id_for_url(d[i].url);
        }
        assert_true(joined > 0); /* the corpus has copies: the test can fail */
    }
}

/* The window's memory follows publication time: articles two windows
 * older than the recent ones go (an import of years of articles holds a
 * few days of them), one article dated years ahead does not empty it, and
 * a copy of a recent article still finds it. */
static void the_window_follows_time(void **state)
{
    (void)state;
    struct story_params p;
    story_params_default(&p); /* 3 days */
    struct story_assigner *a;
    assert_int_equal(story_assigner_new(&a, &p), 0);
    const int64_t t0 = 1600000000, step = 120; /* one article every 2 minutes */
    const size_t n = 30000;
    char url[64], text[256];
    int64_t story, first_recent = 0;
    size_t most = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t t = t0 + (int64_t)i * (int64_t)step;
        if (i == n / 2) /* a bogus date, ten years ahead */
            t += 10 * 365 * 86400LL;
        snprintf(url, sizeof url, "https://site%zu.example/a/%zu", i % 7, i);
        snprintf(text, sizeof text,
                 "report %zu alpha%zu beta%zu gamma%zu delta%zu epsilon%zu zeta%zu eta%zu "
                 "theta%zu iota%zu kappa%zu",
                 i, i, i, i, i, i, i, i, i, i, i);
        struct story_input in = {url, NULL, NULL, text, t};
        assert_int_equal(story_assign(a, &in, &story, NULL), 0);
        if (i == n - 10)
            first_recent = story;
        if (story_assigner_size(a) > most)
            most = story_assigner_size(a);
    }
    /* 3-day window: 2,160 articles; two windows kept, four times that
     * before a clean-up; without it all 30,000 */
    assert_true(most < 4 * (2 * 2160 + 300)); /* + the last 1 % of times (lsh.c) */
    assert_true(story_assigner_size(a) >= 2160);
    /* a copy of article n-10 from another site joins it */
    snprintf(text, sizeof text,
             "report %zu alpha%zu beta%zu gamma%zu delta%zu epsilon%zu zeta%zu eta%zu "
             "theta%zu iota%zu kappa%zu",
             n - 10, n - 10, n - 10, n - 10, n - 10, n - 10, n - 10, n - 10, n - 10, n - 10,
             n - 10);
    struct story_input copy = {"https://other.example/copy", NULL, NULL, text,
                               t0 + (int64_t)(n - 5) * step};
    enum story_rule why;
    assert_int_equal(story_assign(a, &copy, &story, &why), 0);
    assert_int_equal(why, STORY_RULE_SIMILAR);
    assert_int_equal(story, first_recent);
    story_assigner_free(a);
}

/* A site's boiler-plate (one template under many URLs and titles: market
 * reports, a consent wall) joins no other site's page by similarity, and
 * a real copy from another site still does. */
static void a_sites_boilerplate_joins_nothing(void **state)
{
    (void)state;
    struct story_assigner *a;
    assert_int_equal(story_assigner_new(&a, NULL), 0);
    const char *tmpl = "The latest report on the global market covers the whole world and "
                       "the regional aspects of the market with forecasts for the years to "
                       "come and the leading players of the industry";
    struct story_input first = {"https://reports.example/a", "Market of valves", NULL, tmpl,
                                1700000000};
    struct story_input second = {"https://reports.example/b", "Market of pumps", NULL, tmpl,
                                 1700000600};
    struct story_input other = {"https://spam.example/c", "Market of glass", NULL, tmpl,
                                1700001200};
    int64_t s1, s2, s3;
    enum story_rule why;
    assert_int_equal(story_assign(a, &first, &s1, NULL), 0);
    assert_int_equal(story_assign(a, &second, &s2, &why), 0);
    assert_int_equal(why, STORY_RULE_NEW); /* one site: no join by similarity */
    assert_int_not_equal(s2, s1);
    /* like the pages of two stories: the text is their template */
    assert_int_equal(story_assign(a, &other, &s3, &why), 0);
    assert_int_equal(why, STORY_RULE_NEW);
    /* and the template's next page on its own site is the site's
     * boiler-plate, though another site's page is like it too */
    struct story_input third = {"https://spam.example/d", "Market of steel", NULL, tmpl,
                                1700001800};
    assert_int_equal(story_assign(a, &third, &s3, &why), 0);
    assert_int_equal(why, STORY_RULE_NEW);
    /* a copy of a text no site holds twice joins across sites */
    const char *news = "The committee voted on Tuesday to approve the new budget for schools "
                       "roads and hospitals after a long debate in the regional parliament";
    struct story_input orig = {"https://one.example/budget", "Budget approved", NULL, news,
                               1700002000};
    struct story_input copy = {"https://two.example/b", "Parliament passes budget", NULL, news,
                               1700002600};
    assert_int_equal(story_assign(a, &orig, &s1, NULL), 0);
    assert_int_equal(story_assign(a, &copy, &s2, &why), 0);
    assert_int_equal(why, STORY_RULE_SIMILAR);
    assert_int_equal(s2, s1);
    story_assigner_free(a);
}

/* --- the store ------------------------------------------------------------------- */

static struct article art(const char *url, const char *title, int64_t t)
{
    struct article a = {0};
    a.url = url;
    a.canonical_url = url;
    a.title = title;
    a.description = "The committee voted on Tuesday to approve the new budget for schools, "
                    "roads and hospitals after a long debate in the regional parliament.";
    a.published_at = t;
    a.domain = "example.com";
    return a;
}

static void stored_articles_carry_their_story(void **state)
{
    (void)state;
    char tmp[] = "/tmp/newsd-story-XXXXXX", dir[64];
    struct store *s;
    struct err err;
    err_clear(&err);
    assert_non_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/store", tmp);
    assert_int_equal(store_open(&s, dir, &err), 0);
    struct article a[3] = {
        art("https://one.example/budget", "Regional parliament approves the budget", 1700000000),
        art("https://two.example/b/1", "Parliament approves budget after debate", 1700000600),
        art("https://three.example/storm", "Storm hits the northern coast overnight", 1700000700),
    };
    a[2].description = "A powerful storm brought heavy rain and strong winds to the northern "
                       "coast on Sunday, cutting power to thousands of homes near the harbour.";
    assert_int_equal(store_articles_put(s, a, 3, NULL, &err), 0);
    assert_true(a[0].story_id > 0);
    assert_int_equal(a[1].story_id, a[0].story_id);
    assert_int_equal(a[0].story_id, story_id_for_url("https://one.example/budget"));
    assert_int_not_equal(a[2].story_id, a[0].story_id);
    store_close(s);

    /* a new process: its window starts from what is stored */
    assert_int_equal(store_open(&s, dir, &err), 0);
    struct article b =
        art("https://four.example/x", "Budget passes in the regional parliament", 1700003600);
    assert_int_equal(store_articles_put(s, &b, 1, NULL, &err), 0);
    assert_int_equal(b.story_id, a[0].story_id);
    store_close(s);
    remove_tree(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(url_variants_share_a_key),
        cmocka_unit_test(sites_ignore_subdomains_and_suffixes),
        cmocka_unit_test(a_sites_boilerplate_joins_nothing),
        cmocka_unit_test(titles_lose_their_publisher_tail),
        cmocka_unit_test(sketches_measure_overlap),
        cmocka_unit_test(assignment_matches_brute_force),
        cmocka_unit_test(the_window_follows_time),
        cmocka_unit_test(stored_articles_carry_their_story),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
