/* CHECK(c) for the harnesses' own invariants: a failed one aborts, which
 * libFuzzer reports as a crash with its input. */
#ifndef NEWSD_FUZZ_CHECK_H
#define NEWSD_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "check failed: %s (line %d)\n", #c, __LINE__);                         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as the C string a parser is handed: a copy with a NUL after
 * it (one inside ends the string), exactly sized so reads past it are
 * caught; NULL when out of memory (the input is passed over). */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

#endif
