/* Time zones for calendar buckets (/v2/everything/counts): a fixed UTC
 * offset ("+05:30") or an IANA zone ("Europe/Berlin") read from the
 * system's tzdata (TZif files under /usr/share/zoneinfo, Debian package
 * tzdata). No time zone database of our own and no libc time zone state
 * (TZ and tzset are process-wide: a server thread must not change them).
 * The TZif reader takes hostile bytes: fuzzed by fuzz/fuzz_counts.c. */
#ifndef NEWSD_UTIL_TZIF_H
#define NEWSD_UTIL_TZIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TZIF_DIR "/usr/share/zoneinfo"
#define TZIF_MAX_TRANSITIONS 2048 /* more than any real zone (~300) */
#define TZIF_FILE_MAX (64 * 1024) /* real files: under 4 KB */

struct tzif {
    int32_t fixed;                     /* the offset when n == 0 (seconds east of UTC) */
    size_t n;                          /* transitions */
    int64_t at[TZIF_MAX_TRANSITIONS];  /* ascending UTC seconds */
    int32_t off[TZIF_MAX_TRANSITIONS]; /* offset from at[i] on */
    int32_t before;                    /* the offset before at[0] */
};

/* A fixed offset: "Z", "UTC", "+hh", "+hh:mm", "+hhmm" (or '-'), |offset|
 * under 18 hours. true when s[0..len) is one. */
bool tzif_parse_offset(const char *s, size_t len, int32_t *out);

/* Parse a TZif file image (RFC 8536, versions 1 to 4: the 64-bit part of
 * version 2 and later). After the last transition its offset stays (the
 * POSIX rule of the footer is not read: Debian's files list transitions
 * up to 2037). 0, or ERR_PARSE. */
int tzif_parse(const uint8_t *p, size_t len, struct tzif *out);

/* A zone by name: an offset (tzif_parse_offset) or an IANA name (letters,
 * digits, '_', '-', '+', '/' between non-empty parts, no "..") read from
 * dir (NULL: TZIF_DIR). 0; ERR_NOTFOUND for a name no file has; ERR_PARSE
 * for a name that is not one or a file that is not TZif; ERR_NOMEM. */
int tzif_load(const char *dir, const char *name, size_t len, struct tzif *out);

/* The offset (seconds east of UTC) in force at UTC second t. */
int32_t tzif_offset(const struct tzif *z, int64_t t);

/* The UTC second at which the zone's wall clock reads local (seconds of
 * the local civil calendar since 1970-01-01T00:00): in a gap (spring
 * forward) the wall time after it, when repeated (fall back) the first. */
int64_t tzif_to_utc(const struct tzif *z, int64_t local);

#endif
