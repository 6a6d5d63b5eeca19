/* libFuzzer harness: ARC URL-record lines (ingest/imports/imports_internal.h) on arbitrary
 * bytes. Invariants: a parse gives 0 with views inside the line, a known
 * version and a length that the digits allow, or ERR_PARSE with a reason;
 * arc_line_looks never reads past the line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/imports/imports_internal.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan sees any read past the line */
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    struct arc_line al;
    const char *why = NULL;
    int rc = arc_line_parse(&al, line, size, &why);
    if (rc == 0) {
        CHECK(al.version == 1 || al.version == 2);
        CHECK(al.url >= line && al.url + al.url_len <= line + size && al.url_len > 0);
        CHECK(al.ctype >= line && al.ctype + al.ctype_len <= line + size && al.ctype_len > 0);
        CHECK(al.length < 1000000000000000ull); /* at most 15 digits */
        CHECK(al.date_s >= -62167219200ll);     /* year 0 or later */
        CHECK(arc_line_looks(line, size));
    } else {
        CHECK(rc == ERR_PARSE && why && why[0]);
    }
    (void)arc_line_looks(line, size);
    free(line);
    return 0;
}
