/* Raw NUL bytes that libmicrohttpd 0.9.x drops from a request head
 * (http/internal.h: http_target_nul, http_nul_scan_*, http_conn_nul_header).
 *
 * MHD 0.9.75 parses the head in place in its read buffer: every line end
 * (CRLF or LF) is overwritten with NUL bytes, and so is the first ':' of a
 * header line; a header's value is the C string after the colon and any
 * spaces or tabs. A raw NUL inside a value therefore ends it, and the rest
 * of the line is dropped without a word: "X-Api-Key: KEY\0zz" reads as KEY.
 * The request target is cut the same way. What is left in the buffer tells:
 *
 * - header lines follow each other; a value that ends at v + len is
 *   followed by its line end, 1 (LF) or 2 (CRLF) NUL bytes, then the next
 *   line; after the last header come its line end and the empty line that
 *   ends the head, 2 to 4 NUL bytes up to the end of the head (MHD gives
 *   its size). Anything else there is what followed a NUL. A NUL right
 *   before a bare LF ("KEY\0\n") looks like CRLF and goes unseen; nothing
 *   after it is lost.
 * - a line starts where walking back from its value over spaces, the
 *   colon's NUL and the name ends, not where MHD's name pointer says: 0.9.75
 *   moves a folded header's name elsewhere (appending the continuation to
 *   it) and zeroes the old one, so before such a line only the bytes are
 *   judged, not their number, and its own value is not checked.
 * - the request target and the HTTP version are split at the last space,
 *   also overwritten: an uncut target ends one byte before the version.
 *
 * MHD 1.0 refuses NUL bytes in the head itself and parses differently: the
 * checks run against 0.9.x only (at run time: the library may be newer
 * than the headers newsd was built with). Only pointers into the head are
 * read, never beyond it. */
#include "http/internal.h"

#include <microhttpd.h>
#include <stdint.h>
#include <string.h>

#include "util/banned.h"

static bool parses_in_place(void)
{
    const char *v = MHD_get_version();
    return v && strncmp(v, "0.9.", 4) == 0;
}

static bool within(const char *p, const char *lo, const char *hi)
{
    return (uintptr_t)p >= (uintptr_t)lo && (uintptr_t)p < (uintptr_t)hi;
}

bool http_target_nul(const char *target, size_t len, const char *version)
{
    if (!target || !version || !version[0] || !parses_in_place())
        return false;
    return (uintptr_t)version > (uintptr_t)target + len + 1;
}

void http_nul_scan_init(struct http_nul_scan *s, const char *head, size_t len)
{
    memset(s, 0, sizeof *s);
    s->head = head;
    s->end = head + len;
}

/* Start of the header line holding value: back over the spaces after the
 * colon, the colon's NUL and the name. NULL when the bytes are not so. */
static const char *line_start(const struct http_nul_scan *s, const char *value)
{
    const char *p = value;
    while (p > s->head && (p[-1] == ' ' || p[-1] == '\t'))
        p--;
    if (p == s->head || p[-1] != '\0')
        return NULL;
    p--;
    while (p > s->head && p[-1] != '\0')
        p--;
    return p;
}

/* Judge the previous field by what lies between its value's end and next:
 * only NUL bytes (its line end), min to max of them. With lengths_known
 * false (the next line is a folded header's, whose name MHD moved away
 * and zeroed) only the bytes count. */
static void judge_previous(struct http_nul_scan *s, const char *next, size_t min, size_t max,
                           bool lengths_known)
{
    if (!s->prev_name || s->found)
        return;
    if ((uintptr_t)next < (uintptr_t)s->prev_end) {
        s->broken = true; /* not the layout described above: claim nothing */
        return;
    }
    size_t gap = (size_t)(next - s->prev_end);
    bool cut = lengths_known && (gap < min || gap > max);
    for (size_t i = 0; i < gap && !cut; i++)
        cut = s->prev_end[i] != '\0';
    if (cut)
        s->found = s->prev_name;
}

void http_nul_scan_field(struct http_nul_scan *s, const char *name, const char *value, size_t len)
{
    if (s->broken || s->found)
        return;
    const char *start = NULL;
    if (value && within(value, s->head, s->end) && len < (size_t)(s->end - value))
        start = line_start(s, value);
    if (!start) {
        s->broken = true;
        return;
    }
    /* A name outside the head was moved there by a folded line. */
    bool moved = !within(name, s->head, s->end);
    judge_previous(s, start, 1, 2, !moved);
    s->prev_name = moved ? NULL : name;
    s->prev_end = value + len;
}

const char *http_nul_scan_done(struct http_nul_scan *s)
{
    judge_previous(s, s->end, 2, 4, true);
    return s->broken ? NULL : s->found;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)key_size;
    http_nul_scan_field(cls, key, value, value_size);
    return MHD_YES;
}

const char *http_conn_nul_header(struct MHD_Connection *conn, const char *head)
{
    if (!head || !parses_in_place())
        return NULL;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!ci || ci->header_size == 0)
        return NULL;
    struct http_nul_scan s;
    http_nul_scan_init(&s, head, ci->header_size);
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &s);
    return http_nul_scan_done(&s);
}
