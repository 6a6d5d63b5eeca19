/* The access log line (http/internal.h). Keys must never reach the log:
 * the value of any apikey parameter is masked wherever it stands in the
 * target, and no header is written (X-Api-Key and Authorization carry
 * keys). Nor may a request write what a terminal would obey: every byte a
 * client chose is escaped outside printable ASCII. */
#include "http/internal.h"

#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "util/ascii.h"
#include "util/log.h"
#include "util/url.h"

#include "util/banned.h"

/* Whether name[0..n) names the key parameter once decoded the way the API
 * layer decodes names ('+' is a space, %XX a byte, ASCII case folded), so
 * "APIKEY" or "api%4Bey" are caught as surely as "apiKey". */
static bool is_key_name(const char *name, size_t n)
{
    static const char want[] = "apikey";
    size_t j = 0;
    for (size_t i = 0; i < n; j++) {
        unsigned char byte;
        i += url_decode_byte(name + i, n - i, true, &byte);
        if (byte == '\0')
            break; /* mask what a C-string reading of the name would take for apikey */
        if (j >= sizeof want - 1 || ascii_lower((char)byte) != want[j])
            return false;
    }
    return j == sizeof want - 1;
}

/* Bounded appender: once full, further text is dropped and the result is
 * marked cut. Every byte outside printable ASCII, and the backslash, goes
 * in as \xHH (never split by a cut). */
struct target_out {
    char *buf;
    size_t cap, len;
    bool cut;
};

static bool printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f && c != '\\';
}

static void out_put(struct target_out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && !o->cut; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t need = printable(c) ? 1 : 4;
        if (need > o->cap - 1 - o->len) {
            o->cut = true;
            break;
        }
        if (need == 1) {
            o->buf[o->len++] = (char)c;
        } else {
            o->buf[o->len++] = '\\';
            o->buf[o->len++] = 'x';
            ascii_hex_byte(o->buf + o->len, c);
            o->len += 2;
        }
    }
}

/* Copy s[0..n) with the value of every apikey parameter masked. A
 * parameter starts after one of seps and ends at the next one. */
static void out_masked(struct target_out *o, const char *s, size_t n, const char *seps)
{
    struct url_query walk;
    struct url_param param;
    url_query_start(&walk, s, n, seps);
    while (url_query_next(&walk, &param)) {
        if (param.value && is_key_name(param.p, param.name_len)) {
            out_put(o, param.p, param.name_len + 1);
            out_put(o, "***", 3);
        } else {
            out_put(o, param.p, param.n);
        }
        if (param.sep)
            out_put(o, &param.sep, 1);
    }
}

static size_t out_finish(struct target_out *o)
{
    if (o->cut && o->cap > 4) {
        /* A cut falls after masking, so it can only hide, never reveal.
         * Room for "...", and no escape left in halves. */
        if (o->len > o->cap - 4)
            o->len = o->cap - 4;
        for (size_t back = 1; back <= 3 && back <= o->len; back++) {
            if (o->buf[o->len - back] == '\\') {
                o->len -= back;
                break;
            }
        }
        memcpy(o->buf + o->len, "...", 3);
        o->len += 3;
    }
    o->buf[o->len] = '\0';
    return o->len;
}

size_t http_accesslog_target(char *out, size_t cap, const char *path, size_t path_len,
                             const char *query)
{
    if (!cap)
        return 0;
    struct target_out o = {out, cap, 0, false};
    size_t plen = strlen(path);
    if (path_len && path_len < plen) {
        out_masked(&o, path, path_len, "&;?");
        if (path[path_len - 1] == '/')
            out_put(&o, "...", 3);
        else
            out_put(&o, "/...", 4);
    } else {
        /* A path holds no parameters, but a client that lost its '?'
         * sends "/v2/everything&apiKey=KEY" or ";apiKey=KEY". */
        out_masked(&o, path, plen, "&;?");
    }
    if (query && *query) {
        out_put(&o, "?", 1);
        out_masked(&o, query, strlen(query), "&;");
    }
    return out_finish(&o);
}

size_t http_accesslog_escape(char *out, size_t cap, const char *s)
{
    if (!cap)
        return 0;
    struct target_out o = {out, cap, 0, false};
    out_put(&o, s, strlen(s));
    return out_finish(&o);
}

/* A JSON string of printable ASCII (the fields are escaped already): the
 * quote and the backslash of a \xHH escape get their backslash. */
static void json_str(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap < 3)
        return;
    out[n++] = '"';
    for (; *s && n + 3 < cap; s++) {
        if (*s == '"' || *s == '\\')
            out[n++] = '\\';
        out[n++] = *s;
    }
    out[n++] = '"';
    out[n] = '\0';
}

void http_accesslog_write(const struct http_accesslog_entry *e)
{
    char target[HTTP_LOG_TARGET_MAX], method[4 * 16 + 1], client[4 * 64 + 1];
    http_accesslog_target(target, sizeof target, e->path ? e->path : "-", e->path_len, e->query);
    http_accesslog_escape(method, sizeof method, e->method ? e->method : "-");
    http_accesslog_escape(client, sizeof client, e->client ? e->client : "-");
    if (log_get_format() == LOG_FORMAT_JSON) {
        /* target is at most HTTP_LOG_TARGET_MAX and doubles at worst. */
        char jt[2 * HTTP_LOG_TARGET_MAX + 3], jm[2 * sizeof method + 3], jc[2 * sizeof client + 3],
            status[16] = "null", key[24] = "null", note[160] = "null";
        json_str(jt, sizeof jt, target);
        json_str(jm, sizeof jm, method);
        json_str(jc, sizeof jc, client);
        if (e->status)
            snprintf(status, sizeof status, "%d", e->status);
        if (e->key_id > 0)
            snprintf(key, sizeof key, "%lld", (long long)e->key_id);
        const char *why = e->note ? e->note : e->why;
        if (why)
            json_str(note, sizeof note, why);
        char fields[4096];
        snprintf(fields, sizeof fields,
                 "\"msg\":\"http\",\"client\":%s,\"method\":%s,\"target\":%s,\"status\":%s,"
                 "\"bytes\":%zu,\"sent\":%zu,\"us\":%lld,\"id\":\"%s\",\"key\":%s,\"note\":%s",
                 jc, jm, jt, status, e->body_bytes, e->sent_bytes, e->micros,
                 e->request_id ? e->request_id : "-", key, note);
        log_json(LOG_INFO, fields);
        return;
    }
    char status[16];
    if (e->status)
        snprintf(status, sizeof status, "%d", e->status);
    else
        snprintf(status, sizeof status, "-");
    /* bytes: the handler's body; gz: what was sent when gzip shrank it. */
    char gz[32] = "", key[32] = "";
    if (e->sent_bytes != e->body_bytes)
        snprintf(gz, sizeof gz, " gz=%zu", e->sent_bytes);
    if (e->key_id > 0)
        snprintf(key, sizeof key, " key=%lld", (long long)e->key_id);
    log_info("http %s %s %s %s bytes=%zu%s us=%lld id=%s%s%s%s%s%s", client, method, target, status,
             e->body_bytes, gz, e->micros, e->request_id ? e->request_id : "-", key,
             e->note ? " " : "", e->note ? e->note : "", e->why ? " " : "", e->why ? e->why : "");
}
