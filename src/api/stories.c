/* One story, many copies (issue 25, docs/api.md §9 "Stories"), all extensions:
 * dedupe=true on /v2/everything and /v2/top-headlines (one article per
 * story, each with storyId and storySize after NewsAPI's keys), GET
 * /v2/stories (the stories among /v2/everything's matches) and GET
 * /v2/stories/{id} (every article of one story). The grouping is the
 * index's (index_search_dedupe, index_stories); this file validates and
 * writes JSON. A story id is written as a decimal string: it is a 63-bit
 * number, past what a JavaScript number holds exactly. */
#include "api/internal.h"
#include "api/render.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/jw.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/banned.h"

int api_get_dedupe(struct api_call *c, bool *on)
{
    return api_get_either(c, "dedupe", "false", "true",
                          "The dedupe parameter must be true or false.", on);
}

static void story_id_str(int64_t story, char out[24])
{
    snprintf(out, 24, "%" PRId64, story);
}

/* The article's JSON with storyId and storySize after NewsAPI's keys. */
static int with_story(struct api_call *c, const struct index_doc *d, int64_t story, uint64_t size,
                      struct index_doc *out)
{
    char id[24], tail[80];
    story_id_str(story, id);
    int n = snprintf(tail, sizeof tail, ",\"storyId\":\"%s\",\"storySize\":%" PRIu64 "}", id, size);
    if (d->len == 0 || d->json[d->len - 1] != '}' || n < 0 || (size_t)n >= sizeof tail)
        return -1;
    char *json = arena_alloc(&c->arena, d->len - 1 + (size_t)n);
    if (json == NULL)
        return -1;
    memcpy(json, d->json, d->len - 1);
    memcpy(json + d->len - 1, tail, (size_t)n);
    *out = (struct index_doc){.id = d->id, .json = json, .len = d->len - 1 + (size_t)n};
    return 0;
}

void api_respond_dedupe(struct api_call *c, const struct index_request *req)
{
    struct index_dedupe_result res = {0};
    struct err err;
    err_clear(&err);
    c->searched = true;
    if (req->from <= req->to) { /* else an empty window: nothing can match */
        struct index_request timed = *req;
        timed.deadline_ms = api_deadline(c);
        int rc = index_search_dedupe(c->api->index, &c->arena, &timed, &res, &err);
        if (rc < 0) {
            api_fail_index(c, rc, &err);
            return;
        }
    }
    if (c->feed != API_FEED_NONE) { /* a feed's items are NewsAPI's articles */
        struct index_result page = {.total = res.total, .n = res.n, .docs = res.docs};
        api_respond_feed(c, &page);
        return;
    }
    struct index_doc *docs = arena_calloc(&c->arena, res.n ? res.n : 1, sizeof *docs);
    if (docs == NULL) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    for (size_t i = 0; i < res.n; i++) {
        if (with_story(c, &res.docs[i], res.story[i], res.size[i], &docs[i]) < 0) {
            api_fail(c, API_ERR_UNEXPECTED, NULL);
            return;
        }
    }
    struct buf b;
    buf_init(&b, LIMIT_RESPONSE_BYTES);
    api_render_page(&b, res.total, docs, res.n);
    api_respond_rendered(c, &b);
}

/* sortBy of /v2/stories: publishedAt (the default) or size. */
static int get_story_sort(struct api_call *c, enum index_story_sort *out)
{
    bool by_size;
    if (api_get_either(c, "sortby", "publishedat", "size",
                       "The sortBy parameter of /v2/stories must be one of publishedAt, size.",
                       &by_size) < 0)
        return -1;
    *out = by_size ? INDEX_STORY_SIZE : INDEX_STORY_NEWEST;
    return 0;
}

/* A story's sources are read from its newest members, at most this many
 * of them, and at most STORY_SOURCES_MAX are listed: a story of ten
 * thousand copies costs a page's reads, not ten thousand (docs/api.md §9
 * "Stories"). */
#define STORY_SOURCES_READ 100
#define STORY_SOURCES_MAX 10

/* What a story's keys but its article are made of, read from its members
 * (ids newest first): the newest and the earliest article, and the
 * newest STORY_SOURCES_READ. */
struct story_sum {
    int64_t story;
    uint64_t size;
    int64_t first_seen, last_seen;
    const struct article *arts; /* the newest members, newest first */
    size_t n;
};

static int read_sum(struct api_call *c, int64_t story, const int64_t *ids, size_t n,
                    struct story_sum *out, struct err *err)
{
    size_t take = n < STORY_SOURCES_READ ? n : STORY_SOURCES_READ;
    int64_t *want = arena_calloc(&c->arena, take + 1, sizeof *want);
    struct article *arts = arena_calloc(&c->arena, take + 1, sizeof *arts);
    int rc;
    *out = (struct story_sum){.story = story};
    if (want == NULL || arts == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a story");
    if (n == 0)
        return 0;
    memcpy(want, ids, take * sizeof *want);
    want[take] = ids[n - 1]; /* the earliest, for firstSeen */
    if ((rc = index_articles(c->api->index, &c->arena, want, take + 1, arts, err)) < 0)
        return rc;
    /* (a member deleted since the search is left out of the sources; the
     * times are the nearest members still there) */
    size_t k = 0;
    for (size_t i = 0; i < take; i++)
        if (arts[i].id == want[i] && want[i] != 0)
            arts[k++] = arts[i];
    const struct article *earliest = arts[take].id == want[take] ? &arts[take] : NULL;
    out->size = n;
    out->arts = arts;
    out->n = k;
    out->last_seen = k ? arts[0].published_at : 0;
    out->first_seen = earliest ? earliest->published_at : k ? arts[k - 1].published_at : 0;
    return 0;
}

static bool same_source(const struct article *x, const struct article *y)
{
    return !strcmp(x->source_name ? x->source_name : "", y->source_name ? y->source_name : "") &&
           !strcmp(x->source_id ? x->source_id : "", y->source_id ? y->source_id : "");
}

/* A story's keys but its article: id, size, firstSeen, lastSeen and the
 * sources that carried it (each once, newest member first, bounded). */
static void story_keys(struct jw *w, const struct story_sum *s)
{
    char id[24], when[TIMEFMT_ISO_LEN];
    story_id_str(s->story, id);
    jw_key(w, "id");
    jw_str(w, id);
    jw_key(w, "size");
    jw_uint(w, s->size);
    timefmt_iso8601(s->first_seen, when);
    jw_key(w, "firstSeen");
    jw_str(w, when);
    timefmt_iso8601(s->last_seen, when);
    jw_key(w, "lastSeen");
    jw_str(w, when);
    jw_key(w, "sources");
    jw_arr_begin(w);
    for (size_t i = 0, listed = 0; i < s->n && listed < STORY_SOURCES_MAX; i++) {
        bool again = false;
        for (size_t j = 0; j < i && !again; j++)
            again = same_source(&s->arts[j], &s->arts[i]);
        if (again)
            continue;
        jw_obj_begin(w);
        jw_key(w, "id");
        jw_str(w, s->arts[i].source_id);
        jw_key(w, "name");
        jw_str(w, s->arts[i].source_name);
        jw_obj_end(w);
        listed++;
    }
    jw_arr_end(w);
}

void api_stories(struct api_call *c)
{
    struct index_request req = {0};
    struct index_story_page page = {0};
    enum index_story_sort sort;
    bool from_given;
    size_t pg, size;
    struct buf b;
    struct jw w;
    struct err err;
    int rc;

    err_clear(&err);
    if (api_everything_filters(c, &req) < 0 ||
        api_get_dates(c, &req.from, &req.to, &from_given) < 0 ||
        api_get_language(c, &req.language) < 0 || get_story_sort(c, &sort) < 0 ||
        api_get_paging(c, 20, &pg, &size) < 0 ||
        api_check_plan(c, pg, size, &req.from, from_given, &req.to) < 0)
        return;
    req.sort = INDEX_SORT_PUBLISHED_DESC;
    req.offset = (pg - 1) * size;
    req.limit = size;
    req.deadline_ms = api_deadline(c);
    c->searched = true;
    if (req.from <= req.to &&
        (rc = index_stories(c->api->index, &c->arena, &req, sort, &page, &err)) < 0) {
        api_fail_index(c, rc, &err);
        return;
    }
    api_respond_ok_begin(&w, &b);
    jw_key(&w, "totalResults");
    jw_uint(&w, page.total);
    jw_key(&w, "stories");
    jw_arr_begin(&w);
    for (size_t i = 0; i < page.n; i++) {
        const struct index_story *s = &page.s[i];
        struct story_sum sum;
        if ((rc = read_sum(c, s->story, s->members, s->size, &sum, &err)) < 0) {
            buf_release(&b);
            api_fail_index(c, rc, &err);
            return;
        }
        jw_obj_begin(&w);
        story_keys(&w, &sum);
        jw_key(&w, "article");
        jw_raw(&w, s->doc.json, s->doc.len);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    api_respond_rendered(c, &b);
}

/* A story id as written (1 to 19 decimal digits, at most INT64_MAX). */
static bool parse_story_id(const char *s, size_t len, int64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 19)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0'); /* 19 digits fit in a uint64_t */
    }
    if (v == 0 || v > (uint64_t)INT64_MAX)
        return false;
    *out = (int64_t)v;
    return true;
}

void api_story(struct api_call *c, const char *id, size_t len)
{
    int64_t story, *ids, from = INT64_MIN, to = INT64_MAX;
    size_t n, pg, size;
    struct story_sum sum;
    struct buf b;
    struct jw w;
    struct err err;
    int rc;

    err_clear(&err);
    if (!parse_story_id(id, len, &story)) {
        api_fail(c, API_ERR_STORY_NOT_FOUND, NULL);
        return;
    }
    /* paged as /v2/everything is; what the key's plan shows (history,
     * delay), as a search would */
    if (api_get_paging(c, 100, &pg, &size) < 0 ||
        api_check_plan(c, pg, size, &from, false, &to) < 0)
        return;
    c->searched = true;
    struct index_request timed = {0};
    timed.deadline_ms = api_deadline(c);
    if ((rc = index_story_members(c->api->index, &c->arena, story, store_id_lo(from),
                                  store_id_hi(to), timed.deadline_ms, &ids, &n, &err)) < 0 ||
        (rc = read_sum(c, story, ids, n, &sum, &err)) < 0) {
        api_fail_index(c, rc, &err);
        return;
    }
    if (sum.n == 0) {
        api_fail(c, API_ERR_STORY_NOT_FOUND, NULL);
        return;
    }
    size_t off = (pg - 1) * size < n ? (pg - 1) * size : n;
    size_t count = n - off < size ? n - off : size;
    struct index_doc *docs = arena_calloc(&c->arena, count ? count : 1, sizeof *docs);
    size_t kept = 0;
    if (docs == NULL) {
        api_fail(c, API_ERR_UNEXPECTED, NULL);
        return;
    }
    if ((rc = index_docs(c->api->index, &c->arena, ids + off, count, docs, &kept, &err)) < 0) {
        api_fail_index(c, rc, &err);
        return;
    }
    api_respond_ok_begin(&w, &b);
    jw_key(&w, "story");
    jw_obj_begin(&w);
    story_keys(&w, &sum);
    jw_obj_end(&w);
    jw_key(&w, "totalResults");
    jw_uint(&w, n);
    jw_key(&w, "articles");
    jw_arr_begin(&w);
    for (size_t i = 0; i < kept; i++)
        jw_raw(&w, docs[i].json, docs[i].len);
    jw_arr_end(&w);
    jw_obj_end(&w);
    api_respond_rendered(c, &b);
}
