/* Skips that say why (issue 29 item 3). A unit test skips only through one
 * of these two, each printing one "SKIP <kind>: <why>" line that
 * scripts/run-unit.sh (make unit) lists after the run, so no skip goes
 * unnoticed:
 *   TEST_SKIP_BY_DESIGN   the case does not apply to this configuration of
 *                         the test (one run of several, a kernel without
 *                         IPv6); never a failure.
 *   TEST_SKIP_PRECONDITION  something the machine lacks; with CI=true (.ci/run,
 *                         as root with every package installed) a failure,
 *                         since CI is where every precondition must hold.
 * Include after <cmocka.h>. */
#ifndef NEWSD_TEST_SKIP_H
#define NEWSD_TEST_SKIP_H

#include <stdlib.h>
#include <string.h>

static inline int test_skip_in_ci(void)
{
    const char *ci = getenv("CI");
    return ci != NULL && (strcmp(ci, "true") == 0 || strcmp(ci, "TRUE") == 0);
}

#define TEST_SKIP_BY_DESIGN(why)                                                                   \
    do {                                                                                           \
        print_message("SKIP by design: %s\n", (why));                                              \
        skip();                                                                                    \
    } while (0)

#define TEST_SKIP_PRECONDITION(why)                                                                \
    do {                                                                                           \
        if (test_skip_in_ci())                                                                     \
            fail_msg("CI=true: a missing precondition is a failure here: %s", (why));              \
        print_message("SKIP precondition: %s\n", (why));                                           \
        skip();                                                                                    \
    } while (0)

#endif
