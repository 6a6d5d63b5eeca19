/* CHECK(c) for the harnesses' own invariants: a failed one aborts, which
 * libFuzzer reports as a crash with its input. */
#ifndef NEWSD_FUZZ_CHECK_H
#define NEWSD_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "check failed: %s (line %d)\n", #c, __LINE__);                         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
