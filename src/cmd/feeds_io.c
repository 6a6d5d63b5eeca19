/* newsd feeds import, export and list (cmd/feeds_internal.h).
 *
 * Import reads JSONL or OPML, told apart by content (ingest/feeds/feeds.h
 * opml_sniff). JSONL is one object per line with the fields of `feeds
 * add`: url (required), source, country, category, language, headlines
 * (bool), interval (seconds), paused (bool), pages (missing, always,
 * never); other keys (such as the
 * catalogue's "verified") are ignored. OPML: every outline with an xmlUrl,
 * newsd's settings from its newsd: attributes, the category else from an
 * enclosing folder named after one. A url already registered is left as it
 * is, so re-importing is harmless; a bad entry is reported and skipped.
 *
 * Export writes every feed in either format, so that an export imported
 * into another store gives the same feeds (settings, not fetch state):
 * its URLs keep their credentials, it is as secret as the store.
 * List shows each feed's health as a table or as JSON, each URL with its
 * password masked (listed_url). */
#include "cmd/cmd.h"
#include "cmd/common.h"
#include "cmd/feeds_internal.h"
#include "ingest/feeds/feeds.h"
#include "store/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "util/buf.h"
#include "util/timefmt.h"
#include "util/urlview.h"

#include "util/banned.h"

#define FEEDS_LINE_MAX (1024 * 1024)       /* one JSONL feed object */
#define FEEDS_INPUT_MAX (64 * 1024 * 1024) /* an import file */

/* ---- import ------------------------------------------------------------------ */

struct import_counts {
    size_t added, present, skipped;
};

/* Add the feed of sp; a bad one is reported with where ("line 3") and
 * skipped. CMD_EXIT_OK, or CMD_EXIT_FAIL when the store fails. */
static int import_one(struct store *s, struct arena *ar, const struct netpolicy *policy,
                      const struct feeds_spec *sp, const char *path, const char *where,
                      const char *bad, struct import_counts *n)
{
    char why[256];
    struct feed_record f;
    if (bad) {
        fprintf(stderr, "%s: %s: %s\n", path, where, bad);
        n->skipped++;
        return CMD_EXIT_OK;
    }
    if (!cmd_feeds_fill(ar, policy, &f, sp, why, sizeof why)) {
        fprintf(stderr, "%s: %s: %s\n", path, where, why);
        n->skipped++;
        return CMD_EXIT_OK;
    }
    struct err err;
    err_clear(&err);
    int rc = store_feed_add(s, &f, NULL, &err);
    if (rc == ERR_EXISTS) {
        n->present++;
    } else if (rc < 0) {
        cmd_fail("feeds import %s: %s: %s", path, where, err_msg(&err, rc));
        return CMD_EXIT_FAIL;
    } else {
        n->added++;
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

/* A boolean member (absent or null: false); *bad for another type. */
static bool member_bool(const json_t *obj, const char *key, bool *bad)
{
    const json_t *v = json_object_get(obj, key);
    if (v && !json_is_boolean(v) && !json_is_null(v))
        *bad = true;
    return json_is_true(v);
}

/* One JSONL line into sp; a message (why) when it is not a feed object. */
static bool jsonl_spec(json_t *obj, struct feeds_spec *sp, char *why, size_t why_size)
{
    bool bad = false;
    memset(sp, 0, sizeof *sp);
    sp->url = member_str(obj, "url", &bad);
    sp->source = member_str(obj, "source", &bad);
    sp->country = member_str(obj, "country", &bad);
    sp->category = member_str(obj, "category", &bad);
    sp->language = member_str(obj, "language", &bad);
    sp->headlines = member_bool(obj, "headlines", &bad);
    sp->paused = member_bool(obj, "paused", &bad);
    sp->pages = member_str(obj, "pages", &bad);
    const json_t *iv = json_object_get(obj, "interval");
    if (bad || (iv && !json_is_integer(iv) && !json_is_null(iv))) {
        snprintf(why, why_size,
                 "a field has the wrong type (url, source, country, category, language and "
                 "pages are strings, headlines and paused booleans, interval an integer)");
        return false;
    }
    sp->interval = json_is_integer(iv) ? (long long)json_integer_value(iv) : 0;
    if (json_is_integer(iv) && sp->interval <= 0)
        sp->interval = -1; /* out of range: cmd_feeds_fill says so */
    return true;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isspace((unsigned char)s[i]))
            return false;
    }
    return true;
}

static int import_jsonl(struct store *s, struct arena *ar, const struct netpolicy *policy,
                        const char *path, const char *data, size_t len, struct import_counts *n)
{
    size_t lineno = 0;
    int status = CMD_EXIT_OK;
    for (size_t pos = 0; pos < len && status == CMD_EXIT_OK;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len, line_len = end - pos;
        const char *line = data + pos;
        pos = nl ? end + 1 : len;
        lineno++;
        while (line_len > 0 && line[line_len - 1] == '\r')
            line_len--;
        if (blank(line, line_len))
            continue;
        char where[32], why[256];
        snprintf(where, sizeof where, "line %zu", lineno);
        struct feeds_spec sp;
        json_t *obj = NULL;
        json_error_t je;
        const char *bad = NULL;
        if (line_len > FEEDS_LINE_MAX) {
            snprintf(why, sizeof why, "line longer than %d bytes", FEEDS_LINE_MAX);
            bad = why;
        } else if (!(obj = json_loadb(line, line_len, JSON_REJECT_DUPLICATES, &je)) ||
                   !json_is_object(obj)) {
            snprintf(why, sizeof why, "not a JSON object%s%s", obj ? "" : ": ", obj ? "" : je.text);
            bad = why;
        } else if (!jsonl_spec(obj, &sp, why, sizeof why)) {
            bad = why;
        }
        status = import_one(s, ar, policy, &sp, path, where, bad, n);
        json_decref(obj);
    }
    return status;
}

/* "true" / "false" (any case) into *out; NULL leaves it false. */
static bool opml_bool(const char *v, bool *out)
{
    *out = false;
    if (!v || !strcasecmp(v, "false"))
        return true;
    if (!strcasecmp(v, "true")) {
        *out = true;
        return true;
    }
    return false;
}

static int import_opml(struct store *s, struct arena *ar, const struct netpolicy *policy,
                       const char *path, const char *data, size_t len, struct import_counts *n)
{
    struct opml_feed *feeds = NULL;
    size_t count = 0;
    struct err err;
    err_clear(&err);
    int rc = opml_parse(ar, data, len, &feeds, &count, &err);
    if (rc < 0) {
        cmd_fail("feeds import %s: %s", path, err_msg(&err, rc));
        return rc == ERR_NOMEM ? CMD_EXIT_FAIL : CMD_EXIT_USAGE;
    }
    int status = CMD_EXIT_OK;
    for (size_t i = 0; i < count && status == CMD_EXIT_OK; i++) {
        const struct opml_feed *o = &feeds[i];
        struct feeds_spec sp = {.url = o->url,
                                .source = o->source,
                                .country = o->country,
                                .category = o->category ? o->category : o->folder_category,
                                .language = o->language,
                                .pages = o->pages};
        char where[48];
        const char *bad = NULL;
        snprintf(where, sizeof where, "line %ld", o->line);
        if (!opml_bool(o->headlines, &sp.headlines) || !opml_bool(o->paused, &sp.paused))
            bad = "newsd:headlines and newsd:paused are true or false";
        else if (o->interval &&
                 (sp.interval = cmd_parse_digits(o->interval, FEEDS_NUMBER_DIGITS)) <= 0)
            sp.interval = -1;
        status = import_one(s, ar, policy, &sp, path, where, bad, n);
    }
    return status;
}

/* The whole of path (- = stdin) in b; an exit status. */
static int read_input(const char *path, struct buf *b)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        cmd_fail("feeds import: cannot open %s: %s", path, strerror(errno));
        return CMD_EXIT_FAIL;
    }
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && !buf_error(b))
        buf_append(b, chunk, got);
    int status = CMD_EXIT_OK;
    if (buf_error(b) == ERR_TOO_LARGE) {
        cmd_fail("feeds import: %s is larger than %d MiB", path, FEEDS_INPUT_MAX / (1024 * 1024));
        status = CMD_EXIT_FAIL;
    } else if (buf_error(b)) {
        cmd_fail("feeds import: out of memory reading %s", path);
        status = CMD_EXIT_FAIL;
    } else if (ferror(f)) {
        cmd_fail("feeds import: cannot read %s", path);
        status = CMD_EXIT_FAIL;
    }
    if (f != stdin)
        fclose(f);
    return status;
}

int cmd_feeds_import(struct store *s, struct arena *ar, const struct netpolicy *policy,
                     const char *path)
{
    struct buf b;
    struct import_counts n = {0};
    buf_init(&b, FEEDS_INPUT_MAX);
    int status = read_input(path, &b);
    if (status == CMD_EXIT_OK) {
        const char *data = b.data ? b.data : "";
        if (opml_sniff(data, b.len))
            status = import_opml(s, ar, policy, path, data, b.len, &n);
        else
            status = import_jsonl(s, ar, policy, path, data, b.len, &n);
    }
    buf_release(&b);
    if (status != CMD_EXIT_USAGE)
        fprintf(stderr, "feeds added %zu, already present %zu, skipped %zu\n", n.added, n.present,
                n.skipped);
    return status;
}

/* ---- export ------------------------------------------------------------------ */

/* The import fields of f as a JSON object (new reference, NULL: no memory). */
static json_t *feed_settings_json(const struct feed_record *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "url", json_string(f->url));
    if (f->source_id)
        bad |= json_object_set_new(o, "source", json_string(f->source_id));
    if (f->country[0])
        bad |= json_object_set_new(o, "country", json_string(f->country));
    if (f->category)
        bad |= json_object_set_new(o, "category", json_string(f->category));
    if (f->language[0])
        bad |= json_object_set_new(o, "language", json_string(f->language));
    bad |= json_object_set_new(o, "headlines", json_boolean(f->headline));
    bad |= json_object_set_new(o, "interval", json_integer(f->interval_s));
    bad |= json_object_set_new(o, "paused", json_boolean(!f->enabled));
    if (f->pages)
        bad |= json_object_set_new(o, "pages", json_string(f->pages));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int write_out(const char *verb, const char *data, size_t len)
{
    if ((len && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0) {
        cmd_fail("feeds %s: cannot write to stdout", verb);
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* One JSON value on stdout (compact with a newline, or indented); steals v. */
static int write_json(const char *verb, json_t *v, size_t flags)
{
    char *text = v ? json_dumps(v, flags | JSON_ENSURE_ASCII) : NULL;
    json_decref(v);
    if (!text) {
        cmd_fail("feeds %s: out of memory", verb);
        return CMD_EXIT_FAIL;
    }
    int status = write_out(verb, text, strlen(text));
    if (status == CMD_EXIT_OK)
        status = write_out(verb, "\n", 1);
    free(text);
    return status;
}

/* feeds export: feeds[0..n) as "opml" or "jsonl" on stdout. */
static int export_write(const struct feed_record *feeds, size_t n, const char *format)
{
    int status = CMD_EXIT_OK;
    if (!strcmp(format, "jsonl")) {
        for (size_t i = 0; i < n && status == CMD_EXIT_OK; i++)
            status = write_json("export", feed_settings_json(&feeds[i]), JSON_COMPACT);
        return status;
    }
    struct buf b;
    buf_init(&b, 0);
    opml_write(&b, feeds, n);
    if (buf_error(&b)) {
        cmd_fail("feeds export: out of memory");
        status = CMD_EXIT_FAIL;
    } else {
        status = write_out("export", b.data, b.len);
    }
    buf_release(&b);
    return status;
}

/* ---- list -------------------------------------------------------------------- */

/* A feed's url as a listing shows it: the password masked (user:***@,
 * password=***), the rest kept so that the operator still tells the feeds
 * apart. A listing gets pasted into tickets and chats; the export, made to
 * be imported again, is what keeps the url whole. NULL: no memory. */
static const char *listed_url(struct arena *ar, const char *url)
{
    /* Masking turns each secret into "***": at most 3 bytes more per
     * masked part, and there are fewer masked parts than bytes. */
    size_t len = strlen(url), cap = 4 * len + 16;
    char *shown = arena_alloc(ar, cap);
    return shown ? urlview_redacted(url, URLVIEW_REDACT_PASSWORDS, shown, cap) : NULL;
}

/* A time as JSON: ISO 8601, or null for never. */
static json_t *time_json(int64_t t)
{
    if (t <= 0)
        return json_null();
    char iso[TIMEFMT_ISO_LEN];
    timefmt_iso8601(t, iso);
    return json_string(iso);
}

static json_t *feed_health_json(struct arena *ar, const struct feed_record *f)
{
    json_t *settings = feed_settings_json(f), *o = json_object();
    const char *url = listed_url(ar, f->url);
    int bad = !settings || !o || !url || json_object_set_new(o, "id", json_integer(f->id)) ||
              json_object_update(o, settings) || json_object_set_new(o, "url", json_string(url));
    json_decref(settings);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    json_object_del(o, "paused"); /* state says it, next to the others */
    bad |= json_object_set_new(o, "state",
                               json_string(!f->enabled             ? "paused"
                                           : f->consecutive_errors ? "failing"
                                                                   : "active"));
    bad |= json_object_set_new(o, "title", f->title ? json_string(f->title) : json_null());
    bad |= json_object_set_new(o, "site_url", f->site_url ? json_string(f->site_url) : json_null());
    bad |= json_object_set_new(o, "last_fetch_at", time_json(f->last_fetch_at));
    bad |= json_object_set_new(o, "last_status",
                               f->last_fetch_at && f->last_status ? json_integer(f->last_status)
                                                                  : json_null());
    bad |= json_object_set_new(o, "last_success_at", time_json(f->last_success_at));
    bad |= json_object_set_new(o, "last_error",
                               f->last_error ? json_string(f->last_error) : json_null());
    bad |= json_object_set_new(o, "consecutive_errors", json_integer(f->consecutive_errors));
    bad |= json_object_set_new(o, "last_new_item_at", time_json(f->last_new_item_at));
    bad |= json_object_set_new(o, "items_last", json_integer(f->items_last));
    bad |= json_object_set_new(o, "items_total", json_integer(f->items_total));
    bad |= json_object_set_new(o, "next_fetch_at",
                               f->enabled ? time_json(f->next_fetch_at) : json_null());
    bad |= json_object_set_new(o, "created_at", time_json(f->created_at));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A span of seconds the way a person reads it: 45s, 12m, 5h, 3d; with
 * " ago" after it or "in " before it. */
static const char *span_cell(struct arena *ar, int64_t secs, bool ago)
{
    char span[32];
    if (secs < 90)
        snprintf(span, sizeof span, "%llds", (long long)secs);
    else if (secs < 90 * 60)
        snprintf(span, sizeof span, "%lldm", (long long)((secs + 30) / 60));
    else if (secs < 36 * 3600)
        snprintf(span, sizeof span, "%lldh", (long long)((secs + 1800) / 3600));
    else
        snprintf(span, sizeof span, "%lldd", (long long)((secs + 43200) / 86400));
    const char *c = arena_printf(ar, ago ? "%s ago" : "in %s", span);
    return c ? c : "?";
}

static const char *ago_cell(struct arena *ar, int64_t t, int64_t now)
{
    return t <= 0 ? "never" : span_cell(ar, now > t ? now - t : 0, true);
}

#define LIST_COLS 10

static int list_table(struct arena *ar, const struct feed_record *feeds, size_t n)
{
    static const char *const head[LIST_COLS] = {"ID",        "URL",          "SOURCE", "LAST POLL",
                                                "STATUS",    "LAST SUCCESS", "ITEMS",  "STORED",
                                                "NEXT POLL", "LAST ERROR"};
    /* Numbers right-aligned, the rest left; the last column unpadded. */
    static const bool right[LIST_COLS] = {true,  false, false, false, true,
                                          false, true,  true,  false, false};
    int64_t now = (int64_t)time(NULL);
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
        const char *url = listed_url(ar, f->url);
        row[1] = url ? cmd_table_cell(ar, url) : NULL;
        row[2] = cmd_table_cell(ar, f->source_id);
        row[3] = ago_cell(ar, f->last_fetch_at, now);
        row[4] = f->last_fetch_at && f->last_status ? arena_printf(ar, "%d", f->last_status) : "-";
        row[5] = ago_cell(ar, f->last_success_at, now);
        row[6] = arena_printf(ar, "%lld", (long long)f->items_last);
        row[7] = arena_printf(ar, "%lld", (long long)f->items_total);
        row[8] = !f->enabled               ? "paused"
                 : f->next_fetch_at <= now ? "due"
                                           : span_cell(ar, f->next_fetch_at - now, false);
        row[9] = cmd_table_cell(ar, f->last_error);
        for (size_t c = 0; c < LIST_COLS; c++) {
            if (!row[c]) {
                cmd_fail("feeds list: out of memory");
                return CMD_EXIT_FAIL;
            }
            size_t len = strlen(row[c]);
            if (len > w[c])
                w[c] = len;
        }
    }
    for (size_t i = 0; i <= n; i++) {
        const char **row = cells + i * LIST_COLS;
        for (size_t c = 0; c < LIST_COLS - 1; c++)
            printf(right[c] ? "%*s  " : "%-*s  ", (int)w[c], row[c]);
        printf("%s\n", row[LIST_COLS - 1]);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cmd_fail("feeds list: cannot write to stdout");
        return CMD_EXIT_FAIL;
    }
    return CMD_EXIT_OK;
}

/* feeds list: feeds[0..n) and their health as a "table" or "json". */
static int list_write(struct arena *ar, const struct feed_record *feeds, size_t n,
                      const char *format)
{
    if (strcmp(format, "json"))
        return list_table(ar, feeds, n);
    json_t *all = json_array();
    for (size_t i = 0; all && i < n; i++) {
        if (json_array_append_new(all, feed_health_json(ar, &feeds[i])) < 0) {
            json_decref(all);
            all = NULL;
        }
    }
    return write_json("list", all, JSON_INDENT(2));
}

int cmd_feeds_show(struct store *s, struct arena *ar, const char *verb, const char *format)
{
    struct feed_record *feeds = NULL;
    size_t n = 0;
    struct err err;
    err_clear(&err);
    int status = cmd_status_of(store_feeds_list(s, ar, &feeds, &n, &err), &err, "feeds %s", verb);
    if (status != CMD_EXIT_OK)
        return status;
    bool export = !strcmp(verb, "export");
    if (!format)
        format = export ? "opml" : "table";
    return export ? export_write(feeds, n, format) : list_write(ar, feeds, n, format);
}
