/* Cursor paging's cursors (api/cursor.h). */
#include "api/cursor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/ascii.h"
#include "util/hash.h"

#include "util/banned.h"

/* The parameters that make the search; their values in request order. */
static const char *const search_params[] = {"q",        "qintitle",       "searchin", "sources",
                                            "domains",  "excludedomains", "from",     "to",
                                            "language", "sortby"};

uint64_t api_cursor_search(const struct api_params *p)
{
    uint64_t h = HASH_FNV1A64_INIT;
    for (size_t k = 0; k < sizeof search_params / sizeof search_params[0]; k++) {
        h = hash_fnv1a64_update(h, search_params[k], strlen(search_params[k]) + 1);
        for (size_t i = 0; i < p->n; i++) {
            if (strcmp(p->items[i].name, search_params[k]) != 0)
                continue;
            /* Each value with its length: "a,b" + "c" differs from "a" + "b,c". */
            uint64_t len = p->items[i].len;
            h = hash_fnv1a64_update(h, &len, sizeof len);
            h = hash_fnv1a64_update(h, p->items[i].value, p->items[i].len);
        }
    }
    return hash_mix64(h);
}

#define CHECK_DIGITS 8
#define RANKED_HEAD 51 /* "c2", the letter, three 16-digit numbers */

static uint32_t check_of(const char *s, size_t n)
{
    return (uint32_t)(hash_bytes64(s, n) >> 32);
}

/* v as 2 * n lower-case hex digits (its low n bytes, most significant
 * first) into out, no terminator. */
static void hex_put(char *out, uint64_t v, size_t n)
{
    for (size_t i = n; i-- > 0; v >>= 8)
        ascii_hex_byte(out + 2 * i, (unsigned char)(v & 0xff));
}

/* "c1", the search, the id (16 hex digits each), a check of those (8):
 * written by hand, not snprintf (an export writes one per line). */
static void published_encode(const struct api_cursor *c, char out[API_CURSOR_LEN + 1])
{
    out[0] = 'c';
    out[1] = '1';
    hex_put(out + 2, c->search, 8);
    hex_put(out + 18, (uint64_t)c->id, 8);
    hex_put(out + 34, check_of(out, 34), 4);
    out[API_CURSOR_LEN] = '\0';
}

static uint64_t key_bits(double key)
{
    uint64_t bits;
    memcpy(&bits, &key, sizeof bits);
    return bits;
}

/* The statistics of a relevancy cursor at out[at..]: returns the end. */
static size_t stats_encode(const struct index_rank_stats *st, char *out, size_t at, size_t cap)
{
    at += (size_t)snprintf(out + at, cap - at, ".%llx.%llx", (unsigned long long)st->nrow,
                           (unsigned long long)st->ntoken);
    for (size_t i = 0; i < st->nleaves && i < INDEX_RANK_LEAVES_MAX; i++)
        at += (size_t)snprintf(out + at, cap - at, ".%llx", (unsigned long long)st->hits[i]);
    return at;
}

void api_cursor_encode(const struct api_cursor *c, char *out)
{
    const size_t cap = API_CURSOR_MAX + 1;
    if (c->kind == API_CURSOR_PUBLISHED) {
        published_encode(c, out);
        return;
    }
    size_t at =
        (size_t)snprintf(out, cap, "c2%c%016llx%016llx%016llx",
                         c->kind == API_CURSOR_RELEVANCY ? 'r' : 'p', (unsigned long long)c->search,
                         (unsigned long long)(uint64_t)c->id, (unsigned long long)key_bits(c->key));
    if (c->kind == API_CURSOR_RELEVANCY)
        at = stats_encode(&c->stats, out, at, cap);
    snprintf(out + at, cap - at, "%08x", (unsigned)check_of(out, at));
}

/* n lower-case hex digits of s into *out. */
static bool hex_read(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = ascii_hex_value(s[i]);
        if (d < 0 || ascii_is_upper(s[i]))
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* "." and a number of s[*at..end) as a non-negative int64 spelled without
 * a leading zero (one spelling per value); *at past it. */
static bool number_read(const char *s, size_t end, size_t *at, int64_t *out)
{
    size_t i = *at, n = 0;
    uint64_t v;
    if (i >= end || s[i] != '.')
        return false;
    i++;
    while (i + n < end && s[i + n] != '.')
        n++;
    if (n == 0 || n > 16 || (n > 1 && s[i] == '0') || !hex_read(s + i, n, &v) ||
        v > (uint64_t)INT64_MAX)
        return false;
    *out = (int64_t)v;
    *at = i + n;
    return true;
}

/* A relevancy cursor's statistics, s[at..end): counts a collection can have. */
static bool stats_decode(const char *s, size_t at, size_t end, struct index_rank_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!number_read(s, end, &at, &st->nrow) || !number_read(s, end, &at, &st->ntoken) ||
        st->nrow == 0)
        return false;
    while (at < end) {
        if (st->nleaves == INDEX_RANK_LEAVES_MAX ||
            !number_read(s, end, &at, &st->hits[st->nleaves]) || st->hits[st->nleaves] > st->nrow)
            return false;
        st->nleaves++;
    }
    return true;
}

static bool ranked_decode(const char *s, size_t n, struct api_cursor *out)
{
    uint64_t search, id, bits;
    if (n < RANKED_HEAD + CHECK_DIGITS || (s[2] != 'p' && s[2] != 'r') ||
        !hex_read(s + 3, 16, &search) || !hex_read(s + 19, 16, &id) || !hex_read(s + 35, 16, &bits))
        return false;
    out->kind = s[2] == 'r' ? API_CURSOR_RELEVANCY : API_CURSOR_POPULARITY;
    out->search = search;
    out->id = (int64_t)id;
    memcpy(&out->key, &bits, sizeof bits);
    if (!isfinite(out->key))
        return false;
    memset(&out->stats, 0, sizeof out->stats);
    if (out->kind == API_CURSOR_POPULARITY)
        return n == RANKED_HEAD + CHECK_DIGITS;
    return stats_decode(s, RANKED_HEAD, n - CHECK_DIGITS, &out->stats);
}

bool api_cursor_decode(const char *s, size_t n, struct api_cursor *out)
{
    uint64_t check;
    if (n < API_CURSOR_LEN || n > API_CURSOR_MAX ||
        !hex_read(s + n - CHECK_DIGITS, CHECK_DIGITS, &check) ||
        check != check_of(s, n - CHECK_DIGITS))
        return false;
    if (memcmp(s, "c2", 2) == 0)
        return ranked_decode(s, n, out);
    uint64_t search, id;
    if (n != API_CURSOR_LEN || memcmp(s, "c1", 2) != 0 || !hex_read(s + 2, 16, &search) ||
        !hex_read(s + 18, 16, &id))
        return false;
    memset(out, 0, sizeof *out);
    out->kind = API_CURSOR_PUBLISHED;
    out->search = search;
    out->id = (int64_t)id;
    return true;
}
