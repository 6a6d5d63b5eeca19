/* similarTo (index.h "similarTo", docs/api.md §9 "More like this"): the
 * articles most like one article, over either backend. Its story's other
 * articles come first (the copies and close rewrites story/ joined), then
 * the same topic: the matches of an OR of the article's heaviest terms by
 * tf-idf (the project's tokenizer, text/, as both backends index; document
 * counts from the backend's own dictionary), ranked by relevancy, the
 * story's articles and the article itself left out.
 *
 * Exact totals: the topic part is counted from every match with its story
 * (index_story_matches), as dedupe counts: those alone in their story by
 * the count alone, the article itself found by a search of its second. */
#include "index/backend.h"
#include "index/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "text/text.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/banned.h"

/* Distinct tokens weighed (the first met, title first); tokens read from
 * the text (a long article's start says what it is about). */
#define SIMILAR_CANDIDATES 512
#define SIMILAR_TOKENS 2000
/* Shorter tokens are not terms worth a topic ("of", "la", "de"). */
#define SIMILAR_TOKEN_MIN 3

struct cand {
    char *t;
    size_t len;
    double tf;     /* weighted as bm25 weighs the fields: title 3, description 1.5 */
    double weight; /* tf * idf */
};

struct collect {
    struct arena *a;
    struct cand *c;
    size_t n;
    uint32_t *slot; /* open addressing over SIMILAR_CANDIDATES * 2, index + 1 */
    double w;       /* the field's weight */
    size_t tokens;
    bool nomem;
};

#define SLOTS (SIMILAR_CANDIDATES * 2)

static int take_token(const struct text_token *tok, void *ctx)
{
    struct collect *k = ctx;
    if (++k->tokens > SIMILAR_TOKENS)
        return 1; /* enough read */
    if (tok->len < SIMILAR_TOKEN_MIN || tok->len > 64)
        return 0;
    size_t h = hash_bytes64(tok->text, tok->len) & (SLOTS - 1);
    while (k->slot[h]) {
        struct cand *c = &k->c[k->slot[h] - 1];
        if (c->len == tok->len && !memcmp(c->t, tok->text, tok->len)) {
            c->tf += k->w;
            return 0;
        }
        h = (h + 1) & (SLOTS - 1);
    }
    if (k->n == SIMILAR_CANDIDATES)
        return 0;
    char *t = arena_alloc(k->a, tok->len + 1);
    if (t == NULL) {
        k->nomem = true;
        return 1;
    }
    memcpy(t, tok->text, tok->len);
    t[tok->len] = '\0';
    k->c[k->n] = (struct cand){.t = t, .len = tok->len, .tf = k->w};
    k->slot[h] = (uint32_t)++k->n;
    return 0;
}

static void take_field(struct collect *k, const char *s, double w)
{
    if (s == NULL || k->nomem || k->tokens > SIMILAR_TOKENS)
        return;
    k->w = w;
    text_tokenize(s, strlen(s), take_token, k);
}

static int cmp_weight(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return sort_order_bytes(a->t, a->len, b->t, b->len);
}

int index_similar_terms(struct index *idx, struct arena *a, const struct article *art,
                        const char ***terms, size_t *n, struct err *err)
{
    struct collect k = {.a = a};
    int rc;

    *terms = NULL;
    *n = 0;
    k.c = arena_calloc(a, SIMILAR_CANDIDATES, sizeof *k.c);
    k.slot = arena_calloc(a, SLOTS, sizeof *k.slot);
    if (k.c == NULL || k.slot == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for similar terms");
    take_field(&k, art->title, 3.0);
    take_field(&k, art->description, 1.5);
    take_field(&k, art->content, 1.0);
    if (k.nomem)
        return err_set(err, ERR_NOMEM, "out of memory for similar terms");
    if (k.n == 0)
        return 0;
    const char **ts = arena_calloc(a, k.n, sizeof *ts);
    size_t *lens = arena_calloc(a, k.n, sizeof *lens);
    uint64_t *df = arena_calloc(a, k.n, sizeof *df), ndocs = 0;
    if (ts == NULL || lens == NULL || df == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for similar terms");
    for (size_t i = 0; i < k.n; i++) {
        ts[i] = k.c[i].t;
        lens[i] = k.c[i].len;
    }
    if ((rc = index_term_docs(idx, ts, lens, k.n, df, &ndocs, err)) < 0)
        return rc;
    for (size_t i = 0; i < k.n; i++) {
        /* BM25's idf; a term the index has not seen yet (the article not
         * indexed yet) counts as in one document */
        double d = df[i] ? (double)df[i] : 1.0, N = ndocs > df[i] ? (double)ndocs : d;
        k.c[i].weight = k.c[i].tf * log(1.0 + (N - d + 0.5) / (d + 0.5));
    }
    qsort(k.c, k.n, sizeof *k.c, cmp_weight);
    size_t take = k.n < INDEX_SIMILAR_TERMS ? k.n : INDEX_SIMILAR_TERMS;
    for (size_t i = 0; i < take; i++)
        ts[i] = k.c[i].t;
    *terms = ts;
    *n = take;
    return 0;
}

/* The OR of terms as a parsed query would hold it (query/query.h). */
static struct query_node *or_query(struct arena *a, const char *const *terms, size_t n)
{
    struct query_node **kids = arena_calloc(a, n, sizeof *kids);
    if (kids == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        struct query_node *w = arena_calloc(a, 1, sizeof *w);
        char **tok = arena_calloc(a, 1, sizeof *tok);
        if (w == NULL || tok == NULL)
            return NULL;
        tok[0] = (char *)terms[i];
        *w = (struct query_node){.kind = QUERY_WORD, .n = 1, .tokens = tok, .pos = 1};
        kids[i] = w;
    }
    if (n == 1)
        return kids[0];
    struct query_node *any = arena_calloc(a, 1, sizeof *any);
    if (any == NULL)
        return NULL;
    *any = (struct query_node){.kind = QUERY_OR, .n = n, .kids = kids, .pos = 1};
    return any;
}

/* What topic_page keeps of the walk: the matches from position `from` on
 * that are neither the article nor its story's (story[0..ns), ids
 * descending). */
struct topic_pass {
    size_t from, want, seen;
    int64_t art;
    const int64_t *story;
    size_t ns;
    int64_t *ids;
    size_t *k;
};

/* index_walk_fn of topic_page (no set: every match walked comes here). */
static int topic_take(void *ctx, int64_t id, const struct index_story_match *m)
{
    struct topic_pass *p = ctx;
    (void)m;
    if (id == p->art ||
        (p->ns && bsearch(&id, p->story, p->ns, sizeof *p->story, sort_cmp_i64_desc)))
        return 0;
    if (p->seen++ >= p->from)
        p->ids[(*p->k)++] = id;
    return *p->k >= p->want;
}

/* ids[0..k) of the topic part's order (relevancy), from position `from`:
 * the backend's pages walked from the top, in pages that double, leaving
 * out the article and its story's other articles. */
static int topic_page(struct index *idx, struct arena *a, const struct index_request *topic,
                      int64_t art, const int64_t *story, size_t ns, size_t from, size_t want,
                      int64_t *ids, size_t *k, struct err *err)
{
    size_t chunk = 2 * (from + want) < 64 ? 64 : 2 * (from + want);
    struct topic_pass p = {from, want, 0, art, story, ns, ids, k};
    *k = 0;
    if (want == 0)
        return 0;
    return index_walk_matches(idx, a, topic, NULL, 0, chunk, SIZE_MAX, topic_take, &p, err);
}

/* Whether the article art is one of topic's matches: topic narrowed to
 * art's second and the ids up to art's, newest first, one asked. */
static int topic_has(struct index *idx, struct arena *a, const struct index_request *topic,
                     const struct article *art, bool *has, struct err *err)
{
    struct index_request p = *topic;
    struct index_result res;
    int rc;
    *has = false;
    if (p.from < art->published_at)
        p.from = art->published_at;
    if (p.to > art->published_at)
        p.to = art->published_at;
    if (p.from > p.to || (p.below && p.id_below <= art->id))
        return 0;
    p.below = true;
    p.id_below = art->id + 1;
    p.sort = INDEX_SORT_PUBLISHED_DESC;
    p.offset = 0;
    p.limit = 1;
    p.ids_only = true;
    if ((rc = index_search(idx, a, &p, &res, err)) < 0)
        return rc;
    *has = res.n == 1 && res.docs[0].id == art->id;
    return 0;
}

int index_similar(struct index *idx, struct arena *a, const struct index_request *req,
                  const struct article *art, struct index_result *out, struct err *err)
{
    int64_t story = store_story_resolve(art->story_id, art->canonical_url, art->id);
    int64_t *members, *ids;
    size_t nm, own = 0;
    uint64_t ntopic = 0;
    const char **terms;
    size_t nt;
    int rc;

    memset(out, 0, sizeof *out);
    if (req->from > req->to)
        return 0;
    /* the story: its other articles in the request's window */
    if ((rc = index_story_members(idx, a, story, store_id_lo(req->from), index_request_id_hi(req),
                                  req->deadline_ms, &members, &nm, err)) < 0)
        return rc;
    for (size_t i = 0; i < nm; i++)
        if (members[i] != art->id)
            members[own++] = members[i];
    /* the topic: every match of its terms but the story's; a match alone
     * in its story (counted, not listed) is not the story's, but may be
     * the article itself */
    struct index_request topic = *req;
    if ((rc = index_similar_terms(idx, a, art, &terms, &nt, err)) < 0)
        return rc;
    if (nt > 0) {
        if ((topic.q = or_query(a, terms, nt)) == NULL)
            return err_set(err, ERR_NOMEM, "out of memory for a similar query");
        topic.q_fields = INDEX_FIELD_ALL;
        topic.sort = INDEX_SORT_RELEVANCY;
        struct index_story_matches sm;
        bool listed = false, has = false;
        if ((rc = index_story_matches(idx, a, &topic, 0, &sm, err)) < 0)
            return rc;
        for (size_t i = 0; i < sm.n; i++) {
            if (sm.m[i].id == art->id)
                listed = true;
            else if (sm.m[i].story != story)
                ntopic++;
        }
        if (!listed && sm.alone > 0 && (rc = topic_has(idx, a, &topic, art, &has, err)) < 0)
            return rc;
        ntopic += sm.alone - (has ? 1 : 0);
    }
    out->total = own + ntopic;
    /* the page: the story's part, then the topic's */
    size_t from = req->offset, want = req->limit, k = 0;
    if ((ids = arena_calloc(a, want ? want : 1, sizeof *ids)) == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    for (; from < own && k < want; from++)
        ids[k++] = members[from];
    if (k < want && ntopic > 0) {
        size_t got;
        if ((rc = topic_page(idx, a, &topic, art->id, members, own, from - own, want - k, ids + k,
                             &got, err)) < 0)
            return rc;
        k += got;
    }
    struct index_doc *docs = arena_calloc(a, k ? k : 1, sizeof *docs);
    if (docs == NULL)
        return err_set(err, ERR_NOMEM, "out of memory for a page of results");
    if ((rc = index_docs(idx, a, ids, k, docs, &out->n, err)) < 0)
        return rc;
    out->docs = docs;
    return 0;
}

int index_article_by_url(struct index *idx, struct arena *a, const char *canonical_url,
                         struct article *art, struct err *err)
{
    struct store_reader *r = NULL;
    int64_t id = 0;
    int rc;
    if ((rc = index_reader_get(idx, &r, err)) < 0)
        return rc;
    rc = store_reader_article_by_url(r, canonical_url, &id, err);
    if (rc == 0)
        rc = store_reader_articles(r, a, &id, 1, art, err);
    if (rc == 0 && art->id != id) /* deleted in between */
        rc = err_set(err, ERR_NOTFOUND, "no article has this address");
    index_reader_put(idx, r);
    return rc;
}
