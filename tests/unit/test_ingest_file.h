/* Shared by the unit tests that fill a store from the fixture files: one
 * JSONL file imported as `newsd import` would (a fixed clock, the report
 * thrown away). */
#ifndef NEWSD_TEST_INGEST_FILE_H
#define NEWSD_TEST_INGEST_FILE_H

#include <stdio.h>

#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "store/store.h"
#include "util/err.h"

static inline void test_ingest_file(struct store *s, const char *file)
{
    struct ingest_options opt = {.now = 1700000000};
    struct ingest_stats st;
    struct err err;
    FILE *null = fopen("/dev/null", "w");
    err_clear(&err);
    opt.report = null;
    assert_int_equal(ingest_import_file(s, file, &opt, &st, &err), 0);
    fclose(null);
}

#endif
