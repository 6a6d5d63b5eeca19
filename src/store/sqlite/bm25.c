/* newsd_bm25 (store/sqlite/bm25.h). */
#include "store/sqlite/bm25.h"

#include <math.h>
#include <string.h>

#include "text/text_fts5.h"
#include "util/err.h"

#include "util/banned.h"

/* The weights of match_ids_sql's bm25(articles_fts, 3.0, 1.5, 1.0, 0.0):
 * title, description, content, meta; FTS5 weighs a column beyond them 1. */
static const double column_weight[] = {3.0, 1.5, 1.0, 0.0};

/* fts5CountCb(): a phrase's rows, one call per row. */
static int count_row(const Fts5ExtensionApi *api, Fts5Context *fts, void *ctx)
{
    (void)api;
    (void)fts;
    (*(int64_t *)ctx)++;
    return SQLITE_OK;
}

/* fts5Bm25GetData(): the statistics (given, or FTS5's) and each phrase's
 * IDF, clamped so that it is never negative. */
static int prepare(const Fts5ExtensionApi *api, Fts5Context *fts, struct store_bm25 *b)
{
    int nphrases = api->xPhraseCount(fts);
    int rc = SQLITE_OK;
    if (nphrases > STORE_MATCH_PHRASES_MAX) {
        b->too_many = true;
        return SQLITE_ERROR;
    }
    if (b->frozen) {
        /* (statistics no collection has: avgdl would be 0 or NaN) */
        if (b->frozen->nphrases != (size_t)nphrases || b->frozen->nrow <= 0 ||
            (b->frozen->ntoken <= 0 && nphrases > 0)) {
            b->unfit = true;
            return SQLITE_ERROR;
        }
        b->used = *b->frozen;
    } else {
        sqlite3_int64 nrow = 0, ntoken = 0;
        memset(&b->used, 0, sizeof b->used);
        if ((rc = api->xRowCount(fts, &nrow)) == SQLITE_OK)
            rc = api->xColumnTotalSize(fts, -1, &ntoken);
        b->used.nrow = nrow;
        b->used.ntoken = ntoken;
        b->used.nphrases = (size_t)nphrases;
        for (int i = 0; rc == SQLITE_OK && i < nphrases; i++)
            rc = api->xQueryPhrase(fts, i, &b->used.hits[i], count_row);
        if (rc != SQLITE_OK)
            return rc;
    }
    b->avgdl = (double)b->used.ntoken / (double)b->used.nrow;
    for (size_t i = 0; i < b->used.nphrases; i++) {
        int64_t hits = b->used.hits[i];
        double idf = log((b->used.nrow - hits + 0.5) / (hits + 0.5));
        if (idf <= 0.0)
            idf = 1e-6;
        b->idf[i] = idf;
    }
    b->ready = true;
    return SQLITE_OK;
}

/* fts5Bm25Function(), the sum in its order: -1 * score, lower is better. */
static void bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                 sqlite3_value **val)
{
    const double k1 = 1.2;
    const double b = 0.75;
    struct store_bm25 *st = nval == 1 ? sqlite3_value_pointer(val[0], STORE_BM25_POINTER) : NULL;
    double freq[STORE_MATCH_PHRASES_MAX] = {0}, score = 0.0;
    int rc = st ? SQLITE_OK : SQLITE_MISUSE, ninst = 0, ntok = 0;

    if (rc == SQLITE_OK && !st->ready)
        rc = prepare(api, fts, st);
    if (rc == SQLITE_OK)
        rc = api->xInstCount(fts, &ninst);
    for (int i = 0; rc == SQLITE_OK && i < ninst; i++) {
        int ip, ic, io;
        rc = api->xInst(fts, i, &ip, &ic, &io);
        if (rc == SQLITE_OK && ip >= 0 && (size_t)ip < st->used.nphrases)
            freq[ip] += ic >= 0 && (size_t)ic < sizeof column_weight / sizeof column_weight[0]
                            ? column_weight[ic]
                            : 1.0;
    }
    if (rc == SQLITE_OK)
        rc = api->xColumnSize(fts, -1, &ntok);
    double D = (double)ntok;
    for (size_t i = 0; rc == SQLITE_OK && i < st->used.nphrases; i++)
        score +=
            st->idf[i] * ((freq[i] * (k1 + 1.0)) / (freq[i] + k1 * (1 - b + b * D / st->avgdl)));
    if (rc == SQLITE_OK)
        sqlite3_result_double(ctx, -1.0 * score);
    else
        sqlite3_result_error_code(ctx, rc);
}

int store_sqlite_bm25_register(sqlite3 *db)
{
    fts5_api *api = text_fts5_api(db);
    if (api == NULL ||
        api->xCreateFunction(api, STORE_BM25_FUNCTION, NULL, bm25, NULL) != SQLITE_OK)
        return ERR_STORE;
    return 0;
}
