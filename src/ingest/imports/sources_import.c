/* Sources catalogue imports (ingest/ingest.h: ingest_sources_import).
 *
 * Input: a NewsAPI sources response ({"status":"ok","sources":[...]}), or
 * JSONL with one source object per line (a single object alone in the
 * file also works). Keys id (required, non-empty string), name,
 * description, url, category, language, country are stored verbatim —
 * quirks such as language "se" are kept (API.md §8); extra keys popularity
 * (number, higher = more popular) and headlines (bool, default true). A bad
 * entry is reported on stderr as "line N: reason" or "sources[i]: reason"
 * and skipped. Everything is stored in one transaction. */
#include "ingest/ingest.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/imports/imports_internal.h"
#include "util/buf.h"
#include "util/limits.h"

#include "util/banned.h"

/* A catalogue is small; this only stops runaway input. */
#define SOURCES_MAX_FILE_BYTES ((size_t)64 * 1024 * 1024)
#define SOURCES_MAX_FIELD_BYTES (64 * 1024)

struct sources_ctx {
    struct arena *a;
    struct source *list;
    size_t n, cap;
    size_t skipped;
};

static const char *src_str(struct arena *a, const json_t *obj, const char *key, int *rc)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v) || json_string_length(v) > SOURCES_MAX_FIELD_BYTES)
        return NULL;
    char *s = arena_strndup(a, json_string_value(v), json_string_length(v));
    if (!s)
        *rc = ERR_NOMEM;
    return s;
}

/* One source object at `where`; 0, or ERR_NOMEM. */
static int sources_add(struct sources_ctx *c, const json_t *obj, const char *where)
{
    int rc = 0;
    if (!json_is_object(obj)) {
        ingest_report(NULL, "%s: not a JSON object", where);
        c->skipped++;
        return 0;
    }
    const json_t *id = json_object_get(obj, "id");
    if (!json_is_string(id) || json_string_length(id) == 0 ||
        json_string_length(id) > INGEST_MAX_SOURCE_ID_BYTES ||
        strlen(json_string_value(id)) != json_string_length(id)) {
        ingest_report(NULL, "%s: id missing, empty, too long or not a string", where);
        c->skipped++;
        return 0;
    }
    if (arena_grow(c->a, &c->list, &c->cap, c->n, 256, sizeof *c->list) < 0)
        return ERR_NOMEM;
    struct source *s = &c->list[c->n];
    memset(s, 0, sizeof *s);
    s->id = src_str(c->a, obj, "id", &rc);
    s->name = src_str(c->a, obj, "name", &rc);
    s->description = src_str(c->a, obj, "description", &rc);
    s->url = src_str(c->a, obj, "url", &rc);
    s->category = src_str(c->a, obj, "category", &rc);
    s->language = src_str(c->a, obj, "language", &rc);
    s->country = src_str(c->a, obj, "country", &rc);
    const json_t *pop = json_object_get(obj, "popularity");
    s->popularity = json_is_number(pop) ? json_number_value(pop) : 0;
    const json_t *hl = json_object_get(obj, "headlines");
    s->headlines = !json_is_false(hl);
    if (rc < 0)
        return rc;
    c->n++;
    return 0;
}

static int sources_value(struct sources_ctx *c, const json_t *v, const char *where)
{
    const json_t *list = json_is_array(v) ? v : json_object_get(v, "sources");
    if (json_is_array(list) && !json_object_get(v, "id")) {
        char sub[64];
        int rc = 0;
        for (size_t i = 0; i < json_array_size(list) && rc == 0; i++) {
            snprintf(sub, sizeof sub, "%s%ssources[%zu]", where, where[0] ? ": " : "", i);
            rc = sources_add(c, json_array_get(list, i), sub);
        }
        return rc;
    }
    return sources_add(c, v, where[0] ? where : "file");
}

static int read_all(const char *path, struct buf *b, struct err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return err_set(err, ERR_IO, "cannot open: %s", strerror(errno));
    char chunk[64 * 1024];
    size_t k;
    int rc = 0;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0 && buf_error(b) == 0)
        buf_append(b, chunk, k);
    if (ferror(f))
        rc = err_set(err, ERR_IO, "read error");
    else if (buf_error(b))
        rc = err_set(err, buf_error(b), "file larger than %zu bytes", SOURCES_MAX_FILE_BYTES);
    if (f != stdin)
        fclose(f);
    return rc;
}

int ingest_sources_import(struct store *s, const char *path, size_t *n_out, struct err *err)
{
    struct buf b;
    struct arena a;
    struct sources_ctx c = {&a, NULL, 0, 0, 0};
    int rc;
    buf_init(&b, SOURCES_MAX_FILE_BYTES);
    arena_init(&a, 0);
    if (n_out)
        *n_out = 0;

    rc = read_all(path, &b, err);
    if (rc < 0)
        goto out;
    json_error_t jerr;
    json_t *whole = b.len ? json_loadb(b.data, b.len, 0, &jerr) : NULL;
    if (whole) {
        rc = sources_value(&c, whole, "");
        json_decref(whole);
    } else {
        /* JSONL */
        size_t i = 0, lineno = 1;
        while (i < b.len && rc == 0) {
            const char *line = b.data + i;
            const char *nl = memchr(line, '\n', b.len - i);
            size_t len = nl ? (size_t)(nl - line) : b.len - i;
            size_t l = len;
            while (l > 0 && (line[l - 1] == '\r' || line[l - 1] == ' ' || line[l - 1] == '\t'))
                l--;
            size_t st = 0;
            while (st < l && (line[st] == ' ' || line[st] == '\t'))
                st++;
            char where[32];
            snprintf(where, sizeof where, "line %zu", lineno);
            if (st < l) {
                json_t *v = json_loadb(line + st, l - st, 0, &jerr);
                if (v) {
                    rc = sources_value(&c, v, where);
                    json_decref(v);
                } else {
                    ingest_report(NULL, "%s: invalid JSON at column %d: %s", where,
                                  jerr.column + (int)st, jerr.text);
                    c.skipped++;
                }
            }
            i += len + 1;
            lineno++;
        }
    }
    if (rc < 0) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    if (c.n > 0) {
        rc = store_sources_put(s, c.list, c.n, err);
        if (rc < 0)
            goto out;
    }
    if (n_out)
        *n_out = c.n;
out:
    arena_release(&a);
    buf_release(&b);
    return rc;
}
