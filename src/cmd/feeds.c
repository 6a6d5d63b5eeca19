/* newsd feeds (API.md §7, docs/feeds.md): add, edit, pause, resume and
 * remove the publishers' feeds the crawler polls; import and export them
 * (JSONL or OPML) and list them with their health (feeds_io.c). A url
 * whose host is a literal address the network policy refuses (loopback,
 * private, ... unless --config FILE's [outbound] allow_networks holds it;
 * util/netpolicy.h) is refused here already; a host name is checked when
 * the crawler connects to it. */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/feeds_internal.h"
#include "ingest/feeds/feeds.h"
#include "ingest/ingest.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/ascii.h"
#include "util/netpolicy.h"
#include "util/vocab.h"

#include "util/banned.h"

#define FEEDS_ARENA_BYTES (64 * 1024 * 1024)
#define FEEDS_SOURCE_MAX 128

static void feeds_usage(FILE *f)
{
    fprintf(f,
            "usage: newsd feeds add [--store LOC] [--create] [--config FILE] URL [--source ID]\n"
            "                       [--country CC] [--category CAT] [--language LL]\n"
            "                       [--headlines] [--interval SECONDS]\n"
            "                       [--pages missing|always|never]\n"
            "       newsd feeds edit [--store LOC] ID [--interval SECONDS] [--country CC]\n"
            "                       [--category CAT] [--language LL]\n"
            "                       [--headlines | --no-headlines]\n"
            "                       [--pages missing|always|never|\"\"]\n"
            "       newsd feeds pause [--store LOC] ID\n"
            "       newsd feeds resume [--store LOC] ID\n"
            "       newsd feeds poll [--store LOC] ID | --all\n"
            "                       (due now: the running server polls it within seconds)\n"
            "       newsd feeds import [--store LOC] [--create] [--config FILE] FILE\n"
            "                       (JSONL or OPML, told apart by content; - = stdin)\n"
            "       newsd feeds export [--store LOC] [--format opml|jsonl]\n"
            "       newsd feeds list [--store LOC] [--format table|json]\n"
            "       newsd feeds remove [--store LOC] ID\n"
            "  --headlines  the feed's articles are live headlines (/v2/top-headlines)\n"
            "  --interval   polling interval, %d..%d seconds (default %d; it adapts)\n"
            "  --pages      which new items get their page fetched for their text, image\n"
            "               and author: those missing one, all, none; without it (or\n"
            "               with \"\" on edit) the crawler's setting (serve/crawl --pages)\n"
            "  --country, --category, --language with an empty value (\"\") clear it\n"
            "  --format     export: opml (default) or jsonl; list: table (default) or json\n"
            "  export keeps feed URLs whole, credentials too (it is for importing again);\n"
            "  list shows a URL's password as ***\n"
            "  --store      the store (every command): else $NEWSD_STORE, else the config\n"
            "               file's [server] store, else ./newsd-data\n"
            "  --create     add, import: make the store when it does not exist (needed\n"
            "               for a --store or $NEWSD_STORE path)\n"
            "  --config     the config file (every command; else $NEWSD_CONFIG, else\n"
            "               /etc/newsd/newsd.conf when it exists): [outbound]\n"
            "               allow_networks admits feeds on loopback, private and other\n"
            "               special-use addresses\n",
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

bool cmd_feeds_fill(struct arena *ar, const struct netpolicy *policy, struct feed_record *f,
                    const struct feeds_spec *sp, char *why, size_t why_size)
{
    memset(f, 0, sizeof *f);
    f->enabled = !sp->paused;
    f->headline = sp->headlines;
    if (!sp->url || !url_valid(ar, sp->url)) {
        snprintf(why, why_size, "the feed url must be an absolute http(s) URL");
        return false;
    }
    if (!netpolicy_permits_url(policy, sp->url, why, why_size))
        return false;
    f->url = sp->url;
    if (sp->source) {
        if (!cmd_name_valid(sp->source, FEEDS_SOURCE_MAX, false)) {
            snprintf(why, why_size, "the source id must be 1 to %d characters without spaces",
                     FEEDS_SOURCE_MAX);
            return false;
        }
        f->source_id = sp->source;
    }
    if (sp->country && !code_parse(sp->country, f->country)) {
        snprintf(why, why_size, "the country must be 2 letters, e.g. gb");
        return false;
    }
    if (sp->category && !(f->category = vocab_category(sp->category))) {
        snprintf(why, why_size, "the category must be one of " VOCAB_CATEGORY_LIST);
        return false;
    }
    if (sp->language && !code_parse(sp->language, f->language)) {
        snprintf(why, why_size, "the language must be 2 letters, e.g. en");
        return false;
    }
    if (sp->pages && !crawl_pages_mode_parse(sp->pages, &(enum crawl_pages_mode){0})) {
        snprintf(why, why_size, "pages must be missing, always or never");
        return false;
    }
    f->pages = sp->pages;
    if (sp->interval != 0 &&
        (sp->interval < FEEDS_INTERVAL_MIN || sp->interval > FEEDS_INTERVAL_MAX)) {
        snprintf(why, why_size, "the interval must be %d to %d seconds", FEEDS_INTERVAL_MIN,
                 FEEDS_INTERVAL_MAX);
        return false;
    }
    f->interval_s = sp->interval;
    return true;
}

struct feeds_opts {
    const char *store, *config, *format;
    const char *source, *country, *category, *language, *interval, *pages;
    int headlines; /* -1 not given, 0 --no-headlines, 1 --headlines */
    bool all;      /* poll --all */
    bool create;   /* --create: add and import may make a store anywhere */
};

/* The option values as a spec; interval < 0 when it is no number. */
static void opts_spec(const struct feeds_opts *o, const char *url, struct feeds_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->url = url;
    sp->source = o->source;
    sp->country = o->country;
    sp->category = o->category;
    sp->language = o->language;
    sp->headlines = o->headlines == 1;
    sp->pages = o->pages;
    if (o->interval && (sp->interval = cmd_parse_digits(o->interval, FEEDS_NUMBER_DIGITS)) <= 0)
        sp->interval = -1;
}

static int feeds_add(struct store *s, struct feed_record *f)
{
    struct err err;
    err_clear(&err);
    int64_t id = 0;
    int status = cmd_status_of(store_feed_add(s, f, &id, &err), &err, "feeds add");
    if (status != CMD_EXIT_OK)
        return status;
    printf("%lld\n", (long long)id);
    if (fflush(stdout) != 0) {
        cmd_fail("feeds add: cannot write to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* The change feeds edit asks for; false with a message in why. An empty
 * --country, --category or --language clears it. */
static bool edit_change(const struct feeds_opts *o, struct feed_change *c, char country[3],
                        char language[3], char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    c->headline = o->headlines;
    c->enabled = -1;
    c->now = (int64_t)time(NULL);
    if (o->interval) {
        long long v = cmd_parse_digits(o->interval, FEEDS_NUMBER_DIGITS);
        if (v < FEEDS_INTERVAL_MIN || v > FEEDS_INTERVAL_MAX) {
            snprintf(why, why_size, "--interval must be %d to %d seconds", FEEDS_INTERVAL_MIN,
                     FEEDS_INTERVAL_MAX);
            return false;
        }
        c->interval_s = v;
    }
    if (o->country && *o->country && !code_parse(o->country, country)) {
        snprintf(why, why_size, "the country must be 2 letters, e.g. gb (\"\" clears it)");
        return false;
    }
    c->country = o->country ? (*o->country ? country : "") : NULL;
    if (o->language && *o->language && !code_parse(o->language, language)) {
        snprintf(why, why_size, "the language must be 2 letters, e.g. en (\"\" clears it)");
        return false;
    }
    c->language = o->language ? (*o->language ? language : "") : NULL;
    if (o->category && *o->category && !(c->category = vocab_category(o->category))) {
        snprintf(why, why_size,
                 "the category must be one of " VOCAB_CATEGORY_LIST " (\"\" clears it)");
        return false;
    }
    if (o->category && !*o->category)
        c->category = "";
    if (o->pages && *o->pages && !crawl_pages_mode_parse(o->pages, &(enum crawl_pages_mode){0})) {
        snprintf(why, why_size, "--pages must be missing, always or never (\"\" clears it)");
        return false;
    }
    c->pages = o->pages;
    if (!o->interval && !o->country && !o->language && !o->category && o->headlines < 0 &&
        !o->pages) {
        snprintf(why, why_size,
                 "nothing to change: give --interval, --country, --category, --language, "
                 "--pages, --headlines or --no-headlines");
        return false;
    }
    return true;
}

/* The exit status of a store call rc made for feeds verb on feed ref. */
static int feeds_outcome(const char *verb, const char *ref, int rc, struct err *err)
{
    if (rc == ERR_NOTFOUND) {
        cmd_fail("feeds %s: no feed has the id '%s' (see newsd feeds list)", verb, ref);
        return CMD_EXIT_FAIL;
    }
    if (rc < 0) {
        cmd_fail("feeds %s: %s", verb, err_msg(err, rc));
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* A pause of a paused feed, or a resume of an active one, changes nothing:
 * say so rather than succeed in silence. True when c would change f. */
static bool change_is_news(const struct feed_record *f, const struct feed_change *c)
{
    if (c->enabled < 0 || (c->enabled == 1) != f->enabled)
        return true;
    if (f->enabled)
        printf("feed %lld is not paused: nothing to do (its next poll is due in %llds; "
               "newsd feeds poll %lld polls it now)\n",
               (long long)f->id,
               (long long)(f->next_fetch_at > c->now ? f->next_fetch_at - c->now : 0),
               (long long)f->id);
    else
        printf("feed %lld is already paused: nothing to do\n", (long long)f->id);
    return false;
}

/* edit, pause, resume and remove: one feed by id. */
static int feeds_change(struct store *s, struct arena *ar, const char *verb, const char *ref,
                        const struct feed_change *c)
{
    long long id = cmd_parse_digits(ref, FEEDS_NUMBER_DIGITS);
    struct err err;
    err_clear(&err);
    struct feed_record f;
    bool toggle = !strcmp(verb, "pause") || !strcmp(verb, "resume");
    /* Only a pause or resume reads the feed first: to say when it changes nothing. */
    int rc = id < 0 ? ERR_NOTFOUND : toggle ? store_feed_get(s, ar, id, &f, &err) : 0;
    if (rc == 0 && toggle && !change_is_news(&f, c))
        return CMD_EXIT_OK;
    if (rc == 0)
        rc = !strcmp(verb, "remove") ? store_feed_remove(s, id, &err)
                                     : store_feed_change(s, id, c, &err);
    return feeds_outcome(verb, ref, rc, &err);
}

/* One feed due now, if it is polled at all. */
static int poll_one(struct store *s, const struct feed_record *f, int64_t now, struct err *err)
{
    if (!f->enabled) {
        printf("feed %lld is paused: not polled (newsd feeds resume %lld first)\n",
               (long long)f->id, (long long)f->id);
        return 0;
    }
    int rc = store_feed_schedule(s, f->id, now, err);
    if (rc == 0)
        printf("feed %lld is due now\n", (long long)f->id);
    return rc;
}

/* poll ID | --all: due now. The running server's crawler looks for due
 * feeds every CRAWL_TICK_MS, so "now" is within a few seconds; a feed
 * being fetched at this moment is fetched once more after it. */
static int feeds_poll(struct store *s, struct arena *ar, const struct feeds_opts *o,
                      const char *ref)
{
    struct err err;
    err_clear(&err);
    int64_t now = (int64_t)time(NULL);
    struct feed_record *all = NULL, one;
    size_t n = 0;
    int rc;
    if (o->all) {
        rc = store_feeds_list(s, ar, &all, &n, &err);
    } else {
        long long id = cmd_parse_digits(ref, FEEDS_NUMBER_DIGITS);
        rc = id < 0 ? ERR_NOTFOUND : store_feed_get(s, ar, id, &one, &err);
        all = &one;
        n = 1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = poll_one(s, &all[i], now, &err);
    if (rc == 0 && o->all && n == 0)
        printf("no feeds to poll (newsd feeds add URL)\n");
    return feeds_outcome("poll", o->all ? "--all" : ref, rc, &err);
}

static const char *const verbs[] = {"add",    "edit",   "pause", "resume", "poll",
                                    "import", "export", "list",  "remove"};

/* What verb takes: a word for "expected ...", and how many arguments. */
static const char *verb_argument(const char *verb, bool all, int *want)
{
    *want = 1;
    if (!strcmp(verb, "poll") && all) {
        *want = 0;
        return "no ID with --all";
    }
    if (!strcmp(verb, "poll"))
        return "one ID, or --all";
    if (!strcmp(verb, "add"))
        return "one URL";
    if (!strcmp(verb, "import"))
        return "one FILE";
    if (!strcmp(verb, "list") || !strcmp(verb, "export")) {
        *want = 0;
        return "no argument";
    }
    return "one ID";
}

/* Options that belong to other verbs than verb; NULL when all fit. */
static const char *misplaced_option(const struct feeds_opts *o, const char *verb)
{
    bool add = !strcmp(verb, "add"), edit = !strcmp(verb, "edit");
    if (o->create && !add && strcmp(verb, "import"))
        return "--create belongs to feeds add and feeds import";
    if (o->source && !add)
        return "--source belongs to feeds add";
    if ((o->country || o->category || o->language || o->interval || o->pages ||
         o->headlines >= 0) &&
        !add && !edit)
        return "--country, --category, --language, --headlines, --interval and --pages belong "
               "to feeds add and feeds edit";
    if (o->headlines == 0 && add)
        return "--no-headlines belongs to feeds edit (a new feed has no headlines unless "
               "--headlines)";
    if (o->all && strcmp(verb, "poll"))
        return "--all belongs to feeds poll";
    if (o->format && strcmp(verb, "list") && strcmp(verb, "export"))
        return "--format belongs to feeds list and feeds export";
    if (o->format && !strcmp(verb, "list") && strcmp(o->format, "table") &&
        strcmp(o->format, "json"))
        return "feeds list --format is table or json";
    if (o->format && !strcmp(verb, "export") && strcmp(o->format, "opml") &&
        strcmp(o->format, "jsonl"))
        return "feeds export --format is opml or jsonl";
    return NULL;
}

/* --headlines (on 1) and --no-headlines (on 0) into feeds_opts.headlines
 * at to, which may hear one of them only. */
static int take_headlines_as(int *to, int on)
{
    if (*to >= 0 && *to != on) {
        cmd_fail("feeds: --headlines or --no-headlines, not both");
        return CMD_EXIT_USAGE;
    }
    *to = on;
    return CMD_EXIT_OK;
}

static int take_headlines(const char *value, void *to)
{
    (void)value;
    return take_headlines_as(to, 1);
}

static int take_no_headlines(const char *value, void *to)
{
    (void)value;
    return take_headlines_as(to, 0);
}

int cmd_feeds(int argc, char **argv)
{
    struct feeds_opts o;
    memset(&o, 0, sizeof o);
    o.headlines = -1;
    const struct cmd_option opts[] = {
        CMD_TEXT("config", &o.config),
        CMD_TEXT("source", &o.source),
        CMD_TEXT("country", &o.country),
        CMD_TEXT("category", &o.category),
        CMD_TEXT("language", &o.language),
        {"headlines", false, take_headlines, &o.headlines},
        {"no-headlines", false, take_no_headlines, &o.headlines},
        CMD_TEXT("interval", &o.interval),
        CMD_TEXT("format", &o.format),
        CMD_TEXT("pages", &o.pages),
        CMD_FLAG("all", &o.all),
        CMD_FLAG("create", &o.create),
        CMD_OPTIONS_END,
    };
    int parsed = cmd_options_parse(argc, argv, opts, &o.store, feeds_usage);
    if (parsed != CMD_GO_ON)
        return parsed;
    if (optind >= argc) {
        cmd_fail("feeds: which command? add, edit, pause, resume, poll, import, export, list "
                 "or remove");
        feeds_usage(stderr);
        return CMD_EXIT_USAGE;
    }
    const char *verb = argv[optind];
    char **args = argv + optind + 1;
    int n_args = argc - optind - 1;
    bool known = false;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        known = known || !strcmp(verb, verbs[i]);
    if (!known) {
        cmd_fail("feeds: unknown command '%s' (add, edit, pause, resume, poll, import, export, "
                 "list, remove)",
                 verb);
        return CMD_EXIT_USAGE;
    }
    int want;
    const char *expected = verb_argument(verb, o.all, &want);
    if (n_args != want) {
        cmd_fail("feeds %s: expected %s", verb, expected);
        return CMD_EXIT_USAGE;
    }
    const char *misplaced = misplaced_option(&o, verb);
    if (misplaced) {
        cmd_fail("feeds %s: %s", verb, misplaced);
        return CMD_EXIT_USAGE;
    }

    static struct config cfg; /* static: it is large */
    const char *config_path = cmd_config_path(o.config);
    int status = cmd_config_load(&cfg, config_path);
    if (status != CMD_EXIT_OK)
        return status;
    const struct netpolicy *policy = &cfg.outbound.policy;

    struct store *s = NULL;
    struct arena ar;
    struct feed_record f;
    struct feed_change change;
    char why[200], country[3], language[3];
    arena_init(&ar, FEEDS_ARENA_BYTES);
    status = CMD_EXIT_USAGE;
    /* Check the arguments before creating a store for nothing. */
    if (!strcmp(verb, "add")) {
        struct feeds_spec sp;
        opts_spec(&o, args[0], &sp);
        if (!cmd_feeds_fill(&ar, policy, &f, &sp, why, sizeof why)) {
            cmd_fail("feeds add: %s", why);
            goto out;
        }
    } else if (!strcmp(verb, "edit")) {
        if (!edit_change(&o, &change, country, language, why, sizeof why)) {
            cmd_fail("feeds edit: %s", why);
            goto out;
        }
    } else if (!strcmp(verb, "pause") || !strcmp(verb, "resume")) {
        memset(&change, 0, sizeof change);
        change.headline = -1;
        change.enabled = !strcmp(verb, "resume");
        change.now = (int64_t)time(NULL);
    }
    status = CMD_EXIT_FAIL;
    /* feeds add and import make a store as import does (a first step of
     * a new installation): at the configured place, elsewhere with --create. */
    unsigned flags = 0;
    if (!strcmp(verb, "add") || !strcmp(verb, "import"))
        flags = cmd_open_making(o.create);
    struct cmd_store_where where;
    cmd_store_where_from(&where, o.store, &cfg, config_path);
    if (cmd_store_open_where(&s, &where, cmd_index_kind(NULL, cfg.index), flags) != 0)
        goto out;
    if (!strcmp(verb, "add"))
        status = feeds_add(s, &f);
    else if (!strcmp(verb, "import"))
        status = cmd_feeds_import(s, &ar, policy, args[0]);
    else if (!strcmp(verb, "export") || !strcmp(verb, "list"))
        status = cmd_feeds_show(s, &ar, verb, o.format);
    else if (!strcmp(verb, "poll"))
        status = feeds_poll(s, &ar, &o, n_args ? args[0] : NULL);
    else
        status = feeds_change(s, &ar, verb, args[0], &change);
out:
    arena_release(&ar);
    if (s)
        store_close(s);
    return status;
}
