/* The feed crawler (ingest/feeds/feeds.h) and the feeds of the store (store.h
 * "feeds") against a tiny HTTP server run by the test on 127.0.0.1 (one
 * thread, canned bodies from the real feed files of tests/data/feeds, ETag
 * and 304 support) and a real SQLite store in a temporary directory. The
 * crawl passes run on a clock the test drives; only the background-thread
 * tests wait on the wall clock. Expected article fields were read from the
 * feed files by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest/feeds/feeds.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/metrics.h"
#include "util/netpolicy.h"
#include "test_loopback.h"

#define DATA "../data/feeds/"
#define GUARDIAN "rbren__rss-parser/test/input/guardian.rss"
#define HEISE "rbren__rss-parser/test/input/heise.atom"
#define UNDATED "danmactough__node-feedparser/test/feeds/rss-with-trailing-meta.xml"
#define T0 ((int64_t)1700000000) /* the test clock's start: 2023-11-14 */
#define MAX_ROUTES 8

/* ---- the server --------------------------------------------------------------- */

struct route {
    char path[64];
    char *body; /* malloc'd */
    size_t len;
    char etag[64]; /* "" none */
    char ctype[96];
    int status;       /* 0 = 200 */
    long retry_after; /* seconds, 0 none */
    bool hang;        /* never answer */
    int hits;         /* requests */
    int hits_304;
    char last_inm[128]; /* If-None-Match of the last request */
};

struct server {
    int fd;
    int port;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t lock;
    struct route routes[MAX_ROUTES];
    size_t n_routes;
};

static bool req_header(const char *req, const char *name, char *out, size_t out_size)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(req, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\r\n");
            if (n >= out_size)
                n = out_size - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

/* Wait (up to 10 s) for the client to give up on a request never answered. */
static void hang(struct server *srv, int fd)
{
    for (int i = 0; i < 200 && !atomic_load(&srv->stop); i++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            char b[256];
            if (recv(fd, b, sizeof b, 0) <= 0)
                return;
        }
    }
}

static void answer(struct server *srv, int fd, const char *req)
{
    char path[256] = "", inm[128] = "", head[512];
    if (sscanf(req, "GET %255s HTTP/1.", path) != 1)
        return;
    req_header(req, "If-None-Match", inm, sizeof inm);
    pthread_mutex_lock(&srv->lock);
    struct route *r = NULL;
    for (size_t i = 0; i < srv->n_routes; i++) {
        if (!strcmp(srv->routes[i].path, path))
            r = &srv->routes[i];
    }
    if (!r) {
        pthread_mutex_unlock(&srv->lock);
        snprintf(head, sizeof head,
                 "HTTP/1.1 404 Not Found\r\nConnection: close\r\n"
                 "Content-Length: 0\r\n\r\n");
        test_send_all(fd, head, strlen(head));
        return;
    }
    r->hits++;
    snprintf(r->last_inm, sizeof r->last_inm, "%s", inm);
    if (r->hang) {
        pthread_mutex_unlock(&srv->lock);
        hang(srv, fd);
        return;
    }
    char etag[96] = "", retry[64] = "";
    if (r->etag[0])
        snprintf(etag, sizeof etag, "ETag: %s\r\n", r->etag);
    if (r->retry_after)
        snprintf(retry, sizeof retry, "Retry-After: %ld\r\n", r->retry_after);
    if (r->etag[0] && !strcmp(inm, r->etag)) {
        r->hits_304++;
        snprintf(head, sizeof head, "HTTP/1.1 304 Not Modified\r\nConnection: close\r\n%s\r\n",
                 etag);
        pthread_mutex_unlock(&srv->lock);
        test_send_all(fd, head, strlen(head));
        return;
    }
    int status = r->status ? r->status : 200;
    size_t len = r->len;
    char *body = malloc(len + 1);
    if (body)
        memcpy(body, r->body ? r->body : "", len);
    snprintf(head, sizeof head,
             "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Type: %s\r\n%s%sContent-Length: "
             "%zu\r\n\r\n",
             status, status == 200 ? "OK" : "Oops", r->ctype[0] ? r->ctype : "application/xml",
             etag, retry, body ? len : 0);
    pthread_mutex_unlock(&srv->lock);
    test_send_all(fd, head, strlen(head));
    if (body)
        test_send_all(fd, body, len);
    free(body);
}

static void *server_main(void *arg)
{
    struct server *srv = arg;
    while (!atomic_load(&srv->stop)) {
        struct pollfd p = {srv->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(srv->fd, NULL, NULL);
        if (fd < 0)
            continue;
        char req[4096];
        size_t len = 0;
        while (len < sizeof req - 1) {
            struct pollfd q = {fd, POLLIN, 0};
            if (poll(&q, 1, 5000) <= 0)
                break;
            ssize_t n = recv(fd, req + len, sizeof req - 1 - len, 0);
            if (n <= 0)
                break;
            len += (size_t)n;
            req[len] = '\0';
            if (strstr(req, "\r\n\r\n"))
                break;
        }
        req[len] = '\0';
        if (strstr(req, "\r\n\r\n"))
            answer(srv, fd, req);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static void server_start(struct server *srv)
{
    memset(srv, 0, sizeof *srv);
    pthread_mutex_init(&srv->lock, NULL);
    srv->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(srv->fd >= 0);
    int one = 1;
    setsockopt(srv->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(srv->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(srv->fd, 64), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(srv->fd, (struct sockaddr *)&sa, &sl), 0);
    srv->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

static void server_stop(struct server *srv)
{
    atomic_store(&srv->stop, true);
    pthread_join(srv->thread, NULL);
    close(srv->fd);
    for (size_t i = 0; i < srv->n_routes; i++)
        free(srv->routes[i].body);
    pthread_mutex_destroy(&srv->lock);
}

/* Add a route serving body (copied; NULL = the feed file rel). */
static struct route *route_add(struct server *srv, const char *path, const char *rel,
                               const char *body, const char *etag)
{
    pthread_mutex_lock(&srv->lock);
    assert_true(srv->n_routes < MAX_ROUTES);
    struct route *r = &srv->routes[srv->n_routes++];
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    if (rel) {
        r->body = test_read_data(DATA, rel, &r->len);
        assert_non_null(r->body);
    } else {
        r->len = strlen(body);
        r->body = strdup(body);
    }
    snprintf(r->etag, sizeof r->etag, "%s", etag ? etag : "");
    pthread_mutex_unlock(&srv->lock);
    return r;
}

/* Replace every occurrence of from by to in r's body, set a new ETag. */
static void route_edit(struct server *srv, struct route *r, const char *from, const char *to,
                       const char *etag)
{
    pthread_mutex_lock(&srv->lock);
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = strstr(r->body, from); p; p = strstr(p + fl, from))
        n++;
    assert_true(n > 0);
    char *out = malloc(r->len + n * tl + 1);
    assert_non_null(out);
    size_t o = 0;
    const char *p = r->body;
    for (const char *q = strstr(p, from); q; q = strstr(p, from)) {
        memcpy(out + o, p, (size_t)(q - p));
        o += (size_t)(q - p);
        memcpy(out + o, to, tl);
        o += tl;
        p = q + fl;
    }
    size_t rest = strlen(p);
    memcpy(out + o, p, rest + 1);
    o += rest;
    free(r->body);
    r->body = out;
    r->len = o;
    snprintf(r->etag, sizeof r->etag, "%s", etag);
    pthread_mutex_unlock(&srv->lock);
}

static int route_hits(struct server *srv, struct route *r)
{
    pthread_mutex_lock(&srv->lock);
    int n = r->hits;
    pthread_mutex_unlock(&srv->lock);
    return n;
}

/* ---- the store ------------------------------------------------------------------- */

struct fixture {
    struct server srv;
    char dir[64];
    struct store *s;
    struct arena a;
};

static void store_reopen(struct fixture *fx)
{
    struct err e;
    err_clear(&e);
    if (fx->s)
        store_close(fx->s);
    int rc = store_open(&fx->s, fx->dir, &e);
    if (rc < 0)
        fail_msg("store_open: %s", err_msg(&e, rc));
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/newsd-test-crawl-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    store_reopen(fx);
    arena_init(&fx->a, 0);
    server_start(&fx->srv);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    server_stop(&fx->srv);
    store_close(fx->s);
    arena_release(&fx->a);
    const char *files[] = {"newsd.db", "newsd.db-wal", "newsd.db-shm"};
    for (size_t i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", fx->dir, files[i]);
        unlink(p);
    }
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static const char *url_of(struct fixture *fx, const char *path)
{
    return arena_printf(&fx->a, "http://127.0.0.1:%d%s", fx->srv.port, path);
}

static int64_t feed_add(struct fixture *fx, const char *path, const char *source,
                        const char *country, const char *category, bool headline, int64_t interval,
                        int64_t created)
{
    struct feed_record f;
    memset(&f, 0, sizeof f);
    f.url = url_of(fx, path);
    f.source_id = source;
    if (country)
        snprintf(f.country, sizeof f.country, "%s", country);
    f.category = category;
    f.headline = headline;
    f.interval_s = interval;
    f.enabled = true;
    f.created_at = created;
    int64_t id = 0;
    struct err e;
    err_clear(&e);
    int rc = store_feed_add(fx->s, &f, &id, &e);
    if (rc < 0)
        fail_msg("store_feed_add: %s", err_msg(&e, rc));
    return id;
}

static struct feed_record feed_get(struct fixture *fx, int64_t id)
{
    struct feed_record f;
    struct err e;
    err_clear(&e);
    int rc = store_feed_get(fx->s, &fx->a, id, &f, &e);
    if (rc < 0)
        fail_msg("store_feed_get: %s", err_msg(&e, rc));
    return f;
}

/* The test's server is on loopback, which the network policy refuses
 * unless allowed (set up in main). */
static struct netpolicy loopback;

static struct crawler *crawler_new(struct fixture *fx, bool polite)
{
    struct crawl_options o;
    memset(&o, 0, sizeof o);
    o.no_jitter = true;
    o.fetch.policy = &loopback;
    /* The hand-checked feeds link to pages on the internet, which a unit
     * test must never ask for (a resolver that does not answer would hold
     * a fetch); the pages are tested on loopback in tests/api/test_pages.py. */
    o.pages = CRAWL_PAGES_NEVER;
    if (!polite) {
        o.per_host = 16;
        o.host_gap_s = -1;
    }
    struct crawler *c = NULL;
    assert_int_equal(crawl_new(&c, fx->s, &o, NULL), 0);
    return c;
}

static struct crawl_stats pass(struct crawler *c, int64_t now)
{
    struct crawl_stats st;
    struct err e;
    err_clear(&e);
    int rc = crawl_pass(c, now, &st, &e);
    if (rc < 0)
        fail_msg("crawl_pass: %s", err_msg(&e, rc));
    return st;
}

/* An article row read straight from the store's file. */
struct row {
    bool found;
    char title[512], url[512], author[256], image[512], description[4096], content[4096];
    char source_id[64], source_name[128], language[3], country[3], category[32];
    bool source_null, author_null, image_null, category_null;
    int64_t published_at, seq;
    int headline;
};

static void col(sqlite3_stmt *st, int i, char *out, size_t size, bool *is_null)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (is_null)
        *is_null = t == NULL;
    snprintf(out, size, "%s", t ? (const char *)t : "");
}

static struct row article_get(struct fixture *fx, const char *url)
{
    struct row r;
    memset(&r, 0, sizeof r);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(store_sqlite_path(fx->s), &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT title, url, author, url_to_image, description,"
                                        " content, source_id, source_name, language, country,"
                                        " category, published_at, headline, seq"
                                        " FROM articles WHERE url = ?1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        r.found = true;
        col(st, 0, r.title, sizeof r.title, NULL);
        col(st, 1, r.url, sizeof r.url, NULL);
        col(st, 2, r.author, sizeof r.author, &r.author_null);
        col(st, 3, r.image, sizeof r.image, &r.image_null);
        col(st, 4, r.description, sizeof r.description, NULL);
        col(st, 5, r.content, sizeof r.content, NULL);
        col(st, 6, r.source_id, sizeof r.source_id, &r.source_null);
        col(st, 7, r.source_name, sizeof r.source_name, NULL);
        col(st, 8, r.language, sizeof r.language, NULL);
        col(st, 9, r.country, sizeof r.country, NULL);
        col(st, 10, r.category, sizeof r.category, &r.category_null);
        r.published_at = sqlite3_column_int64(st, 11);
        r.headline = sqlite3_column_int(st, 12);
        r.seq = sqlite3_column_int64(st, 13);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return r;
}

static int64_t db_int(struct fixture *fx, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(store_sqlite_path(fx->s), &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void assert_prefix(const char *got, const char *want)
{
    if (strncmp(got, want, strlen(want)) != 0)
        fail_msg("got [%.160s], want prefix [%s]", got, want);
}

static int cmp_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The median gap (lower middle) between the dated items of a feed file,
 * computed here from the parsed dates by the documented rule. */
static int64_t file_gap(const char *rel)
{
    size_t len = 0;
    char *body = test_read_data(DATA, rel, &len);
    assert_non_null(body);
    struct arena a;
    arena_init(&a, 0);
    struct feed f;
    assert_int_equal(feed_parse(&a, body, len, NULL, NULL, &f, NULL), 0);
    int64_t t[FEED_MAX_ITEMS], d[FEED_MAX_ITEMS];
    size_t n = 0;
    for (size_t i = 0; i < f.n_items; i++) {
        if (f.items[i].has_date)
            t[n++] = f.items[i].published_at;
    }
    arena_release(&a);
    free(body);
    assert_true(n >= 2);
    qsort(t, n, sizeof t[0], cmp_int64);
    for (size_t i = 0; i + 1 < n; i++)
        d[i] = t[i + 1] - t[i];
    qsort(d, n - 1, sizeof d[0], cmp_int64);
    return d[(n - 2) / 2];
}

/* ---- store: feeds ------------------------------------------------------------------ */

static void feeds_are_added_once_listed_claimed_and_removed(void **state)
{
    struct fixture *fx = *state;
    struct err e;
    err_clear(&e);
    int64_t a = feed_add(fx, "/a", "bbc-news", "gb", "general", true, 0, T0);
    int64_t b = feed_add(fx, "/b", NULL, NULL, NULL, false, 900, T0 - 10);
    assert_true(a > 0 && b > a);

    /* The same url again: ERR_EXISTS, nothing added. */
    struct feed_record dup;
    memset(&dup, 0, sizeof dup);
    dup.url = url_of(fx, "/a");
    dup.enabled = true;
    assert_int_equal(store_feed_add(fx->s, &dup, NULL, &e), ERR_EXISTS);
    dup.url = NULL;
    assert_int_equal(store_feed_add(fx->s, &dup, NULL, &e), ERR_INVALID);

    struct feed_record *list = NULL;
    size_t n = 0;
    assert_int_equal(store_feeds_list(fx->s, &fx->a, &list, &n, &e), 0);
    assert_int_equal(n, 2);
    assert_int_equal(list[0].id, a);
    assert_string_equal(list[0].url, url_of(fx, "/a"));
    assert_string_equal(list[0].source_id, "bbc-news");
    assert_string_equal(list[0].country, "gb");
    assert_string_equal(list[0].category, "general");
    assert_true(list[0].headline);
    assert_int_equal(list[0].interval_s, STORE_FEED_DEFAULT_INTERVAL);
    assert_int_equal(list[0].next_fetch_at, T0); /* due at once */
    assert_int_equal(list[0].last_fetch_at, 0);
    assert_null(list[0].etag);
    assert_null(list[0].last_error);
    assert_null(list[1].source_id);
    assert_string_equal(list[1].country, "");
    assert_null(list[1].category);
    assert_int_equal(list[1].interval_s, 900);

    /* Due: earliest first; nothing due before its time. */
    struct feed_record *due = NULL;
    assert_int_equal(store_feeds_due(fx->s, &fx->a, T0 - 11, 10, &due, &n, &e), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_feeds_due(fx->s, &fx->a, T0, 10, &due, &n, &e), 0);
    assert_int_equal(n, 2);
    assert_int_equal(due[0].id, b);
    assert_int_equal(due[1].id, a);
    assert_int_equal(store_feeds_due(fx->s, &fx->a, T0, 1, &due, &n, &e), 0);
    assert_int_equal(n, 1);

    /* A claim is a lease: the second claimer gets nothing. */
    int64_t ids[2] = {a, b};
    bool claimed[2];
    assert_int_equal(store_feeds_claim(fx->s, ids, 2, T0, T0 + 600, claimed, &e), 0);
    assert_true(claimed[0] && claimed[1]);
    assert_int_equal(store_feeds_claim(fx->s, ids, 2, T0, T0 + 600, claimed, &e), 0);
    assert_false(claimed[0] || claimed[1]);
    assert_int_equal(store_feeds_due(fx->s, &fx->a, T0 + 599, 10, &due, &n, &e), 0);
    assert_int_equal(n, 0);
    assert_int_equal(feed_get(fx, a).next_fetch_at, T0 + 600);
    assert_int_equal(store_feed_schedule(fx->s, a, T0, &e), 0);
    assert_int_equal(store_feeds_due(fx->s, &fx->a, T0, 10, &due, &n, &e), 0);
    assert_int_equal(n, 1);
    assert_int_equal(due[0].id, a);

    /* Remove: gone, and a second time ERR_NOTFOUND. */
    assert_int_equal(store_feed_remove(fx->s, a, &e), 0);
    assert_int_equal(store_feed_remove(fx->s, a, &e), ERR_NOTFOUND);
    struct feed_record f;
    assert_int_equal(store_feed_get(fx->s, &fx->a, a, &f, &e), ERR_NOTFOUND);
    assert_int_equal(store_feed_schedule(fx->s, a, T0, &e), ERR_NOTFOUND);
    assert_int_equal(store_feeds_list(fx->s, &fx->a, &list, &n, &e), 0);
    assert_int_equal(n, 1);
}

static void a_version_1_store_gains_the_feeds_tables(void **state)
{
    struct fixture *fx = *state;
    feed_add(fx, "/a", NULL, NULL, NULL, false, 0, T0);
    /* Make the file look like a store written before feeds existed. */
    store_close(fx->s);
    fx->s = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/newsd.db", fx->dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP TABLE feed_items; DROP TABLE feeds;"
                                  " UPDATE meta SET value = 1 WHERE key = 'schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    store_reopen(fx);
    assert_int_equal(db_int(fx, "SELECT value FROM meta WHERE key = 'schema_version'"),
                     store_schema_version("sqlite")); /* the latest */
    assert_int_equal(db_int(fx, "SELECT count(*) FROM feeds"), 0);
    assert_int_equal(db_int(fx, "SELECT count(pages) FROM feeds"), 0);
    feed_add(fx, "/a", NULL, NULL, NULL, false, 0, T0);
    /* Opening an up-to-date store again changes nothing. */
    store_reopen(fx);
    assert_int_equal(db_int(fx, "SELECT count(*) FROM feeds"), 1);
}

/* ---- the pipeline ------------------------------------------------------------------- */

static void a_pass_stores_the_articles_of_hand_checked_feeds(void **state)
{
    struct fixture *fx = *state;
    struct err e;
    err_clear(&e);
    struct source heise = {.id = "heise-online",
                           .name = "heise online",
                           .url = "https://www.heise.de",
                           .category = "technology",
                           .language = "de",
                           .country = "de",
                           .headlines = true};
    assert_int_equal(store_sources_put(fx->s, &heise, 1, &e), 0);
    struct route *g = route_add(&fx->srv, "/guardian", GUARDIAN, NULL, "\"g1\"");
    snprintf(g->ctype, sizeof g->ctype, "application/rss+xml; charset=UTF-8");
    route_add(&fx->srv, "/heise", HEISE, NULL, NULL);
    int64_t gid = feed_add(fx, "/guardian", NULL, "gb", "general", true, 0, T0);
    int64_t hid = feed_add(fx, "/heise", "heise-online", NULL, NULL, false, 0, T0);

    struct crawler *c = crawler_new(fx, false);
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.fetched, 2);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.articles_new, 55 + 15);
    assert_int_equal(st.articles_updated, 0);
    int64_t n = 0;
    assert_int_equal(store_articles_count(fx->s, &n, &e), 0);
    assert_int_equal(n, 70);

    /* Guardian item 0, field by field as the file has it. */
    struct row r = article_get(fx, "https://www.theguardian.com/us-news/2018/jan/31/"
                                   "donald-trump-state-of-the-union-address-unity-discord");
    assert_true(r.found);
    assert_string_equal(r.title,
                        "Trump State of the Union address promised unity but emphasized discord");
    assert_string_equal(r.author, "David Smith in Washington");
    assert_string_equal(r.image, "https://i.guim.co.uk/img/media/"
                                 "b73c8752cd4667c923dff7f1542f1fb20089e421/0_108_3000_1799/master/"
                                 "3000.jpg?w=460&q=55&auto=format&usm=12&fit=max&"
                                 "s=a606a273a90104e57b1e09bc4c0a1e11");
    assert_int_equal(r.published_at, 1517383565);       /* Wed, 31 Jan 2018 07:26:05 GMT */
    assert_true(r.source_null);                         /* no catalogue source */
    assert_string_equal(r.source_name, "The Guardian"); /* the feed's title */
    assert_string_equal(r.language, "en");              /* <language>en-gb */
    assert_string_equal(r.country, "gb");
    assert_string_equal(r.category, "general");
    assert_int_equal(r.headline, 1);
    assert_prefix(r.description, "The president\xE2\x80\x99s \xE2\x80\x98new American moment"
                                 "\xE2\x80\x99 speech stirred Republican applause");
    assert_prefix(r.content, "The president\xE2\x80\x99s \xE2\x80\x98new American moment");

    /* Item 1 and the last item (54, without dc:creator). */
    r = article_get(fx, "https://www.theguardian.com/us-news/2018/jan/31/"
                        "so-how-did-conservatives-like-the-state-of-the-union");
    assert_true(r.found);
    assert_string_equal(r.title, "So, how did conservatives like the State of the Union?");
    assert_string_equal(r.author, "Jason Wilson");
    assert_int_equal(r.published_at, 1517413596); /* Wed, 31 Jan 2018 15:46:36 GMT */
    assert_prefix(r.description, "Even Donald Trump\xE2\x80\x99s more extreme supporters");
    r = article_get(fx, "https://www.theguardian.com/artanddesign/gallery/2018/jan/31/"
                        "earths-ultimate-yogis-in-pictures-yoga");
    assert_true(r.found);
    assert_string_equal(r.title, "Earth's ultimate yogis \xE2\x80\x93 in pictures");
    assert_true(r.author_null);
    assert_int_equal(r.published_at, 1517382020); /* Wed, 31 Jan 2018 07:00:20 GMT */
    assert_prefix(r.description, "Worried that fitness obsessives were making yoga too commercial");

    /* heise: a catalogue source gives the name, language, country, category. */
    r = article_get(fx, "http://www.heise.de/developer/meldung/"
                        "Java-Anwendungsserver-Red-Hat-gibt-WildFly-10-frei-3088438.html?"
                        "wt_mc=rss.developer.beitrag.atom");
    assert_true(r.found);
    assert_string_equal(r.title, "Java-Anwendungsserver: Red Hat gibt WildFly 10 frei");
    assert_string_equal(r.source_id, "heise-online");
    assert_string_equal(r.source_name, "heise online");
    assert_string_equal(r.author, "heise online");
    assert_int_equal(r.published_at, 1454343720); /* 2016-02-01T17:22:00+01:00 */
    assert_string_equal(r.language, "de");
    assert_string_equal(r.country, "de");
    assert_string_equal(r.category, "technology");
    assert_int_equal(r.headline, 0);

    /* The feeds' recorded state. */
    struct feed_record f = feed_get(fx, gid);
    assert_int_equal(f.last_status, 200);
    assert_null(f.last_error);
    assert_int_equal(f.last_fetch_at, T0);
    assert_int_equal(f.last_success_at, T0);
    assert_int_equal(f.last_new_item_at, T0);
    assert_string_equal(f.etag, "\"g1\"");
    assert_string_equal(f.title, "The Guardian");
    assert_string_equal(f.site_url, "https://www.theguardian.com/us");
    assert_int_equal(f.items_last, 55);
    assert_int_equal(f.items_total, 55);
    assert_int_equal(f.consecutive_errors, 0);
    assert_int_equal(f.interval_s, 300); /* at the floor already */
    assert_int_equal(f.next_fetch_at, T0 + 300);
    f = feed_get(fx, hid);
    assert_null(f.etag);
    assert_int_equal(f.items_total, 15);

    /* Nothing is due before then: a pass does nothing. */
    st = pass(c, T0 + 299);
    assert_int_equal(st.fetched + st.not_modified + st.failed, 0);
    crawl_free(c);
}

static void a_second_pass_sends_the_validators_and_stores_nothing_on_304(void **state)
{
    struct fixture *fx = *state;
    struct route *g = route_add(&fx->srv, "/guardian", GUARDIAN, NULL, "\"g1\"");
    int64_t gid = feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, false);
    assert_int_equal(pass(c, T0).articles_new, 55);
    int64_t seq = db_int(fx, "SELECT max(seq) FROM articles");

    struct crawl_stats st = pass(c, T0 + 300);
    assert_int_equal(st.not_modified, 1);
    assert_int_equal(st.fetched, 0);
    assert_int_equal(st.articles_new + st.articles_updated, 0);
    assert_string_equal(g->last_inm, "\"g1\"");
    assert_int_equal(g->hits_304, 1);
    assert_int_equal(db_int(fx, "SELECT max(seq) FROM articles"), seq);
    struct feed_record f = feed_get(fx, gid);
    assert_int_equal(f.last_status, 304);
    assert_string_equal(f.etag, "\"g1\""); /* kept */
    assert_int_equal(f.last_success_at, T0 + 300);
    assert_int_equal(f.last_new_item_at, T0);
    assert_int_equal(f.items_total, 55);
    crawl_free(c);
}

static void a_changed_feed_updates_changed_items_and_adds_new_ones(void **state)
{
    struct fixture *fx = *state;
    struct route *g = route_add(&fx->srv, "/guardian", GUARDIAN, NULL, "\"g1\"");
    int64_t gid = feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, false);
    assert_int_equal(pass(c, T0).articles_new, 55);
    int64_t seq = db_int(fx, "SELECT max(seq) FROM articles");

    /* Item 0's title changes; item 1 moves to a new url (a new article). */
    route_edit(&fx->srv, g,
               "<title>Trump State of the Union address promised unity but emphasized "
               "discord</title>",
               "<title>Trump State of the Union address promised unity but showed "
               "discord</title>",
               "\"g2\"");
    route_edit(&fx->srv, g, "so-how-did-conservatives-like-the-state-of-the-union",
               "so-how-did-conservatives-like-the-speech", "\"g2\"");
    struct crawl_stats st = pass(c, T0 + 300);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.articles_new, 1);
    assert_int_equal(st.articles_updated, 1);
    assert_int_equal(st.items_unchanged, 53);
    assert_int_equal(db_int(fx, "SELECT count(*) FROM articles"), 56);
    assert_int_equal(db_int(fx, "SELECT max(seq) FROM articles"), seq + 2);
    struct row r = article_get(fx, "https://www.theguardian.com/us-news/2018/jan/31/"
                                   "donald-trump-state-of-the-union-address-unity-discord");
    assert_string_equal(r.title,
                        "Trump State of the Union address promised unity but showed discord");
    assert_int_equal(r.published_at, 1517383565);
    r = article_get(fx, "https://www.theguardian.com/us-news/2018/jan/31/"
                        "so-how-did-conservatives-like-the-speech");
    assert_true(r.found);
    assert_int_equal(r.published_at, 1517413596);

    struct feed_record f = feed_get(fx, gid);
    assert_string_equal(f.etag, "\"g2\"");
    assert_int_equal(f.items_total, 56);
    assert_int_equal(f.last_new_item_at, T0 + 300);
    /* New items never stretch the interval (a poll without them would:
     * 300 -> 450); 300 is also the floor it cannot shrink below. */
    assert_int_equal(f.interval_s, 300);
    assert_int_equal(f.next_fetch_at, T0 + 300 + 300);
    crawl_free(c);
}

static void an_undated_item_keeps_the_time_it_was_first_seen(void **state)
{
    struct fixture *fx = *state;
    struct route *u = route_add(&fx->srv, "/undated", UNDATED, NULL, "\"u1\"");
    feed_add(fx, "/undated", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, false);
    assert_int_equal(pass(c, T0).articles_new, 1);
    struct row r = article_get(fx, "https://example.com/items/1");
    assert_true(r.found);
    assert_int_equal(r.published_at, T0); /* no date: the fetch time */
    assert_string_equal(r.source_name, "Trailing Meta Feed");

    /* Served again in full (new ETag), unchanged: not rewritten, same time. */
    route_edit(&fx->srv, u, "<description>", "<description>", "\"u2\"");
    struct crawl_stats st = pass(c, T0 + 300);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.items_unchanged, 1);
    assert_int_equal(st.articles_updated, 0);
    assert_int_equal(article_get(fx, "https://example.com/items/1").seq, r.seq);

    /* Changed: rewritten, still with the time it was first seen. */
    route_edit(&fx->srv, u, "<title>First item</title>", "<title>First item, revised</title>",
               "\"u3\"");
    st = pass(c, T0 + 300 + 450);
    assert_int_equal(st.articles_updated, 1);
    r = article_get(fx, "https://example.com/items/1");
    assert_string_equal(r.title, "First item, revised");
    assert_int_equal(r.published_at, T0);
    crawl_free(c);
}

static void a_broken_feed_records_its_error_and_backs_off(void **state)
{
    struct fixture *fx = *state;
    route_add(&fx->srv, "/broken", NULL, "this is not a feed at all", NULL);
    struct route *u = route_add(&fx->srv, "/unavailable", NULL, "busy", NULL);
    u->status = 503;
    u->retry_after = 7200;
    struct route *x = route_add(&fx->srv, "/error", NULL, "oops", NULL);
    x->status = 500;
    int64_t bid = feed_add(fx, "/broken", NULL, NULL, NULL, false, 0, T0);
    int64_t uid = feed_add(fx, "/unavailable", NULL, NULL, NULL, false, 0, T0);
    int64_t xid = feed_add(fx, "/error", NULL, NULL, NULL, false, 0, T0);
    int64_t gone = feed_add(fx, "/no-such-feed", NULL, NULL, NULL, false, 0, T0);

    struct crawler *c = crawler_new(fx, false);
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.failed, 4);
    assert_int_equal(st.fetched, 0);

    struct feed_record f = feed_get(fx, bid);
    assert_int_equal(f.last_status, 200);
    assert_non_null(f.last_error);
    assert_prefix(f.last_error, "parse: ");
    assert_int_equal(f.consecutive_errors, 1);
    assert_int_equal(f.last_success_at, 0);
    assert_int_equal(f.interval_s, 300); /* the base stays; the wait doubles */
    assert_int_equal(f.next_fetch_at, T0 + 600);

    f = feed_get(fx, uid);
    assert_int_equal(f.last_status, 503);
    assert_string_equal(f.last_error, "HTTP status 503");
    assert_int_equal(f.next_fetch_at, T0 + 7200); /* Retry-After beats 600 */
    f = feed_get(fx, xid);
    assert_string_equal(f.last_error, "HTTP status 500");
    assert_int_equal(f.next_fetch_at, T0 + 600);
    f = feed_get(fx, gone);
    assert_int_equal(f.last_status, 404);

    /* Again at its time: twice the wait, 4 x interval. */
    st = pass(c, T0 + 600);
    assert_int_equal(st.failed, 3); /* /broken, /error, the 404 */
    f = feed_get(fx, bid);
    assert_int_equal(f.consecutive_errors, 2);
    assert_int_equal(f.next_fetch_at, T0 + 600 + 1200);
    /* Many failures: the wait stops at a day. */
    int64_t now = f.next_fetch_at;
    for (int i = 0; i < 10; i++) {
        pass(c, now);
        f = feed_get(fx, bid);
        assert_true(f.next_fetch_at - now <= CRAWL_MAX_BACKOFF_S);
        now = f.next_fetch_at;
    }
    assert_int_equal(f.consecutive_errors, 12);
    f = feed_get(fx, bid);
    int64_t last_wait = f.next_fetch_at - f.last_fetch_at;
    assert_int_equal(last_wait, CRAWL_MAX_BACKOFF_S);

    /* Recovery: a good document resets the errors. */
    pthread_mutex_lock(&fx->srv.lock);
    struct route *b = &fx->srv.routes[0];
    free(b->body);
    size_t len = 0;
    b->body = test_read_data(DATA, UNDATED, &len);
    b->len = len;
    pthread_mutex_unlock(&fx->srv.lock);
    st = pass(c, now);
    f = feed_get(fx, bid);
    assert_null(f.last_error);
    assert_int_equal(f.consecutive_errors, 0);
    assert_int_equal(f.last_success_at, now);
    crawl_free(c);
}

/* The crawler counts into the process's metrics registry: each recorded
 * fetch, the failures, the failing feeds (counted in the store) and the
 * ingest lag (pass time - the newest publishedAt read). The registry is
 * process-wide, so counters are checked by their differences. */
static void a_pass_counts_fetches_failures_failing_feeds_and_lag(void **state)
{
    struct fixture *fx = *state;
    crawl_metrics_init();
    struct metric *polled = metrics_counter(CRAWL_METRIC_FEEDS_POLLED, NULL);
    struct metric *failed = metrics_counter(CRAWL_METRIC_FEEDS_FAILED, NULL);
    struct metric *failing = metrics_gauge(CRAWL_METRIC_FEEDS_FAILING, NULL);
    struct metric *lag = metrics_gauge(CRAWL_METRIC_INGEST_LAG, NULL);
    assert_non_null(polled);
    assert_non_null(failed);
    assert_non_null(failing);
    assert_non_null(lag);
    route_add(&fx->srv, "/guardian", GUARDIAN, NULL, "\"g1\"");
    struct route *x = route_add(&fx->srv, "/error", NULL, "oops", NULL);
    x->status = 500;
    feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    int64_t xid = feed_add(fx, "/error", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, false);

    int64_t p0 = metrics_value(polled), f0 = metrics_value(failed);
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(metrics_value(polled) - p0, 2);
    assert_int_equal(metrics_value(failed) - f0, 1);
    assert_int_equal(metrics_value(failing), 1);
    int64_t newest = db_int(fx, "SELECT max(published_at) FROM articles");
    assert_true(newest > 0 && newest < T0);
    assert_int_equal(metrics_value(lag), T0 - newest);

    /* Both due again: a 304 (still a poll, not a failure) and a second
     * failure of the same feed (still one failing feed). The lag grows
     * with the pass time while nothing newer comes. */
    st = pass(c, T0 + 600);
    assert_int_equal(st.not_modified, 1);
    assert_int_equal(metrics_value(polled) - p0, 4);
    assert_int_equal(metrics_value(failed) - f0, 2);
    assert_int_equal(metrics_value(failing), 1);
    assert_int_equal(metrics_value(lag), T0 + 600 - newest);

    /* The broken feed recovers: no feed fails any more. */
    pthread_mutex_lock(&fx->srv.lock);
    x->status = 0;
    free(x->body);
    x->body = test_read_data(DATA, UNDATED, &x->len);
    pthread_mutex_unlock(&fx->srv.lock);
    int64_t when = feed_get(fx, xid).next_fetch_at;
    pass(c, when);
    assert_null(feed_get(fx, xid).last_error);
    assert_int_equal(metrics_value(failing), 0);
    assert_int_equal(metrics_value(failed) - f0, 2);
    crawl_free(c);
}

static void intervals_stretch_when_nothing_is_new_and_shrink_toward_the_gap(void **state)
{
    struct fixture *fx = *state;
    route_add(&fx->srv, "/guardian", GUARDIAN, NULL, "\"g1\"");
    int64_t gap = file_gap(GUARDIAN);
    assert_true(gap > 0 && gap < 3600);
    /* A feed polled hourly that turns out to publish every `gap` seconds. */
    int64_t gid = feed_add(fx, "/guardian", NULL, NULL, NULL, false, 3600, T0);
    struct crawler *c = crawler_new(fx, false);
    pass(c, T0);
    struct feed_record f = feed_get(fx, gid);
    int64_t want = 3600 - (3600 - gap) / 2;
    if (want < CRAWL_MIN_INTERVAL_S)
        want = CRAWL_MIN_INTERVAL_S;
    assert_int_equal(f.interval_s, want);
    assert_int_equal(f.next_fetch_at, T0 + want);

    /* 304s: x1.5 each time, up to six hours. */
    int64_t interval = want, now = f.next_fetch_at;
    for (int i = 0; i < 12; i++) {
        struct crawl_stats st = pass(c, now);
        assert_int_equal(st.not_modified, 1);
        interval = interval + interval / 2;
        if (interval > CRAWL_MAX_INTERVAL_S)
            interval = CRAWL_MAX_INTERVAL_S;
        f = feed_get(fx, gid);
        assert_int_equal(f.interval_s, interval);
        assert_int_equal(f.next_fetch_at, now + interval);
        now = f.next_fetch_at;
    }
    assert_int_equal(f.interval_s, CRAWL_MAX_INTERVAL_S);
    crawl_free(c);
}

static void jitter_stays_within_a_tenth_of_the_wait(void **state)
{
    struct fixture *fx = *state;
    route_add(&fx->srv, "/guardian", GUARDIAN, NULL, NULL);
    route_add(&fx->srv, "/broken", NULL, "not a feed", NULL);
    int64_t gid = feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    int64_t bid = feed_add(fx, "/broken", NULL, NULL, NULL, false, 0, T0);
    struct crawl_options o = {.per_host = 4, .host_gap_s = -1, .seed = 42};
    o.fetch.policy = &loopback;
    struct crawler *c = NULL;
    assert_int_equal(crawl_new(&c, fx->s, &o, NULL), 0);
    pass(c, T0);
    int64_t next = feed_get(fx, gid).next_fetch_at;
    assert_true(next >= T0 + 300 && next <= T0 + 330);
    next = feed_get(fx, bid).next_fetch_at;
    assert_true(next >= T0 + 600 && next <= T0 + 660);
    crawl_free(c);
}

static void one_host_gets_one_fetch_per_pass_and_a_gap(void **state)
{
    struct fixture *fx = *state;
    struct route *g = route_add(&fx->srv, "/guardian", GUARDIAN, NULL, NULL);
    struct route *h = route_add(&fx->srv, "/heise", HEISE, NULL, NULL);
    feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    feed_add(fx, "/heise", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, true); /* defaults: 1 per host, 2 s apart */
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.deferred, 1);
    assert_int_equal(route_hits(&fx->srv, g), 1); /* the first due (lower id) */
    assert_int_equal(route_hits(&fx->srv, h), 0);
    st = pass(c, T0 + CRAWL_HOST_GAP_S - 1);
    assert_int_equal(st.fetched, 0);
    assert_int_equal(st.deferred, 1);
    assert_int_equal(route_hits(&fx->srv, h), 0);
    st = pass(c, T0 + CRAWL_HOST_GAP_S);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.deferred, 0);
    assert_int_equal(route_hits(&fx->srv, h), 1);
    crawl_free(c);
}

static void items_without_a_link_or_title_are_counted_and_skipped(void **state)
{
    struct fixture *fx = *state;
    route_add(&fx->srv, "/mixed", NULL,
              "<rss version=\"2.0\"><channel><title>Mixed</title>"
              "<item><title>Good one</title><link>https://example.org/a</link></item>"
              "<item><title>No link</title></item>"
              "<item><link>https://example.org/no-title</link></item>"
              "<item><title>Not http</title><link>ftp://example.org/x</link></item>"
              "<item><title>Twice</title><link>https://example.org/a#again</link></item>"
              "</channel></rss>",
              NULL);
    int64_t id = feed_add(fx, "/mixed", NULL, NULL, NULL, false, 0, T0);
    struct crawler *c = crawler_new(fx, false);
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.articles_new, 1);
    assert_int_equal(st.items_skipped, 4);
    struct feed_record f = feed_get(fx, id);
    assert_null(f.last_error);
    assert_int_equal(f.items_total, 1);
    struct row r = article_get(fx, "https://example.org/a");
    assert_string_equal(r.title, "Good one");
    assert_string_equal(r.source_name, "Mixed");
    crawl_free(c);
}

/* ---- the background thread ----------------------------------------------------------- */

/* Pages that fail for a while (issue 23), on the passes' clock: a 503 is
 * tried again CRAWL_PAGES_RETRY_S × 2^k s later, CRAWL_PAGES_RETRIES times,
 * then given up; a 429's longer Retry-After wins, and a page that answers
 * at last is read. Nothing is fetched before it is due. */
static void a_failing_page_is_retried_with_backoff_then_given_up(void **state)
{
    struct fixture *fx = *state;
    const char *rss = arena_printf(
        &fx->a,
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>"
        "<link>http://x.example/</link><item><title>Busy page</title><link>%s</link></item>"
        "<item><title>Slow down</title><link>%s</link></item></channel></rss>",
        url_of(fx, "/busy.html"), url_of(fx, "/later.html"));
    route_add(&fx->srv, "/feed.xml", NULL, rss, NULL);
    struct route *busy = route_add(&fx->srv, "/busy.html", NULL, "<html>busy</html>", NULL);
    struct route *later = route_add(&fx->srv, "/later.html", NULL, "<html>later</html>", NULL);
    pthread_mutex_lock(&fx->srv.lock);
    busy->status = 503;
    later->status = 429;
    later->retry_after = 100;
    snprintf(busy->ctype, sizeof busy->ctype, "text/html");
    snprintf(later->ctype, sizeof later->ctype, "text/html");
    pthread_mutex_unlock(&fx->srv.lock);
    feed_add(fx, "/feed.xml", NULL, NULL, NULL, false, 0, T0);
    struct crawl_options o;
    memset(&o, 0, sizeof o);
    o.no_jitter = true;
    o.fetch.policy = &loopback;
    o.pages = CRAWL_PAGES_ALWAYS;
    o.per_host = 16;
    o.host_gap_s = -1;
    struct crawler *c = NULL;
    assert_int_equal(crawl_new(&c, fx->s, &o, NULL), 0);

    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.pages_retried, 2);
    assert_int_equal(st.pages_failed, 0);
    assert_int_equal(st.pages_waiting, 2);
    /* Each try when it is due, not before: 5 s, then 10 s, then 20 s. */
    static const struct {
        int64_t at;
        int busy_hits;
    } busy_tries[] = {{4, 1}, {5, 2}, {14, 2}, {15, 3}, {34, 3}};
    for (size_t i = 0; i < sizeof busy_tries / sizeof busy_tries[0]; i++) {
        st = pass(c, T0 + busy_tries[i].at);
        assert_int_equal(route_hits(&fx->srv, busy), busy_tries[i].busy_hits);
        assert_int_equal(st.pages_failed, 0);
    }
    st = pass(c, T0 + 35); /* the last try: given up */
    assert_int_equal(route_hits(&fx->srv, busy), 4);
    assert_int_equal(st.pages_failed, 1);
    assert_int_equal(st.pages_retried, 0);
    assert_int_equal(st.pages_waiting, 1);
    /* Retry-After 100 s wins over 5 s, and over 10 s the next time. */
    assert_int_equal(route_hits(&fx->srv, later), 1);
    pass(c, T0 + 99);
    assert_int_equal(route_hits(&fx->srv, later), 1);
    st = pass(c, T0 + 100);
    assert_int_equal(route_hits(&fx->srv, later), 2);
    assert_int_equal(st.pages_retried, 1);
    pthread_mutex_lock(&fx->srv.lock);
    later->status = 0;
    later->retry_after = 0;
    pthread_mutex_unlock(&fx->srv.lock);
    pass(c, T0 + 199);
    assert_int_equal(route_hits(&fx->srv, later), 2);
    st = pass(c, T0 + 200);
    assert_int_equal(route_hits(&fx->srv, later), 3);
    assert_int_equal(st.pages_fetched, 1);
    assert_int_equal(st.pages_waiting, 0);
    pass(c, T0 + 1000);
    assert_int_equal(route_hits(&fx->srv, busy), 4);
    assert_int_equal(route_hits(&fx->srv, later), 3);
    crawl_free(c);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void the_background_crawler_ingests_and_stops_promptly(void **state)
{
    struct fixture *fx = *state;
    route_add(&fx->srv, "/guardian", GUARDIAN, NULL, NULL);
    feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, (int64_t)time(NULL) - 1);
    struct crawler *c = crawler_new(fx, true);
    assert_int_equal(crawl_start(c, NULL), 0);
    assert_int_equal(crawl_start(c, NULL), ERR_INVALID);
    int64_t n = 0;
    for (int i = 0; i < 200 && n < 55; i++) {
        sleep_ms(50);
        assert_int_equal(store_articles_count(fx->s, &n, NULL), 0);
    }
    assert_int_equal(n, 55);
    double t = mono();
    crawl_stop(c);
    assert_true(mono() - t < 2.0);
    crawl_stop(c); /* a no-op */
    crawl_free(c);
}

static void stopping_abandons_a_hanging_fetch_and_gives_the_feed_back(void **state)
{
    struct fixture *fx = *state;
    struct route *r = route_add(&fx->srv, "/hang", NULL, "", NULL);
    r->hang = true;
    int64_t id = feed_add(fx, "/hang", NULL, NULL, NULL, false, 0, (int64_t)time(NULL) - 1);
    struct crawler *c = crawler_new(fx, true);
    assert_int_equal(crawl_start(c, NULL), 0);
    for (int i = 0; i < 200 && route_hits(&fx->srv, r) == 0; i++)
        sleep_ms(50);
    assert_int_equal(route_hits(&fx->srv, r), 1);
    double t = mono();
    crawl_stop(c);
    assert_true(mono() - t < 3.0);
    struct feed_record f = feed_get(fx, id);
    assert_int_equal(f.last_fetch_at, 0);       /* nothing recorded */
    assert_true(f.next_fetch_at <= time(NULL)); /* due again, not leased */
    crawl_free(c);
}

/* The crawler's fetches follow the network policy: a feed on an address
 * it refuses fails with the reason, and nothing of it is stored. */
static void a_feed_on_a_refused_address_fails_and_stores_nothing(void **state)
{
    struct fixture *fx = *state;
    struct route *r = route_add(&fx->srv, "/guardian", GUARDIAN, NULL, NULL);
    int64_t id = feed_add(fx, "/guardian", NULL, NULL, NULL, false, 0, T0);
    struct crawl_options o = {.no_jitter = true}; /* the default policy */
    struct crawler *c = NULL;
    assert_int_equal(crawl_new(&c, fx->s, &o, NULL), 0);
    struct crawl_stats st = pass(c, T0);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.fetched, 0);
    assert_int_equal(st.articles_new, 0);
    struct feed_record f = feed_get(fx, id);
    assert_string_equal(f.last_error, "fetch: refused: 127.0.0.1 is loopback; allow it with "
                                      "[outbound] allow_networks");
    assert_int_equal(f.consecutive_errors, 1);
    assert_int_equal(route_hits(&fx->srv, r), 0);
    assert_int_equal(db_int(fx, "SELECT count(*) FROM articles"), 0);
    crawl_free(c);

    /* Allowed, the same feed is fetched and stored. */
    c = crawler_new(fx, false);
    st = pass(c, f.next_fetch_at);
    assert_int_equal(st.fetched, 1);
    assert_int_equal(st.articles_new, 55);
    assert_null(feed_get(fx, id).last_error);
    crawl_free(c);
}

int main(void)
{
    const char *nets = "127.0.0.0/8 ::1";
    if (netpolicy_allow_parse(&loopback, nets, strlen(nets), NULL, 0) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(feeds_are_added_once_listed_claimed_and_removed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_version_1_store_gains_the_feeds_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pass_stores_the_articles_of_hand_checked_feeds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_second_pass_sends_the_validators_and_stores_nothing_on_304, setup, teardown),
        cmocka_unit_test_setup_teardown(a_changed_feed_updates_changed_items_and_adds_new_ones,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(an_undated_item_keeps_the_time_it_was_first_seen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_broken_feed_records_its_error_and_backs_off, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_pass_counts_fetches_failures_failing_feeds_and_lag, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            intervals_stretch_when_nothing_is_new_and_shrink_toward_the_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(jitter_stays_within_a_tenth_of_the_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(one_host_gets_one_fetch_per_pass_and_a_gap, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(items_without_a_link_or_title_are_counted_and_skipped,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_failing_page_is_retried_with_backoff_then_given_up, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_background_crawler_ingests_and_stops_promptly, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stopping_abandons_a_hanging_fetch_and_gives_the_feed_back,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_feed_on_a_refused_address_fails_and_stores_nothing, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
