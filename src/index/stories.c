/* One story, many copies (index.h "stories", issue 25): a search's
 * matches grouped by story, over either backend. The backend gives every
 * match with its story (index_story_matches: the engine from its
 * per-segment story columns, FTS5 from SQL); the grouping, the order and
 * the articles shown are here, once, so both backends answer alike.
 *
 * Exact: every match is grouped, so totals are the exact number of
 * stories, never an estimate. The shown articles are read from the log by
 * id and rendered as both backends render a page (article/json.h). */
#include "index/backend.h"
#include "index/walk.h"

#include <stdlib.h>
#include <string.h>

#include "article/json.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/banned.h"

/* A story among the matches. */
struct group {
    int64_t story;
    size_t size;
    int64_t first, last; /* earliest and newest member's id */
};

/* The groups of m[0..n), in *out (*ng of them, in no order, with room
 * for extra more after them), and each match's group in gi[i]. A hash
 * table of the stories, not a sort: a profile of dedupe on a common word
 * (31,000 matches) spent 80 % of the request sorting. */
static int group_matches(struct arena *a, const struct index_story_match *m, size_t n, size_t extra,
                         struct group **out, size_t *ng, size_t **gi, struct err *err)
{
    size_t k = 0, cap = 16;
    int shift = 60;
    *ng = 0;
    *out = arena_calloc(a, n + extra ? n + extra : 1, sizeof **out);
    *gi = arena_calloc(a, n ? n : 1, sizeof **gi);
    if (*out == NULL || *gi == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    if (n == 0)
        return 0;
    while (cap < 2 * n) { /* a power of two at least twice the matches */
        cap *= 2;
        shift--;
    }
    size_t *slot = arena_calloc(a, cap, sizeof *slot); /* group + 1; 0 free */
    struct group *g = *out;
    if (slot == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    for (size_t i = 0; i < n; i++) {
        size_t h = (size_t)hash_fib((uint64_t)m[i].story, shift);
        while (slot[h] && g[slot[h] - 1].story != m[i].story)
            h = (h + 1) & (cap - 1);
        if (!slot[h]) {
            g[k] = (struct group){.story = m[i].story, .first = m[i].id, .last = m[i].id};
            slot[h] = ++k;
        }
        struct group *gr = &g[slot[h] - 1];
        gr->size++;
        if (m[i].id < gr->first)
            gr->first = m[i].id;
        if (m[i].id > gr->last)
            gr->last = m[i].id;
        (*gi)[i] = slot[h] - 1;
    }
    *ng = k;
    return 0;
}

/* A request's matches by story (index_story_matches): g[0..ng) the groups
 * of the matches listed (gi: each one's group), then g[ng..ng + na) the
 * alone matches kept at the newest end of time (newest) or the earliest,
 * one group each; total: every story among the matches. */
struct by_story {
    struct index_story_matches sm;
    struct group *g;
    size_t ng, na, *gi;
    uint64_t total;
};

static int by_story(struct index *idx, struct arena *a, const struct index_request *req,
                    size_t keep, bool newest, struct by_story *b, struct err *err)
{
    int rc;
    memset(b, 0, sizeof *b);
    if ((rc = index_story_matches(idx, a, req, keep, &b->sm, err)) < 0)
        return rc;
    const struct index_story_match *al = newest ? b->sm.newest : b->sm.oldest;
    b->na = newest ? b->sm.nnewest : b->sm.noldest;
    if ((rc = group_matches(a, b->sm.m, b->sm.n, b->na, &b->g, &b->ng, &b->gi, err)) < 0)
        return rc;
    for (size_t i = 0; i < b->na; i++)
        b->g[b->ng + i] =
            (struct group){.story = al[i].story, .size = 1, .first = al[i].id, .last = al[i].id};
    b->total = b->ng + b->sm.alone;
    return 0;
}

/* The order top_groups sorts by (a qsort comparator over groups). */
static _Thread_local int (*top_cmp)(const void *, const void *);

static int cmp_group_ptr(const void *x, const void *y)
{
    return top_cmp(*(const struct group *const *)x, *(const struct group *const *)y);
}

/* The first k groups of g[0..ng) in cmp's order, in that order, into
 * out[0..) (arena); their number. A heap of k: a page needs its k, not
 * every story sorted. */
static size_t top_groups(struct arena *a, const struct group *g, size_t ng, size_t k,
                         int (*cmp)(const void *, const void *), const struct group ***out)
{
    size_t h = 0;
    if (k > ng)
        k = ng;
    const struct group **heap = arena_calloc(a, k ? k : 1, sizeof *heap);
    *out = heap;
    if (heap == NULL)
        return 0;
    /* heap[0] is the last of the k kept in cmp's order: a max-heap by cmp */
    for (size_t i = 0; i < ng && k > 0; i++) {
        size_t c;
        if (h < k) {
            for (c = h++; c > 0 && cmp(heap[(c - 1) / 2], &g[i]) < 0; c = (c - 1) / 2)
                heap[c] = heap[(c - 1) / 2];
            heap[c] = &g[i];
            continue;
        }
        if (cmp(&g[i], heap[0]) >= 0)
            continue;
        for (c = 0;;) { /* g[i] replaces the root, sifted down */
            size_t l = 2 * c + 1, r = l + 1, big = c;
            const struct group *bv = &g[i];
            if (l < h && cmp(heap[l], bv) > 0) {
                big = l;
                bv = heap[l];
            }
            if (r < h && cmp(heap[r], bv) > 0)
                big = r;
            if (big == c)
                break;
            heap[c] = heap[big];
            c = big;
        }
        heap[c] = &g[i];
    }
    top_cmp = cmp;
    qsort(heap, h, sizeof *heap, cmp_group_ptr);
    return h;
}

static int cmp_group_newest(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    return a->last > b->last ? -1 : a->last < b->last;
}

static int cmp_group_earliest(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    return a->first < b->first ? -1 : a->first > b->first;
}

static int cmp_group_size(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return cmp_group_newest(x, y);
}

int index_articles(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
                   struct article *arts, struct err *err)
{
    struct store_reader *r = NULL;
    int rc;
    if (n == 0)
        return 0;
    if ((rc = index_reader_get(idx, &r, err)) < 0)
        return rc;
    rc = store_reader_articles(r, a, ids, n, arts, err);
    index_reader_put(idx, r);
    return rc;
}

/* index_docs, and (stories not NULL) each kept article's story: from the
 * backend's copy of the articles (the engine's document stores: what its
 * searches' pages show, no row read or escaped), else from the rows. */
static int docs_read(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
                     struct index_doc *out, size_t *kept, int64_t *stories, struct err *err)
{
    int rc = index_backend_docs(idx, a, ids, n, out, stories, kept, err);
    if (rc <= 0)
        return rc;
    struct article *arts = arena_calloc(a, n ? n : 1, sizeof *arts);
    struct buf b;
    *kept = 0;
    if (arts == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if ((rc = index_articles(idx, a, ids, n, arts, err)) < 0)
        return rc;
    buf_init(&b, 0);
    for (size_t i = 0; i < n; i++) {
        if (arts[i].id != ids[i] || ids[i] == 0)
            continue; /* deleted since the search */
        b.len = 0;
        article_json(&b, &arts[i]);
        char *json = buf_error(&b) ? NULL : arena_alloc(a, b.len ? b.len : 1);
        if (json == NULL) {
            buf_release(&b);
            return err_set(err, ERR_NOMEM, "out of memory for a page of results");
        }
        memcpy(json, b.data, b.len);
        out[*kept] = (struct index_doc){.id = ids[i], .json = json, .len = b.len};
        if (stories)
            stories[*kept] = store_story_resolve(arts[i].story_id, arts[i].canonical_url, ids[i]);
        (*kept)++;
    }
    buf_release(&b);
    return 0;
}

int index_docs(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
               struct index_doc *out, size_t *kept, struct err *err)
{
    return docs_read(idx, a, ids, n, out, kept, NULL, err);
}

/* The page's slice [req->offset, req->offset + req->limit) of k items. */
static void page_slice(const struct index_request *req, size_t k, size_t *from, size_t *count)
{
    *from = req->offset < k ? req->offset : k;
    *count = k - *from < req->limit ? k - *from : req->limit;
}

/* Fill out's page from the groups chosen (the shown member's id each). */
static int dedupe_fill(struct index *idx, struct arena *a, const int64_t *ids,
                       const struct group *const *chosen, size_t n, struct index_dedupe_result *out,
                       struct err *err)
{
    struct index_doc *docs = arena_calloc(a, n ? n : 1, sizeof *docs);
    int64_t *stories = arena_calloc(a, n ? n : 1, sizeof *stories);
    out->story = arena_calloc(a, n ? n : 1, sizeof *out->story);
    out->size = arena_calloc(a, n ? n : 1, sizeof *out->size);
    size_t kept;
    int rc;
    if (docs == NULL || stories == NULL || out->story == NULL || out->size == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if ((rc = docs_read(idx, a, ids, n, docs, &kept, stories, err)) < 0)
        return rc;
    /* (an article deleted since the search is left out: match what is left) */
    size_t j = 0;
    for (size_t i = 0; i < n && j < kept; i++) {
        if (docs[j].id != ids[i])
            continue;
        /* an alone match met by the walk: its story is its article's */
        out->story[j] = chosen[i]->story ? chosen[i]->story : stories[j];
        out->size[j] = chosen[i]->size;
        j++;
    }
    out->docs = docs;
    out->n = j;
    return 0;
}

/* What dedupe_walk keeps of the walk: each story's first member met, the
 * ones past the page's offset in ids and chosen. */
struct dedupe_pass {
    size_t offset, want, found;
    const struct by_story *b;
    uint64_t alone;    /* alone matches met */
    bool *seen;        /* per listed group */
    struct group *one; /* the alone ones shown, a group of one each */
    int64_t *ids;
    const struct group **chosen;
};

/* index_walk_fn of dedupe_walk: m->story is the match's group; a match
 * not listed is alone in its story (b->sm.alone of them; when the backend
 * lists every match, none: one arrived after the grouping, left out). */
static int dedupe_take(void *ctx, int64_t id, const struct index_story_match *m)
{
    struct dedupe_pass *p = ctx;
    size_t at = p->found < p->offset ? 0 : p->found - p->offset;
    const struct group *gr;
    if (m != NULL && !p->seen[m->story]) {
        p->seen[m->story] = true;
        gr = &p->b->g[m->story];
    } else if (m == NULL && p->alone < p->b->sm.alone) {
        p->alone++;
        p->one[at] = (struct group){.size = 1, .first = id, .last = id};
        gr = &p->one[at];
    } else {
        return 0;
    }
    if (p->found >= p->offset) {
        p->ids[at] = id;
        p->chosen[at] = gr;
    }
    p->found++;
    return p->found >= p->want;
}

/* Relevancy and popularity: the backend's own order, walked from the top
 * in pages that double, keeping each story's first member met, until the
 * page's stories are all found. by_id: each listed match's id and its
 * group's index, sorted by id. */
static int dedupe_walk(struct index *idx, struct arena *a, const struct index_request *req,
                       const struct index_story_match *by_id, const struct by_story *b,
                       struct index_dedupe_result *out, struct err *err)
{
    size_t want = req->offset + req->limit;
    if (want > b->total)
        want = (size_t)b->total;
    struct dedupe_pass p = {.offset = req->offset, .want = want, .b = b};
    p.seen = arena_calloc(a, b->ng ? b->ng : 1, sizeof *p.seen);
    p.ids = arena_calloc(a, want ? want : 1, sizeof *p.ids);
    p.chosen = arena_calloc(a, want ? want : 1, sizeof *p.chosen);
    p.one = arena_calloc(a, want ? want : 1, sizeof *p.one);
    if (p.seen == NULL || p.ids == NULL || p.chosen == NULL || p.one == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    size_t chunk = 2 * want < 64 ? 64 : 2 * want;
    int rc = index_walk_matches(idx, a, req, by_id, b->sm.n, chunk, b->sm.n + b->sm.alone,
                                dedupe_take, &p, err);
    if (rc < 0)
        return rc;
    size_t k = p.found > req->offset ? p.found - req->offset : 0;
    return dedupe_fill(idx, a, p.ids, p.chosen, k, out, err);
}

/* offset + limit, without overflow */
static size_t page_end(const struct index_request *req)
{
    return req->offset + req->limit < req->offset ? SIZE_MAX - 1 : req->offset + req->limit;
}

int index_search_dedupe(struct index *idx, struct arena *a, const struct index_request *req,
                        struct index_dedupe_result *out, struct err *err)
{
    struct by_story b;
    int rc;

    memset(out, 0, sizeof *out);
    bool walk = req->sort == INDEX_SORT_RELEVANCY || req->sort == INDEX_SORT_POPULARITY;
    bool asc = req->sort == INDEX_SORT_PUBLISHED_ASC;
    /* a walk keeps no alone match: it meets them in its own order */
    if ((rc = by_story(idx, a, req, walk ? 0 : page_end(req), !asc, &b, err)) < 0)
        return rc;
    out->total = b.total;
    if (req->limit == 0 || req->offset >= b.total)
        return 0;
    if (walk) {
        struct index_story_match *m = b.sm.m;
        for (size_t i = 0; i < b.sm.n; i++) /* each match's group, looked up by id */
            m[i].story = (int64_t)b.gi[i];
        if (b.sm.n > 1)
            qsort(m, b.sm.n, sizeof *m, index_story_match_cmp_id);
        return dedupe_walk(idx, a, req, m, &b, out, err);
    }
    /* Ids order articles as publishedAt does: a story's place is its
     * newest (earliest) member's, and that member is the one shown. */
    const struct group **top;
    size_t k = top_groups(a, b.g, b.ng + b.na, req->offset + req->limit,
                          asc ? cmp_group_earliest : cmp_group_newest, &top);
    if (top == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    size_t from, count;
    page_slice(req, k, &from, &count);
    int64_t *ids = arena_calloc(a, count ? count : 1, sizeof *ids);
    if (ids == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    for (size_t i = 0; i < count; i++)
        ids[i] = asc ? top[from + i]->first : top[from + i]->last;
    return dedupe_fill(idx, a, ids, top + from, count, out, err);
}

int index_stories(struct index *idx, struct arena *a, const struct index_request *req,
                  enum index_story_sort sort, struct index_story_page *out, struct err *err)
{
    struct by_story b;
    const struct group **top;
    size_t from, count, kept;
    int rc;

    memset(out, 0, sizeof *out);
    /* both orders end in newest first: the alone ones kept are the newest */
    if ((rc = by_story(idx, a, req, page_end(req), true, &b, err)) < 0)
        return rc;
    const struct index_story_match *m = b.sm.m;
    const struct group *g = b.g;
    size_t n = b.sm.n, ng = b.ng + b.na, *gi = b.gi;
    out->total = b.total;
    size_t k = top_groups(a, g, ng, req->offset + req->limit,
                          sort == INDEX_STORY_SIZE ? cmp_group_size : cmp_group_newest, &top);
    if (top == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    page_slice(req, k, &from, &count);
    if (count == 0)
        return 0;
    int64_t *ids = arena_calloc(a, count, sizeof *ids);
    struct index_doc *docs = arena_calloc(a, count, sizeof *docs);
    size_t *slot = arena_calloc(a, ng, sizeof *slot); /* page position + 1 per group */
    int64_t **members = arena_calloc(a, count, sizeof *members);
    size_t *nm = arena_calloc(a, count, sizeof *nm);
    out->s = arena_calloc(a, count, sizeof *out->s);
    if (ids == NULL || docs == NULL || slot == NULL || members == NULL || nm == NULL ||
        out->s == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    for (size_t i = 0; i < count; i++) {
        const struct group *gr = top[from + i];
        ids[i] = gr->last;
        slot[gr - g] = i + 1;
        if ((members[i] = arena_calloc(a, gr->size, sizeof **members)) == NULL)
            return err_set(err, ERR_NOMEM, "out of memory grouping stories");
        if ((size_t)(gr - g) >= b.ng) /* an alone match: its only member */
            members[i][nm[i]++] = gr->last;
    }
    for (size_t i = 0; i < n; i++) /* the page's stories' members */
        if (slot[gi[i]]) {
            size_t p = slot[gi[i]] - 1;
            members[p][nm[p]++] = m[i].id;
        }
    if ((rc = index_docs(idx, a, ids, count, docs, &kept, err)) < 0)
        return rc;
    for (size_t i = 0, j = 0; i < count && j < kept; i++) {
        const struct group *gr = top[from + i];
        if (docs[j].id != ids[i])
            continue; /* deleted since the search */
        qsort(members[i], nm[i], sizeof *members[i], sort_cmp_i64_desc);
        out->s[j] = (struct index_story){.story = gr->story,
                                         .size = gr->size,
                                         .first_id = gr->first,
                                         .last_id = gr->last,
                                         .doc = docs[j],
                                         .members = members[i]};
        j++;
        out->n = j;
    }
    return 0;
}

int index_story_of(struct index *idx, int64_t id, int64_t *story, struct err *err)
{
    struct store_reader *r = NULL;
    int rc;
    *story = 0;
    if ((rc = index_reader_get(idx, &r, err)) < 0)
        return rc;
    rc = store_reader_story_of(r, id, story, err);
    index_reader_put(idx, r);
    return rc;
}
