/* Logging to stderr, one line per event, safe from any thread.
 * Never pass API keys or request bodies: the log is not a secret store. */
#ifndef NEWSD_UTIL_LOG_H
#define NEWSD_UTIL_LOG_H

#include <stdbool.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Minimum level written (default LOG_INFO); NEWSD_LOG=debug|info|warn|error. */
void log_set_level(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text lines ("TS LEVEL message", the default) or one JSON object per
 * line ({"ts":…,"level":…,"msg":…}); set once at start (serve
 * --log-format). */
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };
void log_set_format(enum log_format format);
enum log_format log_get_format(void);

/* One JSON line {"ts":…,"level":…,FIELDS}: fields is the inside of an
 * object ("\"a\":1,\"b\":\"x\""), valid JSON of printable ASCII, at
 * most 4 KiB, made by the caller (the access log in JSON format). */
void log_json(enum log_level level, const char *fields);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
