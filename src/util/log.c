/* stderr logger (util/log.h): timestamp, level, message, one write(2) per
 * line so lines from different threads never interleave. Control bytes in
 * a message (a feed's title, an error that quotes a request) are written
 * as \xHH (text) or \u00HH (JSON): one message is one line, and nothing in
 * it can steer a terminal. */
#include "util/log.h"
#include "util/ascii.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level min_level = LOG_INFO;
static atomic_int line_format = LOG_FORMAT_TEXT;

void log_set_level(enum log_level level)
{
    min_level = level;
}

void log_set_format(enum log_format format)
{
    atomic_store(&line_format, (int)format);
}

enum log_format log_get_format(void)
{
    return (enum log_format)atomic_load(&line_format);
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

/* "2026-11-25T16:46:55.773Z" */
static void timestamp(char out[64])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* Append s to out[*len..cap): control bytes escaped; in JSON also the quote
 * and the backslash. Always leaves room for the line's end. */
static void put_escaped(char *out, size_t *len, size_t cap, const char *s, bool json)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        size_t n = 0;
        if (c < 0x20 || c == 0x7f) {
            const char *lead = json ? "\\u00" : "\\x";
            n = strlen(lead);
            memcpy(esc, lead, n);
            ascii_hex_byte(esc + n, c);
            n += 2;
        } else if (json && (c == '"' || c == '\\')) {
            esc[n++] = '\\';
            esc[n++] = (char)c;
        } else {
            esc[n++] = (char)c;
        }
        if (*len + n + 3 > cap)
            return;
        memcpy(out + *len, esc, n);
        *len += n;
    }
}

static void write_line(char *out, size_t len)
{
    out[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, out, len);
    (void)w;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (level < min_level)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    char ts[64];
    timestamp(ts);
    char out[sizeof msg * 6 + 128];
    size_t len;
    if (log_get_format() == LOG_FORMAT_JSON) {
        len = (size_t)snprintf(out, sizeof out, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts,
                               level_names[level]);
        put_escaped(out, &len, sizeof out, msg, true);
        out[len++] = '"';
        out[len++] = '}';
    } else {
        len = (size_t)snprintf(out, sizeof out, "%s %s ", ts, level_names[level]);
        put_escaped(out, &len, sizeof out, msg, false);
    }
    write_line(out, len);
}

void log_json(enum log_level level, const char *fields)
{
    if (level < min_level)
        return;
    char ts[64];
    timestamp(ts);
    char out[4096 * 2];
    size_t len = (size_t)snprintf(out, sizeof out, "{\"ts\":\"%s\",\"level\":\"%s\",", ts,
                                  level_names[level]);
    size_t n = strlen(fields);
    if (len + n + 3 > sizeof out)
        n = 0; /* never a cut object: fields are bounded by the caller */
    memcpy(out + len, fields, n);
    len += n;
    if (!n)
        len--; /* drop the comma */
    out[len++] = '}';
    write_line(out, len);
}
