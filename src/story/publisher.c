/* story/publisher.h. The id is decoded only as far as a URL fits in the
 * caller's buffer; the URL is the run of printable ASCII from "http://" or
 * "https://" in the decoded bytes (the record's length prefix is not
 * trusted: any bytes decode to something, and the run stops at the first
 * byte a URL cannot hold). */
#include "story/publisher.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/ascii.h"
#include "util/banned.h"

/* The Google News link prefixes whose next path segment is the id. */
static const char *const wrappers[] = {
    "news.google.com/__i/rss/rd/articles/",
    "news.google.com/rss/articles/",
    "news.google.com/articles/",
};

static int b64url_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/* Decode base64url from s up to its first other byte into out (at most
 * cap bytes); the bytes written. */
static size_t b64url_decode(const char *s, unsigned char *out, size_t cap)
{
    uint32_t acc = 0;
    unsigned bits = 0;
    size_t n = 0;
    for (int v; n < cap && (v = b64url_value((unsigned char)*s)) >= 0; s++) {
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return n;
}

static bool starts_ci(const char *s, const char *p)
{
    for (; *p; s++, p++)
        if (ascii_lower(*s) != *p)
            return false;
    return true;
}

const char *story_publisher_url(const char *url, char *buf, size_t cap)
{
    if (url == NULL || cap < STORY_PUBLISHER_URL_MAX)
        return url;
    const char *p = url;
    if (starts_ci(p, "https://"))
        p += 8;
    else if (starts_ci(p, "http://"))
        p += 7;
    else
        return url;
    const char *id = NULL;
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0] && id == NULL; i++)
        if (starts_ci(p, wrappers[i]))
            id = p + strlen(wrappers[i]);
    if (id == NULL)
        return url;
    unsigned char raw[STORY_PUBLISHER_URL_MAX];
    size_t n = b64url_decode(id, raw, sizeof raw);
    for (size_t i = 0; i + 8 <= n; i++) {
        size_t skip = memcmp(raw + i, "https://", 8) == 0  ? 8
                      : memcmp(raw + i, "http://", 7) == 0 ? 7
                                                           : 0;
        if (skip == 0)
            continue;
        size_t e = i;
        while (e < n && raw[e] > 0x20 && raw[e] < 0x7f)
            e++;
        if (e - i <= skip || e - i >= cap) /* no host, or no room */
            return url;
        memcpy(buf, raw + i, e - i);
        buf[e - i] = '\0';
        return buf;
    }
    return url;
}
