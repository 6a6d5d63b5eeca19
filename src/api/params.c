/* Query-string splitting and decoding (api/params.h). */
#include "api/params.h"
#include "util/ascii.h"
#include "util/err.h"
#include "util/url.h"

#include <string.h>
#include <strings.h>

#include "util/banned.h"

/* Decode s[0..n) into a new arena string; *len_out = decoded length. */
static char *decode(struct arena *a, const char *s, size_t n, bool lower, size_t *len_out)
{
    char *out = arena_alloc(a, n + 1);
    if (!out)
        return NULL;
    size_t j = url_decode(out, s, n, true);
    if (lower)
        ascii_lower_n(out, out, j);
    out[j] = '\0';
    *len_out = j;
    return out;
}

int api_params_parse(struct arena *a, const char *query, size_t len, struct api_params *out)
{
    out->items = NULL;
    out->n = 0;
    if (!query || !len)
        return 0;
    size_t count = 1;
    for (size_t i = 0; i < len; i++)
        if (query[i] == '&')
            count++;
    out->items = arena_calloc(a, count, sizeof *out->items);
    if (!out->items)
        return ERR_NOMEM;
    struct url_query walk;
    struct url_param pair;
    url_query_start(&walk, query, len, "&");
    while (url_query_next(&walk, &pair)) {
        if (pair.value && pair.value_len > 0) {
            size_t name_len, value_len;
            char *name = decode(a, pair.p, pair.name_len, true, &name_len);
            char *value = decode(a, pair.value, pair.value_len, false, &value_len);
            if (!name || !value)
                return ERR_NOMEM;
            /* A name holding a decoded NUL ("apiKey%00") would compare equal
             * to its prefix in every strcmp lookup while the access log's
             * masking saw another name: such a parameter is dropped. */
            if (value_len > 0 && name_len > 0 && !memchr(name, '\0', name_len)) {
                out->items[out->n].name = name;
                out->items[out->n].value = value;
                out->items[out->n].len = value_len;
                out->n++;
            }
        }
    }
    return 0;
}

const struct api_param *api_params_first(const struct api_params *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->items[i].name, name))
            return &p->items[i];
    return NULL;
}

size_t api_params_count(const struct api_params *p, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->items[i].name, name))
            n++;
    return n;
}

const char *api_params_joined(struct arena *a, const struct api_params *p, const char *name,
                              const char *sep)
{
    size_t total = 0, n = 0, seplen = strlen(sep);
    for (size_t i = 0; i < p->n; i++) {
        if (strcmp(p->items[i].name, name))
            continue;
        total += p->items[i].len + (n ? seplen : 0);
        n++;
    }
    if (!n)
        return NULL;
    char *out = arena_alloc(a, total + 1);
    if (!out)
        return NULL;
    size_t off = 0;
    n = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (strcmp(p->items[i].name, name))
            continue;
        if (n++) {
            memcpy(out + off, sep, seplen);
            off += seplen;
        }
        memcpy(out + off, p->items[i].value, p->items[i].len);
        off += p->items[i].len;
    }
    out[off] = '\0';
    return out;
}

/* The search-only parameters (api/params.h): the name as stored (lower
 * case) and as documented, which the refusals quote. */
static const struct {
    const char *name, *display;
} search_only[] = {{"from", "from"},         {"to", "to"},
                   {"sortby", "sortBy"},     {"page", "page"},
                   {"pagesize", "pageSize"}, {"format", "format"},
                   {"cursor", "cursor"},     {"similarto", "similarTo"}};
#define N_SEARCH_ONLY (sizeof search_only / sizeof search_only[0])

const char *api_search_only_param(const char *name)
{
    for (size_t i = 0; i < N_SEARCH_ONLY; i++)
        if (!strcasecmp(name, search_only[i].display))
            return search_only[i].display;
    return NULL;
}

const char *api_params_search_only(const struct api_params *p)
{
    for (size_t i = 0; i < N_SEARCH_ONLY; i++)
        if (api_params_first(p, search_only[i].name))
            return search_only[i].display;
    return NULL;
}

static bool is_trim(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int api_list_split(struct arena *a, const char *list, const char ***items_out, size_t *n_out)
{
    *items_out = NULL;
    *n_out = 0;
    if (!list)
        return 0;
    size_t count = 1;
    for (const char *p = list; *p; p++)
        if (*p == ',')
            count++;
    const char **items = arena_calloc(a, count, sizeof *items);
    if (!items)
        return ERR_NOMEM;
    size_t n = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *s = p;
        while (s < end && is_trim(*s))
            s++;
        const char *e = end;
        while (e > s && is_trim(e[-1]))
            e--;
        if (e > s) {
            items[n] = arena_strndup(a, s, (size_t)(e - s));
            if (!items[n])
                return ERR_NOMEM;
            n++;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    *items_out = items;
    *n_out = n;
    return 0;
}
