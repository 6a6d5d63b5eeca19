/* The small real store, index, auth and api the request harnesses
 * (fuzz_api.c, fuzz_request.c) run on: built once per process in a
 * temporary directory, removed at exit. Included by one harness per binary. */
#ifndef NEWSD_FUZZ_API_FIXTURE_H
#define NEWSD_FUZZ_API_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "auth/auth.h"
#include "index/index.h"
#include "ingest/imports/imports.h"
#include "ingest/ingest.h"
#include "store/store.h"

#define FUZZ_NOW ((int64_t)1700000000) /* 2023-11-14T22:13:20Z */
#define FUZZ_QUERY_MAX 16384

static char dir[64];
static char key[AUTH_KEY_CHARS + 1];
/* A key of FUZZ_PLAN_ORIGINS: limited (X-RateLimit-* headers) and
 * restricted to two origins (Access-Control-Allow-Origin). */
static char key_origins[AUTH_KEY_CHARS + 1];
#define FUZZ_PLAN_ORIGINS "fuzz-origins"
#define FUZZ_ORIGINS "https://app.example.com https://news.example.org:8443"
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
    struct auth_plan plan = {.name = FUZZ_PLAN_ORIGINS,
                             .requests_per_day = 1000000,
                             .result_window = 50,
                             .allowed_origins = FUZZ_ORIGINS,
                             .streams = 1000000,
                             .alerts = 3};
    if (auth_key_create(store, "fuzz", "unlimited", key, &id, &err) < 0 ||
        auth_key_create(store, "fuzz-o", FUZZ_PLAN_ORIGINS, key_origins, &id, &err) < 0 ||
        index_open_with(&idx, store, &iopt, &err) < 0 || auth_new(&auth, store, &err) < 0 ||
        auth_plan_set(auth, &plan, &err) < 0)
        abort();
    struct api_config cfg = {.fixed_now = FUZZ_NOW, .query_timeout_ms = 5000};
    if (api_new(&api, store, idx, auth, &cfg, &err) < 0)
        abort();
}

#endif
