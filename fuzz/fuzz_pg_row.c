/* libFuzzer harness: the PostgreSQL article log reader's row decoding
 * (store_pg_log_row, src/store/pg/log.c; issue 29 item 5): what a cluster
 * node makes of the text a database server sends for each change, built
 * here as a PGresult (libpq's PQmakeEmptyPGresult/PQsetvalue) without a
 * server.
 * Input: rows separated by '\n', fields by '\t' in the column order of a
 * log read (deleted, then STORE_PG_ARTICLE_COLUMNS: 20 in all; missing ones
 * are SQL NULL, extra ones ignored); a field "\N" is SQL NULL. Values may
 * hold any other byte; a NUL ends one (PostgreSQL's text never holds it).
 * Invariants: every string is the field's bytes up to its first NUL; codes
 * are "" or two bytes; NULL columns give NULL strings, 0 numbers, "" codes
 * and false flags. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "check.h"
#include "store/pg/internal.h"
#include "util/arena.h"

#define COLS 20
#define ROWS_MAX 64

static void check_str(const PGresult *r, int i, int j, const char *s)
{
    if (PQgetisnull(r, i, j)) {
        CHECK(s == NULL);
        return;
    }
    const char *v = PQgetvalue(r, i, j);
    size_t n = strnlen(v, (size_t)PQgetlength(r, i, j));
    CHECK(s != NULL && strlen(s) == n && memcmp(s, v, n) == 0);
}

static void check_code(const char *c)
{
    size_t n = strnlen(c, 3);
    CHECK(n == 0 || n == 2);
}

static void check_row(const PGresult *r, int i, const struct article *a, bool deleted)
{
    static const int cols[] = {3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 16};
    const char *strs[] = {a->url,     a->canonical_url, a->source_id,   a->source_name,
                          a->author,  a->title,         a->description, a->url_to_image,
                          a->content, a->domain,        a->category};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        check_str(r, i, cols[k], strs[k]);
    check_code(a->language);
    check_code(a->country);
    if (PQgetisnull(r, i, 0))
        CHECK(!deleted);
    if (PQgetisnull(r, i, 11))
        CHECK(a->published_at == 0);
    if (PQgetisnull(r, i, 14))
        CHECK(a->language[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    CHECK(r != NULL);
    PGresAttDesc desc[COLS];
    memset(desc, 0, sizeof desc);
    for (int j = 0; j < COLS; j++)
        desc[j].name = (char *)"c";
    CHECK(PQsetResultAttrs(r, COLS, desc));

    const uint8_t *p = data, *end = data + size;
    int rows = 0;
    while (p < end && rows < ROWS_MAX) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *stop = nl ? nl : end;
        int j = 0;
        for (const uint8_t *f = p; j < COLS; j++) {
            const uint8_t *tab = memchr(f, '\t', (size_t)(stop - f));
            const uint8_t *fe = tab ? tab : stop;
            bool null = (fe - f == 2 && f[0] == '\\' && f[1] == 'N');
            /* PostgreSQL's text holds no NUL byte: a value ends at one */
            const uint8_t *nul = memchr(f, '\0', (size_t)(fe - f));
            int len = (int)((nul ? nul : fe) - f);
            CHECK(PQsetvalue(r, rows, j, null ? NULL : (char *)f, null ? -1 : len));
            if (!tab) {
                j++;
                break;
            }
            f = tab + 1;
        }
        for (; j < COLS; j++) /* missing columns: SQL NULL */
            CHECK(PQsetvalue(r, rows, j, NULL, -1));
        rows++;
        p = nl ? nl + 1 : end;
    }

    struct arena a;
    arena_init(&a, 1 << 16);
    for (int i = 0; i < PQntuples(r); i++) {
        struct article art;
        bool deleted;
        CHECK(store_pg_log_row(&a, r, i, &art, &deleted) == 0);
        check_row(r, i, &art, deleted);
    }
    arena_release(&a);
    PQclear(r);
    return 0;
}
