/* TZif files and fixed offsets (util/tzif.h). */
#include "util/tzif.h"
#include "util/ascii.h"
#include "util/err.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sort.h"
#include "util/banned.h"

#define OFFSET_MAX (18 * 3600)

static bool two_digits(const char *s, int *out)
{
    if (!ascii_is_digit(s[0]) || !ascii_is_digit(s[1]))
        return false;
    *out = (s[0] - '0') * 10 + (s[1] - '0');
    return true;
}

bool tzif_parse_offset(const char *s, size_t len, int32_t *out)
{
    int h = 0, m = 0;
    if ((len == 1 && (s[0] == 'Z' || s[0] == 'z')) || (len == 3 && !memcmp(s, "UTC", 3))) {
        *out = 0;
        return true;
    }
    if (len < 3 || (s[0] != '+' && s[0] != '-') || !two_digits(s + 1, &h))
        return false;
    if (len == 6 && s[3] == ':') {
        if (!two_digits(s + 4, &m))
            return false;
    } else if (len == 5) {
        if (!two_digits(s + 3, &m))
            return false;
    } else if (len != 3) {
        return false;
    }
    if (m > 59 || h * 3600 + m * 60 >= OFFSET_MAX)
        return false;
    *out = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return true;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* The counts of a TZif header at p (44 bytes, checked by the caller). */
struct header {
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
    char version;
};

static bool header_read(const uint8_t *p, struct header *h)
{
    if (memcmp(p, "TZif", 4))
        return false;
    h->version = (char)p[4];
    h->isutcnt = be32(p + 20);
    h->isstdcnt = be32(p + 24);
    h->leapcnt = be32(p + 28);
    h->timecnt = be32(p + 32);
    h->typecnt = be32(p + 36);
    h->charcnt = be32(p + 40);
    /* Bounds that keep every size below in range (RFC 8536 §3.1). */
    return h->typecnt >= 1 && h->typecnt <= 256 && h->charcnt <= 65536 && h->leapcnt <= 65536 &&
           h->timecnt <= (1u << 20) && (h->isutcnt == 0 || h->isutcnt == h->typecnt) &&
           (h->isstdcnt == 0 || h->isstdcnt == h->typecnt);
}

/* Bytes of a data block of h with times of tsize bytes. */
static uint64_t block_bytes(const struct header *h, unsigned tsize)
{
    return (uint64_t)h->timecnt * tsize + h->timecnt + (uint64_t)h->typecnt * 6 + h->charcnt +
           (uint64_t)h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

int tzif_parse(const uint8_t *p, size_t len, struct tzif *out)
{
    struct header h;
    unsigned tsize = 4;
    memset(out, 0, offsetof(struct tzif, at));
    out->before = 0;
    if (len < 44 || !header_read(p, &h))
        return ERR_PARSE;
    if (h.version >= '2') { /* skip the 32-bit block to the 64-bit one */
        uint64_t skip = 44 + block_bytes(&h, 4);
        if (skip + 44 > len || !header_read(p + skip, &h))
            return ERR_PARSE;
        p += skip;
        len -= (size_t)skip;
        tsize = 8;
    }
    if (44 + block_bytes(&h, tsize) > len || h.timecnt > TZIF_MAX_TRANSITIONS)
        return ERR_PARSE;
    const uint8_t *times = p + 44, *idx = times + (size_t)h.timecnt * tsize,
                  *types = idx + h.timecnt;
    int32_t type_off[256];
    for (uint32_t i = 0; i < h.typecnt; i++) {
        int32_t off = (int32_t)be32(types + 6 * i);
        if (off <= -OFFSET_MAX * 2 || off >= OFFSET_MAX * 2)
            return ERR_PARSE;
        type_off[i] = off;
    }
    for (uint32_t i = 0; i < h.timecnt; i++) {
        int64_t at = tsize == 8 ? be64(times + 8 * i) : (int32_t)be32(times + 4 * i);
        if (idx[i] >= h.typecnt || (i > 0 && at <= out->at[i - 1]))
            return ERR_PARSE;
        out->at[i] = at;
        out->off[i] = type_off[idx[i]];
    }
    out->n = h.timecnt;
    /* Before the first transition: the first type (RFC 8536 §3.2). */
    out->before = type_off[0];
    out->fixed = type_off[0];
    return 0;
}

/* An IANA name: parts of [A-Za-z0-9_+-] joined by '/', none "." or "..",
 * none empty, at most 255 bytes: nothing that could leave dir. */
static bool zone_name_ok(const char *s, size_t len)
{
    size_t part = 0;
    if (len == 0 || len > 255)
        return false;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '/') {
            if (part == 0 || (s[i - part] == '.'))
                return false;
            part = 0;
            continue;
        }
        char c = s[i];
        if (!(ascii_is_alpha(c) || ascii_is_digit(c) || c == '_' || c == '-' || c == '+'))
            return false;
        part++;
    }
    return true;
}

int tzif_load(const char *dir, const char *name, size_t len, struct tzif *out)
{
    memset(out, 0, offsetof(struct tzif, at));
    if (tzif_parse_offset(name, len, &out->fixed)) {
        out->before = out->fixed;
        return 0;
    }
    if (!zone_name_ok(name, len))
        return ERR_PARSE;
    char path[512];
    int w = snprintf(path, sizeof path, "%s/%.*s", dir ? dir : TZIF_DIR, (int)len, name);
    if (w < 0 || (size_t)w >= sizeof path)
        return ERR_PARSE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ERR_NOTFOUND;
    uint8_t *buf = malloc(TZIF_FILE_MAX);
    size_t got = 0;
    if (buf == NULL) {
        close(fd);
        return ERR_NOMEM;
    }
    for (;;) {
        ssize_t r = read(fd, buf + got, TZIF_FILE_MAX - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == TZIF_FILE_MAX)
            break;
    }
    close(fd);
    int rc = tzif_parse(buf, got, out);
    free(buf);
    return rc;
}

/* sort_lower_bound's order for the first transition after a time. */
static int at_or_before(const void *element, const void *key)
{
    return *(const int64_t *)element <= *(const int64_t *)key ? -1 : 1;
}

int32_t tzif_offset(const struct tzif *z, int64_t t)
{
    if (z->n == 0)
        return z->fixed;
    if (t < z->at[0])
        return z->before;
    /* the last transition at or before t: one before the first after it */
    size_t after = sort_lower_bound(z->at, z->n, sizeof z->at[0], &t, at_or_before);
    return z->off[after - 1];
}

int64_t tzif_to_utc(const struct tzif *z, int64_t local)
{
    /* The offset in force an offset away (offsets under 36 h): the two
     * candidates of a wall time around a transition. */
    int64_t u1 = local - tzif_offset(z, local - tzif_offset(z, local));
    if (u1 + tzif_offset(z, u1) == local) {
        /* Repeated wall time: the earlier of the two readings. */
        int64_t u0 = local - tzif_offset(z, u1 - 86400);
        if (u0 < u1 && u0 + tzif_offset(z, u0) == local)
            return u0;
        return u1;
    }
    /* A gap: the wall time does not exist; the instant the clock jumped. */
    int64_t u2 = local - tzif_offset(z, u1);
    if (u2 + tzif_offset(z, u2) == local)
        return u2;
    /* Still in the gap: the instant the clock jumped over it. */
    int64_t a = u1 < u2 ? u1 : u2, b = u1 < u2 ? u2 : u1;
    for (size_t i = 0; i < z->n; i++)
        if (z->at[i] > a && z->at[i] <= b)
            return z->at[i];
    return b;
}
