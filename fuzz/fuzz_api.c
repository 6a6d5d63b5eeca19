/* libFuzzer harness: the whole request path behind the HTTP glue — routing,
 * key check, every validator, the q parser, the MATCH builder, the FTS5
 * search, the plan checks and the rendering — on a small real store built
 * once per process in a temporary directory.
 * Input: byte 0 picks the route (and whether a valid key is sent), the rest
 * is the raw query string. Invariants: never a 500 (a store that works
 * cannot fail a request), always a JSON object body with "status", never a
 * 200 when a parameter value holds a NUL byte (%00). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "api/params.h"
#include "auth/auth.h"
#include "index/index.h"
#include "ingest/ingest.h"
#include "store/store.h"

#define FUZZ_NOW ((int64_t)1700000000) /* 2023-11-14T22:13:20Z */
#define FUZZ_QUERY_MAX 16384

static char dir[64];
static char key[AUTH_KEY_CHARS + 1];
static struct store *store;
static struct index *idx;
static struct auth *auth;
static struct api *api;

static void fuzz_teardown(void)
{
    char path[128];
    static const char *const files[] = {"newsd.db", "newsd.db-wal", "newsd.db-shm",
                                        "articles.jsonl", "sources.jsonl"};
    api_free(api);
    auth_free(auth);
    index_close(idx);
    store_close(store);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void write_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static void fuzz_setup(void)
{
    static const char sources[] =
        "{\"id\":\"bbc-news\",\"name\":\"BBC News\",\"category\":\"general\","
        "\"language\":\"en\",\"country\":\"gb\",\"url\":\"https://www.bbc.co.uk\"}\n"
        "{\"id\":\"le-monde\",\"name\":\"Le Monde\",\"category\":\"general\","
        "\"language\":\"fr\",\"country\":\"fr\",\"url\":\"https://www.lemonde.fr\"}\n";
    static const char *const titles[] = {"Election results announced in the capital",
                                         "Markets rally as inflation cools",
                                         "Le gouvernement présente son budget",
                                         "New telescope images of distant galaxies",
                                         "東京で新しい駅が開業",
                                         "Football: the derby ends in a draw"};
    char line[1024], path[128];
    struct err err;
    size_t n = 0;
    err_clear(&err);

    snprintf(dir, sizeof dir, "/tmp/newsd-fuzz-api-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    atexit(fuzz_teardown);
    write_file("sources.jsonl", sources);
    char *arts = malloc(64 * 1024);
    size_t len = 0;
    if (!arts)
        abort();
    for (int i = 0; i < 40; i++) {
        int m = snprintf(line, sizeof line,
                         "{\"source\":{\"id\":%s,\"name\":\"%s\"},\"author\":\"A %d\","
                         "\"title\":\"%s %d\",\"description\":\"About %s\","
                         "\"url\":\"https://%s/a/%d\",\"publishedAt\":\"2023-11-%02dT%02d:00:00Z\","
                         "\"content\":\"Body %d of the story. [+120 chars]\"}\n",
                         i % 3 == 0   ? "\"bbc-news\""
                         : i % 3 == 1 ? "\"le-monde\""
                                      : "null",
                         i % 3 == 0   ? "BBC News"
                         : i % 3 == 1 ? "Le Monde"
                                      : "Wire",
                         i, titles[i % 6], i, titles[(i + 1) % 6],
                         i % 2 ? "www.bbc.co.uk" : "news.example.com", i, 1 + i % 14, i % 24, i);
        memcpy(arts + len, line, (size_t)m);
        len += (size_t)m;
    }
    arts[len] = '\0';
    write_file("articles.jsonl", arts);
    free(arts);

    /* The engine's files would outlive the run's temporary directory:
     * searching is what is fuzzed here, not persistence (fuzz_engine). */
    struct index_options iopt = {.engine = {.no_files = true}};
    if (store_open(&store, dir, &err) < 0)
        abort();
    snprintf(path, sizeof path, "%s/sources.jsonl", dir);
    if (ingest_sources_import(store, path, &n, &err) < 0)
        abort();
    struct ingest_options io = {.headlines = true, .now = FUZZ_NOW, .report = NULL};
    FILE *devnull = fopen("/dev/null", "w");
    io.report = devnull;
    snprintf(path, sizeof path, "%s/articles.jsonl", dir);
    if (ingest_import_file(store, path, &io, NULL, &err) < 0)
        abort();
    if (devnull)
        fclose(devnull);
    int64_t id;
    if (auth_key_create(store, "fuzz", "unlimited", key, &id, &err) < 0 ||
        index_open_with(&idx, store, &iopt, &err) < 0 || auth_new(&auth, store, &err) < 0)
        abort();
    struct api_config cfg = {.fixed_now = FUZZ_NOW, .query_timeout_ms = 5000};
    if (api_new(&api, store, idx, auth, &cfg, &err) < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const paths[] = {"/v2/everything", "/v2/top-headlines",
                                        "/v2/top-headlines/sources", "/v2/sources"};
    static char query[FUZZ_QUERY_MAX + 128];
    if (!api)
        fuzz_setup();
    if (size == 0 || size > FUZZ_QUERY_MAX)
        return 0;

    unsigned sel = data[0];
    const char *path = paths[sel % 4];
    if ((sel & 0x40) && sel % 4 == 0)
        path = "/v2/everything/stream"; /* the live stream's validation, same filters */
    size_t qlen = 0;
    if (!(sel & 0x10)) { /* mostly with a valid key: the deep paths */
        int m = snprintf(query, sizeof query, "apiKey=%s&", key);
        qlen = (size_t)m;
    }
    memcpy(query + qlen, data + 1, size - 1);
    qlen += size - 1;
    query[qlen] = '\0';
    if (memchr(data + 1, '\0', size - 1))
        return 0; /* the HTTP layer never hands over a NUL */

    struct http_request req = {
        .method = (sel & 0x20) ? "HEAD" : "GET",
        .path = path,
        .query = query,
        .request_id = "0123456789abcdef",
        .url_bytes = strlen(path) + 1 + qlen,
        .header_bytes = 0,
        .conn = NULL,
    };
    struct http_response resp;
    memset(&resp, 0, sizeof resp);
    api_handle(&req, &resp, api);

    if (getenv("FUZZ_API_VERBOSE")) /* to look at what a corpus exercises */
        fprintf(stderr, "%d %s?%s -> %.120s\n", resp.status, path, query,
                resp.body ? resp.body : "");
    if (resp.status == 500)
        abort(); /* nothing in a healthy store justifies it */
    if (resp.status < 200 || resp.status > 599)
        abort();
    if (resp.status == 200) {
        struct arena a;
        struct api_params p;
        arena_init(&a, 1 << 24);
        if (api_params_parse(&a, query, qlen, &p) == 0)
            for (size_t i = 0; i < p.n; i++)
                if (memchr(p.items[i].value, '\0', p.items[i].len))
                    abort(); /* read cut short at the NUL */
        arena_release(&a);
    }
    if (resp.body && (!resp.content_type || strstr(resp.content_type, "json"))) {
        json_error_t jerr;
        json_t *v = json_loadb(resp.body, resp.len, 0, &jerr);
        if (!v || !json_is_object(v) || !json_is_string(json_object_get(v, "status")))
            abort();
        json_decref(v);
    }
    if (resp.stream) {
        /* No server sends it: end it, so the hub lets its subscriber go. */
        if (resp.status != 200)
            abort();
        http_stream_end(resp.stream);
        http_stream_release(resp.stream);
    }
    free(resp.body);
    for (size_t i = 0; i < resp.n_headers; i++)
        free(resp.headers[i].value);
    return 0;
}
