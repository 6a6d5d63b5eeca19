/* groonga_baseline: Groonga as a peer of newsd in the same run (issue 31),
 * driven as its users run it: a persistent `groonga -s --protocol http`
 * server (bench/run.sh starts it) and every request a `select` over HTTP on
 * one keep-alive libcurl handle per client thread, timed like bench_http.
 *
 *   groonga_baseline build --url URL --sources FILE.jsonl   (articles JSONL on stdin)
 *   groonga_baseline query --url URL --mix FILE [--reps R] [--warmup W]
 *                          [--clients 1,2,4,16] [--seconds S]
 *
 * The schema: an Articles table (TABLE_NO_KEY) with the page's columns,
 * published_at (Int64 seconds, with a range index), the source's
 * popularity copied in (Float: -1 without one, as the FTS5 baselines'
 * coalesce), and meta, a vector of filter terms (l_en, s_bbc-news,
 * d_edition.cnn.com, d_cnn.com, d_com: a domain and its parents, since a
 * domains filter matches subdomains) indexed through a hash table; one
 * full-text index over title, description and content, with sections and
 * positions (phrases), in a patricia trie whose tokens are the runs of
 * letters and digits (TokenDelimit with the pattern [^\p{L}\p{N}]+ as the
 * delimiter) folded by NormalizerNFKC130: the words of FTS5's unicode61,
 * so that both count the same matches. Not TokenBigram: it cuts letters
 * from the digits after them ("Football365" holds "football"), and with
 * NormalizerAuto it leaves Cyrillic capitals unfolded; the mix's totals
 * then differ from FTS5's on OR, NOT and the Russian word. What still
 * differs: unicode61's remove_diacritics ("coronavírus" is "coronavirus"
 * to FTS5, not to Groonga 13's normalizers). The rows are loaded first
 * and the indexes created after them (Groonga's static index
 * construction, its fast way to index a bulk load).
 *
 * Requests: q translated from newsd's parse tree to Groonga's query syntax
 * (quoted words and phrases, OR, "-" for NOT, parentheses), the filters as
 * a script `meta @ "l_en" && (meta @ "s_cnn" || ...)`, the date window a
 * range on published_at, sort_keys -published_at, -_score or -popularity
 * (then -published_at), limit 100, offset, cache=no (Groonga's query
 * cache would answer every repeat), and the page's columns as output.
 * Prints load/lat/tput/mem lines (bench/common.h) named groonga. */
#include "common.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "util/buf.h"
#include "util/timefmt.h"

#include "util/banned.h"

#define BATCH 2000            /* rows per load command */
#define BODY_MAX (256u << 20) /* a load batch or an answer */

/* ---- HTTP ------------------------------------------------------------------ */

struct client {
    CURL *curl;
    struct curl_slist *headers;
    struct buf body;
};

static int client_open(struct client *c)
{
    buf_init(&c->body, BODY_MAX);
    c->curl = curl_easy_init();
    /* without it Groonga reads a POSTed load as form fields */
    c->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (c->curl == NULL || c->headers == NULL)
        return -1;
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &c->body);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 3600L);
    return 0;
}

static void client_close(struct client *c)
{
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    buf_release(&c->body);
}

/* GET url (post NULL) or POST post to it; the answer in c->body. Groonga
 * answers [[rc, start, elapsed, message?], body]: rc 0 is success. */
static int client_call(struct client *c, const char *url, const struct buf *post, struct err *err)
{
    long status = 0;
    CURLcode cc;
    buf_reset(&c->body);
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    if (post) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, post->data);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)post->len);
    } else {
        curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    }
    cc = curl_easy_perform(c->curl);
    if (cc != CURLE_OK)
        return err_set(err, ERR_IO, "%s", curl_easy_strerror(cc));
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200 || c->body.data == NULL || strncmp(c->body.data, "[[0,", 4) != 0)
        return err_set(err, ERR_INVALID, "HTTP %ld: %.300s", status,
                       c->body.data ? c->body.data : "");
    return 0;
}

/* ---- build ----------------------------------------------------------------- */

static const char *const schema_tables[] = {
    "table_create?name=Articles&flags=TABLE_NO_KEY",
    "column_create?table=Articles&name=title&flags=COLUMN_SCALAR&type=Text",
    "column_create?table=Articles&name=description&flags=COLUMN_SCALAR&type=Text",
    "column_create?table=Articles&name=content&flags=COLUMN_SCALAR&type=Text",
    "column_create?table=Articles&name=source_id&flags=COLUMN_SCALAR&type=ShortText",
    "column_create?table=Articles&name=source_name&flags=COLUMN_SCALAR&type=ShortText",
    "column_create?table=Articles&name=author&flags=COLUMN_SCALAR&type=ShortText",
    "column_create?table=Articles&name=url&flags=COLUMN_SCALAR&type=ShortText",
    "column_create?table=Articles&name=url_to_image&flags=COLUMN_SCALAR&type=ShortText",
    "column_create?table=Articles&name=published_at&flags=COLUMN_SCALAR&type=Int64",
    "column_create?table=Articles&name=popularity&flags=COLUMN_SCALAR&type=Float",
    "table_create?name=Metas&flags=TABLE_HASH_KEY&key_type=ShortText",
    "column_create?table=Articles&name=meta&flags=COLUMN_VECTOR&type=Metas",
};

/* Created after the load: Groonga then builds each index in one pass. */
static const char *const schema_indexes[] = {
    "column_create?table=Metas&name=articles_meta&flags=COLUMN_INDEX&type=Articles&source=meta",
    "table_create?name=Times&flags=TABLE_PAT_KEY&key_type=Int64",
    "column_create?table=Times&name=articles_published&flags=COLUMN_INDEX&type=Articles"
    "&source=published_at",
    /* TokenDelimit("pattern", "[^\\p{L}\\p{N}]+") + NormalizerNFKC130 */
    "table_create?name=Terms&flags=TABLE_PAT_KEY&key_type=ShortText"
    "&default_tokenizer=TokenDelimit%28%22pattern%22%2C%20"
    "%22%5B%5E%5C%5Cp%7BL%7D%5C%5Cp%7BN%7D%5D%2B%22%29"
    "&normalizer=NormalizerNFKC130",
    "column_create?table=Terms&name=articles_text&flags=COLUMN_INDEX%7CWITH_POSITION%7CWITH_SECTION"
    "&type=Articles&source=title,description,content",
};

static int run_commands(struct client *c, const char *base, const char *const *cmds, size_t n,
                        struct err *err)
{
    char url[1024];
    for (size_t i = 0; i < n; i++) {
        snprintf(url, sizeof url, "%s/d/%s", base, cmds[i]);
        if (client_call(c, url, NULL, err) < 0)
            return -1;
    }
    return 0;
}

/* Source id -> popularity, sorted for bsearch (a few hundred ids). */
struct pop {
    char *id;
    double popularity;
};
struct pops {
    struct pop *v;
    size_t n;
};

static int pop_cmp(const void *a, const void *b)
{
    return strcmp(((const struct pop *)a)->id, ((const struct pop *)b)->id);
}

static int pops_load(struct pops *ps, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, alloc = 0;
    memset(ps, 0, sizeof *ps);
    if (f == NULL) {
        fprintf(stderr, "groonga_baseline: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        const json_t *id = json_object_get(o, "id");
        if (json_is_string(id)) {
            if (ps->n == alloc) {
                alloc = alloc ? alloc * 2 : 256;
                struct pop *v = realloc(ps->v, alloc * sizeof *v);
                if (v == NULL) {
                    json_decref(o);
                    break;
                }
                ps->v = v;
            }
            ps->v[ps->n].id = strdup(json_string_value(id));
            ps->v[ps->n].popularity = json_number_value(json_object_get(o, "popularity"));
            if (ps->v[ps->n].id)
                ps->n++;
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    qsort(ps->v, ps->n, sizeof *ps->v, pop_cmp);
    return 0;
}

static double pops_find(const struct pops *ps, const char *id)
{
    struct pop key = {.id = (char *)id}, *hit;
    if (id == NULL || ps->n == 0)
        return -1;
    hit = bsearch(&key, ps->v, ps->n, sizeof *ps->v, pop_cmp);
    return hit ? hit->popularity : -1;
}

static void pops_free(struct pops *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].id);
    free(ps->v);
}

static void set_str(json_t *row, const char *key, const json_t *from, const char *from_key)
{
    const json_t *v = json_object_get(from, from_key);
    if (json_is_string(v))
        json_object_set_new(row, key, json_string(json_string_value(v)));
}

/* One gen article as a row of Articles; NULL when it has no date or URL. */
static json_t *article_row(const json_t *o, const struct pops *ps)
{
    const json_t *src = json_object_get(o, "source");
    const char *published = json_string_value(json_object_get(o, "publishedAt"));
    const char *url = json_string_value(json_object_get(o, "url"));
    const char *lang = json_string_value(json_object_get(o, "language"));
    const char *sid = json_string_value(json_object_get(src, "id"));
    char domain[256], term[300];
    int64_t t = 0;
    if (!published || !url || timefmt_parse_iso8601(published, strlen(published), &t, NULL) < 0)
        return NULL;
    json_t *row = json_object(), *meta = json_array();
    set_str(row, "title", o, "title");
    set_str(row, "description", o, "description");
    set_str(row, "content", o, "content");
    set_str(row, "source_id", src, "id");
    set_str(row, "source_name", src, "name");
    set_str(row, "author", o, "author");
    set_str(row, "url", o, "url");
    set_str(row, "url_to_image", o, "urlToImage");
    json_object_set_new(row, "published_at", json_integer(t));
    json_object_set_new(row, "popularity", json_real(pops_find(ps, sid)));
    if (lang && *lang) {
        snprintf(term, sizeof term, "l_%s", lang);
        json_array_append_new(meta, json_string(term));
    }
    if (sid && *sid) {
        snprintf(term, sizeof term, "s_%s", sid);
        json_array_append_new(meta, json_string(term));
    }
    bench_url_domain(url, domain, sizeof domain);
    for (const char *d = domain; *d;) {
        snprintf(term, sizeof term, "d_%s", d);
        json_array_append_new(meta, json_string(term));
        d = strchr(d, '.');
        d = d ? d + 1 : "";
    }
    json_object_set_new(row, "meta", meta);
    return row;
}

static int load_batch(struct client *c, const char *load_url, json_t *rows, struct err *err)
{
    struct buf post = BUF_INIT;
    char *text = json_dumps(rows, JSON_COMPACT);
    int rc;
    if (text == NULL)
        return err_set(err, ERR_NOMEM, "cannot write the load batch");
    buf_puts(&post, text);
    free(text);
    rc = buf_error(&post) ? err_set(err, ERR_NOMEM, "load batch")
                          : client_call(c, load_url, &post, err);
    buf_release(&post);
    json_array_clear(rows);
    return rc;
}

static int cmd_build(const char *base, const char *sources_path)
{
    struct client c = {0};
    struct pops ps;
    struct err err;
    char load_url[1024], *line = NULL;
    size_t cap = 0;
    long long n = 0, bad = 0;
    int rc = -1;
    double t0 = bench_now();
    json_t *rows = json_array();

    err_clear(&err);
    snprintf(load_url, sizeof load_url, "%s/d/load?table=Articles", base);
    if (pops_load(&ps, sources_path) < 0) {
        json_decref(rows);
        return -1;
    }
    if (client_open(&c) < 0 || run_commands(&c, base, schema_tables,
                                            sizeof schema_tables / sizeof *schema_tables, &err) < 0)
        goto out;
    while (getline(&line, &cap, stdin) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        json_t *row = json_is_object(o) ? article_row(o, &ps) : NULL;
        json_decref(o);
        if (row == NULL) {
            bad++;
            continue;
        }
        json_array_append_new(rows, row);
        if (++n % BATCH == 0 && load_batch(&c, load_url, rows, &err) < 0)
            goto out;
    }
    if (json_array_size(rows) && load_batch(&c, load_url, rows, &err) < 0)
        goto out;
    if (run_commands(&c, base, schema_indexes, sizeof schema_indexes / sizeof *schema_indexes,
                     &err) < 0)
        goto out;
    /* The bytes are the database directory's: bench/run.sh measures them. */
    printf("load\tgroonga\t%lld\t%.3f\t0\n", n, bench_now() - t0);
    if (run_commands(&c, base, (const char *const[]){"status"}, 1, &err) == 0 && c.body.data) {
        json_t *st = json_loads(c.body.data, 0, NULL);
        const char *v = json_string_value(json_object_get(json_array_get(st, 1), "version"));
        if (v)
            printf("run\tgroonga\t%s\n", v);
        json_decref(st);
    }
    if (bad)
        fprintf(stderr, "groonga_baseline: %lld lines skipped\n", bad);
    rc = 0;
out:
    if (rc < 0)
        fprintf(stderr, "groonga_baseline: build: %s\n", err.msg);
    client_close(&c);
    pops_free(&ps);
    json_decref(rows);
    free(line);
    return rc;
}

/* ---- query ----------------------------------------------------------------- */

/* newsd's tree in Groonga's query syntax: juxtaposition is AND and
 * "a - b" is a AND NOT b: "(a b - c)"; backslash escapes '"' and '\\'
 * (in its script syntax too). */
static const struct bench_query_syntax groonga_syntax = {
    .and_open = "(", .and_sep = " ", .and_mid = "", .not_sep = " - ", .escape = '\\'};

/* A quoted string of Groonga's script syntax. */
static void gq_string(struct buf *b, const char *s)
{
    struct query_node one = {.kind = QUERY_WORD, .tokens = (char *[]){(char *)s}, .n = 1};
    bench_query_text(b, &one, &groonga_syntax);
}

static void filter_any(struct buf *f, const char *prefix, const char *const *values, size_t n)
{
    if (f->len)
        buf_puts(f, " && ");
    buf_putc(f, '(');
    for (size_t i = 0; i < n; i++) {
        char term[300];
        snprintf(term, sizeof term, "%s%s", prefix, values[i]);
        buf_puts(f, i ? " || meta @ " : "meta @ ");
        gq_string(f, term);
    }
    buf_putc(f, ')');
}

static void param(struct buf *url, CURL *curl, const char *name, const char *value)
{
    char *e = curl_easy_escape(curl, value, 0);
    buf_printf(url, "&%s=%s", name, e ? e : "");
    curl_free(e);
}

/* The select URL of one line of the mix. */
static int select_url(const char *base, CURL *curl, const char *params, char **out, struct err *err)
{
    struct arena a;
    struct index_request req;
    struct buf url = BUF_INIT, q = BUF_INIT, f = BUF_INIT;
    int rc;

    arena_init(&a, 0);
    if ((rc = bench_request_build(&a, params, &req, err)) < 0) {
        arena_release(&a);
        return rc;
    }
    if (req.q_title || req.q_fields != INDEX_FIELD_ALL) {
        arena_release(&a);
        return err_set(err, ERR_INVALID, "searchIn and qInTitle are not translated");
    }
    if (req.q)
        bench_query_text(&q, req.q, &groonga_syntax);
    if (req.language) {
        const char *one[1] = {req.language};
        filter_any(&f, "l_", one, 1);
    }
    if (req.n_sources)
        filter_any(&f, "s_", req.sources, req.n_sources);
    if (req.n_domains)
        filter_any(&f, "d_", req.domains, req.n_domains);
    if (req.from != INT64_MIN || req.to != INT64_MAX)
        buf_printf(&f, "%spublished_at >= %lld && published_at <= %lld", f.len ? " && " : "",
                   (long long)req.from, (long long)req.to);

    buf_printf(&url, "%s/d/select?table=Articles&cache=no&limit=%zu&offset=%zu", base, req.limit,
               req.offset);
    if (q.len) {
        param(&url, curl, "match_columns", "title||description||content");
        param(&url, curl, "query", q.data);
    }
    if (f.len)
        param(&url, curl, "filter", f.data);
    const char *sort = "-published_at";
    if (req.sort == INDEX_SORT_RELEVANCY && q.len)
        sort = "-_score,-published_at";
    else if (req.sort == INDEX_SORT_POPULARITY)
        sort = "-popularity,-published_at";
    else if (req.sort == INDEX_SORT_PUBLISHED_ASC)
        sort = "published_at";
    param(&url, curl, "sort_keys", sort);
    param(&url, curl, "output_columns",
          "source_id,source_name,author,title,description,url,url_to_image,published_at,content");
    rc = buf_error(&url) || buf_error(&q) || buf_error(&f) ? err_set(err, ERR_NOMEM, "select URL")
                                                           : 0;
    if (rc == 0 && (*out = strdup(url.data)) == NULL)
        rc = err_set(err, ERR_NOMEM, "select URL");
    buf_release(&url);
    buf_release(&q);
    buf_release(&f);
    arena_release(&a);
    return rc;
}

struct qctx {
    const char *base;
    const struct mix *m;
};

struct qstate {
    struct client c;
    char **urls; /* one per line of the mix */
    size_t n_urls;
};

static void q_done(void *state)
{
    struct qstate *st = state;
    if (st == NULL)
        return;
    client_close(&st->c);
    for (size_t i = 0; i < st->n_urls; i++)
        free(st->urls[i]);
    free(st->urls);
    free(st);
}

static void *q_init(void *arg)
{
    const struct qctx *c = arg;
    struct qstate *st = calloc(1, sizeof *st);
    struct err err;
    if (st == NULL)
        return NULL;
    st->urls = calloc(c->m->n, sizeof *st->urls);
    if (st->urls == NULL || client_open(&st->c) < 0) {
        q_done(st);
        return NULL;
    }
    for (size_t i = 0; i < c->m->n; i++, st->n_urls++) {
        err_clear(&err);
        if (select_url(c->base, st->c.curl, c->m->q[i].params, &st->urls[i], &err) < 0) {
            fprintf(stderr, "groonga_baseline: %s: %s\n", c->m->q[i].id, err.msg);
            q_done(st);
            return NULL;
        }
    }
    return st;
}

/* The timed part: the request and its whole answer, then the total read
 * from the head of the answer ([[0,...],[[[N],...). */
static int q_run(void *state, const struct mix_query *q, size_t qi, uint64_t *total,
                 struct err *err)
{
    struct qstate *st = state;
    const char *p;
    (void)q;
    if (client_call(&st->c, st->urls[qi], NULL, err) < 0)
        return ERR_INVALID;
    p = strstr(st->c.body.data, "],[[[");
    if (p == NULL)
        return err_set(err, ERR_INVALID, "no total: %.200s", st->c.body.data);
    *total = strtoull(p + 5, NULL, 10);
    return 0;
}

static int cmd_query(const char *base, const struct bench_mix_opts *o)
{
    struct mix m;
    struct qctx c = {.base = base};
    int rc;

    if (mix_load(&m, o->mix) < 0)
        return -1;
    c.m = &m;
    struct bench_engine e = {
        .name = "groonga", .ctx = &c, .thread_init = q_init, .thread_done = q_done, .run = q_run};
    rc = bench_run_mix(&e, &m, o, stdout);
    mix_free(&m);
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: groonga_baseline build --url URL --sources FILE.jsonl   (articles on stdin)\n"
            "       groonga_baseline query --url URL --mix FILE [--reps R] [--warmup W]\n"
            "                              [--clients 1,2,4,16] [--seconds S]\n");
}

int main(int argc, char **argv)
{
    const char *url = NULL, *sources = NULL;
    struct bench_mix_opts o = BENCH_MIX_OPTS_INIT;
    int rc = 2;

    if (argc < 2) {
        usage();
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--url") == 0)
            url = v;
        else if (v && strcmp(argv[i], "--sources") == 0)
            sources = v;
        else if (!bench_mix_opt(&o, argv[i], v)) {
            usage();
            return 2;
        }
        i++;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (strcmp(argv[1], "build") == 0 && url && sources)
        rc = cmd_build(url, sources) < 0;
    else if (strcmp(argv[1], "query") == 0 && url && o.mix)
        rc = cmd_query(url, &o) < 0;
    else
        usage();
    curl_global_cleanup();
    return rc;
}
