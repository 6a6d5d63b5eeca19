/* Parameter validators shared by the endpoints (api/internal.h). Each one
 * names the parameter in its parameterInvalid message, the way NewsAPI
 * does, so a client developer sees at once what to fix. */
#include "api/internal.h"
#include "util/ascii.h"
#include "util/domain.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/vocab.h"

#include "util/banned.h"

const char *api_first_value(struct api_call *c, const char *name)
{
    const struct api_param *p = api_params_first(&c->params, name);
    return p ? p->value : NULL;
}

/* A value fit for text processing: no NUL bytes, valid UTF-8. */
static bool value_is_text(const struct api_param *p)
{
    return memchr(p->value, '\0', p->len) == NULL && utf8_valid(p->value, p->len);
}

/* The values of parameter name, each checked to be text, and their length
 * in characters together: the query language's limits hold for the whole
 * request however its values are split (docs/security.md). */
static int query_values(struct api_call *c, const char *name, const char *display,
                        const char ***values, size_t **lens, size_t *n, size_t *chars)
{
    *n = api_params_count(&c->params, name);
    *chars = 0;
    *values = arena_calloc(&c->arena, *n ? *n : 1, sizeof **values);
    *lens = arena_calloc(&c->arena, *n ? *n : 1, sizeof **lens);
    if (!*values || !*lens)
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    size_t k = 0;
    for (size_t i = 0; i < c->params.n; i++) {
        const struct api_param *p = &c->params.items[i];
        if (strcmp(p->name, name))
            continue;
        if (!value_is_text(p))
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %s parameter is not valid UTF-8 text.", display);
        *chars += utf8_count(p->value, p->len);
        (*values)[k] = p->value;
        (*lens)[k++] = p->len;
    }
    return 0;
}

int api_get_query(struct api_call *c, const char *name, const char *display,
                  struct query_node **out)
{
    const char **values;
    size_t *lens, n, chars, bad;
    struct err err;

    *out = NULL;
    if (query_values(c, name, display, &values, &lens, &n, &chars) < 0)
        return -1;
    if (n == 0)
        return 0;
    /* Before any parsing: 1,500 values cost no more than one. */
    if (chars > LIMIT_Q_CHARS && n == 1)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter is too long: %zu characters, the limit is %d.", display,
                        chars, LIMIT_Q_CHARS);
    if (chars > LIMIT_Q_CHARS)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter is too long: its %zu values have %zu characters "
                        "together, the limit is %d.",
                        display, n, chars, LIMIT_Q_CHARS);
    err_clear(&err);
    int rc = query_parse_all(&c->arena, values, lens, n, out, &bad, &err);
    if (rc == ERR_NOMEM)
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    if (rc < 0 && n == 1)
        return api_fail(c, API_ERR_PARAMETER_INVALID, "The %s parameter is invalid: %s.", display,
                        err_msg(&err, rc));
    if (rc < 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter is invalid: %s (in value %zu of %zu; the limits count "
                        "all the values together).",
                        display, err_msg(&err, rc), bad + 1, n);
    return 0;
}

int api_get_list(struct api_call *c, const char *name, const char ***items, size_t *n)
{
    *items = NULL;
    *n = 0;
    const char *v = api_params_joined(&c->arena, &c->params, name, ",");
    if (!v)
        return 0;
    if (api_list_split(&c->arena, v, items, n) < 0)
        return api_fail(c, API_ERR_UNEXPECTED, NULL);
    return 1;
}

int api_get_search_in(struct api_call *c, unsigned *out)
{
    const char **items;
    size_t n;
    *out = INDEX_FIELD_ALL;
    if (api_get_list(c, "searchin", &items, &n) < 0)
        return -1;
    unsigned mask = 0;
    for (size_t i = 0; i < n; i++) {
        char *item = (char *)items[i];
        ascii_lower_str(item);
        if (!strcmp(item, "title"))
            mask |= INDEX_FIELD_TITLE;
        else if (!strcmp(item, "description"))
            mask |= INDEX_FIELD_DESCRIPTION;
        else if (!strcmp(item, "content"))
            mask |= INDEX_FIELD_CONTENT;
        else
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The searchIn parameter accepts title, description and content; "
                            "'%.64s' is not one of them.",
                            item);
    }
    if (mask)
        *out = mask;
    return 0;
}

int api_get_sources(struct api_call *c, const char ***ids, size_t *n)
{
    if (api_get_list(c, "sources", ids, n) < 0)
        return -1;
    if (*n > LIMIT_SOURCES)
        return api_fail(c, API_ERR_SOURCES_TOO_MANY, NULL);
    for (size_t i = 0; i < *n; i++) {
        struct err err;
        err_clear(&err);
        int rc = store_source_get(c->api->store, &c->arena, (*ids)[i], NULL, &err);
        if (rc == ERR_NOTFOUND)
            return api_fail(c, API_ERR_SOURCE_DOES_NOT_EXIST,
                            "You have requested a source which does not exist: %.200s.", (*ids)[i]);
        if (rc < 0)
            return api_fail(c, API_ERR_UNEXPECTED, NULL);
    }
    return 0;
}

int api_get_domains(struct api_call *c, const char *name, const char *display, const char ***out,
                    size_t *n)
{
    const char **items;
    size_t count;
    *out = NULL;
    *n = 0;
    if (api_get_list(c, name, &items, &count) < 0)
        return -1;
    if (count > LIMIT_LIST_ITEMS)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter lists too many domains: the limit is %d.", display,
                        LIMIT_LIST_ITEMS);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        char *d = domain_normalize((char *)items[i]);
        if (!d)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The %s parameter has an invalid domain: '%.100s'.", display, items[i]);
        items[kept++] = d;
    }
    *out = items;
    *n = kept;
    return 0;
}

static int get_date(struct api_call *c, const char *name, const char *display, bool end_of_day,
                    int64_t *out, bool *given)
{
    const struct api_param *p = api_params_first(&c->params, name);
    *given = p != NULL;
    if (!p)
        return 0;
    bool date_only = false;
    if (timefmt_parse_iso8601(p->value, p->len, out, &date_only) < 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter is not a valid date: use YYYY-MM-DD, "
                        "YYYY-MM-DDThh:mm:ss or an ISO 8601 date-time with an offset.",
                        display);
    if (date_only && end_of_day)
        *out += 86399;
    return 0;
}

int api_get_dates(struct api_call *c, int64_t *from, int64_t *to, bool *from_given)
{
    bool to_given;
    *from = INT64_MIN;
    *to = INT64_MAX;
    if (get_date(c, "from", "from", false, from, from_given) < 0)
        return -1;
    if (get_date(c, "to", "to", true, to, &to_given) < 0)
        return -1;
    if (*from_given && to_given && *from > *to)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The from parameter is later than the to parameter.");
    return 0;
}

int api_get_two_letters(struct api_call *c, const char *name, char out[3], bool *given)
{
    const struct api_param *p = api_params_first(&c->params, name);
    out[0] = '\0';
    *given = p != NULL;
    if (!p)
        return 0;
    const char *v = p->value;
    bool ok = p->len == 2;
    for (size_t i = 0; ok && i < 2; i++) {
        char ch = ascii_lower(v[i]);
        if (ch < 'a' || ch > 'z')
            ok = false;
        out[i] = ch;
    }
    if (!ok) {
        out[0] = '\0';
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The %s parameter must be a 2-letter code, e.g. us.", name);
    }
    out[2] = '\0';
    return 0;
}

/* The parameter name as a word of a vocabulary (util/vocab.h): lookup
 * gives its canonical spelling, or NULL for a word not in list. */
static int get_vocab(struct api_call *c, const char *name, const char *(*lookup)(const char *),
                     const char *list, const char **out)
{
    *out = NULL;
    const char *v = api_first_value(c, name);
    if (!v)
        return 0;
    if ((*out = lookup(v)) != NULL)
        return 0;
    return api_fail(c, API_ERR_PARAMETER_INVALID, "The %s parameter must be one of %s.", name,
                    list);
}

int api_get_category(struct api_call *c, const char **out)
{
    return get_vocab(c, "category", vocab_category, VOCAB_CATEGORY_LIST, out);
}

int api_get_language(struct api_call *c, const char **out)
{
    return get_vocab(c, "language", vocab_language, VOCAB_LANGUAGE_LIST, out);
}

int api_get_feed_format(struct api_call *c)
{
    const char *v = api_first_value(c, "format");
    int f = v ? api_feed_format_of(v) : API_FEED_NONE;
    if (f < 0)
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The format parameter must be json, rss, atom or jsonfeed.");
    c->feed = (enum api_feed_format)f;
    return 0;
}

int api_get_either(struct api_call *c, const char *name, const char *first, const char *second,
                   const char *refusal, bool *is_second)
{
    const char *v = api_first_value(c, name);
    *is_second = false;
    if (!v || !strcasecmp(v, first))
        return 0;
    if (!strcasecmp(v, second)) {
        *is_second = true;
        return 0;
    }
    return api_fail(c, API_ERR_PARAMETER_INVALID, "%s", refusal);
}

int api_get_sort(struct api_call *c, enum index_sort dflt, enum index_sort *out)
{
    *out = dflt;
    const char *v = api_first_value(c, "sortby");
    if (!v)
        return 0;
    if (!strcasecmp(v, "publishedat"))
        *out = INDEX_SORT_PUBLISHED_DESC;
    else if (!strcasecmp(v, "relevancy"))
        *out = INDEX_SORT_RELEVANCY;
    else if (!strcasecmp(v, "popularity"))
        *out = INDEX_SORT_POPULARITY;
    else
        return api_fail(c, API_ERR_PARAMETER_INVALID,
                        "The sortBy parameter must be one of publishedAt, relevancy, popularity.");
    return 0;
}

bool api_parse_digits(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 18)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch < '0' || ch > '9')
            return false;
        v = v * 10 + (uint64_t)(ch - '0');
    }
    *out = v;
    return true;
}

int api_get_paging(struct api_call *c, size_t default_size, size_t *page, size_t *size)
{
    *page = 1;
    *size = default_size;
    const struct api_param *ps = api_params_first(&c->params, "pagesize");
    const struct api_param *pg = api_params_first(&c->params, "page");
    uint64_t v;
    if (ps) {
        if (!api_parse_digits(ps->value, ps->len, &v) || v < 1 || v > LIMIT_PAGE_SIZE)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The pageSize parameter must be a whole number from 1 to %d.",
                            LIMIT_PAGE_SIZE);
        *size = (size_t)v;
    }
    if (pg) {
        if (!api_parse_digits(pg->value, pg->len, &v) || v < 1)
            return api_fail(c, API_ERR_PARAMETER_INVALID,
                            "The page parameter must be a whole number of 1 or more.");
        *page = (size_t)v;
    }
    return 0;
}

int api_check_plan(struct api_call *c, size_t page, size_t size, int64_t *from, bool from_given,
                   int64_t *to)
{
    const struct auth_plan *plan = &c->auth.plan;
    int64_t window = plan->result_window ? plan->result_window : c->api->cfg.result_window;
    uint64_t last;
    if (window > 0 && (__builtin_mul_overflow((uint64_t)page, (uint64_t)size, &last) ||
                       last > (uint64_t)window)) {
        uint64_t first = (uint64_t)(page - 1) * size;
        char limit[128]; /* whose limit it is: the plan's, else the server's */
        snprintf(limit, sizeof limit,
                 plan->result_window ? "Your plan is limited to a max of %lld results"
                                     : "This server returns at most the first %lld results of "
                                       "a search",
                 (long long)window);
        return api_fail(c, API_ERR_MAXIMUM_RESULTS,
                        "You have requested too many results. %s. You are trying to request "
                        "results %llu to %llu.",
                        limit, (unsigned long long)first, (unsigned long long)(first + size));
    }
    if (plan->history_days > 0) {
        int64_t earliest = (timefmt_day(c->now) - plan->history_days) * 86400;
        if (from_given && *from < earliest) {
            char allowed[11], asked[11];
            timefmt_date(earliest, allowed);
            timefmt_date(*from, asked);
            return api_fail(c, API_ERR_HISTORY,
                            "You are trying to request results too far in the past. Your plan "
                            "permits you to request articles as far back as %s, but you have "
                            "requested %s.",
                            allowed, asked);
        }
    }
    api_plan_window(plan, c->now, from, to);
    return 0;
}

void api_plan_window(const struct auth_plan *plan, int64_t now, int64_t *from, int64_t *to)
{
    if (plan->history_days > 0) {
        int64_t earliest = (timefmt_day(now) - plan->history_days) * 86400;
        if (*from < earliest)
            *from = earliest;
    }
    if (plan->delay_seconds > 0) {
        int64_t latest = now - plan->delay_seconds;
        if (*to > latest)
            *to = latest;
    }
}
