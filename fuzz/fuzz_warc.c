/* libFuzzer harness: the WARC reader (ingest/imports/imports.h) on arbitrary bytes,
 * read as a file (fmemopen), plain or gzip as the bytes say: WARC/0.17 to
 * 1.1 and ARC v1/v2 records, mixed as the bytes please (the corpus has
 * seeds of each, valid and broken). Invariants: it ends (each call
 * consumes input or ends), every record has a known format and a type,
 * records' bodies are within their bounds, a response's or resource's
 * payload is no longer than WARC_MAX_BODY. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ingest/imports/imports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    struct warc_reader *r = NULL;
    struct err e;
    err_clear(&e);
    if (warc_open_stream(&r, f, &e) == 0) {
        struct warc_record rec;
        uint64_t last = 0;
        int rc;
        size_t n = 0;
        while ((rc = warc_next(r, &rec, &e)) != WARC_END && rc >= 0) {
            n++;
            CHECK(n <= size + 1); /* every record or report consumes input */
            if (rc == WARC_BAD) {
                CHECK(e.msg[0] != '\0');
                continue;
            }
            CHECK(rec.offset >= last || last == 0);
            last = rec.offset;
            CHECK(rec.block && rec.block_len <= WARC_MAX_BLOCK);
            CHECK((unsigned)rec.format < WARC_FORMAT_COUNT);
            CHECK(strcmp(warc_format_name(rec.format), "unknown") != 0);
            if (rec.format >= WARC_FORMAT_ARC_1)
                CHECK(rec.type != NULL); /* ARC records are given one */
            if (rec.body)
                CHECK(rec.body_len <= WARC_MAX_BODY);
            if (rec.http_status) {
                CHECK(rec.http_status >= 0 && rec.http_status <= 999);
                CHECK(rec.body && rec.body_len <= WARC_MAX_BODY);
            }
        }
        warc_close(r);
    }
    fclose(f);
    return 0;
}
