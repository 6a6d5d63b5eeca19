/* The feed crawler (ingest/feeds/feeds.h): the due → claim → fetch → parse →
 * normalise → store pipeline, the adaptive schedule, host politeness and
 * the background thread of `newsd serve`.
 *
 * Item memory: every parsed item gets a fingerprint (FNV-1a over the fields
 * the feed gave) kept per feed in the store with the publication time its
 * article was stored with. An item whose fingerprint is unchanged is not
 * written again (no new ingest sequence, nothing for the index to redo); an
 * undated item keeps the time it was first seen instead of taking each
 * poll's time. */

#include "ingest/feeds/feeds.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ingest/feeds/crawl_pages.h"
#include "ingest/ingest.h"
#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/ascii.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/sort.h"
#include "util/url.h"
#include "util/urlview.h"

#include "util/banned.h"

#define CRAWL_HOST_MAX 256  /* bytes of a host name kept for politeness */
#define CRAWL_ERROR_MAX 200 /* bytes of a recorded error line */

struct host_slot {
    char host[CRAWL_HOST_MAX];
    int64_t last; /* pass time of the last fetch */
};

struct crawler {
    struct store *s;
    struct crawl_options opt;
    uint64_t rng;
    struct host_slot *hosts; /* hosts fetched less than host_gap_s ago */
    size_t n_hosts, cap_hosts;

    int64_t newest_published;      /* newest publishedAt of the items read (ingest lag) */
    int64_t failing_counted_at;    /* pass time newsd_feeds_failing was counted; 0 never */
    bool failing_changed;          /* a feed started or stopped failing since */
    struct crawl_page_queue pages; /* of the pass under way */

    pthread_mutex_t lock; /* guards the wait below */
    pthread_cond_t wake;
    pthread_t thread;
    bool running;
    atomic_bool stop;
};

/* One claimed feed of a pass. */
struct crawl_job {
    struct feed_record *feed;
    char host[CRAWL_HOST_MAX];
};

/* ---- small helpers ------------------------------------------------------ */

static uint64_t rng_next(uint64_t *state)
{
    /* splitmix64: enough to spread poll times. */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A random extra 0..delay/10 seconds (0 without jitter). */
static int64_t jitter(struct crawler *c, int64_t delay)
{
    if (c->opt.no_jitter || delay < 10)
        return 0;
    return (int64_t)(rng_next(&c->rng) % (uint64_t)(delay / 10 + 1));
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Lower-case host of an absolute URL (no userinfo, no port) into out; the
 * whole URL, cut, when it has none (politeness then treats it alone). */
static void url_host(const char *url, char out[CRAWL_HOST_MAX])
{
    struct url_parts u;
    struct url_authority au = {0};
    url_split(url, strlen(url), &u);
    if (u.authority)
        url_authority_split(u.authority, u.authority_len, &au); /* "[::1" still names one */
    const char *h = au.host;
    size_t hn = au.host_len;
    if (hn == 0) {
        h = url;
        hn = strlen(url);
    }
    if (hn >= CRAWL_HOST_MAX)
        hn = CRAWL_HOST_MAX - 1;
    ascii_lower_n(out, h, hn);
    out[hn] = '\0';
}

static int64_t host_gap(const struct crawler *c)
{
    return c->opt.host_gap_s < 0 ? 0 : c->opt.host_gap_s ? c->opt.host_gap_s : CRAWL_HOST_GAP_S;
}

/* Forget hosts whose gap has passed at now. */
static void hosts_expire(struct crawler *c, int64_t now)
{
    int64_t gap = host_gap(c);
    size_t k = 0;
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (c->hosts[i].last + gap > now && c->hosts[i].last <= now)
            c->hosts[k++] = c->hosts[i];
    }
    c->n_hosts = k;
}

static bool host_recent(const struct crawler *c, const char *host)
{
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (strcmp(c->hosts[i].host, host) == 0)
            return true;
    }
    return false;
}

/* Note a fetch of host at now; without memory the gap is simply not kept. */
static void host_touch(struct crawler *c, const char *host, int64_t now)
{
    if (host_gap(c) == 0)
        return;
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (strcmp(c->hosts[i].host, host) == 0) {
            c->hosts[i].last = now;
            return;
        }
    }
    if (c->n_hosts == c->cap_hosts) {
        size_t ncap = c->cap_hosts ? 2 * c->cap_hosts : 64;
        struct host_slot *grown = realloc(c->hosts, ncap * sizeof *grown);
        if (!grown)
            return;
        c->hosts = grown;
        c->cap_hosts = ncap;
    }
    struct host_slot *h = &c->hosts[c->n_hosts++];
    snprintf(h->host, sizeof h->host, "%s", host);
    h->last = now;
}

/* One field of a fingerprint: its bytes (none for NULL), then a separator
 * that no field holds (feeds.h strips control characters but '\n'), so that
 * ("ab", "c") and ("a", "bc") differ. */
static uint64_t fingerprint_field(uint64_t h, const char *s)
{
    if (s)
        h = hash_fnv1a64_update(h, s, strlen(s));
    return hash_fnv1a64_update(h, "\x1f", 1);
}

/* Fingerprint of what the feed says about an item. The feeds' item memory
 * stores it: the bytes hashed and their order are a stored format. */
static int64_t item_hash(const struct feed_item *it)
{
    char date[24];
    uint64_t h = HASH_FNV1A64_INIT;
    snprintf(date, sizeof date, "%lld", it->has_date ? (long long)it->published_at : 0LL);
    h = fingerprint_field(h, it->title);
    h = fingerprint_field(h, it->link);
    h = fingerprint_field(h, it->description);
    h = fingerprint_field(h, it->content);
    h = fingerprint_field(h, it->author);
    h = fingerprint_field(h, it->image_url);
    h = fingerprint_field(h, date);
    return (int64_t)h;
}

/* err's message cut to one short line for the feed's last_error. */
static const char *error_line(struct arena *a, const char *prefix, const char *msg)
{
    char line[CRAWL_ERROR_MAX];
    snprintf(line, sizeof line, "%s%s", prefix, msg && *msg ? msg : "unknown error");
    for (char *p = line; *p; p++) {
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    }
    const char *copy = arena_strdup(a, line);
    return copy ? copy : "error";
}

/* sum += x, field by field. */
static void crawl_stats_add(struct crawl_stats *sum, const struct crawl_stats *x)
{
    sum->fetched += x->fetched;
    sum->not_modified += x->not_modified;
    sum->failed += x->failed;
    sum->deferred += x->deferred;
    sum->articles_new += x->articles_new;
    sum->articles_updated += x->articles_updated;
    sum->items_unchanged += x->items_unchanged;
    sum->items_skipped += x->items_skipped;
    sum->pages_fetched += x->pages_fetched;
    sum->pages_failed += x->pages_failed;
    sum->pages_retried += x->pages_retried;
    sum->pages_no_article += x->pages_no_article;
    sum->articles_filled += x->articles_filled;
    sum->pages_waiting = x->pages_waiting; /* a state, not a count: the latest */
}

/* ---- metrics ---------------------------------------------------------------- */

/* The handles of feeds.h's crawler metrics, registered once per process. */
static struct {
    struct metric *polled, *failed, *failing, *lag;
    struct metric *pages_fetched, *pages_failed, *pages_retried, *pages_no_article, *pages_waiting;
} metric;

static void metrics_register(void)
{
    metric.polled =
        metrics_counter(CRAWL_METRIC_FEEDS_POLLED, "Feed fetches attempted by the crawler.");
    metric.failed = metrics_counter(CRAWL_METRIC_FEEDS_FAILED,
                                    "Feed fetches that failed (network, HTTP status, parse).");
    metric.failing = metrics_gauge(CRAWL_METRIC_FEEDS_FAILING, "Feeds whose last poll failed.");
    metric.pages_fetched =
        metrics_counter(CRAWL_METRIC_PAGES_FETCHED, "Item pages fetched and read by the crawler.");
    metric.pages_failed = metrics_counter(
        CRAWL_METRIC_PAGES_FAILED,
        "Item pages given up: network or HTTP errors after their retries, refused, too large.");
    metric.pages_retried = metrics_counter(
        CRAWL_METRIC_PAGES_RETRIED, "Item page fetches that failed and wait for another try.");
    metric.pages_no_article =
        metrics_counter(CRAWL_METRIC_PAGES_NO_ARTICLE, "Item pages read that held no article.");
    metric.pages_waiting = metrics_gauge(CRAWL_METRIC_PAGES_WAITING,
                                         "Item pages queued for the crawler's next passes.");
    /* newsd_ingest_lag_seconds is registered when it is first known
     * (metrics_count_pass): a 0 before any feed was read would say "fresh". */
}

void crawl_metrics_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, metrics_register);
}

/* newsd_feeds_failing from the store: after a change of this crawler's,
 * else when the last count is CRAWL_FAILING_RECOUNT_S old. A store that
 * cannot be read keeps the last count (the next pass tries again; the
 * pass itself logs the store's failure). */
static void failing_count(struct crawler *c, int64_t now)
{
    if (!c->failing_changed && c->failing_counted_at != 0 && now >= c->failing_counted_at &&
        now - c->failing_counted_at < CRAWL_FAILING_RECOUNT_S)
        return;
    struct arena a;
    arena_init(&a, 0);
    struct feed_record *feeds = NULL;
    size_t n = 0;
    struct err e;
    err_clear(&e);
    int rc = store_feeds_list(c->s, &a, &feeds, &n, &e);
    if (rc == 0) {
        int64_t failing = 0;
        for (size_t i = 0; i < n; i++)
            failing += feeds[i].enabled && feeds[i].consecutive_errors > 0;
        metrics_set(metric.failing, failing);
        c->failing_counted_at = now;
        c->failing_changed = false;
    }
    arena_release(&a);
}

/* Count a pass's outcomes: each fetch recorded is one of fetched,
 * not_modified or failed. */
static void metrics_count_pass(struct crawler *c, const struct crawl_stats *st, int64_t now)
{
    metrics_add(metric.polled, st->fetched + st->not_modified + st->failed);
    metrics_add(metric.failed, st->failed);
    metrics_add(metric.pages_fetched, st->pages_fetched);
    metrics_add(metric.pages_failed, st->pages_failed);
    metrics_add(metric.pages_retried, st->pages_retried);
    metrics_add(metric.pages_no_article, st->pages_no_article);
    metrics_set(metric.pages_waiting, (int64_t)st->pages_waiting);
    failing_count(c, now);
    if (c->newest_published > 0) {
        if (!metric.lag)
            metric.lag = metrics_gauge(CRAWL_METRIC_INGEST_LAG,
                                       "Seconds between now and the publication time of the "
                                       "newest article the crawler has read.");
        metrics_set(metric.lag, now > c->newest_published ? now - c->newest_published : 0);
    }
}

/* ---- scheduling ---------------------------------------------------------- */

static int64_t current_interval(const struct feed_record *f)
{
    return f->interval_s > 0 ? f->interval_s : STORE_FEED_DEFAULT_INTERVAL;
}

/* How often a document's items appear: the median of the gaps between its
 * dated items in time order (the lower middle one when their number is
 * even), 0 when fewer than two are dated. The median, not the mean: one old
 * item left in a feed must not make a busy feed look quiet. */
static int64_t observed_gap(struct arena *a, const struct feed *doc)
{
    int64_t *t = arena_calloc(a, doc->n_items ? doc->n_items : 1, sizeof *t);
    size_t n = 0;
    if (!t)
        return 0;
    for (size_t i = 0; i < doc->n_items; i++) {
        if (doc->items[i].has_date)
            t[n++] = doc->items[i].published_at;
    }
    if (n < 2)
        return 0;
    qsort(t, n, sizeof *t, sort_cmp_i64);
    for (size_t i = 0; i + 1 < n; i++)
        t[i] = t[i + 1] - t[i];
    qsort(t, n - 1, sizeof *t, sort_cmp_i64);
    return t[(n - 2) / 2];
}

/* The longest interval a feed may reach (feeds.h "Scheduling"). */
static int64_t interval_ceiling(const struct crawler *c, const struct feed_record *f)
{
    if (f->headline)
        return c->opt.headlines_max_interval_s > 0 ? c->opt.headlines_max_interval_s
                                                   : CRAWL_HEADLINES_MAX_INTERVAL_S;
    return c->opt.max_interval_s > 0 ? c->opt.max_interval_s : CRAWL_MAX_INTERVAL_S;
}

/* A success: the new interval and next poll time into o. */
static void schedule_success(struct crawler *c, const struct feed_record *f, int64_t now,
                             int64_t new_items, int64_t gap, struct feed_fetch_outcome *o)
{
    int64_t interval = current_interval(f), ceiling = interval_ceiling(c, f);
    if (new_items > 0) {
        /* Shrink halfway toward how often the feed publishes (the gap between
         * its items, else since its last new item); never grow here. */
        if (gap <= 0 && f->last_new_item_at > 0 && f->last_new_item_at < now)
            gap = now - f->last_new_item_at;
        int64_t floor = interval < CRAWL_MIN_INTERVAL_S ? interval : CRAWL_MIN_INTERVAL_S;
        if (gap > 0 && gap < interval)
            interval = clamp64(interval - (interval - gap) / 2, floor, interval);
    } else if (interval < ceiling) {
        interval = interval + interval / 2;
    }
    if (interval > ceiling)
        interval = ceiling;
    o->interval_s = interval;
    o->consecutive_errors = 0;
    o->next_fetch_at = now + interval + jitter(c, interval);
}

/* A failure: back off exponentially, honour Retry-After. */
static void schedule_failure(struct crawler *c, const struct feed_record *f, int64_t now,
                             long retry_after, struct feed_fetch_outcome *o)
{
    int64_t interval = current_interval(f);
    int64_t errors = f->consecutive_errors + 1;
    int64_t delay = interval;
    for (int64_t i = 0; i < errors && delay < CRAWL_MAX_BACKOFF_S; i++)
        delay *= 2;
    if (delay > CRAWL_MAX_BACKOFF_S)
        delay = CRAWL_MAX_BACKOFF_S;
    delay += jitter(c, delay);
    if (retry_after > 0 && retry_after > delay)
        delay = retry_after > CRAWL_MAX_BACKOFF_S ? CRAWL_MAX_BACKOFF_S : retry_after;
    o->interval_s = interval;
    o->consecutive_errors = errors;
    o->next_fetch_at = now + delay;
}

/* ---- one feed's document into the store ---------------------------------- */

/* Articles of one parsed document. */
struct doc_batch {
    struct article *arts;         /* normalised items, document order, unique urls */
    struct feed_item_mark *marks; /* arts[i]'s mark */
    int64_t *hashes;              /* arts[i]'s fingerprint now */
    bool *undated;                /* arts[i] had no date in the feed */
    size_t n;
};

/* The source name of a feed's articles: the catalogue's name for its
 * source, else the document's title, else its host. */
static const char *feed_source_name(struct store *s, struct arena *a, const struct feed_record *f,
                                    const struct feed *doc, const char *host)
{
    if (f->source_id) {
        struct source src;
        struct err e;
        err_clear(&e);
        if (store_source_get(s, a, f->source_id, &src, &e) == 0 && src.name)
            return src.name;
    }
    if (doc->title)
        return doc->title;
    if (f->title)
        return f->title;
    if (strncmp(host, "www.", 4) == 0)
        host += 4;
    return arena_strdup(a, host);
}

/* Normalise the items of doc into b. Items that fail are counted in
 * stats->items_skipped. Returns 0 or a store / memory error. */
static int doc_articles(struct store *s, struct arena *a, const struct feed_record *f,
                        const struct feed *doc, const char *host, int64_t now, struct doc_batch *b,
                        struct crawl_stats *stats, struct err *err)
{
    size_t cap = doc->n_items ? doc->n_items : 1;
    b->n = 0;
    b->arts = arena_calloc(a, cap, sizeof *b->arts);
    b->marks = arena_calloc(a, cap, sizeof *b->marks);
    b->hashes = arena_calloc(a, cap, sizeof *b->hashes);
    b->undated = arena_calloc(a, cap, sizeof *b->undated);
    if (!b->arts || !b->marks || !b->hashes || !b->undated)
        return err_set(err, ERR_NOMEM, "out of memory");

    const char *source_name = feed_source_name(s, a, f, doc, host);
    char doc_lang[3];
    page_language(doc->language, doc_lang);
    struct ingest_options io = {
        .headlines = f->headline,
        .country = f->country[0] ? f->country : NULL,
        .category = f->category,
        .language = f->language[0] ? f->language : NULL,
        .now = now,
    };

    for (size_t i = 0; i < doc->n_items; i++) {
        const struct feed_item *it = &doc->items[i];
        if (!it->title || !it->link) {
            stats->items_skipped++;
            continue;
        }
        struct article art;
        memset(&art, 0, sizeof art);
        art.source_id = f->source_id;
        art.source_name = source_name;
        art.author = it->author;
        art.title = it->title;
        art.description = it->description;
        art.url = it->link;
        art.url_to_image = it->image_url;
        art.published_at = it->has_date ? it->published_at : 0; /* 0: now */
        art.content = it->content ? it->content : it->description;
        memcpy(art.language, doc_lang, sizeof doc_lang);
        struct err e;
        err_clear(&e);
        int rc = ingest_normalize(s, a, &art, &io, &e);
        if (rc == ERR_INVALID) {
            stats->items_skipped++;
            continue;
        }
        if (rc < 0) {
            if (err)
                *err = e;
            return rc;
        }
        /* A url listed twice keeps its first (usually newest) entry. */
        bool dup = false;
        for (size_t k = 0; k < b->n && !dup; k++)
            dup = strcmp(b->arts[k].canonical_url, art.canonical_url) == 0;
        if (dup) {
            stats->items_skipped++;
            continue;
        }
        b->arts[b->n] = art;
        b->marks[b->n].key = art.canonical_url;
        b->hashes[b->n] = item_hash(it);
        b->undated[b->n] = !it->has_date;
        b->n++;
    }
    return 0;
}

bool crawl_pages_mode_parse(const char *s, enum crawl_pages_mode *out)
{
    static const struct {
        const char *name;
        enum crawl_pages_mode mode;
    } modes[] = {{"missing", CRAWL_PAGES_MISSING},
                 {"always", CRAWL_PAGES_ALWAYS},
                 {"never", CRAWL_PAGES_NEVER}};
    for (size_t i = 0; s && i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(s, modes[i].name) == 0) {
            *out = modes[i].mode;
            return true;
        }
    }
    return false;
}

/* The feed's own page setting, else the crawler's (a value the store holds
 * but this version does not know falls back too). */
static enum crawl_pages_mode feed_pages_mode(const struct crawler *c, const struct feed_record *f)
{
    enum crawl_pages_mode m = c->opt.pages;
    (void)crawl_pages_mode_parse(f->pages, &m); /* else m stays the crawler's */
    return m;
}

/* Store what changed in b; *new_items = items this feed had not listed
 * before. Fills b->marks with what is now stored. */
static int doc_store(struct crawler *c, struct arena *a, const struct feed_record *f,
                     struct doc_batch *b, int64_t *new_items, struct crawl_stats *stats,
                     struct err *err)
{
    struct store *s = c->s;
    int rc;
    *new_items = 0;
    if (b->n == 0)
        return 0;
    if ((rc = store_feed_items_get(s, f->id, b->marks, b->n, err)) < 0)
        return rc;
    struct article *put = arena_calloc(a, b->n, sizeof *put);
    bool *put_new = arena_calloc(a, b->n, sizeof *put_new);
    bool *put_dated = arena_calloc(a, b->n, sizeof *put_dated);
    if (!put || !put_new || !put_dated)
        return err_set(err, ERR_NOMEM, "out of memory");
    size_t n_put = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct feed_item_mark *m = &b->marks[i];
        struct article *art = &b->arts[i];
        if (m->known && m->hash == b->hashes[i]) {
            stats->items_unchanged++;
            continue; /* m keeps the stored publication time */
        }
        if (m->known && b->undated[i])
            art->published_at = m->published_at; /* first seen, not now */
        if (!m->known)
            (*new_items)++;
        m->hash = b->hashes[i];
        m->published_at = art->published_at;
        put_new[n_put] = !m->known;
        put_dated[n_put] = !b->undated[i];
        put[n_put++] = *art;
    }
    struct store_put_stats ps = {0, 0};
    if ((rc = store_articles_put(s, put, n_put, &ps, err)) < 0)
        return rc;
    stats->articles_new += ps.inserted;
    stats->articles_updated += ps.updated;
    /* Stored, so searchable: their pages come at the end of the pass (or
     * of a later one, crawl_pages.h). */
    enum crawl_pages_mode mode = feed_pages_mode(c, f);
    for (size_t i = 0; i < n_put; i++) {
        if (put_new[i] && crawl_pages_want(&c->pages, mode, &put[i], put_dated[i]) < 0)
            return err_set(err, ERR_NOMEM, "out of memory");
    }
    return 0;
}

/* ---- one fetched feed ------------------------------------------------------ */

static bool status_ok(long status)
{
    return status >= 200 && status < 300;
}

/* Turn one fetch result into articles and the feed's recorded outcome.
 * Returns 0, or a store error (the feed's state may then be stale). */
static int feed_process(struct crawler *c, const struct crawl_job *job,
                        const struct fetch_result *res, int64_t now, struct crawl_stats *stats,
                        struct err *err)
{
    const struct feed_record *f = job->feed;
    struct arena a;
    arena_init(&a, CRAWL_FEED_ARENA_BYTES);
    struct feed_fetch_outcome o;
    memset(&o, 0, sizeof o);
    o.fetched_at = now;
    o.status = (int)res->status;
    o.items = -1;
    o.forget_before = now - CRAWL_ITEM_MEMORY_S;
    int rc = 0;
    struct err e;
    err_clear(&e);

    if (res->rc < 0) {
        o.error = error_line(&a, "fetch: ", res->errbuf);
    } else if (res->status == 304) {
        stats->not_modified++;
        schedule_success(c, f, now, 0, 0, &o);
    } else if (!status_ok(res->status)) {
        char line[64];
        snprintf(line, sizeof line, "HTTP status %ld", res->status);
        o.error = error_line(&a, "", line);
    } else {
        char charset[64];
        const char *cs =
            fetch_content_type_charset(res->content_type, charset, sizeof charset) ? charset : NULL;
        const char *base = res->effective_url ? res->effective_url : f->url;
        struct feed doc;
        int prc = feed_parse(&a, res->body, res->len, cs, base, &doc, &e);
        if (prc < 0) {
            o.error = error_line(&a, "parse: ", err_msg(&e, prc));
        } else {
            struct doc_batch b;
            int64_t new_items = 0;
            rc = doc_articles(c->s, &a, f, &doc, job->host, now, &b, stats, &e);
            if (rc == 0)
                rc = doc_store(c, &a, f, &b, &new_items, stats, &e);
            if (rc == ERR_NOMEM) {
                /* The document is too large for the arena: the feed's fault. */
                o.error = error_line(&a, "", "feed too large to process");
                rc = 0;
            } else if (rc < 0) {
                o.error = error_line(&a, "store: ", err_msg(&e, rc));
                if (err)
                    *err = e;
            } else {
                stats->fetched++;
                for (size_t i = 0; i < b.n; i++)
                    if (b.marks[i].published_at > c->newest_published)
                        c->newest_published = b.marks[i].published_at;
                o.new_validators = true;
                o.etag = res->etag;
                o.last_modified = res->last_modified;
                o.title = doc.title;
                o.site_url = doc.link;
                o.items = (int64_t)doc.n_items;
                o.new_items = new_items;
                o.marks = b.marks;
                o.n_marks = b.n;
                schedule_success(c, f, now, new_items, observed_gap(&a, &doc), &o);
            }
        }
    }
    if ((o.error != NULL) != (f->consecutive_errors > 0))
        c->failing_changed = true;
    if (o.error) {
        stats->failed++;
        schedule_failure(c, f, now, res->retry_after_s, &o);
        char shown[512];
        log_warn("feed %lld %s: %s", (long long)f->id,
                 urlview_redacted(f->url, URLVIEW_REDACT_ALL, shown, sizeof shown), o.error);
    } else if (res->retry_after_s > 0 && o.next_fetch_at < now + res->retry_after_s) {
        o.next_fetch_at = now + (res->retry_after_s > CRAWL_MAX_BACKOFF_S ? CRAWL_MAX_BACKOFF_S
                                                                          : res->retry_after_s);
    }
    struct err re;
    err_clear(&re);
    int rrc = store_feed_fetch_record(c->s, f->id, &o, &re);
    if (rrc < 0 && rrc != ERR_NOTFOUND && rc == 0) {
        /* ERR_NOTFOUND: the feed was removed while it was fetched. */
        rc = rrc;
        if (err)
            *err = re;
    }
    arena_release(&a);
    return rc;
}

/* ---- passes ----------------------------------------------------------------- */

static bool crawl_cancelled(void *ctx)
{
    struct crawler *c = ctx;
    return atomic_load(&c->stop);
}

int crawl_pass(struct crawler *c, int64_t now, struct crawl_stats *stats_out, struct err *err)
{
    struct crawl_stats stats;
    memset(&stats, 0, sizeof stats);
    struct arena a;
    arena_init(&a, 0);
    struct feed_record *due = NULL;
    size_t n_due = 0, n_jobs = 0, batch = c->opt.batch_max ? c->opt.batch_max : CRAWL_BATCH_MAX;
    unsigned per_host = c->opt.per_host ? c->opt.per_host : 1;
    struct crawl_job *jobs = NULL;
    int64_t *ids = NULL;
    bool *claimed = NULL;
    struct fetch_request *reqs = NULL;
    struct fetch_result *res = NULL;
    struct fetch_options fo = c->opt.fetch;
    fo.cancelled = crawl_cancelled;
    fo.cancel_ctx = c;
    int rc;

    /* Look further than one batch so a busy host does not hide the others. */
    if ((rc = store_feeds_due(c->s, &a, now, batch * 4, &due, &n_due, err)) < 0)
        goto out;
    if (n_due == 0)
        goto out;
    hosts_expire(c, now);
    jobs = arena_calloc(&a, n_due, sizeof *jobs);
    ids = arena_calloc(&a, n_due, sizeof *ids);
    claimed = arena_calloc(&a, n_due, sizeof *claimed);
    if (!jobs || !ids || !claimed) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_due; i++) {
        struct crawl_job *j = &jobs[n_jobs];
        url_host(due[i].url, j->host);
        unsigned same = 0;
        for (size_t k = 0; k < n_jobs; k++)
            same += strcmp(jobs[k].host, j->host) == 0;
        if (n_jobs == batch || same >= per_host || host_recent(c, j->host)) {
            stats.deferred++;
            continue;
        }
        j->feed = &due[i];
        ids[n_jobs] = due[i].id;
        n_jobs++;
    }
    if ((rc = store_feeds_claim(c->s, ids, n_jobs, now, now + CRAWL_LEASE_S, claimed, err)) < 0)
        goto out;
    /* Keep the claimed ones (another crawler may have taken the rest). */
    size_t k = 0;
    for (size_t i = 0; i < n_jobs; i++) {
        if (claimed[i])
            jobs[k++] = jobs[i];
    }
    n_jobs = k;
    if (n_jobs == 0)
        goto out;

    reqs = calloc(n_jobs, sizeof *reqs);
    res = calloc(n_jobs, sizeof *res);
    if (!reqs || !res) {
        rc = err_set(err, ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n_jobs; i++)
            store_feed_schedule(c->s, jobs[i].feed->id, now, NULL);
        goto out;
    }
    for (size_t i = 0; i < n_jobs; i++) {
        reqs[i].url = jobs[i].feed->url;
        reqs[i].etag = jobs[i].feed->etag;
        reqs[i].last_modified = jobs[i].feed->last_modified;
        host_touch(c, jobs[i].host, now);
    }
    fetch_run(reqs, n_jobs, &fo, res);

    for (size_t i = 0; i < n_jobs; i++) {
        if (res[i].rc == ERR_BUSY && atomic_load(&c->stop)) {
            /* Abandoned by a stop: give the feed back, due at once. */
            store_feed_schedule(c->s, jobs[i].feed->id, now, NULL);
            continue;
        }
        struct err fe;
        err_clear(&fe);
        int frc = feed_process(c, &jobs[i], &res[i], now, &stats, &fe);
        if (frc < 0 && rc == 0) {
            rc = frc;
            if (err)
                *err = fe;
        }
    }
out:
    /* The pages of what this pass (or an earlier one) stored; a pass with
     * no feed due runs for them too. */
    if (!atomic_load(&c->stop) && c->pages.n > 0) {
        struct err pe;
        err_clear(&pe);
        size_t max = c->opt.pages_max ? c->opt.pages_max : CRAWL_PAGES_MAX;
        int prc = crawl_pages_run(&c->pages, c->s, &fo, max, now, &stats, &pe);
        if (prc < 0 && rc == 0) {
            rc = prc;
            if (err)
                *err = pe;
        }
    }
    stats.pages_waiting = c->pages.n;
    for (size_t i = 0; res && i < n_jobs; i++)
        fetch_result_release(&res[i]);
    free(res);
    free(reqs);
    arena_release(&a);
    metrics_count_pass(c, &stats, now);
    if (stats_out)
        *stats_out = stats;
    return rc;
}

static void sleep_s(int64_t s)
{
    struct timespec ts = {(time_t)s, 0};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int crawl_once(struct crawler *c, struct crawl_stats *stats_out, struct err *err)
{
    struct crawl_stats sum;
    memset(&sum, 0, sizeof sum);
    int rc = 0;
    for (;;) {
        struct crawl_stats st;
        rc = crawl_pass(c, (int64_t)time(NULL), &st, err);
        size_t deferred = st.deferred;
        st.deferred = 0;
        crawl_stats_add(&sum, &st);
        if (rc < 0 || atomic_load(&c->stop) || (deferred == 0 && st.pages_waiting == 0))
            break;
        if (deferred == 0) {
            /* Only pages wait: the next pass fetches them, once the first
             * of them is due (a retry, CRAWL_PAGES_RETRY_MAX_S at most). */
            int64_t due = crawl_pages_due_at(&c->pages), now = (int64_t)time(NULL);
            if (due > now)
                sleep_s(due - now);
            continue;
        }
        /* Everything held back waits for a host gap (or the next batch). */
        int64_t gap = host_gap(c);
        sleep_s(gap > 0 ? gap : 1);
    }
    if (stats_out)
        *stats_out = sum;
    return rc;
}

/* ---- lifecycle and the background thread -------------------------------- */

int crawl_new(struct crawler **out, struct store *s, const struct crawl_options *opt,
              struct err *err)
{
    struct crawler *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return err_set(err, ERR_NOMEM, "out of memory");
    crawl_metrics_init();
    c->s = s;
    if (opt)
        c->opt = *opt;
    c->rng = c->opt.seed ? c->opt.seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    crawl_pages_init(&c->pages);
    atomic_init(&c->stop, false);
    if (clock_cond_init(&c->wake) != 0) {
        free(c);
        return err_set(err, ERR_NOMEM, "cannot create a condition variable");
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        pthread_cond_destroy(&c->wake);
        free(c);
        return err_set(err, ERR_NOMEM, "cannot create a mutex");
    }
    *out = c;
    return 0;
}

void crawl_free(struct crawler *c)
{
    if (!c)
        return;
    crawl_stop(c);
    crawl_pages_release(&c->pages);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    free(c->hosts);
    free(c);
}

static void *crawl_main(void *arg)
{
    struct crawler *c = arg;
    while (!atomic_load(&c->stop)) {
        struct crawl_stats st;
        struct err e;
        err_clear(&e);
        int rc = crawl_pass(c, (int64_t)time(NULL), &st, &e);
        if (rc < 0)
            log_error("crawl: %s", err_msg(&e, rc));
        if (st.fetched + st.not_modified + st.failed > 0)
            log_info("crawl: fetched %zu, not modified %zu, failed %zu, articles new %zu, "
                     "updated %zu",
                     st.fetched, st.not_modified, st.failed, st.articles_new, st.articles_updated);
        struct timespec until = clock_mono_in(CRAWL_TICK_MS);
        pthread_mutex_lock(&c->lock);
        while (!atomic_load(&c->stop)) {
            if (pthread_cond_timedwait(&c->wake, &c->lock, &until) == ETIMEDOUT)
                break;
        }
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

int crawl_start(struct crawler *c, struct err *err)
{
    if (c->running)
        return err_set(err, ERR_INVALID, "the crawler is already running");
    atomic_store(&c->stop, false);
    if (pthread_create(&c->thread, NULL, crawl_main, c) != 0)
        return err_set(err, ERR_INTERNAL, "cannot start the crawler thread");
    c->running = true;
    return 0;
}

void crawl_stop(struct crawler *c)
{
    if (!c || !c->running)
        return;
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->stop, true);
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    c->running = false;
}
