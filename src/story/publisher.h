/* The publisher's URL behind an aggregator's redirect link (issue 25,
 * docs/stories.md): a Google News RSS link
 * (news.google.com/__i/rss/rd/articles/<id>, .../rss/articles/<id>) carries
 * the article's own URL in its id (base64url of a small protobuf record
 * holding the URL as a string). The story keys compare the publisher's URL,
 * so such an entry and the article it links to are one URL and one site
 * (a site's template pages reached through Google News are still one
 * site's). Pure, thread-safe; url may be anything. */
#ifndef NEWSD_STORY_PUBLISHER_H
#define NEWSD_STORY_PUBLISHER_H

#include <stddef.h>

/* Bytes a caller's buffer needs for any URL this finds. */
#define STORY_PUBLISHER_URL_MAX 1024

/* The publisher's URL written NUL-terminated into buf (cap bytes, at least
 * STORY_PUBLISHER_URL_MAX) and returned, or url itself when it is not a
 * link this knows or its id holds no http(s) URL. */
const char *story_publisher_url(const char *url, char *buf, size_t cap);

#endif
