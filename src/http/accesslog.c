/* The access log line (http/internal.h). Keys must never reach the log:
 * the value of any apikey query parameter is masked, and no header is
 * written (X-Api-Key and Authorization carry keys). */
#include "http/internal.h"

#include <stdio.h>
#include <string.h>

#include "util/ascii.h"
#include "util/log.h"

#include "util/banned.h"

/* Whether name[0..n) names the key parameter once decoded the way the API
 * layer decodes names ('+' is a space, %XX a byte, ASCII case folded), so
 * "APIKEY" or "api%4Bey" are caught as surely as "apiKey". */
static bool is_key_name(const char *name, size_t n)
{
    static const char want[] = "apikey";
    size_t j = 0;
    for (size_t i = 0; i < n; i++, j++) {
        char c = name[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%' && i + 2 < n && ascii_hex_value(name[i + 1]) >= 0 &&
                   ascii_hex_value(name[i + 2]) >= 0) {
            c = (char)(ascii_hex_value(name[i + 1]) * 16 + ascii_hex_value(name[i + 2]));
            i += 2;
        }
        if (c == '\0')
            break; /* mask what a C-string reading of the name would take for apikey */
        c = ascii_lower(c);
        if (j >= sizeof want - 1 || c != want[j])
            return false;
    }
    return j == sizeof want - 1;
}

/* Bounded appender: once full, further text is dropped and the result is
 * marked cut. */
struct target_out {
    char *buf;
    size_t cap, len;
    bool cut;
};

static void out_put(struct target_out *o, const char *s, size_t n)
{
    if (o->cut)
        return;
    if (n > o->cap - 1 - o->len) {
        n = o->cap - 1 - o->len;
        o->cut = true;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

size_t http_accesslog_target(char *out, size_t cap, const char *path, const char *query)
{
    if (!cap)
        return 0;
    struct target_out o = {out, cap, 0, false};
    out_put(&o, path, strlen(path));
    if (query && *query) {
        out_put(&o, "?", 1);
        const char *p = query;
        for (;;) {
            const char *amp = strchr(p, '&');
            size_t plen = amp ? (size_t)(amp - p) : strlen(p);
            const char *eq = memchr(p, '=', plen);
            if (eq && is_key_name(p, (size_t)(eq - p))) {
                out_put(&o, p, (size_t)(eq - p) + 1);
                out_put(&o, "***", 3);
            } else {
                out_put(&o, p, plen);
            }
            if (!amp)
                break;
            out_put(&o, "&", 1);
            p = amp + 1;
        }
    }
    if (o.cut && cap > 4) {
        /* A cut falls after masking, so it can only hide, never reveal. */
        memcpy(out + cap - 4, "...", 3);
        o.len = cap - 1;
    }
    out[o.len] = '\0';
    return o.len;
}

void http_accesslog_write(const struct http_accesslog_entry *e)
{
    char target[HTTP_LOG_TARGET_MAX];
    http_accesslog_target(target, sizeof target, e->path ? e->path : "-", e->query);
    char status[16];
    if (e->status)
        snprintf(status, sizeof status, "%d", e->status);
    else
        snprintf(status, sizeof status, "-");
    /* bytes: the handler's body; gz: what was sent when gzip shrank it. */
    char gz[32] = "";
    if (e->sent_bytes != e->body_bytes)
        snprintf(gz, sizeof gz, " gz=%zu", e->sent_bytes);
    log_info("http %s %s %s bytes=%zu%s us=%lld id=%s%s%s%s%s", e->method ? e->method : "-", target,
             status, e->body_bytes, gz, e->micros, e->request_id ? e->request_id : "-",
             e->note ? " " : "", e->note ? e->note : "", e->why ? " " : "", e->why ? e->why : "");
}
