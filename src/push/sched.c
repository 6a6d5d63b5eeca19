/* The delivery turns of push/sched.h: counts per receiver and per key in
 * two small tables (linear scans: they hold one entry per POST in flight at
 * most), and the round-robin order of the waiting deliveries (two sorts). */
#include "push/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ascii.h"
#include "util/sort.h"
#include "util/urlview.h"

#include "util/banned.h"

int push_sched_init(struct push_sched *s, size_t total, size_t per_host, size_t per_key,
                    struct err *err)
{
    memset(s, 0, sizeof *s);
    if (total == 0 || per_host == 0 || per_key == 0)
        return err_set(err, ERR_INVALID, "delivery limits must be at least 1");
    s->total = total;
    s->per_host = per_host;
    s->per_key = per_key;
    s->hosts = calloc(total, sizeof *s->hosts);
    s->keys = calloc(total, sizeof *s->keys);
    if (!s->hosts || !s->keys) {
        push_sched_release(s);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    return 0;
}

void push_sched_release(struct push_sched *s)
{
    free(s->hosts);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

void push_sched_host(const char *url, char out[PUSH_SCHED_HOST_MAX])
{
    struct urlview v;
    urlview_parse(&v, url);
    char scheme[16] = "", host[256] = "";
    size_t n = v.scheme.p && v.scheme.n < sizeof scheme ? v.scheme.n : 0;
    ascii_lower_n(scheme, v.scheme.p ? v.scheme.p : "", n);
    scheme[n] = '\0';
    n = v.host.p ? (v.host.n < sizeof host ? v.host.n : sizeof host - 1) : 0;
    ascii_lower_n(host, v.host.p ? v.host.p : "", n);
    host[n] = '\0';
    const char *port = strcmp(scheme, "https") ? "80" : "443";
    size_t plen = strlen(port);
    if (v.port.p && v.port.n > 0 && v.port.n < 8) {
        port = v.port.p;
        plen = v.port.n;
    }
    snprintf(out, PUSH_SCHED_HOST_MAX, "%s://%s:%.*s", scheme, host, (int)plen, port);
}

static struct push_sched_count *host_find(struct push_sched *s, const char *host)
{
    for (size_t i = 0; i < s->n_hosts; i++)
        if (!strcmp(s->hosts[i].host, host))
            return &s->hosts[i];
    return NULL;
}

static struct push_sched_count *key_find(struct push_sched *s, int64_t key_id)
{
    for (size_t i = 0; i < s->n_keys; i++)
        if (s->keys[i].key_id == key_id)
            return &s->keys[i];
    return NULL;
}

bool push_sched_full(const struct push_sched *s)
{
    return s->busy >= s->total;
}

bool push_sched_take(struct push_sched *s, int64_t key_id, const char *host)
{
    if (push_sched_full(s))
        return false;
    struct push_sched_count *h = host_find(s, host), *k = key_find(s, key_id);
    if ((h && h->n >= s->per_host) || (k && k->n >= s->per_key))
        return false;
    /* busy < total, and each entry counts at least one slot: room in both. */
    if (!h) {
        h = &s->hosts[s->n_hosts++];
        memset(h, 0, sizeof *h);
        snprintf(h->host, sizeof h->host, "%s", host);
    }
    if (!k) {
        k = &s->keys[s->n_keys++];
        memset(k, 0, sizeof *k);
        k->key_id = key_id;
    }
    h->n++;
    k->n++;
    s->busy++;
    return true;
}

void push_sched_give(struct push_sched *s, int64_t key_id, const char *host)
{
    struct push_sched_count *h = host_find(s, host), *k = key_find(s, key_id);
    if (!h || !k || s->busy == 0)
        return; /* not taken: nothing to give */
    if (--h->n == 0)
        *h = s->hosts[--s->n_hosts];
    if (--k->n == 0)
        *k = s->keys[--s->n_keys];
    s->busy--;
}

/* ---- turns ------------------------------------------------------------------- */

struct turn {
    size_t i;
    int wrapped; /* 1: a key at or before after_key (its turn comes after the others') */
    int64_t key_id, served_ms, alert_id;
    size_t round; /* its place among its key's candidates */
};

/* Keys in turn order, then each key's candidates oldest served first. */
static int cmp_by_key(const void *x, const void *y)
{
    const struct turn *a = x, *b = y;
    int c;
    if ((c = (a->wrapped > b->wrapped) - (a->wrapped < b->wrapped)) != 0)
        return c;
    if ((c = sort_order_i64(a->key_id, b->key_id)) != 0)
        return c;
    if ((c = sort_order_i64(a->served_ms, b->served_ms)) != 0)
        return c;
    return sort_order_i64(a->alert_id, b->alert_id);
}

/* Round by round; within a round, keys in turn order (one candidate each). */
static int cmp_by_round(const void *x, const void *y)
{
    const struct turn *a = x, *b = y;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    int c = (a->wrapped > b->wrapped) - (a->wrapped < b->wrapped);
    return c ? c : sort_order_i64(a->key_id, b->key_id);
}

int push_sched_order(const struct push_sched_cand *cands, size_t n, int64_t after_key, size_t *out)
{
    struct turn *t = n ? calloc(n, sizeof *t) : NULL;
    if (!t) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n ? ERR_NOMEM : 0;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = (struct turn){
            .i = i,
            .wrapped = cands[i].key_id <= after_key,
            .key_id = cands[i].key_id,
            .served_ms = cands[i].served_ms,
            .alert_id = cands[i].alert_id,
        };
    qsort(t, n, sizeof *t, cmp_by_key);
    for (size_t i = 1; i < n; i++)
        t[i].round = t[i].key_id == t[i - 1].key_id ? t[i - 1].round + 1 : 0;
    qsort(t, n, sizeof *t, cmp_by_round);
    for (size_t i = 0; i < n; i++)
        out[i] = t[i].i;
    free(t);
    return 0;
}
