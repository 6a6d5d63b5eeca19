/* newsd_bm25(articles_fts, ctx): FTS5's bm25() (sqlite ext/fts5/fts5_aux.c)
 * with the column weights the journal ranks by, computed by the same
 * expression, but over statistics the caller may give: a cursor walk
 * freezes them at its first page (store_match_ranked.stats), so that an
 * article's score stays a function of the article while the collection
 * grows and shrinks, and "after the last score given" stays a place.
 * Without given statistics it reads FTS5's own, as bm25() does, and says
 * which they were. ctx is a struct store_bm25 bound with
 * sqlite3_bind_pointer(..., STORE_BM25_POINTER, NULL). */
#ifndef NEWSD_STORE_SQLITE_BM25_H
#define NEWSD_STORE_SQLITE_BM25_H

#include <stdbool.h>

#include <sqlite3.h>

#include "store/journal.h"

#define STORE_BM25_FUNCTION "newsd_bm25"
#define STORE_BM25_POINTER "newsd_bm25_ctx"

/* One statement's ranking: what it ranks with, and why it failed. */
struct store_bm25 {
    const struct store_match_stats *frozen; /* NULL: FTS5's own */
    struct store_match_stats used;          /* the statistics ranked with */
    bool ready;                             /* used and idf made (first row) */
    bool unfit;                             /* frozen has another number of phrases */
    bool too_many;                          /* more than STORE_MATCH_PHRASES_MAX phrases */
    double idf[STORE_MATCH_PHRASES_MAX], avgdl;
};

/* Register newsd_bm25 on db. Returns 0 or ERR_STORE. */
int store_sqlite_bm25_register(sqlite3 *db);

#endif
