/* Shared by the parts of `newsd feeds`: feeds.c (options, add, edit,
 * pause, resume, remove), feeds_io.c (import, export, list). */
#ifndef NEWSD_CMD_FEEDS_INTERNAL_H
#define NEWSD_CMD_FEEDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"
#include "util/arena.h"
#include "util/netpolicy.h"

#define FEEDS_INTERVAL_MIN 60 /* seconds */
#define FEEDS_INTERVAL_MAX (24 * 3600)

/* The settings of one feed as text (options, a JSONL line, an OPML
 * outline), before they are checked. NULL = not given. */
struct feeds_spec {
    const char *url, *source, *country, *category, *language;
    bool headlines;
    long long interval; /* 0 = not given; < 0 = not a number */
    const char *pages;  /* missing, always, never; NULL = the crawler's setting */
    bool paused;
};

/* Check sp and fill f (a new, enabled unless paused, feed); false with a
 * message in why when a value is bad or the url's host is an address the
 * policy refuses. */
bool cmd_feeds_fill(struct arena *ar, const struct netpolicy *policy, struct feed_record *f,
                    const struct feeds_spec *sp, char *why, size_t why_size);

/* How many digits a feed's number (id, interval) may have. */
#define FEEDS_NUMBER_DIGITS 15

/* newsd feeds import FILE: JSONL or OPML (by content). An exit status. */
int cmd_feeds_import(struct store *s, struct arena *ar, const struct netpolicy *policy,
                     const char *path);

/* newsd feeds export (verb "export"): every feed as "opml" (format NULL)
 * or "jsonl" on stdout; newsd feeds list (verb "list"): a "table" (NULL)
 * or "json" of the feeds and their health. */
int cmd_feeds_show(struct store *s, struct arena *ar, const char *verb, const char *format);

#endif
