/* newsd's extractor over a list of pages, for scoring by other tools
 * (bench/pages_devset.py, make bench-pages): reads lines "name<TAB>url<TAB>path"
 * on stdin (url may be "-"), writes one JSON line per page on stdout:
 * {"file", "text", "author", "title", "readerable", "seconds"}. "text" is
 * null when the page is not readerable, as `newsd import` then stores
 * nothing. "seconds": CPU time of the extraction alone. Figures only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/buf.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b;
    buf_init(&b, 0);
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, k);
    fclose(f);
    return buf_detach(&b, n);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

int main(void)
{
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *name = line, *url = strchr(name, '\t'), *path = url ? strchr(url + 1, '\t') : NULL;
        if (!path)
            continue;
        *url++ = '\0';
        *path++ = '\0';
        size_t n = 0;
        char *page = slurp(path, &n);
        if (!page) {
            fprintf(stderr, "%s: cannot read\n", path);
            continue;
        }
        struct arena a;
        arena_init(&a, 0);
        struct extracted_page pg;
        struct extract_options opt = {.url = strcmp(url, "-") ? url : NULL};
        double t0 = cpu_now();
        int rc = extract_page(&a, page, n, &opt, &pg);
        double secs = cpu_now() - t0;
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(name));
        bool ok = rc == 0 && pg.readerable;
        json_object_set_new(o, "text", ok ? str_or_null(pg.text) : json_null());
        json_object_set_new(o, "author", rc == 0 ? str_or_null(pg.byline) : json_null());
        json_object_set_new(o, "title", rc == 0 ? str_or_null(pg.title) : json_null());
        json_object_set_new(o, "readerable", json_boolean(ok));
        json_object_set_new(o, "raw_text", rc == 0 ? str_or_null(pg.text) : json_null());
        json_object_set_new(o, "seconds", json_real(secs));
        char *js = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (js)
            puts(js);
        free(js);
        json_decref(o);
        arena_release(&a);
        free(page);
    }
    return 0;
}
