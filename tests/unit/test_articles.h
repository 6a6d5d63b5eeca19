/* Shared by the unit tests of the matching of single articles (test_index_match,
 * test_push_percolator): a real SQLite store built from the real-article
 * fixtures of tests/data/api (and the hand-made articles beside them),
 * every article of it prepared for matching from its row in the log
 * (index/match.h), and the corpus random requests are made of
 * (test_requests.h). */
#ifndef NEWSD_TEST_ARTICLES_H
#define NEWSD_TEST_ARTICLES_H

#include <stdio.h>
#include <stdlib.h>

#include "test_ingest_file.h"
#include "test_requests.h"
#include "test_tmpdir.h"

#include "index/match.h"
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "store/journal.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"

#define TEST_ARTICLES_DATA "../data/api/"

struct test_articles {
    char dir[64];
    struct store *s;
    struct index_match_doc **docs; /* every article, from its row, in seq order */
    int64_t *ids;                  /* their ids */
    size_t n;
    struct test_corpus c;
};

/* Every row of the log prepared for matching, and the corpus learnt from
 * the articles. */
static void test_articles_read(struct test_articles *f)
{
    struct store_reader *rd = NULL;
    struct store_rows *rows = NULL;
    struct store_row row;
    struct err err;
    size_t cap = 0;
    int rc;

    err_clear(&err);
    assert_int_equal(store_reader_open(&rd, store_sqlite_path(f->s), &err), 0);
    assert_int_equal(store_rows_after(&rows, rd, 0, &err), 0);
    while ((rc = store_rows_next(rows, &row, &err)) == 1) {
        if (f->n == cap) {
            cap = cap ? cap * 2 : 256;
            f->docs = realloc(f->docs, cap * sizeof *f->docs);
            f->ids = realloc(f->ids, cap * sizeof *f->ids);
            assert_non_null(f->docs);
            assert_non_null(f->ids);
        }
        assert_int_equal(index_match_doc_new(&f->docs[f->n], &row, &err), 0);
        f->ids[f->n++] = row.id;
    }
    assert_int_equal(rc, 0);
    store_rows_free(rows);

    struct arena a;
    arena_init(&a, 0);
    struct article *arts = arena_calloc(&a, f->n, sizeof *arts);
    assert_non_null(arts);
    assert_int_equal(store_reader_articles(rd, &a, f->ids, f->n, arts, &err), 0);
    test_corpus_learn(&f->c, arts, f->n);
    arena_release(&a);
    store_reader_close(rd);
}

/* Build the store in a temporary directory and read it. */
static void test_articles_open(struct test_articles *f)
{
    struct err err;
    size_t n;
    memset(f, 0, sizeof *f);
    err_clear(&err);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-match-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(store_open(&f->s, f->dir, &err), 0);
    assert_int_equal(ingest_sources_import(f->s, TEST_ARTICLES_DATA "sources.jsonl", &n, &err), 0);
    test_ingest_file(f->s, TEST_ARTICLES_DATA "articles.jsonl");
    test_ingest_file(f->s, TEST_ARTICLES_DATA "handmade.jsonl");
    test_ingest_file(f->s, TEST_ARTICLES_DATA "updates.jsonl"); /* upserts: each article once */
    test_articles_read(f);
    assert_true(f->n > 400);
}

static void test_articles_close(struct test_articles *f)
{
    store_close(f->s);
    remove_tree(f->dir);
    for (size_t i = 0; i < f->n; i++)
        index_match_doc_free(f->docs[i]);
    free(f->docs);
    free(f->ids);
    test_corpus_release(&f->c);
}

#endif
