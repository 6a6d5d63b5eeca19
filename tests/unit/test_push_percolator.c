/* push/percolator.h: thousands of random saved searches over the fixture
 * corpus (test_articles.h), the percolator's answer for every article held
 * to testing every search on it (brute force), before and after searches
 * are removed and replaced; and the percolator used from one thread while
 * another changes it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <cmocka.h>

#include "test_articles.h"

#include "index/match.h"
#include "push/percolator.h"
#include "query/query.h"

#define SEARCHES 3000

struct fixture {
    struct test_articles t;
    struct percolator *p;
    /* the brute force's copy of each search: NULL when it has none */
    struct index_matcher *m[SEARCHES];
    uint64_t id[SEARCHES];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct err err;
    assert_non_null(f);
    err_clear(&err);
    test_articles_open(&f->t);
    assert_int_equal(percolator_new(&f->p, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    percolator_free(f->p);
    for (size_t i = 0; i < SEARCHES; i++)
        index_matcher_free(f->m[i]);
    test_articles_close(&f->t);
    free(f);
    return 0;
}

/* A random search (test_requests.h) as two matchers of the same request:
 * one for the percolator, one for the brute force. */
static bool random_search(struct fixture *f, struct index_matcher **a, struct index_matcher **b)
{
    struct arena ar;
    struct index_request req;
    struct err err;
    char desc[1500];
    bool ok = false;
    arena_init(&ar, 0);
    err_clear(&err);
    if (random_request(&f->t.c, &ar, &req, desc, sizeof desc) &&
        index_matcher_new(a, &req, &err) == 0) {
        assert_int_equal(index_matcher_new(b, &req, &err), 0);
        ok = true;
    }
    arena_release(&ar);
    return ok;
}

static void file_search(struct fixture *f, size_t i, uint64_t id)
{
    struct index_matcher *a = NULL, *b = NULL;
    struct err err;
    while (!random_search(f, &a, &b))
        ;
    err_clear(&err);
    assert_int_equal(percolator_add(f->p, id, a, &err), 0);
    index_matcher_free(f->m[i]);
    f->m[i] = b;
    f->id[i] = id;
}

/* Every article: the percolator's ids against every filed search tested. */
static size_t same_as_brute_force(struct fixture *f)
{
    size_t total = 0;
    uint64_t *want = calloc(SEARCHES, sizeof *want);
    assert_non_null(want);
    for (size_t d = 0; d < f->t.n; d++) {
        uint64_t *got = NULL;
        size_t n_got = 0, n_want = 0;
        struct err err;
        err_clear(&err);
        assert_int_equal(percolator_match(f->p, f->t.docs[d], &got, &n_got, &err), 0);
        /* ids are filed ascending by slot (file_search's callers keep it so) */
        for (size_t i = 0; i < SEARCHES; i++) {
            if (f->m[i] && index_matcher_test(f->m[i], f->t.docs[d]))
                want[n_want++] = f->id[i];
        }
        if (n_got != n_want || (n_got && memcmp(got, want, n_got * sizeof *got) != 0)) {
            print_message("article %lld: the percolator finds %zu searches, brute force %zu\n",
                          (long long)f->t.ids[d], n_got, n_want);
            fail();
        }
        assert_true(n_got > 0 || got == NULL);
        total += n_got;
        free(got);
    }
    free(want);
    return total;
}

static void the_percolator_finds_what_testing_every_search_finds(void **state)
{
    struct fixture *f = *state;
    srand(17);
    for (size_t i = 0; i < SEARCHES; i++)
        file_search(f, i, 1000 + 3 * i);
    assert_int_equal(percolator_size(f->p), SEARCHES);
    size_t matches = same_as_brute_force(f);
    print_message("%d searches, %zu articles: %zu matches\n", SEARCHES, f->t.n, matches);
    assert_true(matches > f->t.n); /* the searches do find articles */

    /* Remove every third; replace every third by another search. */
    for (size_t i = 0; i < SEARCHES; i += 3) {
        percolator_remove(f->p, f->id[i]);
        index_matcher_free(f->m[i]);
        f->m[i] = NULL;
    }
    for (size_t i = 1; i < SEARCHES; i += 3)
        file_search(f, i, f->id[i]);
    percolator_remove(f->p, 7); /* an unknown id: nothing */
    assert_int_equal(percolator_size(f->p), SEARCHES - (SEARCHES + 2) / 3);
    same_as_brute_force(f);

    /* The removed ones back, under their old ids. */
    for (size_t i = 0; i < SEARCHES; i += 3)
        file_search(f, i, 1000 + 3 * i);
    assert_int_equal(percolator_size(f->p), SEARCHES);
    same_as_brute_force(f);
}

static void an_empty_percolator_matches_nothing(void **state)
{
    struct fixture *f = *state;
    struct percolator *p = NULL;
    struct err err;
    uint64_t *ids = (uint64_t *)&err; /* must be reset */
    size_t n = 9;
    err_clear(&err);
    assert_int_equal(percolator_new(&p, &err), 0);
    assert_int_equal(percolator_size(p), 0);
    assert_int_equal(percolator_match(p, f->t.docs[0], &ids, &n, &err), 0);
    assert_null(ids);
    assert_int_equal(n, 0);
    percolator_remove(p, 1);
    percolator_free(p);
    percolator_free(NULL);
}

/* A search that no key can stand for (only a date window) is tried on
 * every article, and one that has keys is found by each of them. */
static void searches_without_keys_are_tried_on_every_article(void **state)
{
    struct fixture *f = *state;
    struct percolator *p = NULL;
    struct index_request all = {.from = INT64_MIN, .to = INT64_MAX};
    struct index_matcher *m = NULL;
    struct err err;
    const char *const *keys;
    size_t n_keys;
    err_clear(&err);
    assert_int_equal(percolator_new(&p, &err), 0);
    assert_int_equal(index_matcher_new(&m, &all, &err), 0);
    index_matcher_keys(m, &keys, &n_keys);
    assert_int_equal(n_keys, 0);
    assert_int_equal(percolator_add(p, 42, m, &err), 0);
    for (size_t d = 0; d < f->t.n; d++) {
        uint64_t *ids = NULL;
        size_t n = 0;
        assert_int_equal(percolator_match(p, f->t.docs[d], &ids, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_int_equal(ids[0], 42);
        free(ids);
    }
    percolator_free(p);
}

/* Searches come and go with words never seen before (a stream reconnecting
 * with new words each time): the key table stays bounded by the searches
 * filed, and those still find what brute force finds. */
static void keys_of_removed_searches_do_not_pile_up(void **state)
{
    struct fixture *f = *state;
    struct err err;
    char q[64];
    err_clear(&err);
    for (size_t i = 0; i < SEARCHES; i += 3)
        file_search(f, i, 1000 + 3 * i); /* new lasting searches, random words */
    size_t lasting = percolator_keys(f->p), most = 0;
    for (unsigned round = 0; round < 20000; round++) {
        struct arena a;
        struct index_request req = {.from = INT64_MIN, .to = INT64_MAX};
        struct index_matcher *m = NULL;
        arena_init(&a, 0);
        snprintf(q, sizeof q, "zq%uvx OR zq%uvy", round, round);
        assert_int_equal(query_parse(&a, q, strlen(q), (struct query_node **)&req.q, &err), 0);
        assert_int_equal(index_matcher_new(&m, &req, &err), 0);
        assert_int_equal(percolator_add(f->p, 1000000 + round % 7, m, &err), 0);
        if (round % 7 == 6) {
            for (uint64_t id = 1000000; id < 1000007; id++)
                percolator_remove(f->p, id);
        }
        arena_release(&a);
        size_t k = percolator_keys(f->p);
        if (k > most)
            most = k;
    }
    for (uint64_t id = 1000000; id < 1000007; id++)
        percolator_remove(f->p, id); /* brute force has none of them */
    /* 40,000 distinct words were filed; at most the lasting searches' keys,
     * 14 more of the ones filed now, and as many again (or 1,024) empty */
    print_message("keys: %zu of the lasting searches, at most %zu held\n", lasting, most);
    assert_true(most <= 2 * (lasting + 14) + 1024);
    same_as_brute_force(f);
}

/* --- one thread matching while another files and removes --------------------------- */

struct churn {
    struct fixture *f;
    atomic_bool stop;
    size_t rounds;
};

static void *match_loop(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(&c->stop)) {
        for (size_t d = 0; d < c->f->t.n && !atomic_load(&c->stop); d++) {
            uint64_t *ids = NULL;
            size_t n = 0;
            struct err err;
            err_clear(&err);
            if (percolator_match(c->f->p, c->f->t.docs[d], &ids, &n, &err) != 0)
                abort();
            for (size_t i = 1; i < n; i++) {
                if (ids[i - 1] >= ids[i])
                    abort(); /* ascending, each once */
            }
            free(ids);
        }
        c->rounds++;
    }
    return NULL;
}

static void searches_change_while_articles_are_matched(void **state)
{
    struct fixture *f = *state;
    struct churn c = {.f = f};
    pthread_t t;
    srand(18);
    assert_int_equal(pthread_create(&t, NULL, match_loop, &c), 0);
    for (int round = 0; round < 5; round++) {
        for (size_t i = (size_t)round % 2; i < SEARCHES; i += 2)
            file_search(f, i, 1000 + 3 * i);
        for (size_t i = (size_t)round % 3; i < SEARCHES; i += 5) {
            percolator_remove(f->p, f->id[i]);
            index_matcher_free(f->m[i]);
            f->m[i] = NULL;
        }
    }
    atomic_store(&c.stop, true);
    pthread_join(t, NULL);
    print_message("%zu rounds of matching ran beside the changes\n", c.rounds);
    same_as_brute_force(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_percolator_finds_what_testing_every_search_finds),
        cmocka_unit_test(an_empty_percolator_matches_nothing),
        cmocka_unit_test(searches_without_keys_are_tried_on_every_article),
        cmocka_unit_test(keys_of_removed_searches_do_not_pile_up),
        cmocka_unit_test(searches_change_while_articles_are_matched),
    };
    return cmocka_run_group_tests_name("percolator", tests, setup, teardown);
}
