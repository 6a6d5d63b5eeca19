/* Every size, length and count limit of newsd, in one place. */
#ifndef NEWSD_UTIL_LIMITS_H
#define NEWSD_UTIL_LIMITS_H

/* HTTP (API.md §1, §8) */
#define LIMIT_URL_BYTES (8 * 1024)     /* longer: 414 requestTooLarge */
#define LIMIT_HEADER_BYTES (16 * 1024) /* larger: 431 requestTooLarge */
#define LIMIT_RESPONSE_BYTES (64 * 1024 * 1024)
#define LIMIT_REQUEST_ARENA_BYTES (64 * 1024 * 1024)

/* Parameters */
#define LIMIT_Q_CHARS 500 /* code points, after URL decoding */
#define LIMIT_SOURCES 20
#define LIMIT_LIST_ITEMS 200 /* domains, excludeDomains */
#define LIMIT_PAGE_SIZE 100
#define LIMIT_RESULT_WINDOW 10000 /* default page*pageSize cap */
#define LIMIT_COUNT_BUCKETS 2500  /* /v2/everything/counts: ~100 days of hours */
#define LIMIT_FACET_SIZE 100      /* facetSize (index.h: INDEX_FACET_SIZE_MAX) */

/* Query language */
#define LIMIT_QUERY_DEPTH 16 /* parenthesis / operator nesting */
#define LIMIT_QUERY_TERMS                                                                          \
    256 /* words and phrases in one query (a 500-character q holds at most 250) */
/* A prefix (word*) stands for the indexed words that start with it: at most
 * this many for one prefix, and LIMIT_QUERY_TERMS for all of a query's
 * prefixes together; past either the query is refused as too broad, where
 * an OR of thousands of words would be a slow query. */
#define LIMIT_PREFIX_WORDS 64
#define LIMIT_PHRASE_TOKENS 512 /* a 500-character CJK run is one phrase of 499 bigrams */
#define LIMIT_AUTHOR_WORDS 64   /* words of an author name read (store/meta.h, author: in q) */
/* Proximity "a b"~N: N at most this (a wider window is an AND that costs
 * position reads for nothing), and at most this many distinct words, each
 * a list of positions held at once while the windows are searched. */
#define LIMIT_NEAR_DISTANCE 100
#define LIMIT_NEAR_WORDS 32

/* Text */
#define LIMIT_TOKEN_BYTES 256   /* longer tokens are truncated */
#define LIMIT_CONTENT_CHARS 200 /* API.md §3 truncation */

/* Import */
#define LIMIT_IMPORT_LINE_BYTES (16 * 1024 * 1024)
#define LIMIT_IMPORT_BATCH 2000         /* articles per transaction */
#define LIMIT_FIELD_BYTES (1024 * 1024) /* one article field */

/* Webhook alerts (src/push/webhook.h, api/alerts.c) */
#define LIMIT_ALERT_BODY_BYTES (16 * 1024) /* POST /v2/alerts: larger is 413 */
#define LIMIT_ALERT_URL_BYTES 2048         /* a webhook URL */
#define LIMIT_ALERT_SECRET_BYTES 256       /* 1.. bytes of HMAC key */
#define LIMIT_ALERT_ARTICLES 100           /* articles per delivery */

/* Time budget of one search, ms (default; --query-timeout-ms, config) */
#define LIMIT_QUERY_TIMEOUT_MS 5000

/* Live window of /v2/top-headlines, seconds (default; configurable) */
#define LIMIT_LIVE_WINDOW_SECONDS (48 * 3600)
/* Unsent bytes a live stream may hold before its client is cut off as too
 * slow to read (about 250 articles). */
#define LIMIT_STREAM_BUFFER_BYTES (1024 * 1024)

/* Exports (/v2/everything/export) running at once on a node; one more is
 * 503 (each holds a thread and a store connection for minutes). */
#define LIMIT_EXPORTS_RUNNING 8

#endif
