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
#include "util/sort.h"
#include "util/banned.h"

/* A story among the matches. */
struct group {
    int64_t story;
    size_t size;
    int64_t first, last; /* earliest and newest member's id */
};

/* The groups of m[0..n), in *out (*ng of them, in no order), and each
 * match's group in gi[i]. A hash table of the stories, not a sort: a
 * profile of dedupe on a common word (31,000 matches) spent 80 % of the
 * request sorting. */
static int group_matches(struct arena *a, const struct index_story_match *m, size_t n,
                         struct group **out, size_t *ng, size_t **gi, struct err *err)
{
    size_t k = 0, cap = 16;
    int shift = 60;
    *out = NULL;
    *ng = 0;
    *gi = NULL;
    if (n == 0)
        return 0;
    while (cap < 2 * n) { /* a power of two at least twice the matches */
        cap *= 2;
        shift--;
    }
    size_t *slot = arena_calloc(a, cap, sizeof *slot); /* group + 1; 0 free */
    struct group *g = arena_calloc(a, n, sizeof *g);
    *gi = arena_calloc(a, n, sizeof **gi);
    if (slot == NULL || g == NULL || *gi == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    for (size_t i = 0; i < n; i++) {
        size_t h = (size_t)(((uint64_t)m[i].story * UINT64_C(0x9E3779B97F4A7C15)) >> shift);
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
    *out = g;
    *ng = k;
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

int index_docs(struct index *idx, struct arena *a, const int64_t *ids, size_t n,
               struct index_doc *out, size_t *kept, struct err *err)
{
    struct article *arts = arena_calloc(a, n ? n : 1, sizeof *arts);
    struct buf b;
    int rc;
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
        (*kept)++;
    }
    buf_release(&b);
    return 0;
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
    out->story = arena_calloc(a, n ? n : 1, sizeof *out->story);
    out->size = arena_calloc(a, n ? n : 1, sizeof *out->size);
    size_t kept;
    int rc;
    if (docs == NULL || out->story == NULL || out->size == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if ((rc = index_docs(idx, a, ids, n, docs, &kept, err)) < 0)
        return rc;
    /* (an article deleted since the search is left out: match what is left) */
    size_t j = 0;
    for (size_t i = 0; i < n && j < kept; i++) {
        if (docs[j].id != ids[i])
            continue;
        out->story[j] = chosen[i]->story;
        out->size[j] = chosen[i]->size;
        j++;
    }
    out->docs = docs;
    out->n = j;
    return 0;
}

/* The request's matches with their stories, grouped. */
struct grouped {
    struct index_story_match *m; /* the matches, n of them */
    size_t n;
    struct group *g; /* the stories, ng of them */
    size_t ng;
    size_t *gi; /* each match's story: an index into g */
};

static int grouped_matches(struct index *idx, struct arena *a, const struct index_request *req,
                           struct grouped *out, struct err *err)
{
    int rc = index_story_matches(idx, a, req, &out->m, &out->n, err);
    return rc < 0 ? rc : group_matches(a, out->m, out->n, &out->g, &out->ng, &out->gi, err);
}

/* What dedupe_walk keeps of the walk: each story's first member met, the
 * ones past the page's offset in ids and chosen. */
struct dedupe_pass {
    size_t offset, want, found;
    const struct group *g;
    bool *seen; /* per group */
    int64_t *ids;
    const struct group **chosen;
};

/* index_walk_fn of dedupe_walk: m->story is the match's group. */
static int dedupe_take(void *ctx, const struct index_story_match *m)
{
    struct dedupe_pass *p = ctx;
    if (p->seen[m->story])
        return 0;
    p->seen[m->story] = true;
    if (p->found >= p->offset) {
        p->ids[p->found - p->offset] = m->id;
        p->chosen[p->found - p->offset] = &p->g[m->story];
    }
    p->found++;
    return p->found >= p->want;
}

/* Relevancy and popularity: the backend's own order, walked from the top
 * in pages that double, keeping each story's first member met, until the
 * page's stories are all found. by_id: each match's id and its group's
 * index, sorted by id. */
static int dedupe_walk(struct index *idx, struct arena *a, const struct index_request *req,
                       const struct index_story_match *by_id, size_t n, const struct group *g,
                       size_t ng, struct index_dedupe_result *out, struct err *err)
{
    size_t want = req->offset + req->limit;
    if (want > ng)
        want = ng;
    bool *seen = arena_calloc(a, ng ? ng : 1, sizeof *seen);
    int64_t *ids = arena_calloc(a, want ? want : 1, sizeof *ids);
    const struct group **chosen = arena_calloc(a, want ? want : 1, sizeof *chosen);
    if (seen == NULL || ids == NULL || chosen == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    size_t chunk = 2 * want < 64 ? 64 : 2 * want;
    struct dedupe_pass p = {req->offset, want, 0, g, seen, ids, chosen};
    int rc = index_walk_matches(idx, a, req, by_id, n, chunk, n, dedupe_take, &p, err);
    if (rc < 0)
        return rc;
    size_t k = p.found > req->offset ? p.found - req->offset : 0;
    return dedupe_fill(idx, a, ids, chosen, k, out, err);
}

int index_search_dedupe(struct index *idx, struct arena *a, const struct index_request *req,
                        struct index_dedupe_result *out, struct err *err)
{
    struct grouped gm;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = grouped_matches(idx, a, req, &gm, err)) < 0)
        return rc;
    out->total = gm.ng;
    if (req->limit == 0 || req->offset >= gm.ng)
        return 0;
    if (req->sort == INDEX_SORT_RELEVANCY || req->sort == INDEX_SORT_POPULARITY) {
        for (size_t i = 0; i < gm.n; i++) /* each match's group, looked up by id */
            gm.m[i].story = (int64_t)gm.gi[i];
        qsort(gm.m, gm.n, sizeof *gm.m, index_story_match_cmp_id);
        return dedupe_walk(idx, a, req, gm.m, gm.n, gm.g, gm.ng, out, err);
    }
    /* Ids order articles as publishedAt does: a story's place is its
     * newest (earliest) member's, and that member is the one shown. */
    bool asc = req->sort == INDEX_SORT_PUBLISHED_ASC;
    const struct group **top;
    size_t k = top_groups(a, gm.g, gm.ng, req->offset + req->limit,
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
    struct grouped gm;
    const struct group **top;
    size_t from, count, kept;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = grouped_matches(idx, a, req, &gm, err)) < 0)
        return rc;
    out->total = gm.ng;
    size_t k = top_groups(a, gm.g, gm.ng, req->offset + req->limit,
                          sort == INDEX_STORY_SIZE ? cmp_group_size : cmp_group_newest, &top);
    if (top == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    page_slice(req, k, &from, &count);
    if (count == 0)
        return 0;
    int64_t *ids = arena_calloc(a, count, sizeof *ids);
    struct index_doc *docs = arena_calloc(a, count, sizeof *docs);
    size_t *slot = arena_calloc(a, gm.ng, sizeof *slot); /* page position + 1 per group */
    int64_t **members = arena_calloc(a, count, sizeof *members);
    size_t *nm = arena_calloc(a, count, sizeof *nm);
    out->s = arena_calloc(a, count, sizeof *out->s);
    if (ids == NULL || docs == NULL || slot == NULL || members == NULL || nm == NULL ||
        out->s == NULL)
        return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    for (size_t i = 0; i < count; i++) {
        const struct group *gr = top[from + i];
        ids[i] = gr->last;
        slot[gr - gm.g] = i + 1;
        if ((members[i] = arena_calloc(a, gr->size, sizeof **members)) == NULL)
            return err_set(err, ERR_NOMEM, "out of memory grouping stories");
    }
    for (size_t i = 0; i < gm.n; i++) /* the page's stories' members */
        if (slot[gm.gi[i]]) {
            size_t p = slot[gm.gi[i]] - 1;
            members[p][nm[p]++] = gm.m[i].id;
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
