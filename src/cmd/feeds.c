/* newsd feeds (API.md §7): add, import, list and remove the publishers'
 * feeds the crawler polls (docs/feeds.md). A feed import is JSONL, one
 * object per line with the fields of `feeds add`: url (required), source,
 * country, category, language, headlines (bool), interval (seconds); other
 * keys (such as the catalogue's "verified") are ignored. A url already
 * registered is left as it is, so re-importing a catalogue is harmless.
 * A url whose host is a literal address the network policy refuses
 * (loopback, private, ... unless --config FILE's [outbound]
 * allow_networks holds it; util/netpolicy.h) is refused here already; a
 * host name is checked when the crawler connects to it. */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "ingest/ingest.h"
#include "store/store.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "util/netpolicy.h"
#include "util/ascii.h"
#include "util/timefmt.h"

#include "util/vocab.h"

#include "util/banned.h"

#define FEEDS_ARENA_BYTES (64 * 1024 * 1024)
#define FEEDS_LINE_MAX (1024 * 1024) /* one JSONL feed object */
#define FEEDS_INTERVAL_MIN 60        /* seconds */
#define FEEDS_INTERVAL_MAX (24 * 3600)
#define FEEDS_SOURCE_MAX 128

static void feeds_usage(FILE *f)
{
    fprintf(f,
            "usage: newsd feeds add [--store LOC] [--config FILE] URL [--source ID]\n"
            "                       [--country CC] [--category CAT] [--language LL]\n"
            "                       [--headlines] [--interval SECONDS]\n"
            "       newsd feeds import [--store LOC] [--config FILE] FILE   (JSONL, - = stdin)\n"
            "       newsd feeds list [--store LOC] [--config FILE]\n"
            "       newsd feeds remove [--store LOC] [--config FILE] ID\n"
            "  --headlines  the feed's articles are live headlines (/v2/top-headlines)\n"
            "  --interval   first polling interval, %d..%d seconds (default %d; it adapts)\n"
            "  --config     the config file: [outbound] allow_networks admits feeds on\n"
            "               loopback, private and other special-use addresses\n",
            FEEDS_INTERVAL_MIN, FEEDS_INTERVAL_MAX, STORE_FEED_DEFAULT_INTERVAL);
}

/* Two ASCII letters, lower-cased into out. */
static bool code_parse(const char *s, char out[3])
{
    if (!s || strlen(s) != 2 || !ascii_is_alpha(s[0]) || !ascii_is_alpha(s[1]))
        return false;
    out[0] = ascii_lower(s[0]);
    out[1] = ascii_lower(s[1]);
    out[2] = '\0';
    return true;
}

static bool source_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > FEEDS_SOURCE_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
            return false;
    }
    return true;
}

/* An absolute http(s) URL without control characters. */
static bool url_valid(struct arena *ar, const char *url)
{
    char *canon, *domain;
    for (const char *p = url; *p; p++) {
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            return false;
    }
    return ingest_url_canonical(ar, url, &canon, &domain) == 0;
}

/* Fill f from the option values; a message in why (for "feeds add: ..." or
 * "line N: ...") and false when one is bad or the url's host is an address
 * policy refuses. */
static bool feed_fill(struct arena *ar, const struct netpolicy *policy, struct feed_record *f,
                      const char *url, const char *source, const char *country,
                      const char *category, const char *language, bool headlines,
                      long long interval, char *why, size_t why_size)
{
    memset(f, 0, sizeof *f);
    f->enabled = true;
    f->headline = headlines;
    if (!url || !url_valid(ar, url)) {
        snprintf(why, why_size, "the feed url must be an absolute http(s) URL");
        return false;
    }
    if (!netpolicy_permits_url(policy, url, why, why_size))
        return false;
    f->url = url;
    if (source) {
        if (!source_valid(source)) {
            snprintf(why, why_size, "the source id must be 1 to %d characters without spaces",
                     FEEDS_SOURCE_MAX);
            return false;
        }
        f->source_id = source;
    }
    if (country && !code_parse(country, f->country)) {
        snprintf(why, why_size, "the country must be 2 letters, e.g. gb");
        return false;
    }
    if (category && !(f->category = vocab_category(category))) {
        snprintf(why, why_size, "the category must be one of " VOCAB_CATEGORY_LIST);
        return false;
    }
    if (language && !code_parse(language, f->language)) {
        snprintf(why, why_size, "the language must be 2 letters, e.g. en");
        return false;
    }
    if (interval != 0 && (interval < FEEDS_INTERVAL_MIN || interval > FEEDS_INTERVAL_MAX)) {
        snprintf(why, why_size, "the interval must be %d to %d seconds", FEEDS_INTERVAL_MIN,
                 FEEDS_INTERVAL_MAX);
        return false;
    }
    f->interval_s = interval;
    return true;
}

/* Plain decimal digits; -1 otherwise. */
static long long parse_number(const char *s)
{
    long long v = 0;
    size_t n = strlen(s);
    if (n == 0 || n > 15)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

struct feeds_opts {
    const char *store, *config;
    const struct netpolicy *policy; /* from the config */
    const char *source, *country, *category, *language, *interval;
    bool headlines;
};

static int feeds_add(struct store *s, struct arena *ar, const struct feeds_opts *o, const char *url)
{
    struct feed_record f;
    char why[200];
    long long interval = 0;
    if (o->interval && (interval = parse_number(o->interval)) <= 0) {
        cmd_fail("feeds add: --interval must be %d to %d seconds", FEEDS_INTERVAL_MIN,
                 FEEDS_INTERVAL_MAX);
        return CMD_EXIT_USAGE;
    }
    if (!feed_fill(ar, o->policy, &f, url, o->source, o->country, o->category, o->language,
                   o->headlines, interval, why, sizeof why)) {
        cmd_fail("feeds add: %s", why);
        return CMD_EXIT_USAGE;
    }
    struct err err;
    err_clear(&err);
    int64_t id = 0;
    int rc = store_feed_add(s, &f, &id, &err);
    if (rc < 0) {
        cmd_fail("feeds add: %s", err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    printf("%lld\n", (long long)id);
    if (fflush(stdout) != 0) {
        cmd_fail("feeds add: cannot write to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* A string member or NULL; *bad when present with another type. */
static const char *member_str(const json_t *obj, const char *key, bool *bad)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        *bad = true;
        return NULL;
    }
    return json_string_value(v);
}

/* One JSONL line; *added / *present counted, a message in why when bad. */
static int import_line(struct store *s, struct arena *ar, const struct netpolicy *policy,
                       const char *line, size_t len, size_t *added, size_t *present, char *why,
                       size_t why_size, struct err *err)
{
    json_error_t je;
    json_t *obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    int rc = 0;
    bool bad = false;
    if (!obj || !json_is_object(obj)) {
        snprintf(why, why_size, "not a JSON object%s%s", obj ? "" : ": ", obj ? "" : je.text);
        rc = ERR_INVALID;
        goto out;
    }
    const char *url = member_str(obj, "url", &bad);
    const char *source = member_str(obj, "source", &bad);
    const char *country = member_str(obj, "country", &bad);
    const char *category = member_str(obj, "category", &bad);
    const char *language = member_str(obj, "language", &bad);
    const json_t *h = json_object_get(obj, "headlines");
    const json_t *iv = json_object_get(obj, "interval");
    if (bad || (h && !json_is_boolean(h) && !json_is_null(h)) ||
        (iv && !json_is_integer(iv) && !json_is_null(iv))) {
        snprintf(why, why_size,
                 "a field has the wrong type (url, source, country, category and "
                 "language are strings, headlines a boolean, interval an integer)");
        rc = ERR_INVALID;
        goto out;
    }
    long long interval = json_is_integer(iv) ? (long long)json_integer_value(iv) : 0;
    if (json_is_integer(iv) && interval <= 0)
        interval = -1; /* out of range: feed_fill says so */
    struct feed_record f;
    if (!feed_fill(ar, policy, &f, url, source, country, category, language, json_is_true(h),
                   interval, why, why_size)) {
        rc = ERR_INVALID;
        goto out;
    }
    rc = store_feed_add(s, &f, NULL, err);
    if (rc == 0) {
        (*added)++;
    } else if (rc == ERR_EXISTS) {
        (*present)++;
        rc = 0;
    }
out:
    json_decref(obj);
    return rc;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isspace((unsigned char)s[i]))
            return false;
    }
    return true;
}

static int feeds_import(struct store *s, struct arena *ar, const struct netpolicy *policy,
                        const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        cmd_fail("feeds import: cannot open %s: %s", path, strerror(errno));
        return CMD_EXIT_FAIL;
    }
    char *line = NULL;
    size_t cap = 0, added = 0, present = 0, skipped = 0, lineno = 0;
    ssize_t n;
    int status = CMD_EXIT_OK;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)n;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (blank(line, len))
            continue;
        char why[256] = "";
        struct err err;
        err_clear(&err);
        int rc;
        if (len > FEEDS_LINE_MAX) {
            snprintf(why, sizeof why, "line longer than %d bytes", FEEDS_LINE_MAX);
            rc = ERR_INVALID;
        } else {
            rc = import_line(s, ar, policy, line, len, &added, &present, why, sizeof why, &err);
        }
        if (rc == ERR_INVALID) {
            fprintf(stderr, "%s: line %zu: %s\n", path, lineno, why);
            skipped++;
        } else if (rc < 0) {
            cmd_fail("feeds import %s: line %zu: %s", path, lineno, err_msg(&err, rc));
            status = CMD_EXIT_FAIL;
            break;
        }
    }
    if (status == CMD_EXIT_OK && ferror(f)) {
        cmd_fail("feeds import: cannot read %s", path);
        status = CMD_EXIT_FAIL;
    }
    free(line);
    if (f != stdin)
        fclose(f);
    fprintf(stderr, "feeds added %zu, already present %zu, skipped %zu\n", added, present, skipped);
    return status;
}

static const char *time_cell(struct arena *ar, int64_t t, const char *none)
{
    if (t <= 0)
        return none;
    char iso[TIMEFMT_ISO_LEN];
    timefmt_iso8601(t, iso);
    const char *c = arena_strdup(ar, iso);
    return c ? c : "?";
}

#define LIST_COLS 9

static int feeds_list(struct store *s, struct arena *ar)
{
    struct err err;
    err_clear(&err);
    struct feed_record *feeds = NULL;
    size_t n = 0;
    int rc = store_feeds_list(s, ar, &feeds, &n, &err);
    if (rc < 0) {
        cmd_fail("feeds list: %s", err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    static const char *const head[LIST_COLS] = {"ID",         "URL",        "SOURCE",
                                                "LAST FETCH", "STATUS",     "ITEMS",
                                                "STORED",     "NEXT FETCH", "LAST ERROR"};
    const char **cells = arena_calloc(ar, (n + 1) * LIST_COLS, sizeof *cells);
    if (!cells) {
        cmd_fail("feeds list: out of memory");
        return CMD_EXIT_FAIL;
    }
    size_t w[LIST_COLS];
    for (size_t c = 0; c < LIST_COLS; c++) {
        cells[c] = head[c];
        w[c] = strlen(head[c]);
    }
    for (size_t i = 0; i < n; i++) {
        const struct feed_record *f = &feeds[i];
        const char **row = cells + (i + 1) * LIST_COLS;
        row[0] = arena_printf(ar, "%lld", (long long)f->id);
        row[1] = cmd_table_cell(ar, f->url);
        row[2] = cmd_table_cell(ar, f->source_id);
        row[3] = time_cell(ar, f->last_fetch_at, "never");
        row[4] = f->last_fetch_at ? (f->last_status ? arena_printf(ar, "%d", f->last_status) : "-")
                                  : "-";
        row[5] = arena_printf(ar, "%lld", (long long)f->items_last);
        row[6] = arena_printf(ar, "%lld", (long long)f->items_total);
        row[7] = f->enabled ? time_cell(ar, f->next_fetch_at, "now") : "disabled";
        row[8] = cmd_table_cell(ar, f->last_error);
        for (size_t c = 0; c < LIST_COLS; c++) {
            if (!row[c]) {
                cmd_fail("feeds list: out of memory");
                return CMD_EXIT_FAIL;
            }
            size_t len = strlen(row[c]);
            if (len > w[c] && c < LIST_COLS - 1)
                w[c] = len;
        }
    }
    for (size_t i = 0; i <= n; i++) {
        const char **row = cells + i * LIST_COLS;
        printf("%-*s  %-*s  %-*s  %-*s  %*s  %*s  %*s  %-*s  %s\n", (int)w[0], row[0], (int)w[1],
               row[1], (int)w[2], row[2], (int)w[3], row[3], (int)w[4], row[4], (int)w[5], row[5],
               (int)w[6], row[6], (int)w[7], row[7], row[8]);
    }
    if (fflush(stdout) != 0) {
        cmd_fail("feeds list: cannot write to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

static int feeds_remove(struct store *s, const char *ref)
{
    long long id = parse_number(ref);
    struct err err;
    err_clear(&err);
    int rc = id < 0 ? ERR_NOTFOUND : store_feed_remove(s, id, &err);
    if (rc == ERR_NOTFOUND) {
        cmd_fail("feeds remove: no feed has the id '%s' (see newsd feeds list)", ref);
        return CMD_EXIT_FAIL;
    }
    if (rc < 0) {
        cmd_fail("feeds remove: %s", err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

int cmd_feeds(int argc, char **argv)
{
    static const struct option opts[] = {
        {"store", required_argument, NULL, 's'},    {"config", required_argument, NULL, 'C'},
        {"source", required_argument, NULL, 'S'},   {"country", required_argument, NULL, 'c'},
        {"category", required_argument, NULL, 'k'}, {"language", required_argument, NULL, 'l'},
        {"headlines", no_argument, NULL, 'H'},      {"interval", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    struct feeds_opts o;
    memset(&o, 0, sizeof o);
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 's':
            o.store = optarg;
            break;
        case 'C':
            o.config = optarg;
            break;
        case 'S':
            o.source = optarg;
            break;
        case 'c':
            o.country = optarg;
            break;
        case 'k':
            o.category = optarg;
            break;
        case 'l':
            o.language = optarg;
            break;
        case 'H':
            o.headlines = true;
            break;
        case 'i':
            o.interval = optarg;
            break;
        case 'h':
            feeds_usage(stdout);
            return CMD_EXIT_OK;
        default:
            feeds_usage(stderr);
            return CMD_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        cmd_fail("feeds: which command? add, import, list or remove");
        feeds_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    const char *verb = argv[optind];
    char **args = argv + optind + 1;
    int n_args = argc - optind - 1;
    int want;
    if (!strcmp(verb, "add") || !strcmp(verb, "import") || !strcmp(verb, "remove")) {
        want = 1;
    } else if (!strcmp(verb, "list")) {
        want = 0;
    } else {
        cmd_fail("feeds: unknown command '%s' (add, import, list, remove)", verb);
        return CMD_EXIT_USAGE;
    }
    if (n_args != want) {
        cmd_fail("feeds %s: expected %s", verb,
                 want == 0                 ? "no argument"
                 : !strcmp(verb, "add")    ? "one URL"
                 : !strcmp(verb, "import") ? "one FILE"
                                           : "one ID");
        return CMD_EXIT_USAGE;
    }
    bool feed_opts = o.source || o.country || o.category || o.language || o.headlines || o.interval;
    if (strcmp(verb, "add") && feed_opts) {
        cmd_fail("feeds %s: --source, --country, --category, --language, --headlines and "
                 "--interval belong to feeds add",
                 verb);
        return CMD_EXIT_USAGE;
    }

    static struct config cfg; /* static: it is large */
    int status = cmd_config_load(&cfg, o.config);
    if (status != CMD_EXIT_OK)
        return status;
    o.policy = &cfg.outbound.policy;

    struct store *s = NULL;
    struct arena ar;
    arena_init(&ar, FEEDS_ARENA_BYTES);
    status = CMD_EXIT_FAIL;
    if (!strcmp(verb, "add")) {
        /* Check the arguments before creating a store for nothing. */
        struct feed_record f;
        char why[200];
        long long interval = o.interval ? parse_number(o.interval) : 0;
        if (o.interval && interval <= 0)
            interval = -1;
        if (!feed_fill(&ar, o.policy, &f, args[0], o.source, o.country, o.category, o.language,
                       o.headlines, interval, why, sizeof why)) {
            cmd_fail("feeds add: %s", why);
            status = CMD_EXIT_USAGE;
            goto out;
        }
    }
    if (cmd_store_open(&s, cmd_store_location(o.store), cmd_index_kind(NULL, NULL)) < 0)
        goto out;
    if (!strcmp(verb, "add"))
        status = feeds_add(s, &ar, &o, args[0]);
    else if (!strcmp(verb, "import"))
        status = feeds_import(s, &ar, o.policy, args[0]);
    else if (!strcmp(verb, "list"))
        status = feeds_list(s, &ar);
    else
        status = feeds_remove(s, args[0]);
out:
    arena_release(&ar);
    if (s)
        store_close(s);
    return status;
}
