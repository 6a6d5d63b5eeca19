/* util/fsync.h: a file and a directory are synced; what cannot be opened
 * (a missing path, a file taken for a directory) is ERR_IO naming it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_tmpdir.h"

#include "util/err.h"
#include "util/fsync.h"

static void a_file_and_its_directory_are_synced(void **state)
{
    (void)state;
    char dir[64], file[96];
    struct err err = {0};
    snprintf(dir, sizeof dir, "/tmp/newsd-fsync-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/f", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);

    assert_int_equal(fsync_path(file, false, &err), 0);
    assert_int_equal(fsync_path(dir, true, &err), 0);
    /* A file is not a directory: O_DIRECTORY refuses it. */
    assert_int_equal(fsync_path(file, true, &err), ERR_IO);
    assert_non_null(strstr(err.msg, "cannot open"));
    assert_non_null(strstr(err.msg, file));
    remove_tree(dir);
}

static void a_missing_path_is_an_io_error_naming_it(void **state)
{
    (void)state;
    struct err err = {0};
    assert_int_equal(fsync_path("/nonexistent/newsd-fsync", false, &err), ERR_IO);
    assert_string_equal(err.msg, "cannot open /nonexistent/newsd-fsync: No such file or directory");
    assert_int_equal(fsync_path("/nonexistent/newsd-fsync", true, &err), ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_file_and_its_directory_are_synced),
        cmocka_unit_test(a_missing_path_is_an_io_error_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
