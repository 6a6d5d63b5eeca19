/* The feeds room of ingest/ (docs/architecture.md): publishers' feeds
 * parsed (feed_), the crawler that polls them and the pages of their items
 * (crawl_), and feed lists in OPML (opml_). Fetching is fetch/'s, page
 * extraction ingest/pages', the one normalisation ingest/ingest.h's.
 * Private: feed_internal.h (the parsers' shared field helpers),
 * crawl_pages.h (the crawler's page queue). */
#ifndef NEWSD_INGEST_FEEDS_H
#define NEWSD_INGEST_FEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fetch/fetch.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* Parsing of publishers' feeds: RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 1.0 (and
 * 0.3) with libxml2, JSON Feed 1.0/1.1 with jansson. Input is the raw HTTP
 * body (gzip bodies are inflated first); output is a struct feed whose
 * every string lives in the caller's arena and is:
 *   - well-formed UTF-8 with no control characters but '\n' (content only),
 *   - trimmed, white space folded, HTML turned into plain text,
 *   - bounded by the FEED_MAX_* sizes below (cut on a code point boundary),
 *   - NULL rather than empty.
 * Links and image URLs are absolute http(s) URLs (relative ones resolved
 * against xml:base, then the feed's own link, then base_url) or NULL.
 * Security: never touches the network or the file system, never loads a DTD,
 * never expands a declared entity recursively (billion laughs), no
 * XML_PARSE_HUGE (libxml2's depth and text limits stay on).
 * Thread-safe: no state of ours outside the arguments. */

#define FEED_MAX_BODY_BYTES (16 * 1024 * 1024) /* input, also after gunzip */
#define FEED_MAX_ITEMS 1000                    /* later items are counted, not kept */
#define FEED_MAX_TITLE_BYTES 2048
#define FEED_MAX_DESCRIPTION_BYTES (32 * 1024)
#define FEED_MAX_CONTENT_BYTES (1024 * 1024) /* = LIMIT_FIELD_BYTES */
#define FEED_MAX_NAME_BYTES 512              /* author, language */
#define FEED_MAX_GUID_BYTES 2048
#define FEED_MAX_URL_BYTES (8 * 1024) /* = LIMIT_URL_BYTES; longer URLs are dropped */

enum feed_format {
    FEED_FORMAT_UNKNOWN = 0,
    FEED_FORMAT_RSS,  /* RSS 0.91, 0.92, 2.0 (<rss>) */
    FEED_FORMAT_RDF,  /* RSS 0.90 and 1.0 (<rdf:RDF>) */
    FEED_FORMAT_ATOM, /* Atom 1.0 and 0.3 (<feed>) */
    FEED_FORMAT_JSON, /* JSON Feed 1.0 / 1.1 */
};

struct feed_item {
    const char *title;       /* one line */
    const char *link;        /* absolute http(s) URL of the article */
    const char *guid;        /* RSS guid, Atom id, RDF rdf:about, JSON id; as written */
    const char *description; /* one line: RSS description, Atom summary, JSON summary */
    const char *content;     /* lines: content:encoded, Atom content, JSON content_*,
                                else the description */
    const char *author;      /* names, ", "-separated; "mail (Name)" gives Name */
    const char *image_url;   /* absolute http(s) URL: media:content, enclosure, thumbnail,
                                itunes:image, JSON image, else the first <img> of the HTML */
    int64_t published_at;    /* UTC seconds since the epoch; valid when has_date */
    bool has_date;           /* pubDate / dc:date / published / updated parsed */
};

struct feed {
    enum feed_format format;
    const char *title;
    const char *link;        /* absolute http(s) URL of the site */
    const char *language;    /* as written (RSS language, dc:language, xml:lang, JSON language) */
    struct feed_item *items; /* in document order */
    size_t n_items;          /* <= FEED_MAX_ITEMS */
    size_t n_dropped;        /* items past FEED_MAX_ITEMS */
    bool recovered;          /* the XML was not well-formed (bare '&', bad nesting, undeclared
                                prefix, ...) and was read in recover mode */
};

/* Parse body[0..len) (need not be NUL-terminated). charset is the HTTP
 * Content-Type charset or NULL: a charset libxml2 knows overrides the XML
 * declaration; without either a BOM decides, else UTF-8, else (bytes that
 * are not UTF-8) ISO-8859-1. base_url (the URL fetched, or NULL) resolves
 * relative links. The format is JSON when the first non-blank byte is '{',
 * else the XML root element decides.
 * Returns 0, or ERR_PARSE (not a feed, or XML too broken to recover, with
 * the reason in err), ERR_TOO_LARGE (body or inflated body over
 * FEED_MAX_BODY_BYTES), ERR_NOMEM (arena ceiling or malloc). On error *out
 * is zeroed. */
int feed_parse(struct arena *a, const char *body, size_t len, const char *charset,
               const char *base_url, struct feed *out, struct err *err);

/* The feed crawler: polls the store's due feeds (store.h "feeds") and runs
 * each through fetch (conditional GET, fetch/fetch.h) → parse
 * (ingest/feeds/feeds.h) → the one normalisation (ingest_normalize) → one
 * store_articles_put per feed, then records the fetch state and the next
 * poll time.
 *
 * Scheduling (docs/feeds.md): a feed is polled every interval_s seconds
 * (STORE_FEED_DEFAULT_INTERVAL at first). A poll that brings nothing new
 * (304, or a 200 whose items are all known and unchanged) stretches the
 * interval by half, up to the ceiling (crawl_options.max_interval_s,
 * CRAWL_MAX_INTERVAL_S by default; CRAWL_HEADLINES_MAX_INTERVAL_S for a
 * feed marked headlines, whose first story of the morning must not wait
 * for a night's stretched interval); every success brings an interval
 * above the ceiling (set by hand, or before the ceiling was lowered) down
 * to it. A poll that brings new items
 * moves it halfway toward the observed gap between the document's items
 * (the median gap between their dates),
 * never below CRAWL_MIN_INTERVAL_S (nor below an interval set lower by
 * hand). A failure (network, HTTP status other than 2xx/304, a document that
 * does not parse) waits interval × 2^errors, at most CRAWL_MAX_BACKOFF_S, and
 * never less than the response's Retry-After. A random 0–10 % is added to
 * every wait so that feeds added together drift apart.
 * Politeness: at most `per_host` feeds of one host per pass (fetch/fetch.h adds
 * one connection per host at a time) and CRAWL_HOST_GAP_S seconds between
 * two passes that touch a host; feeds held back stay due for a later pass.
 *
 * Pages: once a pass has stored its feeds' articles (searchable from then
 * on), it fetches the pages of the new items that lack content,
 * description, image or author (crawl_options.pages says which), extracts
 * them (ingest/pages) and stores the articles again with the gaps filled:
 * crawl_pages.h.
 *
 * Time: a pass takes `now` from its caller (tests drive the clock); the
 * background thread and crawl_once use the wall clock. One crawler per
 * store handle; its functions are not to be called from several threads at
 * once (the background thread owns it while it runs).
 *
 * Metrics (util/metrics.h, the process registry), counted by crawl_pass:
 *   newsd_feeds_polled_total  counter  fetches whose outcome was recorded
 *                                      (a 200, a 304 or a failure; not a
 *                                      fetch abandoned by crawl_stop)
 *   newsd_feeds_failed_total  counter  of those, the failures (network,
 *                                      HTTP status, parse, store)
 *   newsd_feeds_failing       gauge    enabled feeds whose last poll failed,
 *                                      counted in the store after a pass in
 *                                      which a feed started or stopped
 *                                      failing, else every
 *                                      CRAWL_FAILING_RECOUNT_S (changes made
 *                                      elsewhere: `newsd feeds`, other nodes)
 *   newsd_ingest_lag_seconds  gauge    pass time − the newest publishedAt
 *                                      among the items of the feeds read
 *                                      since the crawler started (0 until
 *                                      it has read one); set every pass, so
 *                                      it grows while nothing new comes */

#define CRAWL_MIN_INTERVAL_S 300         /* floor of the adaptive interval */
#define CRAWL_MAX_INTERVAL_S (6 * 3600)  /* ceiling of the adaptive interval */
#define CRAWL_MAX_BACKOFF_S (24 * 3600)  /* longest wait after failures */
#define CRAWL_HOST_GAP_S 2               /* between two passes touching one host */
#define CRAWL_BATCH_MAX 32               /* feeds fetched by one pass */
#define CRAWL_LEASE_S 900                /* a claimed feed is not due again for this long */
#define CRAWL_ITEM_MEMORY_S (30 * 86400) /* items a feed dropped are forgotten after this */
#define CRAWL_TICK_MS 1000               /* the background thread's pass period */
#define CRAWL_FAILING_RECOUNT_S 60       /* newsd_feeds_failing is counted at least this often */
#define CRAWL_PAGES_MAX                                                                            \
    64 /* item pages fetched by one pass (the rest                                                 \
        * wait for the next ones, crawl_pages.h) */
/* The ceiling of the adaptive interval of a feed marked headlines. */
#define CRAWL_HEADLINES_MAX_INTERVAL_S 3600
/* One feed's parse and articles. */
#define CRAWL_FEED_ARENA_BYTES ((size_t)512 * 1024 * 1024)

#define CRAWL_METRIC_FEEDS_POLLED "newsd_feeds_polled_total"
#define CRAWL_METRIC_FEEDS_FAILED "newsd_feeds_failed_total"
#define CRAWL_METRIC_FEEDS_FAILING "newsd_feeds_failing"
#define CRAWL_METRIC_INGEST_LAG "newsd_ingest_lag_seconds"
#define CRAWL_METRIC_PAGES_FETCHED "newsd_pages_fetched_total"
#define CRAWL_METRIC_PAGES_FAILED "newsd_pages_failed_total"
#define CRAWL_METRIC_PAGES_RETRIED "newsd_pages_retries_total"
#define CRAWL_METRIC_PAGES_NO_ARTICLE "newsd_pages_no_article_total"
#define CRAWL_METRIC_PAGES_WAITING "newsd_pages_waiting"

/* Which new items get their page fetched (issue 16, crawl_pages.h). */
enum crawl_pages_mode {
    CRAWL_PAGES_MISSING = 0, /* those lacking content, description, image or author */
    CRAWL_PAGES_ALWAYS,      /* every new item */
    CRAWL_PAGES_NEVER,
};

/* The mode named s ("missing", "always", "never": what `crawl --pages`,
 * `feeds add --pages` and a feed's stored setting say); false, *out
 * untouched, for any other text or NULL. */
bool crawl_pages_mode_parse(const char *s, enum crawl_pages_mode *out);

struct crawl_options {
    size_t batch_max;            /* feeds per pass; 0 = CRAWL_BATCH_MAX */
    unsigned per_host;           /* feeds of one host per pass; 0 = 1 */
    int64_t host_gap_s;          /* 0 = CRAWL_HOST_GAP_S, < 0 = no gap */
    bool no_jitter;              /* exact waits (tests) */
    uint64_t seed;               /* of the jitter; 0 = from the clock */
    struct fetch_options fetch;  /* timeouts, sizes, user agent; its cancel hook is ours */
    enum crawl_pages_mode pages; /* items whose page is fetched after their feed,
                                  * for feeds without a setting of their own */
    size_t pages_max;            /* pages per pass; 0 = CRAWL_PAGES_MAX */
    /* Ceilings of the adaptive interval ([crawl] in the config file):
     * 0 = CRAWL_MAX_INTERVAL_S and CRAWL_HEADLINES_MAX_INTERVAL_S. */
    int64_t max_interval_s;
    int64_t headlines_max_interval_s;
};

struct crawl_stats {
    size_t fetched;          /* 200s that parsed */
    size_t not_modified;     /* 304s */
    size_t failed;           /* network or HTTP errors, documents that did not parse */
    size_t deferred;         /* due feeds left for a later pass (politeness, batch size) */
    size_t articles_new;     /* articles inserted */
    size_t articles_updated; /* articles replaced (an item that changed, or a url known from
                                elsewhere) */
    size_t items_unchanged;  /* items already stored as they are */
    size_t items_skipped;    /* items without a title or usable link */
    size_t pages_fetched;    /* item pages fetched and read */
    size_t pages_failed;     /* given up: network or HTTP errors (after their retries),
                                not HTML, too large */
    size_t pages_retried;    /* failures that wait for another try (crawl_pages.h) */
    size_t pages_no_article; /* pages that hold no article */
    size_t pages_waiting;    /* queued for later passes when this one ended */
    size_t articles_filled;  /* articles completed from their page */
};

struct crawler;

/* A crawler over store s (borrowed: it must outlive the crawler). opt may
 * be NULL (defaults). ERR_NOMEM. */
int crawl_new(struct crawler **out, struct store *s, const struct crawl_options *opt,
              struct err *err);

/* Stop the background thread if it runs, then free. NULL is a no-op. */
void crawl_free(struct crawler *c);

/* One pass at time now: claim up to batch_max due feeds (politeness
 * permitting), fetch them concurrently, store their articles and record
 * each feed's outcome. stats (may be NULL) is filled, not added to. Feed
 * failures are recorded on the feeds, not returned; returns 0, or the
 * store's error (the pass goes on with the other feeds first). */
int crawl_pass(struct crawler *c, int64_t now, struct crawl_stats *stats, struct err *err);

/* Poll every feed due now once (`newsd crawl --once`): passes at the wall
 * clock until no due feed is held back by politeness and no page waits,
 * waiting out the host gap and the pages' retry times in between (bounded:
 * crawl_pages.h). stats (may be NULL) gets the sum. */
int crawl_once(struct crawler *c, struct crawl_stats *stats, struct err *err);

/* Run passes in a background thread every CRAWL_TICK_MS until crawl_stop.
 * ERR_INVALID when already running, ERR_INTERNAL when no thread starts. */
int crawl_start(struct crawler *c, struct err *err);

/* Ask the thread to stop (an ongoing fetch is abandoned within about a
 * second; its feeds are given back, due at once) and wait for it. A no-op
 * when not running. */
void crawl_stop(struct crawler *c);

/* Register the crawler's metrics (above) at 0, so that a scrape shows them
 * before the first pass, or with no crawler at all (serve --no-crawl).
 * Idempotent, thread-safe; crawl_new calls it too. */
void crawl_metrics_init(void);

/* OPML 2.0 feed lists, what every feed reader imports and exports
 * (`newsd feeds import` / `export`, docs/feeds.md "OPML"). An outline with
 * an xmlUrl attribute is a feed; an outline without one is a folder, and
 * its outlines are read too (readers nest feeds in folders). newsd's own
 * settings of a feed travel as attributes in the OPML_NS namespace
 * (newsd:source, country, category, language, headlines, interval,
 * paused, pages; also read as "newsd:NAME" when a hand-written file forgot to
 * declare the prefix), so an export re-imports to the same feeds; readers
 * ignore them.
 *
 * Every byte is hostile: libxml2 parses without network access, a
 * document with a DOCTYPE is refused before its declarations are read (no
 * entity of any kind beyond the five predefined ones), nesting, outline
 * count and size are bounded. The parser returns the values as written:
 * the caller validates them (a URL, a country code, ...). */

#define OPML_NS "https://github.com/newsd#opml"
#define OPML_MAX_BYTES (64 * 1024 * 1024) /* a document */
#define OPML_MAX_OUTLINES 100000          /* outlines of a document, folders included */
#define OPML_MAX_DEPTH 32                 /* folders in folders */

/* One feed outline. Strings are valid UTF-8 in the arena, NULL when the
 * attribute is absent or empty. */
struct opml_feed {
    const char *url;      /* xmlUrl (the attribute name in any ASCII case) */
    const char *title;    /* title, else text */
    const char *html_url; /* htmlUrl */
    /* The innermost enclosing folder whose label (text, else title) is a
     * NewsAPI category, as util/vocab.h spells it; NULL when none is. */
    const char *folder_category;
    /* newsd's attributes (namespace OPML_NS) */
    const char *source, *country, *category, *language, *headlines, *interval, *paused, *pages;
    long line; /* where the outline's start tag ends, for messages */
};

/* Does data look like OPML rather than JSONL: after blanks and a UTF-8
 * BOM it starts with '<', and "<opml" comes within its first 64 KiB. */
bool opml_sniff(const char *data, size_t len);

/* The feed outlines of the document data[0..len), in document order, in
 * the arena. ERR_PARSE (not well-formed, with its line; not an <opml>
 * document; a DOCTYPE; nested deeper than OPML_MAX_DEPTH), ERR_TOO_LARGE
 * (over OPML_MAX_BYTES or OPML_MAX_OUTLINES), ERR_NOMEM. A document
 * without feeds is no error (*n_out = 0). */
int opml_parse(struct arena *a, const char *data, size_t len, struct opml_feed **out, size_t *n_out,
               struct err *err);

/* Append an OPML 2.0 document of feeds[0..n) to out: one outline per feed
 * (text and title = the feed's title or its url, xmlUrl, htmlUrl) with
 * newsd's attributes for whatever is set (interval always: the current
 * one; paused="true" for a paused feed). The caller checks buf_error. */
void opml_write(struct buf *out, const struct feed_record *feeds, size_t n);

#endif
