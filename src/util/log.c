/* stderr logger (util/log.h): timestamp, level, message, one write(2) per
 * line so lines from different threads never interleave. Control bytes in
 * a message (a feed's title, an error that quotes a request) are written
 * as \xHH: one message is one line, and nothing in it can steer a
 * terminal. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level min_level = LOG_INFO;

void log_set_level(enum log_level level)
{
    min_level = level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    if (level < min_level)
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, names[level]);
    if (n < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    static const char hex[] = "0123456789abcdef";
    char out[sizeof line * 4 + 1];
    size_t len = 0;
    for (const char *p = line; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) {
            out[len++] = '\\';
            out[len++] = 'x';
            out[len++] = hex[c >> 4];
            out[len++] = hex[c & 15];
        } else {
            out[len++] = (char)c;
        }
    }
    out[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, out, len);
    (void)w;
}
