/* ingest/ imports against a real embedded store in a temporary directory:
 * JSONL with bad lines, saved NewsAPI responses, upserts, labels and
 * options, unknown sources, language mapping, batching; the article JSON
 * mapping and the store-free normalisation on their own. Stored rows are
 * read back with SQLite directly from the store's file. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>

#include "ingest/imports/imports_internal.h"
#include "ingest/ingest.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/utf8.h"

#define NOW ((int64_t)1700000000) /* 2023-11-14T22:13:20Z */

struct fixture {
    char dir[64];
    char file[96];
    struct store *s;
    char *report;
    size_t report_len;
    FILE *rep;
};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/newsd-test-import-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->file, sizeof f->file, "%s/input.jsonl", f->dir);
    char loc[96];
    snprintf(loc, sizeof loc, "%s/store", f->dir);
    struct err err;
    err_clear(&err);
    int rc = store_open(&f->s, loc, &err);
    if (rc != 0)
        fail_msg("store_open: %s", err_msg(&err, rc));
    f->rep = open_memstream(&f->report, &f->report_len);
    assert_non_null(f->rep);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fclose(f->rep);
    free(f->report);
    store_close(f->s);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *o = fopen(path, "wb");
    assert_non_null(o);
    assert_int_equal(fwrite(text, 1, strlen(text), o), strlen(text));
    fclose(o);
}

/* Lines [from, to) of the real article fixture, each ending in '\n'. */
static char *fixture_lines(size_t from, size_t to)
{
    FILE *in = fopen("../data/import/articles.jsonl", "r");
    assert_non_null(in);
    char *out = NULL;
    size_t out_len = 0;
    FILE *o = open_memstream(&out, &out_len);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    size_t i = 0;
    while ((n = getline(&line, &cap, in)) > 0) {
        if (i >= from && i < to)
            fwrite(line, 1, (size_t)n, o);
        i++;
    }
    free(line);
    fclose(in);
    fclose(o);
    return out;
}

static int do_import(struct fixture *f, const char *path, const struct ingest_options *opt_in,
                     struct ingest_stats *st)
{
    struct ingest_options opt = {0};
    if (opt_in)
        opt = *opt_in;
    opt.now = NOW;
    opt.report = f->rep;
    memset(st, 0, sizeof *st);
    struct err err;
    err_clear(&err);
    int rc = ingest_import_file(f->s, path, &opt, st, &err);
    fflush(f->rep);
    if (rc != 0)
        print_message("import: %s\n", err_msg(&err, rc));
    return rc;
}

/* One column of the article with this url (as imported), as text; "" when
 * NULL; "(none)" when no such article. Static buffer. */
static const char *column(struct fixture *f, const char *col, const char *url)
{
    static char out[4096];
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(store_sqlite_path(f->s), &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM articles WHERE url = ?1", col);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, sizeof out, "%s", t ? (const char *)t : "");
    } else {
        snprintf(out, sizeof out, "(none)");
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static int64_t count(struct fixture *f)
{
    int64_t n = -1;
    struct err err;
    assert_int_equal(store_articles_count(f->s, &n, &err), 0);
    return n;
}

static void jsonl_bad_lines_are_reported_with_their_numbers_and_skipped(void **state)
{
    struct fixture *f = *state;
    char *real = fixture_lines(0, 3);
    char *l1 = real, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    l2[-1] = '\0';
    l3[-1] = '\0';
    l3[strlen(l3) - 1] = '\0';
    char *text = NULL;
    size_t len;
    FILE *o = open_memstream(&text, &len);
    fprintf(o, "%s\n", l1);                                            /* 1 */
    fprintf(o, "\n");                                                  /* 2 */
    fprintf(o, "{not json\n");                                         /* 3 */
    fprintf(o, "%s\n", l2);                                            /* 4 */
    fprintf(o, "{\"title\":\"no url\"}\n");                            /* 5 */
    fprintf(o, "{\"url\":\"ftp://example.com/x\",\"title\":\"t\"}\n"); /* 6 */
    fprintf(o, "  \t \n");                                             /* 7 */
    fprintf(o, "%s\r\n", l3);                                          /* 8 */
    fprintf(o, "{\"url\":\"https://example.com/d\",\"title\":\"t\","
               "\"publishedAt\":\"2021-02-30\"}\n");                       /* 9 */
    fprintf(o, "{\"url\":\"https://example.com/e\",\"title\":\"   \"}\n"); /* 10 */
    fprintf(o, "{\"url\":[\"https://example.com/f\"],\"title\":\"t\"}\n"); /* 11 */
    fprintf(o, "42\n");                                                    /* 12 */
    fprintf(o, "{\"url\":\"https://example.com/ok\",\"title\":\"fine\"}"); /* 13, no \n */
    fclose(o);
    write_file(f->file, text);

    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 4);
    assert_int_equal(st.updated, 0);
    assert_int_equal(st.skipped, 7);
    assert_int_equal(count(f), 4);
    const char *want_prefix = "line 3: invalid JSON at column ";
    assert_memory_equal(f->report, want_prefix, strlen(want_prefix));
    const char *rest = strchr(f->report, '\n') + 1;
    assert_string_equal(rest, "line 5: url missing or not a string\n"
                              "line 6: url is not an absolute http(s) URL\n"
                              "line 9: publishedAt is not a date\n"
                              "line 10: title missing, empty or not a string\n"
                              "line 11: url missing or not a string\n"
                              "line 12: not a JSON object\n");
    free(text);
    free(real);
}

static void a_bad_first_line_is_only_a_bad_line(void **state)
{
    struct fixture *f = *state;
    char *real = fixture_lines(10, 14);
    size_t n = strlen(real) + 64;
    char *text = malloc(n);
    assert_non_null(text);
    snprintf(text, n, "\n{\"url\": \"https://example.com/x\",\n%s", real);
    write_file(f->file, text);
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 4);
    assert_int_equal(st.skipped, 1);
    assert_non_null(strstr(f->report, "line 2: invalid JSON"));
    assert_null(strstr(f->report, "line 3"));
    free(text);
    free(real);
}

static void newsapi_responses_are_imported_whole(void **state)
{
    struct fixture *f = *state;
    struct ingest_stats st;
    /* compact, with 7-digit fractions */
    assert_int_equal(do_import(f, "../data/import/response-akash2017amity.json", NULL, &st), 0);
    assert_int_equal(st.imported, 10);
    assert_int_equal(st.skipped, 0);
    assert_string_equal(column(f, "published_at", "http://www.bbc.co.uk/sport/football/65785204"),
                        "1685700445");
    assert_string_equal(column(f, "domain", "http://www.bbc.co.uk/sport/football/65785204"),
                        "bbc.co.uk");
    /* "+00:00" offsets */
    assert_int_equal(do_import(f, "../data/import/response-wikizell.json", NULL, &st), 0);
    assert_int_equal(st.imported, 20);
    assert_string_equal(column(f, "published_at",
                               "https://www.dailymail.co.uk/news/article-7103019/"
                               "Dutch-girl-17-legally-ends-life-euthanasia-clinic.html"),
                        "1559736776");
    /* pretty-printed, with a placeholder first article */
    assert_int_equal(do_import(f, "../data/import/response-pretty-mwshubham.json", NULL, &st), 0);
    assert_int_equal(st.imported, 19);
    assert_int_equal(st.skipped, 1);
    assert_string_equal(f->report, "articles[0]: url is not an absolute http(s) URL\n");
    assert_int_equal(count(f), 49);
    /* an error response is reported, not imported */
    write_file(f->file,
               "{\"status\":\"error\",\"code\":\"apiKeyInvalid\",\n\"message\":\"bad key\"}");
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.skipped, 1);
    assert_non_null(strstr(f->report, "file: a NewsAPI error response: bad key\n"));
    /* a broken pretty-printed document is one problem, not one per line */
    write_file(f->file, "{\n  \"status\": \"ok\",\n  \"articles\": [\n    {\"url\": \n");
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.skipped, 1);
    assert_int_equal(st.imported, 0);
    assert_non_null(strstr(f->report, "\nfile: invalid JSON at line 5, column "));
    assert_null(strstr(f->report, "line 2:"));
}

static void reimport_replaces_articles_and_their_flags(void **state)
{
    struct fixture *f = *state;
    struct ingest_stats st;
    struct ingest_options opt = {0};
    opt.headlines = true;
    opt.country = "us";
    opt.category = "business";
    assert_int_equal(do_import(f, "../data/import/articles.jsonl", &opt, &st), 0);
    assert_int_equal(st.imported, 128);
    assert_int_equal(st.updated, 0);
    assert_int_equal(count(f), 128);
    /* the first fixture line: bbc-news, no source in this store's catalogue */
    const char *u = "http://www.bbc.co.uk/news/world-australia-65774434";
    assert_string_equal(column(f, "headline", u), "1");
    assert_string_equal(column(f, "country", u), "us");
    assert_string_equal(column(f, "category", u), "business");

    assert_int_equal(do_import(f, "../data/import/articles.jsonl", NULL, &st), 0);
    assert_int_equal(st.imported, 0);
    assert_int_equal(st.updated, 128);
    assert_int_equal(count(f), 128);
    assert_string_equal(column(f, "headline", u), "0");
    assert_string_equal(column(f, "country", u), "");
    assert_string_equal(column(f, "category", u), "");
    assert_string_equal(f->report, "");
}

static void line_labels_apply_unless_options_override_them(void **state)
{
    struct fixture *f = *state;
    write_file(f->file,
               "{\"url\":\"https://a.example/1\",\"title\":\"One\",\"country\":\"GB\","
               "\"category\":\"Sports\",\"headline\":true,\"language\":\"en\"}\n"
               "{\"url\":\"https://a.example/2\",\"title\":\"Two\",\"country\":\"gbr\","
               "\"category\":\"weather\",\"headline\":\"yes\",\"language\":\"english\"}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 2);
    assert_string_equal(column(f, "country", "https://a.example/1"), "gb");
    assert_string_equal(column(f, "category", "https://a.example/1"), "sports");
    assert_string_equal(column(f, "headline", "https://a.example/1"), "1");
    assert_string_equal(column(f, "language", "https://a.example/1"), "en");
    /* bad label values are ignored, not guessed */
    assert_string_equal(column(f, "country", "https://a.example/2"), "");
    assert_string_equal(column(f, "category", "https://a.example/2"), "");
    assert_string_equal(column(f, "headline", "https://a.example/2"), "0");

    struct ingest_options opt = {0};
    opt.country = "fr";
    opt.category = "science";
    opt.language = "de";
    assert_int_equal(do_import(f, f->file, &opt, &st), 0);
    assert_int_equal(st.updated, 2);
    assert_string_equal(column(f, "country", "https://a.example/1"), "fr");
    assert_string_equal(column(f, "category", "https://a.example/1"), "science");
    assert_string_equal(column(f, "language", "https://a.example/1"), "de");
    assert_string_equal(column(f, "headline", "https://a.example/1"), "1");
}

static void unknown_source_ids_join_the_catalogue_as_non_headline_sources(void **state)
{
    struct fixture *f = *state;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(ingest_sources_import(f->s, "../data/import/sources.json", &n, &err), 0);
    assert_int_equal(n, 129);
    write_file(f->file, "{\"source\":{\"id\":\"my-local-paper\",\"name\":\"My Local Paper\"},"
                        "\"url\":\"https://paper.example/a\",\"title\":\"Local news\"}\n"
                        "{\"source\":{\"id\":\"bbc-news\",\"name\":\"BBC News\"},"
                        "\"url\":\"https://www.bbc.co.uk/news/x\",\"title\":\"Headline\"}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 2);

    struct arena a;
    arena_init(&a, 0);
    struct source src;
    assert_int_equal(store_source_get(f->s, &a, "my-local-paper", &src, &err), 0);
    assert_string_equal(src.name, "My Local Paper");
    assert_false(src.headlines);
    struct source_filter filt = {NULL, NULL, NULL, true};
    struct source *list;
    size_t nl;
    assert_int_equal(store_sources_list(f->s, &a, &filt, &list, &nl, &err), 0);
    assert_int_equal(nl, 129);
    for (size_t i = 0; i < nl; i++)
        assert_string_not_equal(list[i].id, "my-local-paper");
    /* a catalogue source gives its country, category and language */
    assert_string_equal(column(f, "country", "https://www.bbc.co.uk/news/x"), "gb");
    assert_string_equal(column(f, "category", "https://www.bbc.co.uk/news/x"), "general");
    assert_string_equal(column(f, "language", "https://www.bbc.co.uk/news/x"), "en");
    assert_string_equal(column(f, "source_id", "https://paper.example/a"), "my-local-paper");
    arena_release(&a);
}

static void swedish_is_sv_for_articles_and_se_stays_in_the_catalogue(void **state)
{
    struct fixture *f = *state;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(ingest_sources_import(f->s, "../data/import/sources.json", &n, &err), 0);
    struct arena a;
    arena_init(&a, 0);
    struct source src;
    assert_int_equal(store_source_get(f->s, &a, "svenska-dagbladet", &src, &err), 0);
    assert_string_equal(src.language, "se");
    arena_release(&a);
    write_file(f->file,
               "{\"source\":{\"id\":\"svenska-dagbladet\",\"name\":\"Svenska Dagbladet\"},"
               "\"url\":\"https://www.svd.se/a\",\"title\":\"Nyheter\"}\n"
               "{\"url\":\"https://x.example/b\",\"title\":\"Nyheter\",\"language\":\"SE\"}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_string_equal(column(f, "language", "https://www.svd.se/a"), "sv");
    assert_string_equal(column(f, "country", "https://www.svd.se/a"), "se");
    assert_string_equal(column(f, "language", "https://x.example/b"), "sv");
    struct ingest_options opt = {0};
    opt.language = "se";
    assert_int_equal(do_import(f, f->file, &opt, &st), 0);
    assert_string_equal(column(f, "language", "https://x.example/b"), "sv");
}

static void duplicates_in_one_batch_keep_the_later_article(void **state)
{
    struct fixture *f = *state;
    write_file(f->file, "{\"url\":\"https://d.example/a?utm_source=rss\",\"title\":\"first\"}\n"
                        "{\"url\":\"https://D.example:443/a#comments\",\"title\":\"second\"}\n"
                        "{\"url\":\"https://d.example/b\",\"title\":\"other\"}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 2);
    assert_int_equal(st.updated, 1);
    assert_int_equal(count(f), 2);
    /* the url is returned as imported; the canonical url is only the key */
    assert_string_equal(column(f, "title", "https://D.example:443/a#comments"), "second");
    assert_string_equal(column(f, "title", "https://d.example/a?utm_source=rss"), "(none)");
}

static void times_missing_or_far_ahead_become_the_import_time(void **state)
{
    struct fixture *f = *state;
    write_file(f->file,
               "{\"url\":\"https://t.example/1\",\"title\":\"no date\"}\n"
               "{\"url\":\"https://t.example/2\",\"title\":\"null\",\"publishedAt\":null}\n"
               "{\"url\":\"https://t.example/3\",\"title\":\"ahead\","
               "\"publishedAt\":\"2023-11-16T00:00:00Z\"}\n"
               "{\"url\":\"https://t.example/4\",\"title\":\"slightly ahead\","
               "\"publishedAt\":\"2023-11-15T10:00:00Z\"}\n"
               "{\"url\":\"https://t.example/5\",\"title\":\"rfc822\","
               "\"publishedAt\":\"Tue, 10 Jun 2003 06:00:00 +0200\"}\n"
               "{\"url\":\"https://t.example/6\",\"title\":\"number\",\"publishedAt\":5}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 6);
    assert_string_equal(column(f, "published_at", "https://t.example/1"), "1700000000");
    assert_string_equal(column(f, "published_at", "https://t.example/2"), "1700000000");
    assert_string_equal(column(f, "published_at", "https://t.example/3"), "1700000000");
    assert_string_equal(column(f, "published_at", "https://t.example/4"), "1700042400");
    assert_string_equal(column(f, "published_at", "https://t.example/5"), "1055217600");
    assert_string_equal(column(f, "ingested_at", "https://t.example/5"), "1700000000");
    /* not a string: null, like every other field */
    assert_string_equal(column(f, "published_at", "https://t.example/6"), "1700000000");
    assert_string_equal(f->report, "");
}

static void large_imports_are_split_into_batches(void **state)
{
    struct fixture *f = *state;
    FILE *o = fopen(f->file, "w");
    assert_non_null(o);
    size_t total = 2 * LIMIT_IMPORT_BATCH + 321;
    for (size_t i = 0; i < total; i++)
        fprintf(o, "{\"url\":\"https://b.example/%zu\",\"title\":\"article %zu\"}\n", i, i);
    /* the same url again, in a later batch */
    fprintf(o, "{\"url\":\"https://b.example/7\",\"title\":\"again\"}\n");
    fclose(o);
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, total);
    assert_int_equal(st.updated, 1);
    assert_int_equal(count(f), (int64_t)total);
    assert_string_equal(column(f, "title", "https://b.example/7"), "again");
}

static void unreadable_and_empty_files(void **state)
{
    struct fixture *f = *state;
    struct ingest_stats st;
    struct err err;
    err_clear(&err);
    assert_int_equal(ingest_import_file(f->s, "/nonexistent/x.jsonl", NULL, &st, &err), ERR_IO);
    assert_non_null(strstr(err.msg, "cannot open"));
    write_file(f->file, "");
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    write_file(f->file, "\n \n\r\n");
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported + st.skipped, 0);
    assert_int_equal(count(f), 0);
    /* a file that is one huge line of garbage is bounded, not fatal */
    FILE *o = fopen(f->file, "w");
    for (int i = 0; i < 1000; i++)
        fputs("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", o);
    fputs("\n{\"url\":\"https://g.example/\",\"title\":\"after\"}\n", o);
    fclose(o);
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 1);
    assert_int_equal(st.skipped, 1);
}

/* Lines that straddle the reader's reads (IMPORT_READ_BYTES): a CRLF split between two
 * reads, a line of several reads, a line over LIMIT_IMPORT_LINE_BYTES
 * (reported, the next one still read) and a last line without '\n'. */
static void lines_across_reads_and_over_the_limit(void **state)
{
    struct fixture *f = *state;
    const size_t read_bytes = IMPORT_READ_BYTES;
    FILE *o = fopen(f->file, "wb");
    assert_non_null(o);
    /* Line 1 ends with its '\r' as the last byte of the first read. */
    const char *head = "{\"url\":\"https://r.example/1\",\"title\":\"one\",\"description\":\"";
    const char *tail = "\"}";
    size_t pad = read_bytes - 1 - strlen(head) - strlen(tail);
    fputs(head, o);
    for (size_t i = 0; i < pad; i++)
        fputc('a', o);
    fputs(tail, o);
    fputs("\r\n", o);
    assert_int_equal(ftell(o), (long)read_bytes + 1);
    /* Line 2 spans three reads. */
    fputs("{\"url\":\"https://r.example/2\",\"title\":\"two\",\"content\":\"", o);
    for (size_t i = 0; i < 3 * read_bytes; i++)
        fputc('b', o);
    fputs("\"}\n", o);
    /* Line 3 is too long. */
    fputs("{\"url\":\"https://r.example/3\",\"title\":\"three\",\"content\":\"", o);
    for (size_t i = 0; i < LIMIT_IMPORT_LINE_BYTES; i++)
        fputc('c', o);
    fputs("\"}\n", o);
    fputs("{\"url\":\"https://r.example/4\",\"title\":\"four\"}", o);
    fclose(o);
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 3);
    assert_int_equal(st.skipped, 1);
    assert_string_equal(f->report, "line 3: longer than 16777216 bytes\n");
    assert_string_equal(column(f, "title", "https://r.example/1"), "one");
    assert_string_equal(column(f, "title", "https://r.example/2"), "two");
    assert_string_equal(column(f, "title", "https://r.example/4"), "four");
}

/* The other end of a trickled import's pipes: writes one article, waits
 * (at most 10 s) for the import to say it committed it while the input
 * stays open, then writes half a line more, waits the same way for a
 * second commit (the first article of a batch never waits for a line to
 * end), finishes the line and closes the input. */
struct trickle {
    int in_w, progress_r;
    int commits_seen; /* commits reported before the input was closed */
};

static bool wait_commit(struct trickle *t, char *seen, size_t *n, size_t cap, const char *want)
{
    int64_t deadline = clock_mono_ms() + 10000;
    while (!strstr(seen, want)) {
        int64_t left = deadline - clock_mono_ms();
        struct pollfd p = {.fd = t->progress_r, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return false;
        ssize_t k = read(t->progress_r, seen + *n, cap - 1 - *n);
        if (k <= 0)
            return false;
        *n += (size_t)k;
        seen[*n] = '\0';
    }
    return true;
}

static void *trickle_feed(void *arg)
{
    struct trickle *t = arg;
    char seen[256] = "";
    size_t n = 0;
    const char *one = "{\"url\":\"https://p.example/1\",\"title\":\"one\"}\n";
    const char *two = "{\"url\":\"https://p.example/2\",\"title\":\"two\"}\n";
    size_t half = strlen(two) / 2;
    if (write(t->in_w, one, strlen(one)) == (ssize_t)strlen(one) &&
        wait_commit(t, seen, &n, sizeof seen, "committed 1\n")) {
        t->commits_seen = 1;
        if (write(t->in_w, two, half) == (ssize_t)half && usleep(300 * 1000) == 0 &&
            write(t->in_w, two + half, strlen(two) - half) == (ssize_t)(strlen(two) - half) &&
            wait_commit(t, seen, &n, sizeof seen, "committed 2\n"))
            t->commits_seen = 2;
    }
    close(t->in_w);
    return NULL;
}

static void a_quiet_pipe_commits_its_batch_without_more_input(void **state)
{
    struct fixture *f = *state;
    int in[2], progress[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(progress), 0);
    struct trickle t = {.in_w = in[1], .progress_r = progress[0]};
    FILE *progress_w = fdopen(progress[1], "w");
    assert_non_null(progress_w);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, trickle_feed, &t), 0);
    char path[32];
    snprintf(path, sizeof path, "/dev/fd/%d", in[0]);
    struct ingest_options opt = {.progress = progress_w};
    struct ingest_stats st;
    int rc = do_import(f, path, &opt, &st);
    pthread_join(th, NULL);
    fclose(progress_w);
    close(progress[0]);
    close(in[0]);
    assert_int_equal(rc, 0);
    assert_int_equal(t.commits_seen, 2);
    assert_int_equal(st.imported, 2);
    assert_int_equal(count(f), 2);
}

static void sources_import_reads_jsonl_with_popularity_and_headlines(void **state)
{
    struct fixture *f = *state;
    write_file(f->file,
               "{\"id\":\"a-paper\",\"name\":\"A Paper\",\"language\":\"se\",\"country\":\"se\","
               "\"category\":\"general\",\"popularity\":7.5}\n"
               "\n"
               "{\"id\":\"b-blog\",\"name\":\"B\",\"headlines\":false}\n"
               "{\"name\":\"no id\"}\n"
               "not json\n");
    size_t n = 0;
    struct err err;
    err_clear(&err);
    assert_int_equal(ingest_sources_import(f->s, f->file, &n, &err), 0);
    assert_int_equal(n, 2);
    struct arena a;
    arena_init(&a, 0);
    struct source src;
    assert_int_equal(store_source_get(f->s, &a, "a-paper", &src, &err), 0);
    assert_true(src.headlines);
    assert_true(src.popularity > 7.4 && src.popularity < 7.6);
    assert_string_equal(src.language, "se");
    assert_int_equal(store_source_get(f->s, &a, "b-blog", &src, &err), 0);
    assert_false(src.headlines);
    assert_int_equal(store_source_get(f->s, &a, "no id", NULL, &err), ERR_NOTFOUND);
    arena_release(&a);
    assert_int_equal(ingest_sources_import(f->s, "/nonexistent", &n, &err), ERR_IO);
}

/* --- without a store ----------------------------------------------------- */

static void article_json_maps_the_newsapi_shape(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    json_error_t jerr;
    json_t *v = json_loads(
        "{\"source\":{\"id\":\"bbc-news\",\"name\":\"BBC News\"},\"author\":null,"
        "\"title\":\"<b>T</b> &amp; t\",\"description\":7,\"url\":\"http://www.bbc.co.uk/a\","
        "\"urlToImage\":\"https://i.example/"
        "x.jpg\",\"publishedAt\":\"2023-06-02T10:07:25.6727634Z\","
        "\"content\":\"C\\r\\nD\\u2026 [+7209 chars]\",\"extra\":{\"x\":1}}",
        0, &jerr);
    assert_non_null(v);
    struct article art;
    struct err err;
    err_clear(&err);
    assert_int_equal(ingest_article_from_json(&a, v, &art, &err), 0);
    assert_string_equal(art.source_id, "bbc-news");
    assert_string_equal(art.source_name, "BBC News");
    assert_null(art.author);
    assert_null(art.description);                       /* not a string: null */
    assert_string_equal(art.title, "<b>T</b> &amp; t"); /* verbatim */
    assert_string_equal(art.url_to_image, "https://i.example/x.jpg");
    assert_string_equal(art.content, "C\r\nD\xe2\x80\xa6 [+7209 chars]");
    assert_int_equal(art.published_at, 1685700445);
    assert_false(art.headline);
    assert_string_equal(art.language, "");
    json_decref(v);

    struct ingest_options opt = {0};
    opt.now = NOW;
    assert_int_equal(ingest_normalize(NULL, &a, &art, &opt, &err), 0);
    assert_string_equal(art.canonical_url, "http://www.bbc.co.uk/a");
    assert_string_equal(art.domain, "bbc.co.uk");
    assert_int_equal(art.ingested_at, NOW);
    arena_release(&a);
}

static size_t content_len_of(const char *text, size_t n)
{
    json_t *v = json_object();
    json_object_set_new(v, "url", json_string("https://x.example/"));
    json_object_set_new(v, "title", json_string("t"));
    json_t *c = json_stringn(text, n);
    assert_non_null(c); /* valid UTF-8 */
    json_object_set_new(v, "content", c);
    struct arena a;
    arena_init(&a, 0);
    struct article art;
    struct err err;
    assert_int_equal(ingest_article_from_json(&a, v, &art, &err), 0);
    size_t len = strlen(art.content);
    assert_true(utf8_valid(art.content, len));
    arena_release(&a);
    json_decref(v);
    return len;
}

static void long_fields_are_cut_at_a_character_boundary(void **state)
{
    (void)state;
    /* "x" + "é"... : the byte at LIMIT_FIELD_BYTES is the second of an "é" */
    size_t n = LIMIT_FIELD_BYTES + 11;
    char *big = malloc(n);
    assert_non_null(big);
    big[0] = 'x';
    for (size_t i = 1; i + 1 < n; i += 2) {
        big[i] = '\xc3';
        big[i + 1] = '\xa9';
    }
    assert_int_equal(content_len_of(big, n), LIMIT_FIELD_BYTES - 1);
    /* "é"... alone: the cut falls between two characters */
    assert_int_equal(content_len_of(big + 1, n - 1), LIMIT_FIELD_BYTES);
    /* at the limit nothing is cut */
    assert_int_equal(content_len_of(big + 1, LIMIT_FIELD_BYTES), LIMIT_FIELD_BYTES);
    free(big);
}

static void detection_fills_a_language_nobody_gave(void **state)
{
    (void)state;
    struct arena a;
    arena_init(&a, 0);
    struct article art;
    memset(&art, 0, sizeof art);
    art.url = "https://x.example/a";
    art.title = "Le gouvernement annonce une nouvelle réforme des retraites";
    art.description = "Le Premier ministre a présenté mercredi les grandes lignes du projet de "
                      "loi, qui sera examiné par l'Assemblée nationale au printemps.";
    struct err err;
    assert_int_equal(ingest_normalize(NULL, &a, &art, NULL, &err), 0);
    assert_string_equal(art.language, "fr");
    /* given languages are never second-guessed */
    memset(&art, 0, sizeof art);
    art.url = "https://x.example/a";
    art.title = "Le gouvernement annonce une nouvelle réforme des retraites";
    memcpy(art.language, "it", 3);
    assert_int_equal(ingest_normalize(NULL, &a, &art, NULL, &err), 0);
    assert_string_equal(art.language, "it");
    art.url = "mailto:x@example.com";
    assert_int_equal(ingest_normalize(NULL, &a, &art, NULL, &err), ERR_INVALID);
    arena_release(&a);
}

/* Issue 14 item 7: urlToImage goes to browsers, so only an absolute http(s)
 * URL with a host is kept; every other value becomes NULL (table over the
 * one normalisation, then an import that reports and counts them). */
/* Issue 23 item 10: a relative image path (NewsAPI gives /images/... for
 * some sites) is resolved against the article's URL and kept; only what is
 * no http(s) URL once resolved is dropped. want: NULL dropped, "=" kept as
 * given, else the resolved URL. */
static void only_http_image_urls_are_kept(void **state)
{
    (void)state;
    static const struct {
        const char *image, *want;
    } cases[] = {
        {"http://cdn.example/a.jpg", "="},
        {"https://cdn.example/b.jpg?w=640", "="},
        {"HTTPS://CDN.example:8443/c.jpg", "="},
        {"https://user@cdn.example/d.jpg", "="},
        {"javascript:alert(3)", NULL},
        {" JavaScript:alert(3)", NULL},
        {"JavaScript:alert(3)", NULL},
        {"data:text/html,<script>alert(3)</script>", NULL},
        {"data:image/png;base64,iVBORw0KGgo=", NULL},
        {"/images/news/2021/07/x.jpg", "https://x.example/images/news/2021/07/x.jpg"},
        {"relative.jpg", "https://x.example/news/relative.jpg"},
        {"../up.jpg", "https://x.example/up.jpg"},
        {"./img/../pic.png?w=1", "https://x.example/news/pic.png?w=1"},
        {"//cdn.example/scheme-relative.jpg", "https://cdn.example/scheme-relative.jpg"},
        {"//", NULL},
        {"/images/a b.jpg", NULL},
        {"\\\\evil.example\\x.jpg", NULL},
        {"ftp://cdn.example/e.jpg", NULL},
        {"http://", NULL},
        {"https:///no-host.jpg", NULL},
        {"http://cdn.example/a\n.jpg", NULL},
        {"http://cdn.example/a\tb.jpg", NULL},
        {"/a\n.jpg", NULL},
        {"null", NULL},
        {"NULL", NULL},
        {"undefined", NULL},
        {"", NULL},
    };
    struct arena a;
    arena_init(&a, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct article art;
        memset(&art, 0, sizeof art);
        art.url = "https://x.example/news/a?id=1#top";
        art.title = "Title";
        memcpy(art.language, "en", 3);
        art.url_to_image = cases[i].image;
        struct err err;
        err_clear(&err);
        assert_int_equal(ingest_normalize(NULL, &a, &art, NULL, &err), 0);
        if (!cases[i].want) {
            if (art.url_to_image)
                fail_msg("kept %s as %s", cases[i].image, art.url_to_image);
        } else if (!strcmp(cases[i].want, "=")) {
            assert_ptr_equal(art.url_to_image, cases[i].image);
        } else {
            if (!art.url_to_image)
                fail_msg("dropped %s", cases[i].image);
            assert_string_equal(art.url_to_image, cases[i].want);
        }
    }
    /* An article URL with a tab or a line break (its canonical form has
     * them removed, so it is taken): a relative image resolved against it
     * would carry them (found by fuzz_jsonl), so it is dropped; an
     * absolute one owes it nothing. */
    static const char *const broken[] = {"https://x.example/ne\tws/a", "https://x.example/ne\nws/a",
                                         "https://x.example/news\r/a?q=1"};
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        for (int absolute = 0; absolute < 2; absolute++) {
            struct article art;
            memset(&art, 0, sizeof art);
            art.url = broken[i];
            art.title = "Title";
            memcpy(art.language, "en", 3);
            art.url_to_image = absolute ? "https://cdn.example/b.jpg" : "relative.jpg?w=1";
            struct err err;
            err_clear(&err);
            assert_int_equal(ingest_normalize(NULL, &a, &art, NULL, &err), 0);
            if (absolute)
                assert_string_equal(art.url_to_image, "https://cdn.example/b.jpg");
            else if (art.url_to_image)
                fail_msg("kept %s against [%s] as [%s]", "relative.jpg?w=1", broken[i],
                         art.url_to_image);
        }
    }
    arena_release(&a);
}

static void an_import_reports_and_counts_the_image_urls_it_drops(void **state)
{
    struct fixture *f = *state;
    write_file(f->file,
               "{\"url\":\"https://i.example/1\",\"title\":\"One\","
               "\"urlToImage\":\"javascript:alert(3)\"}\n"
               "{\"url\":\"https://i.example/2\",\"title\":\"Two\","
               "\"urlToImage\":\"https://cdn.example/2.jpg\"}\n"
               "{\"url\":\"https://i.example/3\",\"title\":\"Three\","
               "\"urlToImage\":\"data:text/html,<script>x</script>\"}\n"
               "{\"url\":\"https://i.example/4\",\"title\":\"Four\",\"urlToImage\":null}\n"
               "{\"url\":\"https://i.example/5\",\"title\":\"Five\",\"urlToImage\":\"\"}\n");
    struct ingest_stats st;
    assert_int_equal(do_import(f, f->file, NULL, &st), 0);
    assert_int_equal(st.imported, 5);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.images_dropped, 2); /* an empty one only says "no image" */
    assert_non_null(strstr(f->report, "line 1: urlToImage"));
    assert_non_null(strstr(f->report, "line 3: urlToImage"));
    assert_null(strstr(f->report, "line 2"));
    assert_null(strstr(f->report, "line 4"));
    assert_null(strstr(f->report, "line 5"));
    assert_string_equal(column(f, "url_to_image", "https://i.example/1"), "");
    assert_string_equal(column(f, "url_to_image", "https://i.example/2"),
                        "https://cdn.example/2.jpg");
    assert_string_equal(column(f, "url_to_image", "https://i.example/3"), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(jsonl_bad_lines_are_reported_with_their_numbers_and_skipped,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_bad_first_line_is_only_a_bad_line, setup, teardown),
        cmocka_unit_test_setup_teardown(newsapi_responses_are_imported_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(reimport_replaces_articles_and_their_flags, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(line_labels_apply_unless_options_override_them, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            unknown_source_ids_join_the_catalogue_as_non_headline_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(swedish_is_sv_for_articles_and_se_stays_in_the_catalogue,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(duplicates_in_one_batch_keep_the_later_article, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(times_missing_or_far_ahead_become_the_import_time, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(large_imports_are_split_into_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(unreadable_and_empty_files, setup, teardown),
        cmocka_unit_test_setup_teardown(lines_across_reads_and_over_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(a_quiet_pipe_commits_its_batch_without_more_input, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sources_import_reads_jsonl_with_popularity_and_headlines,
                                        setup, teardown),
        cmocka_unit_test(article_json_maps_the_newsapi_shape),
        cmocka_unit_test(long_fields_are_cut_at_a_character_boundary),
        cmocka_unit_test(detection_fills_a_language_nobody_gave),
        cmocka_unit_test(only_http_image_urls_are_kept),
        cmocka_unit_test_setup_teardown(an_import_reports_and_counts_the_image_urls_it_drops, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
