/* libFuzzer harness: ingest_url_canonical. Invariants: an accepted URL's
 * canonical form is accepted again and unchanged (idempotence), with the
 * same domain; it is http(s), has no fragment and no blanks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* a NUL inside simply ends the string */
    struct arena a;
    arena_init(&a, 1 << 20);
    char *canon, *domain;
    if (ingest_url_canonical(&a, s, &canon, &domain) == 0) {
        char *again, *dom2;
        if (ingest_url_canonical(&a, canon, &again, &dom2) != 0)
            abort();
        if (strcmp(again, canon) != 0 || strcmp(dom2, domain) != 0)
            abort();
        if (strncmp(canon, "http://", 7) != 0 && strncmp(canon, "https://", 8) != 0)
            abort();
        if (strpbrk(canon, "# \t\r\n") || domain[0] == '\0' || !strstr(canon, domain))
            abort();
    }
    arena_release(&a);
    free(s);
    return 0;
}
