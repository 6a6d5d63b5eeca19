/* config.h: the config file parser. The format (also docs/configuration.md):
 * - UTF-8 text, lines end in LF or CRLF; an initial BOM is skipped; a NUL
 *   byte or a line over CONFIG_LINE_MAX bytes is an error.
 * - Blank lines and lines whose first non-blank character is '#' or ';' are
 *   ignored. There are no comments after a value.
 * - `[server]`, `[outbound]`, `[retention]`, `[crawl]` and `[plan NAME]` start sections; NAME is
 *   1..63 of A-Z a-z 0-9 . _ - ; a plan section may appear once per name.
 * - `key = value` inside a section; blanks around key and value are dropped.
 *   A key may be set once per section; unknown keys and sections are errors.
 * - Integers are plain decimal digits; burst_per_second may have a fraction
 *   (digits.digits). Every number has a range (see the tables below).
 * - allow_networks is a list of networks (util/netpolicy.h reads it);
 *   user_agent and proxy are text, optionally in double quotes. */
#include "config/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "ingest/feeds/feeds.h"
#include "util/limits.h"

#include "util/banned.h"

#define INT_DIGITS_MAX 18 /* below INT64_MAX, so no overflow while reading */
#define FRACTION_DIGITS_MAX 9

enum section {
    SECTION_NONE,
    SECTION_SERVER,
    SECTION_OUTBOUND,
    SECTION_RETENTION,
    SECTION_CRAWL,
    SECTION_STORIES,
    SECTION_PLAN
};

/* A view of part of the text. */
struct span {
    const char *p;
    size_t n;
};

struct parser {
    const char *name; /* file name for messages */
    size_t line;
    struct err *err;
    struct config *c;
    enum section section;
    uint32_t server_set;    /* server_keys rows given in the current [server] (bit = row) */
    unsigned outbound_set;  /* enum outbound_field bits given so far */
    unsigned retention_set; /* bits of retention_keys given so far */
    unsigned crawl_set;     /* bits of crawl_keys given so far */
    unsigned stories_set;   /* bits of stories_keys given so far */
    size_t plan;            /* index in c->plans of the current [plan] */
};

static int parse_fail(struct parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int parse_fail(struct parser *ps, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(ps->err, ERR_PARSE, "%s:%zu: %s", ps->name, ps->line, msg);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static struct span span_trim(struct span s)
{
    while (s.n && is_blank(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && is_blank(s.p[s.n - 1]))
        s.n--;
    return s;
}

static bool span_eq(struct span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && !memcmp(s.p, lit, n);
}

/* For messages: at most 64 bytes of s, control bytes as '?'. */
static const char *span_show(struct span s, char out[68])
{
    size_t n = s.n > 64 ? 64 : s.n, i;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        out[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    if (s.n > 64) {
        out[i++] = '.';
        out[i++] = '.';
        out[i++] = '.';
    }
    out[i] = '\0';
    return out;
}

/* Plain decimal digits in [min, max]. */
static int value_int(struct parser *ps, struct span key, struct span v, int64_t min, int64_t max,
                     int64_t *out)
{
    char kb[68], vb[68];
    if (v.n == 0)
        return parse_fail(ps, "%s needs a value", span_show(key, kb));
    int64_t x = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9' || i == INT_DIGITS_MAX)
            return parse_fail(ps, "%s: '%s' is not a whole number from %lld to %lld",
                              span_show(key, kb), span_show(v, vb), (long long)min, (long long)max);
        x = x * 10 + (v.p[i] - '0');
    }
    if (x < min || x > max)
        return parse_fail(ps, "%s: %lld is out of range (%lld to %lld)", span_show(key, kb),
                          (long long)x, (long long)min, (long long)max);
    *out = x;
    return 0;
}

/* digits[.digits] in [0, max]. */
static int value_decimal(struct parser *ps, struct span key, struct span v, double max, double *out)
{
    char kb[68], vb[68];
    int64_t whole = 0, frac = 0, scale = 1;
    size_t i = 0, int_digits = 0, frac_digits = 0;
    for (; i < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++, int_digits++) {
        if (int_digits == INT_DIGITS_MAX)
            goto bad;
        whole = whole * 10 + (v.p[i] - '0');
    }
    if (i < v.n && v.p[i] == '.') {
        for (i++; i < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++, frac_digits++) {
            if (frac_digits == FRACTION_DIGITS_MAX)
                goto bad;
            frac = frac * 10 + (v.p[i] - '0');
            scale *= 10;
        }
        if (frac_digits == 0)
            goto bad;
    }
    if (int_digits == 0 || i != v.n)
        goto bad;
    double x = (double)whole + (double)frac / (double)scale;
    if (x > max)
        return parse_fail(ps, "%s: %s is out of range (0 to %.0f)", span_show(key, kb),
                          span_show(v, vb), max);
    *out = x;
    return 0;
bad:
    if (v.n == 0)
        return parse_fail(ps, "%s needs a value", span_show(key, kb));
    return parse_fail(ps, "%s: '%s' is not a number (digits, optionally .digits)",
                      span_show(key, kb), span_show(v, vb));
}

/* Origins separated by blanks or commas, rewritten space-separated. */
static int value_origins(struct parser *ps, struct span v, char *out, size_t cap)
{
    char vb[68];
    size_t len = 0;
    size_t i = 0;
    while (i < v.n) {
        while (i < v.n && (is_blank(v.p[i]) || v.p[i] == ','))
            i++;
        size_t start = i;
        while (i < v.n && !is_blank(v.p[i]) && v.p[i] != ',') {
            unsigned char ch = (unsigned char)v.p[i];
            if (ch < 0x21 || ch > 0x7e)
                return parse_fail(ps,
                                  "allowed_origins: '%s' has a byte that is not printable "
                                  "ASCII",
                                  span_show(v, vb));
            i++;
        }
        size_t n = i - start;
        if (n == 0)
            continue;
        if (len + (len ? 1 : 0) + n >= cap)
            return parse_fail(ps, "allowed_origins is longer than %zu bytes", cap - 1);
        if (len)
            out[len++] = ' ';
        memcpy(out + len, v.p + start, n);
        len += n;
    }
    out[len] = '\0';
    return 0;
}

/* What a text value may hold. */
enum text_kind {
    TEXT_WORD,  /* printable ASCII without blanks (a user name, HOST:PORT) */
    TEXT_ASCII, /* printable ASCII, blanks too (a User-Agent) */
    TEXT_PATH,  /* anything but control bytes (a path may hold blanks and UTF-8) */
    /* As TEXT_ASCII and TEXT_PATH, but never echoed in an error: they may
     * hold a password (a proxy URL, a postgresql:// store), and config
     * errors reach logs and terminals. */
    TEXT_SECRET,
    TEXT_PATH_SECRET,
};

/* Text, in double quotes or not, of 1 to size - 1 bytes, into out. The one
 * reader of text values, for every section. */
static int value_text(struct parser *ps, const char *key, struct span v, enum text_kind kind,
                      char *out, size_t size)
{
    char vb[68];
    if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"') {
        v.p++;
        v.n -= 2;
    }
    if (v.n == 0)
        return parse_fail(ps, "%s needs a value", key);
    if (v.n >= size)
        return parse_fail(ps, "%s is longer than %zu bytes", key, size - 1);
    for (size_t i = 0; i < v.n; i++) {
        unsigned char ch = (unsigned char)v.p[i];
        bool path = kind == TEXT_PATH || kind == TEXT_PATH_SECRET;
        bool bad = ch < 0x20 || ch == 0x7f || ch == '"' || (!path && ch > 0x7e) ||
                   (kind == TEXT_WORD && ch == ' ');
        if (bad && kind == TEXT_PATH_SECRET)
            return parse_fail(ps, "%s may not hold control bytes or quotes", key);
        if (bad && kind == TEXT_SECRET)
            return parse_fail(ps, "%s may only hold printable ASCII (no quotes inside)", key);
        if (bad)
            return parse_fail(ps, "%s: '%s' may only hold printable ASCII%s (no quotes inside)",
                              key, span_show(v, vb), kind == TEXT_WORD ? " without blanks" : "");
    }
    memcpy(out, v.p, v.n);
    out[v.n] = '\0';
    return 0;
}

/* [server] keys: every setting of `newsd serve` has one (the flags win over
 * them, docs/configuration.md). A row says where the value goes and how it
 * is read; a key given twice in one [server] is an error. */
enum server_kind {
    SK_HOSTPORT, /* HOST:PORT (checked by whoever listens on it) */
    SK_STRING,   /* printable ASCII without blanks, into a char array */
    SK_PATH,     /* any text but control bytes (a path may hold blanks) */
    SK_LOCATION, /* as SK_PATH, never echoed: a postgresql:// URL may hold a password */
    SK_INT,      /* whole number in [min, max] */
    SK_BOOL,     /* true/false, yes/no, on/off, 1/0 */
    SK_INDEX,    /* fts5 | engine */
    SK_LOGFMT,   /* text | json */
    SK_PAGES,    /* missing | always | never (ingest/feeds/feeds.h) */
    SK_NETWORKS  /* CIDR list (util/netpolicy.h) */
};

static const struct server_key {
    const char *name;
    enum server_kind kind;
    size_t offset, size; /* of the field in struct config */
    int64_t min, max;    /* SK_INT */
    int64_t scale;       /* SK_INT: the field holds value × scale (0: as read) */
} server_keys[] = {
#define SKEY(n, k, f, lo, hi)                                                                      \
    {                                                                                              \
        n, k, offsetof(struct config, f), sizeof(((struct config *)0)->f), lo, hi, 0               \
    }
    SKEY("listen", SK_HOSTPORT, listen, 0, 0),
    SKEY("threads", SK_INT, threads, 0, 4096),
    {"live_window_hours", SK_INT, offsetof(struct config, live_window_seconds), sizeof(int64_t), 1,
     24 * 365 * 100, 3600}, /* hours, kept in seconds */
    SKEY("result_window", SK_INT, result_window, 0, 1000000000000LL),
    SKEY("query_timeout_ms", SK_INT, query_timeout_ms, 0, 3600 * 1000),
    {"stream_keepalive_seconds", SK_INT, offsetof(struct config, stream_keepalive_ms),
     sizeof(int64_t), 1, 3600, 1000}, /* seconds, kept in milliseconds */
    SKEY("stream_replay_window_seconds", SK_INT, stream_replay_window_s, 1, 366 * 86400),
    SKEY("stream_buffer_bytes", SK_INT, stream_buffer_bytes, 1024, 1024 * 1024 * 1024),
    SKEY("index", SK_INDEX, index, 0, 0),
    SKEY("store", SK_LOCATION, store, 0, 0),
    SKEY("index_dir", SK_PATH, index_dir, 0, 0),
    SKEY("metrics_listen", SK_HOSTPORT, metrics_listen, 0, 0),
    SKEY("user", SK_STRING, user, 0, 0),
    SKEY("crawl", SK_BOOL, crawl, 0, 0),
    SKEY("access_log", SK_BOOL, access_log, 0, 0),
    SKEY("log_format", SK_LOGFMT, log_format_json, 0, 0),
    SKEY("pages", SK_PAGES, crawl_pages, 0, 0),
    SKEY("trusted_proxies", SK_NETWORKS, trusted_proxies, 0, 0),
    SKEY("metrics_allow_networks", SK_NETWORKS, metrics_allow_networks, 0, 0),
#undef SKEY
};

#define N_SERVER_KEYS (sizeof server_keys / sizeof server_keys[0])

static int value_bool(struct parser *ps, struct span key, struct span v, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                                "off", "0"};
    char kb[68], vb[68];
    for (size_t i = 0; i < 4; i++) {
        if (span_eq(v, yes[i]))
            return *out = 1, 0;
        if (span_eq(v, no[i]))
            return *out = 0, 0;
    }
    return parse_fail(ps, "%s: '%s' is not true or false", span_show(key, kb), span_show(v, vb));
}

static int server_set(struct parser *ps, struct span key, struct span v)
{
    char kb[68], vb[68];
    const struct server_key *k = NULL;
    size_t row = 0;
    for (; row < N_SERVER_KEYS && !k; row++)
        if (span_eq(key, server_keys[row].name))
            k = &server_keys[row];
    if (!k) {
        char names[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < N_SERVER_KEYS; i++) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                             server_keys[i].name);
            if (w > 0 && (size_t)w < sizeof names - used)
                used += (size_t)w;
        }
        return parse_fail(ps, "unknown key '%s' in [server] (%s)", span_show(key, kb), names);
    }
    uint32_t bit = 1u << (row - 1);
    if (ps->server_set & bit)
        return parse_fail(ps, "%s is set twice", k->name);
    ps->server_set |= bit;
    char *field = (char *)ps->c + k->offset;
    int64_t x = 0;
    int b = 0, rc;
    switch (k->kind) {
    case SK_HOSTPORT:
        if (v.n == 0 || v.n >= k->size)
            return parse_fail(ps, "%s needs HOST:PORT (at most %zu bytes)", k->name, k->size - 1);
        for (size_t i = 0; i < v.n; i++) {
            unsigned char ch = (unsigned char)v.p[i];
            if (ch < 0x21 || ch > 0x7e)
                return parse_fail(ps, "%s: '%s' is not HOST:PORT", k->name, span_show(v, vb));
        }
        return value_text(ps, k->name, v, TEXT_WORD, field, k->size);
    case SK_STRING:
        return value_text(ps, k->name, v, TEXT_WORD, field, k->size);
    case SK_PATH:
        return value_text(ps, k->name, v, TEXT_PATH, field, k->size);
    case SK_LOCATION:
        return value_text(ps, k->name, v, TEXT_PATH_SECRET, field, k->size);
    case SK_INT:
        if ((rc = value_int(ps, key, v, k->min, k->max, &x)) < 0)
            return rc;
        if (k->scale)
            x *= k->scale;
        if (k->size == sizeof(unsigned))
            *(unsigned *)(void *)field = (unsigned)x;
        else
            *(int64_t *)(void *)field = x;
        return 0;
    case SK_BOOL:
        if ((rc = value_bool(ps, key, v, &b)) < 0)
            return rc;
        *(int *)(void *)field = b;
        return 0;
    case SK_INDEX:
        /* the search backend (index.h): fts5 or engine */
        if (!span_eq(v, "fts5") && !span_eq(v, "engine"))
            return parse_fail(ps, "index: '%s' is not fts5 or engine", span_show(v, vb));
        return value_text(ps, k->name, v, TEXT_WORD, field, k->size);
    case SK_LOGFMT:
        if (!span_eq(v, "text") && !span_eq(v, "json"))
            return parse_fail(ps, "log_format: '%s' is not text or json", span_show(v, vb));
        *(int *)(void *)field = span_eq(v, "json");
        return 0;
    case SK_PAGES: {
        enum crawl_pages_mode m;
        if (!crawl_pages_mode_parse(span_show(v, vb), &m))
            return parse_fail(ps, "pages: '%s' is not missing, always or never", span_show(v, vb));
        *(int *)(void *)field = (int)m;
        return 0;
    }
    case SK_NETWORKS: {
        char why[NETPOLICY_WHY_MAX];
        if (netpolicy_allow_parse((struct netpolicy *)(void *)field, v.p, v.n, why, sizeof why) < 0)
            return parse_fail(ps, "%s: %s", k->name, why);
        return 0;
    }
    }
    return 0;
}

/* [outbound] keys, as bits of the "already set" mask. A new key gets a
 * bit, a row below and a case in outbound_set. */
enum outbound_field {
    OUTBOUND_ALLOW_NETWORKS = 1 << 0,
    OUTBOUND_USER_AGENT = 1 << 1,
    OUTBOUND_PROXY = 1 << 2,
    OUTBOUND_TIMEOUT = 1 << 3,
};

static const struct outbound_key {
    const char *name;
    unsigned field;
} outbound_keys[] = {
    {"allow_networks", OUTBOUND_ALLOW_NETWORKS},
    {"user_agent", OUTBOUND_USER_AGENT},
    {"proxy", OUTBOUND_PROXY},
    {"timeout_seconds", OUTBOUND_TIMEOUT},
};

#define N_OUTBOUND_KEYS (sizeof outbound_keys / sizeof outbound_keys[0])

static int outbound_set(struct parser *ps, struct span key, struct span v)
{
    struct config_outbound *o = &ps->c->outbound;
    char kb[68];
    const struct outbound_key *k = NULL;
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < N_OUTBOUND_KEYS; i++) {
        if (span_eq(key, outbound_keys[i].name))
            k = &outbound_keys[i];
        int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                         outbound_keys[i].name);
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    if (!k)
        return parse_fail(ps, "unknown key '%s' in [outbound] (%s)", span_show(key, kb), names);
    if (ps->outbound_set & k->field)
        return parse_fail(ps, "%s is set twice", k->name);
    ps->outbound_set |= k->field;
    if (k->field == OUTBOUND_ALLOW_NETWORKS) {
        char why[NETPOLICY_WHY_MAX];
        if (netpolicy_allow_parse(&o->policy, v.p, v.n, why, sizeof why) < 0)
            return parse_fail(ps, "allow_networks: %s", why);
        return 0;
    }
    if (k->field == OUTBOUND_TIMEOUT)
        return value_int(ps, key, v, 1, CONFIG_OUTBOUND_TIMEOUT_MAX_S, &o->timeout_seconds);
    if (k->field == OUTBOUND_USER_AGENT)
        return value_text(ps, k->name, v, TEXT_ASCII, o->user_agent, sizeof o->user_agent);
    /* The value is never shown: it may carry user:password@ (the line
     * number says which one is meant). */
    int rc = value_text(ps, k->name, v, TEXT_SECRET, o->proxy, sizeof o->proxy);
    if (rc == 0 && strncmp(o->proxy, "http://", 7) != 0)
        rc = parse_fail(ps, "proxy is not an http:// URL (http://[user:password@]host:port)");
    else if (rc == 0 && (o->proxy[7] == '\0' || o->proxy[7] == '/' || strchr(o->proxy, ' ')))
        rc = parse_fail(ps, "proxy names no host (http://[user:password@]host:port)");
    if (rc < 0)
        memset(o->proxy, 0, sizeof o->proxy);
    return rc;
}

/* A section of whole numbers ([retention], [crawl]): each key a number in
 * [min, max] at an offset of the section's struct, and its bit of the
 * section's "already set" mask. */
struct int_key {
    const char *name;
    size_t offset;
    int64_t min, max;
};

static const struct int_key retention_keys[] = {
    {"max_age_days", offsetof(struct config_retention, max_age_days), 0, 1000000},
    {"max_articles", offsetof(struct config_retention, max_articles), 0, 1000000000000LL},
    {"period_seconds", offsetof(struct config_retention, period_seconds), 1, 86400},
    {"batch_size", offsetof(struct config_retention, batch_size), 1, 100000},
};

static const struct int_key crawl_keys[] = {
    {"max_interval_seconds", offsetof(struct config_crawl, max_interval_s), 60, 7 * 86400},
    {"headlines_max_interval_seconds", offsetof(struct config_crawl, headlines_max_interval_s), 60,
     7 * 86400},
};

/* story/assign.h STORY_WINDOW_DAYS_MAX bounds it (not included: config
 * stays below the story module). */
static const struct int_key stories_keys[] = {
    {"window_days", offsetof(struct config_stories, window_days), 1, 60},
    {"similarity_percent", offsetof(struct config_stories, similarity_percent), 10, 100},
};

#define N_KEYS(t) (sizeof t / sizeof t[0])

/* key = v into base, by the row of keys that names it; an unknown key is
 * refused with the list of the section's keys. */
static int int_key_set(struct parser *ps, const char *section, const struct int_key *keys, size_t n,
                       void *base, unsigned *set, struct span key, struct span v)
{
    char kb[68], names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const struct int_key *k = &keys[i];
        if (!span_eq(key, k->name))
            continue;
        if (*set & (1u << i))
            return parse_fail(ps, "%s is set twice", k->name);
        *set |= 1u << i;
        return value_int(ps, key, v, k->min, k->max, (int64_t *)((char *)base + k->offset));
    }
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", keys[i].name);
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    return parse_fail(ps, "unknown key '%s' in [%s] (%s)", span_show(key, kb), section, names);
}

/* The plan keys, their ranges and where each goes in struct auth_plan
 * (read by plan_set, copied by config_plans_apply). A whole number unless
 * the field is burst_per_second (a decimal) or allowed_origins. */
static const struct plan_key {
    const char *name;
    unsigned field;
    int64_t max;
    size_t offset, size;
} plan_keys[] = {
#define PKEY(n, bit, f, hi)                                                                        \
    {                                                                                              \
        n, bit, hi, offsetof(struct auth_plan, f), sizeof(((struct auth_plan *)0)->f)              \
    }
    PKEY("requests_per_day", CONFIG_PLAN_REQUESTS_PER_DAY, requests_per_day, 1000000000000000LL),
    PKEY("requests_per_month", CONFIG_PLAN_REQUESTS_PER_MONTH, requests_per_month,
         1000000000000000LL),
    PKEY("burst_per_second", CONFIG_PLAN_BURST_PER_SECOND, burst_per_second, 1000000000LL),
    PKEY("burst_size", CONFIG_PLAN_BURST_SIZE, burst_size, 1000000000LL),
    PKEY("result_window", CONFIG_PLAN_RESULT_WINDOW, result_window, 1000000000000LL),
    PKEY("history_days", CONFIG_PLAN_HISTORY_DAYS, history_days, 1000000LL), /* ~2700 years */
    PKEY("delay_seconds", CONFIG_PLAN_DELAY_SECONDS, delay_seconds, 1000000000000LL),
    PKEY("allowed_origins", CONFIG_PLAN_ALLOWED_ORIGINS, allowed_origins, 0),
    PKEY("streams", CONFIG_PLAN_STREAMS, streams, 1000000LL),
    PKEY("alerts", CONFIG_PLAN_ALERTS, alerts, 1000000LL),
    PKEY("export_per_day", CONFIG_PLAN_EXPORT_PER_DAY, export_per_day, 1000000000000000LL),
#undef PKEY
};

static int plan_set(struct parser *ps, struct span key, struct span v)
{
    struct auth_plan *p = &ps->c->plans[ps->plan];
    unsigned *fields = &ps->c->plan_fields[ps->plan];
    char kb[68];
    const struct plan_key *k = NULL;
    for (size_t i = 0; i < N_KEYS(plan_keys); i++) {
        if (span_eq(key, plan_keys[i].name)) {
            k = &plan_keys[i];
            break;
        }
    }
    if (!k)
        return parse_fail(ps,
                          "unknown key '%s' in [plan %s] (requests_per_day, "
                          "requests_per_month, burst_per_second, burst_size, result_window, "
                          "history_days, delay_seconds, allowed_origins, streams, alerts, "
                          "export_per_day)",
                          span_show(key, kb), p->name);
    if (*fields & k->field)
        return parse_fail(ps, "%s is set twice", k->name);
    *fields |= k->field;
    if (k->field == CONFIG_PLAN_BURST_PER_SECOND)
        return value_decimal(ps, key, v, (double)k->max, &p->burst_per_second);
    if (k->field == CONFIG_PLAN_ALLOWED_ORIGINS)
        return value_origins(ps, v, p->allowed_origins, sizeof p->allowed_origins);
    return value_int(ps, key, v, 0, k->max, (int64_t *)(void *)((char *)p + k->offset));
}

static bool plan_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

/* The sections without a name of their own (all but [plan NAME]). */
static const struct {
    const char *name;
    enum section section;
} named_sections[] = {
    {"server", SECTION_SERVER}, {"outbound", SECTION_OUTBOUND}, {"retention", SECTION_RETENTION},
    {"crawl", SECTION_CRAWL},   {"stories", SECTION_STORIES},
};

/* "[server]", "[outbound]" or "[plan NAME]"; s is the trimmed line. */
static int section_start(struct parser *ps, struct span s)
{
    char b[68];
    struct config *c = ps->c;
    if (s.n < 2 || s.p[s.n - 1] != ']')
        return parse_fail(ps, "a section header ends with ']'");
    struct span in = span_trim((struct span){s.p + 1, s.n - 2});
    for (size_t i = 0; i < N_KEYS(named_sections); i++) {
        if (span_eq(in, named_sections[i].name)) {
            ps->section = named_sections[i].section;
            return 0;
        }
    }
    if (in.n < 4 || memcmp(in.p, "plan", 4) != 0 || (in.n > 4 && !is_blank(in.p[4])))
        return parse_fail(ps,
                          "unknown section [%s] (expected [server], [outbound], [retention], "
                          "[crawl], [stories] or [plan NAME])",
                          span_show(in, b));
    struct span name = span_trim((struct span){in.p + 4, in.n - 4});
    if (name.n == 0)
        return parse_fail(ps, "[plan] needs a name: [plan NAME]");
    if (name.n >= AUTH_PLAN_NAME_MAX)
        return parse_fail(ps, "plan name is longer than %d bytes", AUTH_PLAN_NAME_MAX - 1);
    for (size_t i = 0; i < name.n; i++) {
        if (!plan_name_char(name.p[i]))
            return parse_fail(ps, "plan name '%s' may only use letters, digits, '.', '_', '-'",
                              span_show(name, b));
    }
    for (size_t i = 0; i < c->n_plans; i++) {
        if (span_eq(name, c->plans[i].name))
            return parse_fail(ps, "[plan %s] appears twice", c->plans[i].name);
    }
    if (c->n_plans == CONFIG_PLANS_MAX)
        return parse_fail(ps, "more than %d plans", CONFIG_PLANS_MAX);
    ps->plan = c->n_plans++;
    struct auth_plan *p = &c->plans[ps->plan];
    memset(p, 0, sizeof *p);
    c->plan_fields[ps->plan] = 0;
    memcpy(p->name, name.p, name.n);
    p->name[name.n] = '\0';
    ps->section = SECTION_PLAN;
    return 0;
}

static int parse_line(struct parser *ps, struct span line)
{
    char b[68];
    if (memchr(line.p, '\0', line.n))
        return parse_fail(ps, "NUL byte in the line");
    if (line.n > CONFIG_LINE_MAX)
        return parse_fail(ps, "line longer than %d bytes", CONFIG_LINE_MAX);
    struct span s = span_trim(line);
    if (s.n == 0 || s.p[0] == '#' || s.p[0] == ';')
        return 0;
    if (s.p[0] == '[')
        return section_start(ps, s);
    const char *eq = memchr(s.p, '=', s.n);
    if (!eq)
        return parse_fail(ps, "expected 'key = value', a [section] or a # comment");
    struct span key = span_trim((struct span){s.p, (size_t)(eq - s.p)});
    struct span value = span_trim((struct span){eq + 1, s.n - (size_t)(eq - s.p) - 1});
    if (key.n == 0)
        return parse_fail(ps, "a key is missing before '='");
    switch (ps->section) {
    case SECTION_SERVER:
        return server_set(ps, key, value);
    case SECTION_OUTBOUND:
        return outbound_set(ps, key, value);
    case SECTION_RETENTION:
        return int_key_set(ps, "retention", retention_keys, N_KEYS(retention_keys),
                           &ps->c->retention, &ps->retention_set, key, value);
    case SECTION_CRAWL:
        return int_key_set(ps, "crawl", crawl_keys, N_KEYS(crawl_keys), &ps->c->crawl_cfg,
                           &ps->crawl_set, key, value);
    case SECTION_STORIES:
        return int_key_set(ps, "stories", stories_keys, N_KEYS(stories_keys), &ps->c->stories,
                           &ps->stories_set, key, value);
    case SECTION_PLAN:
        return plan_set(ps, key, value);
    default:
        return parse_fail(
            ps,
            "'%s' is outside a section ([server], [outbound], [retention], [crawl], [stories] or "
            "[plan NAME])",
            span_show(key, b));
    }
}

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof *c);
    netpolicy_init(&c->outbound.policy);
    netpolicy_init(&c->trusted_proxies);
    netpolicy_init(&c->metrics_allow_networks);
    c->crawl = -1;
    c->crawl_pages = -1;
    c->access_log = -1;
    c->log_format_json = -1;
    c->live_window_seconds = LIMIT_LIVE_WINDOW_SECONDS;
    c->result_window = LIMIT_RESULT_WINDOW;
    c->query_timeout_ms = LIMIT_QUERY_TIMEOUT_MS;
}

int config_parse(const char *text, size_t len, const char *name, struct config *c, struct err *err)
{
    struct parser ps = {.name = name ? name : "config", .err = err, .c = c};
    size_t pos = 0;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        pos = 3;
    while (pos < len) {
        ps.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        struct span line = {text + pos, end - pos};
        if (line.n && line.p[line.n - 1] == '\r')
            line.n--;
        /* A server key may be set once in the whole file, even when [server]
         * appears twice. */
        int rc = parse_line(&ps, line);
        if (rc < 0)
            return rc;
        pos = nl ? end + 1 : len;
    }
    return 0;
}

int config_load(const char *path, struct config *c, struct err *err)
{
    config_defaults(c);
    int rc = 0;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(err, ERR_IO, "cannot read %s: %s", path, strerror(errno));
    buf = malloc(CONFIG_FILE_MAX_BYTES + 1);
    if (!buf) {
        rc = err_set(err, ERR_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    size_t n = fread(buf, 1, CONFIG_FILE_MAX_BYTES + 1, f);
    if (ferror(f)) {
        rc = err_set(err, ERR_IO, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    if (n > CONFIG_FILE_MAX_BYTES) {
        rc = err_set(err, ERR_TOO_LARGE, "%s is larger than %d bytes", path, CONFIG_FILE_MAX_BYTES);
        goto out;
    }
    rc = config_parse(buf, n, path, c, err);
out:
    free(buf);
    fclose(f);
    return rc;
}

int config_plans_apply(const struct config *c, struct auth *a, struct err *err)
{
    for (size_t i = 0; i < c->n_plans; i++) {
        const struct auth_plan *src = &c->plans[i];
        unsigned f = c->plan_fields[i];
        struct auth_plan p;
        if (auth_plan_get(a, src->name, &p) < 0) {
            memset(&p, 0, sizeof p);
            memcpy(p.name, src->name, sizeof p.name);
            p.streams = AUTH_PLAN_STREAMS_DEFAULT;
            p.alerts = AUTH_PLAN_ALERTS_DEFAULT;
        }
        /* the keys the file set; the others keep the plan's own */
        for (size_t k = 0; k < N_KEYS(plan_keys); k++) {
            if (f & plan_keys[k].field)
                memcpy((char *)&p + plan_keys[k].offset, (const char *)src + plan_keys[k].offset,
                       plan_keys[k].size);
        }
        int rc = auth_plan_set(a, &p, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}
